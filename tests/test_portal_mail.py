"""The portal's e-mail, received by a real SMTP server on loopback (aiosmtpd, STARTTLS and AUTH
required, its certificate the course's mail.ca_file): a sign-in link made by the instructor or
asked for on the sign-in page (the same answer for an address not on the roster), a receipt
with the upload's SHA-256, "graded" without the private tests before their release, "results
released"; each kind turned off by a student; the mail server down, then up: each message
arrives once, with a server and a worker both sending; a wrong password shown to staff; a
student turning "graded" mails off in Chromium."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from sqlalchemy import select

pytestmark = pytest.mark.xdist_group(__name__)  # one worker: the module's fixture runs once

pytest.importorskip("starlette", reason='the portal needs its extra: pip install -e ".[portal]"')

from grader.errors import ConfigError  # noqa: E402
from grader.portal.accounts.roster import RosterEntry, import_roster  # noqa: E402
from grader.portal.course.course import load_course  # noqa: E402
from grader.portal.course.mail import MailSettings, plain_address  # noqa: E402
from grader.portal.database.db import connect, sessions, upgrade  # noqa: E402
from grader.portal.database.mail import MailMessage  # noqa: E402
from grader.portal.database.models import User  # noqa: E402
from grader.portal.mail import outbox as outboxes  # noqa: E402
from grader.portal.mail.smtp import MailError, deliver, message  # noqa: E402

from portal_server import NEGAMAX, WRONG, Client, Server, make_course, open_portal  # noqa: E402
from smtp_server import PASSWORD, PASSWORD_ENV, Mailbox, body  # noqa: E402

SETTLED_WITHIN = 90.0  # seconds for the outbox to be drained on a loaded machine


def mail_course(folder: Path, mailbox: Mailbox, **settings: object) -> Path:
    """The tests' course with a mail: section for ``mailbox`` (its CA file copied in)."""
    make_course(folder)
    shutil.copy(mailbox.ca_file, folder / "mail-ca.pem")
    data = yaml.safe_load((folder / "course.yaml").read_text())
    data["mail"] = mailbox.settings(**settings)
    (folder / "course.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return folder


@pytest.fixture(scope="module")
def mailbox(tmp_path_factory):
    box = Mailbox(tmp_path_factory.mktemp("smtp"))
    box.start()
    yield box
    box.stop()


@pytest.fixture(scope="module")
def password():
    """The mail password in the environment the servers are started with."""
    old = os.environ.get(PASSWORD_ENV)
    os.environ[PASSWORD_ENV] = PASSWORD
    yield PASSWORD
    if old is None:
        del os.environ[PASSWORD_ENV]
    else:
        os.environ[PASSWORD_ENV] = old


@pytest.fixture(scope="module")
def mailing(tmp_path_factory, mailbox, password):
    tmp = tmp_path_factory.mktemp("mailing")
    opened = open_portal(mail_course(tmp / "course", mailbox), tmp)
    yield opened
    opened["server"].stop()


def outbox(client: Client) -> dict:
    r = client.get("/class/mail")
    assert r.status_code == 200, r.text
    return r.json()


def settled(client: Client, sent: int | None = None) -> dict:
    """The outbox once nothing waits in it (and ``sent`` messages are sent)."""
    deadline = time.monotonic() + SETTLED_WITHIN
    while True:
        state = outbox(client)
        if state["waiting"] == 0 and state["failing"] == 0 and (sent is None or state["sent"] >= sent):
            return state
        assert time.monotonic() < deadline, state
        time.sleep(0.2)


# --- settings ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "mail, words",
    [
        ({"host": "smtp.example.edu", "from": "g@example.edu", "security": "tls"}, "'mail.security' must be starttls"),
        ({"host": "smtp.example.edu", "from": "not an address"}, "'mail.from' must be the e-mail address"),
        ({"host": "smtp.example.edu", "from": "g@example.edu", "username": "g"}, "without 'mail.password_env'"),
        ({"host": "smtp.example.edu", "from": "g@example.edu", "password": "hunter2"}, "never write the password"),
        ({"host": "smtp.example.edu", "from": "g@example.edu", "port": 0}, "'mail.port' must be a port number"),
        ({"host": "smtp.example.edu", "from": "g@example.edu", "ca_file": "none.pem"}, "'mail.ca_file': no file"),
        ({"host": "smtp.example.edu", "from": "g@example.edu", "send": ["spam"]}, "'mail.send' must be a list"),
        (
            {
                "host": "smtp.example.edu",
                "from": "g@example.edu",
                "username": "g",
                "password_env": "P",
                "security": "none",
            },
            "a password is never sent unencrypted",
        ),  # fmt: skip
        ({"host": "smtp.example.edu", "from": "g@example.edu", "colour": 1}, "unknown key 'mail.colour'"),
        ({"host": "smtp.example.edu", "from": "g@example.edu", "keep_days": 0}, "'mail.keep_days' must be the days"),
    ],
)
def test_mis_set_mail_settings_are_one_line_errors_naming_the_key(tmp_path, mail, words):
    folder = make_course(tmp_path / "course")
    data = yaml.safe_load((folder / "course.yaml").read_text())
    data["mail"] = mail
    (folder / "course.yaml").write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError) as e:
        load_course(folder)
    assert words in str(e.value) and "\n" not in str(e.value)


