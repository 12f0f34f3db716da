"""An LTI 1.3 platform (an LMS) built on ``lti1p3platform``, a published platform implementation
nobody on this team wrote, served over real HTTP on loopback: its OIDC authorization endpoint,
its JWKS, its OAuth 2 token endpoint, its deep-linking return, the Assignment and Grade
Services line items, scores and results, and the Names and Role Provisioning Services
membership. The library builds and signs every message (the login initiation, the id_token,
the access token) and checks what the tool sends (the client assertion, the deep-linking
response, the bearer tokens); this module only carries HTTP to and from it and keeps the
gradebook. Where the library does less than the specification asks, the few checks added
here say so (``DEVIATIONS``).

To add a test: ``LibraryPlatform()``, ``registration()`` into course.yaml, ``connect(tool_url)``
once the portal runs, then ``launch_url(...)`` or ``deep_link_url(...)`` for a browser to open.
An NRPS test fills ``members`` (and ``page_size``) and has the tool read ``memberships_url``
(the launches carry it); a dynamic-registration test leaves out ``registration()`` and
``connect``, and has the tool's registration link opened with
``{url}/.well-known/openid-configuration`` and ``registration_token``: the registration the tool
posts to ``/register`` becomes the library's ``Registration``."""

from __future__ import annotations

import copy
import datetime as dt
import html
import json
import re
import secrets
import threading
import urllib.parse
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from lti1p3platform.exceptions import LineItemNotFoundException, LtiException
from lti1p3platform.lineitem import TLineItem
from lti1p3platform.ltiplatform import LTI1P3PlatformConfAbstract
from lti1p3platform.membership import Context
from lti1p3platform.message_launch import LTIAdvantageMessageLaunchAbstract
from lti1p3platform.oidc_login import OIDCLoginAbstract
from lti1p3platform.registration import Registration
from lti1p3platform.request import Request, TRequest
from lti1p3platform.response import Response
from lti1p3platform.score import TScore, UpdateScoreStatus
from lti1p3platform.service_connector import AssignmentsGradesService, NamesRoleProvisioningService, TPage

CLIENT_ID, DEPLOYMENT = "grader-tool-lib", "deployment-lib-1"
MEMBERSHIPS = "application/vnd.ims.lti-nrps.v2.membershipcontainer+json"  # NRPS 2.0's media type
ROLE = "http://purl.imsglobal.org/vocab/lis/v2/membership#"
TOOL_CONFIGURATION = "https://purl.imsglobal.org/spec/lti-tool-configuration"
PLATFORM_CONFIGURATION = "https://purl.imsglobal.org/spec/lti-platform-configuration"
SCOPES = ("https://purl.imsglobal.org/spec/lti-ags/scope/score", "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem",
          "https://purl.imsglobal.org/spec/lti-ags/scope/result.readonly",
          "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly")  # fmt: skip
CONTEXT = Context(id="course-lib", label="GS", title="Game search")

# What lti1p3platform 0.1.8 does otherwise than the specification (and what this module adds):
DEVIATIONS = {
    "redirect_uri": "the authorization request's redirect_uri is not checked against the tool's registered "
    "ones (the library only asks that one is given): checked here",
    "assertion_aud": "the tool's client assertion at the token endpoint is checked for its signature and expiry, "
    "not its audience (verify_aud off): checked here",
    "deep_link_aud": "a deep-linking response is checked for its signature and message type, not its audience, "
    "issuer, deployment or data: audience and issuer checked here",
    "score_unchecked": "a score's JSON is passed on unchecked (no userId, progress or timestamp required, no "
    "media type checked): checked here, and a score older than the last is refused (409)",
    "bad_bearer": "a bearer token that is expired or not the platform's raises out of the service instead of "
    "answering 401: answered 401 here",
    "scopes_any": "a service takes a token with any one of its scopes (a token for scores may make line items)",
    "nrps_next": "the NRPS next page goes in the JSON body, not the Link header the specification names: "
    "moved to the Link header here; a page number from the query string breaks its paging (str + 1): "
    "numbers passed as int here",
    "nrps_accept": "the membership service's Accept header is not checked (its answer is named "
    "application/vnd.ims.lti-nrps.v2.membershipcontainer+json): another media type is refused here (406), as "
    "Canvas's content negotiation does",
    "nrps_pages_asked": "the membership list is paged only when the tool asks a limit; a platform pages by its "
    "own size (Canvas's per_page, Moodle's limit): page_size here",
    "tool_keys_cached": "the tool's JWKS is fetched once and kept: a tool that rotates its key is not heard",
    "no_dynamic_registration": "no LTI Dynamic Registration: the openid-configuration and the registration "
    "endpoint (checking the tool's JSON as the specification asks, answering its client_id and deployment) "
    "are added here, and give the library a Registration (register)",
    "typing_extensions": "it imports typing_extensions without declaring it (mypy, in the test extra, brings it)",
}


