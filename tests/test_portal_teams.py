"""Teams: course.yaml's ``teams: {size: N}`` (a bad value refused in one line), at most one
team of an assignment per student held by the database itself, and the instructor's teams CSV
(``grader portal teams``): all lines or none, a bad line named with its fix."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

pytest.importorskip("starlette", reason='the portal needs its extra: pip install -e ".[portal]"')

from sqlalchemy import select  # noqa: E402
from sqlalchemy.exc import IntegrityError  # noqa: E402

from grader.cli import main  # noqa: E402
from grader.errors import ConfigError  # noqa: E402
from grader.portal.course.course import load_course  # noqa: E402
from grader.portal.database.db import connect, sessions  # noqa: E402
from grader.portal.database.models import AuditEntry, Team, TeamMember, User  # noqa: E402

from portal_server import _sync, make_course  # noqa: E402


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
