"""An LMS's launch as a way in, against test_portal_lti's platform (its own key, JWKS and
authorization endpoint over real HTTP): launches forged, replayed or carried to another
browser; and launches correctly signed by the platform whose user set the instructor's
e-mail (Moodle lets users set their own), or a rostered student's. An identity is the
platform's ``iss`` and ``sub``: an e-mail links a launch to a portal account only where
course.yaml trusts the platform's e-mails, only for an account no launch linked yet, and
never with a role above what both the launch and the roster give."""

from __future__ import annotations

import html

import pytest

pytestmark = pytest.mark.xdist_group(__name__)  # one worker: the module's fixture runs once

httpx = pytest.importorskip("httpx", reason="the portal's tests need httpx (pip install -e '.[test]')")
pytest.importorskip("jwt", reason='the LTI tool needs PyJWT: pip install -e ".[portal]"')

from grader.portal.course.course import DEMO_INSTRUCTOR, DEMO_STUDENTS, make_demo_course  # noqa: E402

from portal_server import Client, Server  # noqa: E402
from test_portal_lti import LTI, ROLE, Platform, _key, _wait, add_to_roster, launch, login, member, post_launch  # noqa: E402

TA = "ta@example.edu"


@pytest.fixture(scope="module")
def lms(tmp_path_factory):
    """The demo course (its instructor in course.yaml, three rostered students and a TA) as a
    tool of two platforms: one whose e-mails course.yaml trusts, one it does not (the default)."""
    tmp = tmp_path_factory.mktemp("lti-attacks")
    trusted, untrusted = Platform(), Platform()
    course = make_demo_course(tmp / "course")
    registrations = "lti:\n  platforms:\n" + trusted.entry(trust_emails=True) + untrusted.entry()
    (course / "course.yaml").write_text((course / "course.yaml").read_text() + registrations)
    add_to_roster(course, [(TA, "Tess Assistant", "ta")])
    server = Server(course, tmp)
    instructor = Client(server.url)
    instructor.sign_in(server.link)
    yield {"trusted": trusted, "untrusted": untrusted, "server": server, "instructor": instructor}
    server.stop()
    trusted.stop()
    untrusted.stop()


def me(client: Client) -> dict | None:
    """The signed-in user as the portal shows them (None: signed in as nobody)."""
    r = client.get("/")
    return r.json()["user"] if r.status_code == 200 else None


def names(lms) -> dict[str, str]:
    """Each student's name on the class page, by e-mail."""
    return {s["email"]: s["name"] for s in lms["instructor"].get("/class").json()["students"]}


def test_a_learner_launch_with_the_instructors_email_is_a_new_student(lms):
    """The attack as it got in: role Learner, a new ``sub``, ``email=`` the instructor's, on a
    platform whose e-mails course.yaml does not trust: a new student's account, never the instructor."""
    platform, mallory = lms["untrusted"], Client(lms["server"].url)
    claims = platform.claims("mallory-1", "Learner", email=DEMO_INSTRUCTOR, name="Instructor")
    assert launch(mallory, platform, claims).status_code == 303
    who = me(mallory)
    assert who is not None and who["role"] == "student" and who["email"] != DEMO_INSTRUCTOR
    assert mallory.get("/class").status_code == 404  # no staff page
    assert me(lms["instructor"])["email"] == DEMO_INSTRUCTOR  # the instructor's own session is theirs still


def test_on_a_platform_whose_emails_are_trusted_a_learner_launch_is_never_staff(lms):
    """With ``trust_emails: true`` the instructor's e-mail finds their account, but a Learner
    launch never signs in as staff: refused, nothing linked; the instructor's own launch links
    it then, and another platform user saying the same e-mail is refused (linked once only)."""
    platform, server = lms["trusted"], lms["server"]
    mallory = Client(server.url)
    r = launch(mallory, platform, platform.claims("mallory-2", "Learner", email=DEMO_INSTRUCTOR))
    assert r.status_code == 401 and "a launch never signs in with more than it gives" in html.unescape(r.text)
    assert me(mallory) is None
    ta = Client(server.url)  # a rostered TA is no instructor whatever the launch says
    assert launch(ta, platform, platform.claims("tess", "Instructor", email=TA)).status_code == 303
    assert (me(ta)["email"], me(ta)["role"]) == (TA, "ta")
    teacher = Client(server.url)
    assert launch(teacher, platform, platform.claims("teacher", "Instructor", email=DEMO_INSTRUCTOR)).status_code == 303
    assert (me(teacher)["email"], me(teacher)["role"]) == (DEMO_INSTRUCTOR, "instructor")
    again = launch(Client(server.url), platform, platform.claims("mallory-3", "Instructor", email=DEMO_INSTRUCTOR))
    assert again.status_code == 401 and "linked to another user of a platform already" in html.unescape(again.text)


