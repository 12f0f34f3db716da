"""The portal as an LTI 1.3 tool against a platform built on ``lti1p3platform``, an independent
published implementation (tests/lti_platform.py), over real HTTP on loopback: the life of a
course (an instructor's deep link placing an assignment, a student's launch into it, the
scores reaching the platform's gradebook through its AGS service, a rerun's replacing the
first, the roster read by NRPS), once with the tool in course.yaml and once registered by LTI
Dynamic Registration alone, then the specification's negative cases, refused as they are with
the suite's own platform (tests/test_portal_lti.py)."""

from __future__ import annotations

import html
import json
import re
import time
from pathlib import Path

import pytest

httpx = pytest.importorskip("httpx", reason="the portal's tests need httpx (pip install -e '.[test]')")
pytest.importorskip("starlette", reason='the portal needs its extra: pip install -e ".[portal]"')
jwt = pytest.importorskip("jwt", reason='the LTI tool needs PyJWT: pip install -e ".[portal]"')
pytest.importorskip("lti1p3platform", reason="the independent platform: pip install -e '.[test]'")
pytestmark = pytest.mark.slow  # a platform and a server of its own per module: the slow set (CI) runs it

from sqlalchemy import select  # noqa: E402

from grader.portal.course.course import make_demo_course  # noqa: E402

from lti_platform import ROLE, LibraryPlatform  # noqa: E402
from portal_server import Client, Server  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
MINIMAX = ROOT / "submissions" / "tictactoe" / "minimax.py"
WITHIN = 120  # seconds: a score is sent within a few once graded
STAFF = "t-1"
NRPS_SCOPE = "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly"


@pytest.fixture(scope="module")
def tool(tmp_path_factory):
    """The platform on the library, the portal registered on it (course.yaml's lti key, the
    platform's e-mails trusted), the platform's instructor on the roster as an instructor."""
    tmp = tmp_path_factory.mktemp("lti-lib")
    platform = LibraryPlatform()
    course = make_demo_course(tmp / "course")
    more = "  roster_sync_minutes: 0\n"  # the roster read when the instructor asks
    (course / "course.yaml").write_text((course / "course.yaml").read_text() + platform.registration() + more)
    roster = (course / "roster.csv").read_text().splitlines()
    rows = [roster[0] + ",Role"] + [f"{line},student" for line in roster[1:] if line]
    (course / "roster.csv").write_text("\n".join(rows + [f"{STAFF}@lib.example,Teacher One,instructor"]) + "\n")
    server = Server(course, tmp)
    platform.connect(server.url)
    yield {"platform": platform, "server": server}
    server.stop()
    platform.stop()


def browse(client: Client, url: str) -> tuple[str, dict[str, str]]:
    """A browser's part of the launch: the tool's login initiation (the platform's URL), the
    platform's authorization page; its auto-posted form's action and fields."""
    r = client.http.get(url)
    assert r.status_code == 302, r.text
    page = httpx.get(r.headers["location"])
    assert page.status_code == 200, page.text
    fields = {k: html.unescape(v) for k, v in re.findall(r'name="(\w+)" value="([^"]*)"', page.text)}
    return html.unescape(re.search(r'action="([^"]+)"', page.text).group(1)), fields


def post(client: Client, action: str, fields: dict[str, str]) -> httpx.Response:
    return client.http.post(action, data=fields, headers={"Accept": "text/html"})


def place(platform: LibraryPlatform, teacher: Client, assignment: str) -> str:
    """An instructor's deep link placing ``assignment``: the resource link the platform made."""
    r = post(teacher, *browse(teacher, platform.deep_link_url(STAFF)))
    assert (r.status_code, r.headers["location"]) == (303, "/lti/pick"), r.text
    teacher.get("/")
    page = teacher.http.post("/lti/pick", data={"assignment": assignment, "csrf": teacher.csrf},
                             headers={"Accept": "text/html"})  # fmt: skip
    assert page.status_code == 200, page.text
    action = html.unescape(re.search(r'action="([^"]+)"[^>]*>\s*<input[^>]+name="JWT"', page.text).group(1))
    token = re.search(r'name="JWT" value="([^"]+)"', page.text).group(1)
    assert action == f"{platform.url}/deep-link-return"
    back = httpx.post(action, data={"JWT": token})  # the page's script posts it: the platform checks it
    assert back.status_code == 200, back.text
    return back.text.split(">")[1].split("<")[0].split()[-1]


