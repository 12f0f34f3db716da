"""The LTI 1.3 tool's routes: the OIDC login initiation, the launch, the tool's JWKS, the page
where an instructor picks the assignment a deep link opens (answered to the platform by an
auto-posted form), and the staff's page of the scores sent back to the platforms."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit

from sqlalchemy import select
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from ..course import anonymity
from ..database.lti import DROPPED, LtiContext, LtiMember, LtiRegistration, LtiScore
from ..database.lti import FAILED as SEND_FAILED
from ..database.models import User, now
from ..lti import launch as lti
from ..lti import registration
from ..lti.grades import GradeSync
from ..lti.keys import jwks
from ..lti.platforms import find_platform
from ..lti.roster import RosterError
from ..web.middleware import CSP
from ..web.portal import Portal, base_url, https
from ..web.routes import audit, checked_form, need_instructor, need_staff, page, start_session, wants_json, whole

DEEP_LINK = "lti_deep_link"  # the session's key for the deep-linking request an instructor answers
SCORES_SHOWN = 500


CROSS_SITE = ("/lti/login", "/lti/launch")  # a platform posts these from its own site: signed, not same-origin


def routes(portal: Portal, grades: GradeSync) -> list[BaseRoute]:
    keys = lti.PlatformKeys()

    def login(request: Request, form: Any) -> Response:
        assert portal.course.lti is not None
        params = {k: str(v) for k, v in (form or request.query_params).items()}
        try:
            with portal.make.begin() as session:
                begun = lti.login(session, portal.course.lti, params, base_url(portal))
        except lti.LaunchRefused as e:
            raise HTTPException(400, str(e)) from None
        response = RedirectResponse(begun.url, 302)
        # the launch is a platform's cross-site POST: over https, only a SameSite=None cookie goes with it
        secure = request.url.scheme == "https" or https(portal.public_url) or https(portal.course.lti.url)
        response.set_cookie(lti.STATE_COOKIE + begun.state, begun.state, max_age=lti.LOGIN_MINUTES * 60,
                            path="/lti/", secure=secure, httponly=True, samesite="none" if secure else "lax")  # fmt: skip
        return response

    def launch(request: Request, form: Any) -> Response:
        try:
            with portal.make.begin() as session:
                state = str(form.get("state", ""))
                done = lti.launch(session, portal.course, keys, str(form.get("id_token", "")), state,
                                  request.cookies.get(lti.STATE_COOKIE + state))  # fmt: skip
                user = session.get(User, done.user_id)
        except lti.LaunchRefused as e:
            raise HTTPException(401, f"LTI launch refused: {e}") from None
        assert user is not None
        if portal.roster is not None:
            portal.roster.kick()  # a platform course new to the tool: its roster read at once
        start_session(portal, request, user)
        if done.deep_linking is not None:
            request.session[DEEP_LINK] = {"issuer": done.platform.issuer, "client_id": done.platform.client_id,
                                          "deployment_id": done.deployment_id, "settings": done.deep_linking}  # fmt: skip
            return RedirectResponse("/lti/pick", 303)
        return RedirectResponse(f"/a/{done.assignment}" if done.assignment else "/", 303)

    def tool_jwks(request: Request, form: Any) -> Response:
        with portal.make.begin() as session:
            return JSONResponse(jwks(session))

    def pick(request: Request, form: Any) -> Response:
        user = need_staff(portal, request)
        asked = request.session.get(DEEP_LINK)
        if not isinstance(asked, dict):
            raise HTTPException(400, "no deep-linking request to answer: add the tool to the course from the platform")
        choices = {n: a.title for n, a in portal.course.assignments.items()}
        if request.method == "GET":
            return page(request, "lti_pick.html", {"assignments": choices}, user=user)
        form = checked_form(request, form)
        name = str(form.get("assignment", ""))
        if name not in choices:
            raise HTTPException(400, f"no assignment {name!r} in this course: pick one of {', '.join(choices)}")
        with portal.make.begin() as session:
            platform = find_platform(session, portal.course.lti, asked["issuer"], asked["client_id"]) if portal.course.lti else None  # fmt: skip
            if platform is None:
                raise HTTPException(400, f"the platform {asked['issuer']!r} is no longer registered: register it again")
            token = lti.deep_linking_response(session, portal.course, platform, asked["deployment_id"],
                                              asked["settings"], name, base_url(portal))  # fmt: skip
        request.session.pop(DEEP_LINK, None)
        back = str(asked["settings"]["deep_link_return_url"])
        data = {"return_url": back, "jwt": token, "assignment": name}
        if wants_json(request):
            return JSONResponse(data)
        response = page(request, "lti_post.html", data, user=user)
        there = urlsplit(back)
        response.headers["content-security-policy"] = CSP.replace(
            "form-action 'self'", f"form-action 'self' {there.scheme}://{there.netloc}"
        )  # the form goes to the platform: only there
        return response

    def scores(request: Request, form: Any) -> Response:
        user = need_staff(portal, request)
        if request.method == "POST":
            form = checked_form(request, form)
            text = str(form.get("score", ""))
            score = whole(text)
            if score is None or not grades.again(score):
                raise HTTPException(404, f"no score {text!r} to send again")
            return JSONResponse({"sending": score}) if wants_json(request) else RedirectResponse("/class/lti", 303)
        with portal.read() as session:
            rows = session.execute(select(LtiScore, User).join(User, User.id == LtiScore.user_id)
                                   .order_by(LtiScore.id.desc()).limit(SCORES_SHOWN)).all()  # fmt: skip
            hidden = anonymity.hidden_from(session, user, portal.course)  # a TA's: the students' labels
            who = {s.id: anonymity.label(session, u.id, s.assignment) if s.assignment in hidden else u.email
                   for s, u in rows}  # fmt: skip
        items = [{"id": s.id, "student": who[s.id], "assignment": s.assignment, "submission": s.submission_id,
                  "platform": s.issuer, "score_given": s.score_given, "score_maximum": s.score_maximum,
                  "reason": s.reason, "status": s.status, "attempts": s.attempts, "error": s.last_error,
                  "created_at": s.created_at.isoformat(), "sent_at": s.sent_at.isoformat() if s.sent_at else None,
                  "failed": s.status == SEND_FAILED}
                 for s, u in rows]  # fmt: skip
        return page(request, "lti_scores.html", {"scores": items}, user=user)

    def roster(request: Request, form: Any) -> Response:
        """The platforms' courses whose rosters the portal reads, their members, and the
        instructor's button that reads one now (NRPS)."""
        user = need_staff(portal, request)
        if request.method == "POST":
            user = need_instructor(portal, request)
            form = checked_form(request, form)
            text = str(form.get("context", ""))
            if portal.roster is None or whole(text) is None:
                raise HTTPException(404, f"no platform course {text!r} to read the roster of")
            try:
                read = portal.roster.sync(int(text), full=form.get("full") == "1")
            except RosterError as e:
                raise HTTPException(502, f"the roster was not read: {e}") from None
            with portal.make.begin() as session:
                audit(session, user, "lti-roster", f"context {read.context}: {read.members} listed, {read.added} "
                      f"added, {read.dropped} dropped ({'full' if read.full else 'differences'})")  # fmt: skip
            if wants_json(request):
                return JSONResponse({"context": read.context, "members": read.members, "added": read.added,
                                     "dropped": read.dropped, "full": read.full})  # fmt: skip
            return RedirectResponse("/class/lti/roster", 303)
        with portal.read() as session:
            contexts = session.scalars(select(LtiContext).order_by(LtiContext.id)).all()
            rows = session.execute(select(LtiMember, User).outerjoin(User, User.id == LtiMember.user_id)
                                   .order_by(LtiMember.context, LtiMember.name)).all()  # fmt: skip
            items = [{"id": c.id, "platform": c.issuer, "context": c.context_id, "title": c.title or c.context_id,
                      "synced_at": c.synced_at.isoformat() if c.synced_at else None, "error": c.last_error,
                      "differences": c.differences_url is not None,
                      "members": [{"sub": m.sub, "name": m.name, "email": u.email if u else None,
                                   "role": m.role, "account_role": u.role if u else None, "status": m.status,
                                   "dropped": m.status == DROPPED}
                                  for m, u in rows if m.context == c.id]}
                     for c in contexts]  # fmt: skip
        return page(request, "lti_roster.html", {"contexts": items}, user=user)

    def register(request: Request, form: Any) -> Response:
        """LTI Dynamic Registration, opened by the LMS at a one-time link an instructor made:
        the registration made, and a page that tells the LMS to close its window."""
        assert portal.course.lti is not None
        token = str(request.path_params["token"])
        params = request.query_params
        config_url = params.get("openid_configuration", "")
        data: dict[str, Any] = {}
        status = 200
        frame = None  # the LMS's origin, whose frame may show the page: only for a link not spent before
        try:
            with portal.make.begin() as session:
                by = registration.spend_link(session, token)  # spent before anything is fetched: one link, one try
            frame = _origin(config_url)
            base = lti.tool_url(portal.course.lti, base_url(portal))
            done = registration.register(portal.course.lti, base, portal.course.title, config_url,
                                         params.get("registration_token") or None)  # fmt: skip
            with portal.make.begin() as session:
                row = registration.keep(session, done, by)
                maker = session.get(User, by)
                if maker is not None:
                    audit(session, maker, "lti-register", f"{done.issuer} client {done.client_id} deployment "
                          f"{done.deployment_id} (registration {row.id})")  # fmt: skip
            data = {"issuer": done.issuer, "client_id": done.client_id, "deployment_id": done.deployment_id}
        except registration.RegistrationRefused as e:
            data, status = {"error": str(e)}, 400
        if wants_json(request):
            return JSONResponse(data, status)
        response = page(request, "lti_registered.html", data, status)
        if frame is not None:  # the LMS shows this page in its frame
            response.headers["content-security-policy"] = CSP.replace(
                "frame-ancestors 'none'", f"frame-ancestors 'self' {frame}"
            )
            response.headers["x-frame-options"] = "SAMEORIGIN"  # ignored where frame-ancestors is understood
        return response

    def registrations(request: Request, form: Any) -> Response:
        """The dynamic registrations: listed, a one-time registration link made, one revoked."""
        user = need_instructor(portal, request)
        link = None
        if request.method == "POST":
            form = checked_form(request, form)
            action = str(form.get("action", ""))
            with portal.make.begin() as session:
                if action == "link":
                    token = registration.new_link(session, user)
                    base = lti.tool_url(portal.course.lti, base_url(portal)) if portal.course.lti else ""
                    link = f"{base}/lti/register/{token}"
                    audit(session, user, "lti-register-link", f"a registration link, good for "
                          f"{registration.LINK_MINUTES} minutes")  # fmt: skip
                elif action == "revoke":
                    text = str(form.get("registration", ""))
                    row = session.get(LtiRegistration, whole(text)) if whole(text) is not None else None
                    if row is None:
                        raise HTTPException(404, f"no registration {text!r} to revoke")
                    if row.revoked_at is None:
                        row.revoked_at = now()
                        audit(session, user, "lti-revoke", f"{row.issuer} client {row.client_id} "
                              f"(registration {row.id})")  # fmt: skip
                else:
                    raise HTTPException(400, "action must be 'link' (a registration link) or 'revoke'")
            if wants_json(request):
                return JSONResponse({"link": link} if link else {"revoked": True})
            if link is None:
                return RedirectResponse("/class/lti/registrations", 303)
        with portal.read() as session:
            rows = session.execute(select(LtiRegistration, User).outerjoin(User, User.id == LtiRegistration.created_by)
                                   .order_by(LtiRegistration.id)).all()  # fmt: skip
            items = [{"id": r.id, "issuer": r.issuer, "client_id": r.client_id, "deployment_id": r.deployment_id,
                      "created_at": r.created_at.isoformat(), "by": u.email if u else None,
                      "revoked_at": r.revoked_at.isoformat() if r.revoked_at else None}
                     for r, u in rows]  # fmt: skip
        return page(request, "lti_registrations.html", {"registrations": items, "link": link}, user=user)

    def route(path: str, handler: Callable[[Request, Any], Response], methods: list[str]) -> Route:
        return Route(path, _endpoint(handler), methods=methods)

    return [
        route("/lti/login", login, ["GET", "POST"]),
        route("/lti/launch", launch, ["POST"]),
        route("/lti/jwks", tool_jwks, ["GET"]),
        route("/lti/pick", pick, ["GET", "POST"]),
        route("/class/lti", scores, ["GET", "POST"]),
        route("/class/lti/roster", roster, ["GET", "POST"]),
        route("/class/lti/registrations", registrations, ["GET", "POST"]),
        route("/lti/register/{token}", register, ["GET"]),
    ]


def _endpoint(handler: Callable[[Request, Any], Response]) -> Callable[[Request], Awaitable[Response]]:
    """As web's routes: the form read here (no file; a login initiation posts up to 8 fields),
    the handler on a thread of the pool."""

    async def endpoint(request: Request) -> Response:
        form = await request.form(max_files=0, max_fields=20) if request.method == "POST" else None
        try:
            return await run_in_threadpool(handler, request, form)
        finally:
            if form is not None:
                await form.close()

    return endpoint


_HOST = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?")


def _origin(url: str) -> str | None:
    """``url``'s origin (scheme, host and port, nothing else) when it is an http(s) URL with a
    plain host name or address, for a CSP source; None otherwise."""
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        return None
    host = parts.hostname or ""
    if parts.scheme not in ("http", "https") or not _HOST.fullmatch(host):
        return None
    return f"{parts.scheme}://{host}" + (f":{port}" if port is not None else "")
