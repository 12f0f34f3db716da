"""Signing in and the people of the course: sign-in by e-mail and password or by a one-time
link, signing out, setting a password, one's own sessions (ended one by one or everywhere);
for instructors, the students' sign-in links, their sessions ended, and a roster uploaded."""

from __future__ import annotations

import csv
import datetime as dt
import io
from typing import Any

from sqlalchemy import select
from starlette.datastructures import UploadFile
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import (
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
)
from starlette.routing import BaseRoute, Route

from ...errors import GraderError
from ...runs.text import safe_cell
from ..accounts.passwords import set_password
from ..accounts.resets import forget_resets
from ..accounts.roster import import_roster, read_roster
from ..accounts.sessions import end_session_named, end_sessions, is_session, session_id, user_sessions
from ..accounts.signin import (
    LINK_HOURS,
    TooManyFailures,
    attempt_signin,
    forget_links,
    link_problem,
    new_signin_token,
    use_signin_token,
)
from ..accounts.tokens import revoke_api_tokens
from ..database.models import (
    STUDENT,
    User,
    now,
)
from ..mail import messages as mails
from ..web.portal import Portal, base_url, mailed
from ..web.routes import (
    audit,
    checked_form,
    client_address,
    csrf_token,
    display_name,
    end_this_session,
    endpoint,
    need_instructor,
    need_user,
    page,
    session_token,
    start_session,
    wants_json,
)


def routes(portal: Portal) -> list[BaseRoute]:
    """Signing in and out, passwords; the students' sign-in links and the roster (instructors)."""
    return [
        Route("/signin", endpoint(portal, signin), methods=["GET", "POST"]),
        Route("/link/{token}", endpoint(portal, link), methods=["GET", "POST"]),
        Route("/signout", endpoint(portal, signout), methods=["POST"]),
        Route("/password", endpoint(portal, password), methods=["POST"]),
        Route("/sessions", endpoint(portal, sessions_page)),
        Route("/sessions/{name}/end", endpoint(portal, end_one), methods=["POST"]),
        Route("/sessions/end-all", endpoint(portal, end_all), methods=["POST"]),
        Route("/class/links", endpoint(portal, links), methods=["POST"]),
        Route("/class/sessions/end", endpoint(portal, end_theirs), methods=["POST"]),
        Route("/class/roster", endpoint(portal, roster_upload), methods=["POST"]),
    ]


def user_data(user: User) -> dict[str, Any]:
    return {"name": user.name, "email": user.email, "role": user.role, "has_password": bool(user.password_hash)}


def signin(portal: Portal, request: Request, form: Any) -> Response:
    if request.method == "POST":
        form = checked_form(request, form)
        try:
            user = attempt_signin(portal.make, portal.signin_limit, str(form.get("email", "")),
                                  str(form.get("password", "")), client_address(request))  # fmt: skip
        except TooManyFailures as e:
            raise HTTPException(429, str(e)) from None
        if user is None:
            return page(request, "signin.html", {"error": "wrong e-mail or password (or no password set yet: "
                                                          "use your sign-in link)"}, 401, course=portal.course.title)  # fmt: skip
        start_session(portal, request, user)
        return _after_signin(request, user)
    return page(request, "signin.html", {"error": None}, course=portal.course.title)


def _after_signin(request: Request, user: User) -> Response:
    if wants_json(request):
        return JSONResponse({"signed_in": user_data(user), "csrf": csrf_token(request)})
    return RedirectResponse("/", 303)


def link(portal: Portal, request: Request, form: Any) -> Response:
    """A one-time sign-in link: the page asks to confirm (a link checker opening it uses nothing),
    or says why the link would not sign in (used already, expired) before any button is pressed;
    the form's POST signs in and spends the link."""
    token = request.path_params["token"]
    if request.method == "POST":
        checked_form(request, form)
        with portal.make.begin() as session:
            user = use_signin_token(session, token)
        if user is None:
            raise HTTPException(
                400, "this sign-in link was used already or has expired: ask your instructor for a new one"
            )
        start_session(portal, request, user)
        return _after_signin(request, user)
    with portal.read() as session:
        problem = link_problem(session, token)
    data = {"token": token, "problem": f"{problem}: ask your instructor for a new one" if problem else None}
    return page(request, "link.html", data, 400 if problem else 200, course=portal.course.title)


