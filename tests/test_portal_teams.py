"""Teams: course.yaml's ``teams: {size: N}`` (a bad value refused in one line), at most one
team of an assignment per student held by the database itself, the instructor's teams CSV
(``grader portal teams``): all lines or none, a bad line named with its fix; the team's counted
submission each member's, with autograder.io's late days, in every view and export and over
LTI; the similarity report taking a team as one author; teams by invitation over HTTP."""

from __future__ import annotations

import csv
import datetime as dt
import io
import secrets
import threading

import pytest
from click.testing import CliRunner

pytest.importorskip("starlette", reason='the portal needs its extra: pip install -e ".[portal]"')

from sqlalchemy import select  # noqa: E402
from sqlalchemy.exc import IntegrityError, OperationalError  # noqa: E402

from grader.cli import main  # noqa: E402
from grader.errors import ConfigError  # noqa: E402
from grader.portal.course import exports, policy, similar, teams  # noqa: E402
from grader.portal.course.course import load_course  # noqa: E402
from grader.portal.course.sync import sync  # noqa: E402
from grader.portal.database.db import connect, sessions  # noqa: E402
from grader.portal.database.models import AuditEntry, Submission, Team, TeamMember, User  # noqa: E402

from portal_server import WRONG, Client, Server, _sync, make_course  # noqa: E402


def signed_in_students(server: Server) -> tuple[Client, dict[str, Client]]:
    """The instructor signed in, and a client of each student on the roster signed in with the
    link the instructor makes, by e-mail."""
    prof = Client(server.url)
    prof.sign_in(server.link)
    people = {}
    for entry in prof.post("/class/links").json()["links"]:
        people[entry["email"]] = Client(server.url)
        people[entry["email"]].sign_in(entry["link"])
    return prof, people


def teams_course(folder, size="2"):
    course = make_course(folder)
    text = (course / "course.yaml").read_text()
    (course / "course.yaml").write_text(text.replace("per_day: 3", f"per_day: 3\n    teams: {{size: {size}}}", 1))
    return course


@pytest.fixture
def synced(tmp_path):
    course = teams_course(tmp_path / "course")
    assert _sync(course).exit_code == 0
    engine = connect(f"sqlite:///{course / '.portal' / 'portal.sqlite3'}")
    yield course, sessions(engine)
    engine.dispose()


def test_an_assignment_takes_a_team_size(tmp_path):
    course = teams_course(tmp_path / "course", "3")
    loaded = load_course(course)
    assert loaded.assignments["othello"].team_size == 3 and loaded.assignments["tictactoe"].team_size is None
    checked = CliRunner().invoke(main, ["portal", "check", str(course)])
    assert (
        checked.exit_code == 0
        and "  othello: Othello endgame lab, no deadline, in teams of up to 3\n" in checked.output
    )
    assert "  tictactoe: Tic-tac-toe lab, no deadline\n" in checked.output


@pytest.mark.parametrize(
    "value, said",
    [("1", "teams.size must be a whole number of students from 2 to 20, like 2; got 1"),
     ("two", "got 'two'"), ("true", "got True"),
     ("2, sise: 3", "unknown key 'assignments[0].teams.sise' (did you mean `size`?)")],
)  # fmt: skip
def test_a_bad_team_size_is_refused_in_one_line(tmp_path, value, said):
    course = teams_course(tmp_path / "course", value)
    with pytest.raises(ConfigError) as e:
        load_course(course)
    assert said in str(e.value) and "\n" not in str(e.value)


def test_a_student_is_in_one_team_of_an_assignment_by_the_database(synced):
    _, make = synced
    with make.begin() as s:
        ada = s.scalar(select(User).where(User.email == "s1@example.edu"))
        first, second = Team(assignment="othello", name="a"), Team(assignment="othello", name="b")
        s.add_all([first, second])
        s.flush()
        s.add(TeamMember(team_id=first.id, user_id=ada.id, assignment="othello"))
        ids = (second.id, ada.id)
    with pytest.raises(IntegrityError):
        with make.begin() as s:
            s.add(TeamMember(team_id=ids[0], user_id=ids[1], assignment="othello"))