def test_a_launch_never_rewrites_a_rostered_students_name_or_raises_their_role(lms):
    """A rostered student's e-mail in a launch: on the untrusted platform a new account of its
    own; on the trusted one their account, their name and role as the roster gave them,
    though the launch names them otherwise and says Instructor."""
    (ada, ada_name), (alan, alan_name) = DEMO_STUDENTS[0], DEMO_STUDENTS[1]
    server = lms["server"]
    mallory = Client(server.url)
    claims = lms["untrusted"].claims("mallory-4", "Learner", email=alan, name="Mallory")
    assert launch(mallory, lms["untrusted"], claims).status_code == 303
    assert me(mallory)["email"] != alan
    student = Client(server.url)
    claims = lms["trusted"].claims("ada-1", "Instructor", email=ada, name="Ada L. (Admin)")
    assert launch(student, lms["trusted"], claims).status_code == 303
    assert (me(student)["email"], me(student)["name"], me(student)["role"]) == (ada, ada_name, "student")
    assert student.get("/class").status_code == 404
    shown = names(lms)
    assert (shown[ada], shown[alan]) == (ada_name, alan_name)


def test_an_instructor_launch_of_someone_off_the_roster_is_a_student(lms):
    """A platform user the roster and course.yaml do not name (a teacher of another course on
    the same LMS, say) gets no more than a student's account, whatever role the launch gives."""
    for platform, sub in ((lms["untrusted"], "outsider-1"), (lms["trusted"], "outsider-2")):
        outsider = Client(lms["server"].url)
        assert launch(outsider, platform, platform.claims(sub, "Instructor")).status_code == 303
        assert me(outsider)["role"] == "student"
        assert outsider.get("/class").status_code == 404


def test_a_launch_made_accounts_name_is_shown_without_invisible_characters(lms):
    """The platform names its user with a right-to-left override and a zero-width space: the
    account the launch makes is named without them, in the user's pages and the staff's."""
    platform, student = lms["untrusted"], Client(lms["server"].url)
    claims = platform.claims("named-1", "Learner", name="Eve\u202enilam\u200b")
    assert launch(student, platform, claims).status_code == 303
    assert me(student)["name"] == "Evenilam"
    page = html.unescape(lms["instructor"].html("/class").text)
    assert "Evenilam" in page and "\u202e" not in page and "\u200b" not in page


def _refused(tool, **signing) -> httpx.Response:
    platform, server = tool["platform"], tool["server"]
    return launch(Client(server.url), platform, platform.claims("s-9", "Learner"), **signing)


@pytest.mark.parametrize(
    "signing, says",
    [
        ({"key": _key()}, "signature does not verify"),  # forged: another key under the platform's kid
        ({"shift": -1000}, "has expired"),
        ({"aud": "another-tool"}, "meant for another tool"),
        ({"key": _key(), "kid": "nobody-knows"}, "kid 'nobody-knows'"),
        ({"nonce": "not-the-one"}, "nonce is not the one issued with its state"),
        ({"extra": {"iss": "https://elsewhere.example"}}, "issuer is not"),
        ({"extra": {LTI + "deployment_id": "9:other"}}, "deployment '9:other' is not among"),
        ({"extra": {LTI + "version": "1.1"}}, "LTI version '1.1' is not 1.3.0"),
        ({"extra": {LTI + "message_type": "LtiSubmissionReviewRequest"}}, "message type 'LtiSubmissionReviewRequest'"),
        ({"extra": {"azp": "someone-else"}}, "authorized party (azp)"),
        ({"extra": {"sub": "x" * 300}}, "sub has 300 characters, where OpenID Connect allows 1 to 255"),
    ],
    ids=[
        "forged",
        "expired",
        "wrong-audience",
        "unknown-kid",
        "wrong-nonce",
        "wrong-issuer",
        "wrong-deployment",
        "wrong-version",
        "wrong-message-type",
        "wrong-azp",
        "sub-too-long",
    ],
)
def test_a_bad_launch_is_refused_with_a_clear_page(tool, signing, says):
    r = _refused(tool, **signing)
    assert r.status_code == 401
    shown = html.unescape(r.text)
    assert "LTI launch refused" in shown and says in shown
    assert "Traceback" not in r.text


def test_a_replayed_launch_is_refused(tool):
    platform, server = tool["platform"], tool["server"]
    client = Client(server.url)
    _, action, fields = login(client, platform, "s-2")
    assert post_launch(client, action, fields).status_code == 303
    again = post_launch(client, action, fields)
    assert again.status_code == 401 and "used already" in html.unescape(again.text)