def _wait(what, seconds: float = WITHIN):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = what()
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError("not within the time allowed")


@pytest.mark.slow
def test_the_life_of_a_course_through_an_independent_platform(tool):
    platform, server = tool["platform"], tool["server"]
    teacher = Client(server.url)
    link = place(platform, teacher, "tictactoe")
    (items,) = platform.returned  # the content items the library took from the tool's response
    (item,) = items
    assert item["type"] == "ltiResourceLink" and item["custom"] == {"assignment": "tictactoe"}
    (lineitem,) = platform.lineitems.values()
    assert (lineitem["label"], lineitem["resourceId"], lineitem["resourceLinkId"]) == (item["title"], "tictactoe", link)

    student = Client(server.url)
    r = post(student, *browse(student, platform.launch_url("s-1", "Learner", link)))
    assert (r.status_code, r.headers["location"]) == (303, "/a/tictactoe"), r.text
    me = student.get("/").json()["user"]
    assert (me["name"], me["email"], me["role"]) == ("User s-1", "s-1@lib.example", "student")
    assert student.html("/a/tictactoe").status_code == 200

    sid = student.upload(MINIMAX, name="minimax.py", assignment="tictactoe").json()["id"]
    assert student.graded(sid)["status"] == "graded"
    first = _wait(lambda: platform.scores)[0]
    assert first["lineitem"] == lineitem["id"].rsplit("/", 1)[-1]
    assert (first["score"]["userId"], first["score"]["activityProgress"], first["score"]["gradingProgress"]) == (
        "s-1", "Completed", "PendingManual")  # fmt: skip
    assert "scoreGiven" not in first["score"]  # the private results are not out
    assert platform.tokens == ["https://purl.imsglobal.org/spec/lti-ags/scope/score"]  # the library's token

    r = teacher.post("/class/rerun", {"assignment": "tictactoe", "email": "s-1@lib.example"})
    assert r.json()["rerun"][0]["submission"] == sid
    again = _wait(lambda: platform.scores[1:])[0]["score"]
    assert again["timestamp"] > first["score"]["timestamp"]
    assert teacher.post("/class/release", {"assignment": "tictactoe"}).status_code == 200
    final = _wait(lambda: platform.scores[2:])[0]["score"]
    graded = teacher.get(f"/s/{sid}").json()
    assert (final["scoreGiven"], final["scoreMaximum"], final["gradingProgress"]) == (
        graded["total"], graded["max_total"], "FullyGraded")  # fmt: skip
    assert lineitem["scoreMaximum"] == graded["max_total"]
    (result,) = platform.results[first["lineitem"]].values()  # one result a user: the latest replaced the others
    assert result == final
    assert [(x["reason"], x["status"]) for x in teacher.get("/class/lti").json()["scores"]] == [
        ("release", "sent"), ("graded", "sent"), ("graded", "sent")]  # fmt: skip
    assert platform.refused == []


def test_a_deep_link_response_is_what_the_library_accepts(tool):
    """The tool's LtiDeepLinkingResponse, checked by the library (signature by the tool's JWKS,
    message type, content types), and its claims as the specification gives them."""
    platform, server = tool["platform"], tool["server"]
    teacher = Client(server.url)
    before = len(platform.returned)
    link = place(platform, teacher, "othello")
    (item,) = platform.returned[before]
    assert item["custom"] == {"assignment": "othello"} and item["url"] == f"{server.url}/lti/launch"
    assert platform.links[link]["custom"] == {"assignment": "othello"}
    r = post(teacher, *browse(teacher, platform.launch_url(STAFF, "Instructor", link)))
    assert (r.status_code, r.headers["location"]) == (303, "/a/othello")
    assert teacher.get("/").json()["user"]["role"] == "instructor"


def member(sub: str, role: str = "Learner", status: str = "Active", email: str | None = None) -> dict:
    """A member of the platform's roster as NRPS 2.0 lists them."""
    return {"user_id": sub, "roles": [ROLE + role], "status": status, "name": f"Member {sub}",
            "email": email or f"{sub}@lib.example"}  # fmt: skip