def teams_cli(course, text, tmp_path):
    (tmp_path / "teams.csv").write_text(text)
    return CliRunner().invoke(main, ["portal", "teams", str(tmp_path / "teams.csv"), str(course)])


def formed(make) -> dict[str, list[str]]:
    with make() as s:
        rows = s.execute(select(Team.name, User.email).join(TeamMember, TeamMember.team_id == Team.id)
                         .join(User, User.id == TeamMember.user_id).order_by(Team.name, User.email)).all()  # fmt: skip
    out: dict[str, list[str]] = {}
    for name, email in rows:
        out.setdefault(name, []).append(email)
    return out


def test_the_instructor_forms_teams_from_a_csv_audited_and_again_as_a_no_op(synced, tmp_path):
    course, make = synced
    text = "assignment,email,team\nothello,s1@example.edu,1\nothello,S2@example.edu,1\nothello,s3@example.edu,red\n"
    done = teams_cli(course, text, tmp_path)
    assert done.exit_code == 0, done.output
    assert (
        done.output
        == f"Teams from {tmp_path / 'teams.csv'}: 2 teams made, 3 students placed, 0 already in their team\n"
    )
    assert formed(make) == {"1": ["s1@example.edu", "s2@example.edu"], "red": ["s3@example.edu"]}
    again = teams_cli(course, text, tmp_path)
    assert again.exit_code == 0 and "0 teams made, 0 students placed, 3 already in their team" in again.output
    with make() as s:
        assert s.scalars(select(AuditEntry.detail).where(AuditEntry.action == "teams")).all() == [
            "teams.csv: 2 teams made, 3 students placed"
        ]


def test_a_course_yaml_dropping_teams_formed_already_is_refused_in_one_line(synced, tmp_path):
    course, make = synced
    assert teams_cli(course, "othello,s1@example.edu,1\nothello,s2@example.edu,1\n", tmp_path).exit_code == 0
    text = (course / "course.yaml").read_text()
    (course / "course.yaml").write_text(text.replace("    teams: {size: 2}\n", "", 1))
    done = _sync(course)
    assert done.exit_code == 1 and len(done.output.strip().splitlines()) == 1, done.output
    assert "othello has team '1' of 2 students in the portal: keep 'teams: {size: 2}'" in done.output
    (course / "course.yaml").write_text(text)
    assert _sync(course).exit_code == 0


@pytest.mark.parametrize(
    "text, said",
    [("othello,s1@example.edu\n", "line 1: expected 3 values (assignment, email, team)"),
     ("othelo,s1@example.edu,1\n", "line 1: no assignment 'othelo' in the course: give one of othello"),
     ("tictactoe,s1@example.edu,1\n", "line 1: assignment 'tictactoe' is not done in teams: give it"),
     ("othello,s1@example.edu,1\nothello,nobody@example.edu,1\n",
      "line 2: no student 'nobody@example.edu' in the portal: fix the e-mail"),
     ("othello,s1@example.edu,1\nothello,s1@example.edu,2\n",
      "line 2: s1@example.edu is already in team '1' of othello"),
     ("othello,s1@example.edu,1\nothello,s2@example.edu,1\nothello,s3@example.edu,1\n",
      "line 3: team '1' of othello would have 3 students, above its size 2: put s3@example.edu in another team")],
)  # fmt: skip
def test_a_bad_line_is_named_with_its_fix_and_nothing_is_formed(synced, tmp_path, text, said):
    course, make = synced
    done = teams_cli(course, text, tmp_path)
    assert done.exit_code == 1 and len(done.output.strip().splitlines()) == 1, done.output
    assert f"teams.csv, {said}" in done.output
    assert formed(make) == {}


