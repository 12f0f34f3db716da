"""LTI 1.3 launches (IMS LTI Core 1.3, the IMS Security Framework): the OIDC login the platform
initiates, the id_token it posts back checked in full (signature by the platform's JWKS,
issuer, audience and azp, expiry, nonce and state spent once, deployment, message type,
version), the platform's user (its ``iss`` and ``sub``) signed in, never with a role above
what both the launch and the roster give, the resource link mapped to an assignment; and the signed LtiDeepLinkingResponse that hands a platform the
assignment an instructor picked."""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets
import threading
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode, urlsplit

import jwt
from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from ...errors import GraderError
from ...names import visible
from ..course.course import Course
from ..course.lti import LtiSettings, Platform
from ..database.lti import LtiContext, LtiIdentity, LtiLink, LtiLogin
from ..database.models import INSTRUCTOR, STUDENT, TA, User, now
from .keys import signing_key
from .platforms import find_platform

LTI = "https://purl.imsglobal.org/spec/lti/claim/"
DL = "https://purl.imsglobal.org/spec/lti-dl/claim/"
AGS_ENDPOINT = "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"
NRPS_CLAIM = "https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice"
RESOURCE_LINK, DEEP_LINKING = "LtiResourceLinkRequest", "LtiDeepLinkingRequest"
MEMBERSHIP = "http://purl.imsglobal.org/vocab/lis/v2/membership"
LOGIN_MINUTES = 10  # a launch must come back within this long of its login
LEEWAY = 60  # seconds of clock difference allowed on exp and iat
JWKS_SECONDS = 3600  # how long a platform's keys are cached (an unknown kid fetches them again)


class LaunchRefused(GraderError):
    """A launch that fails a check: the message says which and what to do."""


@dataclass(frozen=True)
class Launch:
    """A launch that passed every check: who, in which role, from where, to do what."""

    platform: Platform
    message_type: str
    user_id: int
    role: str  # the portal account's: never above the launch's roles
    assignment: str | None  # the assignment the resource link opens (None: not mapped yet)
    deep_linking: dict[str, Any] | None  # the deep-linking settings of an LtiDeepLinkingRequest
    deployment_id: str


class PlatformKeys:
    """Each platform's JWKS, fetched at first need and cached by kid (PyJWT's PyJWKClient,
    which fetches the set again for a kid it does not know)."""

    def __init__(self) -> None:
        self._clients: dict[str, jwt.PyJWKClient] = {}
        self._lock = threading.Lock()

    def key(self, platform: Platform, token: str) -> Any:
        with self._lock:
            client = self._clients.get(platform.jwks_url)
            if client is None:
                client = jwt.PyJWKClient(platform.jwks_url, cache_keys=True, lifespan=JWKS_SECONDS, timeout=10)
                self._clients[platform.jwks_url] = client
        try:
            return client.get_signing_key_from_jwt(token).key
        except jwt.PyJWKClientConnectionError as e:
            raise LaunchRefused(f"cannot fetch the platform's keys from {platform.jwks_url}: {e}: "
                                "ask the course's administrator to check lti.platforms' jwks_url") from None  # fmt: skip
        except jwt.PyJWKClientError:
            kid = jwt.get_unverified_header(token).get("kid")
            raise LaunchRefused(f"the launch is signed with a key (kid {kid!r}) that the platform's JWKS does not "
                                "list: launch again from the course") from None  # fmt: skip
        except jwt.DecodeError:
            raise LaunchRefused("the launch's id_token is not a JWT: launch again from the course") from None


def tool_url(settings: LtiSettings, portal_base: str) -> str:
    """The tool's address as platforms reach it: course.yaml's lti.url, else the portal's own
    (its public address, else the one it listens at: never a request's Host)."""
    return settings.url or portal_base.rstrip("/")


STATE_COOKIE = "lti-state-"  # and the state: the cookie that binds a login to the browser that began it


@dataclass(frozen=True)
class Login:
    """A login begun: where to send the browser, and the state it must bring back in its cookie too."""

    url: str
    state: str


