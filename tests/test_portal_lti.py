"""The portal as an LTI 1.3 tool, against a test platform the test runs: a real HTTP server with
its own RSA key, JWKS, OIDC authorization endpoint (answering with a form_post of a signed
id_token, as a platform does), OAuth 2 token endpoint (checking the tool's signed assertion by
the tool's JWKS) and AGS line item score endpoint recording what it receives. The portal is
``grader serve`` in its own process; the messages follow the IMS reference implementation's."""

from __future__ import annotations

import datetime as dt
import html
import json
import re
import secrets
import socket
import threading
import time
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

pytestmark = pytest.mark.xdist_group(__name__)  # one worker: the module's fixture runs once

httpx = pytest.importorskip("httpx", reason="the portal's tests need httpx (pip install -e '.[test]')")
pytest.importorskip("starlette", reason='the portal needs its extra: pip install -e ".[portal]"')
jwt = pytest.importorskip("jwt", reason='the LTI tool needs PyJWT: pip install -e ".[portal]"')

from click.testing import CliRunner  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import rsa  # noqa: E402
from jwt.algorithms import RSAAlgorithm  # noqa: E402
from sqlalchemy import select, update  # noqa: E402

from grader.cli import main  # noqa: E402
from grader.errors import ConfigError  # noqa: E402
from grader.portal.course.course import load_course, make_demo_course  # noqa: E402
from grader.portal.course.sync import sync  # noqa: E402
from grader.portal.database.db import connect, default_url, sessions, upgrade  # noqa: E402
from grader.portal.database.lti import LtiIdentity, LtiLink, LtiScore  # noqa: E402
from grader.portal.database.models import GRADED, STUDENT, Submission, User, now  # noqa: E402
from grader.portal.lti import keys as lti_keys  # noqa: E402
from grader.portal.lti.grades import MAX_ATTEMPTS, GradeSync  # noqa: E402
from grader.portal.lti.launch import role_of  # noqa: E402
from grader.portal.lti.paging import links  # noqa: E402

from portal_server import Client, Server  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
MINIMAX = ROOT / "submissions" / "tictactoe" / "minimax.py"
LTI = "https://purl.imsglobal.org/spec/lti/claim/"
DL = "https://purl.imsglobal.org/spec/lti-dl/claim/"
AGS = "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"
ROLE = "http://purl.imsglobal.org/vocab/lis/v2/membership#"
CLIENT_ID, DEPLOYMENT = "grader-tool-1", "1:deploy"
NRPS = "https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice"
NRPS_SCOPE = "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly"
MEMBERSHIPS = "application/vnd.ims.lti-nrps.v2.membershipcontainer+json"
TOOL_CONFIG = "https://purl.imsglobal.org/spec/lti-tool-configuration"
SCORE_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/score"
LINEITEM_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem"
LINEITEM = "application/vnd.ims.lis.v2.lineitem+json"
CONTAINER = "application/vnd.ims.lis.v2.lineitemcontainer+json"
WITHIN = 120  # seconds: a score is sent within a few once graded


def _key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


