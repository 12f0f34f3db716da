"""The platforms the tool takes launches from: those course.yaml registers, and those
registered by LTI Dynamic Registration and not revoked (kept in the database)."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from ..course.lti import LtiSettings, Platform
from ..database.lti import LtiRegistration


def find_platform(session: Session, settings: LtiSettings, issuer: str, client_id: str | None) -> Platform | None:
    """The registration of ``issuer`` (and ``client_id``): course.yaml's, else a dynamic one
    not revoked (its e-mails never trusted)."""
    found = settings.find(issuer, client_id)
    if found is not None:
        return found
    query = select(LtiRegistration).where(LtiRegistration.issuer == issuer, LtiRegistration.revoked_at.is_(None))
    if client_id is not None:
        query = query.where(LtiRegistration.client_id == client_id)
    rows = session.scalars(query).all()
    if len(rows) != 1:
        return None
    row = rows[0]
    return Platform(row.issuer, row.client_id, (row.deployment_id,), row.auth_login_url, row.token_url, row.jwks_url)