def _pem_pair() -> tuple[str, str]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption()).decode()  # fmt: skip
    public = key.public_key().public_bytes(serialization.Encoding.PEM,
                                           serialization.PublicFormat.SubjectPublicKeyInfo).decode()  # fmt: skip
    return private, public


class HttpRequest(Request):
    """The library's request, from a request read by ``http.server``."""

    def build_metadata(self, request: Any) -> TRequest:
        method, path, headers, body = request
        url = urllib.parse.urlsplit(path)
        kind = headers.get("content-type", "")
        form = dict(urllib.parse.parse_qsl(body.decode())) if "form-urlencoded" in kind else {}
        query = {k: int(v) if v.isdigit() else v for k, v in urllib.parse.parse_qsl(url.query)}
        return {"method": method, "form_data": form, "get_data": query, "headers": headers, "content_type": kind,
                "path": url.path, "json": json.loads(body) if body and "json" in kind else None}  # fmt: skip


class Config(LTI1P3PlatformConfAbstract):
    """The platform's side of one registration (one per request: the library keeps the JWT it checks on it)."""

    def init_platform_config(self, **kwargs: Any) -> None:
        self._registration = kwargs["registration"]

    def get_registration_by_params(self, **kwargs: Any) -> Registration:
        assert self._registration is not None
        return self._registration


class Login(OIDCLoginAbstract):
    """The third-party login initiation: its URL, for the browser to open."""

    def set_lti_message_hint(self, **kwargs: Any) -> None:
        self._lti_message_hint = kwargs["hint"]

    def get_redirect(self, url: str) -> str:
        return url


@dataclass
class Message:
    """A launch asked for: who, in which role, to do what (a resource link, or a deep link)."""

    user: str
    roles: list[str]
    name: str
    email: str
    link: str | None = None  # the resource link launched (None: a deep-linking request)
    expiration: int = 300  # the id_token's life in seconds (negative: expired when made)
    extra: dict[str, Any] = field(default_factory=dict)  # claims set over the library's
    registration: Registration | None = None  # another registration than the platform's (another deployment)


class Launch(LTIAdvantageMessageLaunchAbstract):
    """The id_token for the message hinted, rendered as the form the browser posts to the tool."""

    platform: LibraryPlatform

    def prepare_launch(self, preflight_response: dict[str, Any]) -> None:
        asked = self.platform.messages[preflight_response["lti_message_hint"]]
        if asked.registration is not None:
            self._registration = asked.registration
        self.set_user_data(asked.user, asked.roles, asked.name, asked.email)
        self.set_launch_context_claim(CONTEXT.id, [], CONTEXT.title, CONTEXT.label)
        self.set_id_token_expiration(asked.expiration)
        url = self.platform.url
        if asked.link is None:
            self.set_dl(f"{url}/deep-link-return", "Game search", accept_types={"ltiResourceLink"},
                        extra_data="opaque-7")  # type: ignore[arg-type]  # fmt: skip
        else:
            placed = self.platform.links[asked.link]
            self.set_resource_link_claim(asked.link, title=placed.get("title"))
            self.set_custom_parameters_claim(placed.get("custom", {}))
            item = placed.get("lineitem")
            self.set_ags(f"{url}/lineitems", f"{url}/lineitems/{item}" if item else None)
        self.set_nrps(self.platform.memberships_url)
        self.set_extra_claims(asked.extra)

    def render_launch_form(self, launch_data: dict[str, Any], **kwargs: Any) -> str:
        fields = "".join(f'<input type="hidden" name="{k}" value="{html.escape(str(launch_data[k]))}">'
                         for k in ("id_token", "state"))  # fmt: skip
        return (
            f'<form method="post" action="{html.escape(str(launch_data["launch_url"]))}">{fields}</form>'
            "<script>document.forms[0].submit()</script>"
        )