def test_a_csv_never_joins_a_student_or_a_team_that_has_submitted(synced, tmp_path):
    """A team is formed before its first submission: a student's solo work never becomes a
    teammate's grade, and a team that has submitted takes no one more."""
    course, make = synced
    assert teams_cli(course, "othello,s1@example.edu,A\n", tmp_path).exit_code == 0
    graded(make, "s1@example.edu", "othello", dt.datetime.now(dt.timezone.utc), 5.0)  # A's first submission
    graded(make, "s3@example.edu", "othello", dt.datetime.now(dt.timezone.utc), 9.0)  # s3's, alone
    joined = teams_cli(course, "othello,s2@example.edu,A\n", tmp_path)
    assert joined.exit_code == 1 and "line 1: team 'A' of othello has submitted already" in joined.output
    solo = teams_cli(course, "othello,s3@example.edu,B\n", tmp_path)
    assert solo.exit_code == 1 and "line 1: s3@example.edu has submitted to othello alone already" in solo.output
    assert formed(make) == {"A": ["s1@example.edu"]}


# --- one submission serves the team ----------------------------------------------------------

UTC = dt.timezone.utc
TICTACTOE_DUE = dt.datetime(2026, 3, 2, 23, 59, tzinfo=UTC)  # alone, due first
OTHELLO_DUE = dt.datetime(2026, 3, 9, 23, 59, tzinfo=UTC)  # in teams of 2
HOUR = dt.timedelta(hours=1)


def graded(make, email: str, name: str, when: dt.datetime, total: float, content: bytes = b"print(1)\n") -> str:
    """A submission of ``email``'s written as the workers write a graded one; its id."""
    sid = secrets.token_urlsafe(16)
    with make.begin() as s:
        uid = s.scalar(select(User.id).where(User.email == email))
        s.add(Submission(id=sid, user_id=uid, assignment=name, received_at=when, late=0, filename="lab.py",
                         size=len(content), sha256="", content=content, status="graded", total=total,
                         max_total=60 if name == "othello" else 10, gradings=1))  # fmt: skip
    return sid


@pytest.fixture
def late_class(tmp_path):
    """3 late days; tic-tac-toe alone, due first; Othello in teams of 2 at 10% a day late; s1
    and s2 a team (its CSV), s1 2 days late on tic-tac-toe, the team 3 days late on Othello."""
    course = teams_course(tmp_path / "course")
    text = (course / "course.yaml").read_text().replace("upload_kb:", "late_days: 3\nupload_kb:", 1)
    for name, title, due in (("othello", "Othello endgame lab", OTHELLO_DUE),
                             ("tictactoe", "Tic-tac-toe lab", TICTACTOE_DUE)):  # fmt: skip
        text = text.replace(f"    title: {title}\n", f"    title: {title}\n    deadline: {due:%Y-%m-%d %H:%M}\n"
                            "    late_penalty: 10%\n")  # fmt: skip
    (course / "course.yaml").write_text(text)
    assert _sync(course).exit_code == 0
    assert teams_cli(course, "othello,s1@example.edu,A\nothello,s2@example.edu,A\n", tmp_path).exit_code == 0
    engine = connect(f"sqlite:///{course / '.portal' / 'portal.sqlite3'}")
    make = sessions(engine)
    ids = {"ttt": graded(make, "s1@example.edu", "tictactoe", TICTACTOE_DUE + 30 * HOUR, 10.0),
           "team": graded(make, "s2@example.edu", "othello", OTHELLO_DUE + 50 * HOUR, 50.0, b"print('team')\n"),
           "s3": graded(make, "s3@example.edu", "othello", OTHELLO_DUE - HOUR, 40.0, b"print('team')\n")}  # fmt: skip
    yield load_course(course), make, ids
    engine.dispose()


