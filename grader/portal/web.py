"""The web layer (Starlette): pages rendered on the server (Jinja2, autoescaped), each also
answering JSON to ``Accept: application/json``; signed session cookies, a CSRF token on every
form, a Content-Security-Policy on every page, and an upload size limit enforced before the
body is read. A student reaches only their own submissions: another's id answers 404, as an
id that does not exist does."""

from __future__ import annotations

import asyncio
import contextlib
import csv
import datetime as dt
import hmac
import io
import secrets
import threading
import time
import unicodedata
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.sessions import SessionMiddleware
from starlette.requests import Request
from starlette.responses import (
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..errors import GraderError
from ..runs import lms
from ..similarity import report_html, report_json
from . import accounts, exports, gtplab, policy, similar, uploads
from .course import Assignment, Course, load_course
from .db import reading
from .live import Watch
from .models import (
    FAILED,
    GRADED,
    INSTRUCTOR,
    QUEUED,
    RUNNING,
    STUDENT,
    AuditEntry,
    Extension,
    Job,
    Release,
    Submission,
    User,
    now,
)
from .queue import DailyLimit, Deadlines, deadlines, mark_late, rerun, submit, used_today, waiting
from .sync import synced_digest
from .worker import Workers

HERE = Path(__file__).resolve().parent
FORM_ROOM = 64 * 1024  # what a request may carry besides the uploaded file: fields, multipart headers
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
       "form-action 'self'; base-uri 'none'; frame-ancestors 'none'")  # fmt: skip
SECURITY_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),  # a sign-in link's token never leaves in a Referer
    (b"x-frame-options", b"DENY"),
]


class SecurityHeaders:
    """Every response carries the Content-Security-Policy and its companions."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                given = message.get("headers", [])
                names = {name.lower() for name, _ in given}  # a page may narrow its own policy (an LTI form post)
                message["headers"] = [*given, *(h for h in SECURITY_HEADERS if h[0] not in names)]
            await send(message)

        await self.app(scope, receive, with_headers)


API = "/api"


class ApiPaths:
    """Every page also at ``/api/...``: the path without its prefix, answered as JSON (the
    request's Accept header set to application/json whatever the client sent)."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        if path == API or path.startswith(API + "/"):
            rest = path[len(API) :] or "/"
            headers = [(k, v) for k, v in scope["headers"] if k != b"accept"]
            scope = {
                **scope,
                "path": rest,
                "raw_path": rest.encode(),
                "headers": [*headers, (b"accept", b"application/json")],
            }
        await self.app(scope, receive, send)


SESSION_COOKIE = "grader_session"
SESSION_DAYS = 14


class Sessions:
    """The signed session cookie (Starlette's): HttpOnly, SameSite=Lax, and Secure when the
    request came over https (directly, or through a proxy that uvicorn trusts, by its
    X-Forwarded-Proto) or the portal's public address is https (``always_secure``)."""

    def __init__(self, app: ASGIApp, secret_key: str, always_secure: bool = False):
        def made(secure: bool) -> SessionMiddleware:
            return SessionMiddleware(app, secret_key=secret_key, session_cookie=SESSION_COOKIE, same_site="lax",
                                     max_age=SESSION_DAYS * 24 * 3600, https_only=secure)  # fmt: skip

        self.plain, self.secure, self.always_secure = made(False), made(True), always_secure

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        secure = self.always_secure or scope.get("scheme") in ("https", "wss")
        await (self.secure if secure else self.plain)(scope, receive, send)


class _TooLarge(Exception):
    pass


class BodyLimit:
    """Refuse a request body over ``limit`` bytes: at once by its Content-Length (nothing of the
    body is read), else as soon as the bytes received pass it (a chunked upload)."""

    def __init__(self, app: ASGIApp, limit: int):
        self.app, self.limit = app, limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        length = dict(scope["headers"]).get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > self.limit):
            return await self._refuse(scope, send)
        seen = 0
        started = False

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.limit:
                raise _TooLarge
            return message

        async def watched(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted, watched)
        except _TooLarge:
            if not started:
                await self._refuse(scope, send)

    async def _refuse(self, scope: Scope, send: Send) -> None:
        kb = (self.limit - FORM_ROOM) // 1024
        text = f"the upload is too large: at most {kb} KiB"
        accept = dict(scope["headers"]).get(b"accept", b"")
        response: Response = (JSONResponse({"error": text}, 413) if b"application/json" in accept
                              else Response(text + "\n", 413, media_type="text/plain"))  # fmt: skip
        response.headers["connection"] = "close"
        await response(scope, _nothing, send)


async def _nothing() -> Message:
    return {"type": "http.disconnect"}


REFRESH_SECONDS = 1.0  # how often at most a server asks the database whether the course was synced


