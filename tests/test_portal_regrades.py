"""Regrade requests over HTTP, with the course's mail on a real SMTP server on loopback: a
student asks on their graded submission (a reason; at most the course's number on each
assignment; one open at a time), staff see the queue and answer once with a reply and a rerun,
the student reads the answer on the submission's page and in a "regrade answered" mail; all
audited. course.yaml's regrades: key, its mistakes one line each."""

from __future__ import annotations

import datetime as dt
import json

import pytest
import yaml

pytest.importorskip("starlette", reason='the portal needs its extra: pip install -e ".[portal]"')
pytest.importorskip("aiosmtpd", reason="the mail tests need aiosmtpd (pip install -e '.[test]')")

from sqlalchemy import select  # noqa: E402

from grader.errors import ConfigError  # noqa: E402
from grader.portal.accounts.signin import new_signin_token  # noqa: E402
from grader.portal.course.course import load_course  # noqa: E402
from grader.portal.course.regrades import MAX_REQUESTS, REASON_CHARS  # noqa: E402
from grader.portal.database.db import connect, sessions, upgrade  # noqa: E402
from grader.portal.database.mail import MailMessage  # noqa: E402
from grader.portal.database.models import (  # noqa: E402
    GRADED,
    INSTRUCTOR,
    STUDENT,
    HandComment,
    HandGrade,
    HandRelease,
    Release,
    Submission,
    User,
    now,
)
from grader.portal.jobs import regrades  # noqa: E402

from portal_server import WRONG, Client, make_course  # noqa: E402
from smtp_server import body  # noqa: E402
from test_portal_mail import mailbox, mailing, password, settled  # noqa: E402

FIXTURES = (mailbox, mailing, password)  # test_portal_mail's: its SMTP server and a portal mailing it


@pytest.mark.parametrize(
    "regrades, words",
    [
        ({"maxx": 2}, "unknown key 'regrades.maxx' (did you mean `max`?)"),
        ({"max": -1}, "'regrades.max' must be the requests a student may make"),
        ({"max": "two"}, "'regrades.max' must be the requests a student may make"),
        ({"until": "soon"}, "'regrades.until' must be a date and time"),
        ([2], "'regrades' must be 'key: value' lines"),
    ],
)
def test_mis_set_regrade_settings_are_one_line_errors_naming_the_key(tmp_path, regrades, words):
    folder = make_course(tmp_path / "course")
    data = yaml.safe_load((folder / "course.yaml").read_text())
    data["regrades"] = regrades
    (folder / "course.yaml").write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError) as e:
        load_course(folder)
    assert words in str(e.value) and "\n" not in str(e.value)


def test_regrade_settings_default_and_read(tmp_path):
    folder = make_course(tmp_path / "course")
    assert load_course(folder).regrades.max == MAX_REQUESTS
    data = yaml.safe_load((folder / "course.yaml").read_text())
    data["regrades"] = {"max": 1, "until": "2026-12-20 17:00 Europe/Paris"}
    (folder / "course.yaml").write_text(yaml.safe_dump(data))
    settings = load_course(folder).regrades
    assert settings.max == 1 and settings.until is not None and settings.until.utcoffset().total_seconds() == 3600


