"""The portal's e-mail attacked: the staff's outbox read by a student or by nobody, another
student's mail preferences changed, a line break in an address or a name carrying a header
(a Bcc to the attacker), and a sign-in link asked for, or made on the class page, with another
Host, which must never point the link at the attacker's site."""

from __future__ import annotations

import sqlite3

import pytest

pytest.importorskip("httpx", reason="the portal's tests need httpx (pip install -e '.[test]')")
pytest.importorskip("aiosmtpd", reason="the mail tests need aiosmtpd (pip install -e '.[test]')")

from portal_server import Client  # noqa: E402
from smtp_server import body  # noqa: E402
from test_portal_mail import settled  # noqa: E402

EVIL = "evil@attacker.example"


def test_a_student_cannot_read_the_outbox(mailing):
    me = mailing["students"]["s1@example.edu"]
    for client in (me,):
        assert client.get("/class/mail").status_code == 404  # as a page that does not exist
        page = client.html("/class/mail")
        assert page.status_code == 404 and "s2@example.edu" not in page.text
    assert Client(mailing["server"].url).get("/class/mail").status_code == 401


def test_a_student_changes_only_their_own_mail_preferences(mailing):
    me, other = mailing["students"]["s1@example.edu"], mailing["students"]["s2@example.edu"]
    theirs = other.get("/preferences").json()["kinds"]
    r = me.post("/preferences", {"email": "s2@example.edu", "user_id": "3", "receipt": "on"})
    assert r.status_code == 200
    assert other.get("/preferences").json()["kinds"] == theirs  # no field names whose preferences change
    assert {k["kind"]: k["on"] for k in me.get("/preferences").json()["kinds"]}["graded"] is False
    assert me.post("/preferences", {"graded": "on"}, csrf=False).status_code == 403  # no CSRF token: nothing done
    assert {k["kind"]: k["on"] for k in me.get("/preferences").json()["kinds"]}["graded"] is False
    nobody = Client(mailing["server"].url)
    nobody.get("/signin")
    assert nobody.post("/preferences", {"graded": "on"}).status_code == 401


def test_a_line_break_in_an_address_or_a_name_never_reaches_a_header(mailing, mailbox):
    """An address or a name with CR/LF, from a hand-edited database row or typed on the sign-in
    page: no mail is written with it, nothing reaches the attacker's address."""
    prof = mailing["instructor"]
    database = mailing["tmp"] / "course" / ".portal" / "portal.sqlite3"
    crafted = f"s5@example.edu\r\nBcc: {EVIL}"
    with sqlite3.connect(database) as db:
        db.execute("UPDATE users SET email = ? WHERE email = 's5@example.edu'", (crafted,))
        db.execute("UPDATE users SET name = ? WHERE email = 's6@example.edu'", (f"Six\r\nBcc: {EVIL}",))
    try:
        links = prof.post("/class/links").json()["links"]
        mailed = {entry["email"]: entry["mailed"] for entry in links}
        assert mailed[crafted] is False and mailed["s6@example.edu"] is False and mailed["s3@example.edu"] is True
        asker = Client(mailing["server"].url)
        asker.get("/signin")
        for typed in (crafted, f"s1@example.edu\r\nBcc: {EVIL}", f"s1@example.edu\nBcc: {EVIL}"):
            r = asker.post("/signin/link", {"email": typed})
            assert r.status_code in (200, 400), r.text
        state = settled(prof)
        assert all("\r" not in m["to"] and "\n" not in m["to"] for m in state["messages"])
        assert not mailbox.to(EVIL)
        assert all(EVIL not in str(m.get("Bcc", "")) + str(m["To"]) for m in mailbox.messages)
    finally:
        with sqlite3.connect(database) as db:
            db.execute("UPDATE users SET email = 's5@example.edu' WHERE email = ?", (crafted,))


def test_a_link_asked_for_with_another_host_still_points_at_the_portal(mailing, mailbox):
    """The classic reset-link poisoning: the request's Host is the attacker's; the mailed link is
    the portal's own address, as the server recorded it at its start."""
    asker = Client(mailing["server"].url)
    asker.get("/signin")
    settled(mailing["instructor"])  # every link mailed before has arrived
    before = len(mailbox.to("s4@example.edu", "Your sign-in link"))
    r = asker.post("/signin/link", {"email": "s4@example.edu"}, headers={"Host": "attacker.example"})
    assert r.status_code == 200, r.text
    settled(mailing["instructor"])
    mine = mailbox.to("s4@example.edu", "Your sign-in link")
    assert len(mine) == before + 1
    text = body(mine[-1])
    assert "attacker.example" not in text and f"{mailing['server'].url}/link/" in text


def test_the_class_pages_links_made_with_another_host_still_point_at_the_portal(mailing, mailbox):
    """Host header poisoning of the class page's links (the server started without --public-url):
    main built them from the request's Host, so a request naming the attacker's host made links
    to the attacker's site (the JSON, the page, the mail-merge CSV and the mail). Every one is
    the address the server recorded at its start."""
    prof, forged = mailing["instructor"], {"Host": "attacker.example"}
    settled(prof)
    before = len(mailbox.to("s3@example.edu", "Your sign-in link"))
    made = prof.post("/class/links", {"email": "s3@example.edu"}, headers=forged)
    assert made.status_code == 200, made.text
    (link,) = [entry["link"] for entry in made.json()["links"]]
    page = prof.http.post("/class/links", data={"email": "s3@example.edu", "csrf": prof.csrf},
                          headers={**forged, "Accept": "text/html"})  # fmt: skip
    merge = prof.post("/class/links", {"email": "s3@example.edu", "as": "csv"}, headers=forged)
    assert page.status_code == 200 and merge.status_code == 200
    settled(prof)
    mailed = mailbox.to("s3@example.edu", "Your sign-in link")
    assert len(mailed) == before + 3
    for text in (link, page.text, merge.text, *(body(m) for m in mailed[before:])):
        assert "attacker.example" not in text and f"{mailing['server'].url}/link/" in text