@dataclass
class Portal:
    """What the routes share: the course, the database's sessions, the workers, and the digest
    of the course as loaded (``grader portal sync`` changes the database's: see ``refresh``)."""

    course: Course
    make: sessionmaker[Session]
    workers: Workers | None = None
    signin_limit: accounts.SignInLimit = field(default_factory=accounts.SignInLimit)
    on_release: Callable[[str], object] | None = None  # told the assignment whose private results were released
    public_url: str | None = None  # the address people reach it at (behind a proxy), if not the request's
    digest: str | None = None
    read: sessionmaker[Session] = field(init=False)  # sessions for reading only: a page's wait for no writer
    watch: Watch = field(init=False)  # the submissions whose pages wait for their grade
    _checked: float = field(default=0.0, init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False)

    def __post_init__(self) -> None:
        self.read = reading(self.make)
        self.watch = Watch(self.read)

    def refresh(self) -> None:
        """Load the course again when it was synced since it was loaded, asking the database at
        most once a second (one request asks; the others go on meanwhile). A folder that no
        longer loads (edited after its sync) leaves the course as it was until the next sync."""
        if time.monotonic() - self._checked < REFRESH_SECONDS or not self._lock.acquire(blocking=False):
            return
        try:
            self._checked = time.monotonic()
            with self.read() as session:
                synced = synced_digest(session)
            if synced is None or synced == self.digest:
                return
            self.digest = synced
            with contextlib.suppress(GraderError):
                self.course = load_course(self.course.folder)
                if self.workers is not None:
                    self.workers.course = self.course
        finally:
            self._lock.release()


def https(url: str | None) -> bool:
    return url is not None and url.lower().startswith("https://")


def base_url(portal: Portal, request: Request) -> str:
    """The portal's address, for links it hands out: its public address, else the request's."""
    return (portal.public_url or str(request.base_url)).rstrip("/")


TEMPLATES = Jinja2Templates(directory=str(HERE / "templates"))


def _when(value: Any) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S UTC") if value is not None else ""


TEMPLATES.env.filters["when"] = _when


def create_app(portal: Portal, secret_key: str, extra: Sequence[BaseRoute] = ()) -> Starlette:
    """The portal's ASGI application, with the ``extra`` routes (the LTI tool's) beside its own."""
    routes = [
        Route("/", endpoint(portal, home)),
        Route("/signin", endpoint(portal, signin), methods=["GET", "POST"]),
        Route("/link/{token}", endpoint(portal, link), methods=["GET", "POST"]),
        Route("/signout", endpoint(portal, signout), methods=["POST"]),
        Route("/password", endpoint(portal, password), methods=["POST"]),
        Route("/a/{name}", endpoint(portal, assignment_page), methods=["GET", "POST"]),
        Route("/s/{sid}", endpoint(portal, submission_page)),
        Route("/s/{sid}/events", endpoint(portal, submission_events)),
        Route("/class", endpoint(portal, class_page)),
        Route("/class/links", endpoint(portal, links), methods=["POST"]),
        Route("/class/release", endpoint(portal, release), methods=["POST"]),
        Route("/class/audit", endpoint(portal, audit_page)),
        Route("/class/rerun", endpoint(portal, rerun_page), methods=["POST"]),
        Route("/class/extension", endpoint(portal, extension), methods=["POST"]),
        Route("/class.csv", endpoint(portal, gradebook)),
        Route("/class/queue", endpoint(portal, queue_page)),
        Route("/class/roster", endpoint(portal, roster_upload), methods=["POST"]),
        Route("/class/{name}/students/{email}", endpoint(portal, history_page)),
        Route("/class/{name}/gradescope.json", endpoint(portal, gradescope_download)),
        Route("/class/{name}/run.zip", endpoint(portal, run_download)),
        Route("/class/{name}/canvas.csv", endpoint(portal, canvas_download), methods=["POST"]),
        Route("/class/{name}/moodle.csv", endpoint(portal, moodle_download), methods=["GET", "POST"]),
        Route("/class/{name}/similar", endpoint(portal, similar_page)),
        *extra,
        Mount("/static", StaticFiles(directory=str(HERE / "static")), name="static"),
    ]
    middleware = [
        Middleware(SecurityHeaders),
        Middleware(ApiPaths),
        Middleware(BodyLimit, limit=portal.course.upload_bytes + FORM_ROOM),
        Middleware(Sessions, secret_key=secret_key, always_secure=https(portal.public_url)),
    ]

    async def error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        return page(request, "error.html", {"error": exc.detail}, exc.status_code)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if portal.workers is not None:
            portal.workers.start()
        try:
            yield
        finally:
            if portal.workers is not None:  # the gradings under way stopped and queued again
                await asyncio.to_thread(portal.workers.close)

    return Starlette(routes=routes, middleware=middleware, exception_handlers={HTTPException: error}, lifespan=lifespan)


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
            return await run_in_threadpool(handler, portal, request, form)
        finally:
            if form is not None:
                await form.close()

    return run


# --- helpers ------------------------------------------------------------------------------


