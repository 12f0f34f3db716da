"""Password reset by mail, with a real SMTP server on loopback: "forgot your password?" gives
the same answer for an address not on the roster, shares the limits of "send me a new sign-in
link", mails a one-time link good for a short while whose page sets a new password (the
password rules apply) without the current one, ends the person's other sessions, and is
audited."""

from __future__ import annotations

import re
import sqlite3
import time

import pytest

pytest.importorskip("starlette", reason='the portal needs its extra: pip install -e ".[portal]"')
pytest.importorskip("aiosmtpd", reason="the mail tests need aiosmtpd (pip install -e '.[test]')")

from portal_server import Client  # noqa: E402
from smtp_server import body  # noqa: E402
from test_portal_mail import SETTLED_WITHIN, mailbox, mailing, password, settled  # noqa: E402

FIXTURES = (mailbox, mailing, password)  # test_portal_mail's: its SMTP server and a portal mailing it
NEW = "correct horse battery staple lantern"


def reset_link(mailing, mailbox, email: str, asker: Client | None = None) -> str:
    """Ask for a reset of ``email`` on the sign-in page; the link of the mail that arrives."""
    before = len(mailbox.to(email, "Set a new password"))
    asker = asker or Client(mailing["server"].url)
    asker.get("/signin")
    r = asker.post("/signin/reset", {"email": email})
    assert r.status_code == 200, r.text
    deadline = time.monotonic() + SETTLED_WITHIN
    while len(mine := mailbox.to(email, "Set a new password")) == before:
        assert time.monotonic() < deadline
        time.sleep(0.1)
    found = re.search(r"http://\S+/reset/[\w-]+", body(mine[-1]))
    assert found is not None
    return found.group(0)


def test_a_reset_link_sets_a_new_password_without_the_current_one_and_ends_the_other_sessions(mailing, mailbox):
    me = mailing["students"]["s1@example.edu"]  # signed in elsewhere: this session ends
    assert me.get("/").status_code == 200
    link = reset_link(mailing, mailbox, "s1@example.edu")
    assert link.startswith(mailing["server"].url + "/reset/")
    browser = Client(mailing["server"].url)
    path = link[len(browser.url) :]
    page = browser.html(path)
    assert page.status_code == 200 and 'name="password"' in page.text and "current" not in page.text
    browser.get(path)
    weak = browser.post(path, {"password": "password123"})
    assert weak.status_code == 400 and "too easy to guess" in weak.text
    r = browser.post(path, {"password": NEW})  # the link still works after a password refused
    assert r.status_code == 200, r.text
    assert r.json()["password_set"] is True and r.json()["sessions_ended"] >= 1
    assert browser.get("/").json()["user"]["email"] == "s1@example.edu"  # this browser is signed in
    assert me.get("/").status_code == 401  # the other session ended
    again = Client(mailing["server"].url)
    again.get("/signin")
    assert again.post("/signin", {"email": "s1@example.edu", "password": NEW}).status_code == 200
    used = browser.post(path, {"password": NEW + " again"})
    assert used.status_code == 400 and "used already or has expired" in used.text
    assert "used already" in Client(mailing["server"].url).html(path).text
    entries = mailing["instructor"].get("/class/audit").json()["entries"]
    assert any(e["action"] == "password reset" and e["by"] == "s1@example.edu" for e in entries)
    settled(mailing["instructor"])
    sent = [m for m in mailing["instructor"].get("/class/mail").json()["messages"] if m["kind"] == "reset"]
    assert sent and all(m["state"] == "sent" for m in sent)
    database = mailing["tmp"] / "course" / ".portal" / "portal.sqlite3"
    with sqlite3.connect(database) as db:  # the link lives only in the mail, and only its digest here
        assert link.rsplit("/", 1)[1] not in str(db.execute("SELECT body FROM mail_outbox").fetchall())
        assert link.rsplit("/", 1)[1] not in str(db.execute("SELECT digest FROM password_resets").fetchall())


def test_strangers_get_the_same_answer_and_the_requests_share_the_sign_in_links_limit(mailing, mailbox):
    asker = Client(mailing["server"].url)
    asker.get("/signin")
    known = asker.post("/signin/reset", {"email": "s2@example.edu"})
    stranger = asker.post("/signin/reset", {"email": "nobody@example.edu"})
    assert known.status_code == stranger.status_code == 200
    assert known.json()["message"] == stranger.json()["message"]
    assert "password" in asker.html("/signin").text.lower() and "ask-reset" in asker.html("/signin").text
    assert asker.post("/signin/link", {"email": "nobody@example.edu"}).status_code == 200
    assert asker.post("/signin/reset", {"email": "nobody@example.edu"}).status_code == 200
    over = asker.post("/signin/reset", {"email": "nobody@example.edu"})  # 3 an hour an address, links and resets
    assert over.status_code == 429 and "too many password resets" in over.text
    settled(mailing["instructor"])
    assert not mailbox.to("nobody@example.edu")


def test_a_student_who_turned_reset_mails_off_gets_none(mailing, mailbox):
    me = mailing["students"]["s5@example.edu"]
    kinds = {k["kind"] for k in me.get("/preferences").json()["kinds"]}
    assert "reset" in kinds
    assert me.post("/preferences", {k: "on" for k in kinds if k != "reset"}).status_code == 200
    asker = Client(mailing["server"].url)
    asker.get("/signin")
    assert asker.post("/signin/reset", {"email": "s5@example.edu"}).status_code == 200
    settled(mailing["instructor"])
    assert not mailbox.to("s5@example.edu", "Set a new password")


@pytest.mark.slow  # a browser, a server and the mail server: 10-20 s
def test_in_a_browser_without_javascript_a_forgotten_password_is_reset_by_mail(tmp_path, chromium, mailbox, password):
    from test_portal_browser import _signed_in, submit

    from portal_server import Server
    from test_portal_mail import mail_course

    course = mail_course(tmp_path / "course", mailbox)
    server = Server(course, tmp_path, None, "--workers", "0")
    try:
        elsewhere = _signed_in(chromium, server.link)  # the instructor, signed in on another browser
        page = chromium.new_context(java_script_enabled=False).new_page()
        page.goto(f"{server.url}/signin")
        page.fill("#ask-reset input[name=email]", "instructor@example.edu")
        submit(page, "#ask-reset button")
        assert "a link to set a new password is on its way" in page.inner_text("#reset-asked")
        mail = body(mailbox.wait("instructor@example.edu", "Set a new password"))
        link = re.search(r"http://\S+/reset/[\w-]+", mail).group(0)
        page.goto(link)
        page.fill("input[name=password]", "qwertyuiop")
        submit(page, "#reset")
        assert "too easy to guess" in page.inner_text("#error")
        page.goto(link)
        page.fill("input[name=password]", NEW)
        submit(page, "#reset")
        assert page.url == server.url + "/class"  # signed in: the instructor's page
        elsewhere.goto(f"{server.url}/")
        assert elsewhere.url.endswith("/signin")  # the other browser was signed out
        page.goto(link)
        assert "used already" in page.inner_text("#reset-problem")
    finally:
        server.stop()