def login(session: Session, settings: LtiSettings, params: dict[str, str], base: str) -> Login:
    """The OIDC login initiation: the address of the platform's authorization endpoint to send
    the browser to, with a state and a nonce recorded here for the launch to bring back (the
    state also in a cookie of the browser's: ``STATE_COOKIE``)."""
    issuer, hint = params.get("iss", ""), params.get("login_hint", "")
    if not issuer or not hint:
        raise LaunchRefused("a login initiation needs 'iss' and 'login_hint': start the tool from the course's page")
    platform = find_platform(session, settings, issuer, params.get("client_id") or None)
    if platform is None:
        raise LaunchRefused(f"the platform {issuer!r} (client_id {params.get('client_id') or 'not given'}) is not "
                            "registered, or its registration was revoked: add it to lti.platforms in course.yaml, "
                            "or register the tool on it again")  # fmt: skip
    session.execute(delete(LtiLogin).where(LtiLogin.created_at < now() - dt.timedelta(days=1)))  # long spent or lapsed
    state, nonce = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
    session.add(LtiLogin(state=state, nonce=nonce, issuer=platform.issuer, client_id=platform.client_id))
    query = {
        "scope": "openid",
        "response_type": "id_token",
        "response_mode": "form_post",
        "prompt": "none",
        "client_id": platform.client_id,
        "redirect_uri": f"{tool_url(settings, base)}/lti/launch",
        "login_hint": hint,
        "state": state,
        "nonce": nonce,
    }
    if params.get("lti_message_hint"):
        query["lti_message_hint"] = params["lti_message_hint"]
    sep = "&" if urlsplit(platform.auth_login_url).query else "?"
    return Login(platform.auth_login_url + sep + urlencode(query), state)


def launch(session: Session, course: Course, keys: PlatformKeys, id_token: str, state: str,
           state_cookie: str | None) -> Launch:  # fmt: skip
    """Check a launch in full and act on it: the user made or updated and the resource link
    mapped; LaunchRefused saying which check failed. ``state_cookie`` is the browser's cookie
    for this state: a launch posted by another browser than the one that began the login (a
    replay, a login link planted on someone) has none."""
    settings = course.lti
    if settings is None:
        raise LaunchRefused("this course takes no LTI launches: add lti.platforms to course.yaml")
    if not id_token or not state:
        raise LaunchRefused("the launch carries no id_token or state: start the tool from the course's page")
    if state_cookie != state:
        raise LaunchRefused("the launch came back to another browser than the one that began its login (it has "
                            "no cookie of its state): launch again from the course; if the course opens the tool "
                            "in a frame and the browser blocks its cookies there, open it in a new window")  # fmt: skip
    begun = session.get(LtiLogin, state)
    if begun is None:
        raise LaunchRefused("the launch's state is not one this tool issued: start the tool from the course's page")
    platform = find_platform(session, settings, begun.issuer, begun.client_id)
    if platform is None:
        raise LaunchRefused(f"the platform {begun.issuer!r} is no longer registered (in course.yaml, or its dynamic "
                            "registration was revoked): register the tool on it again")  # fmt: skip
    claims = _verified(id_token, platform, keys)
    if claims.get("nonce") != begun.nonce:
        raise LaunchRefused("the launch's nonce is not the one issued with its state: launch again from the course")
    started = begun.created_at if begun.created_at.tzinfo else begun.created_at.replace(tzinfo=dt.timezone.utc)
    if started < now() - dt.timedelta(minutes=LOGIN_MINUTES):
        raise LaunchRefused(f"the launch came back more than {LOGIN_MINUTES} minutes after its login: launch again")
    spent = session.execute(update(LtiLogin).where(LtiLogin.state == state, LtiLogin.used_at.is_(None))
                            .values(used_at=now()))  # fmt: skip
    if getattr(spent, "rowcount", 0) != 1:
        raise LaunchRefused("this launch was used already (its nonce is spent): launch again from the course")
    deployment = str(claims.get(LTI + "deployment_id", ""))
    if deployment not in platform.deployment_ids:
        raise LaunchRefused(f"the deployment {deployment!r} is not among the deployment ids registered for "
                            f"{platform.issuer}: add it to lti.platforms' deployment_ids in course.yaml")  # fmt: skip
    kind = claims.get(LTI + "message_type")
    if kind not in (RESOURCE_LINK, DEEP_LINKING):
        raise LaunchRefused(f"the message type {kind!r} is not one this tool takes ({RESOURCE_LINK}, {DEEP_LINKING})")
    if claims.get(LTI + "version") != "1.3.0":
        raise LaunchRefused(f"the LTI version {claims.get(LTI + 'version')!r} is not 1.3.0")
    user = _user(session, platform, claims, role_of(claims.get(LTI + "roles") or []))
    assignment = None
    settings_dl = None
    remember(session, platform, claims)
    if kind == RESOURCE_LINK:
        assignment = _link(session, course, platform, claims)
    else:
        settings_dl = claims.get(DL + "deep_linking_settings")
        if not isinstance(settings_dl, dict) or not settings_dl.get("deep_link_return_url"):
            raise LaunchRefused("the deep-linking request has no deep_link_return_url")
        if not user.staff:
            raise LaunchRefused("only the course's instructors and TAs pick an assignment to link")
    return Launch(platform, kind, user.id, user.role, assignment, settings_dl, deployment)