def test_a_launch_is_refused_in_another_browser_than_its_login(tool):
    """The launch's state must come back with the state cookie of the browser that began the
    login: a launch (or a login link) carried to another browser signs nobody in there, and
    its state stays unspent for the browser that began it."""
    platform, server = tool["platform"], tool["server"]
    mine, other = Client(server.url), Client(server.url)
    r, action, fields = login(mine, platform, "s-4")
    (cookie,) = r.headers.get_list("set-cookie")
    name = f"lti-state-{fields['state']}"
    assert cookie.startswith(f"{name}={fields['state']};")
    flags = sorted(part.strip().lower() for part in cookie.split(";")[1:])
    assert "httponly" in flags and "path=/lti/" in flags and "samesite=lax" in flags and "secure" not in flags
    refused = post_launch(other, action, fields)
    assert refused.status_code == 401 and "another browser than the one that began its login" in html.unescape(
        refused.text
    )
    assert other.get("/").status_code == 401  # not signed in
    other.http.cookies.set("lti-state-x", "x")
    forged = post_launch(other, action, fields | {"state": "x"})
    assert forged.status_code == 401 and "not one this tool issued" in html.unescape(forged.text)
    assert post_launch(mine, action, fields).status_code == 303  # the browser that began it launches
    tls, _, _ = login(Client(server.url), platform, "s-5", **{"X-Forwarded-Proto": "https"})
    flags = sorted(part.strip().lower() for part in tls.headers["set-cookie"].split(";")[1:])
    assert "secure" in flags and "samesite=none" in flags  # the platform's cross-site POST carries it over https


def test_a_student_cannot_answer_a_deep_linking_request(tool):
    platform, server = tool["platform"], tool["server"]
    r = launch(Client(server.url), platform, platform.claims("s-3", "Learner", kind="LtiDeepLinkingRequest"))
    assert r.status_code == 401 and "only the course's instructors and TAs" in html.unescape(r.text)


def test_an_unregistered_platform_is_refused_at_login(tool):
    r = Client(tool["server"].url).http.get("/lti/login", params={"iss": "https://elsewhere.example", "login_hint": "x"},
                                            headers={"Accept": "text/html"})  # fmt: skip
    assert (
        r.status_code == 400
        and "is not registered, or its registration was revoked: add it to lti.platforms" in html.unescape(r.text)
    )


def roster(lms, platform: Platform) -> dict:
    """The roster page's platform course of ``platform``, as the instructor sees it."""
    (context,) = [
        c for c in lms["instructor"].get("/class/lti/roster").json()["contexts"] if c["platform"] == platform.url
    ]
    return context


def test_a_student_cannot_start_a_roster_read(lms):
    """Reading a platform's roster is the instructor's (CSRF-checked, audited): a student's
    POST is a 404 and the platform is asked nothing."""
    platform, server = lms["untrusted"], lms["server"]
    platform.tool_jwks, platform.members = server.url + "/lti/jwks", [member("m-1"), member("m-2")]
    student = Client(server.url)
    assert launch(student, platform, platform.claims("m-1", "Learner", **platform.service())).status_code == 303
    context = _wait(lambda: (c := roster(lms, platform))["synced_at"] and c, 60)  # the server's own first read
    asked = len(platform.roster_reads)
    student.get("/")
    r = student.post("/class/lti/roster", {"context": str(context["id"]), "full": "1"})
    assert r.status_code == 404
    assert student.get("/class/lti/roster").status_code == 404
    assert len(platform.roster_reads) == asked


def test_a_learner_on_the_platforms_roster_never_becomes_staff(lms):
    """On a platform whose e-mails course.yaml trusts, Learners listed with the TA's and the
    instructor's e-mails are linked to neither account (no account at all), and one with an
    institution's Administrator role besides is a student: the roster never gives a role."""
    platform, server = lms["trusted"], lms["server"]
    platform.tool_jwks = server.url + "/lti/jwks"
    platform.members = [member("mallory-5", email=TA), member("mallory-6", email=DEMO_INSTRUCTOR),
                        member("mallory-7", roles=[ROLE + "Learner",
                                                   "http://purl.imsglobal.org/vocab/lis/v2/institution/person#Administrator"])]  # fmt: skip
    assert (
        launch(Client(server.url), platform, platform.claims("s-77", "Learner", **platform.service())).status_code
        == 303
    )
    context = _wait(lambda: (c := roster(lms, platform))["synced_at"] and c, 60)
    read = lms["instructor"].post("/class/lti/roster", {"context": str(context["id"]), "full": "1"})
    assert read.status_code == 200
    got = {m["sub"]: (m["email"], m["account_role"]) for m in roster(lms, platform)["members"]}
    assert got["mallory-5"] == (None, None) and got["mallory-6"] == (None, None)
    assert got["mallory-7"] == ("mallory-7@platform.example", "student")
    roles = {s["email"]: s for s in lms["instructor"].get("/class").json()["students"]}
    assert "mallory-5@platform.example" not in roles
    mallory = Client(server.url)  # nor did the roster link the TA's account for a Learner's launch
    r = launch(mallory, platform, platform.claims("mallory-5", "Learner", email=TA))
    assert r.status_code == 401 and me(mallory) is None


