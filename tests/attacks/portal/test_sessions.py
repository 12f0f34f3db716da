"""Attacks on the portal's sessions, over real HTTP against a real server, on SQLite and on
PostgreSQL: a cookie kept after signing out, a stolen session after its owner changed the
password, a link not used yet after it; one's own sessions listed and ended, an instructor
ending a student's, an idle session and one 14 days old, and API tokens that outlive them all."""

from __future__ import annotations

import datetime
import secrets

import pytest

pytestmark = pytest.mark.xdist_group(__name__)  # one worker: the module's fixture runs once

httpx = pytest.importorskip("httpx", reason="the portal's tests need httpx (pip install -e '.[test]')")
pytest.importorskip("starlette", reason='the portal needs its extra: pip install -e ".[portal]"')

from sqlalchemy import select, text, update  # noqa: E402

from grader.portal.database.db import connect, sessions  # noqa: E402
from grader.portal.database.models import AuditEntry, User, WebSession  # noqa: E402

from portal_server import NEGAMAX, Client, Server, make_course  # noqa: E402

IDLE_HOURS = 2  # the course's session_idle_hours here


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def served(request, tmp_path_factory):
    """One server for the module's tests on a database of each kind, its course's sessions
    ending after IDLE_HOURS unused: its URL, database URL and instructor."""
    tmp = tmp_path_factory.mktemp("sessions")
    if request.param == "sqlite":
        url = f"sqlite:///{tmp / 'portal.sqlite3'}"
    else:
        base = request.getfixturevalue("postgres")
        name = "t_" + secrets.token_hex(6)
        admin = connect(base.format(db="postgres")).execution_options(isolation_level="AUTOCOMMIT")
        with admin.connect() as c:
            c.execute(text(f"CREATE DATABASE {name}"))
        admin.dispose()
        url = base.format(db=name)
    course = make_course(tmp / "course")
    (course / "course.yaml").write_text((course / "course.yaml").read_text()
                                        + f"session_idle_hours: {IDLE_HOURS}\n")  # fmt: skip
    server = Server(course, tmp, url)
    instructor = Client(server.url)
    instructor.sign_in(server.link)
    engine = connect(url)
    yield {"server": server, "url": server.url, "database": sessions(engine), "instructor": instructor}
    engine.dispose()
    server.stop()


def link_for(served, email: str) -> str:
    """A new one-time sign-in link for ``email``, made by the instructor."""
    return served["instructor"].post("/class/links", {"email": email}).json()["links"][0]["link"]


def signed_in(served, email: str, agent: str = "tests") -> Client:
    """A browser of its own (``agent`` its User-Agent), signed in as ``email`` with a new link."""
    client = Client(served["url"])
    client.http.headers["User-Agent"] = agent
    client.sign_in(link_for(served, email))
    return client


def copy_of(client: Client) -> Client:
    """A thief's browser holding a copy of ``client``'s cookie and CSRF token."""
    thief = Client(client.url)
    thief.http.cookies.update(client.http.cookies)
    thief.csrf = client.csrf
    return thief


def answers(client: Client) -> int:
    """The status a signed-in person's page answers with: 200 signed in, 401 not."""
    return client.http.get("/api/a/othello").status_code


def test_signing_out_ends_the_session_for_every_copy_of_its_cookie(served):
    """Main kept no session on the server: after POST /signout the old cookie still answered
    as the student and took uploads."""
    me = signed_in(served, "s1@example.edu")
    thief = copy_of(me)
    assert answers(thief) == 200
    assert me.post("/signout").json()["signed_out"] is True
    assert answers(thief) == 401 and answers(me) == 401
    r = thief.upload(b"print(19)\n", name="after.py")
    assert r.status_code == 401 and r.json()["error"].startswith("sign in first")


