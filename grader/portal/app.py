"""The portal's ASGI application: every area's pages (``grader.portal.pages``) behind the
middleware (``grader.portal.web``), the static files, and the workers started and stopped
with it."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles

from .lti.grades import GradeSync
from .pages import (
    accounts,
    arena,
    assignments,
    downloads,
    handgrading,
    ladders,
    lti,
    mail,
    regrades,
    resets,
    staff,
    teams,
)
from .web.middleware import FORM_ROOM, ApiPaths, BodyLimit, ClientAddress, SameOrigin, SecurityHeaders, Sessions
from .web.outage import DatabaseOutage
from .web.portal import Portal, https
from .web.routes import STATIC, page


def create_app(portal: Portal, secret_key: str, grades: GradeSync | None = None,
               trusted_proxies: str | None = None) -> Starlette:  # fmt: skip
    """The portal's ASGI application: each area's routes, the LTI tool's too when the course is
    one (``grades`` sends its scores to the platforms), then the static files. A request's
    X-Forwarded-For and -Proto are believed from the proxies ``trusted_proxies`` names
    (comma-separated), else from course.yaml's (``ClientAddress``)."""
    routes = [
        *accounts.routes(portal),
        *assignments.routes(portal),
        *staff.routes(portal),
        *handgrading.routes(portal),
        *downloads.routes(portal),
        *arena.routes(portal),
        *ladders.routes(portal),
        *mail.routes(portal),
        *teams.routes(portal),
        *regrades.routes(portal),
        *resets.routes(portal),
        *(lti.routes(portal, grades) if grades is not None else ()),
        Mount("/static", StaticFiles(directory=str(STATIC)), name="static"),
    ]
    middleware = [
        Middleware(ClientAddress, portal=portal, trusted=trusted_proxies),
        Middleware(SecurityHeaders),
        Middleware(ApiPaths),
        Middleware(DatabaseOutage),  # the database away: 503 and Retry-After (as JSON at /api/...)
        Middleware(SameOrigin, portal=portal, cross_site=lti.CROSS_SITE if grades is not None else ()),
        Middleware(BodyLimit, limit=portal.course.upload_bytes + FORM_ROOM),
        Middleware(Sessions, secret_key=secret_key, always_secure=https(portal.public_url)),
    ]

    async def error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        return page(request, "error.html", {"error": exc.detail}, exc.status_code, code=exc.status_code)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if portal.workers is not None:
            portal.workers.start()
        if portal.mail is not None:
            portal.mail.start()
        if portal.roster is not None:
            portal.roster.start()
        try:
            yield
        finally:
            if portal.roster is not None:
                await asyncio.to_thread(portal.roster.stop)
            if portal.mail is not None:
                await asyncio.to_thread(portal.mail.stop)
            if portal.workers is not None:  # the gradings under way stopped and queued again
                await asyncio.to_thread(portal.workers.close)

    return Starlette(routes=routes, middleware=middleware, exception_handlers={HTTPException: error}, lifespan=lifespan)