class Platform:
    """A platform (an LMS) over real HTTP: its key and JWKS, the authorization endpoint of the
    OIDC login, the token endpoint, and line items that record the scores posted to them."""

    def __init__(self) -> None:
        self.key, self.kid = _key(), "platform-key-1"
        self.messages: dict[str, dict] = {}  # lti_message_hint -> what to launch, and how to sign it
        self.tokens: list[dict] = []  # each token request's verified assertion
        self.scores: list[dict] = []  # each score received: the line item, the token, the JSON
        self.fail_scores = 0  # answer 500 to this many score posts first
        self.tool_jwks = ""
        self.issued: set[str] = set()
        self.returned: list[dict] = []  # each deep-linking response posted back by a browser
        self.members: list[dict] = []  # the course's roster (NRPS), as the memberships URL lists it
        self.changes: list[dict] = []  # the members changed since the last read (the differences URL lists them)
        self.page_size = 2  # members per page of the memberships URL (the rest through Link: rel="next")
        self.roster_reads: list[str] = []  # each roster page asked for, by its path and query
        self.scopes: dict[str, str] = {}  # each token issued: its scope
        self.issuer = ""  # the issuer its openid-configuration names ("": its own address, as it must)
        self.registration_token = "reg-" + secrets.token_hex(8)  # the token its dynamic registration hands the tool
        self.registered: list[dict] = []  # each tool registration posted: its headers and JSON
        self.lineitems: list[dict] = []  # the line items container of the course (AGS), as GET lists it
        self.made: list[dict] = []  # each line item POSTed to the container
        self.lineitem_page = 1  # line items per page of the container (the rest through Link: rel="next")
        self.container_reads: list[str] = []  # each container page asked for, by its query
        self.slow_create = 0.0  # seconds the container takes to answer a POST (two senders at once meet)
        self.withheld: set[str] = set()  # scopes the token endpoint leaves out of its answer (not granted)
        self.tool_keys: dict | None = None  # the tool's JWKS served at /tool-jwks (for a tool with no server)
        self.endpoints = ""  # the address its configuration gives its endpoints at ("": its own, the issuer's)
        platform = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_GET(self) -> None:
                url = urllib.parse.urlsplit(self.path)
                if url.path == "/jwks":
                    jwk = json.loads(RSAAlgorithm.to_jwk(platform.key.public_key()))
                    return self._answer(200, json.dumps({"keys": [{**jwk, "kid": platform.kid, "alg": "RS256"}]}))
                if url.path == "/auth":
                    return self._answer(*platform.authorize(dict(urllib.parse.parse_qsl(url.query))), "text/html")
                if url.path == "/frame":  # the LMS's page framing the tool's registration, hearing it close
                    src = html.escape(dict(urllib.parse.parse_qsl(url.query))["src"])
                    listen = ('addEventListener("message", e => { if (e.data && e.data.subject === '
                              '"org.imsglobal.lti.close") document.title = "closed"; });')  # fmt: skip
                    # listening before the frame is made: the tool's page cannot speak unheard
                    return self._answer(200, f'<title>waiting</title><script>{listen}</script><iframe src="{src}">'
                                        "</iframe>", "text/html")  # fmt: skip
                if url.path == "/.well-known/openid-configuration":
                    return self._answer(200, json.dumps(platform.configuration()))
                if url.path == "/lineitems":
                    status, text, links = platform.container(url, self.headers)
                    return self._answer(status, text, CONTAINER if status == 200 else "application/json", links)
                if url.path == "/tool-jwks" and platform.tool_keys is not None:
                    return self._answer(200, json.dumps(platform.tool_keys))
                if url.path in ("/memberships", "/memberships/differences"):
                    status, text, links = platform.memberships(url, self.headers)
                    return self._answer(status, text, MEMBERSHIPS if status == 200 else "application/json", links)
                self._answer(204 if url.path == "/favicon.ico" else 404, "")  # a browser asks for the icon

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", 0))).decode()
                if self.path == "/token":
                    return self._answer(*platform.token(dict(urllib.parse.parse_qsl(body))))
                if self.path == "/register":
                    return self._answer(*platform.register(self.headers, body))
                if self.path == "/lineitems":
                    return self._answer(*platform.create(self.headers, body), LINEITEM)
                if self.path == "/deep-link-return":
                    platform.returned.append(dict(urllib.parse.parse_qsl(body)))
                    return self._answer(200, "<p id=linked>Linked</p>", "text/html")
                m = re.fullmatch(r"/lineitems/(\w+)/scores", self.path)
                if m:
                    return self._answer(*platform.score(m.group(1), self.headers, body))
                self._answer(404, "{}")

            def _answer(self, status: int, text: str, kind: str = "application/json", links=()) -> None:
                data = text.encode()
                self.send_response(status)
                self.send_header("content-type", kind)
                for link in links:  # one Link header each, as a platform may send them
                    self.send_header("link", link)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def registration(self, trust_emails: bool = False) -> str:
        """course.yaml's ``lti:`` key registering the tool on this platform alone."""
        return "lti:\n  platforms:\n" + self.entry(trust_emails)

    def entry(self, trust_emails: bool = False) -> str:
        """This platform's item of ``lti.platforms`` (its e-mails trusted or not)."""
        return (f"    - issuer: {self.url}\n      client_id: {CLIENT_ID}\n"
                f"      deployment_ids: ['{DEPLOYMENT}']\n      auth_login_url: {self.url}/auth\n"
                f"      token_url: {self.url}/token\n      jwks_url: {self.url}/jwks\n"
                + ("      trust_emails: true\n" if trust_emails else ""))  # fmt: skip

    def claims(self, sub: str, role: str, kind: str = "LtiResourceLinkRequest", **more) -> dict:
        """A launch's claims as the IMS reference implementation sends them."""
        claims = {
            "sub": sub,
            "name": f"User {sub}",
            "email": f"{sub}@platform.example",
            LTI + "message_type": kind,
            LTI + "version": "1.3.0",
            LTI + "deployment_id": DEPLOYMENT,
            LTI + "target_link_uri": "",
            LTI + "roles": [ROLE + role],
            LTI + "context": {"id": "course-1", "label": "GS", "title": "Game search"},
        }
        if kind == "LtiResourceLinkRequest":
            claims[LTI + "resource_link"] = {"id": "link-1", "title": "Tic-tac-toe lab"}
            claims[LTI + "custom"] = {"assignment": "tictactoe"}
            claims[AGS] = {"scope": ["https://purl.imsglobal.org/spec/lti-ags/scope/score"],
                           "lineitem": f"{self.url}/lineitems/7"}  # fmt: skip
        else:
            claims[DL + "deep_linking_settings"] = {"deep_link_return_url": f"{self.url}/deep-link-return",
                                                    "accept_types": ["ltiResourceLink"], "data": "opaque-42"}  # fmt: skip
        return {**claims, **more}

    def service(self) -> dict:
        """The NRPS claim of a launch from this platform's course."""
        return {NRPS: {"context_memberships_url": f"{self.url}/memberships", "service_versions": ["2.0"]}}

    def authorize(self, query: dict) -> tuple[int, str]:
        """The OIDC authorization endpoint: the id_token for the message hinted, posted back by a form."""
        assert query["scope"] == "openid" and query["response_type"] == "id_token"
        assert query["response_mode"] == "form_post" and query["prompt"] == "none"
        assert query["client_id"] == CLIENT_ID and query["redirect_uri"].endswith("/lti/launch")
        asked = self.messages[query["lti_message_hint"]]
        issued = int(time.time()) + asked.get("shift", 0)
        claims = {"iss": self.url, "aud": asked.get("aud", CLIENT_ID), "iat": issued, "exp": issued + 300,
                  "nonce": asked.get("nonce", query["nonce"]), **asked["claims"], **asked.get("extra", {})}  # fmt: skip
        token = jwt.encode(claims, asked.get("key", self.key), algorithm="RS256",
                           headers={"kid": asked.get("kid", self.kid)})  # fmt: skip
        return 200, (f'<form method="post" action="{html.escape(query["redirect_uri"])}">'
                     f'<input name="id_token" value="{token}"><input name="state" value="{html.escape(query["state"])}">'
                     "</form><script>document.forms[0].submit()</script>")  # fmt: skip

    def token(self, form: dict) -> tuple[int, str]:
        """The token endpoint: the tool's assertion checked by the tool's own JWKS."""
        assert form["grant_type"] == "client_credentials"
        assert form["client_assertion_type"] == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
        keys = jwt.PyJWKClient(self.tool_jwks)
        claims = jwt.decode(form["client_assertion"], keys.get_signing_key_from_jwt(form["client_assertion"]).key,
                            algorithms=["RS256"], audience=f"{self.url}/token", issuer=CLIENT_ID)  # fmt: skip
        assert claims["sub"] == CLIENT_ID and claims["jti"]
        token = secrets.token_hex(8)
        self.issued.add(token)
        granted = " ".join(s for s in form["scope"].split() if s not in self.withheld)
        self.scopes[token] = granted
        self.tokens.append({"scope": form["scope"], "claims": claims})
        return 200, json.dumps({"access_token": token, "token_type": "Bearer", "expires_in": 3600, "scope": granted})

    def score(self, item: str, headers, body: str) -> tuple[int, str]:
        if self.fail_scores > 0:
            self.fail_scores -= 1
            return 500, '{"error": "the gradebook is down for a moment"}'
        bearer = headers.get("authorization", "").removeprefix("Bearer ")
        if bearer not in self.issued:
            return 401, '{"error": "bad token"}'
        assert headers.get("content-type") == "application/vnd.ims.lis.v1.score+json"
        self.scores.append({"lineitem": item, "score": json.loads(body)})
        return 200, "{}"

    def container(self, url, headers) -> tuple[int, str, list[str]]:
        """The line items container (AGS 2.0, 3.2): its line items filtered by ``resource_id``,
        ``resource_link_id`` and ``tag``, page by page (``Link: <...>; rel="next"``)."""
        if self.scopes.get(headers.get("authorization", "").removeprefix("Bearer ")) != LINEITEM_SCOPE:
            return 401, '{"error": "no token of the lineitem scope"}', []
        if headers.get("accept") != CONTAINER:
            return 406, '{"error": "not the line item container media type"}', []
        self.container_reads.append(url.query)
        query = dict(urllib.parse.parse_qsl(url.query))
        fields = {"resource_id": "resourceId", "resource_link_id": "resourceLinkId", "tag": "tag"}
        listed = [i for i in self.lineitems if all(i.get(f) == query[q] for q, f in fields.items() if q in query)]
        page = int(query.get("page", "1"))
        shown = listed[(page - 1) * self.lineitem_page : page * self.lineitem_page]
        more = page * self.lineitem_page < len(listed)
        after = urllib.parse.urlencode({**query, "page": page + 1})
        return 200, json.dumps(shown), [f'<{self.url}/lineitems?{after}>; rel="next"'] if more else []

    def create(self, headers, body: str) -> tuple[int, str]:
        """A line item POSTed to the container: kept, its URL (``id``) answered."""
        if self.scopes.get(headers.get("authorization", "").removeprefix("Bearer ")) != LINEITEM_SCOPE:
            return 401, '{"error": "no token of the lineitem scope"}'
        if headers.get("content-type") != LINEITEM:
            return 415, '{"error": "not the line item media type"}'
        time.sleep(self.slow_create)
        item = {**json.loads(body), "id": f"{self.url}/lineitems/{100 + len(self.made)}"}
        self.made.append(item)
        self.lineitems.append(item)
        return 201, json.dumps(item)

    def only_lineitems(self) -> dict:
        """The AGS claim of a launch that gives the line items container and no line item (a Moodle
        link with grade sync and column management, a course navigation launch)."""
        return {AGS: {"scope": [LINEITEM_SCOPE, SCORE_SCOPE], "lineitems": f"{self.url}/lineitems"}}

    def configuration(self) -> dict:
        """The platform's OpenID configuration (LTI Dynamic Registration 1.0, section 3.4)."""
        at = self.endpoints or self.url
        return {
            "issuer": self.issuer or self.url,
            "authorization_endpoint": f"{at}/auth",
            "token_endpoint": f"{at}/token",
            "token_endpoint_auth_methods_supported": ["private_key_jwt"],
            "token_endpoint_auth_signing_alg_values_supported": ["RS256"],
            "jwks_uri": f"{at}/jwks",
            "registration_endpoint": f"{at}/register",
            "scopes_supported": ["openid", NRPS_SCOPE, "https://purl.imsglobal.org/spec/lti-ags/scope/score"],
            "response_types_supported": ["id_token"],
            "subject_types_supported": ["public", "pairwise"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "claims_supported": ["iss", "sub", "name", "email"],
            "https://purl.imsglobal.org/spec/lti-platform-configuration": {
                "product_family_code": "grader-tests", "version": "1.0",
                "messages_supported": [{"type": "LtiResourceLinkRequest"}, {"type": "LtiDeepLinkingRequest"}],
            },
        }  # fmt: skip

    def register(self, headers, body: str) -> tuple[int, str]:
        """The registration endpoint: the tool's registration taken with the registration token."""
        if headers.get("authorization") != f"Bearer {self.registration_token}":
            return 401, '{"error": "invalid registration token"}'
        asked = json.loads(body)
        self.registered.append({"content_type": headers.get("content-type"), "json": asked})
        tool = asked[TOOL_CONFIG]
        return 200, json.dumps({**asked, "client_id": CLIENT_ID, TOOL_CONFIG: {**tool, "deployment_id": DEPLOYMENT}})

    def memberships(self, url, headers) -> tuple[int, str, list[str]]:
        """The NRPS memberships URL: the roster page by page (``Link: <...>; rel="next"``), the
        last page giving the differences URL; that URL lists the members changed since."""
        token = headers.get("authorization", "").removeprefix("Bearer ")
        if self.scopes.get(token) != NRPS_SCOPE:
            return 401, '{"error": "no token of the membership scope"}', []
        if headers.get("accept") != MEMBERSHIPS:
            return 406, '{"error": "not the membership list media type"}', []
        self.roster_reads.append(url.path + ("?" + url.query if url.query else ""))
        context = {"id": "course-1", "label": "GS", "title": "Game search"}
        differences = f'<{self.url}/memberships/differences?since={len(self.roster_reads)}>; rel="differences"'
        if url.path.endswith("/differences"):
            listed, self.changes = self.changes, []
            return 200, json.dumps({"id": self.url + url.path, "context": context, "members": listed}), [differences]
        page = int(dict(urllib.parse.parse_qsl(url.query)).get("page", "1"))
        listed = self.members[(page - 1) * self.page_size : page * self.page_size]
        more = page * self.page_size < len(self.members)
        links = [f'</memberships?page={page + 1}>; rel="next"'] if more else [differences]  # a relative one too
        return 200, json.dumps({"id": f"{self.url}/memberships", "context": context, "members": listed}), links

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def launch(client: Client, platform: Platform, claims: dict, **signing) -> httpx.Response:
    """The browser's part of a launch: the tool's login initiation, the platform's authorization
    page, its form posted to the tool (the tool's answer, redirects not followed)."""
    hint = secrets.token_hex(6)
    platform.messages[hint] = {"claims": claims, **signing}
    r = client.http.get("/lti/login", params={"iss": platform.url, "login_hint": claims["sub"],
                                              "target_link_uri": client.url + "/lti/launch",
                                              "lti_message_hint": hint, "client_id": CLIENT_ID})  # fmt: skip
    assert r.status_code == 302, r.text
    form = httpx.get(r.headers["location"]).text
    fields = dict(re.findall(r'name="(\w+)" value="([^"]*)"', form))
    action = html.unescape(re.search(r'action="([^"]+)"', form).group(1))
    return post_launch(client, action, fields)


def login(client: Client, platform: Platform, sub: str, **headers) -> tuple[httpx.Response, str, dict]:
    """A login begun by ``client``: the tool's answer, and the platform's form (its action and fields)."""
    hint = secrets.token_hex(6)
    platform.messages[hint] = {"claims": platform.claims(sub, "Learner")}
    r = client.http.get("/lti/login", params={"iss": platform.url, "login_hint": sub, "lti_message_hint": hint},
                        headers=headers)  # fmt: skip
    form = httpx.get(r.headers["location"]).text
    fields = dict(re.findall(r'name="(\w+)" value="([^"]*)"', form))
    return r, html.unescape(re.search(r'action="([^"]+)"', form).group(1)), fields


def post_launch(client: Client, action: str, fields: dict) -> httpx.Response:
    return client.http.post(action, data=fields, headers={"Accept": "text/html"})


STAFF = ("t-1", "t-2", "t-9")  # the platform users the tests launch as instructors


def add_to_roster(course: Path, rows: list[tuple[str, str, str]]) -> None:
    """The demo course's roster with a Role column and ``rows`` (e-mail, name, role) added."""
    lines = (course / "roster.csv").read_text().splitlines()
    text = lines[0] + ",Role\n" + "".join(f"{line},student\n" for line in lines[1:] if line)
    (course / "roster.csv").write_text(text + "".join(f"{e},{n},{r}\n" for e, n, r in rows))


@pytest.fixture(scope="module")
def tool(tmp_path_factory):
    """A test platform whose e-mails the course trusts (as a Canvas whose addresses the school
    sets), and the portal registered on it; its instructors on the roster."""
    tmp = tmp_path_factory.mktemp("lti")
    platform = Platform()
    course = make_demo_course(tmp / "course")
    (course / "course.yaml").write_text((course / "course.yaml").read_text() + platform.registration(True))
    add_to_roster(course, [(f"{t}@platform.example", f"Teacher {t}", "instructor") for t in STAFF])
    server = Server(course, tmp)
    platform.tool_jwks = server.url + "/lti/jwks"
    yield {"platform": platform, "server": server}
    server.stop()
    platform.stop()


def _wait(what, seconds: float = WITHIN):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = what()
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError("not within the time allowed")


@pytest.mark.slow
def test_a_launch_signs_a_student_in_and_their_score_reaches_the_platform(tool):
    platform, server = tool["platform"], tool["server"]
    teacher = Client(server.url)
    assert launch(teacher, platform, platform.claims("t-1", "Instructor")).status_code == 303
    student = Client(server.url)
    r = launch(student, platform, platform.claims("s-1", "Learner", name="Ada Lovelace"))
    assert (r.status_code, r.headers["location"]) == (303, "/a/tictactoe")
    me = student.get("/").json()["user"]
    assert (me["name"], me["email"], me["role"]) == ("Ada Lovelace", "s-1@platform.example", "student")
    platform.fail_scores = 1  # the first score post fails: it is retried, and the try recorded
    sid = student.upload(MINIMAX, name="minimax.py", assignment="tictactoe").json()["id"]
    assert student.graded(sid)["status"] == "graded"
    first = _wait(lambda: platform.scores)[0]
    assert first["lineitem"] == "7"
    assert first["score"]["userId"] == "s-1" and first["score"]["gradingProgress"] == "PendingManual"
    assert "scoreGiven" not in first["score"]  # the private results are not out: no score to show yet
    teacher.get("/class")
    graded = teacher.get(f"/s/{sid}").json()
    assert teacher.post("/class/release", {"assignment": "tictactoe"}).status_code == 200
    final = _wait(lambda: platform.scores[1:])[0]["score"]
    assert (final["scoreGiven"], final["scoreMaximum"], final["gradingProgress"]) == (
        graded["total"], graded["max_total"], "FullyGraded")  # fmt: skip
    assert platform.tokens[0]["scope"] == "https://purl.imsglobal.org/spec/lti-ags/scope/score"
    sent = teacher.get("/class/lti").json()["scores"]
    assert [(s["reason"], s["status"]) for s in sent] == [("release", "sent"), ("graded", "sent")]
    assert sent[1]["attempts"] == 2 and "500" in sent[1]["error"]
    assert student.get("/class/lti").status_code == 404  # staff only


@pytest.mark.slow
def test_scores_graded_by_a_remote_worker_reach_the_platform_after_a_rerun_and_a_release(tmp_path):
    """grader serve --workers 0 and a grader worker process grading: the worker records and
    sends the score of each grading (the first, and the rerun's), the server the release's."""
    from test_portal_workers import Worker

    platform = Platform()
    course = make_demo_course(tmp_path / "course")
    (course / "course.yaml").write_text((course / "course.yaml").read_text() + platform.registration(True))
    server = Server(course, tmp_path, None, "--workers", "0")
    platform.tool_jwks = server.url + "/lti/jwks"
    worker = Worker(course, f"sqlite:///{course / '.portal' / 'portal.sqlite3'}")
    try:
        teacher = Client(server.url)
        teacher.sign_in(server.link)
        student = Client(server.url)
        assert launch(student, platform, platform.claims("s-7", "Learner")).status_code == 303
        student.get("/")  # the session's CSRF token
        sid = student.upload(MINIMAX, name="minimax.py", assignment="tictactoe").json()["id"]
        assert student.graded(sid)["status"] == "graded"
        first = _wait(lambda: platform.scores)[0]["score"]
        assert first["userId"] == "s-7" and first["gradingProgress"] == "PendingManual"
        r = teacher.post("/class/rerun", {"assignment": "tictactoe", "email": "s-7@platform.example"})
        assert r.json()["rerun"][0]["submission"] == sid
        again = _wait(lambda: platform.scores[1:])[0]["score"]
        assert again["userId"] == "s-7" and again["gradingProgress"] == "PendingManual"
        assert teacher.post("/class/release", {"assignment": "tictactoe"}).status_code == 200
        final = _wait(lambda: platform.scores[2:])[0]["score"]
        graded = teacher.get(f"/s/{sid}").json()
        assert (final["scoreGiven"], final["gradingProgress"]) == (graded["total"], "FullyGraded")
        sent = teacher.get("/class/lti").json()["scores"]
        assert [(x["reason"], x["status"]) for x in sent] == [("release", "sent"), ("graded", "sent"),
                                                            ("graded", "sent")]  # fmt: skip
    finally:
        worker.stop()
        server.stop()
        platform.stop()


@pytest.mark.slow
def test_the_score_sent_is_the_gradebooks_after_the_late_policy_and_follows_an_extension_and_a_sync(tmp_path):
    """A late upload's score reaches the platform as the class table gives it (the penalty
    taken, a comment saying why); an extension, then its withdrawal, then a course synced with
    a heavier penalty each send the score as it is now, and nothing is sent twice."""
    platform = Platform()
    course = make_demo_course(tmp_path / "course")
    late = (dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=1, hours=12)).strftime("%Y-%m-%d %H:%M")
    lab = "    plan: tictactoe.plan\n"
    yaml = (course / "course.yaml").read_text().replace(lab, lab + f"    deadline: {late}\n    late_penalty: 10%\n", 1)
    (course / "course.yaml").write_text(yaml + platform.registration(True))
    server = Server(course, tmp_path)
    platform.tool_jwks = server.url + "/lti/jwks"
    try:
        teacher = Client(server.url)
        teacher.sign_in(server.link)
        student = Client(server.url)
        assert launch(student, platform, platform.claims("s-3", "Learner")).status_code == 303
        student.get("/")
        sid = student.upload(MINIMAX, name="minimax.py", assignment="tictactoe").json()["id"]
        assert student.graded(sid)["status"] == "graded"
        assert "scoreGiven" not in _wait(lambda: platform.scores)[0]["score"]

        def gradebook() -> dict:
            (me,) = [s for s in teacher.get("/class").json()["students"] if s["email"] == "s-3@platform.example"]
            return me["assignments"]["tictactoe"]

        def sent(n: int) -> dict:
            return _wait(lambda: platform.scores[n - 1 :])[0]["score"]

        assert teacher.post("/class/release", {"assignment": "tictactoe"}).status_code == 200
        penalized = gradebook()
        assert penalized["penalty"] > 0 and penalized["score"] < penalized["total"]
        score = sent(2)
        assert (score["scoreGiven"], score["gradingProgress"]) == (penalized["score"], "FullyGraded")
        assert "late" in score["comment"] and f"{penalized['penalty']:.0%} penalty" in score["comment"]
        email = "s-3@platform.example"
        teacher.post("/class/extension", {"assignment": "tictactoe", "email": email, "days": "3"})
        score = sent(3)
        assert score["scoreGiven"] == gradebook()["score"] == penalized["total"]
        assert "extended by 3 days" in score["comment"]
        teacher.post("/class/extension", {"assignment": "tictactoe", "email": email, "days": "0"})
        assert sent(4)["scoreGiven"] == penalized["score"]
        (course / "course.yaml").write_text(
            (course / "course.yaml").read_text().replace("late_penalty: 10%", "late_penalty: 30%")
        )
        sync(course, default_url(course))
        heavier = _wait(lambda: (row := gradebook())["score"] < penalized["score"] and row)
        assert sent(5)["scoreGiven"] == heavier["score"]
        time.sleep(2)  # a sender that sent a score twice would have by now
        assert len(platform.scores) == 5
        reasons = [s["reason"] for s in teacher.get("/class/lti").json()["scores"]]
        assert reasons == ["policy", "policy", "policy", "release", "graded"]
    finally:
        server.stop()
        platform.stop()


