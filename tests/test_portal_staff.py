"""The staff's pages: the class table, a student's history, the queue, reruns (asked, or
after a plan change), extensions, the late policy and the counted submission everywhere it
is used, and the similar submissions of an assignment."""

from __future__ import annotations

import csv
import datetime
import io
import time
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.xdist_group(__name__)  # one worker: the module's fixture runs once

httpx = pytest.importorskip("httpx", reason="the portal's tests need httpx (pip install -e '.[test]')")
pytest.importorskip("starlette", reason='the portal needs its extra: pip install -e ".[portal]"')


from grader.config import Config  # noqa: E402
from grader.files import SHARE  # noqa: E402
from grader.grading.plans import new_plan, write_plan_file  # noqa: E402

from portal_server import (  # noqa: E402
    GRADED_WITHIN,
    NEGAMAX,
    WRONG,
    Client,
    Server,
    make_course,
)


def test_the_class_table_shows_each_students_counted_submission(portal, graded_pair):
    table = portal["instructor"].get("/class").json()
    row = next(s for s in table["students"] if s["email"] == "s1@example.edu")
    latest = graded_pair["wrong_score.py"]  # uploaded last: the one that counts
    assert row["assignments"]["othello"]["submission"] == latest["id"]
    staff = portal["instructor"].get(f"/s/{latest['id']}").json()
    assert row["assignments"]["othello"]["symbols"] == staff["symbols"]
    assert all(s["assignments"]["othello"] is None for s in table["students"] if s["email"] != "s1@example.edu")


def test_an_instructor_reruns_a_students_counted_submission(portal, graded_pair):
    me, instructor = portal["students"]["s1@example.edu"], portal["instructor"]
    sid = graded_pair["wrong_score.py"]["id"]  # s1's counted submission: the latest graded
    left = me.get("/a/othello").json()["left_today"]
    assert me.post("/class/rerun", {"assignment": "othello"}).status_code == 404  # instructors only
    assert (
        instructor.post("/class/rerun", {"assignment": "othello", "email": "s1@example.edu"}, csrf=False).status_code
        == 403
    )
    r = instructor.post("/class/rerun", {"assignment": "othello", "email": "s1@example.edu"})
    assert r.status_code == 200, r.text
    assert r.json()["rerun"] == [{"email": "s1@example.edu", "submission": sid, "reason": "rerun by the instructor"}]
    # while it is rerun (or once it is), it still counts, with its old result meanwhile; asked again, nothing
    # else is rerun in its place (an earlier submission of s1's)
    again = instructor.post("/class/rerun", {"assignment": "othello", "email": "s1@example.edu"}).json()["rerun"]
    assert all(entry["submission"] == sid for entry in again)
    row = next(s for s in instructor.get("/class").json()["students"] if s["email"] == "s1@example.edu")
    assert row["assignments"]["othello"]["submission"] == sid
    after = me.graded(sid)
    assert after["status"] == "graded" and after["public_symbols"] == graded_pair["wrong_score.py"]["public_symbols"]
    previous = after["previous"]
    assert previous["reason"] == "rerun by the instructor"
    assert previous["public_symbols"] == graded_pair["wrong_score.py"]["public_symbols"]
    assert "total" not in previous and "symbols" not in previous  # private results not released: not shown
    staff = instructor.get(f"/s/{sid}").json()
    assert staff["previous"]["total"] == staff["total"] and staff["previous"]["symbols"] == staff["symbols"]
    assert "rerun by the instructor" in me.html(f"/s/{sid}").text
    assert me.get("/a/othello").json()["left_today"] == left  # a rerun takes none of the student's uploads
    reruns = [e for e in instructor.get("/class/audit").json()["entries"] if e["action"] == "rerun"]
    assert reruns and all(e["by"] == "instructor@example.edu" for e in reruns)
    assert reruns[0]["detail"] == "othello: s1@example.edu (rerun by the instructor)"
    missing = instructor.post("/class/rerun", {"assignment": "othello", "email": "nobody@example.edu"})
    assert missing.status_code == 404 and "no graded submission" in missing.json()["error"]


