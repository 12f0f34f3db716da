"""A request the database could not serve (``database.outage``: PostgreSQL restarting, SQLite
locked past its wait, a full disk) answered 503 with Retry-After and one line, as a page or as
JSON, never a traceback: what was sent was not stored (its transaction rolled back), and the
reader is told when to try again. The server's log says so once an outage, not once a request."""

from __future__ import annotations

import logging
import threading
import time

from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..database.outage import AWAY, FULL, Outage, outage
from .routes import TEMPLATES

log = logging.getLogger("grader.portal")
LOG_EVERY = 30.0  # seconds between the log's lines about one outage


def told(found: Outage, method: str) -> str:
    """What a reader is told: what became of their request, why, and when to try again."""
    paused = "; grading is paused and goes on by itself once it is back" if found.kind == AWAY else ""
    if found.kind == FULL:
        paused = " (its administrator must make room; the pages that only read are served meanwhile)"
    if method in ("GET", "HEAD"):
        return f"this page cannot be shown now: {found.reason}{paused}: reload it in {found.retry_after} seconds"
    return f"nothing you sent was stored: {found.reason}{paused}: send it again in {found.retry_after} seconds"


def _page(text: str) -> str:
    """The error page, in the portal's look, without the database: nobody is named signed in."""
    return TEMPLATES.get_template("error.html").render(data={"error": text}, code=503, me=None, csrf="")


class DatabaseOutage:
    """Answer a request whose database work failed for an outage with a 503 (if its response has
    not begun; else it ends as any broken response does)."""

    def __init__(self, app: ASGIApp):
        self.app = app
        self._logged = 0.0
        self._lock = threading.Lock()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        started = False

        async def watched(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, watched)
        except Exception as e:
            found = outage(e)
            if found is None or started:
                raise
            self._log(found)
            await self._answer(scope, receive, send, found)

    def _log(self, found: Outage) -> None:
        with self._lock:
            if time.monotonic() - self._logged < LOG_EVERY:
                return
            self._logged = time.monotonic()
        log.warning("answering 503 (%s): %s", found.reason, found.cause)

    async def _answer(self, scope: Scope, receive: Receive, send: Send, found: Outage) -> None:
        text = told(found, scope.get("method", "GET"))
        accept = dict(scope["headers"]).get(b"accept", b"")
        response: Response = (JSONResponse({"error": text}, 503) if b"application/json" in accept else
                              HTMLResponse(_page(text), 503))  # fmt: skip
        response.headers["retry-after"] = str(found.retry_after)
        response.headers["cache-control"] = "no-store"
        await response(scope, receive, send)
