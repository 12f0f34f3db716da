"""Hand grading's pages attacked: another student's code and comments by guessing its id, a
grade or a comment posted by a student, a TA under anonymous grading looking for a name, and
hand grading that is not released looked for in every page and JSON of the student's."""

from __future__ import annotations

import secrets

import pytest

pytestmark = pytest.mark.xdist_group(__name__)  # one worker: the module's fixture runs once

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


ROUTES = ("/class", "/class.csv", "/class/audit", "/class/audit.csv", "/class/queue", "/class/mail", "/class/exports",
          "/class/regrades")  # fmt: skip
DOWNLOADS = ("gradescope.json", "run.zip", "moodle.csv", "similar")


def _bodies(client, path: str) -> str:
    """The page as HTML and as JSON, one text."""
    return client.html(path).text + client.get(path).text


def _named(text: str) -> bool:
    """Whether ``text`` names a student of the anonymous lab (name, e-mail, or its local part)."""
    return any(e in text or n in text or e.split("@")[0] + "@" in text for e, n in PEOPLE.items())


def _tied(hand) -> dict[str, str]:  # noqa: F811
    """The students' submissions, with what ties them to a name in the audit log: ada's regrade
    request, alan's extension (made once: a second ask is refused, a second grant the same)."""
    instructor, ada = hand["instructor"], hand["people"]["ada@example.edu"]
    sids = {email: sub["id"] for email, sub in hand["subs"].items()}
    ada.get(f"/s/{sids['ada@example.edu']}")
    asked = ada.post(f"/s/{sids['ada@example.edu']}/regrade", {"reason": "my search is right"})
    assert asked.status_code in (201, 400), asked.text
    instructor.get("/class")
    granted = instructor.post("/class/extension", {"assignment": "othello", "email": "alan@example.edu", "days": "1"})
    assert granted.status_code == 200, granted.text
    return sids


def test_a_ta_under_anonymous_grading_ties_no_name_to_a_submission_on_any_page(hand):  # noqa: F811
    ta = hand["people"][TA[0]]
    sids = _tied(hand)
    for sid in sids.values():  # its page (HTML, JSON): the label the grading pages use, no name
        assert not _named(_bodies(ta, f"/s/{sid}")), sid
        assert ta.get(f"/s/{sid}").json()["student"] == {"name": ta.get(f"/s/{sid}").json()["student"]["name"],
                                                         "email": None}  # fmt: skip
        assert ta.get(f"/s/{sid}").json()["student"]["name"].startswith("Student ")
    for path in ROUTES:  # the class's pages: a name, or a submission of the lab, never both
        text = _bodies(ta, path)
        assert not any(sid in text for sid in sids.values()) or not _named(text), path
    table = ta.get("/class").json()
    assert "othello" not in table["assignments"] and list(table["anonymous"]) == ["othello"]
    assert all("othello" not in s["assignments"] and "othello" not in s["under_way"] for s in table["students"])
    assert "othello" not in ta.get("/class.csv").text.splitlines()[0]
    assert 'href="/class/othello/grading"' in ta.html("/class").text  # the note says where to grade it
    audit = ta.get("/class/audit").json()["entries"]
    assert any(e["action"] == "regrade asked" and e["by"].startswith("Student ") for e in audit)
    assert any(e["action"] == "extension" and e["detail"].startswith("othello: Student ") for e in audit)
    for email in sids:  # a student's history of the lab, and every download of it: refused
        assert ta.get(f"/class/othello/students/{email}").status_code == 403
        assert ta.html(f"/class/othello/students/{email}").status_code == 403
    for name in DOWNLOADS:
        assert ta.get(f"/class/othello/{name}").status_code == 403, name
    assert ta.post("/class/othello/canvas.csv", {}).status_code == 403
    assert "othello" not in ta.get("/class/exports").json()["assignments"]


def test_the_instructor_always_sees_the_names_and_a_ta_once_the_hand_grading_is_released(hand):  # noqa: F811
    instructor, ta = hand["instructor"], hand["people"][TA[0]]
    sids = _tied(hand)
    for who in (instructor, ta):
        released = who is ta
        if released:
            instructor.get("/class/othello/grading")
            assert instructor.post("/class/hand/release", {"assignment": "othello"}).status_code == 200
        try:
            for sid in sids.values():
                assert _named(_bodies(who, f"/s/{sid}")), sid
            table = who.get("/class").json()
            assert "othello" in table["assignments"] and not table["anonymous"]
            ada = next(s for s in table["students"] if s["email"] == "ada@example.edu")
            assert ada["assignments"]["othello"]["submission"] == sids["ada@example.edu"]
            assert any(e["by"] == "ada@example.edu" for e in who.get("/class/audit").json()["entries"])
            assert who.get("/class/othello/students/ada@example.edu").status_code == 200
            assert "ada@example.edu" in who.get("/class/othello/moodle.csv").json()["csv"]
        finally:
            if released:
                instructor.post("/class/hand/release/undo", {"assignment": "othello"})