def signout(portal: Portal, request: Request, form: Any) -> Response:
    """Sign out: the session ends on the server, for every copy of its cookie."""
    checked_form(request, form)
    end_this_session(portal, request)
    return _signed_out(request)


def _signed_out(request: Request, **more: Any) -> Response:
    return JSONResponse({"signed_out": True, **more}) if wants_json(request) else RedirectResponse("/signin", 303)


def password(portal: Portal, request: Request, form: Any) -> Response:
    """Set a password (``password``); one already set is changed only with it (``current``):
    a stolen session cannot lock its owner out. A wrong ``current`` counts as a failed sign-in.
    Every other session of the user ends, their API tokens are revoked (they make new ones), and
    every sign-in link of theirs not used yet ends: a thief's copy of a session, a token or a
    link is cut off."""
    user = need_user(portal, request)
    form = checked_form(request, form)
    if user.password_hash:
        _check_current(portal, request, user, str(form.get("current", "")))
    with portal.make.begin() as session:
        me = session.get(User, user.id)
        assert me is not None
        try:
            set_password(me, str(form.get("password", "")), [portal.course.title, "grader portal"])
        except GraderError as e:
            raise HTTPException(400, str(e)) from None
        ended = end_sessions(session, me, keep=session_token(request))
        revoked = revoke_api_tokens(session, me)
        forget_links(session, me)
        forget_resets(session, me)
    if wants_json(request):
        return JSONResponse({"password_set": True, "sessions_ended": ended, "tokens_revoked": revoked})
    return RedirectResponse("/", 303)


def _check_current(portal: Portal, request: Request, user: User, current: str) -> None:
    """HTTPException unless ``current`` is the user's password (403), within the sign-in limits (429)."""
    if not current:
        raise HTTPException(403, "give your current password ('current') to change it")
    try:
        ok = attempt_signin(portal.make, portal.signin_limit, user.email, current, client_address(request)) is not None
    except TooManyFailures as e:
        raise HTTPException(429, str(e)) from None
    if not ok:
        raise HTTPException(403, "the current password is wrong: give the one you sign in with")


def roster_upload(portal: Portal, request: Request, form: Any) -> Response:
    """Import a roster CSV uploaded (``roster`` field) as the roster file is read at each start:
    people added, names and roles updated; instructors only, audited. Its size is bounded as
    a script's is (before the body is read); a bad file answers one line naming the row and the fix."""
    user = need_instructor(portal, request)
    form = checked_form(request, form)
    file = form.get("roster")
    if not isinstance(file, UploadFile):
        raise HTTPException(400, "choose the roster to upload (a CSV with a header row: Email,Name)")
    limit = portal.course.upload_bytes
    content = file.file.read(limit + 1)
    if len(content) > limit:
        raise HTTPException(413, f"the upload is too large: at most {portal.course.upload_kb} KiB")
    name = display_name(file.filename)
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError:
        raise HTTPException(400, f"{name}: not UTF-8 text: export the roster as CSV (UTF-8)") from None
    try:
        people = read_roster(text, name)
        with portal.make.begin() as session:
            added = import_roster(session, people, user, portal.course.instructors)
            audit(session, user, "roster upload", f"{name}: {len(people)} people, {added} added")
    except GraderError as e:
        raise HTTPException(400, str(e)) from None
    data = {"file": name, "people": len(people), "added": added, "updated": len(people) - added}
    return page(request, "roster.html", data, user=user)


