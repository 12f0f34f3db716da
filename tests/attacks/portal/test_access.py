"""Reaching what is another's: another student's submission by its id (pages, JSON, its live
stream), the staff's pages and downloads as a student or as nobody, an API token used beyond
the arena, ids too large for the database, a roster that would take the course's instructor
away."""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.xdist_group(__name__)  # one worker: the module's fixture runs once

httpx = pytest.importorskip("httpx", reason="the portal's tests need httpx (pip install -e '.[test]')")
pytest.importorskip("starlette", reason='the portal needs its extra: pip install -e ".[portal]"')

from sqlalchemy import select  # noqa: E402

from grader.errors import GraderError  # noqa: E402
from grader.portal.accounts.roster import RosterEntry, import_roster, read_roster  # noqa: E402
from grader.portal.database.db import connect, sessions, upgrade  # noqa: E402
from grader.portal.database.models import User  # noqa: E402

from portal_server import Client  # noqa: E402


def test_staff_see_a_students_history_and_the_queue_and_a_student_neither(portal, graded_pair):
    me, instructor = portal["students"]["s1@example.edu"], portal["instructor"]
    history = instructor.get("/class/othello/students/s1@example.edu").json()
    rows = history["submissions"]
    assert {graded_pair[n]["id"] for n in ("negamax.py", "wrong_score.py")} <= {r["id"] for r in rows}
    assert [r["received_at"] for r in rows] == sorted((r["received_at"] for r in rows), reverse=True)
    graded = [r for r in rows if r["status"] == "graded" or r["previous"]]
    assert [r["counts"] for r in rows if r["counts"]] == [True] and graded[0]["counts"]  # the latest graded
    staff = instructor.get(f"/s/{graded_pair['negamax.py']['id']}").json()
    row = next(r for r in rows if r["id"] == staff["id"])
    assert (row["symbols"], row["total"], row["late"], row["why"]) == (staff["symbols"], staff["total"], False,
                                                                       "on time")  # fmt: skip
    assert history["student"] == {"name": "Student 1", "email": "s1@example.edu"}
    page = instructor.html("/class/othello/students/s1@example.edu").text
    assert staff["symbols"] in page and "Student 1" in page
    assert instructor.get("/class/othello/students/nobody@example.edu").status_code == 404
    assert instructor.get("/class/nope/students/s1@example.edu").status_code == 404
    queue = instructor.get("/class/queue").json()
    assert queue["queued"] + queue["running"] == len(queue["jobs"])
    assert all(j["state"] in ("queued", "running") and (j["worker"] is not None) == (j["state"] == "running")
               for j in queue["jobs"])  # fmt: skip
    assert "Queue" in instructor.html("/class/queue").text
    html = {"Accept": "text/html"}
    for path in ("/class/queue", "/class/othello/students/s1@example.edu", "/class/othello/students/s2@example.edu"):
        assert me.get(path).status_code == 404, path  # a student's own history included: it is the staff's page
        r = me.http.get("/api" + path, headers=html)
        assert r.status_code == 404 and r.headers["content-type"].startswith("application/json"), path
        assert me.html(path).status_code == 404 and graded_pair["negamax.py"]["id"] not in me.html(path).text
        assert Client(portal["server"].url).get(path).status_code == 401


def test_an_api_token_is_good_for_the_arenas_and_the_ladders_api_only(portal):
    """A token made for ``grader arena`` does not sign an instructor's other requests (sign-in
    links for the class, the roster, exports) nor make more tokens: a leaked one reaches no further."""
    instructor = portal["instructor"]
    token = instructor.post("/arena/token", {"label": "cli"}).json()["token"]
    signed = httpx.Client(base_url=portal["server"].url, headers={"Authorization": f"Bearer {token}"}, timeout=30)
    try:
        for path in ("/api/arena", "/api/ladders"):  # what the command line asks
            assert signed.get(path).status_code == 200, path
        for method, path in (("POST", "/api/class/links"), ("GET", "/api/class"), ("GET", "/api/class.csv"),
                             ("POST", "/api/arena/token"), ("GET", "/api/")):  # fmt: skip
            r = signed.request(method, path, data={"email": "s1@example.edu", "label": "more"})
            assert r.status_code == 403 and "/link/" not in r.text and "grader_" not in r.text, (path, r.text)
            assert r.json()["error"].startswith("an API token signs the arena's and the ladders' requests only"), path
    finally:
        signed.close()


def test_an_arena_id_too_large_for_the_database_is_one_line_not_a_server_error(portal):
    """An id past what a table holds (SQLite: OverflowError) answers 404 or 400 in one line."""
    me, huge = portal["students"]["s2@example.edu"], "9" * 25
    for path in (f"/api/arena/e/{huge}", f"/api/arena/g/{huge}", f"/api/arena/g/{huge}/game.ggf"):
        r = me.get(path)
        assert r.status_code == 404 and "larger than any id" in r.json()["error"], path
    eid = me.post("/api/arena", {"name": "huge", "protocol": "nboard", "game": "othello"}).json()["id"]
    r = me.post(f"/api/arena/e/{eid}/tests", {"new": huge, "base": "1"})
    assert r.status_code == 400 and r.json()["error"].startswith(f"new '{huge}' is too large a number"), r.text