def test_deep_linking_returns_a_signed_response_for_the_assignment_picked(tool):
    platform, server = tool["platform"], tool["server"]
    teacher = Client(server.url)
    r = launch(teacher, platform, platform.claims("t-2", "Instructor", kind="LtiDeepLinkingRequest"))
    assert (r.status_code, r.headers["location"]) == (303, "/lti/pick")
    assert set(teacher.get("/lti/pick").json()["assignments"]) == {"othello", "tictactoe", "gomoku"}
    page = teacher.http.post("/lti/pick", data={"assignment": "othello", "csrf": teacher.csrf},
                             headers={"Accept": "text/html"})  # fmt: skip
    assert page.status_code == 200
    assert f'action="{platform.url}/deep-link-return"' in page.text
    assert f"form-action 'self' {platform.url}" in page.headers["content-security-policy"]
    token = re.search(r'name="JWT" value="([^"]+)"', page.text).group(1)
    keys = jwt.PyJWKClient(server.url + "/lti/jwks")
    claims = jwt.decode(token, keys.get_signing_key_from_jwt(token).key, algorithms=["RS256"], audience=platform.url,
                        issuer=CLIENT_ID)  # fmt: skip
    assert claims[LTI + "message_type"] == "LtiDeepLinkingResponse" and claims[LTI + "version"] == "1.3.0"
    assert claims[LTI + "deployment_id"] == DEPLOYMENT and claims[DL + "data"] == "opaque-42"
    (item,) = claims[DL + "content_items"]
    assert item["type"] == "ltiResourceLink" and item["custom"] == {"assignment": "othello"}
    assert item["url"] == server.url + "/lti/launch" and item["lineItem"]["scoreMaximum"] == 10
    assert 'href="/class/lti"' in teacher.html("/class").text  # the scores sent, for staff