@pytest.mark.slow
def test_after_a_plan_change_every_counted_submission_is_rerun_and_says_why(tmp_path):
    course = make_course(tmp_path / "course")
    server = Server(course, tmp_path)
    try:
        instructor = Client(server.url)
        instructor.sign_in(server.link)
        link = instructor.post("/class/links", {"email": "s2@example.edu"}).json()["links"][0]["link"]
        me = Client(server.url)
        me.sign_in(link)
        sid = me.upload(WRONG).json()["id"]
        before = me.graded(sid)
        assert len(before["public_symbols"]) == 4
    finally:
        server.stop()
    plan = new_plan(Config(), "othello", boards=SHARE / "fixtures" / "standard.txt", public=6).plan
    write_plan_file(plan, course / "six-public.plan")
    text = (course / "course.yaml").read_text()
    (course / "course.yaml").write_text(text.replace("plan: othello-endgame.plan", "plan: six-public.plan"))
    server = Server(course, tmp_path)
    try:
        instructor = Client(server.url)
        instructor.sign_in(server.link)
        me.url = server.url
        me.http.base_url = server.url  # the same student, still signed in: the session's key is in the database
        for path in ("/class/othello/gradescope.json", "/class/othello/run.zip"):  # the old plan's tests: not yet
            r = instructor.get(path)
            assert r.status_code == 409 and "rerun them first" in r.json()["error"], r.text
        r = instructor.post("/class/rerun", {"assignment": "othello"})
        assert r.json()["rerun"] == [{"email": "s2@example.edu", "submission": sid, "reason": "the plan changed"}]
        after = me.graded(sid)
        assert len(after["public_symbols"]) == 6 and after["previous"]["public_symbols"] == before["public_symbols"]
        assert after["previous"]["reason"] == "the plan changed"
        assert "the plan changed" in me.html(f"/s/{sid}").text
        log = instructor.get("/class/audit").json()["entries"]
        assert log[-1]["action"] == "rerun" and "s2@example.edu (the plan changed)" in log[-1]["detail"]
        mine = instructor.get("/class/othello/gradescope.json").json()["students"]
        assert [len(s["results"]["tests"]) for s in mine] == [10]
    finally:
        server.stop()


@pytest.mark.slow
def test_an_extension_moves_a_students_deadlines_and_late_flag(tmp_path):
    course = make_course(tmp_path / "course")
    now = datetime.datetime.now(datetime.timezone.utc)
    deadline, hard = now - datetime.timedelta(days=2), now - datetime.timedelta(hours=1)
    text = (
        (course / "course.yaml")
        .read_text()
        .replace(
            "per_day: 3",
            f"per_day: 3\n    deadline: {deadline:%Y-%m-%d %H:%M}\n    hard_deadline: {hard:%Y-%m-%d %H:%M}",
            1,
        )
    )
    (course / "course.yaml").write_text(text)
    server = Server(course, tmp_path)
    try:
        instructor = Client(server.url)
        instructor.sign_in(server.link)
        made = instructor.post("/class/links").json()["links"]
        me, other = Client(server.url), Client(server.url)
        me.sign_in(next(m["link"] for m in made if m["email"] == "s1@example.edu"))
        other.sign_in(next(m["link"] for m in made if m["email"] == "s2@example.edu"))
        closed = me.upload(NEGAMAX)
        assert closed.status_code == 400 and "closed" in closed.json()["error"]
        grant = {"assignment": "othello", "email": "s1@example.edu"}
        assert me.post("/class/extension", {**grant, "days": "3"}).status_code == 404  # instructors only
        assert instructor.post("/class/extension", {**grant, "days": "3"}, csrf=False).status_code == 403
        for bad in ("-1", "two", "1000", ""):
            r = instructor.post("/class/extension", {**grant, "days": bad})
            assert r.status_code == 400 and "days must be a whole number" in r.json()["error"], bad
        r = instructor.post("/class/extension", {"assignment": "othello", "email": "nobody@example.edu", "days": "1"})
        assert r.status_code == 404
        r = instructor.post("/class/extension", {**grant, "days": "1"})  # open again, but still past the deadline
        assert r.status_code == 200 and r.json()["extension_days"] == 1, r.text
        page = me.get("/a/othello").json()
        assert page["extension_days"] == 1
        assert (
            datetime.datetime.fromisoformat(page["hard_deadline"])
            > now
            > datetime.datetime.fromisoformat(page["deadline"])
        )
        first = me.upload(NEGAMAX)
        assert first.status_code == 201 and first.json()["late"] is True, first.text
        instructor.post("/class/extension", {**grant, "days": "3"})  # the latest grant holds
        receipt = me.upload(NEGAMAX)
        assert receipt.status_code == 201 and receipt.json()["late"] is False
        assert me.get(f"/s/{first.json()['id']}").json()["late"] is False  # made before the grant: it follows too
        instructor.post("/class/extension", {**grant, "days": "1"})
        assert [s["late"] for s in me.get("/a/othello").json()["submissions"]] == [True, True]
        instructor.post("/class/extension", {**grant, "days": "3"})
        assert "with your extension of 3 days" in me.html("/a/othello").text
        assert other.upload(NEGAMAX).status_code == 400  # the others' deadlines stay
        assert other.get("/a/othello").json()["extension_days"] == 0
        log = instructor.get("/class/audit").json()["entries"]
        grants = [e["detail"] for e in log if e["action"] == "extension"]
        assert grants == [f"othello: s1@example.edu {n} day(s)" for n in (1, 3, 1, 3)]
    finally:
        server.stop()