MAX_ID = 2**63 - 1  # the largest id a table holds (SQLite's INTEGER, PostgreSQL's BIGINT)


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
    return TEMPLATES.TemplateResponse(request, template, {"data": data, "csrf": token, "me": user, **context},
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


def signed_in(portal: Portal, request: Request) -> User | None:
    """The user of the session's cookie; or, for a request with an API token, the token's
    user (None for an unknown token: the cookie is not looked at). HTTPException 403 for a
    token on a path outside the arena's and the ladders'."""
    token = bearer(request)
    if token is not None:
        if not token_path(request.url.path):
            raise HTTPException(403, "an API token signs the arena's and the ladders' requests only (grader arena): "
                                     "sign in with your link or password for this page")  # fmt: skip
        with portal.make.begin() as session:
            return accounts.api_user(session, token)
    uid = request.session.get("uid")
    if not isinstance(uid, int):
        return None
    with portal.read() as session:
        return session.get(User, uid)


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


def start_session(request: Request, user: User) -> None:
    request.session.clear()  # a new session at sign-in: a token planted before it is worth nothing
    request.session["uid"] = user.id
    csrf_token(request)


def display_name(name: str | None) -> str:
    """An uploaded file's name as shown (never a path): its last part, without control characters, 100 at most."""
    base = (name or "").replace("\\", "/").rsplit("/", 1)[-1]
    clean = "".join(c for c in base if unicodedata.category(c)[0] != "C").strip()
    return clean[:100] or "script"


# --- pages --------------------------------------------------------------------------------


def home(portal: Portal, request: Request, form: Any) -> Response:
    user = signed_in(portal, request)
    if user is None:
        return RedirectResponse("/signin", 303)
    if user.staff and not wants_json(request):
        return RedirectResponse("/class", 303)
    with portal.read() as session:
        items = [_assignment_data(a, used_today(session, user, a.name), deadlines(session, user, a))
                 for a in portal.course.assignments.values()]  # fmt: skip
    data = {"course": portal.course.title, "user": _user_data(user), "assignments": items}
    return page(request, "home.html", data, user=user)


def _user_data(user: User) -> dict[str, Any]:
    return {"name": user.name, "email": user.email, "role": user.role, "has_password": bool(user.password_hash)}


def _assignment_data(a: Assignment, used: int, mine: Deadlines | None = None) -> dict[str, Any]:
    """An assignment as a person sees it: with ``mine``, a student's own deadlines (their extension's)."""
    deadline = mine.deadline if mine else a.deadline
    hard = mine.hard_deadline if mine else a.hard_deadline
    return {
        "name": a.name,
        "title": a.title,
        "game": a.game,
        "public_tests": a.public_tests,
        "private_tests": a.private_tests,
        "per_day": a.per_day,
        "left_today": None if a.per_day is None else max(0, a.per_day - used),
        "deadline": deadline.isoformat() if deadline else None,
        "hard_deadline": hard.isoformat() if hard else None,
        "extension_days": mine.extra_days if mine else 0,
    }


def signin(portal: Portal, request: Request, form: Any) -> Response:
    if request.method == "POST":
        form = checked_form(request, form)
        try:
            user = accounts.attempt_signin(portal.make, portal.signin_limit, str(form.get("email", "")),
                                           str(form.get("password", "")))  # fmt: skip
        except accounts.TooManyFailures as e:
            raise HTTPException(429, str(e)) from None
        if user is None:
            return page(request, "signin.html", {"error": "wrong e-mail or password (or no password set yet: "
                                                          "use your sign-in link)"}, 401)  # fmt: skip
        start_session(request, user)
        return _after_signin(request, user)
    return page(request, "signin.html", {"error": None})


def _after_signin(request: Request, user: User) -> Response:
    if wants_json(request):
        return JSONResponse({"signed_in": _user_data(user), "csrf": csrf_token(request)})
    return RedirectResponse("/", 303)


def link(portal: Portal, request: Request, form: Any) -> Response:
    """A one-time sign-in link: the page asks to confirm (a link checker opening it uses nothing);
    the form's POST signs in and spends the link."""
    token = request.path_params["token"]
    if request.method == "POST":
        checked_form(request, form)
        with portal.make.begin() as session:
            user = accounts.use_signin_token(session, token)
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
            accounts.set_password(me, str(form.get("password", "")))
        except GraderError as e:
            raise HTTPException(400, str(e)) from None
    return JSONResponse({"password_set": True}) if wants_json(request) else RedirectResponse("/", 303)


def _check_current(portal: Portal, user: User, current: str) -> None:
    """HTTPException unless ``current`` is the user's password (403), within the sign-in limit (429)."""
    if not current:
        raise HTTPException(403, "give your current password ('current') to change it")
    try:
        ok = accounts.attempt_signin(portal.make, portal.signin_limit, user.email, current) is not None
    except accounts.TooManyFailures as e:
        raise HTTPException(429, str(e)) from None
    if not ok:
        raise HTTPException(403, "the current password is wrong: give the one you sign in with")


def _find_assignment(portal: Portal, name: str) -> Assignment:
    found = portal.course.assignments.get(name)
    if found is None:
        raise HTTPException(404, f"no assignment {name!r} in this course")
    return found


def assignment_page(portal: Portal, request: Request, form: Any) -> Response:
    user = need_user(portal, request)
    assignment = _find_assignment(portal, request.path_params["name"])
    if request.method == "POST":
        return upload(portal, request, form, user, assignment)
    with portal.read() as session:
        subs = session.scalars(select(Submission).where(Submission.user_id == user.id,
                                                        Submission.assignment == assignment.name)
                               .order_by(Submission.received_at.desc())).all()  # fmt: skip
        used = used_today(session, user, assignment.name)
        mine = deadlines(session, user, assignment)
        shown = _shown(portal, session, assignment)
        scores = {name: c.score for (_, name), c in policy.counted(session, portal.course, user).items()}
    counts = scores.get(assignment.name)
    views = [{**_student_view(s, assignment, shown), "counts": counts is not None and s.id == counts.submission}
             for s in subs]  # fmt: skip
    data = {
        **_assignment_data(assignment, used, mine),
        **_late_data(portal.course, assignment, mine, scores),
        "submissions": views,
    }
    return page(request, "assignment.html", data, user=user, upload_kb=portal.course.upload_kb)


def _late_data(course: Course, assignment: Assignment, mine: Deadlines,
               scores: Mapping[str, policy.Score]) -> dict[str, Any]:  # fmt: skip
    """The student's late days left, and what an upload now would cost if it counted."""
    cost = policy.upload_now(course, assignment, mine.deadline, scores, now())
    return {"counts": assignment.counts, "late_penalty": assignment.late_penalty,
            "late_days_left": policy.late_days_left(course, scores.values()), "uses_late_days": assignment.late_days,
            "upload_now": {"days_late": cost.days_late, "late_days": cost.late_days, "penalty": cost.penalty}}  # fmt: skip


def upload(portal: Portal, request: Request, form: Any, user: User, assignment: Assignment) -> Response:
    limit = portal.course.upload_bytes
    form = checked_form(request, form)
    file = form.get("script")
    if not isinstance(file, UploadFile):
        raise HTTPException(400, "choose the script to upload (the form's 'script' field)")
    content = file.file.read(limit + 1)
    if len(content) > limit:
        raise HTTPException(413, f"the upload is too large: at most {portal.course.upload_kb} KiB")
    name = display_name(file.filename)
    try:
        uploads.check_upload(name, content, portal.course.config.commands, portal.course.config.entry,
                             gtp=assignment.over_gtp)  # fmt: skip
        with portal.make.begin() as session:
            sub = submit(session, user, assignment, name, content)
    except DailyLimit as e:
        raise HTTPException(429, str(e)) from None
    except GraderError as e:
        raise HTTPException(400, str(e)) from None
    if portal.workers is not None:
        portal.workers.wake.set()
    if wants_json(request):
        return JSONResponse({**_student_view(sub, assignment), "csrf": csrf_token(request)}, 201)
    return RedirectResponse(f"/s/{sub.id}", 303)


STATUS_TEXT = {
    QUEUED: "received, waiting to be graded",
    RUNNING: "being graded",
    GRADED: "graded",
    FAILED: "could not be graded (not your fault): it does not count against today's submissions; submit it again",
}


def _student_view(sub: Submission, assignment: Assignment | None, shown: bool = False) -> dict[str, Any]:
    """What a student may see of their submission: the receipt and their public tests; once
    the private results are shown (``shown``), each private test's symbol and credit, with
    its board and diagnosis only where the course shows private boards."""
    view = {
        "id": sub.id,
        "assignment": sub.assignment,
        "filename": sub.filename,
        "received_at": sub.received_at.isoformat(),
        "late": bool(sub.late),
        "size": sub.size,
        "sha256": sub.sha256,
        "status": sub.status,
        "status_text": STATUS_TEXT.get(sub.status, sub.status),
        "public_symbols": sub.public_symbols,
        "public_total": sub.public_total,
        "public_tests": assignment.public_tests if assignment else None,
        "private_tests": assignment.private_tests if assignment else None,
        "feedback": sub.student_text,
        "private_shown": shown,
    }
    if sub.change_reason is not None:  # rerun: the result it replaced, beside the new one, and why
        previous: dict[str, Any] = {"reason": sub.change_reason, "public_symbols": sub.previous_public_symbols,
                                    "public_total": sub.previous_public_total}  # fmt: skip
        if shown:
            previous.update(symbols=sub.previous_symbols, total=sub.previous_total, max_total=sub.previous_max_total)
        view["previous"] = previous
    if shown and assignment is not None and sub.status == GRADED and sub.records:
        keys = ("index", "symbol", "credit") + (("board", "token", "diagnosis") if assignment.private_boards else ())
        view["private"] = [{k: r[k] for k in keys} for r in gtplab.test_records(sub.records)
                           if not assignment.plan.is_public(r["index"])]  # fmt: skip
        view.update(symbols=sub.symbols, total=sub.total, max_total=sub.max_total)
    return view


def _shown(portal: Portal, session: Session, assignment: Assignment | None) -> bool:
    """Whether students see this assignment's private results now."""
    if assignment is None:
        return False
    released = session.get(Release, assignment.name) is not None
    return assignment.private_shown(released, now())


def _staff_view(sub: Submission, assignment: Assignment | None, owner: User | None) -> dict[str, Any]:
    return {
        **_student_view(sub, assignment),
        "student": {"name": owner.name, "email": owner.email} if owner else None,
        "symbols": sub.symbols,
        "total": sub.total,
        "max_total": sub.max_total,
        "private": None,
        "full_feedback": sub.full_text,
        "error": sub.error,
        "previous": None if sub.change_reason is None else {
            "reason": sub.change_reason, "public_symbols": sub.previous_public_symbols,
            "public_total": sub.previous_public_total, "symbols": sub.previous_symbols,
            "total": sub.previous_total, "max_total": sub.previous_max_total},
    }  # fmt: skip


def _visible_submission(session: Session, user: User, sid: str) -> Submission:
    sub = session.get(Submission, sid)
    if sub is None or (sub.user_id != user.id and not user.staff):
        raise HTTPException(404, "no such submission")  # another's answers as one that does not exist
    return sub


def submission_page(portal: Portal, request: Request, form: Any) -> Response:
    user = need_user(portal, request)
    with portal.read() as session:
        sub = _visible_submission(session, user, request.path_params["sid"])
        owner = session.get(User, sub.user_id)
        assignment = portal.course.assignments.get(sub.assignment)
        shown = _shown(portal, session, assignment)
    data = _staff_view(sub, assignment, owner) if user.staff else _student_view(sub, assignment, shown)
    return page(request, "submission.html", data, user=user, staff=user.staff,
                title=assignment.title if assignment else sub.assignment)  # fmt: skip


def submission_events(portal: Portal, request: Request, form: Any) -> Response:
    """The submission's status as server-sent events (``text/event-stream``): its page's live
    update, one line ``data: STATUS`` now and at each change until the status is final."""
    user = need_user(portal, request)
    with portal.read() as session:
        sub = _visible_submission(session, user, request.path_params["sid"])
    return StreamingResponse(portal.watch.events(sub.id, sub.status, user.id), media_type="text/event-stream",
                             headers={"cache-control": "no-store", "x-accel-buffering": "no"})  # fmt: skip


def class_page(portal: Portal, request: Request, form: Any) -> Response:
    """The class table: each student's counted submission (latest or best), its symbols, total,
    late days spent and penalty, and each student's late days used."""
    user = need_staff(portal, request)
    return page(request, "class.html", class_table(portal), user=user, lti=portal.course.lti is not None)


def _score_data(s: policy.Score) -> dict[str, Any]:
    return {"days_late": s.days_late, "late_days": s.late_days, "penalty": s.penalty, "score": s.score,
            "why": s.why}  # fmt: skip


def class_table(portal: Portal) -> dict[str, Any]:
    names = list(portal.course.assignments)
    with portal.read() as session:
        students = session.scalars(select(User).where(User.role == STUDENT).order_by(User.name)).all()
        counted = policy.counted(session, portal.course)
        queued = waiting(session)
        released = {r.assignment for r in session.scalars(select(Release)).all()}
    scores: dict[int, list[policy.Score]] = {}
    for (uid, _), one in counted.items():
        scores.setdefault(uid, []).append(one.score)
    rows = []
    for s in students:
        cells: dict[str, dict[str, Any] | None] = {}
        for name in names:
            c = counted.get((s.id, name))
            cells[name] = None if c is None else {
                "submission": c.submission.id, "symbols": c.submission.symbols, "total": c.submission.total,
                "max_total": c.submission.max_total, "late": bool(c.submission.late), **_score_data(c.score)}  # fmt: skip
        used = policy.late_days_used(scores.get(s.id, ()))
        rows.append({"name": s.name, "email": s.email, "assignments": cells, "late_days_used": used})
    titles = {n: a.title for n, a in portal.course.assignments.items()}
    return {"course": portal.course.title, "assignments": titles, "students": rows, "queue": queued,
            "released": sorted(released), "late_days": portal.course.late_days}  # fmt: skip


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
        people = accounts.read_roster(text, name)
        with portal.make.begin() as session:
            added = accounts.import_roster(session, people, user, portal.course.instructors)
            _audit(session, user, "roster upload", f"{name}: {len(people)} people, {added} added")
    except GraderError as e:
        raise HTTPException(400, str(e)) from None
    data = {"file": name, "people": len(people), "added": added, "updated": len(people) - added}
    return page(request, "roster.html", data, user=user)


def history_page(portal: Portal, request: Request, form: Any) -> Response:
    """Every submission of one student to an assignment, newest first, for staff: symbols,
    totals, days late and what the late policy makes of each, reruns, errors; the counted one marked."""
    user = need_staff(portal, request)
    assignment = _find_assignment(portal, request.path_params["name"])
    email = request.path_params["email"].strip().lower()
    with portal.read() as session:
        student = session.scalar(select(User).where(User.email == email, User.role == STUDENT))
        if student is None:
            raise HTTPException(404, f"no student {email!r} on the roster")
        subs = session.scalars(select(Submission).where(Submission.user_id == student.id,
                                                        Submission.assignment == assignment.name)
                               .order_by(Submission.received_at.desc())).all()  # fmt: skip
        mine = deadlines(session, student, assignment)
        scores = {name: c.score for (_, name), c in policy.counted(session, portal.course, student).items()}
    counted = scores.get(assignment.name)
    others = policy.late_days_used(sc for name, sc in scores.items() if name != assignment.name)
    left = max(0, (portal.course.late_days or 0) - others)
    rows = []
    for sub in subs:
        scored = policy.score(assignment, policy.Candidate(sub.id, sub.received_at, sub.total), mine.deadline, left)
        rows.append({**_staff_view(sub, assignment, None), "full_feedback": None, **_score_data(scored),
                     "counts": counted is not None and counted.submission == sub.id})  # fmt: skip
    data = {"assignment": assignment.name, "title": assignment.title, "counts": assignment.counts,
            "student": {"name": student.name, "email": student.email}, "extension_days": mine.extra_days,
            "deadline": mine.deadline.isoformat() if mine.deadline else None,
            "late_days_used": policy.late_days_used(scores.values()), "late_days": portal.course.late_days,
            "submissions": rows}  # fmt: skip
    return page(request, "history.html", data, user=user)


def queue_page(portal: Portal, request: Request, form: Any) -> Response:
    """The grading queue for staff: each queued or running job, oldest first, with its age and
    the worker that claimed it."""
    user = need_staff(portal, request)
    when = now()
    with portal.read() as session:
        found = session.execute(select(Job, Submission, User).join(Submission, Submission.id == Job.submission_id)
                                .join(User, User.id == Submission.user_id).order_by(Job.id)).all()  # fmt: skip
    jobs = [{"submission": sub.id, "student": owner.email, "assignment": sub.assignment, "state": job.state,
             "received_at": sub.received_at.isoformat(), "age_seconds": round(_age(when, sub.received_at), 1),
             "worker": job.claimed_by, "claimed_at": job.claimed_at.isoformat() if job.claimed_at else None,
             "attempts": job.attempts, "rerun": sub.change_reason}
            for job, sub, owner in found]  # fmt: skip
    data = {"queued": sum(j["state"] == QUEUED for j in jobs), "running": sum(j["state"] == RUNNING for j in jobs),
            "jobs": jobs}  # fmt: skip
    return page(request, "queue.html", data, user=user)


def _age(when: dt.datetime, since: dt.datetime) -> float:
    """Seconds from ``since`` (naive: UTC, as SQLite gives it back) to ``when``."""
    return (when - (since if since.tzinfo else since.replace(tzinfo=dt.timezone.utc))).total_seconds()


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
        made = [{"name": s.name, "email": s.email, "link": f"{base}/link/{accounts.new_signin_token(session, s)}"}
                for s in session.scalars(query).all()]  # fmt: skip
        _audit(session, user, "sign-in links", ", ".join(m["email"] for m in made))
    if email and not made:
        raise HTTPException(404, f"no student {email!r} on the roster")
    return page(request, "links.html", {"links": made}, user=user)


def _audit(session: Session, user: User, action: str, detail: str) -> None:
    session.add(AuditEntry(user_id=user.id, action=action, detail=detail))


def need_instructor(portal: Portal, request: Request) -> User:
    user = need_staff(portal, request)
    if user.role != INSTRUCTOR:
        raise HTTPException(404, "no such page")
    return user


def release(portal: Portal, request: Request, form: Any) -> Response:
    """Release an assignment's private results to its students (instructors only; audited)."""
    user = need_instructor(portal, request)
    form = checked_form(request, form)
    assignment = _find_assignment(portal, str(form.get("assignment", "")))
    with portal.make.begin() as session:
        released = session.get(Release, assignment.name) is None
        if released:
            session.add(Release(assignment=assignment.name, released_by=user.id))
            _audit(session, user, "release", assignment.name)
    if released and portal.on_release is not None:
        portal.on_release(assignment.name)  # the scores with their private tests, to the platforms
    return JSONResponse({"released": assignment.name}) if wants_json(request) else RedirectResponse("/class", 303)


def audit_page(portal: Portal, request: Request, form: Any) -> Response:
    """The audit log: who released results, reran submissions, granted extensions and made sign-in links, and when."""
    user = need_staff(portal, request)
    with portal.read() as session:
        rows = session.execute(select(AuditEntry, User).join(User, User.id == AuditEntry.user_id)
                               .order_by(AuditEntry.id)).all()  # fmt: skip
    entries = [{"at": e.at.isoformat(), "by": u.email, "action": e.action, "detail": e.detail} for e, u in rows]
    return page(request, "audit.html", {"entries": entries}, user=user)


GRADEBOOK_COLUMNS = ("total", "max", "symbols", "late", "late days", "penalty", "score", "why")


def gradebook(portal: Portal, request: Request, form: Any) -> Response:
    """The gradebook as CSV: a row per student, each assignment's counted submission: its total
    as graded, maximum, symbols, late flag, late days spent, penalty, score after it and why;
    last, the late days the student used."""
    need_staff(portal, request)
    table = class_table(portal)
    out = io.StringIO()
    writer = csv.writer(out)
    names = list(table["assignments"])
    writer.writerow(["name", "email"] + [f"{n} {what}" for n in names for what in GRADEBOOK_COLUMNS]
                    + ["late days used"])  # fmt: skip
    for s in table["students"]:
        cells = [s["name"], s["email"]]
        for n in names:
            c = s["assignments"][n]
            cells += ([c["total"], c["max_total"], c["symbols"], "yes" if c["late"] else "", c["late_days"],
                       f"{c['penalty']:.0%}", c["score"], c["why"]] if c else [""] * len(GRADEBOOK_COLUMNS))  # fmt: skip
        writer.writerow([*cells, s["late_days_used"]])
    return PlainTextResponse(out.getvalue(), media_type="text/csv; charset=utf-8",
                             headers={"content-disposition": 'attachment; filename="gradebook.csv"'})  # fmt: skip


def need_staff_download(portal: Portal, request: Request) -> User:
    """Staff (an instructor or a TA, as for the gradebook); a student is refused (403)."""
    user = need_user(portal, request)
    if not user.staff:
        raise HTTPException(403, "only the course's instructors and TAs may download its results")
    return user


def _download_rows(portal: Portal, request: Request) -> tuple[Assignment, list[exports.Counted]]:
    """The counted submissions of the assignment named, for staff; refused (409) while some were
    graded on a plan changed since (their tests are not the plan's: rerun them first)."""
    need_staff_download(portal, request)
    assignment = _find_assignment(portal, request.path_params["name"])
    with portal.read() as session:
        rows = exports.counted(session, portal.course, assignment)
    unkept = exports.not_kept(rows) if assignment.over_gtp else []
    if unkept:
        raise HTTPException(409, f"{len(unkept)} counted program(s) of {assignment.title} were graded before the "
                                 "portal kept whole results: rerun them first (the class page's Rerun)")  # fmt: skip
    older = exports.on_older_plans(rows, portal.course.plan_digest(assignment))
    if older:
        raise HTTPException(409, f"{len(older)} counted submission(s) of {assignment.title} were graded on its "
                                 "plan before it changed: rerun them first (the class page's Rerun)")  # fmt: skip
    return assignment, rows


def gradescope_download(portal: Portal, request: Request, form: Any) -> Response:
    """Gradescope's results.json of each student's counted submission (``grader gradescope``'s)."""
    assignment, rows = _download_rows(portal, request)
    data = exports.gradescope_json(assignment, rows)
    disposition = f'attachment; filename="{assignment.name}-gradescope.json"'
    return JSONResponse(data, headers={"content-disposition": disposition})


def similar_page(portal: Portal, request: Request, form: Any) -> Response:
    """The assignment's similarity report (staff): its counted submissions' pairs ranked, each
    pair's similar passages side by side (``grader similar``'s page; JSON: its --json)."""
    need_staff_download(portal, request)
    assignment = _find_assignment(portal, request.path_params["name"])
    with portal.read() as session:
        rows = exports.counted(session, portal.course, assignment)
    try:
        found = similar.similarity_report(portal.course, assignment, rows)
    except GraderError as e:
        raise HTTPException(409, str(e)) from None
    if wants_json(request):
        return Response(report_json(found), media_type="application/json")
    html = report_html(found, f"Similar submissions: {assignment.title}")
    return HTMLResponse(html, headers={"content-security-policy": similar.CSP})


def run_download(portal: Portal, request: Request, form: Any) -> Response:
    """The run folder ``grader grade class`` writes for the counted submissions, as a zip streamed."""
    assignment, rows = _download_rows(portal, request)
    disposition = f'attachment; filename="{assignment.name}-run.zip"'
    return StreamingResponse(exports.run_zip(portal.course, assignment, rows), media_type="application/zip",
                             headers={"content-disposition": disposition})  # fmt: skip


def _uploaded_text(portal: Portal, form: Any, field: str) -> tuple[str, str] | None:
    """The text of the CSV uploaded in ``field`` and its name as shown; None when none was chosen."""
    file = form.get(field)
    if not isinstance(file, UploadFile) or not file.filename:
        return None
    content = file.file.read(portal.course.upload_bytes + 1)
    name = display_name(file.filename)
    if len(content) > portal.course.upload_bytes:
        raise HTTPException(413, f"the upload is too large: at most {portal.course.upload_kb} KiB")
    try:
        return content.decode("utf-8"), name
    except UnicodeDecodeError:
        raise HTTPException(400, f"{name}: not UTF-8 text: export the gradebook as CSV (UTF-8)") from None


def lms_download(portal: Portal, request: Request, form: Any, to: str) -> Response:
    """An assignment's grades after the late policy as the CSV Canvas or Moodle imports (staff):
    with a POST, the LMS's gradebook export as ``roster``, the grade's ``column`` and, for
    Canvas, ``part=notes`` for the notes CSV beside the import. As JSON: both CSVs, and the
    students the roster does not name or whose grade is not final."""
    need_staff_download(portal, request)
    assignment = _find_assignment(portal, request.path_params["name"])
    roster, column, part = None, None, "grades"
    if form is not None:
        form = checked_form(request, form)
        column = str(form.get("column") or "").strip() or None
        part = str(form.get("part") or "grades")
        uploaded = _uploaded_text(portal, form, "roster")
        try:
            roster = lms.read_roster(*uploaded) if uploaded is not None else None
        except GraderError as e:
            raise HTTPException(400, str(e)) from None
    try:
        with portal.read() as session:
            made = exports.lms_export(session, portal.course, assignment, to, roster, column)
    except GraderError as e:
        raise HTTPException(400, str(e)) from None
    if wants_json(request):
        return JSONResponse({"assignment": assignment.name, "lms": to, "column": made.column, "csv": made.csv,
                             "notes": made.notes, "unmatched": made.unmatched,
                             "not_final": [{"email": g.name, "why": g.note} for g in made.not_final],
                             "csrf": csrf_token(request)})  # fmt: skip
    notes = part == "notes" and made.notes is not None
    filename = f"{assignment.name}-{to}{'-notes' if notes else ''}.csv"
    return PlainTextResponse(made.notes if notes and made.notes is not None else made.csv,
                             media_type="text/csv; charset=utf-8",
                             headers={"content-disposition": f'attachment; filename="{filename}"'})  # fmt: skip


def canvas_download(portal: Portal, request: Request, form: Any) -> Response:
    """Canvas's gradebook import of an assignment, from Canvas's gradebook export posted as ``roster``."""
    return lms_download(portal, request, form, "canvas")


def moodle_download(portal: Portal, request: Request, form: Any) -> Response:
    """Moodle's grade import of an assignment: students by e-mail address, or by a Moodle roster posted."""
    return lms_download(portal, request, form, "moodle")


def rerun_page(portal: Portal, request: Request, form: Any) -> Response:
    """Rerun the counted submission of the student ``email`` names, or of every student, of the
    ``assignment`` named (instructors only; audited): the old result is kept beside the new one,
    with why it changed (the plan changed since, or the instructor reran it)."""
    user = need_instructor(portal, request)
    form = checked_form(request, form)
    assignment = _find_assignment(portal, str(form.get("assignment", "")))
    email = str(form.get("email") or "").strip().lower()
    digest = portal.course.plan_digest(assignment)
    with portal.make.begin() as session:
        counted = {c.user.email: c.submission for (_, name), c in policy.counted(session, portal.course).items()
                   if name == assignment.name and (not email or c.user.email == email)}  # fmt: skip
        if email and not counted:
            raise HTTPException(404, f"{email!r} has no graded submission of {assignment.title}")
        done = []
        for who in sorted(counted):
            reason = rerun(session, counted[who], digest)
            if reason is not None:
                done.append({"email": who, "submission": counted[who].id, "reason": reason})
        _audit(
            session,
            user,
            "rerun",
            f"{assignment.name}: " + (", ".join(f"{d['email']} ({d['reason']})" for d in done) or "nothing to rerun"),
        )
    if portal.workers is not None:
        portal.workers.wake.set()
    if wants_json(request):
        return JSONResponse({"assignment": assignment.name, "rerun": done, "csrf": csrf_token(request)})
    return RedirectResponse("/class", 303)


MAX_EXTENSION_DAYS = 365


def extension(portal: Portal, request: Request, form: Any) -> Response:
    """Grant the student ``email`` names ``days`` extra days on the ``assignment`` named: their
    deadline and hard deadline move by as much (0 takes an extension back), and the late flag of
    their submissions follows; instructors only, audited."""
    user = need_instructor(portal, request)
    form = checked_form(request, form)
    assignment = _find_assignment(portal, str(form.get("assignment", "")))
    email = str(form.get("email") or "").strip().lower()
    text = str(form.get("days", "")).strip()
    if not text.isdigit() or int(text) > MAX_EXTENSION_DAYS:
        raise HTTPException(400, f"days must be a whole number from 0 to {MAX_EXTENSION_DAYS}, not {text!r}")
    days = int(text)
    with portal.make.begin() as session:
        student = session.scalar(select(User).where(User.email == email, User.role == STUDENT))
        if student is None:
            raise HTTPException(404, f"no student {email!r} on the roster")
        found = session.get(Extension, (student.id, assignment.name))
        if found is None:
            session.add(Extension(user_id=student.id, assignment=assignment.name, days=days, granted_by=user.id))
        else:
            found.days, found.granted_by, found.granted_at = days, user.id, now()
        session.flush()
        mine = deadlines(session, student, assignment)
        mark_late(session, student, assignment)  # the submissions made already follow the new deadline
        _audit(session, user, "extension", f"{assignment.name}: {email} {days} day(s)")
    if wants_json(request):
        data = {"assignment": assignment.name, "email": email, "extension_days": days,
                "deadline": mine.deadline.isoformat() if mine.deadline else None,
                "hard_deadline": mine.hard_deadline.isoformat() if mine.hard_deadline else None}  # fmt: skip
        return JSONResponse({**data, "csrf": csrf_token(request)})
    return RedirectResponse("/class", 303)
