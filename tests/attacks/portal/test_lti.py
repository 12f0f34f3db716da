"""An LMS's launch as a way in: a launch correctly signed by the platform, whose user set the
instructor's e-mail (Moodle lets users set their own), or a rostered student's, on the
platform. An identity is the platform's ``iss`` and ``sub``: an e-mail links a launch to a
portal account only where course.yaml trusts the platform's e-mails, only for an account no
launch linked yet, and never with a role above what both the launch and the roster give."""

from __future__ import annotations

import html

import pytest

pytest.importorskip("jwt", reason='the LTI tool needs PyJWT: pip install -e ".[portal]"')

from sqlalchemy import text  # noqa: E402

from grader.portal.course.course import DEMO_INSTRUCTOR, DEMO_STUDENTS, make_demo_course  # noqa: E402
from grader.portal.database.db import connect, upgrade  # noqa: E402

from test_portal import Client, Server  # noqa: E402
from test_portal_db import postgres  # noqa: E402,F401 (a fixture: the PostgreSQL server that url needs)
from test_portal_db import url as database_url  # noqa: E402,F401 (a fixture: a database of each kind)
from test_portal_lti import Platform, add_to_roster, launch  # noqa: E402

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


def test_the_migration_marks_the_users_no_launch_made_as_rostered(database_url):  # noqa: F811
    """On SQLite and PostgreSQL: users of before 0010 whom no launch linked came from the roster
    or course.yaml (their names and roles a launch keeps); a launch's own are not."""
    engine = connect(database_url)
    upgrade(engine, "0009")
    with engine.begin() as c:
        for email in ("roster@x.org", "launched@x.org"):
            c.execute(text("INSERT INTO users (email, name, role, created_at) VALUES (:e, 'N', 'student', "
                           "'2026-01-01')"), {"e": email})  # fmt: skip
        c.execute(text("INSERT INTO lti_identities (issuer, sub, user_id) SELECT 'https://lms', 's', id FROM users "
                       "WHERE email = 'launched@x.org'"))  # fmt: skip
    upgrade(engine)
    with engine.connect() as c:
        rows = c.execute(text("SELECT email, rostered FROM users ORDER BY email")).all()
    assert [(e, bool(r)) for e, r in rows] == [("launched@x.org", False), ("roster@x.org", True)]
    engine.dispose()


def test_a_launch_made_accounts_name_is_shown_without_invisible_characters(lms):
    """The platform names its user with a right-to-left override and a zero-width space: the
    account the launch makes is named without them, in the user's pages and the staff's."""
    platform, student = lms["untrusted"], Client(lms["server"].url)
    claims = platform.claims("named-1", "Learner", name="Eve\u202enilam\u200b")
    assert launch(student, platform, claims).status_code == 303
    assert me(student)["name"] == "Evenilam"
    page = html.unescape(lms["instructor"].html("/class").text)
    assert "Evenilam" in page and "\u202e" not in page and "\u200b" not in page