def test_a_student_asks_staff_answer_with_a_reply_and_a_rerun_and_the_student_reads_it(mailing, mailbox):
    me, prof = mailing["students"]["s1@example.edu"], mailing["instructor"]
    sid = me.upload(WRONG, name="wrong_score.py").json()["id"]
    me.graded(sid)
    assert me.get(f"/s/{sid}").json()["regrades"] == {"requests": [], "reason_chars": REASON_CHARS,
                                                      "left": MAX_REQUESTS, "max": MAX_REQUESTS, "can_ask": True,
                                                      "closed": None}  # fmt: skip
    assert me.post(f"/s/{sid}/regrade", {"reason": "  "}).status_code == 400
    assert me.post(f"/s/{sid}/regrade", {"reason": "x" * (REASON_CHARS + 1)}).status_code == 400
    r = me.post(f"/s/{sid}/regrade", {"reason": "Test 3's move is optimal too:\r\nplease look again."})
    assert r.status_code == 201, r.text
    asked = r.json()
    assert asked["state"] == "open" and asked["reason"] == "Test 3's move is optimal too:\nplease look again."
    again = me.post(f"/s/{sid}/regrade", {"reason": "and again"})
    assert again.status_code == 400 and "open already" in again.text
    mine = me.get(f"/s/{sid}").json()["regrades"]
    assert [q["state"] for q in mine["requests"]] == ["open"] and mine["can_ask"] is False
    queue = prof.get("/class/regrades").json()
    assert [(q["id"], q["student"]["email"], q["submission"]) for q in queue["open"]] == [
        (asked["id"], "s1@example.edu", sid)
    ]
    assert "Test 3&#39;s move is optimal too" in prof.html("/class/regrades").text
    assert prof.post(f"/class/regrades/{asked['id']}", {}).status_code == 400  # no reply, no rerun: no answer
    r = prof.post(f"/class/regrades/{asked['id']}", {"reply": "Test 3 was judged on the exact value.", "rerun": "on"})
    assert r.status_code == 200, r.text
    assert r.json()["state"] == "answered" and r.json()["done"] == ["rerun"]
    assert prof.post(f"/class/regrades/{asked['id']}", {"reply": "twice"}).status_code == 400  # answered once
    assert prof.post("/class/regrades/999999", {"reply": "none"}).status_code == 404
    done = me.graded(sid)
    assert done["previous"]["reason"] == "rerun on a regrade request"
    seen = me.get(f"/s/{sid}").json()["regrades"]["requests"]
    assert [(q["state"], q["reply"], q["done"]) for q in seen] == [
        ("answered", "Test 3 was judged on the exact value.", ["rerun"])
    ]
    page = me.html(f"/s/{sid}").text
    assert "Answered" in page and "Test 3 was judged on the exact value." in page
    mail = body(mailbox.wait("s1@example.edu", "Regrade answered: Othello endgame lab"))
    assert "Test 3 was judged on the exact value." in mail and f"/s/{sid}" in mail and "graded again" in mail
    assert prof.get("/class/regrades").json()["open"] == []
    actions = [e["action"] for e in prof.get("/class/audit").json()["entries"]]
    assert "regrade asked" in actions and "regrade answered" in actions
    # the second (last) request the course allows on the assignment, then no more
    assert me.post(f"/s/{sid}/regrade", {"reason": "one more look"}).status_code == 201
    assert prof.post(f"/class/regrades/{seen[0]['id'] + 1}", {"reply": "No change."}).status_code == 200
    over = me.post(f"/s/{sid}/regrade", {"reason": "a third"})
    assert over.status_code == 400 and f"the {MAX_REQUESTS} regrade request(s)" in over.text
    assert me.get(f"/s/{sid}").json()["regrades"]["closed"].startswith("You made the")
    settled(prof)


def test_a_student_who_turned_regrade_mails_off_gets_the_answer_on_the_page_only(mailing, mailbox):
    me, prof = mailing["students"]["s2@example.edu"], mailing["instructor"]
    kinds = {k["kind"]: k["on"] for k in me.get("/preferences").json()["kinds"]}
    assert kinds["regrade"] is True
    assert me.post("/preferences", {k: "on" for k in kinds if k != "regrade"}).status_code == 200
    sid = me.upload(WRONG, name="wrong_score.py").json()["id"]
    me.graded(sid)
    rid = me.post(f"/s/{sid}/regrade", {"reason": "please"}).json()["id"]
    assert prof.post(f"/class/regrades/{rid}", {"reply": "Seen."}).status_code == 200
    assert me.get(f"/s/{sid}").json()["regrades"]["requests"][0]["reply"] == "Seen."
    settled(prof)
    assert not mailbox.to("s2@example.edu", "Regrade answered")