class Gradebook(AssignmentsGradesService):
    """AGS on the platform's gradebook: line items and each user's latest score."""

    platform: LibraryPlatform

    def find_lineitems(self, page: int = 1, limit: int | None = None, line_item_id: str | None = None,
                       resource_link_id: str | None = None, resource_id: str | None = None,
                       tag: str | None = None) -> TPage:  # fmt: skip
        items = [i for i in self.platform.lineitems.values()
                 if resource_id is None or i.get("resourceId") == resource_id]  # fmt: skip
        return {"content": items, "has_next": False}

    def find_lineitem(self, line_item_id: str) -> TLineItem:
        if line_item_id not in self.platform.lineitems:
            raise LineItemNotFoundException(line_item_id)
        return self.platform.lineitems[line_item_id]

    def create_lineitem(self, creation_data: TLineItem) -> TLineItem:
        return self.platform.make_lineitem(dict(creation_data))

    def update_lineitem(self, update_data: TLineItem) -> TLineItem:
        found = self.find_lineitem(str(update_data["id"]).rsplit("/", 1)[-1])
        found.update({k: v for k, v in update_data.items() if k != "id"})  # type: ignore[typeddict-item]
        return found

    def delete_lineitem(self, line_item_id: str) -> None:
        self.find_lineitem(line_item_id)
        del self.platform.lineitems[line_item_id]

    def update_score(self, line_item_id: str, score: TScore) -> UpdateScoreStatus:
        self.find_lineitem(line_item_id)
        return self.platform.take_score(line_item_id, dict(score))

    def get_results(self, line_item_id: str, page: int = 1, limit: int | None = None,
                    user_id: str | None = None) -> TPage:  # fmt: skip
        self.find_lineitem(line_item_id)
        kept = self.platform.results.get(line_item_id, {})
        rows = [{"userId": u, "resultScore": s.get("scoreGiven"), "resultMaximum": s.get("scoreMaximum"),
                 "comment": s.get("comment"), "scoreOf": f"{self.platform.url}/lineitems/{line_item_id}"}
                for u, s in kept.items() if user_id is None or u == user_id]  # fmt: skip
        return {"content": rows, "has_next": False}


class Roster(NamesRoleProvisioningService):
    """NRPS on the platform's members (``LibraryPlatform.members``), ``limit`` to a page."""

    platform: LibraryPlatform

    def get_member_data_page(self, page: int = 1, limit: int | None = None, role: str | None = None,
                             since: str | None = None, **_: Any) -> TPage:  # fmt: skip
        members = [m for m in self.platform.members if role is None or role in m["roles"]]
        if limit is None:
            return {"content": members, "has_next": False}
        start = (int(page) - 1) * int(limit)
        return {"content": members[start : start + int(limit)], "has_next": start + int(limit) < len(members)}

    def get_context_by_id(self) -> Context:
        return CONTEXT


