"""The middleware every request passes: the client's address (a trusted proxy's
X-Forwarded-For), the security headers (a Content-Security-Policy on every page),
``/api/...`` answered as JSON, a state-changing request from another site refused, the
signed cookie carrying the session's id, and the size limit on a request's body, enforced
before the body is read."""

from __future__ import annotations

from urllib.parse import urlsplit

from starlette.middleware.sessions import SessionMiddleware
from starlette.responses import (
    JSONResponse,
    Response,
)
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from ..accounts.sessions import SESSION_DAYS
from .portal import Portal

FORM_ROOM = 64 * 1024  # what a request may carry besides the uploaded file: fields, multipart headers


CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
       "form-action 'self'; base-uri 'none'; frame-ancestors 'none'")  # fmt: skip


SECURITY_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    # a sign-in link's token never leaves in a Referer; same-origin rather than no-referrer, under
    # which a browser sends "Origin: null" with the portal's own forms (SameOrigin refuses null)
    (b"referrer-policy", b"same-origin"),
    (b"x-frame-options", b"DENY"),
]


class ClientAddress:
    """The request's client address and scheme as a trusted proxy forwards them (the last
    address of X-Forwarded-For that is no trusted proxy's; X-Forwarded-Proto), believed only
    when the request's peer is one of the proxies ``trusted`` names (comma-separated: the
    server's --forwarded-allow-ips), else one of course.yaml's ``trusted_proxies`` (read at
    each request: ``portal sync`` changes them); any other peer's headers are ignored and its
    own address is the client's. The sign-in limits and the sessions page use this address."""

    def __init__(self, app: ASGIApp, portal: Portal, trusted: str | None = None):
        self.app, self.portal = app, portal
        self.trusted = tuple(t.strip() for t in trusted.split(",")) if trusted is not None else None
        self._made: dict[tuple[str, ...], ProxyHeadersMiddleware] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        trusted = self.trusted if self.trusted is not None else self.portal.course.trusted_proxies
        found = self._made.get(trusted)
        if found is None:
            # uvicorn's ASGI types are narrower than Starlette's, for the same messages
            found = self._made[trusted] = ProxyHeadersMiddleware(self.app, list(trusted))  # type: ignore[arg-type]
        await found(scope, receive, send)  # type: ignore[arg-type]


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


SAFE_METHODS = (b"GET", b"HEAD", b"OPTIONS")


class SameOrigin:
    """Refuse (403, one line) a state-changing request (POST and the like) whose Origin, or
    lacking one its Referer, names another site than the portal (the request's own scheme and
    Host, or its public address), even with a valid CSRF token, as Django does; ``Origin:
    null`` (a page that hides where it is) is another site too. A request with neither (a
    command line, a script) is left to the CSRF token or API token it must carry. The paths
    in ``cross_site`` are exempt: an LTI platform's login and launch are cross-site posts by
    design, each proved by its own signature and state."""

    def __init__(self, app: ASGIApp, portal: Portal, cross_site: tuple[str, ...] = ()):
        self.app, self.portal, self.cross_site = app, portal, cross_site

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"].encode() in SAFE_METHODS or scope["path"] in self.cross_site:
            return await self.app(scope, receive, send)
        headers = dict(scope["headers"])
        said = headers.get(b"origin") or headers.get(b"referer")
        if said is None or self._ours(said.decode("latin-1"), scope, headers):
            return await self.app(scope, receive, send)
        text = ("the request came from another site (its Origin or Referer): send the form from the portal's own "
                "page, or send no Origin")  # fmt: skip
        response: Response = (JSONResponse({"error": text}, 403) if b"application/json" in headers.get(b"accept", b"")
                              else Response(text + "\n", 403, media_type="text/plain"))  # fmt: skip
        await response(scope, receive, send)

    def _ours(self, said: str, scope: Scope, headers: dict[bytes, bytes]) -> bool:
        """Whether the URL or origin ``said`` is the portal's: the request's own, or its public address."""
        mine = {_origin(f"{scope.get('scheme', 'http')}://{headers.get(b'host', b'').decode('latin-1')}")}
        if self.portal.public_url:
            mine.add(_origin(self.portal.public_url))
        return _origin(said) in mine - {None}


def _origin(url: str) -> tuple[str, str, int] | None:
    """A URL's origin (scheme, host, port, the scheme's default port said), None for none (``null``)."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port or {"http": 80, "https": 443}.get(parts.scheme.lower())
    except ValueError:
        return None
    if not parts.scheme or not parts.hostname or port is None:
        return None
    return parts.scheme.lower(), parts.hostname.lower(), port


SESSION_COOKIE = "grader_session"


class Sessions:
    """The signed cookie (Starlette's) carrying the session's id (its row: ``accounts.sessions``)
    and the CSRF token: HttpOnly, SameSite=Lax, and Secure when the
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
        if length is not None and (not (length.isascii() and length.isdigit()) or int(length) > self.limit):
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