def _verified(id_token: str, platform: Platform, keys: PlatformKeys) -> dict[str, Any]:
    key = keys.key(platform, id_token)
    try:
        claims: dict[str, Any] = jwt.decode(
            id_token, key, algorithms=["RS256"], audience=platform.client_id, issuer=platform.issuer, leeway=LEEWAY,
            options={"require": ["exp", "iat", "iss", "aud", "sub", "nonce"]},
        )  # fmt: skip
    except jwt.ExpiredSignatureError:
        raise LaunchRefused("the launch's id_token has expired: launch again from the course") from None
    except jwt.InvalidSignatureError:
        raise LaunchRefused("the launch's signature does not verify with the platform's key: it was not "
                            "signed by the platform; launch again from the course") from None  # fmt: skip
    except jwt.InvalidAudienceError:
        raise LaunchRefused(f"the launch is meant for another tool (its audience is not this tool's client_id "
                            f"{platform.client_id!r})") from None  # fmt: skip
    except jwt.InvalidIssuerError:
        raise LaunchRefused(f"the launch's issuer is not {platform.issuer!r}") from None
    except jwt.ImmatureSignatureError:
        raise LaunchRefused("the launch's id_token was issued in the future: check the platform's clock") from None
    except jwt.MissingRequiredClaimError as e:
        raise LaunchRefused(f"the launch's id_token has no '{e.claim}' claim") from None
    except jwt.InvalidTokenError as e:
        raise LaunchRefused(f"the launch's id_token is not valid: {e}") from None
    several = isinstance(claims["aud"], list) and len(claims["aud"]) > 1  # then azp must name this tool
    if (several or "azp" in claims) and claims.get("azp") != platform.client_id:
        raise LaunchRefused(f"the launch's authorized party (azp) is not this tool's client_id {platform.client_id!r}")
    return claims


def role_of(roles: list[str]) -> str:
    """The portal's role for a launch's context roles: a TA role, else Instructor, else student
    (Learner, and any role the portal does not know: the least it may do)."""
    names = [r for r in roles if isinstance(r, str)]
    if any(r.startswith(MEMBERSHIP + "/Instructor#TeachingAssistant") for r in names):
        return TA
    if any(r in (MEMBERSHIP + "#Instructor", "Instructor") for r in names):
        return INSTRUCTOR
    return STUDENT


RANK = {STUDENT: 0, TA: 1, INSTRUCTOR: 2}


