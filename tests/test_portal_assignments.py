"""A student's pages: their submissions and uploads left, the daily limit, a submission's
status told as it changes, and what they never see: another student's submission, a
private test's board, the private results before their release."""

from __future__ import annotations

import json
import re
import threading

import pytest

httpx = pytest.importorskip("httpx", reason="the portal's tests need httpx (pip install -e '.[test]')")
pytest.importorskip("starlette", reason='the portal needs its extra: pip install -e ".[portal]"')


from portal_server import (  # noqa: E402
    WRONG,
    Client,
    library_result,
)


def test_a_student_sees_earlier_submissions_and_uploads_left_today(portal, graded_pair):
    page = portal["students"]["s1@example.edu"].get("/a/othello").json()
    ids = [s["id"] for s in page["submissions"]]
    assert {graded_pair[n]["id"] for n in ("negamax.py", "wrong_score.py")} <= set(ids)
    assert page["left_today"] == page["per_day"] - len(ids)
    html = portal["students"]["s1@example.edu"].html(f"/s/{graded_pair['negamax.py']['id']}").text
    assert graded_pair["negamax.py"]["public_symbols"] in html and "Receipt" in html


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


def test_a_submissions_page_is_told_its_status_by_server_sent_events(portal, graded_pair):
    """The live update's stream (static/live.js listens to it): a graded submission's says so and ends."""
    sid = graded_pair["wrong_score.py"]["id"]
    r = portal["students"]["s1@example.edu"].get(f"/s/{sid}/events")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
    assert r.text == "retry: 1000\ndata: graded\n\n"


def test_a_private_tests_board_never_reaches_a_student(portal):
    """A script that prints its board: the boards of private tests are in the staff's view, never in the student's."""
    tmp = portal["tmp"]
    script = tmp / "prints_its_board.py"
    script.write_text('import sys\nprint("score 0 board", sys.argv[1], sys.argv[2])\nprint("no move")\n')
    me = portal["students"]["s3@example.edu"]
    sid = me.upload(script, name="prints_its_board.py").json()["id"]
    seen = me.graded(sid)
    plan = portal["course"].assignments["othello"].plan
    private = [p.board_string() for i, p in enumerate(plan.positions, 1) if not plan.is_public(i)]
    public = [p.board_string() for i, p in enumerate(plan.positions, 1) if plan.is_public(i)]
    staff = portal["instructor"].get(f"/s/{sid}").json()["full_feedback"]
    assert any(b in staff for b in private)  # printed by the script, and kept for staff
    assert any(b in seen["feedback"] for b in public)  # public boards are shown to the student
    for page in (me.get(f"/s/{sid}").text, me.html(f"/s/{sid}").text, me.get("/a/othello").text,
                 me.html("/a/othello").text, me.get("/").text):  # fmt: skip
        assert not any(b in page for b in private)


def test_the_daily_limit_refuses_the_upload_past_it(portal):
    me = portal["students"]["s5@example.edu"]
    per_day = portal["course"].assignments["othello"].per_day
    assert per_day == 3
    codes = []
    lock = threading.Lock()

    def one() -> None:
        c = httpx.Client(base_url=me.url, cookies=me.http.cookies, headers={"Accept": "application/json"}, timeout=30)
        r = c.post("/a/othello", data={"csrf": me.csrf}, files={"script": ("m.py", b"print(19)\n")})
        with lock:
            codes.append(r.status_code)

    threads = [threading.Thread(target=one) for _ in range(per_day + 3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(codes) == [201] * per_day + [429] * 3
    page = me.get("/a/othello").json()
    assert page["left_today"] == 0 and len(page["submissions"]) == per_day


def test_private_results_are_shown_once_released_without_their_boards(portal, graded_pair):
    me, instructor = portal["students"]["s1@example.edu"], portal["instructor"]
    sid = graded_pair["wrong_score.py"]["id"]
    before = me.get(f"/s/{sid}").json()
    assert before["private_shown"] is False and "private" not in before and "total" not in before
    assert me.post("/class/release", {"assignment": "othello"}).status_code == 404  # a student cannot release
    assert instructor.post("/class/release", {"assignment": "othello"}, csrf=False).status_code == 403
    assert me.get(f"/s/{sid}").json()["private_shown"] is False
    assert instructor.post("/class/release", {"assignment": "othello"}).json() == {"released": "othello"}
    after = me.get(f"/s/{sid}").json()
    course = portal["course"]
    plan = course.assignments["othello"].plan
    expected = library_result(course, WRONG)
    assert after["private_shown"] is True and after["total"] == expected.total
    private = [t for t in expected.tests if not plan.is_public(t.index)]
    assert [(p["index"], p["symbol"], p["credit"]) for p in after["private"]] == [
        (t.index, t.symbol, t.verdict.credit) for t in private
    ]
    html = me.html(f"/s/{sid}").text
    for text in (json.dumps(after), html):
        assert not any(t.position.board_string() in text for t in private)  # private_boards: false
    assert "Private tests" in html
    log = instructor.get("/class/audit").json()["entries"]
    assert {"by": "instructor@example.edu", "action": "release", "detail": "othello"}.items() <= log[-1].items()
    assert me.get("/class/audit").status_code == 404
    sheet = instructor.http.get("/class.csv").text.splitlines()
    assert sheet[0].startswith("name,email,othello total,othello max,othello symbols")
    row = next(line for line in sheet if "s1@example.edu" in line)
    assert f"{expected.total},{expected.max_total},{expected.symbols}" in row
    assert me.http.get("/class.csv").status_code == 404
