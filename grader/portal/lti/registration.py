"""LTI Dynamic Registration (IMS LTI Dynamic Registration 1.0): the platform opens a one-time
registration URL an instructor made, with its ``openid_configuration`` URL and a
``registration_token``; the tool reads the platform's configuration (its issuer at the origin
of that URL), posts its own client registration there with the token, and keeps what the
platform gives back (client id, deployment id, its endpoints) in the database. Launches take
the platforms of course.yaml and the registrations not revoked."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
import secrets
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from ...errors import GraderError
from ..course.lti import LtiSettings
from ..database.lti import LtiRegistration, LtiRegistrationLink
from ..database.models import User, now
from .grades import HTTP_SECONDS, SCORE_SCOPE

log = logging.getLogger("grader.portal")

TOOL_CONFIGURATION = "https://purl.imsglobal.org/spec/lti-tool-configuration"
PLATFORM_CONFIGURATION = "https://purl.imsglobal.org/spec/lti-platform-configuration"
SCOPES = (SCORE_SCOPE, "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem",
          "https://purl.imsglobal.org/spec/lti-ags/scope/result.readonly",
          "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly")  # fmt: skip
LINK_MINUTES = 60  # a registration link is good this long, once
MAX_BYTES = 1_000_000  # the most of a platform's answer read


class RegistrationRefused(GraderError):
    """A registration that could not be made: the message says why and what to do."""


def new_link(session: Session, user: User) -> str:
    """A one-time registration token (kept as its SHA-256) for ``BASE/lti/register/TOKEN``."""
    token = secrets.token_urlsafe(32)
    session.add(LtiRegistrationLink(digest=_digest(token), created_by=user.id,
                                    expires_at=now() + dt.timedelta(minutes=LINK_MINUTES)))  # fmt: skip
    return token


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def check_link(session: Session, token: str) -> None:
    """RegistrationRefused when the registration link ``token`` is unknown, spent or expired."""
    row = session.get(LtiRegistrationLink, _digest(token))
    if row is None or row.used_at is not None or _aware(row.expires_at) < now():
        raise RegistrationRefused("this registration link is unknown, used already or expired: ask an instructor "
                                  "for a new one (Registrations on the LMS, on the class page)")  # fmt: skip


def _aware(when: dt.datetime) -> dt.datetime:
    return when if when.tzinfo else when.replace(tzinfo=dt.timezone.utc)


def spend_link(session: Session, token: str) -> int:
    """The instructor who made the registration link ``token``, the link spent now;
    RegistrationRefused when it is unknown, spent or expired."""
    check_link(session, token)
    row = session.get(LtiRegistrationLink, _digest(token))
    assert row is not None
    spent = session.execute(update(LtiRegistrationLink).where(LtiRegistrationLink.digest == row.digest,
                                                              LtiRegistrationLink.used_at.is_(None))
                            .values(used_at=now()))  # fmt: skip
    if getattr(spent, "rowcount", 0) != 1:
        raise RegistrationRefused("this registration link was used already: ask an instructor for a new one")
    return row.created_by


def tool_registration(base: str, title: str) -> dict[str, Any]:
    """The tool's client registration (OpenID Connect Dynamic Client Registration with the LTI
    tool configuration claim), for a tool at ``base``."""
    host = urlsplit(base).hostname or ""
    launch = f"{base}/lti/launch"
    return {
        "application_type": "web",
        "response_types": ["id_token"],
        "grant_types": ["implicit", "client_credentials"],
        "initiate_login_uri": f"{base}/lti/login",
        "redirect_uris": [launch],
        "client_name": title,
        "jwks_uri": f"{base}/lti/jwks",
        "token_endpoint_auth_method": "private_key_jwt",
        "scope": " ".join(SCOPES),
        TOOL_CONFIGURATION: {
            "domain": host,
            "target_link_uri": launch,
            "claims": ["iss", "sub", "name", "given_name", "family_name", "email"],
            "messages": [
                {"type": "LtiResourceLinkRequest", "target_link_uri": launch},
                {
                    "type": "LtiDeepLinkingRequest",
                    "target_link_uri": launch,
                    "label": title,
                    "placements": ["ContentArea", "link_selection", "assignment_selection"],
                },
            ],  # fmt: skip
        },
    }


@dataclass(frozen=True)
class Registered:
    """What a platform gave back: its issuer, the tool's client id and deployment there, its endpoints."""

    issuer: str
    client_id: str
    deployment_id: str
    auth_login_url: str
    token_url: str
    jwks_url: str


