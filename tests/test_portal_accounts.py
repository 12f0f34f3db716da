"""Accounts over HTTP: sign-in links used once, passwords and the guessing limit, the
session cookie's flags, API tokens, and the roster (read as LMS gradebooks export it,
imported by an instructor, never changing the uploader's own role)."""

from __future__ import annotations

import sqlite3

import pytest

pytestmark = pytest.mark.xdist_group(__name__)  # one worker: the module's fixture runs once

httpx = pytest.importorskip("httpx", reason="the portal's tests need httpx (pip install -e '.[test]')")
pytest.importorskip("starlette", reason='the portal needs its extra: pip install -e ".[portal]"')


from grader.errors import GraderError  # noqa: E402
from grader.portal.accounts.roster import read_roster  # noqa: E402

from portal_server import (  # noqa: E402
    Client,
    Server,
    make_course,
)


def test_an_instructor_imports_a_roster_in_the_browser(portal):
    me, instructor = portal["students"]["s1@example.edu"], portal["instructor"]
    sheet = b"Student,SIS Login ID,Role\nStudent 6,s6@example.edu,Student\nTess Assistant,TA1@example.edu,TA\n"
    files = {"roster": ("gradebook export.csv", sheet, "text/csv")}
    assert me.post("/class/roster", files=files).status_code == 404  # instructors only
    assert instructor.post("/class/roster", files=files, csrf=False).status_code == 403
    r = instructor.post("/class/roster", files=files)
    assert r.status_code == 200, r.text
    assert {k: v for k, v in r.json().items() if k != "csrf"} == {"file": "gradebook export.csv", "people": 2,
                                                                  "added": 1, "updated": 1}  # fmt: skip
    log = instructor.get("/class/audit").json()["entries"]
    assert log[-1]["action"] == "roster upload" and log[-1]["detail"] == "gradebook export.csv: 2 people, 1 added"
    r = instructor.post("/class/roster", files=files)
    assert r.json()["added"] == 0  # imported again: nothing new
    assert "ta1@example.edu" not in [s["email"] for s in instructor.get("/class").json()["students"]]  # a TA
    bad = {"roster": ("r.csv", b"Email,Name\ns9@example.edu,Nine\nnine-at-example,Nine\n", "text/csv")}
    r = instructor.post("/class/roster", files=bad)
    assert r.status_code == 400 and r.json()["error"] == (
        "r.csv: line 3: 'nine-at-example' is not an e-mail address: give each person's address in the e-mail column"
    )
    assert "s9@example.edu" not in instructor.get("/class").text  # nothing of a bad file is imported
    page = instructor.http.post("/class/roster", data={"csrf": instructor.csrf}, files=bad,
                                headers={"Accept": "text/html"})  # fmt: skip
    assert page.status_code == 400 and "line 3: &#39;nine-at-example&#39; is not an e-mail address" in page.text
    latin = {"roster": ("r.csv", "Email,Name\nz@example.edu,Zoë\n".encode("latin-1"), "text/csv")}
    r = instructor.post("/class/roster", files=latin)
    assert r.status_code == 400 and r.json()["error"] == "r.csv: not UTF-8 text: export the roster as CSV (UTF-8)"


@pytest.mark.slow  # five argon2 hashings: over a second on a loaded machine
def test_changing_a_password_needs_the_current_one(portal):
    """A stolen session cannot lock the owner out: a password once set is changed only with it
    (a wrong one counts against the sign-in limit, as a wrong sign-in does)."""
    me = portal["students"]["s4@example.edu"]
    assert me.post("/password", {"password": "first password 1"}).json()["password_set"] is True  # none before
    r = me.post("/password", {"password": "thief's password"})
    assert r.status_code == 403 and r.json()["error"] == "give your current password ('current') to change it"
    r = me.post("/password", {"current": "a guess at it", "password": "thief's password"})
    assert r.status_code == 403 and r.json()["error"] == "the current password is wrong: give the one you sign in with"
    assert me.post("/password", {"current": "first password 1", "password": "second password 2"}).status_code == 200
    owner = Client(portal["server"].url)
    owner.get("/signin")
    assert owner.post("/signin", {"email": "s4@example.edu", "password": "second password 2"}).status_code == 200
    page = me.html("/").text
    assert 'name="current"' in page and 'autocomplete="current-password"' in page


def _cookie(r: httpx.Response) -> list[str]:
    """The session cookie's attributes as Set-Cookie gives them (its value left out), lower case."""
    (header,) = [h for h in r.headers.get_list("set-cookie") if h.startswith("grader_session=")]
    return sorted(part.strip().lower() for part in header.split(";")[1:])