def read_now(teacher: Client, full: bool = False) -> None:
    """The instructor's "Read the roster now" (or "Read it in full") button on the roster page,
    its form posted as the browser posts it."""
    page = teacher.html("/class/lti/roster").text
    label = "Read it in full" if full else "Read the roster now"
    form = next(f for f in re.findall(r"<form[^>]*>.*?</form>", page, re.S) if label in f)
    fields = dict(re.findall(r'name="(\w+)" value="([^"]*)"', form))
    r = teacher.http.post(re.search(r'action="([^"]+)"', form).group(1), data=fields, headers={"Accept": "text/html"})
    assert (r.status_code, r.headers.get("location")) == (303, "/class/lti/roster"), r.text


def roster_of(client: Client) -> dict[str, tuple[str | None, str, str]]:
    """The roster page's members: sub -> (account e-mail, role on the platform, status)."""
    (context,) = client.get("/class/lti/roster").json()["contexts"]
    assert context["error"] is None, context["error"]
    return {m["sub"]: (m["email"], m["role"], m["status"]) for m in context["members"]}


def test_the_instructor_reads_the_platforms_roster_page_by_page(tool, placed):
    """NRPS against the library's membership service: the instructor's button reads the
    platform's members a page at a time by the Link headers (the library's own page size), new
    Learners get accounts, a Learner whose e-mail is an instructor's is not given that account,
    staff on the platform are listed and given nothing, and a member gone Inactive is marked
    dropped, their account kept."""
    platform, server = tool["platform"], tool["server"]
    teacher = Client(server.url)
    assert post(teacher, *browse(teacher, platform.launch_url(STAFF, "Instructor", placed))).status_code == 303
    teacher.get("/")
    platform.page_size = 2
    platform.members = [member("r-1"), member("r-2"), member(STAFF, "Instructor"), member("r-3"),
                        member("r-4", email=f"{STAFF}@lib.example"), member("r-5", status="Inactive")]  # fmt: skip
    reads = len(platform.roster_reads)
    read_now(teacher)
    assert platform.roster_reads[reads:] == [
        "/memberships", "/memberships?limit=2&page=2", "/memberships?limit=2&page=3"]  # fmt: skip
    assert roster_of(teacher) == {
        **{s: (f"{s}@lib.example", "student", "active") for s in ("r-1", "r-2", "r-3")},
        STAFF: (f"{STAFF}@lib.example", "instructor", "active"),  # the launch linked them
        "r-4": (None, "student", "active"),  # a Learner never takes a staff account
        "r-5": (None, "student", "dropped"),  # Inactive from the start: no account made
    }
    students = {s["email"]: s for s in teacher.get("/class").json()["students"]}
    assert {f"r-{i}@lib.example" for i in (1, 2, 3)} <= set(students)
    assert "r-5@lib.example" not in students
    (context,) = teacher.get("/class/lti/roster").json()["contexts"]
    accounts = {m["sub"]: m["account_role"] for m in context["members"]}
    assert accounts == {"r-1": "student", "r-2": "student", "r-3": "student", STAFF: "instructor", "r-4": None,
                        "r-5": None}  # fmt: skip  # no Learner is staff; the platform's Instructor is by the roster
    platform.members[3] = member("r-3", status="Inactive")
    read_now(teacher, full=True)
    assert roster_of(teacher)["r-3"] == ("r-3@lib.example", "student", "dropped")
    assert "r-3@lib.example" in {s["email"] for s in teacher.get("/class").json()["students"]}  # work kept
    assert NRPS_SCOPE in platform.tokens
    assert [r for r in platform.refused if r[0] == "/memberships"] == []


def _refused(client: Client, url: str) -> str:
    r = post(client, *browse(client, url))
    assert r.status_code == 401, r.text
    return r.text


@pytest.fixture(scope="module")
def placed(tool):
    return place(tool["platform"], Client(tool["server"].url), "tictactoe")


def test_a_launch_for_another_audience_is_refused(tool, placed):
    platform = tool["platform"]
    said = _refused(Client(tool["server"].url), platform.launch_url("s-2", "Learner", placed, extra={"aud": "x"}))
    assert "meant for another tool" in said


def test_a_replayed_launch_is_refused(tool, placed):
    platform, server = tool["platform"], tool["server"]
    student = Client(server.url)
    action, fields = browse(student, platform.launch_url("s-3", "Learner", placed))
    assert post(student, action, fields).status_code == 303
    again = post(student, action, fields)
    assert again.status_code == 401 and "used already" in again.text