@pytest.mark.parametrize(
    "roles, role",
    [
        ([ROLE + "Learner"], "student"),
        ([ROLE + "Instructor"], "instructor"),
        (["http://purl.imsglobal.org/vocab/lis/v2/membership/Instructor#TeachingAssistant", ROLE + "Instructor"], "ta"),
        (["http://purl.imsglobal.org/vocab/lis/v2/institution/person#Instructor"], "student"),  # not the course's role
        ([], "student"),
    ],
)
def test_a_launchs_roles_give_the_portals_role(roles, role):
    assert role_of(roles) == role


@pytest.mark.parametrize(
    "lti, says",
    [
        ("lti: {platforms: []}", "'lti.platforms' must be a list of registrations"),
        ("lti: {platforms: [{issuer: https://canvas.instructure.com}]}", "give client_id, deployment_ids"),
        ("lti: {url: ftp://x, platforms: []}", "'lti.url' must be an https:// address"),
        ("lti: {secret: 1}", "unknown key 'lti.secret'"),
        ("lti: {roster_sync_minutes: -5}", "'lti.roster_sync_minutes' must be a whole number of minutes"),
        (
            "lti: {platforms: [{issuer: i, client_id: c, deployment_ids: [d], auth_login_url: https://a, token_url: "
            "https://a, jwks_url: https://a, trust_emails: 'yes'}]}",
            "'lti.platforms[0].trust_emails' must be true or false",
        ),
    ],
)
def test_a_bad_registration_is_refused_in_one_line(tmp_path, lti, says):
    course = make_demo_course(tmp_path / "course")
    (course / "course.yaml").write_text((course / "course.yaml").read_text() + lti + "\n")
    with pytest.raises(ConfigError, match=re.escape(says)):
        load_course(course)
    result = CliRunner().invoke(main, ["serve", str(course)])
    assert result.exit_code == 1
    (line,) = result.output.strip().splitlines()
    assert line.startswith("Error: ") and "course.yaml: " in line and says in line


