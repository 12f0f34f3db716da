"""Signing in and the people of the course: sign-in by e-mail and password or by a one-time
link, signing out, setting a password; for instructors, the students' sign-in links and a
roster uploaded."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from starlette.datastructures import UploadFile
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import (
    JSONResponse,
    RedirectResponse,
    Response,
)
from starlette.routing import BaseRoute, Route

from ...errors import GraderError
from ..accounts.passwords import set_password
from ..accounts.roster import import_roster, read_roster
from ..accounts.signin import TooManyFailures, attempt_signin, new_signin_token, use_signin_token
from ..database.models import (
    STUDENT,
    User,
)
from ..web.portal import Portal, base_url
from ..web.routes import (
    audit,
    checked_form,
    csrf_token,
    display_name,
    endpoint,
    need_instructor,
    need_user,
    page,
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
        Route("/class/links", endpoint(portal, links), methods=["POST"]),
        Route("/class/roster", endpoint(portal, roster_upload), methods=["POST"]),
    ]


def user_data(user: User) -> dict[str, Any]:
    return {"name": user.name, "email": user.email, "role": user.role, "has_password": bool(user.password_hash)}


def signin(portal: Portal, request: Request, form: Any) -> Response:
    if request.method == "POST":
        form = checked_form(request, form)
        try:
            user = attempt_signin(portal.make, portal.signin_limit, str(form.get("email", "")),
                                           str(form.get("password", "")))  # fmt: skip
        except TooManyFailures as e:
            raise HTTPException(429, str(e)) from None
        if user is None:
            return page(request, "signin.html", {"error": "wrong e-mail or password (or no password set yet: "
                                                          "use your sign-in link)"}, 401)  # fmt: skip
        start_session(request, user)
        return _after_signin(request, user)
    return page(request, "signin.html", {"error": None})


def _after_signin(request: Request, user: User) -> Response:
    if wants_json(request):
        return JSONResponse({"signed_in": user_data(user), "csrf": csrf_token(request)})
    return RedirectResponse("/", 303)


def link(portal: Portal, request: Request, form: Any) -> Response:
    """A one-time sign-in link: the page asks to confirm (a link checker opening it uses nothing);
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
        start_session(request, user)
        return _after_signin(request, user)
    return page(request, "link.html", {"token": token})


def signout(portal: Portal, request: Request, form: Any) -> Response:
    checked_form(request, form)
    request.session.clear()
    return JSONResponse({"signed_out": True}) if wants_json(request) else RedirectResponse("/signin", 303)


def password(portal: Portal, request: Request, form: Any) -> Response:
    """Set a password (``password``); one already set is changed only with it (``current``):
    a stolen session cannot lock its owner out. A wrong ``current`` counts as a failed sign-in."""
    user = need_user(portal, request)
    form = checked_form(request, form)
    if user.password_hash:
        _check_current(portal, user, str(form.get("current", "")))
    with portal.make.begin() as session:
        me = session.get(User, user.id)
        assert me is not None
        try:
            set_password(me, str(form.get("password", "")))
        except GraderError as e:
            raise HTTPException(400, str(e)) from None
    return JSONResponse({"password_set": True}) if wants_json(request) else RedirectResponse("/", 303)


def _check_current(portal: Portal, user: User, current: str) -> None:
    """HTTPException unless ``current`` is the user's password (403), within the sign-in limit (429)."""
    if not current:
        raise HTTPException(403, "give your current password ('current') to change it")
    try:
        ok = attempt_signin(portal.make, portal.signin_limit, user.email, current) is not None
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
    """One-time sign-in links for the students (all, or the one whose e-mail is given): instructors only."""
    user = need_instructor(portal, request)
    form = checked_form(request, form)
    email = str(form.get("email") or "").strip().lower()
    base = base_url(portal, request)
    with portal.make.begin() as session:
        query = select(User).where(User.role == STUDENT).order_by(User.name)
        if email:
            query = query.where(User.email == email)
        made = [{"name": s.name, "email": s.email, "link": f"{base}/link/{new_signin_token(session, s)}"}
                for s in session.scalars(query).all()]  # fmt: skip
        audit(session, user, "sign-in links", ", ".join(m["email"] for m in made))
    if email and not made:
        raise HTTPException(404, f"no student {email!r} on the roster")
    return page(request, "links.html", {"links": made}, user=user)
