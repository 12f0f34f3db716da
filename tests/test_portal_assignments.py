"""A student's pages: their submissions and uploads left, the daily limit, a submission's
status told as it changes, and what they never see: another student's submission, a
private test's board, the private results before their release."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.xdist_group(__name__)  # one worker: the module's fixture runs once

httpx = pytest.importorskip("httpx", reason="the portal's tests need httpx (pip install -e '.[test]')")
pytest.importorskip("starlette", reason='the portal needs its extra: pip install -e ".[portal]"')


from portal_server import (  # noqa: E402
    WRONG,
    library_result,
)


def test_a_student_sees_earlier_submissions_and_uploads_left_today(portal, graded_pair):
    page = portal["students"]["s1@example.edu"].get("/a/othello").json()
    ids = [s["id"] for s in page["submissions"]]
    assert {graded_pair[n]["id"] for n in ("negamax.py", "wrong_score.py")} <= set(ids)
    assert page["left_today"] == page["per_day"] - len(ids)
    html = portal["students"]["s1@example.edu"].html(f"/s/{graded_pair['negamax.py']['id']}").text
    assert graded_pair["negamax.py"]["public_symbols"] in html and "Receipt" in html


def test_a_submissions_page_is_told_its_status_by_server_sent_events(portal, graded_pair):
    """The live update's stream (static/live.js listens to it): a graded submission's says so and ends."""
    sid = graded_pair["wrong_score.py"]["id"]
    r = portal["students"]["s1@example.edu"].get(f"/s/{sid}/events")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
    assert r.text == "retry: 1000\ndata: graded\n\n"


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
    assert me.post("/class/release/undo", {"assignment": "othello"}).status_code == 404  # nor undo one
    assert instructor.post("/class/release/undo", {"assignment": "othello"}, csrf=False).status_code == 403
    assert me.get(f"/s/{sid}").json()["private_shown"] is True
    log = instructor.get("/class/audit").json()["entries"]
    assert {"by": "instructor@example.edu", "action": "release", "detail": "othello"}.items() <= log[-1].items()
    assert me.get("/class/audit").status_code == 404
    sheet = instructor.http.get("/class.csv").text.splitlines()
    assert sheet[0].startswith("name,email,othello total,othello max,othello symbols")
    row = next(line for line in sheet if "s1@example.edu" in line)
    assert f"{expected.total},{expected.max_total},{expected.symbols}" in row
    assert me.http.get("/class.csv").status_code == 404