def test_rotating_the_key_of_a_course_without_lti_is_one_line(tmp_path):
    course = make_demo_course(tmp_path / "course")
    result = CliRunner().invoke(main, ["serve", str(course), "--rotate-lti-key"])
    assert result.exit_code == 1
    assert (
        result.output
        == f"Error: {course.resolve() / 'course.yaml'}: no 'lti:' key: the course is no LTI tool, it has no key\n"
    )


def test_rotating_the_tools_key_keeps_the_old_one_in_its_jwks(tmp_path):
    engine = connect(f"sqlite:///{tmp_path / 'portal.sqlite3'}")
    upgrade(engine)
    make = sessions(engine)
    with make.begin() as session:
        first = lti_keys.signing_key(session)
        assert lti_keys.signing_key(session) == first  # made once, then kept
    with make.begin() as session:
        second = lti_keys.rotate(session)
        assert lti_keys.signing_key(session) == second != first
        assert [k["kid"] for k in lti_keys.jwks(session)["keys"]] == [second.kid, first.kid]
    engine.dispose()


@pytest.mark.slow
def test_a_score_the_platform_never_takes_ends_failed_for_staff_and_the_grade_stays(database, tmp_path):
    """On SQLite and PostgreSQL: a platform that cannot be reached gets MAX_ATTEMPTS tries, each
    counted, then the score is marked failed with the error; the submission keeps its grade,
    and sending it again records a new score to send."""
    gone = socket.socket()
    gone.bind(("127.0.0.1", 0))
    port = gone.getsockname()[1]
    gone.close()  # nothing listens there: every try is refused
    where = f"http://127.0.0.1:{port}"
    folder = make_demo_course(tmp_path / "course")
    (folder / "course.yaml").write_text((folder / "course.yaml").read_text() + (
        f"lti:\n  platforms:\n    - {{issuer: {where}, client_id: c, deployment_ids: [d], auth_login_url: {where}/auth,"
        f" token_url: {where}/token, jwks_url: {where}/jwks}}\n"))  # fmt: skip
    engine = connect(database)
    upgrade(engine)
    make = sessions(engine)
    with make.begin() as s:
        student = User(email="s@example.edu", name="S", role=STUDENT)
        s.add(student)
        s.flush()
        s.add(LtiIdentity(issuer=where, sub="s-1", user_id=student.id))
        s.add(LtiLink(issuer=where, client_id="c", resource_link_id="l", assignment="tictactoe",
                      lineitem=f"{where}/lineitems/1"))  # fmt: skip
        s.add(Submission(id="a" * 32, user_id=student.id, assignment="tictactoe", filename="lab.py", size=1,
                         sha256="0" * 64, content=b"x", status=GRADED, total=3.0, max_total=9))  # fmt: skip
    grades = GradeSync(load_course(folder), make)
    try:
        assert grades.graded("a" * 32) == 1

        def failed():
            with make.begin() as s:  # no waiting out the back-off: each retry is made due at once
                s.execute(update(LtiScore).where(LtiScore.status == "pending").values(next_at=now()))
                found = s.scalars(select(LtiScore)).all()
            grades.wake.set()
            return found if found[0].status == "failed" else None

        (score,) = _wait(failed, 60)
        assert score.attempts == MAX_ATTEMPTS and f"cannot reach {where}/token" in score.last_error
        assert score.score_given is None and score.score_maximum == 9  # graded, the private results not out
        with make() as s:
            sub = s.get(Submission, "a" * 32)
            assert (sub.status, sub.total) == (GRADED, 3.0)
        assert grades.again(score.id)
        with make() as s:
            again = s.scalars(select(LtiScore).order_by(LtiScore.id)).all()[1]
            assert (again.reason, again.status) == ("again", "pending")  # tried again with back-off, until failed
    finally:
        grades.stop()
        engine.dispose()