def test_a_password_change_cuts_off_every_other_session_every_unused_link_and_every_api_token(served):
    """A thief holding a copy of one session (a link not used yet, and an API token made with
    the session) is cut off once the owner changes the password from another; the owner's
    session there goes on. Main kept API tokens working after a password change."""
    stolen = signed_in(served, "s2@example.edu")
    thief = copy_of(stolen)
    owner = signed_in(served, "s2@example.edu")
    unused = link_for(served, "s2@example.edu")
    token = thief.post("/arena/token", {"label": "thief"}).json()["token"]
    cli = httpx.Client(base_url=served["url"], headers={"Authorization": f"Bearer {token}"}, timeout=30)
    assert answers(thief) == 200 and cli.get("/api/arena").status_code == 200
    changed = owner.post("/password", {"password": "plum kettle orbit lantern"}).json()
    assert changed == {"password_set": True, "sessions_ended": 1, "tokens_revoked": 1}
    assert (answers(thief), answers(stolen), answers(owner)) == (401, 401, 200)
    try:
        refused = cli.get("/api/arena")
    finally:
        cli.close()
    assert refused.status_code == 401 and "unknown, revoked or expired" in refused.json()["error"]
    assert owner.get("/api/arena").json()["tokens"] == []
    late = Client(served["url"])
    path = unused[len(late.url) :]
    late.get(path)
    r = late.post(path)
    assert r.status_code == 400 and "used already or has expired" in r.json()["error"]
    assert owner.post("/password", {"current": "plum kettle orbit lantern", "password": "violet harbor quiz 42"}
                      ).json()["password_set"] is True  # fmt: skip
    assert answers(owner) == 200  # changing it again keeps the session it is changed from


def test_one_sees_ones_sessions_ends_one_and_signs_out_everywhere_but_api_tokens_stay(served):
    laptop = signed_in(served, "s3@example.edu", agent="laptop browser")
    phone = signed_in(served, "s3@example.edu", agent="phone browser")
    token = laptop.post("/arena/token", {"label": "cli"}).json()["token"]
    listed = laptop.get("/sessions").json()
    assert [(s["user_agent"], s["this"]) for s in listed["sessions"]] == [("phone browser", False),
                                                                           ("laptop browser", True)]  # fmt: skip
    assert listed["idle_hours"] == IDLE_HOURS
    assert all(s["client"] == "127.0.0.1" and s["created_at"] and s["last_seen_at"] for s in listed["sessions"])
    other = listed["sessions"][0]["id"]
    assert laptop.post(f"/sessions/{other}/end").json()["ended"] == 1
    assert (answers(phone), answers(laptop)) == (401, 200)
    assert laptop.post(f"/sessions/{other}/end").status_code == 404  # ended already
    intruder = signed_in(served, "s1@example.edu")
    mine = laptop.get("/sessions").json()["sessions"][0]["id"]
    assert intruder.post(f"/sessions/{mine}/end").status_code == 404  # another's session: as if none
    assert answers(laptop) == 200
    phone = signed_in(served, "s3@example.edu", agent="phone browser")
    assert laptop.post("/sessions/end-all").json() == {"signed_out": True, "ended": 2}
    assert (answers(phone), answers(laptop)) == (401, 401)
    cli = httpx.Client(base_url=served["url"], headers={"Authorization": f"Bearer {token}"}, timeout=30)
    try:
        assert cli.get("/api/arena").status_code == 200  # an API token is no session: it stays until revoked
    finally:
        cli.close()


def test_an_instructor_ends_a_students_sessions_audited_and_their_grading_goes_on(served):
    me = signed_in(served, "s4@example.edu")
    sid = me.upload(NEGAMAX, name="negamax.py").json()["id"]
    assert me.post("/class/sessions/end", {"email": "s4@example.edu"}).status_code == 404  # staff's only
    instructor = served["instructor"]
    r = instructor.post("/class/sessions/end", {"email": "S4@example.edu"})
    assert r.json()["ended"] == 1 and r.json()["email"] == "s4@example.edu"
    assert answers(me) == 401
    assert instructor.post("/class/sessions/end", {"email": "nobody@example.edu"}).status_code == 404
    with served["database"]() as s:
        said = s.scalars(select(AuditEntry.detail).where(AuditEntry.action == "end sessions")).all()
    assert "s4@example.edu: 1 session(s)" in said
    assert instructor.graded(sid)["status"] == "graded"  # the grading under way went on
    assert answers(signed_in(served, "s4@example.edu")) == 200  # a new link signs in again


def _set(served, email: str, **values) -> None:
    """Set the columns ``values`` of every session of ``email``'s: time passing, as the server sees it."""
    with served["database"].begin() as s:
        uid = s.scalar(select(User.id).where(User.email == email))
        s.execute(update(WebSession).where(WebSession.user_id == uid).values(**values))


def _ago(**delta) -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(**delta)


def test_an_idle_session_ends_and_none_lives_past_14_days(served):
    me = signed_in(served, "s5@example.edu")
    _set(served, "s5@example.edu", last_seen_at=_ago(hours=IDLE_HOURS, minutes=-5))
    assert answers(me) == 200  # used within the idle time: it goes on
    _set(served, "s5@example.edu", last_seen_at=_ago(hours=IDLE_HOURS, minutes=1))
    assert answers(me) == 401  # unused longer: ended
    busy = signed_in(served, "s5@example.edu")
    _set(served, "s5@example.edu", created_at=_ago(days=14, minutes=1))
    assert answers(busy) == 401  # in use all along, but 14 days old
    with served["database"]() as s:  # both rows gone
        uid = s.scalar(select(User.id).where(User.email == "s5@example.edu"))
        assert s.scalars(select(WebSession).where(WebSession.user_id == uid)).all() == []


