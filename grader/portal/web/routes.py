"""The route wrapper the pages share: a handler run on the thread pool with the POST's form read
(``endpoint``), pages rendered on the server (Jinja2, autoescaped) that also answer JSON to
``Accept: application/json`` (``page``), the CSRF token every form carries, who is signed in
(the session's cookie, or an API token for the arena's requests) and what they may reach."""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import (
    JSONResponse,
    Response,
)
from starlette.templating import Jinja2Templates

from ...names import visible
from ..accounts.sessions import end_session, new_session, session_user
from ..accounts.tokens import api_user
from ..course.course import Assignment
from ..database.models import (
    INSTRUCTOR,
    AuditEntry,
    User,
)
from .portal import Portal
from .times import exact_time, human_time, is_past, time_left

HERE = Path(__file__).resolve().parent


TEMPLATES = Jinja2Templates(directory=str(HERE / "templates"))
STATIC = HERE / "static"


def _when(value: Any) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S UTC") if value is not None else ""


def _shown(value: Any) -> Any:
    """Each value a page shows, without invisible characters (tabs and line ends kept): names
    are cleaned as they are stored, and this keeps out one stored before, or a script's output."""
    return type(value)(visible(value, keep="\t\n")) if isinstance(value, str) else value


TEMPLATES.env.filters["when"] = _when
TEMPLATES.env.finalize = _shown  # before any template is compiled: every {{ ... }} goes through it
TEMPLATES.env.filters.update(human=human_time, exact=exact_time, left=time_left, past=is_past)


Handler = Callable[[Portal, Request, Any], Response]


def endpoint(
    portal: Portal, handler: Handler, max_fields: int = 5, max_files: int = 1
) -> Callable[[Request], Awaitable[Response]]:
    """The route: a number in its path too large for any id a 404, a POST's form read here,
    then the handler on a thread of the pool, so that its database work never holds up the
    other requests."""

    async def run(request: Request) -> Response:
        if any(isinstance(v, int) and v > MAX_ID for v in request.path_params.values()):
            raise HTTPException(404, "no such page: the number in its address is larger than any id")
        form = await request.form(max_files=max_files, max_fields=max_fields) if request.method == "POST" else None
        try:
            await run_in_threadpool(portal.refresh)
            request.state.course_problem = portal.problem
            return await run_in_threadpool(handler, portal, request, form)
        finally:
            if form is not None:
                await form.close()

    return run


# --- helpers ------------------------------------------------------------------------------


MAX_ID = 2**63 - 1  # the largest id a table holds (SQLite's INTEGER, PostgreSQL's BIGINT)


def whole(text: str) -> int | None:
    """``text`` as a whole number from 0 to ``MAX_ID``, else None (ASCII digits only: '²' is a
    digit to ``str.isdigit`` and not to ``int``)."""
    if not (text.isascii() and text.isdigit()) or len(text) > len(str(MAX_ID)):
        return None
    number = int(text)
    return number if number <= MAX_ID else None


def wants_json(request: Request) -> bool:
    return "application/json" in request.headers.get("accept", "")


def csrf_token(request: Request) -> str:
    token = request.session.get("csrf")
    if not isinstance(token, str):
        token = secrets.token_urlsafe(32)
        request.session["csrf"] = token
    return token


def page(request: Request, template: str, data: Mapping[str, Any], status: int = 200, **context: Any) -> Response:
    """The page as HTML, or its ``data`` as JSON when the client asks for it."""
    token = csrf_token(request)
    if wants_json(request):
        return JSONResponse({**data, "csrf": token}, status)
    user = context.pop("user", None)
    problem = getattr(request.state, "course_problem", None) if user is not None and user.staff else None
    return TEMPLATES.TemplateResponse(request, template, {"data": data, "csrf": token, "me": user,
                                                          "course_problem": problem, **context},
                                      status_code=status)  # fmt: skip


def checked_form(request: Request, form: Any) -> Any:
    """The form posted, once its CSRF token (field ``csrf`` or header X-CSRF-Token) is the
    session's. A request with an API token needs none: it is answered as the token's user
    only (``signed_in``), and no browser adds that header to a forged request."""
    if bearer(request) is not None:
        return form
    sent = form.get("csrf") or request.headers.get("x-csrf-token") or ""
    mine = request.session.get("csrf")
    if not isinstance(sent, str) or not isinstance(mine, str) or not hmac.compare_digest(sent, mine):
        raise HTTPException(403, "the form's CSRF token is missing or wrong: reload the page and send the form again")
    return form