def register(settings: LtiSettings, base: str, title: str, configuration_url: str,
             registration_token: str | None) -> Registered:  # fmt: skip
    """The registration with the platform: its configuration read and checked (its issuer at
    the configuration's origin), the tool's registration posted with the registration token,
    the platform's answer checked."""
    parts = urlsplit(configuration_url)
    if parts.scheme not in ("https", "http") or not parts.netloc:
        raise RegistrationRefused("the registration was opened without a platform's openid_configuration URL: "
                                  "paste the registration link into the LMS's dynamic registration")  # fmt: skip
    headers = {"Authorization": f"Bearer {registration_token}"} if registration_token else {}
    config = _json("GET", configuration_url, None, headers)  # the token too: a platform may ask it here as well
    issuer = config.get("issuer")
    there = urlsplit(issuer).hostname if isinstance(issuer, str) else None
    if there is None or there != parts.hostname:
        raise RegistrationRefused(f"the platform's configuration names the issuer {issuer!r}, whose domain is not "
                                  f"the one it was read from ({parts.hostname}): the specification requires them "
                                  "to match, so it is refused; ask the LMS's administrator")  # fmt: skip
    endpoints = {k: config.get(k) for k in ("authorization_endpoint", "token_endpoint", "jwks_uri",
                                             "registration_endpoint")}  # fmt: skip
    missing = [k for k, v in endpoints.items() if not isinstance(v, str) or urlsplit(v).scheme not in ("https", "http")]
    if missing:
        raise RegistrationRefused(f"the platform's configuration gives no {', '.join(missing)}: it cannot register "
                                  "tools dynamically; register the tool in course.yaml")  # fmt: skip
    answer = _json("POST", str(endpoints["registration_endpoint"]), tool_registration(base, title), headers)
    client_id = answer.get("client_id")
    given = answer.get(TOOL_CONFIGURATION)
    deployment = given.get("deployment_id") if isinstance(given, dict) else None
    if not isinstance(client_id, (str, int)) or not str(client_id):
        raise RegistrationRefused("the platform's registration answer has no client_id: ask the LMS's administrator")
    if not isinstance(deployment, (str, int)) or not str(deployment):
        raise RegistrationRefused("the platform's registration answer has no deployment_id (in its "
                                  f"{TOOL_CONFIGURATION} claim): register the tool in course.yaml")  # fmt: skip
    if any(p.issuer == issuer and p.client_id == str(client_id) for p in settings.platforms):
        raise RegistrationRefused(f"course.yaml registers {issuer} with client id {client_id} already")
    return Registered(str(issuer), str(client_id), str(deployment), str(endpoints["authorization_endpoint"]),
                      str(endpoints["token_endpoint"]), str(endpoints["jwks_uri"]))  # fmt: skip


def keep(session: Session, done: Registered, by: int) -> LtiRegistration:
    """A registration kept (one of the same issuer and client id made anew, not revoked)."""
    row = session.scalar(select(LtiRegistration).where(LtiRegistration.issuer == done.issuer,
                                                       LtiRegistration.client_id == done.client_id))  # fmt: skip
    if row is None:
        row = LtiRegistration(issuer=done.issuer, client_id=done.client_id)
        session.add(row)
    row.deployment_id, row.created_by, row.created_at, row.revoked_at = done.deployment_id, by, now(), None
    row.auth_login_url, row.token_url, row.jwks_url = done.auth_login_url, done.token_url, done.jwks_url
    session.flush()
    return row


def _json(method: str, url: str, body: dict[str, Any] | None, headers: dict[str, str]) -> dict[str, Any]:
    data = json.dumps(body).encode() if body is not None else None
    kinds = {"Content-Type": "application/json"} if data is not None else {}
    request = urllib.request.Request(url, data=data, method=method,
                                     headers={**headers, **kinds, "Accept": "application/json"})  # fmt: skip
    try:
        with urllib.request.urlopen(request, timeout=HTTP_SECONDS) as answer:  # noqa: S310 (the platform's URL)
            found = json.loads(answer.read(MAX_BYTES))
    except urllib.error.HTTPError as e:  # what it said is logged, never shown: the URL may be any the link was given
        log.warning("dynamic registration: %s answered %s: %s", url, e.code,
                    e.read(300).decode("utf-8", "replace").strip())  # fmt: skip
        raise RegistrationRefused(f"{url} answered {e.code} {e.reason}") from None
    except (urllib.error.URLError, OSError) as e:
        raise RegistrationRefused(f"cannot reach {url}: {getattr(e, 'reason', e)}") from None
    except ValueError:
        raise RegistrationRefused(f"{url} answered no JSON") from None
    if not isinstance(found, dict):
        raise RegistrationRefused(f"{url} answered no JSON object")
    return found