@pytest.mark.slow
def test_a_launch_giving_only_the_line_items_container_gets_one_line_item_made_and_its_scores_sent_there(tmp_path):
    """A launch with ``lineitems`` and no ``lineitem`` (a Moodle link with grade sync and column
    management): the first score finds no line item of the assignment in the container, so the
    tool creates one (the assignment's title and maximum, its name as resourceId, the resource
    link, the tool's tag) and sends the score there; the next score goes to the same line item,
    not looked for again. A platform that does not grant the lineitem scope gets no line item
    and no score: the scores page says why."""
    platform, stingy = Platform(), Platform()
    stingy.withheld = {LINEITEM_SCOPE}
    course = make_demo_course(tmp_path / "course")
    yaml = (course / "course.yaml").read_text() + platform.registration(True) + stingy.entry(True)
    (course / "course.yaml").write_text(yaml)
    server = Server(course, tmp_path)
    platform.tool_jwks = stingy.tool_jwks = server.url + "/lti/jwks"
    try:
        teacher = Client(server.url)
        teacher.sign_in(server.link)
        student = Client(server.url)
        assert (
            launch(student, platform, platform.claims("s-1", "Learner", **platform.only_lineitems())).status_code == 303
        )
        student.get("/")
        sid = student.upload(MINIMAX, name="minimax.py", assignment="tictactoe").json()["id"]
        assert student.graded(sid)["status"] == "graded"
        first = _wait(lambda: platform.scores)[0]
        (made,) = platform.made
        assert (made["label"], made["scoreMaximum"], made["resourceId"], made["resourceLinkId"], made["tag"]) == (
            "Tic-tac-toe lab", 100, "tictactoe", "link-1", "grader")  # fmt: skip
        assert made["id"] == f"{platform.url}/lineitems/{first['lineitem']}"
        assert first["score"]["userId"] == "s-1" and first["score"]["gradingProgress"] == "PendingManual"
        assert platform.container_reads == ["resource_id=tictactoe"]  # looked for, not found: made
        assert teacher.post("/class/release", {"assignment": "tictactoe"}).status_code == 200
        second = _wait(lambda: platform.scores[1:])[0]
        assert second["lineitem"] == first["lineitem"] and second["score"]["gradingProgress"] == "FullyGraded"
        assert len(platform.made) == 1 and len(platform.container_reads) == 1  # kept: not looked for again
        other = Client(server.url)
        assert launch(other, stingy, stingy.claims("s-2", "Learner", **stingy.only_lineitems())).status_code == 303
        other.get("/")
        sid = other.upload(MINIMAX, name="minimax.py", assignment="tictactoe").json()["id"]
        assert other.graded(sid)["status"] == "graded"

        def refused() -> list[dict]:
            rows = teacher.get("/class/lti").json()["scores"]
            return [r for r in rows if r["platform"] == stingy.url and r["error"]]

        error = _wait(refused)[0]["error"]
        assert f"did not grant the scope {LINEITEM_SCOPE}" in error and "column management" in error
        page = teacher.html("/class/lti")
        assert page.status_code == 200 and f"did not grant the scope {LINEITEM_SCOPE}" in html.unescape(page.text)
        assert (stingy.made, stingy.container_reads, stingy.scores) == ([], [], [])
    finally:
        server.stop()
        platform.stop()
        stingy.stop()


@pytest.mark.slow
def test_two_senders_at_once_make_one_line_item_and_a_line_item_the_platform_holds_is_found(database, tmp_path):
    """On SQLite and PostgreSQL, two senders (two server processes' threads, each with its own
    engine) sending two students' first scores to a container at once: one line item is made,
    both scores go there. An assignment whose line item the container holds already (made on
    the platform, by its resourceId) gets its scores there, no line item made."""
    platform = Platform()
    platform.slow_create = 1.0  # the first sender is still making it when the second needs it
    container = f"{platform.url}/lineitems"
    platform.lineitems += [  # two of the resourceId, one a page after the other: the resource link's is taken
        {"id": f"{container}/54", "resourceId": "othello", "resourceLinkId": "elsewhere", "scoreMaximum": 10},
        {"id": f"{container}/55", "resourceId": "othello", "resourceLinkId": "link-2", "scoreMaximum": 10},
    ]
    folder = make_demo_course(tmp_path / "course")
    (folder / "course.yaml").write_text((folder / "course.yaml").read_text() + platform.registration())
    engines = [connect(database), connect(database)]
    upgrade(engines[0])
    makes = [sessions(e) for e in engines]
    with makes[0].begin() as s:
        lti_keys.signing_key(s)  # made now: the platform checks the senders' assertions by it
        platform.tool_keys = lti_keys.jwks(s)
        platform.tool_jwks = f"{platform.url}/tool-jwks"
        for link, assignment in (("link-1", "tictactoe"), ("link-2", "othello")):
            s.add(LtiLink(issuer=platform.url, client_id=CLIENT_ID, resource_link_id=link, assignment=assignment,
                          lineitems=container))  # fmt: skip
        for n, assignment in ((1, "tictactoe"), (2, "tictactoe"), (3, "othello")):
            student = User(email=f"s{n}@example.edu", name=f"S{n}", role=STUDENT)
            s.add(student)
            s.flush()
            s.add(LtiIdentity(issuer=platform.url, sub=f"s-{n}", user_id=student.id))
            s.add(Submission(id=str(n) * 32, user_id=student.id, assignment=assignment, filename="lab.py", size=1,
                             sha256="0" * 64, content=b"x", status=GRADED, total=3.0, max_total=9))  # fmt: skip
    senders = [GradeSync(load_course(folder), make) for make in makes]
    try:
        assert senders[0].graded("1" * 32) == 1 and senders[0].graded("2" * 32) == 1
        senders[1].kick()  # the second sender takes the score the first has not
        _wait(lambda: len(platform.scores) >= 2, 90)
        (made,) = platform.made
        assert (made["resourceId"], made["resourceLinkId"]) == ("tictactoe", "link-1")
        assert sorted((x["score"]["userId"], x["lineitem"]) for x in platform.scores) == [
            ("s-1", made["id"].rsplit("/", 1)[1]), ("s-2", made["id"].rsplit("/", 1)[1])]  # fmt: skip
        assert senders[1].graded("3" * 32) == 1
        third = _wait(lambda: platform.scores[2:], 60)[0]
        assert (third["score"]["userId"], third["lineitem"], len(platform.made)) == ("s-3", "55", 1)
        assert platform.container_reads[-2:] == ["resource_id=othello", "resource_id=othello&page=2"]
        with makes[0]() as s:
            rows = s.scalars(select(LtiScore).order_by(LtiScore.id)).all()
            assert [(r.status, r.container) for r in rows] == [("sent", None)] * 3
            assert [r.lineitem for r in rows] == [made["id"], made["id"], f"{container}/55"]
    finally:
        for sender in senders:
            sender.stop()
        for engine in engines:
            engine.dispose()
        platform.stop()


@pytest.mark.slow  # a browser and a server: several seconds
def test_in_a_browser_deep_linking_posts_the_signed_response_back_to_the_platform(tool, chromium):
    """The whole round in Chromium: the login, the platform's form posted to the launch, the
    pick page, and the tool's answer posted back to the platform by its own script (the
    page's Content-Security-Policy lets the form go to the platform, and nowhere else)."""
    platform, server = tool["platform"], tool["server"]
    hint = secrets.token_hex(6)
    platform.messages[hint] = {"claims": platform.claims("t-9", "Instructor", kind="LtiDeepLinkingRequest")}
    page = chromium.new_page()
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)  # a CSP violation too
    page.on("pageerror", lambda e: problems.append(str(e)))
    query = urllib.parse.urlencode({"iss": platform.url, "login_hint": "t-9", "lti_message_hint": hint})
    page.goto(f"{server.url}/lti/login?{query}")
    page.wait_for_url(f"{server.url}/lti/pick")
    page.check("input[value=tictactoe]")
    page.click("#pick")
    page.wait_for_url(f"{platform.url}/deep-link-return")
    assert page.inner_text("#linked") == "Linked"
    (posted,) = platform.returned
    keys = jwt.PyJWKClient(server.url + "/lti/jwks")
    claims = jwt.decode(posted["JWT"], keys.get_signing_key_from_jwt(posted["JWT"]).key, algorithms=["RS256"],
                        audience=platform.url, issuer=CLIENT_ID)  # fmt: skip
    assert claims[DL + "content_items"][0]["custom"] == {"assignment": "tictactoe"}
    assert problems == []


def test_serve_prints_the_tools_urls_and_the_key_its_jwks_serves(tool):
    server = tool["server"]
    line = _wait(lambda: next((x for x in list(server.lines) if x.startswith("LTI 1.3 tool: ")), None), 30)
    (kid,) = [k["kid"] for k in httpx.get(server.url + "/lti/jwks").json()["keys"]]
    assert line.strip() == (f"LTI 1.3 tool: login {server.url}/lti/login, launch {server.url}/lti/launch, "
                            f"JWKS {server.url}/lti/jwks (key {kid})")  # fmt: skip