def policy_course(folder: Path, policy: str) -> Path:
    """make_course's course, its Othello lab due 36 hours ago (closing in a day) with ``policy``'s
    keys, and a budget of one late day."""
    course = make_course(folder)
    now = datetime.datetime.now(datetime.timezone.utc)
    deadline, hard = now - datetime.timedelta(hours=36), now + datetime.timedelta(days=1)
    text = (course / "course.yaml").read_text().replace("upload_kb: 16", "upload_kb: 16\nlate_days: 1")
    text = text.replace("per_day: 3", f"per_day: 3\n    deadline: {deadline:%Y-%m-%d %H:%M}\n"
                                      f"    hard_deadline: {hard:%Y-%m-%d %H:%M}\n    {policy}", 1)  # fmt: skip
    (course / "course.yaml").write_text(text)
    return course


@pytest.mark.slow  # a server of its own, two scripts graded: 5-10 s
def test_the_late_policy_and_the_best_submission_everywhere_a_counted_one_is_used(tmp_path):
    course = policy_course(tmp_path / "course", "late_penalty: 10%\n    counts: best")
    server = Server(course, tmp_path)
    try:
        instructor = Client(server.url)
        instructor.sign_in(server.link)
        me = Client(server.url)
        me.sign_in(instructor.post("/class/links", {"email": "s3@example.edu"}).json()["links"][0]["link"])
        before = me.get("/a/othello").json()
        assert before["late_days_left"] == 1 and before["counts"] == "best"
        assert before["upload_now"] == {"days_late": 2, "late_days": 1, "penalty": 0.1}  # 36 hours: 2 started days
        assert "An upload now is 2 days late: if it counts, it spends 1 late day and costs 10% of its total" in (
            me.html("/a/othello").text
        )
        first = me.graded(me.upload(NEGAMAX).json()["id"])
        last = me.graded(me.upload(WRONG).json()["id"])  # the latest, its total lower on a machine not overloaded
        totals = [instructor.get(f"/s/{s['id']}").json()["total"] for s in (first, last)]
        best = first if totals[0] > totals[1] else last  # the same penalty on both: ties go to the latest
        staff = instructor.get(f"/s/{best['id']}").json()
        row = next(s for s in instructor.get("/class").json()["students"] if s["email"] == "s3@example.edu")
        cell = row["assignments"]["othello"]
        assert cell["submission"] == best["id"] and cell["total"] == staff["total"] and row["late_days_used"] == 1
        assert (cell["days_late"], cell["late_days"], cell["penalty"]) == (2, 1, 0.1)
        assert cell["score"] == round(staff["total"] * 0.9, 2)
        assert cell["why"] == f"2 days late: 1 day of late days spent, 10% penalty (graded {staff['total']:g})"
        assert cell["why"] in instructor.html("/class").text
        sheet = list(csv.DictReader(io.StringIO(instructor.http.get("/class.csv").text)))
        mine = next(r for r in sheet if r["email"] == "s3@example.edu")
        expected = (str(staff["total"]), str(cell["score"]), "10%")
        assert (mine["othello total"], mine["othello score"], mine["othello penalty"]) == expected
        assert mine["othello why"] == cell["why"] and mine["late days used"] == "1"
        page = me.get("/a/othello").json()
        assert page["late_days_left"] == 0
        assert [s["id"] for s in page["submissions"] if s["counts"]] == [best["id"]]
        assert page["upload_now"] == {"days_late": 2, "late_days": 1, "penalty": 0.1}  # its own late day again
        scores = instructor.get("/class/othello/gradescope.json").json()["students"]
        assert [s["submission"] for s in scores] == [best["id"]]
        run = zipfile.ZipFile(io.BytesIO(instructor.http.get("/class/othello/run.zip").content))
        script = NEGAMAX if best is first else WRONG
        assert run.read("othello/submissions/s3@example.edu/submission.py") == script.read_bytes()
        rerun = instructor.post("/class/rerun", {"assignment": "othello", "email": "s3@example.edu"}).json()
        assert [r["submission"] for r in rerun["rerun"]] == [best["id"]]
    finally:
        server.stop()