def test_an_expired_launch_is_refused(tool, placed):
    platform = tool["platform"]
    url = platform.launch_url("s-4", "Learner", placed, expiration=-600)
    assert "has expired" in _refused(Client(tool["server"].url), url)


def test_a_launch_from_an_unknown_deployment_is_refused(tool, placed):
    platform = tool["platform"]
    other = platform.other_deployment("deployment-lib-unknown")
    said = _refused(Client(tool["server"].url), platform.launch_url("s-5", "Learner", placed, registration=other))
    assert "'deployment-lib-unknown' is not among the deployment ids registered for" in html.unescape(said)


def test_the_platforms_roster_pages_by_link_headers_for_a_token_the_library_gave():
    """The harness's NRPS membership service, ready for the tool's roster test: a client-credentials
    token the library gives for an assertion signed by the tool's key, then the members a page at a
    time, each next page in the Link header (where the specification puts it)."""
    from cryptography.hazmat.primitives.asymmetric import rsa
    from jwt.algorithms import RSAAlgorithm
    from lti1p3platform.registration import Registration

    from lti_platform import CLIENT_ID, ROLE

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    platform = LibraryPlatform()
    try:
        jwk = {**json.loads(RSAAlgorithm.to_jwk(key.public_key())), "kid": "tool-1", "alg": "RS256"}
        platform.register(
            Registration().set_iss(platform.url).set_client_id(CLIENT_ID).set_tool_key_set({"keys": [jwk]})
        )
        platform.tool = "http://127.0.0.1:9"  # no tool runs: the token is asked for here
        platform.members = [{"user_id": f"s-{i}", "roles": [ROLE + "Learner"], "name": f"S {i}"} for i in range(5)]
        issued = int(time.time())
        assertion = jwt.encode({"iss": CLIENT_ID, "sub": CLIENT_ID, "aud": f"{platform.url}/token", "iat": issued,
                                "exp": issued + 300, "jti": "j-1"}, key, algorithm="RS256", headers={"kid": "tool-1"})  # fmt: skip
        scope = "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly"
        r = httpx.post(f"{platform.url}/token", data={"grant_type": "client_credentials", "scope": scope,
                       "client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
                       "client_assertion": assertion})  # fmt: skip
        assert r.status_code == 200 and r.json()["scope"] == scope
        bearer = {"Authorization": f"Bearer {r.json()['access_token']}"}
        url, seen = f"{platform.memberships_url}?limit=2", []
        while url:
            page = httpx.get(url, headers=bearer)
            assert page.status_code == 200 and page.json()["context"]["id"] == "course-lib"
            seen += [m["user_id"] for m in page.json()["members"]]
            url = page.links.get("next", {}).get("url")
        assert seen == [f"s-{i}" for i in range(5)]
        assert httpx.get(platform.memberships_url, headers={"Authorization": "Bearer x.y.z"}).status_code == 401
    finally:
        platform.stop()


def test_a_platform_whose_token_audience_is_not_its_token_url_gets_it_named(tmp_path):
    """Brightspace gives an OAuth2 audience apart from its token URL: with ``token_audience`` in
    the registration, the tool's client assertion names it, the token is given and the score
    reaches the gradebook (a platform checking the audience refuses the token URL)."""
    from lti1p3platform.registration import Registration

    from grader.portal.course.course import load_course
    from grader.portal.database.db import connect, sessions, upgrade
    from grader.portal.database.lti import LtiIdentity, LtiLink, LtiScore
    from grader.portal.database.models import GRADED, STUDENT, Submission, User
    from grader.portal.lti import keys as lti_keys
    from grader.portal.lti.grades import GradeSync

    from lti_platform import CLIENT_ID

    platform = LibraryPlatform()
    platform.audience = "https://api.lib.example/auth/token"
    folder = make_demo_course(tmp_path / "course")
    (folder / "course.yaml").write_text((folder / "course.yaml").read_text() + platform.registration())
    engine = connect(f"sqlite:///{tmp_path / 'portal.sqlite3'}")
    upgrade(engine)
    make = sessions(engine)
    item = platform.make_lineitem({"label": "Tic-tac-toe", "scoreMaximum": 9})["id"]
    with make.begin() as s:
        lti_keys.signing_key(s)  # made at its first need: here, before the platform is given the tool's keys
        platform.register(Registration().set_iss(platform.url).set_client_id(CLIENT_ID)
                          .set_tool_key_set(lti_keys.jwks(s)))  # fmt: skip
        student = User(email="s@lib.example", name="S", role=STUDENT)
        s.add(student)
        s.flush()
        s.add(LtiIdentity(issuer=platform.url, sub="s-9", user_id=student.id))
        s.add(LtiLink(issuer=platform.url, client_id=CLIENT_ID, resource_link_id="l", assignment="tictactoe",
                      lineitem=item))  # fmt: skip
        s.add(Submission(id="b" * 32, user_id=student.id, assignment="tictactoe", filename="lab.py", size=1,
                         sha256="0" * 64, content=b"x", status=GRADED, total=3.0, max_total=9))  # fmt: skip
    grades = GradeSync(load_course(folder), make)
    try:
        assert grades.graded("b" * 32) == 1

        def sent():
            with make() as s:
                return [x for x in s.scalars(select(LtiScore)).all() if x.status == "sent" or x.last_error]

        (score,) = _wait(sent, 60)
        assert (score.status, score.last_error) == ("sent", None)
        assert [x["score"]["userId"] for x in platform.scores] == ["s-9"]
    finally:
        grades.stop()
        engine.dispose()
        platform.stop()