def member(sub: str, role: str = "Learner", status: str = "Active", **more) -> dict:
    """A member of a platform's roster as NRPS 2.0 lists them."""
    return {"status": status, "name": f"Member {sub}", "given_name": "Member", "family_name": sub,
            "email": f"{sub}@platform.example", "user_id": sub, "roles": [ROLE + role], **more}  # fmt: skip


def roster_of(client: Client) -> dict[str, tuple[str | None, str, str]]:
    """The roster page's members: sub -> (account e-mail, role on the platform, status)."""
    (context,) = client.get("/class/lti/roster").json()["contexts"]
    return {m["sub"]: (m["email"], m["role"], m["status"]) for m in context["members"]}


@pytest.mark.slow
def test_the_instructor_reads_the_roster_page_by_page_then_its_differences(tmp_path):
    """NRPS over HTTP: a launch keeps its course's memberships URL; the instructor's read follows
    the Link headers page by page (new students get accounts, staff on the platform none), the
    next read takes the differences URL the last page gave (a member gone Inactive is dropped,
    a new one added), and a full read drops who is no longer listed: accounts and work kept."""
    platform = Platform()
    course = make_demo_course(tmp_path / "course")
    (course / "course.yaml").write_text((course / "course.yaml").read_text() + platform.registration()
                                        + "  roster_sync_minutes: 0\n")  # fmt: skip
    server = Server(course, tmp_path)
    platform.tool_jwks = server.url + "/lti/jwks"
    try:
        teacher = Client(server.url)
        teacher.sign_in(server.link)
        assert teacher.get("/class/lti/roster").json()["contexts"] == []
        too_long = member("s-" + "9" * 300)  # a user id longer than OpenID Connect allows: skipped
        platform.members = [member("s-20"), member("s-21"), member("s-22"), member("t-30", "Instructor"),
                            member("s-23"), too_long]  # fmt: skip
        student = Client(server.url)
        claims = platform.claims("s-20", "Learner", **platform.service())
        assert launch(student, platform, claims).status_code == 303
        (context,) = teacher.get("/class/lti/roster").json()["contexts"]
        assert (context["title"], context["synced_at"], context["members"]) == ("Game search", None, [])
        read = teacher.post("/class/lti/roster", {"context": str(context["id"])}).json()
        assert (read["members"], read["added"], read["dropped"], read["full"]) == (6, 3, 0, True)  # s-20 launched
        assert platform.roster_reads == ["/memberships", "/memberships?page=2", "/memberships?page=3"]
        host = "127.0.0.1.lti"  # the platform's e-mails are not trusted: addresses of the sub
        assert roster_of(teacher) == {
            **{s: (f"{s}@{host}", "student", "active") for s in ("s-20", "s-21", "s-22", "s-23")},
            "t-30": (None, "instructor", "active"),  # staff on the platform, unknown here: no account
        }
        students = {s["email"]: s for s in teacher.get("/class").json()["students"]}
        assert {f"s-2{i}@{host}" for i in range(4)} <= set(students)
        platform.changes = [member("s-21", status="Inactive"), member("s-24")]
        platform.members[1] = member("s-21", status="Inactive")  # as a full read lists them from now on
        read = teacher.post("/class/lti/roster", {"context": str(context["id"])}).json()
        assert (read["members"], read["added"], read["dropped"], read["full"]) == (2, 1, 1, False)
        assert platform.roster_reads[-1] == "/memberships/differences?since=3"
        now_ = roster_of(teacher)
        assert now_["s-21"][2] == "dropped" and now_["s-24"] == (f"s-24@{host}", "student", "active")
        platform.members = [m for m in platform.members if m["user_id"] != "s-22"]
        read = teacher.post("/class/lti/roster", {"context": str(context["id"]), "full": "1"}).json()
        assert (read["dropped"], read["full"]) == (2, True)  # s-22 gone from the list; s-24 never in it
        after = roster_of(teacher)
        assert [s for s, (_, _, status) in after.items() if status == "dropped"] == ["s-21", "s-22", "s-24"]
        students = {s["email"] for s in teacher.get("/class").json()["students"]}
        assert {f"s-21@{host}", f"s-22@{host}"} <= students  # dropped: their accounts and work kept
        assert {t["scope"] for t in platform.tokens} == {NRPS_SCOPE}
        log = teacher.get("/class/audit").json()
        assert sum("lti-roster" in json.dumps(e) for e in log["entries"]) == 3
        # the student's own launch still finds the account the roster made
        assert launch(Client(server.url), platform, platform.claims("s-23", "Learner")).status_code == 303
        assert roster_of(teacher)["s-23"][0] == f"s-23@{host}"
    finally:
        server.stop()
        platform.stop()


@pytest.mark.slow
def test_the_server_reads_a_new_courses_roster_by_itself(tmp_path):
    """With the default schedule, the first launch from a platform course has the server read
    its roster without anyone asking."""
    platform = Platform()
    course = make_demo_course(tmp_path / "course")
    (course / "course.yaml").write_text((course / "course.yaml").read_text() + platform.registration())
    server = Server(course, tmp_path)
    platform.tool_jwks = server.url + "/lti/jwks"
    try:
        teacher = Client(server.url)
        teacher.sign_in(server.link)
        platform.members = [member("s-40"), member("s-41")]
        claims = platform.claims("s-40", "Learner", **platform.service())
        assert launch(Client(server.url), platform, claims).status_code == 303
        synced = _wait(lambda: teacher.get("/class/lti/roster").json()["contexts"][0]["synced_at"], 60)
        assert synced and set(roster_of(teacher)) == {"s-40", "s-41"}
    finally:
        server.stop()
        platform.stop()


def registration_link(teacher: Client) -> str:
    """A one-time registration link the instructor makes on the registrations page."""
    return teacher.post("/class/lti/registrations", {"action": "link"}).json()["link"]


def register(platform: Platform, link: str, **headers) -> httpx.Response:
    """The LMS opening the registration link with its openid-configuration and registration token."""
    headers.setdefault("accept", "application/json")
    return httpx.get(link, params={"openid_configuration": f"{platform.url}/.well-known/openid-configuration",
                                   "registration_token": platform.registration_token}, headers=headers)  # fmt: skip