def test_each_member_gets_the_teams_counted_submission_with_the_fewest_late_days_any_member_has_left(late_class):
    course, make, ids = late_class
    with make() as s:
        every = policy.counted(s, course)
        people = {u.email: u for u in s.scalars(select(User))}
        alone = {email: policy.counted(s, course, people[email]) for email in ("s1@example.edu", "s2@example.edu")}
    s1, s2 = people["s1@example.edu"].id, people["s2@example.edu"].id
    for uid in (s1, s2):
        c = every[(uid, "othello")]
        # 3 days late; s1 has 1 late day left after tic-tac-toe, s2 has 3: the team spends 1, 20% taken
        assert (c.submission.id, c.score.days_late, c.score.late_days, c.score.penalty) == (ids["team"], 3, 1,
                                                                                             pytest.approx(0.2))  # fmt: skip
        assert c.grade.score.score == 40.0
    assert every[(s1, "tictactoe")].score.late_days == 2  # each member spends what the team used: s1 3, s2 1
    assert policy.late_days_used(c.score for (uid, _), c in every.items() if uid == s1) == 3
    assert policy.late_days_used(c.score for (uid, _), c in every.items() if uid == s2) == 1
    assert alone["s2@example.edu"] == {(s2, "othello"): every[(s2, "othello")]}  # one student's: the same grade
    assert alone["s1@example.edu"][(s1, "othello")] == every[(s1, "othello")]
    with make() as s:
        othello, ttt = course.assignments["othello"], course.assignments["tictactoe"]
        assert [policy.available(s, course, people[e], othello) for e in ("s1@example.edu", "s2@example.edu")] == [1, 1]
        assert policy.available(s, course, people["s1@example.edu"], ttt) == 2  # alone: 3 less the team's 1
        cost = policy.upload_now(course, othello, OTHELLO_DUE, {}, OTHELLO_DUE + 50 * HOUR, left=1)
        assert (cost.days_late, cost.late_days, cost.penalty) == (3, 1, pytest.approx(0.2))
    with make() as s:
        grades = {g.name: (g.total, g.policy) for g in exports.lms_grades(s, course, course.assignments["othello"])}
        rows = exports.counted(s, course, course.assignments["othello"])
    assert grades["s1@example.edu"] == grades["s2@example.edu"] == (40.0, "3 days late: 1 day of late days spent, "
                                                                    "20% penalty (graded 50)")  # fmt: skip
    assert [r.submission for r in rows if r.email in ("s1@example.edu", "s2@example.edu")] == [ids["team"]] * 2
    server = Server(course.folder, course.folder.parent, None, "--workers", "0")
    try:  # every view says the same of the team's grade: each member's history, the class table, the gradebook
        prof = Client(server.url)
        prof.sign_in(server.link)
        for email in ("s1@example.edu", "s2@example.edu"):
            history = prof.get(f"/class/othello/students/{email}").json()
            assert [(r["id"], r["counts"], r["score"], r["why"]) for r in history["submissions"]] == [
                (ids["team"], True, 40.0, "3 days late: 1 day of late days spent, 20% penalty (graded 50)")
            ]
        table = {s["email"]: s for s in prof.get("/class").json()["students"]}
        assert table["s1@example.edu"]["assignments"]["othello"] == table["s2@example.edu"]["assignments"]["othello"]
        assert (table["s1@example.edu"]["late_days_used"], table["s2@example.edu"]["late_days_used"]) == (3, 1)
        assert table["s1@example.edu"]["teams"] == {"othello": "A"} and table["s3@example.edu"]["teams"] == {}
        book = list(csv.reader(io.StringIO(prof.get("/class.csv").text)))
        mine = {row[1]: row for row in book[1:]}
        assert [c for c in mine["s1@example.edu"] if "20% penalty" in c] == [c for c in mine["s2@example.edu"]
                                                                            if "20% penalty" in c] != []  # fmt: skip
    finally:
        server.stop()


def test_the_similarity_report_takes_a_team_as_one_author(late_class):
    pytest.importorskip("copydetect", reason="the similarity report needs copydetect: pip install -e '.[similarity]'")
    course, make, ids = late_class
    with make() as s:
        rows = exports.counted(s, course, course.assignments["othello"])
    assert len(rows) == 3  # s1, s2 (the team's one submission), s3
    authors = [r.email for r in similar.one_per_author(rows)]
    assert authors == ["s1@example.edu, s2@example.edu", "s3@example.edu"]
    report = similar.similarity_report(course, course.assignments["othello"], rows)
    assert report.compared == 1  # the team and s3: never the two members as a pair
    assert sorted(sub.name for sub in report.submissions) == ["s1@example.edu, s2@example.edu", "s3@example.edu"]