@pytest.mark.slow
def test_the_life_of_a_course_from_a_pasted_registration_link_to_the_roster(tmp_path):
    """The whole life in order through the independent platform, registered by LTI Dynamic
    Registration alone (course.yaml lists no platform): an instructor's one-time link pasted by
    the platform's administrator (the platform checks the tool's registration as the
    specification requires and answers its client id and deployment); the platform's
    instructor, made staff by a roster row after their first launch (a dynamic registration's
    e-mails are never trusted), places the assignment by deep linking; a student launches and
    uploads; the score reaches the platform's gradebook, first as graded without a number, then
    replaced by the rerun's and the release's; then the roster is read by NRPS."""
    from lti_platform import registration_problem

    platform = LibraryPlatform()
    course = make_demo_course(tmp_path / "course")
    (course / "course.yaml").write_text((course / "course.yaml").read_text() + "lti:\n  roster_sync_minutes: 0\n")
    server = Server(course, tmp_path)
    try:
        owner = Client(server.url)
        owner.sign_in(server.link)
        link = owner.post("/class/lti/registrations", {"action": "link"}).json()["link"]
        pasted = httpx.get(link, params={"openid_configuration": f"{platform.url}/.well-known/openid-configuration",
                                         "registration_token": platform.registration_token},
                           headers={"Accept": "text/html"})  # fmt: skip
        assert pasted.status_code == 200 and 'id="registered"' in pasted.text, pasted.text
        (posted,) = platform.registered
        assert posted["content_type"] == "application/json" and registration_problem(posted["json"]) is None
        made = platform.registration_
        assert made is not None and made.get_oidc_login_url() == f"{server.url}/lti/login"
        (kept,) = owner.get("/class/lti/registrations").json()["registrations"]
        assert (kept["issuer"], kept["client_id"], kept["deployment_id"]) == (
            platform.url, made.get_client_id(), made.get_deployment_id())  # fmt: skip
        assert "platforms" not in (course / "course.yaml").read_text()

        teacher = Client(server.url)  # the platform's instructor: a student's account at their first launch
        platform.links["rl-home"] = {"title": "Course home"}
        r = post(teacher, *browse(teacher, platform.launch_url(STAFF, "Instructor", "rl-home")))
        assert (r.status_code, r.headers["location"]) == (303, "/"), r.text
        staff = f"{STAFF}@127.0.0.1.lti"
        assert (teacher.get("/").json()["user"]["email"], teacher.get("/").json()["user"]["role"]) == (staff, "student")
        rows = f"Email,Name,Role\n{staff},Teacher One,instructor\n".encode()
        r = owner.post(
            "/class/roster", files={"roster": ("staff.csv", rows, "text/csv")}, headers={"Accept": "text/html"}
        )
        assert r.status_code == 200, r.text
        placed = place(platform, teacher, "tictactoe")
        (lineitem,) = platform.lineitems.values()
        assert (lineitem["resourceId"], lineitem["resourceLinkId"]) == ("tictactoe", placed)

        student = Client(server.url)
        r = post(student, *browse(student, platform.launch_url("s-1", "Learner", placed)))
        assert (r.status_code, r.headers["location"]) == (303, "/a/tictactoe"), r.text
        student.get("/")
        sid = student.upload(MINIMAX, name="minimax.py", assignment="tictactoe").json()["id"]
        assert student.graded(sid)["status"] == "graded"
        first = _wait(lambda: platform.scores)[0]
        assert first["lineitem"] == lineitem["id"].rsplit("/", 1)[-1]
        assert (first["score"]["userId"], first["score"]["activityProgress"], first["score"]["gradingProgress"]) == (
            "s-1", "Completed", "PendingManual")  # fmt: skip
        assert "scoreGiven" not in first["score"]
        assert owner.post("/class/rerun", {"assignment": "tictactoe", "email": "s-1@127.0.0.1.lti"}).json()["rerun"]
        again = _wait(lambda: platform.scores[1:])[0]["score"]
        assert again["timestamp"] > first["score"]["timestamp"]
        assert owner.post("/class/release", {"assignment": "tictactoe"}).status_code == 200
        final = _wait(lambda: platform.scores[2:])[0]["score"]
        graded = owner.get(f"/s/{sid}").json()
        assert (final["scoreGiven"], final["scoreMaximum"], final["activityProgress"], final["gradingProgress"]) == (
            graded["total"], graded["max_total"], "Completed", "FullyGraded")  # fmt: skip
        (result,) = platform.results[first["lineitem"]].values()  # the latest replaced the others
        assert result == final

        platform.page_size = 2
        platform.members = [member("s-1"), member("s-6"), member(STAFF, "Instructor"),
                            member("s-7", status="Inactive")]  # fmt: skip
        read_now(owner)
        assert platform.roster_reads == ["/memberships", "/memberships?limit=2&page=2"]
        host = "127.0.0.1.lti"  # a dynamic registration's e-mails are not trusted: addresses of the sub
        assert roster_of(owner) == {
            "s-1": (f"s-1@{host}", "student", "active"),  # the student who launched: their account
            "s-6": (f"s-6@{host}", "student", "active"),  # new: an account made
            STAFF: (staff, "instructor", "active"),
            "s-7": (None, "student", "dropped"),
        }
        assert f"s-6@{host}" in {s["email"] for s in owner.get("/class").json()["students"]}
        assert set(platform.tokens) == {"https://purl.imsglobal.org/spec/lti-ags/scope/score", NRPS_SCOPE}
        assert platform.refused == []
    finally:
        server.stop()
        platform.stop()