@pytest.mark.slow
def test_a_platform_registers_the_tool_dynamically_then_launches_until_revoked(tmp_path):
    """LTI Dynamic Registration over HTTP, with no platform in course.yaml: the instructor's
    one-time link opened by the platform posts the tool's registration (with its token) and
    keeps what comes back; a launch through it works and its score is sent; once revoked,
    launches are refused."""
    platform = Platform()
    course = make_demo_course(tmp_path / "course")
    (course / "course.yaml").write_text((course / "course.yaml").read_text() + "lti:\n  roster_sync_minutes: 0\n")
    server = Server(course, tmp_path)
    platform.tool_jwks = server.url + "/lti/jwks"
    try:
        teacher = Client(server.url)
        teacher.sign_in(server.link)
        link = registration_link(teacher)
        assert link.startswith(server.url + "/lti/register/")
        r = register(platform, link, accept="text/html")
        assert r.status_code == 200 and 'id="registered"' in r.text, r.text
        assert '<script src="/static/lti_close.js" defer></script>' in r.text and "<script>" not in r.text
        assert f"frame-ancestors 'self' {platform.url}" in r.headers["content-security-policy"]
        assert "org.imsglobal.lti.close" in httpx.get(server.url + "/static/lti_close.js").text
        (posted,) = platform.registered
        asked = posted["json"]
        assert posted["content_type"] == "application/json"
        assert asked["redirect_uris"] == [server.url + "/lti/launch"]
        assert asked["initiate_login_uri"] == server.url + "/lti/login"
        assert asked["jwks_uri"] == server.url + "/lti/jwks"
        assert asked["token_endpoint_auth_method"] == "private_key_jwt"
        assert {NRPS_SCOPE, "https://purl.imsglobal.org/spec/lti-ags/scope/score"} <= set(asked["scope"].split())
        tool = asked[TOOL_CONFIG]
        assert (tool["domain"], tool["target_link_uri"]) == ("127.0.0.1", server.url + "/lti/launch")
        assert {m["type"] for m in tool["messages"]} == {"LtiResourceLinkRequest", "LtiDeepLinkingRequest"}
        (kept,) = teacher.get("/class/lti/registrations").json()["registrations"]
        assert (kept["issuer"], kept["client_id"], kept["deployment_id"], kept["revoked_at"]) == (
            platform.url, CLIENT_ID, DEPLOYMENT, None)  # fmt: skip
        again = register(platform, link)
        assert again.status_code == 400 and "used already" in again.json()["error"]
        student = Client(server.url)
        platform.members = [member("s-50"), member("s-51")]
        r = launch(student, platform, platform.claims("s-50", "Learner", **platform.service()))
        assert (r.status_code, r.headers["location"]) == (303, "/a/tictactoe")
        (context,) = teacher.get("/class/lti/roster").json()["contexts"]  # its roster read as course.yaml's
        assert teacher.post("/class/lti/roster", {"context": str(context["id"])}).json()["added"] == 1
        student.get("/")  # the score of a registration's student reaches its gradebook, as course.yaml's would
        sid = student.upload(MINIMAX, name="minimax.py", assignment="tictactoe").json()["id"]
        assert student.graded(sid)["status"] == "graded"
        assert _wait(lambda: platform.scores)[0]["score"]["userId"] == "s-50"
        assert teacher.post(
            "/class/lti/registrations", {"action": "revoke", "registration": str(kept["id"])}
        ).json() == {"revoked": True}
        (kept,) = teacher.get("/class/lti/registrations").json()["registrations"]
        assert kept["revoked_at"] is not None
        hint = secrets.token_hex(6)
        platform.messages[hint] = {"claims": platform.claims("s-50", "Learner")}
        r = Client(server.url).http.get("/lti/login", params={"iss": platform.url, "login_hint": "s-50",
                                                              "lti_message_hint": hint, "client_id": CLIENT_ID})  # fmt: skip
        assert r.status_code == 400 and "its registration was revoked" in html.unescape(r.text)
        log = json.dumps(teacher.get("/class/audit").json()["entries"])
        assert all(action in log for action in ("lti-register-link", "lti-register", "lti-revoke"))
    finally:
        server.stop()
        platform.stop()


def test_a_platform_whose_configuration_names_another_issuer_is_refused(tool):
    """The openid-configuration's issuer must be at the address it was read from (the
    specification's check): another issuer is refused with a page saying so, nothing kept."""
    platform, server = tool["platform"], tool["server"]
    other = Platform()
    other.issuer = "https://lms.example.org"
    teacher = Client(server.url)
    assert launch(teacher, platform, platform.claims("t-1", "Instructor")).status_code == 303  # a rostered instructor
    teacher.get("/")
    try:
        link = registration_link(teacher)
        r = register(other, link)
        assert r.status_code == 400
        assert "names the issuer 'https://lms.example.org', whose domain is not the one it was read from" in (
            r.json()["error"])  # fmt: skip
        assert other.registered == []
        listed = teacher.get("/class/lti/registrations").json()["registrations"]
        assert [r for r in listed if r["issuer"] in (other.url, other.issuer)] == []
    finally:
        other.stop()
    assert platform.url  # the module's platform untouched


def test_a_canvas_like_configuration_with_its_endpoints_on_another_host_registers(tool):
    """Canvas cloud as its source builds it: the openid-configuration URL on the host of its
    issuer (https://canvas.instructure.com), the registration endpoint on the school's Canvas
    host and the authorization, token and JWKS endpoints on sso.canvaslms.com. The issuer's
    domain is the URL's, as the specification asks; the endpoints' hosts are not checked."""
    platform, server = tool["platform"], tool["server"]
    canvas = Platform()
    canvas.endpoints = canvas.url.replace("127.0.0.1", "localhost")  # another host name of the same server
    teacher = Client(server.url)
    assert launch(teacher, platform, platform.claims("t-1", "Instructor")).status_code == 303
    teacher.get("/")
    try:
        r = register(canvas, registration_link(teacher))
        assert r.status_code == 200, r.text
        assert len(canvas.registered) == 1
        (kept,) = [
            k for k in teacher.get("/class/lti/registrations").json()["registrations"] if k["issuer"] == canvas.url
        ]
        assert teacher.post("/class/lti/registrations", {"action": "revoke", "registration": str(kept["id"])}).json()
    finally:
        canvas.stop()


@pytest.mark.slow  # a browser and a server: several seconds
def test_in_a_browser_the_registration_page_framed_by_the_platform_tells_it_to_close(tool, chromium):
    """The LMS frames the registration link; the page the tool answers (its policy letting that
    LMS frame it, its script a static file) posts org.imsglobal.lti.close to the LMS's page."""
    platform, server = tool["platform"], tool["server"]
    other = Platform()  # a platform of its own (the module's is registered in course.yaml)
    other.tool_jwks = server.url + "/lti/jwks"
    teacher = Client(server.url)
    assert launch(teacher, platform, platform.claims("t-1", "Instructor")).status_code == 303
    teacher.get("/")
    try:
        src = registration_link(teacher) + "?" + urllib.parse.urlencode(
            {"openid_configuration": f"{other.url}/.well-known/openid-configuration",
             "registration_token": other.registration_token})  # fmt: skip
        page = chromium.new_page()
        problems: list[str] = []
        page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)  # a CSP violation too
        page.on("pageerror", lambda e: problems.append(str(e)))
        page.goto(f"{other.url}/frame?" + urllib.parse.urlencode({"src": src}))
        page.wait_for_function("document.title === 'closed'")
        assert len(other.registered) == 1 and problems == []
        (kept,) = [
            r for r in teacher.get("/class/lti/registrations").json()["registrations"] if r["issuer"] == other.url
        ]
        assert teacher.post("/class/lti/registrations", {"action": "revoke", "registration": str(kept["id"])}).json()
    finally:
        other.stop()


@pytest.mark.parametrize(
    "header, found",
    [
        ('<https://lms/m?p=2>; rel="next"', {"next": "https://lms/m?p=2"}),
        ('</m?p=2>; rel="next", <https://lms/d?since=9>; rel="differences"',
         {"next": "https://lms/m?p=2", "differences": "https://lms/d?since=9"}),
        ('<https://lms/m?p=3>; rel="last next"; title="x"', {"last": "https://lms/m?p=3", "next": "https://lms/m?p=3"}),
        ("<https://lms/m?p=2>; rel=next", {"next": "https://lms/m?p=2"}),
        ('<https://lms/a,b>; rel="next"', {"next": "https://lms/a,b"}),
        ("", {}),
    ],
)  # fmt: skip
def test_a_link_header_gives_its_urls_by_relation(header, found):
    """RFC 8288 as NRPS platforms send it: several links, several relations in one, relative URLs
    (the line items container's pages are followed by the same reading)."""
    assert links(header, "https://lms/m") == found