def test_a_sessions_last_seen_is_written_at_most_once_a_minute(served):
    me = signed_in(served, "s6@example.edu")
    recent, old = _ago(seconds=20), _ago(minutes=5)
    _set(served, "s6@example.edu", last_seen_at=recent)
    assert answers(me) == 200
    with served["database"]() as s:
        (seen,) = s.scalars(select(WebSession.last_seen_at).join(User).where(User.email == "s6@example.edu")).all()
    assert abs((seen.replace(tzinfo=datetime.timezone.utc) - recent).total_seconds()) < 1  # not written again
    _set(served, "s6@example.edu", last_seen_at=old)
    assert answers(me) == 200
    with served["database"]() as s:
        (seen,) = s.scalars(select(WebSession.last_seen_at).join(User).where(User.email == "s6@example.edu")).all()
    assert seen.replace(tzinfo=datetime.timezone.utc) > recent  # written: a minute had passed


@pytest.mark.parametrize("value", ["0", "-1", "337", "true", "twelve", ".nan"])
def test_a_bad_session_idle_time_is_one_line_naming_the_key(tmp_path, value):
    from click.testing import CliRunner

    from grader.cli import main

    course = make_course(tmp_path / "course")
    (course / "course.yaml").write_text((course / "course.yaml").read_text() + f"session_idle_hours: {value}\n")
    result = CliRunner().invoke(main, ["serve", str(course)])
    assert result.exit_code == 1 and len(result.output.strip().splitlines()) == 1, result.output
    assert "course.yaml: 'session_idle_hours' must be a number of hours above 0 and at most 336" in result.output


@pytest.mark.slow  # a browser and a server: 10-20 s
def test_in_a_browser_one_ends_a_session_and_signs_out_everywhere_and_an_instructor_ends_a_students(tmp_path, chromium):
    """The pages without JavaScript: the account page links to one's sessions; one ends the
    other browser's, then signs out everywhere; the class page's form ends a student's."""
    from test_portal_browser import submit

    course = make_course(tmp_path / "course")
    server = Server(course, tmp_path, None, "--workers", "0")
    try:
        browser = chromium  # the chromium fixture's
        problems: list[str] = []

        def signed_in_page(link: str, agent: str):
            page = browser.new_context(java_script_enabled=False, user_agent=agent).new_page()
            page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
            page.goto(link)
            submit(page, "#signin")
            return page

        instructor = signed_in_page(server.link, "instructor's browser")

        def link() -> str:
            instructor.goto(server.url + "/class")
            instructor.fill("form[action='/class/links'] input[name=email]", "s1@example.edu")
            submit(instructor, "text=Make one-time sign-in links")
            return instructor.inner_text("#links code")

        laptop = signed_in_page(link(), "laptop browser")
        phone = signed_in_page(link(), "phone browser")
        submit(laptop, "#your-sessions")
        assert laptop.url == server.url + "/sessions"
        rows = laptop.locator("#sessions tr")
        assert rows.count() == 3  # the header, and a row per session
        assert "(this one)" in laptop.inner_text("#sessions tr.this") and "laptop browser" in laptop.inner_text(
            "#sessions tr.this"
        )
        submit(laptop, "#sessions tr:has-text('phone browser') button:has-text('End')")
        assert laptop.locator("#sessions tr").count() == 2
        phone.goto(server.url + "/")
        assert phone.url == server.url + "/signin"  # its session ended
        phone = signed_in_page(link(), "phone browser")
        submit(phone, "#sessions-link")  # the header's link, on every page
        submit(phone, "button:has-text('Sign out everywhere')")
        assert phone.url == server.url + "/signin"
        laptop.goto(server.url + "/")
        assert laptop.url == server.url + "/signin"
        again = signed_in_page(link(), "laptop browser")
        instructor.goto(server.url + "/class")
        instructor.fill("form[action='/class/sessions/end'] input[name=email]", "s1@example.edu")
        submit(instructor, "button:has-text('End their sessions')")
        again.goto(server.url + "/")
        assert again.url == server.url + "/signin"
        instructor.goto(server.url + "/class/audit")
        assert "s1@example.edu: 1 session(s)" in instructor.inner_text("#audit")
        assert problems == []
    finally:
        server.stop()