def _user(session: Session, platform: Platform, claims: dict[str, Any], role: str) -> User:
    """The platform's user here: the account its ``iss`` and ``sub`` were linked to at their
    first launch; else the account of the launch's e-mail, where course.yaml trusts the
    platform's e-mails and no launch linked that account yet; else a new student's. A launch
    never signs in with a role above what both it and the roster give: a rostered account
    (the roster or course.yaml gave its name and role) keeps both, and a launch giving less
    is refused; an account a launch made is a student's, named as the platform names it."""
    sub = str(claims["sub"])
    if not sub or len(sub) > MAX_SUB:
        raise LaunchRefused(f"the launch's sub has {len(sub)} characters, where OpenID Connect allows 1 to "
                            f"{MAX_SUB}: ask the platform's administrator")  # fmt: skip
    said = visible(str(claims.get("email") or "")).strip().lower()
    given = claims.get("name") or " ".join(str(claims.get(k, "")) for k in ("given_name", "family_name"))
    name = visible(str(given)).strip() or sub
    known = session.scalar(select(LtiIdentity).where(LtiIdentity.issuer == platform.issuer, LtiIdentity.sub == sub))
    user = session.get(User, known.user_id) if known else _first_launch(session, platform, sub, said, name)
    if user is None:
        raise LaunchRefused("the portal account this platform user was linked to is gone: ask the course's staff")
    if not user.rostered:
        user.name, user.role = name[:200], STUDENT  # the platform is its only source; the roster names it nothing
    elif RANK[role] < RANK.get(user.role, RANK[INSTRUCTOR]):
        raise LaunchRefused(f"this launch gives the role {role}, but its portal account ({user.email}) is a "
                            f"{user.role}'s, as the roster or course.yaml says: a launch never signs in with more "
                            "than it gives; launch from a course where the platform gives you that role, or sign "
                            "in to the portal itself")  # fmt: skip
    if known is None:
        session.add(LtiIdentity(issuer=platform.issuer, sub=sub, user_id=user.id))
    session.flush()
    return user


MAX_SUB = 255  # OpenID Connect: a sub is at most 255 ASCII characters (and the portal's column holds no more)


def made_address(platform: Platform, sub: str) -> str:
    """The address of the account made for a platform user whose e-mail is not taken: their
    ``sub`` at the platform's host (its SHA-256 where that would not fit an address)."""
    host = f"{urlsplit(platform.issuer).hostname or 'lti'}.lti"
    made = f"{sub}@{host}"
    return made if len(made) <= 320 else f"{hashlib.sha256(sub.encode()).hexdigest()}@{host}"[-320:]


def _first_launch(session: Session, platform: Platform, sub: str, said: str, name: str) -> User:
    """At a platform user's first launch: the account of the e-mail it says, where the platform's
    e-mails are trusted and no launch linked that account yet; else a new account, under an
    address made of the ``sub`` when the e-mail may not be taken as the platform's word (a user
    who set another's e-mail on the platform gets an account of their own)."""
    made = made_address(platform, sub)
    email = said if platform.trust_emails and "@" in said else made
    user = session.scalar(select(User).where(User.email == email))
    if user is not None and email == said:
        if session.scalar(select(LtiIdentity.id).where(LtiIdentity.user_id == user.id).limit(1)) is not None:
            raise LaunchRefused(f"the portal account of {said} is linked to another user of a platform already: a "
                                "launch links to an account only once; ask the course's staff")  # fmt: skip
        return user
    if user is not None:
        raise LaunchRefused(f"the address {email} this launch would be given is taken by a portal account no launch "
                            "made: ask the course's staff")  # fmt: skip
    user = User(email=email, name=name[:200], role=STUDENT, rostered=False)
    session.add(user)
    session.flush()
    return user