def links(portal: Portal, request: Request, form: Any) -> Response:
    """One-time sign-in links for the students (all, or the one whose e-mail is given): instructors
    only; as a page, or (``as=csv``) as a CSV for a mail merge: name, email, link, expires."""
    user = need_instructor(portal, request)
    form = checked_form(request, form)
    email = str(form.get("email") or "").strip().lower()
    base = base_url(portal)
    with portal.make.begin() as session:
        query = select(User).where(User.role == STUDENT).order_by(User.name)
        if email:
            query = query.where(User.email == email)
        made: list[dict[str, Any]] = []
        for s in session.scalars(query).all():
            token = new_signin_token(session, s)
            made.append({"name": s.name, "email": s.email, "link": f"{base}/link/{token}",
                         "mailed": mails.signin_link(session, portal.course, s, token) is not None})  # fmt: skip
        audit(session, user, "sign-in links", ", ".join(m["email"] for m in made))
    mailed(portal)
    if email and not made:
        raise HTTPException(404, f"no student {email!r} on the roster")
    if form.get("as") == "csv":  # for a mail merge: a row per student
        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow(["name", "email", "link", "expires"])
        expires = f"{now() + dt.timedelta(hours=LINK_HOURS):%Y-%m-%d %H:%M} UTC"
        writer.writerows([safe_cell(m["name"]), safe_cell(m["email"]), m["link"], expires] for m in made)
        return PlainTextResponse(out.getvalue(), media_type="text/csv; charset=utf-8",
                                 headers={"content-disposition": 'attachment; filename="sign-in-links.csv"',
                                          "cache-control": "no-store"})  # fmt: skip
    return page(request, "links.html", {"links": made}, user=user)


def sessions_page(portal: Portal, request: Request, form: Any) -> Response:
    """One's own sessions (where one is signed in): when each began and was last seen, from
    which address and browser; each can be ended, or all at once."""
    user = need_user(portal, request)
    mine = session_token(request)
    with portal.read() as session:
        rows = user_sessions(session, user, portal.course.session_idle_hours)
    data = {"sessions": [{"id": session_id(r), "created_at": r.created_at.isoformat(),
                          "last_seen_at": r.last_seen_at.isoformat(), "client": r.client,
                          "last_client": r.last_client, "user_agent": r.user_agent, "this": is_session(r, mine)}
                         for r in rows],
            "idle_hours": portal.course.session_idle_hours}  # fmt: skip
    return page(request, "sessions.html", data, user=user)


def end_one(portal: Portal, request: Request, form: Any) -> Response:
    """End one of one's own sessions (named as the sessions page names it); this one: signed out."""
    user = need_user(portal, request)
    checked_form(request, form)
    name = request.path_params["name"]
    with portal.make.begin() as session:
        ended = end_session_named(session, user, name)
    if ended is None:
        raise HTTPException(404, "no such session of yours: it has ended already (reload the sessions page)")
    if is_session(ended, session_token(request)):
        request.session.clear()
        return _signed_out(request, ended=1)
    if wants_json(request):
        return JSONResponse({"ended": 1, "csrf": csrf_token(request)})
    return RedirectResponse("/sessions", 303)


def end_all(portal: Portal, request: Request, form: Any) -> Response:
    """Sign out everywhere: every session of one's own ends, this one too (API tokens stay:
    they are revoked on the arena page)."""
    user = need_user(portal, request)
    checked_form(request, form)
    with portal.make.begin() as session:
        ended = end_sessions(session, user)
    request.session.clear()
    return _signed_out(request, ended=ended)


def end_theirs(portal: Portal, request: Request, form: Any) -> Response:
    """End every session of the person ``email`` names (a stolen laptop, a shared computer left
    signed in): instructors only, audited. Their gradings under way and API tokens are untouched."""
    user = need_instructor(portal, request)
    form = checked_form(request, form)
    email = str(form.get("email") or "").strip().lower()
    with portal.make.begin() as session:
        them = session.scalar(select(User).where(User.email == email))
        if them is None:
            raise HTTPException(404, f"no one {email!r} on the roster: give the e-mail address of a person on it")
        ended = end_sessions(session, them)
        audit(session, user, "end sessions", f"{email}: {ended} session(s)")
    if wants_json(request):
        return JSONResponse({"email": email, "ended": ended, "csrf": csrf_token(request)})
    return RedirectResponse("/class", 303)