def test_the_session_cookie_is_httponly_lax_and_secure_behind_a_tls_proxy(portal):
    """Over http: HttpOnly, SameSite=Lax, not Secure; through a proxy uvicorn trusts (this
    machine, by default) that says X-Forwarded-Proto: https, Secure too."""
    url = portal["server"].url
    plain = _cookie(httpx.get(url + "/signin"))
    assert "httponly" in plain and "samesite=lax" in plain and "secure" not in plain
    proxied = _cookie(httpx.get(url + "/signin", headers={"X-Forwarded-Proto": "https"}))
    assert "httponly" in proxied and "samesite=lax" in proxied and "secure" in proxied


@pytest.mark.slow  # two servers of their own
def test_the_session_cookie_is_secure_at_an_https_public_url_and_an_untrusted_proxy_is_ignored(tmp_path):
    course = make_course(tmp_path / "course")
    public = Server(course, tmp_path, None, "--workers", "0", "--public-url", "https://grader.example.edu/")
    try:
        assert public.link.startswith("https://grader.example.edu/link/")
        assert f"Portal at {public.url}/, reached at https://grader.example.edu/ " in "".join(public.lines)
        assert "secure" in _cookie(httpx.get(public.url + "/signin"))  # the proxy's https is not needed to say so
    finally:
        public.stop()
    untrusting = Server(course, tmp_path, None, "--workers", "0", "--forwarded-allow-ips", "10.9.9.9")
    try:
        said = _cookie(httpx.get(untrusting.url + "/signin", headers={"X-Forwarded-Proto": "https"}))
        assert "secure" not in said and "httponly" in said  # this machine is no trusted proxy here
    finally:
        untrusting.stop()


def test_a_sign_in_link_works_once(portal):
    links = portal["instructor"].post("/class/links", {"email": "s6@example.edu"}).json()["links"]
    assert [entry["email"] for entry in links] == ["s6@example.edu"]
    first, second = Client(portal["server"].url), Client(portal["server"].url)
    first.sign_in(links[0]["link"])
    path = links[0]["link"][len(second.url) :]
    second.get(path)
    r = second.post(path)
    assert r.status_code == 400 and "used already" in r.json()["error"]
    assert second.get("/").status_code == 401 and second.html("/").status_code == 303  # not signed in


def test_a_password_signs_in_and_guessing_is_stopped(portal):
    me = portal["students"]["s3@example.edu"]
    assert me.post("/password", {"password": "short"}).status_code == 400
    assert me.post("/password", {"password": "correct horse battery"}).json()["password_set"] is True
    with sqlite3.connect(portal["course"].folder / ".portal" / "portal.sqlite3") as db:
        (stored,) = db.execute("SELECT password_hash FROM users WHERE email = 's3@example.edu'").fetchone()
    assert stored.startswith("$argon2id$") and "correct horse" not in stored
    other = Client(portal["server"].url)
    other.get("/signin")
    r = other.post("/signin", {"email": "S3@example.edu", "password": "correct horse battery"})
    assert r.status_code == 200 and r.json()["signed_in"]["email"] == "s3@example.edu"
    assert other.post("/signout").status_code == 200 and other.get("/").status_code == 401
    guesser = Client(portal["server"].url)
    guesser.get("/signin")
    codes = [
        guesser.post("/signin", {"email": "s3@example.edu", "password": f"guess {i}"}).status_code for i in range(5)
    ]
    assert codes == [401] * 5
    blocked = guesser.post("/signin", {"email": "s3@example.edu", "password": "correct horse battery"})
    assert blocked.status_code == 429 and "too many failed sign-ins" in blocked.json()["error"]


@pytest.mark.parametrize(
    "csv, people",
    [
        ("Email,Name\nAda@Example.edu,Ada Lovelace\n", [("ada@example.edu", "Ada Lovelace", "student")]),
        ("\ufeffLast Name,First Name,Email,Role\nTuring,Alan,alan@x.org,TA\n\n", [("alan@x.org", "Alan Turing", "ta")]),
        (
            "Student,ID,SIS Login ID,Section\nHopper; Grace,7,grace@x.org,A\n",
            [("grace@x.org", "Hopper; Grace", "student")],
        ),
    ],
)
def test_a_roster_is_read_as_lms_gradebooks_export_it(csv, people):

    assert [(p.email, p.name, p.role) for p in read_roster(csv)] == people


@pytest.mark.parametrize(
    "csv, message",
    [
        ("Name\nAda\n", "roster: no e-mail column in the header ['Name']: name one Email"),
        (
            "Email,Name\nnot-an-address,Ada\n",
            "roster: line 2: 'not-an-address' is not an e-mail address: give each person's address in the e-mail column",
        ),
        (
            "Email,Role\na@x.org,dean\n",
            "roster: line 2: role 'dean' is not one of student, ta, instructor: write one of them",
        ),
    ],
)
def test_a_bad_roster_is_one_line_naming_the_line(csv, message):

    with pytest.raises(GraderError) as e:
        read_roster(csv)
    assert str(e.value) == message