# --- teams by invitation -------------------------------------------------------------------------


def test_students_form_a_team_by_invitation_decline_take_back_and_leave_before_submitting(tmp_path):
    course = teams_course(tmp_path / "course")
    server = Server(course, tmp_path, None, "--workers", "0")
    try:
        prof, people = signed_in_students(server)
        ada, bob, cy = (people[f"s{i}@example.edu"] for i in (1, 2, 3))
        page = ada.html("/a/othello").text
        assert 'action="/a/othello/team/invite"' in page and 'name="csrf"' in page  # a form: no script needed
        assert ada.post("/a/othello/team/invite", {"email": "S2@example.edu"}).status_code == 200
        assert ada.post("/a/othello/team/invite", {"email": "s2@example.edu"}).status_code == 409  # once
        got = bob.get("/a/othello").json()["team"]
        assert [(i["email"], i["name"]) for i in got["received"]] == [("s1@example.edu", "Student 1")]
        assert 'action="/a/othello/team/accept"' in bob.html("/a/othello").text
        assert bob.post("/a/othello/team/decline", {"invitation": str(got["received"][0]["id"])}).status_code == 200
        assert ada.get("/a/othello").json()["team"]["sent"] == []
        assert ada.post("/a/othello/team/invite", {"email": "s3@example.edu"}).status_code == 200
        sent = ada.get("/a/othello").json()["team"]["sent"]
        assert ada.post("/a/othello/team/decline", {"invitation": str(sent[0]["id"])}).status_code == 200  # taken back
        assert cy.get("/a/othello").json()["team"]["received"] == []
        assert ada.post("/a/othello/team/invite", {"email": "s2@example.edu"}).status_code == 200
        got = bob.get("/a/othello").json()["team"]["received"]
        joined = bob.post("/a/othello/team/accept", {"invitation": str(got[0]["id"])})
        assert joined.status_code == 200 and joined.json()["name"] == "Student 1 & Student 2"
        mine = ada.get("/a/othello").json()["team"]
        assert [m["email"] for m in mine["members"]] == ["s1@example.edu", "s2@example.edu"] and mine["full"]
        assert "You submit as team" in bob.html("/a/othello").text
        assert bob.post("/a/othello/team/leave").status_code == 200  # before its first submission
        assert bob.get("/a/othello").json()["team"]["id"] is None
        assert [m["email"] for m in ada.get("/a/othello").json()["team"]["members"]] == ["s1@example.edu"]
        assert ada.post("/a/othello/team/leave").status_code == 200
        audit = [e["action"] for e in prof.get("/class/audit").json()["entries"] if e["action"].startswith("team")]
        assert audit.count("team invitation") == 5 and audit.count("team joined") == 1 and audit.count("team left") == 2
    finally:
        server.stop()


