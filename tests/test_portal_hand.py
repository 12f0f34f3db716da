"""The code viewer and hand grading: a submission's files highlighted on the server with line
anchors (a huge or binary file not shown, its size said), the rubric of course.yaml (one-line
errors), items applied and lines commented by staff (audited), the release that shows them to
the student and makes their points part of the one grade every view and export gives, and
anonymous grading: a TA sees Student N, never a name or e-mail, on the pages it reaches."""

from __future__ import annotations

import csv
import dataclasses
import datetime as dt
import io
import re
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.xdist_group(__name__)  # one worker: the module's fixture runs once

httpx = pytest.importorskip("httpx", reason="the portal's tests need httpx (pip install -e '.[test]')")
pytest.importorskip("starlette", reason='the portal needs its extra: pip install -e ".[portal]"')
pytest.importorskip("pygments", reason='the portal needs its extra: pip install -e ".[portal]"')

from sqlalchemy import select  # noqa: E402

from grader.errors import ConfigError  # noqa: E402
from grader.portal.accounts.signin import new_signin_token  # noqa: E402
from grader.portal.course import anonymity, policy  # noqa: E402
from grader.portal.course.course import load_course  # noqa: E402
from grader.portal.course.rubric import combined, parse_rubric  # noqa: E402
from grader.portal.database.db import connect, sessions, upgrade  # noqa: E402
from grader.portal.database.models import HandRelease, Team, TeamMember, User  # noqa: E402
from grader.portal.uploads import upload_files  # noqa: E402
from grader.portal.web.code import MAX_BYTES, code_file  # noqa: E402

from portal_server import WRONG, Client, Server, make_course  # noqa: E402

RUBRIC = """    rubric:
      anonymous: true
      items:
        - {name: style, points: -1, comment: names say what they hold}
        - {name: search, points: 2, comment: a clean negamax}
"""
PEOPLE = {"ada@example.edu": "Ada Lovelace", "alan@example.edu": "Alan Turing"}
TA = ("ta@example.edu", "Grace Hopper")


def hand_course(folder: Path) -> Path:
    """The portal's test course, its Othello lab with an anonymous rubric, two students and a TA
    whose names are nothing like a pseudonym."""
    make_course(folder)
    text = (folder / "course.yaml").read_text()
    (folder / "course.yaml").write_text(text.replace("    limits: {wall_seconds: 10}\n",
                                                     "    limits: {wall_seconds: 10}\n" + RUBRIC, 1))  # fmt: skip
    rows = "".join(f"{e},{n},student\n" for e, n in PEOPLE.items()) + f"{TA[0]},{TA[1]},ta\n"
    (folder / "roster.csv").write_text("Email,Name,Role\n" + rows)
    return folder


def open_hand(tmp: Path) -> dict:
    course = hand_course(tmp / "course")
    database = tmp / "portal.sqlite3"
    server = Server(course, tmp, f"sqlite:///{database}")
    instructor = Client(server.url)
    instructor.sign_in(server.link)
    people = {}
    for email in [*PEOPLE, TA[0]]:
        link = _link(database, server.url, email)
        c = Client(server.url)
        c.sign_in(link)
        people[email] = c
    subs = {}
    for email in PEOPLE:
        r = people[email].upload(WRONG, name="lab.py")
        assert r.status_code == 201, r.text
        subs[email] = people[email].graded(r.json()["id"])
    return {"server": server, "instructor": instructor, "people": people, "subs": subs, "course": course}


def _link(database: Path, base: str, email: str) -> str:
    """A one-time sign-in link for anyone on the roster (the class page makes students' only)."""
    with sessions(connect(f"sqlite:///{database}")).begin() as session:
        user = session.scalar(select(User).where(User.email == email))
        return f"{base}/link/{new_signin_token(session, user)}"


@pytest.fixture(scope="module")
def hand(tmp_path_factory):
    opened = open_hand(tmp_path_factory.mktemp("hand"))
    yield opened
    opened["server"].stop()