class LibraryPlatform:
    """The platform over HTTP on loopback: the library's messages and checks, and its gradebook."""

    def __init__(self) -> None:
        self.private, self.public = _pem_pair()
        self.messages: dict[str, Message] = {}  # lti_message_hint -> the launch asked for
        self.links: dict[str, dict[str, Any]] = {}  # resource link id -> title, custom, line item id
        self.lineitems: dict[str, dict[str, Any]] = {}
        self.results: dict[str, dict[str, dict[str, Any]]] = {}  # line item id -> user -> its latest score
        self.scores: list[dict[str, Any]] = []  # every score posted and taken: line item id and JSON
        self.refused: list[tuple[str, int, str]] = []  # every request refused: path, status, why
        self.members: list[dict[str, Any]] = []  # the roster NRPS serves
        self.page_size: int | None = None  # the members a page when the tool asks no limit (None: all at once)
        self.roster_reads: list[str] = []  # each roster page asked for, by its path and query
        self.tokens: list[str] = []  # the scopes of each access token given
        self.returned: list[list[dict[str, Any]]] = []  # the content items of each deep-linking response
        self._lock = threading.Lock()
        self._count = 0
        self.tool: str | None = None
        self.redirect_uris: list[str] = []  # the tool's launch URLs, as registered
        self.registration_token = secrets.token_urlsafe(16)  # what the LMS hands the tool with its configuration
        self.registered: list[dict[str, Any]] = []  # each tool registration posted: its content type and JSON
        self.registration_: Registration | None = None
        handler = type("Handler", (_Handler,), {"platform": self})
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.memberships_url = f"{self.url}/memberships"
        self.audience = f"{self.url}/token"  # what the tool's client assertion must name as its aud
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    # --- the registration --------------------------------------------------------------

    def registration(self) -> str:
        """course.yaml's ``lti:`` key registering the tool on this platform (its e-mails trusted;
        its token audience, where it is not the token URL)."""
        audience = f"      token_audience: {self.audience}\n" if self.audience != f"{self.url}/token" else ""
        return (f"lti:\n  platforms:\n    - issuer: {self.url}\n      client_id: {CLIENT_ID}\n"
                f"      deployment_ids: ['{DEPLOYMENT}']\n      auth_login_url: {self.url}/auth\n"
                f"      token_url: {self.url}/token\n      jwks_url: {self.url}/jwks\n"
                "      trust_emails: true\n" + audience)  # fmt: skip

    def connect(self, tool: str) -> None:
        """The tool registered here as an administrator pastes it: its login initiation, launch
        (and deep-linking) URL and JWKS URL."""
        self.tool = tool.rstrip("/")
        self.redirect_uris = [f"{self.tool}/lti/launch"]
        self.register(Registration().set_iss(self.url).set_client_id(CLIENT_ID).set_deployment_id(DEPLOYMENT)
                      .set_oidc_login_url(f"{self.tool}/lti/login").set_launch_url(f"{self.tool}/lti/launch")
                      .set_deeplink_launch_url(f"{self.tool}/lti/launch")
                      .set_tool_key_set_url(f"{self.tool}/lti/jwks"))  # fmt: skip

    def register(self, registration: Registration) -> None:
        """Take ``registration`` as the tool's, signed with this platform's key (the hook for a
        registration made otherwise: dynamically, from what the tool posts)."""
        self.registration_ = registration.set_platform_public_key(self.public).set_platform_private_key(self.private)

    def config(self) -> Config:
        assert self.registration_ is not None, "connect() the tool first"
        return Config(registration=self.registration_)

    def other_deployment(self, deployment: str) -> Registration:
        """The tool's registration under a deployment the course does not list."""
        assert self.registration_ is not None
        return copy.copy(self.registration_).set_deployment_id(deployment)

    # --- dynamic registration (LTI Dynamic Registration 1.0) ----------------------------

    def configuration(self) -> dict[str, Any]:
        """The platform's OpenID configuration (section 3.4), at ``/.well-known/openid-configuration``."""
        return {
            "issuer": self.url,
            "authorization_endpoint": f"{self.url}/auth",
            "registration_endpoint": f"{self.url}/register",
            "jwks_uri": f"{self.url}/jwks",
            "token_endpoint": f"{self.url}/token",
            "token_endpoint_auth_methods_supported": ["private_key_jwt"],
            "token_endpoint_auth_signing_alg_values_supported": ["RS256"],
            "scopes_supported": ["openid", *SCOPES],
            "response_types_supported": ["id_token"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "claims_supported": ["sub", "iss", "name", "given_name", "family_name", "email"],
            "subject_types_supported": ["public"],
            PLATFORM_CONFIGURATION: {
                "product_family_code": "lti1p3platform", "version": "0.1.8",
                "messages_supported": [{"type": "LtiResourceLinkRequest"}, {"type": "LtiDeepLinkingRequest"}],
            },
        }  # fmt: skip

    def register_tool(self, request: HttpRequest) -> tuple[int, str]:
        """The registration endpoint (sections 3.5 and 3.6): the registration token as the bearer,
        the tool's registration checked for what the specification requires of it, then the
        library's Registration made of it; the answer is the registration with the client_id
        given and the deployment_id in its tool configuration (an OpenID client registration
        error otherwise)."""
        if request.headers.get("authorization") != f"Bearer {self.registration_token}":
            return 401, json.dumps({"error": "invalid_token", "error_description": "no registration token"})
        asked = request.json if "application/json" in request.content_type else None
        problem = registration_problem(asked)
        if problem is not None:
            return 400, json.dumps({"error": "invalid_client_metadata", "error_description": problem})
        assert isinstance(asked, dict)
        self.registered.append({"content_type": request.content_type, "json": asked})
        tool = asked[TOOL_CONFIGURATION]
        launch = tool["target_link_uri"]
        deep = next((m.get("target_link_uri") or launch for m in tool.get("messages", [])
                     if m.get("type") == "LtiDeepLinkingRequest"), launch)  # fmt: skip
        client_id, deployment = f"grader-dyn-{len(self.registered)}", f"deployment-dyn-{len(self.registered)}"
        self.tool = f"{urllib.parse.urlsplit(launch).scheme}://{urllib.parse.urlsplit(launch).netloc}"
        self.redirect_uris = list(asked["redirect_uris"])
        self.register(Registration().set_iss(self.url).set_client_id(client_id).set_deployment_id(deployment)
                      .set_oidc_login_url(asked["initiate_login_uri"]).set_launch_url(launch)
                      .set_deeplink_launch_url(deep).set_tool_key_set_url(asked["jwks_uri"]))  # fmt: skip
        answer = {**asked, "client_id": client_id, TOOL_CONFIGURATION: {**tool, "deployment_id": deployment}}
        return 201, json.dumps(answer)

    # --- launches ---------------------------------------------------------------------

    def _login_url(self, message: Message) -> str:
        with self._lock:
            self._count += 1
            hint = f"m{self._count}"
        self.messages[hint] = message
        config = self.config()
        if message.registration is not None:
            config = Config(registration=message.registration)
        start = Login(None, config)
        start.set_lti_message_hint(hint=hint)
        if message.link is None:
            start.set_deeplinking_launch_url()
        return str(start.initiate_login(message.user))

    def launch_url(self, user: str, role: str, link: str, **more: Any) -> str:
        """The tool's login initiation URL (the library's) for ``user`` opening the resource link ``link``."""
        return self._login_url(Message(user, [ROLE + role], f"User {user}", f"{user}@lib.example", link, **more))

    def deep_link_url(self, user: str, role: str = "Instructor", **more: Any) -> str:
        """The tool's login initiation URL for a deep-linking request by ``user``."""
        return self._login_url(Message(user, [ROLE + role], f"User {user}", f"{user}@lib.example", None, **more))

    def authorize(self, request: HttpRequest) -> tuple[int, str, str]:
        """The OIDC authorization endpoint: the library's id_token in a form for the browser to post."""
        asked = request.get_data
        assert self.tool is not None
        if asked.get("redirect_uri") not in self.redirect_uris:  # not checked by the library: DEVIATIONS
            return 400, "the redirect_uri is not one registered for the tool", "text/plain"
        message = self.messages.get(str(asked.get("lti_message_hint")))
        if message is None or asked.get("login_hint") != message.user:
            return 400, "no such launch, or not for this user", "text/plain"
        launch = Launch(request, self.config())
        launch.platform = self
        return 200, launch.lti_launch(), "text/html"

    # --- deep linking, line items, scores ---------------------------------------------

    def deep_link_return(self, request: HttpRequest) -> tuple[int, str, str]:
        """The tool's LtiDeepLinkingResponse, checked by the library; each resource link it returns
        placed in the course, with a line item made for its lineItem."""
        token = request.form_data.get("JWT", "")
        items = self.config().validate_deeplinking_resp({"JWT": token})
        claims = jwt.decode(token, options={"verify_signature": False})  # the library checked the signature
        assert self.registration_ is not None
        tool, audience = self.registration_.get_client_id(), claims.get("aud") or []
        if claims.get("iss") != tool or self.url not in audience:  # DEVIATIONS
            return 400, "the response is not from the tool to this platform", "text/plain"
        self.returned.append(items)
        for item in items:
            if item.get("type") != "ltiResourceLink":
                continue
            link = f"rl-{len(self.links) + 1}"
            placed: dict[str, Any] = {"title": item.get("title"), "custom": item.get("custom", {}), "url": item["url"]}
            if "lineItem" in item:
                made = self.make_lineitem({**item["lineItem"], "resourceLinkId": link})
                placed["lineitem"] = made["id"].rsplit("/", 1)[-1]
            self.links[link] = placed
        return 200, "<p id=linked>" + " ".join(self.links) + "</p>", "text/html"

    def make_lineitem(self, data: dict[str, Any]) -> Any:
        with self._lock:
            number = str(len(self.lineitems) + 1)
            item = {**data, "id": f"{self.url}/lineitems/{number}"}
            self.lineitems[number] = item
        return item

    def take_score(self, item: str, score: dict[str, Any]) -> UpdateScoreStatus:
        """A score the library passed on, checked as the AGS specification asks, and kept as the user's
        result unless an earlier one (by timestamp) arrives after it."""
        required = ("userId", "activityProgress", "gradingProgress", "timestamp")
        if any(k not in score for k in required) or ("scoreGiven" in score and "scoreMaximum" not in score):
            return UpdateScoreStatus.NOTAPPLIED
        when = dt.datetime.fromisoformat(str(score["timestamp"]).replace("Z", "+00:00"))
        with self._lock:
            kept = self.results.setdefault(item, {})
            last = kept.get(score["userId"])
            if last is not None and dt.datetime.fromisoformat(last["timestamp"].replace("Z", "+00:00")) >= when:
                return UpdateScoreStatus.OLD_TIMESTAMP
            kept[score["userId"]] = score
            self.scores.append({"lineitem": item, "score": score})
        return UpdateScoreStatus.CREATED if last is None else UpdateScoreStatus.SUCCESS

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class _Handler(BaseHTTPRequestHandler):
    platform: LibraryPlatform

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    def do_PUT(self) -> None:
        self._serve("PUT")

    def do_DELETE(self) -> None:
        self._serve("DELETE")

    def _serve(self, method: str) -> None:
        body = self.rfile.read(int(self.headers.get("content-length", 0) or 0))
        headers = {k.lower(): v for k, v in self.headers.items()}
        headers["Authorization"] = headers.get("authorization", "")
        request = HttpRequest((method, self.path, headers, body))
        try:
            status, text, kind, more = self._route(method, request)
        except (LtiException, jwt.InvalidTokenError) as e:  # DEVIATIONS: bad_bearer, and a bad assertion
            status, text, kind, more = 401, json.dumps({"error": str(e) or type(e).__name__}), "application/json", {}
        if status >= 400:
            self.platform.refused.append((urllib.parse.urlsplit(self.path).path, status, text[:300]))
        data = text.encode()
        self.send_response(status)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(data)))
        for k, v in more.items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _route(self, method: str, request: HttpRequest) -> tuple[int, str, str, dict[str, str]]:
        platform, path = self.platform, request.path
        if path == "/jwks":
            return 200, json.dumps(platform.config().get_jwks()), "application/json", {}
        if path == "/auth":
            return (*platform.authorize(request), {})
        if path == "/token" and method == "POST":
            answer = platform.config().get_access_token(request.form_data)
            said = jwt.decode(request.form_data["client_assertion"], options={"verify_signature": False})
            audience = said.get("aud") if isinstance(said.get("aud"), list) else [said.get("aud")]
            if platform.audience not in audience:  # DEVIATIONS: assertion_aud, checked here
                return (
                    401,
                    json.dumps({"error": f"the assertion is not for {platform.audience}"}),
                    "application/json",
                    {},
                )
            platform.tokens.append(answer["scope"])
            return 200, json.dumps(answer), "application/json", {}
        if path == "/deep-link-return" and method == "POST":
            return (*platform.deep_link_return(request), {})
        if path == "/memberships":
            accept = [k.split(";")[0].strip() for k in request.headers.get("accept", "*/*").split(",")]
            if MEMBERSHIPS not in accept and "*/*" not in accept:  # DEVIATIONS: nrps_accept, checked here
                return 406, json.dumps({"error": f"the membership list is {MEMBERSHIPS} only"}), "application/json", {}
            query = urllib.parse.urlsplit(self.path).query
            platform.roster_reads.append(path + ("?" + query if query else ""))
            if platform.page_size is not None and "limit" not in request.get_data:  # DEVIATIONS: nrps_pages_asked
                request.get_data["limit"] = platform.page_size
            roster = Roster(request, platform.config(), platform.memberships_url)
            roster.platform = platform
            answer = roster.handle_resp(roster.handle_get_members)
            return _library_answer(answer)
        m = re.fullmatch(r"/lineitems(?:/(\w+))?(/scores|/results)?", path)
        if m:
            book = Gradebook(request, platform.config(), f"{platform.url}/lineitems",
                             f"{platform.url}/lineitems/{m.group(1)}" if m.group(1) else None)  # fmt: skip
            book.platform = platform
            item, sub = m.group(1), m.group(2)
            if item is None:
                handler = book.handle_get_lineitems if method == "GET" else book.handle_create_lineitem
                return _library_answer(book.handle_resp(handler))
            if sub == "/scores":
                return _library_answer(book.handle_resp(book.handle_update_score, line_item_id=item))
            if sub == "/results":
                return _library_answer(book.handle_resp(book.handle_get_results, line_item_id=item))
            handler = {"GET": book.handle_get_lineitem, "PUT": book.handle_update_lineitem,
                       "DELETE": book.handle_delete_lineitem}[method]  # fmt: skip
            return _library_answer(book.handle_resp(handler, line_item_id=item))
        if path == "/.well-known/openid-configuration" and method == "GET":
            return 200, json.dumps(platform.configuration()), "application/json", {}
        if path == "/register" and method == "POST":
            return (*platform.register_tool(request), "application/json", {})
        if path == "/favicon.ico":
            return 204, "", "text/plain", {}
        return 404, "{}", "application/json", {}