def test_a_teams_graded_submission_is_each_members_score_for_the_lms(tmp_path):
    """Over LTI: the team's graded submission is recorded as each member's score, under each one's platform user."""
    pytest.importorskip("jwt", reason="the LTI tool needs PyJWT (the portal extra)")
    from grader.portal.database.lti import LtiIdentity, LtiLink, LtiScore
    from grader.portal.lti.grades import GradeSync

    where = "http://127.0.0.1:9"  # never reached: the scores are only recorded here
    course = teams_course(tmp_path / "course")
    (course / "course.yaml").write_text((course / "course.yaml").read_text() + (
        f"lti:\n  platforms:\n    - {{issuer: {where}, client_id: c, deployment_ids: [d], auth_login_url: {where}/auth,"
        f" token_url: {where}/token, jwks_url: {where}/jwks}}\n"))  # fmt: skip
    assert _sync(course).exit_code == 0
    assert teams_cli(course, "othello,s1@example.edu,A\nothello,s2@example.edu,A\n", tmp_path).exit_code == 0
    engine = connect(f"sqlite:///{course / '.portal' / 'portal.sqlite3'}")
    make = sessions(engine)
    sid = graded(make, "s1@example.edu", "othello", dt.datetime.now(UTC), 50.0)
    with make.begin() as s:
        for n in (1, 2, 3):
            uid = s.scalar(select(User.id).where(User.email == f"s{n}@example.edu"))
            s.add(LtiIdentity(issuer=where, sub=f"lms-{n}", user_id=uid))
        s.add(LtiLink(issuer=where, client_id="c", resource_link_id="l", assignment="othello",
                      lineitem=f"{where}/lineitems/1"))  # fmt: skip
    grades = GradeSync(load_course(course), make)
    try:
        assert grades.graded(sid) == 2
        with make() as s:
            sent = s.execute(select(LtiScore.user_sub, LtiScore.submission_id, LtiScore.score_maximum)
                             .order_by(LtiScore.user_sub)).all()  # fmt: skip
        assert sent == [("lms-1", sid, 60), ("lms-2", sid, 60)]  # s3, in no team, nothing
    finally:
        grades.stop()
        engine.dispose()


@pytest.mark.slow  # servers racing on both databases
@pytest.mark.parametrize("database", ["sqlite", "postgresql"], indirect=True)
def test_racing_acceptances_fill_a_team_once_and_a_student_is_in_one_team(database, tmp_path):
    """On SQLite and PostgreSQL: three invitations into a team of one (of 2 at most) accepted at
    once fill it once; the others are refused (the team's row held while it is counted)."""
    course = teams_course(tmp_path / "course")
    sync(course, database)
    loaded = load_course(course)
    lab = loaded.assignments["othello"]
    engine = connect(database)
    make = sessions(engine)
    with make.begin() as s:
        teams.import_teams(s, loaded, "othello,s1@example.edu,A\n")
        people = {u.email: u for u in s.scalars(select(User))}
        ids = [teams.invite(s, loaded, people["s1@example.edu"], lab, f"s{n}@example.edu").id for n in (2, 3, 4)]
    barrier = threading.Barrier(3)
    joined, refused = [], []

    def accept(n: int, invitation: int) -> None:
        barrier.wait()
        try:
            with make.begin() as s:
                teams.accept(s, s.get(User, people[f"s{n}@example.edu"].id), lab, invitation)
            joined.append(n)
        except (teams.TeamError, IntegrityError, OperationalError):
            refused.append(n)

    threads = [threading.Thread(target=accept, args=(n, i)) for n, i in zip((2, 3, 4), ids)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(joined) == 1 and len(refused) == 2
    with make() as s:
        rows = s.execute(select(TeamMember.team_id, TeamMember.user_id)).all()
    assert len(rows) == 2 and len({team for team, _ in rows}) == 1
    engine.dispose()


def test_a_teammate_opens_the_code_of_the_teams_submission(tmp_path):
    server = Server(teams_course(tmp_path / "course"), tmp_path, None, "--workers", "0")
    try:
        prof, people = signed_in_students(server)
        ada, bob, cy = (people[f"s{i}@example.edu"] for i in (1, 2, 3))
        assert ada.post("/a/othello/team/invite", {"email": "s2@example.edu"}).status_code == 200
        got = bob.get("/a/othello").json()["team"]["received"]
        assert bob.post("/a/othello/team/accept", {"invitation": str(got[0]["id"])}).status_code == 200
        up = ada.upload(WRONG, name="lab.py")
        assert up.status_code == 201, up.text
        sid = up.json()["id"]
        assert bob.get(f"/s/{sid}").status_code == 200  # the team's submission is each member's
        assert 'href="/s/' + sid + '/code"' in bob.html(f"/s/{sid}").text  # its page links the code
        assert cy.get(f"/s/{sid}/code").status_code == 404  # another student: never
        assert bob.get(f"/s/{sid}/code").status_code == 200
    finally:
        server.stop()
