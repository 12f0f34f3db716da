"""Password reset by mail attacked: a reset link used again or after it expired, a reset link
for one address sent with another's address or id in its form, the form without its CSRF
token, a reset asked for with the attacker's Host header (the mailed link must still be
the portal's), an intruder's session and API token after the owner reset the password, and
resets asked for a person's address and a stranger's told apart by their answers."""

from __future__ import annotations

import sqlite3

import pytest

httpx = pytest.importorskip("httpx", reason="the portal's tests need httpx (pip install -e '.[test]')")
pytest.importorskip("aiosmtpd", reason="the mail tests need aiosmtpd (pip install -e '.[test]')")

from test_portal_resets import NEW, reset_link  # noqa: E402

from portal_server import Client  # noqa: E402
from smtp_server import body  # noqa: E402
from test_portal_mail import settled  # noqa: E402


def _signs_in(mailing, email: str, password: str) -> bool:
    c = Client(mailing["server"].url)
    c.get("/signin")
    return c.post("/signin", {"email": email, "password": password}).status_code == 200


def _opened(mailing, link: str) -> tuple[Client, str]:
    browser = Client(mailing["server"].url)
    path = link[len(browser.url) :]
    browser.get(path)
    return browser, path


def test_a_used_or_expired_reset_link_is_refused(mailing, mailbox):
    browser, path = _opened(mailing, reset_link(mailing, mailbox, "s1@example.edu"))
    assert browser.post(path, {"password": NEW}).status_code == 200
    r = browser.post(path, {"password": NEW + " stolen"})
    assert r.status_code == 400 and "used already or has expired" in r.text
    assert _signs_in(mailing, "s1@example.edu", NEW) and not _signs_in(mailing, "s1@example.edu", NEW + " stolen")
    link = reset_link(mailing, mailbox, "s1@example.edu")
    database = mailing["tmp"] / "course" / ".portal" / "portal.sqlite3"
    with sqlite3.connect(database) as db:  # its half hour gone by
        db.execute("UPDATE password_resets SET expires_at = '2026-01-01 00:00:00' WHERE used_at IS NULL")
    browser, path = _opened(mailing, link)
    page = browser.html(path)
    assert page.status_code == 400 and "expired" in page.text and 'name="password"' not in page.text
    r = browser.post(path, {"password": NEW + " late"})
    assert r.status_code == 400
    assert not _signs_in(mailing, "s1@example.edu", NEW + " late")
    forged = Client(mailing["server"].url)
    forged.get("/reset/not-a-token")
    assert forged.post("/reset/not-a-token", {"password": NEW + " made up"}).status_code == 400


def test_a_reset_link_for_one_address_never_resets_another(mailing, mailbox):
    link = reset_link(mailing, mailbox, "s3@example.edu")
    browser, path = _opened(mailing, link)
    r = browser.post(path, {"password": NEW, "email": "s4@example.edu", "user_id": "5"})
    assert r.status_code == 200, r.text
    assert browser.get("/").json()["user"]["email"] == "s3@example.edu"
    assert _signs_in(mailing, "s3@example.edu", NEW)
    assert not _signs_in(mailing, "s4@example.edu", NEW)
    assert mailing["students"]["s4@example.edu"].get("/").status_code == 200  # s4's session goes on


def test_the_reset_form_without_its_csrf_token_does_nothing(mailing, mailbox):
    link = reset_link(mailing, mailbox, "s6@example.edu")
    browser, path = _opened(mailing, link)
    assert browser.post(path, {"password": NEW}, csrf=False).status_code == 403
    assert not _signs_in(mailing, "s6@example.edu", NEW)
    assert browser.post(path, {"password": NEW}).status_code == 200  # the link was not spent


def test_a_reset_asked_for_with_another_host_still_points_at_the_portal(mailing, mailbox):
    asker = Client(mailing["server"].url)
    asker.get("/signin")
    settled(mailing["instructor"])
    before = len(mailbox.to("s2@example.edu", "Set a new password"))
    r = asker.post("/signin/reset", {"email": "s2@example.edu"}, headers={"Host": "attacker.example"})
    assert r.status_code == 200, r.text
    settled(mailing["instructor"])
    mine = mailbox.to("s2@example.edu", "Set a new password")
    assert len(mine) == before + 1
    text = body(mine[-1])
    assert "attacker.example" not in text and f"{mailing['server'].url}/reset/" in text


def test_a_reset_ends_an_intruders_session_and_revokes_their_api_token(mailing, mailbox):
    """Someone who took over the account (a session, and an API token made with it) loses both
    when the owner sets a new password with a mailed link. Main kept the API token working."""
    intruder = mailing["students"]["s5@example.edu"]
    token = intruder.post("/arena/token", {"label": "intruder"}).json()["token"]
    cli = httpx.Client(base_url=mailing["server"].url, headers={"Authorization": f"Bearer {token}"}, timeout=30)
    try:
        assert cli.get("/api/arena").status_code == 200
        browser, path = _opened(mailing, reset_link(mailing, mailbox, "s5@example.edu"))
        r = browser.post(path, {"password": NEW})
        assert r.status_code == 200, r.text
        assert (r.json()["sessions_ended"], r.json()["tokens_revoked"]) == (1, 1)
        refused = cli.get("/api/arena")
        assert refused.status_code == 401 and "unknown, revoked or expired" in refused.json()["error"]
    finally:
        cli.close()
    assert intruder.get("/").status_code == 401
    assert browser.get("/api/arena").json()["tokens"] == []


def test_a_reset_asked_for_a_person_and_for_a_stranger_gets_the_same_answer(mailing):
    """The answer to "forgot your password?" is the same byte for byte, as JSON and as a page,
    whether or not the address is on the roster."""
    asker = Client(mailing["server"].url)  # from an address of its own: the limits' count of the module's untouched
    asker.http = httpx.Client(base_url=asker.url, headers={"Accept": "application/json"}, timeout=30,
                              transport=httpx.HTTPTransport(local_address="127.0.0.9"))  # fmt: skip
    asker.get("/signin")
    known, stranger = (asker.post("/signin/reset", {"email": e}) for e in ("s4@example.edu", "nobody@example.edu"))
    assert (known.status_code, known.content) == (stranger.status_code, stranger.content) == (200, known.content)
    pages = [asker.http.post("/signin/reset", data={"email": e, "csrf": asker.csrf}, headers={"Accept": "text/html"})
             for e in ("s4@example.edu", "nobody@example.edu")]  # fmt: skip
    assert pages[0].status_code == pages[1].status_code == 200 and pages[0].content == pages[1].content