@pytest.mark.slow  # a server of its own, grading a script that sleeps 2 s on each of 10 tests: 30-40 s
def test_the_queue_shows_the_running_job_its_worker_and_the_one_waiting_and_the_history_every_submission(tmp_path):
    course = policy_course(tmp_path / "course", "late_penalty: 10%")
    sleeper = b"import time\ntime.sleep(2)\n"  # 20 s of grading at least: the one worker is busy meanwhile
    server = Server(course, tmp_path)
    try:
        instructor = Client(server.url)
        instructor.sign_in(server.link)
        me = Client(server.url)
        me.sign_in(instructor.post("/class/links", {"email": "s4@example.edu"}).json()["links"][0]["link"])
        slow = me.upload(sleeper, name="sleeper.py").json()["id"]
        deadline = time.monotonic() + GRADED_WITHIN
        while not [j for j in instructor.get("/class/queue").json()["jobs"] if j["state"] == "running"]:
            assert time.monotonic() < deadline, "the sleeper was never claimed"
            time.sleep(0.2)
        waiting = me.upload(NEGAMAX).json()["id"]
        queue = instructor.get("/class/queue").json()
        assert [(j["submission"], j["state"], j["student"]) for j in queue["jobs"]] == [
            (slow, "running", "s4@example.edu"), (waiting, "queued", "s4@example.edu")]  # fmt: skip
        running, queued = queue["jobs"]
        assert running["worker"] and running["claimed_at"] and running["attempts"] == 1 and running["age_seconds"] >= 0
        assert queued["worker"] is None and queued["claimed_at"] is None
        assert (queue["queued"], queue["running"]) == (1, 1)
        assert running["worker"] in instructor.html("/class/queue").text
        me.graded(slow)
        me.graded(waiting)
        assert instructor.get("/class/queue").json() == {"queued": 0, "running": 0, "jobs": [], "csrf": instructor.csrf}
        instructor.post("/class/rerun", {"assignment": "othello", "email": "s4@example.edu"})
        me.graded(waiting)
        history = instructor.get("/class/othello/students/s4@example.edu").json()
        rows = history["submissions"]
        assert [(r["id"], r["counts"], r["late"]) for r in rows] == [(waiting, True, True), (slow, False, True)]
        assert rows[0]["previous"]["reason"] == "rerun by the instructor" and rows[1]["previous"] is None
        assert all(
            r["why"] == f"2 days late: 1 day of late days spent, 10% penalty (graded {r['total']:g})" for r in rows
        )
        assert rows[0]["score"] == round(rows[0]["total"] * 0.9, 2) and history["late_days_used"] == 1
        page = instructor.html("/class/othello/students/s4@example.edu").text
        assert "rerun by the instructor" in page and "sleeper.py" in page
    finally:
        server.stop()