def test_a_roster_cannot_change_its_uploaders_own_role(portal):
    """An instructor's roster making themselves a student (so the course could lose its last
    instructor) is refused whole, and they stay an instructor."""
    instructor, me = portal["instructor"], portal["course"].instructors[0]
    sheet = f"Email,Name,Role\ns5@example.edu,Student Five,TA\n{me.upper()},Me,Student\n".encode()
    r = instructor.post("/class/roster", files={"roster": ("r.csv", sheet, "text/csv")})
    assert r.status_code == 400 and r.json()["error"] == (
        f"the roster makes you ({me.lower()}) a student: a roster cannot change its uploader's own role; "
        "give your row the role instructor"
    )
    assert instructor.get("/class/audit").status_code == 200  # still staff
    assert "s5@example.edu" in [s["email"] for s in instructor.get("/class").json()["students"]]  # nothing written
    same = f"Email,Name,Role\n{me},{me.split('@')[0]},Instructor\n".encode()
    assert instructor.post("/class/roster", files={"roster": ("r.csv", same, "text/csv")}).status_code == 200


def test_a_roster_cannot_demote_an_instructor_course_yaml_names(tmp_path):
    """course.yaml's instructors keep their role: a roster making one of them a student (the
    uploader being another instructor) is refused whole; only course.yaml changes it."""
    engine = connect(f"sqlite:///{tmp_path / 'portal.sqlite3'}")
    upgrade(engine)
    make = sessions(engine)
    yaml_names = ("head@example.edu", "second@example.edu")
    with make.begin() as s:
        import_roster(s, [RosterEntry(e, e, "instructor") for e in yaml_names])
    sheet = read_roster("Email,Name,Role\nnew@example.edu,New,Student\nSECOND@example.edu,Two,Student\n")
    with pytest.raises(GraderError) as e, make.begin() as s:
        head = s.scalar(select(User).where(User.email == "head@example.edu"))
        import_roster(s, sheet, head, yaml_names)
    assert str(e.value) == ("the roster makes second@example.edu a student, but course.yaml names them an "
                            "instructor: give their row the role instructor, or change course.yaml")  # fmt: skip
    with make() as s:
        assert {u.email: u.role for u in s.scalars(select(User))} == dict.fromkeys(yaml_names, "instructor")
    engine.dispose()


def test_a_student_cannot_reach_another_students_submission(portal, graded_pair):
    theirs = graded_pair["negamax.py"]["id"]
    other = portal["students"]["s2@example.edu"]
    assert len(theirs) >= 20 and re.fullmatch(r"[A-Za-z0-9_-]+", theirs)  # 128 random bits
    mine = portal["students"]["s1@example.edu"].get(f"/s/{theirs}")
    assert mine.status_code == 200
    for r in (other.get(f"/s/{theirs}"), other.html(f"/s/{theirs}")):
        assert r.status_code == 404 and theirs not in r.text and "negamax" not in r.text
    missing = other.get("/s/" + "A" * len(theirs))
    assert missing.status_code == 404 and missing.json()["error"] == other.get(f"/s/{theirs}").json()["error"]
    assert theirs not in other.get("/a/othello").text
    assert other.get("/class").status_code == 404  # the class table is staff's
    assert other.post("/class/links").status_code == 404
    anonymous = Client(portal["server"].url)
    assert anonymous.get(f"/s/{theirs}").status_code == 401
    assert other.get(f"/s/{theirs}/events").status_code == 404  # its page's live status too
    assert anonymous.get(f"/s/{theirs}/events").status_code == 401


def test_a_student_cannot_download_the_classs_results(portal, graded_pair):
    me = portal["students"]["s1@example.edu"]
    for path in ("/class/othello/gradescope.json", "/class/othello/run.zip"):
        for r in (me.get(path), me.html(path), me.http.get("/api" + path)):
            assert r.status_code == 403 and graded_pair["wrong_score.py"]["id"] not in r.text, (path, r.text)
        assert Client(portal["server"].url).get(path).status_code == 401
    for path in ("/class.csv", "/class/audit.csv"):  # the gradebook, the audit log: staff's pages
        for r in (me.get(path), me.html(path), me.http.get("/api" + path)):
            assert r.status_code == 404 and "s2@example.edu" not in r.text and "release" not in r.text, (path, r.text)
        assert Client(portal["server"].url).get(path).status_code == 401
    assert portal["instructor"].get("/class/no-such-lab/run.zip").status_code == 404