def test_a_file_is_highlighted_line_by_line_and_a_huge_or_binary_one_is_not_shown():
    f = code_file("lab.py", b'def f(x):\n    """two\n    lines"""\n    return x + 1  # <b>\n')
    assert len(f.lines) == 4 and not f.not_shown
    assert f.lines[0] == '<span class="t-k">def</span> <span class="t-f">f</span>(x):'
    assert f.lines[2] == '<span class="t-s">    lines&quot;&quot;&quot;</span>'  # no span crosses a line's end
    assert "&lt;b&gt;" in f.lines[3] and "<b>" not in f.lines[3]
    huge = code_file("big.py", b"x = 1\n" * (MAX_BYTES // 6 + 1))
    assert huge.lines == [] and huge.not_shown.startswith("too large to show") and huge.size > MAX_BYTES
    binary = code_file("data.bin", bytes(range(256)))
    assert binary.lines == [] and binary.not_shown == "not UTF-8 text (256 bytes)"
    assert code_file("submission", b"#!/usr/bin/env python3\nimport os\n").lines[1].startswith('<span class="t-k">')
    assert code_file("lab.rb", b"def f; end\n").lines == ["def f; end"]  # not a lab's language: plain text


def test_an_archives_files_are_listed_by_their_path():
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr("lab/Gomoku.py", "import helper\n")
        z.writestr("lab/helper.py", "X = 1\n")
    assert upload_files("lab.zip", out.getvalue()) == [("Gomoku.py", b"import helper\n"), ("helper.py", b"X = 1\n")]
    assert upload_files("lab.py", b"print(1)\n") == [("lab.py", b"print(1)\n")]


def test_a_rubric_is_read_with_one_line_errors():
    r = parse_rubric({"items": [{"name": "style", "points": -1}, {"name": "bonus", "points": 0.5, "comment": "c"}]},
                     "assignments[1].rubric")  # fmt: skip
    assert r is not None and r.points(["style", "bonus", "gone"]) == -0.5 and not r.anonymous
    assert parse_rubric(None, "x") is None
    for value, message in [
        ({"itmes": []}, "unknown key 'assignments[1].rubric.itmes' (did you mean `items`?)"),
        ({"items": [{"name": "a", "pionts": 1}]}, "(did you mean `points`?)"),
        ({"items": [{"name": "a", "points": "one"}]}, "points must be a number"),
        ({"items": [{"name": "a", "points": 1}, {"name": "a", "points": 2}]}, "is given twice"),
        ({"items": [{"name": "a", "points": 1}], "combine": "max"}, "combine must be add"),
        ({"items": [{"name": "a", "points": 1}], "anonymous": "yes"}, "anonymous must be true"),
        ({"items": []}, "items must be a list of 1 to"),
    ]:
        with pytest.raises(ValueError) as e:
            parse_rubric(value, "assignments[1].rubric")
        assert message in str(e.value) and "\n" not in str(e.value)
    assert (combined(3, 2, 4), combined(1, -3, 4), combined(2, 0.5, None)) == (4, 0, 2.5)


def test_the_counted_submissions_hand_grade_is_the_one_that_counts(tmp_path):
    course = load_course(hand_course(tmp_path / "course"))
    lab = course.assignments["othello"]
    when = dt.datetime(2026, 11, 2, tzinfo=dt.timezone.utc)
    graded_by_hand = policy.Candidate("early", when, 10.0, 20, hand=5.0)
    latest = policy.Candidate("late", when + dt.timedelta(hours=1), 12.0, 20)
    counted = policy.standing(course, {"othello": [graded_by_hand, latest]}, {})["othello"]
    assert (counted.submission, counted.total, counted.hand) == ("late", 12.0, None)  # latest: its own, none
    best = dataclasses.replace(course, assignments={"othello": dataclasses.replace(lab, counts="best")})
    counted = policy.standing(best, {"othello": [graded_by_hand, latest]}, {})["othello"]
    assert (counted.submission, counted.total, counted.score, counted.hand) == ("early", 15.0, 15.0, 5.0)
    capped = policy.standing(best, {"othello": [policy.Candidate("x", when, 18.0, 20, hand=5.0)]}, {})["othello"]
    assert capped.total == 20 and policy.Grade(capped).why == "on time; hand grading +5"


def test_the_course_file_names_a_misspelt_rubric(tmp_path):
    course = hand_course(tmp_path / "course")
    text = (course / "course.yaml").read_text()
    (course / "course.yaml").write_text(text.replace("    rubric:", "    rubrik:"))
    with pytest.raises(ConfigError, match=r"line 12: unknown key 'assignments\[0\]\.rubrik'.*did you mean `rubric`\?"):
        load_course(course)
    (course / "course.yaml").write_text(text.replace("points: 2,", "pionts: 2,"))
    with pytest.raises(ConfigError, match=r"unknown key 'assignments\[0\]\.rubric\.items\[2\]\.pionts'"):
        load_course(course)


def test_the_audit_log_and_the_outbox_label_the_students_of_an_assignment_a_ta_grades_anonymously(tmp_path):
    course = load_course(hand_course(tmp_path / "course"))
    engine = connect(f"sqlite:///{tmp_path / 'portal.sqlite3'}")
    upgrade(engine)
    with sessions(engine).begin() as session:
        people = [
            User(email=e, name=n, role=r)
            for e, n, r in [
                ("ada@example.edu", "Ada Lovelace", "student"),
                ("alan@example.edu", "Alan Turing", "student"),
                ("lan@example.edu", "Lan Ying", "student"),
                (TA[0], TA[1], "ta"),
                ("prof@example.edu", "Prof", "instructor"),
            ]
        ]
        session.add_all(people)
        session.flush()
        ada, alan, lan, ta, prof = people
        owls = Team(assignment="othello", name="Night Owls")
        session.add(owls)
        session.flush()
        session.add_all([TeamMember(team_id=owls.id, user_id=u.id, assignment="othello") for u in (alan,)])
        session.flush()
        assert anonymity.hidden_from(session, ta, course) == {"othello"}
        assert anonymity.hidden_from(session, prof, course) == set() == anonymity.hidden_from(session, ada, course)
        entries = [("ada@example.edu", "regrade asked", "othello: submission abc (request 1)"),
                   ("prof@example.edu", "extension", "othello: alan@example.edu 1 day(s)"),
                   ("prof@example.edu", "rerun", "othello: lan@example.edu (the plan changed)"),
                   ("alan@example.edu", "team joined", f"othello: team 'Night Owls' (id {owls.id})"),
                   ("ada@example.edu", "regrade asked", "tictactoe: submission xyz (request 2)")]  # fmt: skip
        seen = anonymity.audit_seen(session, anonymity.hidden_from(session, ta, course), entries)
        assert seen == [("Student 1", "othello: submission abc (request 1)"),
                        ("prof@example.edu", "othello: Team 1 1 day(s)"),  # alan's whole address, not lan's in it
                        ("prof@example.edu", "othello: Student 3 (the plan changed)"),
                        ("Team 1", f"othello: Team 1 (id {owls.id})"),
                        ("ada@example.edu", "tictactoe: submission xyz (request 2)")]  # fmt: skip
        assert anonymity.audit_seen(session, set(), entries) == [(by, detail) for by, _, detail in entries]
        mails = [{"kind": kind, "to": to, "subject": subject} for kind, to, subject in [
            ("receipt", "ada@example.edu", f"Received: {course.assignments['othello'].title}"),
            ("regrade", "alan@example.edu", f"Regrade answered: {course.assignments['othello'].title}"),
            ("released", "ada@example.edu", f"Results released: {course.assignments['othello'].title}"),
            ("graded", "ada@example.edu", f"Graded: {course.assignments['tictactoe'].title}")]]  # fmt: skip
        seen_mail = anonymity.outbox_seen(mails, [course.assignments["othello"]])
        assert [m["to"] for m in seen_mail] == [
            anonymity.HIDDEN,
            anonymity.HIDDEN,
            "ada@example.edu",
            "ada@example.edu",
        ]
        assert anonymity.outbox_seen(mails, []) == mails
        session.add(HandRelease(assignment="othello", released_by=prof.id))
        session.flush()
        assert anonymity.hidden_from(session, ta, course) == set()


def test_staff_and_the_student_see_its_code_highlighted_with_its_results(hand):
    instructor, ada = hand["instructor"], hand["people"]["ada@example.edu"]
    sid = hand["subs"]["ada@example.edu"]["id"]
    page = instructor.html(f"/s/{sid}/code")
    assert page.status_code == 200
    text = page.text
    assert 'id="f0-L1"' in text and 'href="#f0-L1"' in text and 'class="t-k"' in text
    assert f'href="/s/{sid}"' in text  # the feedback, test by test (the instructor is never anonymous)
    assert "Ada Lovelace" in text and 'id="rubric"' in text
    data = instructor.get(f"/s/{sid}/code").json()
    assert data["files"] == [{"path": "lab.py", "size": WRONG.stat().st_size, "lines": len(WRONG.read_text().splitlines()),
                              "not_shown": ""}]  # fmt: skip
    staff = instructor.get(f"/s/{sid}").json()
    assert data["results"] == {"symbols": staff["symbols"], "total": staff["total"], "max_total": staff["max_total"]}
    mine = ada.get(f"/s/{sid}/code").json()
    assert mine["student"] is None and mine["hand"] is None and "symbols" not in mine["results"]
    assert 'class="t-k"' in ada.html(f"/s/{sid}/code").text


def test_a_ta_grades_the_release_shows_it_and_every_view_and_export_agrees(hand):
    instructor, ta, ada = hand["instructor"], hand["people"][TA[0]], hand["people"]["ada@example.edu"]
    sid = hand["subs"]["ada@example.edu"]["id"]
    staff = instructor.get(f"/s/{sid}").json()
    total, top = staff["total"], staff["max_total"]
    ta.get(f"/s/{sid}/code")
    r = ta.post(f"/s/{sid}/hand", {"item": "search"})
    assert r.status_code == 200 and r.json()["points"] == 2, r.text
    assert ta.post(f"/s/{sid}/hand", {"item": "nothing"}).status_code == 400
    r = ta.post(f"/s/{sid}/comments", {"path": "lab.py", "line": "2", "text": "this loop misses a pass"})
    assert r.status_code == 200, r.text
    assert ta.post(f"/s/{sid}/comments", {"path": "lab.py", "line": "100000", "text": "x"}).status_code == 400
    extra = ta.post(f"/s/{sid}/comments", {"path": "lab.py", "line": "1", "text": "second thoughts"}).json()["comment"]
    assert ta.post(f"/s/{sid}/comments/{extra}/delete").status_code == 200
    assert ta.post(f"/s/{sid}/comments/{extra}/delete").status_code == 404
    assert [c["text"] for c in ta.get(f"/s/{sid}/code").json()["hand"]["comments"]] == ["this loop misses a pass"]
    assert ta.post(f"/s/{sid}/comments", {"path": "../etc/passwd", "line": "1", "text": "x"}).status_code == 400
    # before the release: the student sees nothing of it, and the grade is the tests' alone
    mine = ada.get(f"/s/{sid}/code").json()
    assert mine["hand"] is None
    assert "this loop misses a pass" not in ada.html(f"/s/{sid}/code").text
    cell = _cell(instructor, "ada@example.edu")
    assert cell["score"] == total and cell["hand"] is None
    entries = [e for e in instructor.get("/class/audit").json()["entries"] if e["action"].startswith("hand")]
    assert [(e["by"], e["action"]) for e in entries[-4:]] == [
        (TA[0], "hand grade"),
        (TA[0], "hand comment"),
        (TA[0], "hand comment"),
        (TA[0], "hand comment deleted"),
    ]
    assert entries[-4]["detail"] == f"othello: submission {sid}: search (+2)"
    # the release: instructors only
    assert ta.post("/class/hand/release", {"assignment": "othello"}).status_code == 404
    assert instructor.post("/class/hand/release", {"assignment": "othello"}, csrf=False).status_code == 403
    assert instructor.post("/class/hand/release", {"assignment": "othello"}).status_code == 200
    mine = ada.get(f"/s/{sid}/code").json()
    assert [i["name"] for i in mine["hand"]["items"]] == ["search"] and mine["hand"]["points"] == 2
    assert [(c["path"], c["line"], c["text"]) for c in mine["hand"]["comments"]] == [
        ("lab.py", 2, "this loop misses a pass")
    ]
    page = ada.html(f"/s/{sid}/code").text
    assert "this loop misses a pass" in page and "a clean negamax" in page and "names say what they hold" not in page
    want = combined(total, 2, top)
    cell = _cell(instructor, "ada@example.edu")
    assert (cell["score"], cell["hand"]) == (want, 2) and "hand grading +2" in cell["why"]
    assert f"→ {want}" in instructor.html("/class").text
    book = list(csv.DictReader(io.StringIO(instructor.get("/class.csv").text)))
    row = next(r for r in book if r["email"] == "ada@example.edu")
    assert float(row["othello score"]) == want
    scope = next(x for x in instructor.get("/class/othello/gradescope.json").json()["students"]
                 if x["email"] == "ada@example.edu")  # fmt: skip
    assert scope["results"]["score"] == want and scope["results"]["tests"][-1]["name"] == "Hand grading"
    moodle = list(csv.reader(io.StringIO(instructor.get("/class/othello/moodle.csv").json()["csv"])))
    assert any("ada@example.edu" in row and any(_number(v) == want for v in row) for row in moodle), moodle
    assert 'href="/class/othello/grading"' in instructor.html("/class").text
    assert "your code, with its hand grading" in ada.html(f"/s/{sid}").text
    # undone: hidden again, and the grade the tests' alone again
    assert instructor.post("/class/hand/release/undo", {"assignment": "othello"}).status_code == 200
    assert ada.get(f"/s/{sid}/code").json()["hand"] is None
    assert _cell(instructor, "ada@example.edu")["score"] == total
    actions = [e["action"] for e in instructor.get("/class/audit").json()["entries"]]
    assert actions[-2:] == ["hand grading released", "hand grading release undone"]


def _number(value: str) -> float | None:
    try:
        return float(value)
    except ValueError:
        return None


def _cell(client: Client, email: str) -> dict:
    table = client.get("/class").json()
    return next(s for s in table["students"] if s["email"] == email)["assignments"]["othello"]


def test_a_ta_grading_anonymously_sees_no_name_until_the_release(hand):
    instructor, ta = hand["instructor"], hand["people"][TA[0]]
    listing = ta.get("/class/othello/grading").json()
    assert listing["anonymous"] and {s["student"] for s in listing["submissions"]} == {"Student 1", "Student 2"}
    assert all(s["email"] is None for s in listing["submissions"])
    seen = _reachable(ta, "/class/othello/grading")
    assert any(p.endswith("/code") for p in seen)
    for path, text in seen.items():
        for email, name in PEOPLE.items():
            assert email not in text and name not in text, path
    named = instructor.get("/class/othello/grading").json()
    assert not named["anonymous"] and {s["student"] for s in named["submissions"]} == set(PEOPLE.values())


def _reachable(client: Client, start: str) -> dict[str, str]:
    """Every page of the portal reached by following links from ``start`` that lead to the hand
    grading's pages or a submission's (as HTML and as JSON), by path."""
    seen: dict[str, str] = {}
    todo = [start]
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        html = client.html(path).text
        seen[path] = html + client.get(path).text
        for link in re.findall(r'href="(/[^"#]*)', html):
            if link.startswith(("/s/", "/class/othello/")) and link not in seen:
                todo.append(link)
    return seen


@pytest.mark.slow  # a browser, a server, one grading: 15-30 s
def test_in_a_browser_a_ta_grades_anonymously_and_after_the_release_the_student_reads_it(tmp_path, chromium):
    pytest.importorskip("playwright.sync_api", reason="the browser test needs playwright (pip install -e '.[test]')")
    from test_portal_browser import _signed_in, _until_graded, submit

    course = hand_course(tmp_path / "course")
    database = tmp_path / "portal.sqlite3"
    server = Server(course, tmp_path, f"sqlite:///{database}")
    try:
        student = _signed_in(chromium, _link(database, server.url, "ada@example.edu"), javascript=False)
        submit(student, "text=Othello endgame lab")
        student.set_input_files("input[name=script]", str(WRONG))
        student.click("#upload")
        student.wait_for_url(f"{server.url}/s/*")
        url = student.url
        _until_graded(student, url)

        ta = _signed_in(chromium, _link(database, server.url, TA[0]), javascript=False)
        ta.goto(f"{server.url}/class")
        submit(ta, "#hand-grading a")
        assert "Student 1" in ta.inner_text("#grading")
        submit(ta, "#grading a")  # the page whole: what it lacks is asserted below
        assert ta.url == f"{url}/code" and ta.inner_text("#student") == "Student 1"
        assert ta.locator("#feedback-link").count() == 0 and ta.locator("table.code span").count() > 0
        for email, name in PEOPLE.items():
            assert email not in ta.content() and name not in ta.content()
        ta.check("input[name=item][value=search]")
        submit(ta, "#save-rubric")
        assert ta.is_checked("input[name=item][value=search]")
        ta.select_option("#comment-form select[name=path]", WRONG.name)  # the file's own name, as uploaded
        ta.fill("#comment-form input[name=line]", "2")
        ta.fill("#comment-form textarea[name=text]", "this loop misses a pass")
        submit(ta, "#add-comment")
        assert "this loop misses a pass" in ta.inner_text("#f0-L2 + tr.line-comment")

        student.goto(f"{url}/code")  # before the release: nothing of it
        assert student.locator("#hand").count() == 0 and "this loop misses a pass" not in student.content()

        instructor = _signed_in(chromium, server.link)  # with JavaScript
        instructor.goto(f"{url}/code")  # with JavaScript: a line's number fills the comment form
        instructor.click("#f0-L3 td.ln a")
        assert instructor.input_value("#comment-form input[name=line]") == "3" and instructor.url.endswith("#f0-L3")
        assert instructor.input_value("#comment-form select[name=path]") == WRONG.name
        instructor.goto(f"{server.url}/class/othello/grading")
        assert "Ada Lovelace" in instructor.inner_text("#grading")
        submit(instructor, "#hand-release")
        assert instructor.locator("#undo-hand-release").count() == 1

        student.goto(url)
        submit(student, "#code-link")
        assert "search (+2): a clean negamax" in student.inner_text("#hand-items")
        assert "this loop misses a pass" in student.inner_text("#f0-L2 + tr.line-comment")
        student.click("#hand-comments a")
        assert student.url.endswith("/code#f0-L2")
    finally:
        server.stop()


@pytest.mark.slow  # a server and two gradings: 20-30 s
def test_a_regrade_request_is_answered_by_a_change_of_hand_grading_that_the_student_reads(tmp_path):
    opened = open_hand(tmp_path)
    try:
        instructor, ta, ada = opened["instructor"], opened["people"][TA[0]], opened["people"]["ada@example.edu"]
        sid = opened["subs"]["ada@example.edu"]["id"]
        assert ta.post(f"/s/{sid}/comments", {"path": "lab.py", "line": "1", "text": "before the request"}).is_success
        gone = ta.post(f"/s/{sid}/comments", {"path": "lab.py", "line": "1", "text": "taken back"}).json()["comment"]
        assert instructor.post("/class/hand/release", {"assignment": "othello"}).status_code == 200
        rid = ada.post(f"/s/{sid}/regrade", {"reason": "My search is a clean negamax."}).json()["id"]
        queue = ta.get("/class/regrades").json()
        assert [(q["id"], q["hand"]) for q in queue["open"]] == [(rid, True)]
        assert (
            f'href="/s/{sid}/code#hand"' in ta.html("/class/regrades").text
            and 'name="hand"' in ta.html("/class/regrades").text
        )
        # nothing changed since the request: no such answer
        r = ta.post(f"/class/regrades/{rid}", {"hand": "on"})
        assert r.status_code == 400 and "has not changed since the request" in r.text
        # on the code page: a link back to the open request; the change made there
        assert f'href="/class/regrades#regrade-{rid}"' in instructor.html(f"/s/{sid}/code").text
        assert ta.post(f"/s/{sid}/hand", {"item": ["search", "style"]}).status_code == 200
        assert ta.post(f"/s/{sid}/comments", {"path": "lab.py", "line": "2", "text": "a clean negamax"}).is_success
        assert ta.post(f"/s/{sid}/comments/{gone}/delete").status_code == 200
        r = ta.post(f"/class/regrades/{rid}", {"reply": "You are right.", "hand": "on"})
        assert r.status_code == 200, r.text
        change = ("Hand grading changed: added style (-1), search (+2); hand total 0 -> 1; "
                  "line comments added: lab.py line 2; 1 line comment(s) taken back.")  # fmt: skip
        assert r.json()["done"] == ["hand"] and r.json()["reply"] == f"You are right.\n\n{change}"
        seen = ada.get(f"/s/{sid}").json()["regrades"]["requests"]
        assert [(q["state"], q["reply"], q["done"]) for q in seen] == [
            ("answered", f"You are right.\n\n{change}", ["hand"])
        ]
        page = ada.html(f"/s/{sid}").text
        assert "added style (-1), search (+2); hand total 0 -&gt; 1" in page and f'href="/s/{sid}/code#hand"' in page
        assert [i["name"] for i in ada.get(f"/s/{sid}/code").json()["hand"]["items"]] == ["style", "search"]
        answered = [e for e in instructor.get("/class/audit").json()["entries"] if e["action"] == "regrade answered"]
        assert [(e["by"], e["detail"]) for e in answered] == [
            (TA[0], f"othello: submission {sid} (request {rid}); {change}")
        ]
        # before a release the answer says only that it changed: no item is named to the student early
        assert instructor.post("/class/hand/release/undo", {"assignment": "othello"}).status_code == 200
        rid = ada.post(f"/s/{sid}/regrade", {"reason": "And style?"}).json()["id"]
        assert ta.post(f"/s/{sid}/hand", {"item": "search"}).status_code == 200
        r = ta.post(f"/class/regrades/{rid}", {"hand": "on"})
        assert r.status_code == 200 and r.json()["reply"] == (
            "Hand grading changed; you see it once your instructor releases the hand grading."
        )
    finally:
        opened["server"].stop()


def test_released_hand_grading_does_not_show_the_private_total_to_the_student(hand):
    """The code page of a student whose private results are not released gives the hand
    grading's points, never the total with the private tests in it."""
    ada, ta, instructor = hand["people"]["ada@example.edu"], hand["people"][TA[0]], hand["instructor"]
    sid = hand["subs"]["ada@example.edu"]["id"]
    full = instructor.get(f"/s/{sid}").json()
    assert full["total"] != full["public_total"]  # the private tests count: the full total is a secret
    assert ada.get(f"/s/{sid}").json()["private_shown"] is False
    ta.get(f"/s/{sid}/code")
    assert ta.post(f"/s/{sid}/hand", {"item": "search"}).status_code == 200
    instructor.get("/class/othello/grading")
    assert instructor.post("/class/hand/release", {"assignment": "othello"}).status_code == 200
    try:
        seen = ada.get(f"/s/{sid}/code").json()["hand"]
        assert seen is not None and seen["points"] == 2 and seen["total"] is None
        assert str(full["total"] + 2) not in ada.html(f"/s/{sid}/code").text
    finally:  # the module's server as the tests before found it
        assert instructor.post("/class/hand/release/undo", {"assignment": "othello"}).status_code == 200
        assert ta.post(f"/s/{sid}/hand", {}).status_code == 200