@pytest.mark.parametrize(
    "change, says",
    [
        ({"grant_types": ["implicit"]}, "grant_types must hold ['client_credentials', 'implicit']"),
        ({"token_endpoint_auth_method": "client_secret_basic"}, "token_endpoint_auth_method must be 'private_key_jwt'"),
        ({"redirect_uris": ["https://elsewhere.example/lti/launch"]}, "redirect_uris[0] is not of the tool's domain"),
        ({"https://purl.imsglobal.org/spec/lti-tool-configuration": {}}, "claim with its domain is required"),
        ({}, None),
    ],
)
def test_the_platform_takes_the_tools_registration_only_as_the_specification_gives_it(change, says):
    """The harness's registration endpoint checks what the tool posts (the tool's own
    registration JSON, then that JSON spoiled one way at a time): a registration lacking what
    LTI Dynamic Registration requires is refused with the OpenID error; the tool's is taken and
    answered with its client id and deployment."""
    from grader.portal.lti.registration import TOOL_CONFIGURATION, tool_registration

    platform = LibraryPlatform()
    try:
        asked = {**tool_registration("http://127.0.0.1:9", "Game search"), **change}
        bearer = {"Authorization": f"Bearer {platform.registration_token}"}
        assert httpx.post(f"{platform.url}/register", json=asked).status_code == 401  # no registration token
        r = httpx.post(f"{platform.url}/register", json=asked, headers=bearer)
        if says is None:
            assert r.status_code == 201 and r.json()["client_id"] == "grader-dyn-1"
            assert r.json()[TOOL_CONFIGURATION]["deployment_id"] == "deployment-dyn-1"
        else:
            assert r.status_code == 400 and r.json()["error"] == "invalid_client_metadata"
            assert says in r.json()["error_description"] and platform.registered == []
    finally:
        platform.stop()