@pytest.mark.slow  # a browser, a server, two gradings and the mail server: 20-40 s
def test_in_a_browser_a_student_asks_staff_answer_and_the_answer_arrives_by_mail(tmp_path, chromium, mailbox,
                                                                                 password):  # fmt: skip
    from test_portal_browser import _signed_in, _until_graded, submit

    from portal_server import Server
    from test_portal_mail import mail_course

    course = mail_course(tmp_path / "course", mailbox)
    server = Server(course, tmp_path)
    try:
        staff = _signed_in(chromium, server.link)
        make = sessions(connect(f"sqlite:///{course / '.portal' / 'portal.sqlite3'}"))
        with make.begin() as s:
            link = (
                f"{server.url}/link/{new_signin_token(s, s.scalar(select(User).where(User.email == 's3@example.edu')))}"
            )
        student = _signed_in(chromium, link)
        student.goto(f"{server.url}/a/othello")
        student.set_input_files("input[name=script]", str(WRONG))
        student.click("#upload")
        student.wait_for_url(f"{server.url}/s/*")
        url = student.url
        _until_graded(student, url, live=True)
        student.fill("#regrade-reason", "Test 3: my move is optimal too.")
        submit(student, "#regrade-ask")
        assert student.url.startswith(url)
        assert student.inner_text(".regrade-state") == "Open" and student.locator("#regrade-form").count() == 0
        staff.goto(f"{server.url}/class")
        submit(staff, "#regrades-link")
        assert "Test 3: my move is optimal too." in staff.inner_text(".regrade-reason")
        staff.fill("textarea[name=reply]", "Test 3 is judged on the exact value: graded again.")
        staff.check("input[name=rerun]")
        submit(staff, ".regrade-answer button")
        assert staff.locator("#no-open").count() == 1
        assert "graded again" in staff.inner_text("#answered")
        student.goto(url)
        _until_graded(student, url, live=True)
        assert student.inner_text(".regrade-state") == "Answered"
        assert "Test 3 is judged on the exact value" in student.inner_text(".regrade-reply")
        assert "Graded again: rerun on a regrade request" in student.inner_text("#rerun")
        mail = body(mailbox.wait("s3@example.edu", "Regrade answered: Othello endgame lab"))
        assert "Test 3 is judged on the exact value: graded again." in mail and url.rsplit("/", 1)[1] in mail
    finally:
        server.stop()


def test_a_ta_answers_with_a_reply_but_only_an_instructor_reruns(mailing):
    prof, me = mailing["instructor"], mailing["students"]["s3@example.edu"]
    roster = prof.post("/class/roster", files={"roster": ("roster.csv", b"Email,Name,Role\nta@example.edu,A TA,ta\n",
                                                          "text/csv")})  # fmt: skip
    assert roster.status_code == 200, roster.text
    make = sessions(connect(f"sqlite:///{mailing['tmp'] / 'course' / '.portal' / 'portal.sqlite3'}"))
    with make.begin() as s:
        token = new_signin_token(s, s.scalar(select(User).where(User.email == "ta@example.edu")))
    ta = Client(mailing["server"].url)
    ta.sign_in(f"{ta.url}/link/{token}")
    sid = me.upload(WRONG, name="wrong_score.py").json()["id"]
    me.graded(sid)
    rid = me.post(f"/s/{sid}/regrade", {"reason": "please"}).json()["id"]
    assert 'name="rerun"' not in ta.html("/class/regrades").text and 'name="rerun"' in prof.html("/class/regrades").text
    r = ta.post(f"/class/regrades/{rid}", {"reply": "Rerun it", "rerun": "on"})
    assert r.status_code == 403 and "only an instructor reruns" in r.text
    assert me.get(f"/s/{sid}").json()["regrades"]["requests"][0]["state"] == "open"
    assert ta.post(f"/class/regrades/{rid}", {"reply": "Your move on test 3 loses: no change."}).status_code == 200
    answered = prof.get("/class/regrades").json()["answered"]
    assert [(q["id"], q["answered_by"], q["done"]) for q in answered if q["id"] == rid] == [(rid, "ta@example.edu", [])]


# --- an answer by a change of hand grading: before -> after ---------------------------------

CHANGE_RUBRIC = {"items": [{"name": "style", "points": -1.5, "comment": "names say what they hold"},
                           {"name": "search", "points": 2, "comment": "a clean negamax"},
                           {"name": "tests", "points": 0.5, "comment": "its own tests"}]}  # fmt: skip
