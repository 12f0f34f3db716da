"""Hand grading's pages attacked: another student's code and comments by guessing its id, a
grade or a comment posted by a student, a TA under anonymous grading looking for a name, and
hand grading that is not released looked for in every page and JSON of the student's."""

from __future__ import annotations

import secrets

import pytest

httpx = pytest.importorskip("httpx", reason="the portal's tests need httpx (pip install -e '.[test]')")
pytest.importorskip("starlette", reason='the portal needs its extra: pip install -e ".[portal]"')
pytest.importorskip("pygments", reason='the portal needs its extra: pip install -e ".[portal]"')

from test_portal_hand import PEOPLE, TA, _reachable, hand  # noqa: E402, F401 (a fixture)

SECRET = "a remark only staff have seen yet"


def test_a_student_never_opens_another_students_code_or_comments(hand):  # noqa: F811
    ada, alan, ta = hand["people"]["ada@example.edu"], hand["people"]["alan@example.edu"], hand["people"][TA[0]]
    theirs = hand["subs"]["ada@example.edu"]["id"]
    ta.get(f"/s/{theirs}/code")
    cid = ta.post(f"/s/{theirs}/comments", {"path": "lab.py", "line": "1", "text": "ada's own remark"}).json()[
        "comment"
    ]
    for path in (f"/s/{theirs}/code", f"/s/{secrets.token_urlsafe(16)}/code", f"/s/{theirs[:-1]}/code"):
        assert alan.get(path).status_code == 404
        page = alan.html(path)
        assert page.status_code == 404 and "ada's own remark" not in page.text and "Ada Lovelace" not in page.text
    alan.get("/")
    assert alan.post(f"/s/{theirs}/comments/{cid}/delete").status_code == 404
    assert ada.get(f"/s/{theirs}/code").status_code == 200  # their own: yes
    assert httpx.get(f"{hand['server'].url}/s/{theirs}/code", headers={"Accept": "application/json"}).status_code == 401


def test_a_student_cannot_post_a_grade_or_a_comment(hand):  # noqa: F811
    ada, instructor = hand["people"]["ada@example.edu"], hand["instructor"]
    sid = hand["subs"]["ada@example.edu"]["id"]
    before = instructor.get(f"/s/{sid}/code").json()["hand"]
    ada.get(f"/s/{sid}/code")
    for path, data in [(f"/s/{sid}/hand", {"item": "search"}),
                       (f"/s/{sid}/comments", {"path": "lab.py", "line": "1", "text": "I deserve more"}),
                       ("/class/hand/release", {"assignment": "othello"}),
                       ("/class/hand/release/undo", {"assignment": "othello"})]:  # fmt: skip
        r = ada.post(path, data)
        assert r.status_code == 404, (path, r.text)
    after = instructor.get(f"/s/{sid}/code").json()["hand"]
    assert after == before
    assert not any(e["by"] == "ada@example.edu" for e in instructor.get("/class/audit").json()["entries"])


def test_a_ta_under_anonymous_grading_never_sees_a_name_or_an_email(hand):  # noqa: F811
    ta = hand["people"][TA[0]]
    seen = _reachable(ta, "/class/othello/grading")
    assert sum(p.endswith("/code") for p in seen) == len(PEOPLE)
    for path, text in seen.items():
        for email, name in PEOPLE.items():
            assert email not in text and name not in text and email.split("@")[0] + "@" not in text, path
            assert "/students/" not in text, path  # no link to a page whose address is the student's e-mail


def test_unreleased_hand_grading_never_reaches_the_student(hand):  # noqa: F811
    ada, ta = hand["people"]["ada@example.edu"], hand["people"][TA[0]]
    sid = hand["subs"]["ada@example.edu"]["id"]
    ta.get(f"/s/{sid}/code")
    assert ta.post(f"/s/{sid}/hand", {"item": "style"}).status_code == 200
    assert ta.post(f"/s/{sid}/comments", {"path": "lab.py", "line": "3", "text": SECRET}).status_code == 200
    for path in ("/", "/a/othello", f"/s/{sid}", f"/s/{sid}/code"):
        for text in (ada.html(path).text, ada.get(path).text):
            assert SECRET not in text and "names say what they hold" not in text and "Hand grading -1" not in text, path
    assert ada.get(f"/s/{sid}/code").json()["hand"] is None
    assert "hand_graded" not in ada.get(f"/s/{sid}").text