def _link(session: Session, course: Course, platform: Platform, claims: dict[str, Any]) -> str | None:
    """The assignment of the launch's resource link: its custom parameter ``assignment`` (as
    deep linking sets it), else the one mapped before; its AGS line item kept, and its line
    items container (where the tool finds or makes the line item a launch does not name)."""
    resource = claims.get(LTI + "resource_link") or {}
    link_id = str(resource.get("id") or "") if isinstance(resource, dict) else ""
    if not link_id:
        raise LaunchRefused("the launch has no resource link id")
    custom = claims.get(LTI + "custom") or {}
    named = custom.get("assignment") if isinstance(custom, dict) else None
    if named is not None and named not in course.assignments:
        raise LaunchRefused(f"the link opens the assignment {named!r}, which the course does not have: "
                            "link it again (deep linking) or fix its custom parameter")  # fmt: skip
    ags = claims.get(AGS_ENDPOINT) or {}
    lineitem = ags.get("lineitem") if isinstance(ags, dict) else None
    container = ags.get("lineitems") if isinstance(ags, dict) else None
    row = session.scalar(select(LtiLink).where(LtiLink.issuer == platform.issuer, LtiLink.resource_link_id == link_id))
    if row is None:
        row = LtiLink(issuer=platform.issuer, client_id=platform.client_id, resource_link_id=link_id)
        session.add(row)
    if named is not None:
        row.assignment = named
    if isinstance(lineitem, str) and urlsplit(lineitem).scheme in ("http", "https"):
        row.lineitem = lineitem
    if isinstance(container, str) and urlsplit(container).scheme in ("http", "https"):
        row.lineitems = container  # where the tool finds or makes the line item when none is given
    session.flush()
    return row.assignment


def remember(session: Session, platform: Platform, claims: dict[str, Any]) -> None:
    """Keep the memberships URL of a launch's NRPS claim for its context (a new URL forgets the
    differences URL of the old one)."""
    service = claims.get(NRPS_CLAIM)
    context = claims.get(LTI + "context")
    if not isinstance(service, dict) or not isinstance(context, dict):
        return
    url, context_id = service.get("context_memberships_url"), str(context.get("id") or "")
    if not isinstance(url, str) or urlsplit(url).scheme not in ("http", "https") or not 0 < len(context_id) <= 255:
        return  # LTI: a context id is at most 255 characters
    row = session.scalar(select(LtiContext).where(LtiContext.issuer == platform.issuer,
                                                  LtiContext.client_id == platform.client_id,
                                                  LtiContext.context_id == context_id))  # fmt: skip
    if row is None:
        row = LtiContext(issuer=platform.issuer, client_id=platform.client_id, context_id=context_id,
                         memberships_url=url)  # fmt: skip
        session.add(row)
    elif row.memberships_url != url:
        row.memberships_url, row.differences_url = url, None
    title = context.get("title") or context.get("label")
    if isinstance(title, str) and title.strip():
        row.title = visible(title).strip()[:300]
    session.flush()


def deep_linking_response(session: Session, course: Course, platform: Platform, deployment_id: str,
                          settings: dict[str, Any], assignment: str, base: str) -> str:  # fmt: skip
    """The signed LtiDeepLinkingResponse JWT: one LTI resource link opening ``assignment``,
    with a line item for its grades (the points of its plan)."""
    chosen = course.assignments[assignment]
    assert course.lti is not None
    item: dict[str, Any] = {
        "type": "ltiResourceLink",
        "title": chosen.title,
        "url": f"{tool_url(course.lti, base)}/lti/launch",
        "custom": {"assignment": chosen.name},
        "lineItem": {"scoreMaximum": chosen.max_points, "label": chosen.title, "resourceId": chosen.name},
    }
    issued = int(time.time())
    claims: dict[str, Any] = {
        "iss": platform.client_id,
        "aud": [platform.issuer],
        "iat": issued,
        "exp": issued + 600,
        "nonce": secrets.token_urlsafe(16),
        LTI + "message_type": "LtiDeepLinkingResponse",
        LTI + "version": "1.3.0",
        LTI + "deployment_id": deployment_id,
        DL + "content_items": [item],
    }
    if settings.get("data") is not None:
        claims[DL + "data"] = settings["data"]
    key = signing_key(session)
    return jwt.encode(claims, key.private_pem, algorithm="RS256", headers={"kid": key.kid})