def registration_problem(asked: Any) -> str | None:
    """What a tool's registration lacks of what LTI Dynamic Registration 1.0 (section 3.5.1, on
    OpenID Connect Dynamic Client Registration) requires, or None."""
    if not isinstance(asked, dict):
        return "the registration is not a JSON object (Content-Type: application/json)"
    expected = {"application_type": "web", "token_endpoint_auth_method": "private_key_jwt"}
    wrong = [f"{k} must be {v!r}" for k, v in expected.items() if asked.get(k) != v]
    for key, needed in (("grant_types", {"implicit", "client_credentials"}), ("response_types", {"id_token"})):
        if not isinstance(asked.get(key), list) or not needed <= set(asked[key]):
            wrong.append(f"{key} must hold {sorted(needed)}")
    tool = asked.get(TOOL_CONFIGURATION)
    if not isinstance(tool, dict) or not isinstance(tool.get("domain"), str) or not tool["domain"]:
        return "; ".join(wrong + [f"the {TOOL_CONFIGURATION} claim with its domain is required"])
    uris = asked.get("redirect_uris")
    if not isinstance(uris, list) or not uris:
        wrong.append("redirect_uris must list the tool's launch URLs")
        uris = []
    urls = {"initiate_login_uri": asked.get("initiate_login_uri"), "jwks_uri": asked.get("jwks_uri"),
            "target_link_uri": tool.get("target_link_uri"), **{f"redirect_uris[{i}]": u for i, u in enumerate(uris)}}  # fmt: skip
    for key, url in urls.items():
        parts = urllib.parse.urlsplit(url) if isinstance(url, str) else None
        if parts is None or parts.scheme not in ("https", "http") or not parts.hostname:
            wrong.append(f"{key} must be a URL")
        elif parts.hostname != tool["domain"] and not parts.hostname.endswith("." + tool["domain"]):
            wrong.append(f"{key} is not of the tool's domain {tool['domain']}")
    if not isinstance(asked.get("client_name"), str) or not asked["client_name"]:
        wrong.append("client_name is required")
    for message in tool.get("messages", []):
        if not isinstance(message, dict) or not message.get("type"):
            wrong.append("each of messages must give its type")
    scopes = str(asked.get("scope", "")).split()
    wrong += [f"the scope {s} is not one this platform offers" for s in scopes if s not in SCOPES]
    return "; ".join(wrong) or None


def _library_answer(answer: Response) -> tuple[int, str, str, dict[str, str]]:
    """The library's service answer as HTTP (an NRPS next page as the Link header: DEVIATIONS)."""
    result, more = answer.result, {}
    if isinstance(result, dict) and "next" in result and "members" in result:
        more["link"] = f'<{result.pop("next")}>; rel="next"'
    if result is None:
        text = json.dumps({"message": answer.message}) if answer.code >= 400 else ""
    else:
        text = json.dumps(result.get("content", result) if "has_next" in result else result)
    return answer.code, text, answer.media_type, more