def test_a_line_break_in_a_recipient_or_subject_is_refused_before_any_header_is_written():
    settings = MailSettings("smtp.example.edu", 587, "starttls", "grader@example.edu")
    for to, subject, name in [("a@example.edu\r\nBcc: x@evil.example", "s", ""), ("a@example.edu", "s\r\nBcc: x", ""),
                              ("a@example.edu", "s", "Ada\r\nBcc: x@evil.example"), ("a b@example.edu", "s", "")]:  # fmt: skip
        with pytest.raises(MailError, match="refused"):
            message(settings, to, subject, "body", name)


def test_the_mail_servers_certificate_is_verified_against_the_course_ca_file(mailbox, password, tmp_path):
    """The test server's certificate is self-signed: trusted with the course's ca_file, refused
    against the system's CAs (no message goes out over a connection nobody vouched for)."""
    settings = MailSettings("127.0.0.1", mailbox.port, "starttls", "grader@example.edu", "grader", PASSWORD_ENV,
                            mailbox.ca_file)  # fmt: skip
    deliver(settings, message(settings, "ada@example.edu", "Checked", "over TLS", "Ada"))
    assert body(mailbox.wait("ada@example.edu", "Checked")).strip() == "over TLS"
    unchecked = dataclasses.replace(settings, ca_file=None)
    with pytest.raises(MailError, match="certificate is not trusted .*give its CA certificate as mail.ca_file"):
        deliver(unchecked, message(unchecked, "ada@example.edu", "Unchecked", "never sent"))
    assert not mailbox.to("ada@example.edu", "Unchecked")