POINTS = {i["name"]: i["points"] for i in CHANGE_RUBRIC["items"]}
DEADLINE = dt.datetime(2026, 1, 10, 12, tzinfo=dt.timezone.utc)
PENALTY = 0.5  # a day late: half the total taken
AUTO = 6.0  # the submission's automatic total, of MAX_TOTAL
MAX_TOTAL = 10


@pytest.fixture
def by_hand(tmp_path):
    """(sessionmaker, course, instructor, {email: (student, their graded submission)}) on SQLite: the
    Othello lab graded by hand (``CHANGE_RUBRIC``), a deadline each submission missed by an hour,
    the course's mail on (its outbox filled, nothing sent)."""
    folder = make_course(tmp_path / "course")
    data = yaml.safe_load((folder / "course.yaml").read_text())
    data["assignments"][0].update(rubric=CHANGE_RUBRIC, deadline="2026-01-10 12:00", late_penalty="50%")
    data["mail"] = {"host": "127.0.0.1", "port": 2525, "security": "none", "from": "grader@example.edu"}
    data["regrades"] = {"max": 3}
    (folder / "course.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    course = load_course(folder)
    engine = connect(f"sqlite:///{tmp_path / 'portal.sqlite3'}")
    upgrade(engine)
    make = sessions(engine)
    with make.begin() as s:
        prof = User(email="prof@example.edu", name="Prof", role=INSTRUCTOR)
        s.add(prof)
        people = {}
        for n, email in enumerate(["ada@example.edu", "bob@example.edu"]):
            student = User(email=email, name=email.split("@")[0].title(), role=STUDENT)
            s.add(student)
            s.flush()
            sub = Submission(id=f"sub{n}", user_id=student.id, assignment="othello", filename="lab.py", size=1,
                             sha256="0" * 64, content=b"x", status=GRADED, received_at=DEADLINE + dt.timedelta(hours=1),
                             graded_at=DEADLINE, total=AUTO, max_total=MAX_TOTAL, public_total=2.0, gradings=1)  # fmt: skip
            s.add(sub)
            people[email] = (student.id, sub.id)
        s.flush()
        prof_id = prof.id
    yield make, course, prof_id, people
    engine.dispose()


def _hand_grade(s, prof_id: int, sid: str, items: list[str]) -> None:
    """The rubric items applied, as the code page's form does."""
    found = s.get(HandGrade, sid)
    if found is None:
        s.add(HandGrade(submission_id=sid, items=json.dumps(items), graded_by=prof_id, graded_at=now()))
    else:
        found.items, found.graded_at = json.dumps(items), now()


def _comment(s, prof_id: int, sid: str, line: int) -> int:
    note = HandComment(submission_id=sid, path="lab.py", line=line, text=f"line {line}?", written_by=prof_id)
    s.add(note)
    s.flush()
    return note.id


def _answer_mail(s, student_id: int) -> str:
    return s.scalars(select(MailMessage.body).where(MailMessage.user_id == student_id,
                                                    MailMessage.subject == "Regrade answered: Othello endgame lab")
                     .order_by(MailMessage.id.desc())).first()  # fmt: skip


def test_an_answer_by_a_change_of_hand_grading_says_each_item_and_the_totals_before_and_after(by_hand):
    make, course, prof_id, people = by_hand
    ada_id, sid = people["ada@example.edu"]
    with make.begin() as s:  # graded by hand before the request: style, two comments
        _hand_grade(s, prof_id, sid, ["style"])
        _comment(s, prof_id, sid, 1)
        gone = _comment(s, prof_id, sid, 3)
        s.add(HandRelease(assignment="othello", released_by=prof_id))
    with make.begin() as s:
        rid = regrades.ask(s, course, s.get(User, ada_id), s.get(Submission, sid), "My search is a negamax.").id
    with make.begin() as s, pytest.raises(regrades.RegradeRefused, match="has not changed since the request"):
        regrades.answer(s, course, s.get(User, prof_id), rid, "", ["hand"])
    with make.begin() as s:  # style taken off, then put back: no change either
        _hand_grade(s, prof_id, sid, [])
    with make.begin() as s:
        _hand_grade(s, prof_id, sid, ["style"])
    with make.begin() as s, pytest.raises(regrades.RegradeRefused, match="has not changed since the request"):
        regrades.answer(s, course, s.get(User, prof_id), rid, "", ["hand"])
    with make.begin() as s:  # the change: style off, search and tests on; a comment written, one taken back
        _hand_grade(s, prof_id, sid, ["search", "tests"])
        _comment(s, prof_id, sid, 2)
        s.delete(s.get(HandComment, gone))
    with make.begin() as s:
        done = regrades.answer(s, course, s.get(User, prof_id), rid, "You are right.", ["hand"])
        before, after = POINTS["style"], POINTS["search"] + POINTS["tests"]
        change = (f"Hand grading changed: added search (+{POINTS['search']:g}), tests (+{POINTS['tests']:g}); "
                  f"removed style ({POINTS['style']:g}); hand total {before:g} -> {after:g}; "
                  "line comments added: lab.py line 2; 1 line comment(s) taken back.")  # fmt: skip
        assert change == ("Hand grading changed: added search (+2), tests (+0.5); removed style (-1.5); "
                          "hand total -1.5 -> 2.5; line comments added: lab.py line 2; 1 line comment(s) taken back.")  # fmt: skip
        # no grade in it: the private results are not released, and the grade holds them
        assert done.done == {"hand": change} and done.request.reply == f"You are right.\n\n{change}"
        assert change in _answer_mail(s, ada_id)
    # the private results released: the grade too, before -> after, as the late policy makes it
    with make.begin() as s:
        s.add(Release(assignment="othello", released_by=prof_id))
    with make.begin() as s:
        rid = regrades.ask(s, course, s.get(User, ada_id), s.get(Submission, sid), "And style?").id
    with make.begin() as s:
        _hand_grade(s, prof_id, sid, ["search", "style"])
    with make.begin() as s:
        done = regrades.answer(s, course, s.get(User, prof_id), rid, "", ["hand"])
        before, after = POINTS["search"] + POINTS["tests"], POINTS["search"] + POINTS["style"]
        grade = [min(MAX_TOTAL, max(0.0, AUTO + h)) * (1 - PENALTY) for h in (before, after)]
        assert grade == [4.25, 3.25]
        change = (f"Hand grading changed: added style ({POINTS['style']:g}); removed tests (+{POINTS['tests']:g}); "
                  f"hand total {before:g} -> {after:g}; grade {grade[0]:g} -> {grade[1]:g}.")  # fmt: skip
        assert done.request.reply == change == ("Hand grading changed: added style (-1.5); removed tests (+0.5); "
                                                "hand total 2.5 -> 0.5; grade 4.25 -> 3.25.")  # fmt: skip
        assert change in _answer_mail(s, ada_id)
        assert regrades.view(regrades.of_submission(s, s.get(Submission, sid))[-1])["reply"] == change  # the page's
    # answered with a rerun too: no grade (its automatic total is not known yet)
    with make.begin() as s:
        rid = regrades.ask(s, course, s.get(User, ada_id), s.get(Submission, sid), "Search again?").id
    with make.begin() as s:
        _hand_grade(s, prof_id, sid, ["search"])
    with make.begin() as s:
        done = regrades.answer(s, course, s.get(User, prof_id), rid, "", ["rerun", "hand"])
        assert done.done["hand"] == "Hand grading changed: removed style (-1.5); hand total 0.5 -> 2."


def test_a_request_asked_before_its_hand_grading_was_kept_is_answered_by_what_changed_since(by_hand):
    make, course, prof_id, people = by_hand
    bob_id, sid = people["bob@example.edu"]
    with make.begin() as s:
        _hand_grade(s, prof_id, sid, ["style"])
        s.add(HandRelease(assignment="othello", released_by=prof_id))
    with make.begin() as s:
        found = regrades.ask(s, course, s.get(User, bob_id), s.get(Submission, sid), "Style?")
        found.hand_asked = None  # as a request of before migration 0022 has it
        rid = found.id
    with make.begin() as s:
        _hand_grade(s, prof_id, sid, ["search"])
    with make.begin() as s:
        done = regrades.answer(s, course, s.get(User, prof_id), rid, "", ["hand"])
        assert done.request.reply == "Hand grading changed: rubric items now applied: search (+2), +2 points in all."
        assert done.request.reply in _answer_mail(s, bob_id)