def test_an_anonymous_visitor_cannot_register_a_platform(lms):
    """Dynamic registration starts only at a one-time link an instructor made: a made-up or
    missing token registers nothing, and the platform named is never asked anything."""
    from test_portal_lti import register

    server, own = lms["server"], Platform()
    try:
        for token in ("made-up", "x" * 43):
            r = register(own, f"{server.url}/lti/register/{token}")
            assert r.status_code == 400 and "unknown, used already or expired" in r.json()["error"]
        assert httpx.get(f"{server.url}/lti/register/").status_code == 404
        assert own.registered == [] and own.roster_reads == []
        assert lms["instructor"].get("/class/lti/registrations").json()["registrations"] == []
    finally:
        own.stop()


def test_a_student_cannot_make_a_registration_link_or_revoke_one(lms):
    """The registrations page is the instructor's: a student's link request and revocation are 404s."""
    platform, server = lms["untrusted"], lms["server"]
    student = Client(server.url)
    assert launch(student, platform, platform.claims("m-9", "Learner")).status_code == 303
    student.get("/")
    assert student.post("/class/lti/registrations", {"action": "link"}).status_code == 404
    assert student.post("/class/lti/registrations", {"action": "revoke", "registration": "1"}).status_code == 404
    assert student.get("/class/lti/registrations").status_code == 404


@pytest.mark.slow  # a server of its own
def test_a_registration_link_fetches_one_url_once_and_never_shows_what_it_answered(tmp_path):
    import http.server
    import threading

    pytest.importorskip("jwt", reason="the LTI tool needs PyJWT (the portal extra)")
    from grader.portal.course.course import make_demo_course

    from portal_server import Client, Server

    hits: list[str] = []

    class Internal(http.server.BaseHTTPRequestHandler):  # a service only the server's own network reaches
        def do_GET(self):  # noqa: N802 (http.server's name)
            hits.append(self.path)
            body = b"INTERNAL-SECRET-42 (an admin page)"
            self.send_response(403)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    internal = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Internal)
    threading.Thread(target=internal.serve_forever, daemon=True).start()
    course = make_demo_course(tmp_path / "course")
    (course / "course.yaml").write_text((course / "course.yaml").read_text() + "lti:\n  roster_sync_minutes: 0\n")
    server = Server(course, tmp_path)
    try:
        teacher = Client(server.url)
        teacher.sign_in(server.link)
        teacher.get("/class/lti/registrations")
        link = teacher.post("/class/lti/registrations", {"action": "link"}).json()["link"]
        target = f"http://127.0.0.1:{internal.server_address[1]}/admin"
        answers = [httpx.get(link, params={"openid_configuration": target}, headers={"accept": "application/json"})
                   for _ in range(3)]  # fmt: skip
        assert all(a.status_code == 400 for a in answers)
        assert not any("INTERNAL-SECRET-42" in a.text for a in answers), answers[0].text
        assert len(hits) <= 1, hits  # the link is spent by its first use, whatever came of it
    finally:
        server.stop()
        internal.shutdown()


@pytest.mark.slow  # a server of its own
def test_the_registration_page_takes_no_directive_from_its_address(tmp_path):
    pytest.importorskip("jwt", reason="the LTI tool needs PyJWT (the portal extra)")
    from grader.portal.course.course import make_demo_course

    from portal_server import Server

    course = make_demo_course(tmp_path / "course")
    (course / "course.yaml").write_text((course / "course.yaml").read_text() + "lti:\n  roster_sync_minutes: 0\n")
    server = Server(course, tmp_path)
    try:
        r = httpx.get(f"{server.url}/lti/register/made-up",
                      params={"openid_configuration": "https://evil.example;worker-src *;frame-src *"})  # fmt: skip
        assert r.status_code == 400
        policy = r.headers["content-security-policy"]
        assert "worker-src" not in policy and "frame-src" not in policy, policy
        assert "evil.example" not in policy, policy  # a link that is no registration's frames nowhere
    finally:
        server.stop()
