"""Regrade requests attacked: a student asking on another's submission, reading another's
requests and answers, answering (their own or another's), asking past the course's number,
and the forms sent without their CSRF token."""

from __future__ import annotations

import pytest

pytest.importorskip("httpx", reason="the portal's tests need httpx (pip install -e '.[test]')")
pytest.importorskip("starlette", reason='the portal needs its extra: pip install -e ".[portal]"')
pytestmark = pytest.mark.xdist_group(__name__)  # its tests build on each other's state, in order

from portal_server import Client  # noqa: E402

SECRET = "my reason is between me and the staff"


@pytest.fixture(scope="module")
def asked(portal, graded_pair):
    """Student 1's request on their graded negamax.py: its id and the submission's."""
    me = portal["students"]["s1@example.edu"]
    sid = graded_pair["negamax.py"]["id"]
    r = me.post(f"/s/{sid}/regrade", {"reason": SECRET})
    assert r.status_code == 201, r.text
    return {"id": r.json()["id"], "submission": sid}


def _requests(portal) -> list[dict]:
    staff = portal["instructor"].get("/class/regrades").json()
    return staff["open"] + staff["answered"]


def test_a_student_cannot_ask_on_another_students_submission(portal, graded_pair, asked):
    other = portal["students"]["s2@example.edu"]
    before = len(_requests(portal))
    r = other.post(f"/s/{graded_pair['wrong_score.py']['id']}/regrade", {"reason": "mine now"})
    assert r.status_code == 404  # as a submission that does not exist
    assert other.post("/s/no-such-submission/regrade", {"reason": "x"}).status_code == 404
    assert len(_requests(portal)) == before
    assert Client(portal["server"].url).post(f"/s/{asked['submission']}/regrade", {"reason": "x"}).status_code in (
        401, 403)  # fmt: skip


def test_a_student_cannot_see_another_students_requests_or_answers(portal, asked):
    other = portal["students"]["s2@example.edu"]
    for path in (f"/s/{asked['submission']}", "/class/regrades"):
        assert other.get(path).status_code == 404, path
        page = other.html(path)
        assert page.status_code == 404 and SECRET not in page.text, path
    mine = portal["students"]["s1@example.edu"]
    assert mine.get("/class/regrades").status_code == 404  # the queue is the staff's: one's own requests too
    assert Client(portal["server"].url).get("/class/regrades").status_code == 401


def test_a_student_cannot_answer_a_request(portal, asked):
    for email in ("s1@example.edu", "s2@example.edu"):  # their own request, and another's
        r = portal["students"][email].post(f"/class/regrades/{asked['id']}", {"reply": "granted", "rerun": "on"})
        assert r.status_code == 404, email
    state = next(q for q in _requests(portal) if q["id"] == asked["id"])
    assert state["state"] == "open" and state["reply"] is None and state["done"] == []


def test_asking_past_the_courses_number_is_refused(portal, graded_pair, asked):
    me, prof = portal["students"]["s1@example.edu"], portal["instructor"]
    assert prof.post(f"/class/regrades/{asked['id']}", {"reply": "Looked again: no change."}).status_code == 200
    other_sub = graded_pair["wrong_score.py"]["id"]
    assert me.post(f"/s/{other_sub}/regrade", {"reason": "second"}).status_code == 201  # 2 a course by default
    r = me.post(f"/s/{asked['submission']}/regrade", {"reason": "third"})
    assert r.status_code == 400 and "the 2 regrade request(s) the course allows" in r.text
    assert sum(q["student"]["email"] == "s1@example.edu" for q in _requests(portal)) == 2


def test_the_regrade_forms_without_their_csrf_token_do_nothing(portal, graded_pair):
    me, prof = portal["students"]["s3@example.edu"], portal["instructor"]
    mine = portal["students"]["s1@example.edu"]
    before = _requests(portal)
    r = mine.post(f"/s/{graded_pair['negamax.py']['id']}/regrade", {"reason": "forged"}, csrf=False)
    assert r.status_code == 403
    opened = [q for q in before if q["state"] == "open"]
    assert opened, before
    r = prof.post(f"/class/regrades/{opened[0]['id']}", {"reply": "forged"}, csrf=False)
    assert r.status_code == 403
    assert _requests(portal) == before
    assert me.get("/").status_code == 200
