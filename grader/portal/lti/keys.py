"""The tool's own RSA key, kept in the portal's database (never in the course's git): made at
the first start, served as a JWKS for the platforms, and rotated on demand (the retired key
stays in the JWKS a while, so a message signed just before the rotation still verifies)."""

from __future__ import annotations

import datetime as dt
import json
import secrets
from dataclasses import dataclass
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm
from sqlalchemy import select
from sqlalchemy.orm import Session

from ..database.lti import LtiKey
from ..database.models import now

KEY_BITS = 2048
RETIRED_DAYS = 7  # a retired key stays in the JWKS this long


@dataclass(frozen=True)
class SigningKey:
    kid: str
    private_pem: str


def _new_key(session: Session) -> LtiKey:
    key = rsa.generate_private_key(public_exponent=65537, key_size=KEY_BITS)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption()).decode()  # fmt: skip
    row = LtiKey(kid=secrets.token_hex(16), private_pem=pem, created_at=now())
    session.add(row)
    session.flush()
    return row


def signing_key(session: Session) -> SigningKey:
    """The key that signs the tool's messages: the newest not retired, made when there is none."""
    row = session.scalar(select(LtiKey).where(LtiKey.retired_at.is_(None)).order_by(LtiKey.created_at.desc()))
    if row is None:
        row = _new_key(session)
    return SigningKey(row.kid, row.private_pem)


def rotate(session: Session) -> SigningKey:
    """Retire the signing key and make a new one: the new key's id."""
    for row in session.scalars(select(LtiKey).where(LtiKey.retired_at.is_(None))).all():
        row.retired_at = now()
    row = _new_key(session)
    return SigningKey(row.kid, row.private_pem)


def jwks(session: Session) -> dict[str, Any]:
    """The public half of the signing key and of the keys retired in the last RETIRED_DAYS."""
    since = now() - dt.timedelta(days=RETIRED_DAYS)
    keys = []
    for row in session.scalars(select(LtiKey).order_by(LtiKey.created_at.desc())).all():
        retired = row.retired_at
        if retired is not None and (retired if retired.tzinfo else retired.replace(tzinfo=dt.timezone.utc)) < since:
            continue
        private = serialization.load_pem_private_key(row.private_pem.encode(), password=None)
        assert isinstance(private, rsa.RSAPrivateKey)
        public = private.public_key()
        jwk = json.loads(RSAAlgorithm.to_jwk(public))
        keys.append({**jwk, "kid": row.kid, "alg": "RS256", "use": "sig"})
    return {"keys": keys}