def test_serve_without_the_password_in_its_environment_is_a_one_line_error(tmp_path, mailbox):
    course = mail_course(tmp_path / "course", mailbox)
    env = {k: v for k, v in os.environ.items() if k != PASSWORD_ENV}
    done = subprocess.run([sys.executable, "-m", "grader", "serve", str(course), "--port", "0"], env=env,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode != 0
    assert f"mail.password_env names {PASSWORD_ENV}, which is not set" in done.stderr
    assert "Traceback" not in done.stderr


# --- what arrives ------------------------------------------------------------------------


def test_the_instructors_links_are_mailed_to_each_student(mailing, mailbox):
    msg = mailbox.wait("s2@example.edu", "Your sign-in link")
    assert msg["From"] == "grader@example.edu"
    assert re.search(r"/link/[\w-]{20,}", body(msg))
    assert mailbox.logins  # sent after STARTTLS and a login: the server takes nothing else
    said = "Mail through 127.0.0.1:%d (starttls) from grader@example.edu: signin, receipt, graded, released, regrade, reset\n"
    assert said % mailbox.port in mailing["server"].lines
    assert any(line.startswith("Warning: the links in mail and on the class page point at http://") and "--public-url" in line
               for line in mailing["server"].lines)  # fmt: skip


def test_an_upload_is_receipted_with_its_sha256_graded_without_private_results_then_released(mailing, mailbox):
    me, prof = mailing["students"]["s1@example.edu"], mailing["instructor"]
    r = me.upload(WRONG, name="wrong_score.py")
    assert r.status_code == 201, r.text
    sid = r.json()["id"]
    receipt = mailbox.wait("s1@example.edu", "Received: Othello endgame lab")
    text = body(receipt)
    assert hashlib.sha256(WRONG.read_bytes()).hexdigest() in text and f"/s/{sid}" in text
    done = me.graded(sid)
    graded = body(mailbox.wait("s1@example.edu", "Graded: Othello endgame lab"))
    assert f"Public tests: {done['public_total']:g} of 4" in graded
    assert "Total:" not in graded and "their results come when your instructor releases them" in graded
    assert prof.post("/class/release", {"assignment": "othello"}).status_code == 200
    released = body(mailbox.wait("s1@example.edu", "Results released: Othello endgame lab"))
    staff = prof.get(f"/s/{sid}").json()
    assert staff["symbols"] not in graded  # every test's symbol: the private ones too
    assert f"{staff['total']:g} of {staff['max_total']}" in released
    assert not mailbox.to("s2@example.edu", "Results released")  # nothing graded: nothing to tell


def test_a_new_link_asked_for_on_the_signin_page_arrives_and_signs_in_and_strangers_get_the_same_answer(
    mailing, mailbox
):
    settled(mailing["instructor"])  # the links the instructor made have arrived
    before = len(mailbox.to("s3@example.edu", "Your sign-in link"))
    asker = Client(mailing["server"].url)
    asker.get("/signin")
    known = asker.post("/signin/link", {"email": "s3@example.edu"})
    stranger = asker.post("/signin/link", {"email": "nobody@example.edu"})
    assert known.status_code == stranger.status_code == 200
    assert known.json()["message"] == stranger.json()["message"]
    deadline = time.monotonic() + SETTLED_WITHIN
    while len(mailbox.to("s3@example.edu", "Your sign-in link")) == before:
        assert time.monotonic() < deadline
        time.sleep(0.1)
    link = re.search(r"http://\S+/link/[\w-]+", body(mailbox.to("s3@example.edu", "Your sign-in link")[-1])).group(0)
    assert link.startswith(mailing["server"].url)  # the portal's own address, never a request's Host
    fresh = Client(mailing["server"].url)
    fresh.sign_in(link)
    assert fresh.get("/").json()["user"]["email"] == "s3@example.edu"
    settled(mailing["instructor"])
    assert not mailbox.to("nobody@example.edu")
    for _ in range(2):
        assert asker.post("/signin/link", {"email": "nobody@example.edu"}).status_code == 200
    assert asker.post("/signin/link", {"email": "nobody@example.edu"}).status_code == 429  # 3 an hour an address


def test_a_student_who_turned_receipts_off_gets_none_but_still_their_grade(mailing, mailbox):
    me = mailing["students"]["s4@example.edu"]
    prefs = me.get("/preferences").json()
    assert {k["kind"]: k["on"] for k in prefs["kinds"]} == dict.fromkeys(("signin", "receipt", "graded", "released",
                                                                                         "regrade", "reset"), True)  # fmt: skip
    r = me.post("/preferences", {"signin": "on", "graded": "on", "released": "on", "regrade": "on", "reset": "on"})
    assert r.status_code == 200
    assert {k["kind"]: k["on"] for k in me.get("/preferences").json()["kinds"]}["receipt"] is False
    sid = me.upload(NEGAMAX, name="negamax.py").json()["id"]  # Othello's 10 tests, not tic-tac-toe's 100
    me.graded(sid)
    mailbox.wait("s4@example.edu", "Graded: Othello endgame lab")
    settled(mailing["instructor"])
    assert not mailbox.to("s4@example.edu", "Received")


def test_staff_see_the_outbox_without_any_mails_body(mailing):
    state = settled(mailing["instructor"], sent=6)
    assert state["sent"] >= 6 and state["server"]["host"] == "127.0.0.1"
    assert {m["state"] for m in state["messages"]} == {"sent"}
    assert all("body" not in m and "/link/" not in str(m) for m in state["messages"])
    page = mailing["instructor"].html("/class/mail").text
    assert "sent" in page and "s2@example.edu" in page


# --- the mail server away ----------------------------------------------------------------


@pytest.mark.slow  # a server, a worker and the mail server brought up late: 15-30 s
def test_with_the_mail_server_down_mail_waits_then_arrives_once_from_a_server_and_a_worker(tmp_path, password):
    mailbox = Mailbox(tmp_path / "smtp")  # not started: the mail server is down
    course = mail_course(tmp_path / "course", mailbox)
    database = f"sqlite:///{tmp_path / 'portal.sqlite3'}"
    server = Server(course, tmp_path, database, "--workers", "0")
    worker = subprocess.Popen([sys.executable, "-m", "grader", "worker", str(course), "--database", database,
                               "--workers", "1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        prof = Client(server.url)
        prof.sign_in(server.link)
        links = prof.post("/class/links").json()["links"]  # a mail each, to a server that is down
        assert len(links) == 6 and all(entry["mailed"] for entry in links)
        deadline = time.monotonic() + SETTLED_WITHIN
        while (state := outbox(prof))["failing"] < 6:
            assert time.monotonic() < deadline, state
            time.sleep(0.2)
        assert all("cannot reach the mail server 127.0.0.1" in m["error"] for m in state["messages"])
        assert "cannot reach the mail server" in prof.html("/class/mail").text
        mailbox.start()  # back: each message arrives after its back-off
        state = settled(prof, sent=6)
        assert state["sent"] == 6
        assert sorted(m["To"].addresses[0].addr_spec for m in mailbox.messages) == sorted(
            entry["email"] for entry in links
        )
    finally:
        worker.terminate()
        worker.wait(30)
        server.stop()
        mailbox.stop()


def test_a_wrong_mail_password_is_shown_to_staff(tmp_path, mailbox, monkeypatch):
    monkeypatch.setenv(PASSWORD_ENV, "not-the-password")
    course = mail_course(tmp_path / "course", mailbox)
    server = Server(course, tmp_path)
    before = len(mailbox.messages)
    try:
        prof = Client(server.url)
        prof.sign_in(server.link)
        prof.post("/class/links", {"email": "s5@example.edu"})
        deadline = time.monotonic() + SETTLED_WITHIN
        while (state := outbox(prof))["failing"] < 1:
            assert time.monotonic() < deadline, state
            time.sleep(0.2)
        error = state["messages"][0]["error"]
        assert "refused the login of 'grader' (535)" in error and PASSWORD_ENV in error
        assert "refused the login" in prof.html("/class/mail").text
        assert len(mailbox.messages) == before
    finally:
        server.stop()


# --- in a browser ------------------------------------------------------------------------


@pytest.mark.slow  # a browser, a server and a grading: 10-20 s
def test_in_a_browser_a_student_turns_graded_mails_off_and_gets_only_the_receipt(tmp_path, chromium, mailbox,
                                                                                  password):  # fmt: skip
    from test_portal_browser import _signed_in, submit

    course = mail_course(tmp_path / "course", mailbox)
    server = Server(course, tmp_path)
    try:
        prof = Client(server.url)
        prof.sign_in(server.link)
        link = prof.post("/class/links", {"email": "s6@example.edu"}).json()["links"][0]["link"]
        page = _signed_in(chromium, link)
        submit(page, "#preferences-link")
        assert page.is_checked("#mail-graded")
        page.uncheck("#mail-graded")
        submit(page, "#preferences button")
        assert page.inner_text("#saved") == "Saved." and not page.is_checked("#mail-graded")
        # Othello's 10 tests: tic-tac-toe's 100 took 174 s on a machine at load 8
        page.goto(f"{server.url}/a/othello")
        page.set_input_files("input[name=script]", str(NEGAMAX))
        page.click("#upload")
        page.wait_for_url(f"{server.url}/s/*")
        sid = page.url.rsplit("/", 1)[1]
        receipt = body(mailbox.wait("s6@example.edu", "Received: Othello endgame lab"))
        assert hashlib.sha256(NEGAMAX.read_bytes()).hexdigest() in receipt
        prof.graded(sid)
        settled(prof)
        assert not mailbox.to("s6@example.edu", "Graded")
    finally:
        server.stop()


# --- the outbox's claims, on SQLite and PostgreSQL ---------------------------------------


def test_a_message_is_held_by_one_sender_at_a_time_and_waits_out_its_back_off(database, tmp_path):
    engine = connect(database)
    upgrade(engine)
    make = sessions(engine)
    settings = MailSettings("smtp.example.edu", 587, "starttls", "grader@example.edu", send=frozenset({"receipt"}))
    course = dataclasses.replace(load_course(make_course(tmp_path / "course")), mail=settings)
    with make.begin() as s:
        import_roster(s, [RosterEntry("a@example.edu", "A"), RosterEntry("b@example.edu", "B")])
        a, b = (s.scalar(select(User).where(User.email == e)) for e in ("a@example.edu", "b@example.edu"))
        assert outboxes.enqueue(s, course, a, "receipt", "Received", "body") is not None
        assert outboxes.enqueue(s, course, a, "graded", "Graded", "body") is None  # the course sends no such kind
        outboxes.set_turned_off(s, b.id, {"receipt"})
        assert outboxes.enqueue(s, course, b, "receipt", "Received", "body") is None  # b turned it off
    with make.begin() as s:
        held = outboxes.claim(s)
    assert held is not None and held.to == "a@example.edu" and held.name == "A"
    with make.begin() as s:
        assert outboxes.claim(s) is None  # held: no other sender gets it
        outboxes.failed(s, held, "cannot reach the mail server", 3600)
    with make.begin() as s:
        assert outboxes.claim(s) is None  # waiting out its back-off
        row = s.scalar(select(MailMessage))
        assert (row.state, row.attempts, row.last_error) == ("waiting", 1, "cannot reach the mail server")
        row.next_at = row.created_at
    with make.begin() as s:
        again = outboxes.claim(s, seconds=0.0)  # a lease that expires at once: its sender died
    assert again is not None and again.attempts == 2
    with make.begin() as s:
        stolen = outboxes.claim(s)
        assert stolen is not None and stolen.token != again.token
        assert not outboxes.sent(s, again)  # the lease was lost: the first sender marks nothing
        assert outboxes.sent(s, stolen)
    with make.begin() as s:
        assert outboxes.claim(s) is None
        assert outboxes.outbox_state(s)["sent"] == 1
        assert s.scalar(select(MailMessage.body)) == "body"
        link = dataclasses.replace(course, mail=dataclasses.replace(settings, send=frozenset({"signin"})))
        outboxes.enqueue(s, link, a, "signin", "Your sign-in link", "https://portal.example.edu/link/SECRET")
    with make.begin() as s:
        signin = outboxes.claim(s)
        assert signin is not None and outboxes.sent(s, signin)
    with make.begin() as s:  # a sent link is kept only in the mail
        assert "SECRET" not in str(s.scalars(select(MailMessage.body)).all())
    engine.dispose()


def test_a_long_title_makes_a_subject_that_fits_and_an_address_ending_in_a_line_break_is_refused(database, tmp_path):
    """A course whose assignment title is longer than the outbox's subject column still takes
    the upload's receipt (PostgreSQL refuses a value too long for its column: the upload would
    fail with it); an address with a line break at its end is no plain address."""
    engine = connect(database)
    upgrade(engine)
    make = sessions(engine)
    settings = MailSettings("smtp.example.edu", 587, "starttls", "grader@example.edu", send=frozenset({"receipt"}))
    course = dataclasses.replace(load_course(make_course(tmp_path / "course")), mail=settings)
    with make.begin() as s:
        import_roster(s, [RosterEntry("a@example.edu", "A")])
        a = s.scalar(select(User).where(User.email == "a@example.edu"))
        kept = outboxes.enqueue(s, course, a, "receipt", "Received: " + "Othello endgame lab " * 20, "body")
        assert kept is not None and len(kept.subject) == outboxes.SUBJECT_CHARS and kept.subject.endswith("…")
    with make.begin() as s:
        assert s.scalar(select(MailMessage.subject)).startswith("Received: Othello endgame lab")
    assert plain_address("a@example.edu") and not plain_address("a@example.edu\n")


# --- the outbox pruned, and a link that expired while it waited ---------------------------


def test_old_sent_messages_are_pruned_and_a_link_that_expired_while_waiting_is_never_sent(database, tmp_path):
    """The sender deletes the messages sent more than mail.keep_days ago (at its start, then
    hourly), keeping the newer ones and those not sent; a sign-in or reset mail whose link ran
    out while it waited (the mail server down for days) is marked expired, its body blanked."""
    import datetime as dt

    from grader.portal.mail.sender import MailSender

    engine = connect(database)
    upgrade(engine)
    make = sessions(engine)
    settings = MailSettings("127.0.0.1", 9, "none", "grader@example.edu", keep_days=7)
    course = dataclasses.replace(load_course(make_course(tmp_path / "course")), mail=settings)
    now = dt.datetime.now(dt.timezone.utc)
    with make.begin() as s:
        import_roster(s, [RosterEntry("a@example.edu", "A")])
        a = s.scalar(select(User).where(User.email == "a@example.edu"))
        for subject, days in (("old", 8), ("new", 6)):
            m = outboxes.enqueue(s, course, a, "receipt", subject, "body")
            m.state, m.sent_at = "sent", now - dt.timedelta(days=days)
        outboxes.enqueue(s, course, a, "graded", "waiting for days", "body").created_at = now - dt.timedelta(days=9)
        outboxes.enqueue(s, course, a, "signin", "Your sign-in link", "https://portal.example.edu/link/SECRET",
                         now - dt.timedelta(seconds=1))  # fmt: skip
        outboxes.enqueue(s, course, a, "reset", "Set a new password", "https://portal.example.edu/reset/SECRET2",
                         now + dt.timedelta(minutes=30))  # fmt: skip
    sender = MailSender(course, make)
    with make.begin() as s:  # what the sender does before it sends: prune, then claim (the expired first marked)
        assert outboxes.prune(s, settings.keep_days) == 1
        held = outboxes.claim(s)
    assert held is not None and held.subject == "waiting for days"  # the expired link was passed over
    with make.begin() as s:
        held2 = outboxes.claim(s)
    assert held2 is not None and held2.subject == "Set a new password"  # its link still good: sent
    with make() as s:
        rows = {m.subject: m for m in s.scalars(select(MailMessage))}
        assert set(rows) == {"new", "waiting for days", "Your sign-in link", "Set a new password"}
        assert rows["Your sign-in link"].state == "expired" and "SECRET" not in rows["Your sign-in link"].body
        state = outboxes.outbox_state(s)
    assert state["expired"] == 1 and state["sent"] == 1
    assert [m["state"] for m in state["messages"] if m["subject"] == "Your sign-in link"] == ["expired"]
    with make.begin() as s:
        rows = s.scalars(select(MailMessage).where(MailMessage.subject.in_(("new", "Your sign-in link")))).all()
        for m in rows:
            m.sent_at = m.created_at = now - dt.timedelta(days=8)
    assert sender.send_once() is False  # its first look prunes; nothing due (the two held are leased)
    with make() as s:
        assert sorted(s.scalars(select(MailMessage.subject))) == ["Set a new password", "waiting for days"]
    engine.dispose()


def test_staff_see_a_link_that_expired_while_it_waited(mailing):
    """A sign-in mail whose link ran out before the sender reached it: marked expired on /class/mail, never sent."""
    prof = mailing["instructor"]
    settled(prof)
    database = mailing["tmp"] / "course" / ".portal" / "portal.sqlite3"
    import sqlite3

    with sqlite3.connect(database) as db:
        (uid,) = db.execute("SELECT id FROM users WHERE email = 's6@example.edu'").fetchone()
        db.execute("INSERT INTO mail_outbox (kind, user_id, to_address, subject, body, state, created_at, next_at, "
                   "attempts, expires_at) VALUES ('signin', ?, 's6@example.edu', 'Expired link', "
                   "'http://x/link/OLD', 'waiting', '2026-01-01 00:00:00', '2026-01-01 00:00:00', 3, "
                   "'2026-01-04 00:00:00')", (uid,))  # fmt: skip
    deadline = time.monotonic() + SETTLED_WITHIN
    while (state := outbox(prof))["expired"] < 1:
        assert time.monotonic() < deadline, state
        time.sleep(0.2)
    assert [m["state"] for m in state["messages"] if m["subject"] == "Expired link"] == ["expired"]
    assert "its link ran out before it could be sent" in prof.html("/class/mail").text