@pytest.mark.slow  # a server of its own, three scripts graded: 10-20 s
def test_staff_see_an_assignments_similar_submissions_and_a_student_does_not(tmp_path):
    pytest.importorskip("copydetect", reason="the similarity report needs copydetect: pip install -e '.[similarity]'")
    course = make_course(tmp_path / "course")
    server = Server(course, tmp_path)
    try:
        instructor = Client(server.url)
        instructor.sign_in(server.link)
        students = {}
        for email in ("s4@example.edu", "s5@example.edu", "s6@example.edu"):
            students[email] = Client(server.url)
            students[email].sign_in(instructor.post("/class/links", {"email": email}).json()["links"][0]["link"])
        renamed = NEGAMAX.read_text().replace("board", "grid").replace("score", "value").encode()
        for email, script in (("s4@example.edu", NEGAMAX.read_bytes()), ("s5@example.edu", renamed),
                              ("s6@example.edu", WRONG.read_bytes())):  # fmt: skip
            me = students[email]
            assert me.graded(me.upload(script).json()["id"])["status"] == "graded"
        data = instructor.get("/class/othello/similar").json()
        assert "pairs" in data, data
        top = data["pairs"][0]
        assert (top["left"], top["right"]) == ("s4@example.edu", "s5@example.edu") and top["similarity"] > 0.9
        assert data["compared"] == 3
        page = instructor.html("/class/othello/similar")
        assert page.status_code == 200 and "s5@example.edu" in page.text and "<mark>" in page.text
        assert "copied" not in page.text.lower() and "Similar submissions: Othello endgame lab" in page.text
        assert "style-src 'sha256-" in page.headers["content-security-policy"]
        assert "/class/othello/similar" in instructor.html("/class").text
        for r in (students["s4@example.edu"].html("/class/othello/similar"),
                  students["s4@example.edu"].get("/api/class/othello/similar")):  # fmt: skip
            assert r.status_code == 403 and "s5@example.edu" not in r.text
        assert Client(server.url).get("/class/othello/similar").status_code == 401
        none = instructor.get("/class/tictactoe/similar")
        assert none.status_code == 409 and "0 counted submission(s): a report needs two or more" in none.text
    finally:
        server.stop()


def test_the_class_table_shows_a_page_of_students_at_a_time_filtered_and_sorted_over_the_whole_class(tmp_path):
    """A class of 230 students: its table shows 100 a page, with links to the others that keep
    the filter and the sort; a filter or a sort asks for the whole class, not the page shown."""
    import re

    from grader.portal.pages.classview import PAGE

    course = make_course(tmp_path / "course")
    emails = [f"p{i:03d}@example.edu" for i in range(230)]
    (course / "roster.csv").write_text("Email,Name\n" + "".join(f"{e},Student {e[:4]}\n" for e in emails))
    server = Server(course, tmp_path)
    try:
        staff = Client(server.url)
        staff.sign_in(server.link)
        rows = lambda html: re.findall(r"<small>(p\d{3}@example\.edu)</small>", html)  # noqa: E731
        first = staff.html("/class").text
        assert PAGE == 100 and rows(first) == emails[:100]
        assert "Page 1 of 3" in first and "students 1 to 100 of 230" in first
        assert '<a href="/class?page=3">3</a>' in first and 'data-pages="3"' in first
        last = staff.html("/class?page=3").text
        assert rows(last) == emails[200:] and "students 201 to 230 of 230" in last
        assert rows(staff.html("/class?page=9").text) == emails[200:]  # past the last page: the last one
        found = staff.html("/class?q=p22").text  # on the third page: found from the first
        assert rows(found) == emails[220:230] and "Page 1 of" not in found and 'data-pages="1"' in found
        backwards = staff.html("/class?sort=&order=desc&page=2").text
        assert rows(backwards) == emails[::-1][100:200]
        assert '<a href="/class?order=desc&amp;page=3">3</a>' in backwards  # the pages keep the sort
        # the heading sorted by asks for the other way, keeping the filter
        assert '<a class="sort" href="/class?q=p2">Student</a>' in staff.html("/class?q=p2&order=desc").text
        assert len(staff.get("/class").json()["students"]) == 230  # the JSON: the whole class
    finally:
        server.stop()


def test_the_class_tables_page_number_is_ascii_digits_or_the_first_page():
    """``?page=²`` or a number of thousands of digits: the first page, not a server error."""
    from grader.portal.pages.classview import table_view

    data = {"assignments": {}, "students": [{"name": f"S{i}", "email": f"s{i}@x.edu", "assignments": {},
                                             "late_days_used": 0} for i in range(3)]}  # fmt: skip
    for asked in ("²", "٣", "9" * 5000, "-1", "x"):
        assert table_view(data, {"page": asked})["page"] == 1, asked
    assert table_view(data, {"page": "1"})["page"] == 1
