"""The course's LTI 1.3 registrations (``lti:`` in course.yaml): the tool's public address and,
for each platform (an LMS: Canvas, Moodle...), what the platform's administrator was given and
gave back when the tool was registered there."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

ROSTER_MINUTES = 1440  # the platforms' rosters read once a day unless course.yaml says otherwise


@dataclass(frozen=True)
class Platform:
    """One registration of the tool on a platform: its issuer and the client id it gave the
    tool, the deployments allowed, its OIDC login, OAuth 2 token and JWKS endpoints, and
    whether the e-mails its launches carry are the platform's own word (``trust_emails``: a
    user cannot set theirs), so that a launch may link to the portal account of that e-mail,
    and the audience its token endpoint expects in the tool's client assertion where it is not
    the token URL (``token_audience``: Brightspace's "OAuth2 Audience")."""

    issuer: str
    client_id: str
    deployment_ids: tuple[str, ...]
    auth_login_url: str
    token_url: str
    jwks_url: str
    trust_emails: bool = False
    token_audience: str | None = None


@dataclass(frozen=True)
class LtiSettings:
    """The tool's address as the platforms reach it (None: the portal's own, its public address
    else the one it listens at), and the platforms it is registered on."""

    url: str | None
    platforms: tuple[Platform, ...]
    roster_minutes: int = ROSTER_MINUTES  # how often the server reads the platforms' rosters (0: never by itself)

    def find(self, issuer: str, client_id: str | None) -> Platform | None:
        """The registration of ``issuer`` (and ``client_id`` when given or when the issuer has several)."""
        found = [p for p in self.platforms if p.issuer == issuer and (client_id is None or p.client_id == client_id)]
        return found[0] if len(found) == 1 else None


PLATFORM_KEYS = ("issuer", "client_id", "deployment_ids", "auth_login_url", "token_url", "jwks_url")
OPTIONAL_KEYS = ("trust_emails", "token_audience")


def parse_lti(data: Any) -> LtiSettings:
    """The ``lti:`` key of course.yaml: ValueError naming the key and the fix."""
    if not isinstance(data, dict):
        raise ValueError("'lti' must be 'key: value' lines (url, platforms, roster_sync_minutes)")
    for key in data:
        if key not in ("url", "platforms", "roster_sync_minutes"):
            raise ValueError(f"unknown key 'lti.{key}'; known keys: lti.url, lti.platforms, lti.roster_sync_minutes")
    minutes = data.get("roster_sync_minutes", ROSTER_MINUTES)
    if not isinstance(minutes, int) or isinstance(minutes, bool) or minutes < 0:
        raise ValueError(f"'lti.roster_sync_minutes' must be a whole number of minutes (0: the rosters are read "
                         f"only when an instructor asks); got {minutes!r}")  # fmt: skip
    url = data.get("url")
    if url is not None:
        url = _url(url, "lti.url").rstrip("/")
    items = data.get("platforms", [])  # none: the platforms come by dynamic registration only
    if not isinstance(items, list) or (not items and "platforms" in data):
        raise ValueError("'lti.platforms' must be a list of registrations, each with " + ", ".join(PLATFORM_KEYS))
    platforms: list[Platform] = []
    for i, item in enumerate(items):
        where = f"lti.platforms[{i}]"
        if not isinstance(item, dict):
            raise ValueError(f"{where} must be 'key: value' lines ({', '.join(PLATFORM_KEYS)})")
        for key in item:
            if key not in PLATFORM_KEYS + OPTIONAL_KEYS:
                raise ValueError(f"unknown key '{where}.{key}'; known keys: {', '.join(PLATFORM_KEYS + OPTIONAL_KEYS)}")
        missing = [k for k in PLATFORM_KEYS if item.get(k) in (None, "", [])]
        if missing:
            raise ValueError(f"{where}: give {', '.join(missing)} (the platform shows them when you register the tool)")
        trust = item.get("trust_emails", False)
        if not isinstance(trust, bool):
            raise ValueError(f"'{where}.trust_emails' must be true or false (true only where users cannot set their "
                             f"own e-mail on the platform); got {trust!r}")  # fmt: skip
        ids = item["deployment_ids"]
        if not isinstance(ids, list) or not all(isinstance(d, (str, int)) and str(d) for d in ids):
            raise ValueError(f"{where}.deployment_ids must be a list of deployment ids, like ['1:abc']; got {ids!r}")
        platform = Platform(_text(item["issuer"], f"{where}.issuer"), _text(item["client_id"], f"{where}.client_id"),
                            tuple(str(d) for d in ids), _url(item["auth_login_url"], f"{where}.auth_login_url"),
                            _url(item["token_url"], f"{where}.token_url"),
                            _url(item["jwks_url"], f"{where}.jwks_url"), trust,
                            _text(item["token_audience"], f"{where}.token_audience")
                            if item.get("token_audience") is not None else None)  # fmt: skip
        if any(p.issuer == platform.issuer and p.client_id == platform.client_id for p in platforms):
            raise ValueError(
                f"{where}: issuer {platform.issuer!r} with client_id {platform.client_id!r} is there twice"
            )
        platforms.append(platform)
    return LtiSettings(url, tuple(platforms), minutes)


def _text(value: Any, key: str) -> str:
    if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value).strip():
        return str(value).strip()
    raise ValueError(f"'{key}' must be a non-empty string; got {value!r}")


def _url(value: Any, key: str) -> str:
    text = _text(value, key)
    parts = urlsplit(text)
    if parts.scheme not in ("https", "http") or not parts.netloc:
        raise ValueError(f"'{key}' must be an https:// address (http:// for a test platform); got {value!r}")
    return text