def bearer(request: Request) -> str | None:
    """The API token of ``Authorization: Bearer TOKEN``, if the request carries one."""
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" else None


TOKEN_PATHS = ("/arena", "/ladders", "/ladder")  # and what is under them: the paths ``grader arena`` asks


def token_path(path: str) -> bool:
    """Whether an API token signs a request for ``path`` (after /api): the arena's and the
    ladders', which ``grader arena`` asks, but not /arena/token (a token making tokens)."""
    under = any(path == p or path.startswith(p + "/") for p in TOKEN_PATHS)
    return under and path != "/arena/token"


def client_address(request: Request) -> str:
    """The address a request came from: the peer's, or the one a trusted proxy forwarded."""
    return request.client.host if request.client is not None else ""


SESSION_KEY = "sid"  # the cookie's key for the session's id (its row: ``accounts.sessions``)


def session_token(request: Request) -> str | None:
    """The session id the request's cookie carries, if any."""
    token = request.session.get(SESSION_KEY)
    return token if isinstance(token, str) else None


def signed_in(portal: Portal, request: Request) -> User | None:
    """The user of the session the cookie names, while it has not ended; or, for a request
    with an API token, the token's user (None for an unknown token: the cookie is not looked
    at). HTTPException 403 for a token on a path outside the arena's and the ladders'."""
    token = bearer(request)
    if token is not None:
        if not token_path(request.url.path):
            raise HTTPException(403, "an API token signs the arena's and the ladders' requests only (grader arena): "
                                     "sign in with your link or password for this page")  # fmt: skip
        with portal.make.begin() as session:
            return api_user(session, token)
    sid = session_token(request)
    if sid is None:
        return None
    return session_user(portal.make, portal.read, sid, client_address(request), portal.course.session_idle_hours)


def need_user(portal: Portal, request: Request) -> User:
    user = signed_in(portal, request)
    if user is None and bearer(request) is not None:
        raise HTTPException(
            401, "the API token is unknown, revoked or expired: make a new one on the portal's /arena page"
        )
    if user is None:
        raise HTTPException(401, "sign in first: use your sign-in link, or your e-mail and password at /signin")
    return user


def need_staff(portal: Portal, request: Request) -> User:
    user = need_user(portal, request)
    if not user.staff:
        raise HTTPException(404, "no such page")  # as for a page that does not exist: nothing to learn here
    return user


def start_session(portal: Portal, request: Request, user: User) -> None:
    """Sign ``user`` in: a new session (its row, and its id in the cookie) and a new CSRF token,
    so that a token planted before is worth nothing; a session the cookie held ends."""
    old = session_token(request)
    request.session.clear()
    with portal.make.begin() as session:
        if old is not None:
            end_session(session, old)
        token = new_session(session, user, client_address(request), request.headers.get("user-agent", ""),
                            portal.course.session_idle_hours)  # fmt: skip
    request.session[SESSION_KEY] = token
    csrf_token(request)


def end_this_session(portal: Portal, request: Request) -> None:
    """Sign out: the session the cookie names ends (every copy of the cookie with it), and the cookie is emptied."""
    token = session_token(request)
    if token is not None:
        with portal.make.begin() as session:
            end_session(session, token)
    request.session.clear()


def display_name(name: str | None) -> str:
    """An uploaded file's name as shown (never a path): its last part, visible characters only, 100 at most."""
    base = (name or "").replace("\\", "/").rsplit("/", 1)[-1]
    return visible(base).strip()[:100] or "script"


# --- pages --------------------------------------------------------------------------------


def find_assignment(portal: Portal, name: str) -> Assignment:
    found = portal.course.assignments.get(name)
    if found is None:
        raise HTTPException(404, f"no assignment {name!r} in this course")
    return found


def audit(session: Session, user: User, action: str, detail: str) -> None:
    session.add(AuditEntry(user_id=user.id, action=action, detail=detail))


def need_instructor(portal: Portal, request: Request) -> User:
    user = need_staff(portal, request)
    if user.role != INSTRUCTOR:
        raise HTTPException(404, "no such page")
    return user
