"""Ladders on the portal: course.yaml's ladder options, entries and their aliases, the pairs
queued while the game queue is idle, what staff and students see, and the deadline
tournament's grades; on a real SQLite database migrated as the server migrates it. The
browser's view is tests/test_portal_browser.py's; real engines playing a ladder on a running
server are at the end (slow)."""

from __future__ import annotations

import csv
import datetime
import io
import json
import re
import secrets
import shutil
import threading
import time
from pathlib import Path

import httpx
import pytest

pytestmark = pytest.mark.xdist_group(__name__)  # one worker: the module's fixture runs once

pytest.importorskip("sqlalchemy", reason='the portal needs its extra: pip install -e ".[portal]"')

from sqlalchemy import select, text, update  # noqa: E402

from grader.config import Config  # noqa: E402
from grader.errors import ConfigError, GraderError  # noqa: E402
from grader.files import SHARE  # noqa: E402
from grader.games import ggf  # noqa: E402
from grader.grading.plans import new_plan, write_plan_file  # noqa: E402
from grader.portal.accounts.roster import RosterEntry, ensure_user, import_roster  # noqa: E402
from grader.portal.course.course import LADDER_TC, load_course  # noqa: E402
from grader.portal.database.arena import (  # noqa: E402
    CHECKING,
    DONE,
    LADDER_PRIORITY,
    OK,
    TEST_PRIORITY,
    ArenaEngine,
    ArenaGame,
    EngineVersion,
    GameJob,
)
from grader.portal.database.db import connect, sessions, upgrade  # noqa: E402
from grader.portal.database.ladders import DEADLINE, LadderGame  # noqa: E402
from grader.portal.database.models import INSTRUCTOR, RUNNING, User  # noqa: E402
from grader.portal.ladders import ladders  # noqa: E402
from grader.tournaments.games import GameRecord  # noqa: E402
from grader.tournaments.grades import ShareGrade, grade_by_share  # noqa: E402

COURSE_YAML = """\
title: Ladders
instructors: [prof@example.edu]
assignments:
  - name: duel
    title: Othello duel
    game: othello
    plan: othello-endgame.plan
    ladder: {anonymous: true, top: 2, deadline_games: 4, tc: 5+0.05}
"""


@pytest.fixture(scope="module")
def plan_file(tmp_path_factory) -> Path:
    """The demo course's Othello plan (its 10 fixed boards), made once for the module."""
    path = tmp_path_factory.mktemp("plan") / "othello-endgame.plan"
    write_plan_file(new_plan(Config(), "othello", boards=SHARE / "fixtures" / "standard.txt", public=4).plan, path)
    return path


@pytest.fixture
def ladder_course(plan_file):
    def make(folder: Path, extra: str = "") -> Path:
        """A course of one Othello assignment with an anonymous ladder (top 2, 4 deadline games a pair)."""
        folder.mkdir()
        shutil.copy(plan_file, folder / plan_file.name)
        (folder / "course.yaml").write_text(COURSE_YAML + extra)
        return folder

    return make


def test_course_yaml_gives_assignment_ladders_and_open_ones(tmp_path, ladder_course):
    course = load_course(ladder_course(tmp_path / "c", "ladders:\n  - {name: open-ttt, game: tictactoe}\n"))
    duel, open_ = course.ladders["duel"], course.ladders["open-ttt"]
    assert (duel.assignment, duel.anonymous, duel.top, duel.deadline_games, duel.tc) == ("duel", True, 2, 4, (5, 0.05))
    assert (open_.assignment, open_.game, open_.anonymous, open_.top, open_.tc) == (None, "tictactoe", False, None,
                                                                                   LADDER_TC)  # fmt: skip
    assert list(course.ladders) == ["duel", "open-ttt"]


@pytest.mark.parametrize("change,message", [
    ("deadline_games: 4", "assignments[0].ladder.deadline_games must be an even number, 2 or more (two games to an "
                          "opening), like 20; got 3"),
    ("top: 2", "assignments[0].ladder.top must be a whole number, 1 or more (students see the top N and the entries "
               "around their own), or null (all); got 0"),
    ("anonymous: true", "assignments[0].ladder.anonymous must be true (students see aliases) or false; got 'yes'"),
    ("tc: 5+0.05", "assignments[0].ladder.tc: a time control is SECONDS[+INCREMENT], like 60+0.5"),
    ("top: 2,", "unknown key 'assignments[0].ladder.rounds'; known keys: assignments[0].ladder.anonymous"),
])  # fmt: skip
def test_a_bad_ladder_option_is_one_line_naming_the_key(tmp_path, ladder_course, change, message):
    folder = ladder_course(tmp_path / "c")
    bad = {"deadline_games: 4": "deadline_games: 3", "top: 2": "top: 0", "anonymous: true": "anonymous: yes",
           "tc: 5+0.05": "tc: fast", "top: 2,": "top: 2, rounds: 3,"}[change]  # fmt: skip
    text = (folder / "course.yaml").read_text()
    (folder / "course.yaml").write_text(text.replace(change, bad.replace("yes", "'yes'"), 1))
    with pytest.raises(ConfigError) as e:
        load_course(folder)
    assert message in str(e.value) and "\n" not in str(e.value)


def test_an_open_ladder_may_not_take_an_assignments_ladders_name(tmp_path, ladder_course):
    with pytest.raises(ConfigError, match=r"ladders\[0\].name: a ladder 'duel' exists already"):
        load_course(ladder_course(tmp_path / "c", "ladders:\n  - {name: duel, game: othello}\n"))


@pytest.fixture(scope="module")
def template(tmp_path_factory, plan_file):
    """A migrated SQLite database with users s0..s5 and an instructor, made once for the module."""
    path = tmp_path_factory.mktemp("db") / "portal.sqlite3"
    engine = connect(f"sqlite:///{path}")
    upgrade(engine)
    with sessions(engine).begin() as s:
        import_roster(s, [RosterEntry(f"s{i}@example.edu", f"Student {i}") for i in range(6)])
        ensure_user(s, "prof@example.edu", "Prof", INSTRUCTOR)
    engine.dispose()
    return path


@pytest.fixture
def db(tmp_path, template, ladder_course):
    """(sessionmaker, course) on a copy of the template database."""
    shutil.copy(template, tmp_path / "portal.sqlite3")
    engine = connect(f"sqlite:///{tmp_path / 'portal.sqlite3'}")
    yield sessions(engine), load_course(ladder_course(tmp_path / "course"))
    engine.dispose()


def user(s, email: str) -> User:
    return s.scalar(select(User).where(User.email == email))


def engine_of(s, owner: User, name: str = "bot", game: str = "othello", checked: int = 1) -> ArenaEngine:
    """An arena engine of ``owner`` with ``checked`` versions that passed their check."""
    engine = ArenaEngine(owner_id=owner.id, name=name, protocol="script", game=game, open=0)
    s.add(engine)
    s.flush()
    for n in range(1, checked + 1):
        s.add(EngineVersion(engine_id=engine.id, number=n, filename="bot.py", size=1, sha256="0", content=b"x",
                            status=OK))  # fmt: skip
    s.flush()
    return engine


def entered(make, course, count: int) -> list[int]:
    """``count`` students each enter an engine in the duel ladder; their latest versions' ids."""
    ladder = course.ladders["duel"]
    with make.begin() as s:
        out = []
        for i in range(count):
            engine = engine_of(s, user(s, f"s{i}@example.edu"), checked=2)
            ladders.enter(s, course, ladder, user(s, f"s{i}@example.edu"), engine.id)
            out.append(max(s.scalars(select(EngineVersion.id).where(EngineVersion.engine_id == engine.id))))
        return out


def test_entering_keeps_an_alias_for_good_and_refuses_others_engines_and_games(db):
    make, course = db
    ladder = course.ladders["duel"]
    with make.begin() as s:
        s0, s1 = user(s, "s0@example.edu"), user(s, "s1@example.edu")
        mine, theirs = engine_of(s, s0), engine_of(s, s1)
        tictactoe = engine_of(s, s0, "ttt", game="tictactoe")
        first = ladders.enter(s, course, ladder, s0, mine.id).alias
        with pytest.raises(GraderError, match="enter one of your own engines"):
            ladders.enter(s, course, ladder, s0, theirs.id)
        with pytest.raises(GraderError, match="the ladder plays othello, and the engine 'ttt' plays tictactoe"):
            ladders.enter(s, course, ladder, s0, tictactoe.id)
        other = engine_of(s, s0, "bot2")
        assert ladders.enter(s, course, ladder, s0, other.id).alias == first  # a new engine, the same alias
        assert ladders.enter(s, course, ladder, s1, theirs.id).alias != first


def test_an_author_chooses_the_checked_version_that_plays_and_the_table_names_the_engine(db):
    """v1 of three plays when its author chooses it (a version not checked is refused, saying
    which are); entering without a version goes back to the latest; the table names the engine
    and version for the staff and the row's owner, not other students of an anonymous ladder."""
    make, course = db
    ladder = course.ladders["duel"]
    with make.begin() as s:
        s0, s1 = user(s, "s0@example.edu"), user(s, "s1@example.edu")
        mine, theirs = engine_of(s, s0, "deep", checked=3), engine_of(s, s1, "shallow")
        s.add(EngineVersion(engine_id=mine.id, number=4, filename="bot.py", size=1, sha256="0", content=b"x",
                            status="failed"))  # fmt: skip
        ids = dict(
            s.execute(select(EngineVersion.number, EngineVersion.id).where(EngineVersion.engine_id == mine.id)).all()
        )
        ladders.enter(s, course, ladder, s0, mine.id, 1)
        ladders.enter(s, course, ladder, s1, theirs.id)
        with pytest.raises(GraderError, match=r"^deep v4 failed its check: choose a version that passed its check "
                                              r"\(v1, v2, v3\)$"):  # fmt: skip
            ladders.enter(s, course, ladder, s0, mine.id, 4)
        with pytest.raises(GraderError, match=r"^deep has no version 9 \(it has v1, v2, v3, v4\)"):
            ladders.enter(s, course, ladder, s0, mine.id, 9)
    with make() as s:
        playing = {e.name: e.engine for e in ladders.standing(s, ladder).entries}
        assert playing["Student 0"] == ladders.version_key(ids[1])
        staff = ladders.view(s, ladder, user(s, "prof@example.edu"))
        owner = ladders.view(s, ladder, user(s, "s0@example.edu"))
        other = ladders.view(s, ladder, user(s, "s1@example.edu"))
    assert sorted(staff.engine_of(r) or "" for r in staff.table.rows) == ["deep v1", "shallow v1"]
    assert [owner.engine_of(r) for r in owner.table.rows if r.mine] == ["deep v1"]
    assert [other.engine_of(r) for r in other.table.rows if not r.mine] == [None]  # anonymous: an alias only
    with make.begin() as s:
        ladders.enter(s, course, ladder, user(s, "s0@example.edu"), mine.id)  # no version: the latest again
    with make() as s:
        assert {e.name: e.engine for e in ladders.standing(s, ladder).entries}["Student 0"] == ladders.version_key(
            ids[3]
        )


def test_the_idle_queue_gets_a_pair_of_the_latest_versions_and_a_busy_one_none(db):
    make, course = db
    latest = entered(make, course, 3)
    with make.begin() as s:
        assert ladders.schedule_idle(s, course) == 1
        assert ladders.schedule_idle(s, course) == 0  # a game job waits: the queue is not idle
        (job,) = s.scalars(select(GameJob)).all()
        games = s.scalars(select(ArenaGame).where(ArenaGame.job_id == job.id).order_by(ArenaGame.id)).all()
        assert job.priority == LADDER_PRIORITY and len(games) == 2
        assert (games[0].black_id, games[0].white_id) == (games[1].white_id, games[1].black_id)
        assert games[0].opening == games[1].opening and {games[0].black_id, games[0].white_id} <= set(latest)
        assert (games[0].tc_seconds, games[0].tc_increment) == (5, 0.05)
        first = {games[0].black_id, games[0].white_id}
        job.state = RUNNING  # claimed: the queue is idle again
    with make.begin() as s:
        assert ladders.schedule_idle(s, course) == 1
        job2 = s.scalars(select(GameJob).where(GameJob.state != RUNNING)).one()
        g = s.scalars(select(ArenaGame).where(ArenaGame.job_id == job2.id)).first()
        assert {g.black_id, g.white_id} != first  # the pair being played counts as met


def finish(s, game: ArenaGame, result: str, black_pieces: int = 40, white_pieces: int = 24) -> None:
    record = GameRecord(id=f"g{game.id}", pair=f"p{game.pair}", round=1, black=f"b{game.black_id}",
                        white=f"w{game.white_id}", opening=game.opening, result=result, reason="normal",
                        black_pieces=black_pieces, white_pieces=white_pieces)  # fmt: skip
    game.status, game.result, game.record = DONE, result, json.dumps(record.to_json())


def test_ratings_and_what_staff_and_students_see(db):
    make, course = db
    latest = entered(make, course, 5)  # s0 best ... s4 worst
    ladder = course.ladders["duel"]
    with make.begin() as s:
        for i in range(4):
            for k in range(3):
                for black, white, result in ((latest[i], latest[i + 1], "1-0"), (latest[i + 1], latest[i], "0-1")):
                    game = ArenaGame(black_id=black, white_id=white, opening="f5", status=DONE)
                    s.add(game)
                    s.flush()
                    finish(s, game, result if k else "1/2-1/2")
                    s.add(LadderGame(game_id=game.id, ladder="duel"))
        staff = ladders.view(s, ladder, user(s, "prof@example.edu"))
        student = ladders.view(s, ladder, user(s, "s3@example.edu"))
        aliases = {e.participant: a for e, a in zip(staff.standing.entries, staff.standing.aliases.values())}
    assert [r.name for r in staff.table.rows] == [f"Student {i}" for i in range(5)]
    elos = [r.rating.elo for r in staff.table.rows]
    assert elos == sorted(elos, reverse=True) and abs(sum(elos)) < 1e-6
    assert [r.rank for r in student.table.rows] == [1, 2, 3, 4, 5]  # top 2, and 2 around rank 4
    assert student.table.rows[3].mine and "Student" not in " ".join(r.name for r in student.table.rows)
    assert [r.name for r in student.table.rows] == list(aliases.values())
    with make.begin() as s:
        outsider = ladders.view(s, ladder, user(s, "s5@example.edu"))
    assert [r.rank for r in outsider.table.rows] == [1, 2] and outsider.table.hidden == 3


def test_only_the_games_between_the_versions_playing_now_are_rated(db):
    make, course = db
    latest = entered(make, course, 2)  # each engine has two versions: the first is replaced
    with make.begin() as s:
        for black, white, result in [(latest[0] - 1, latest[1], "1-0")] * 3 + [(latest[0], latest[1], "1/2-1/2")] * 2:
            game = ArenaGame(black_id=black, white_id=white, opening="f5", status=DONE)
            s.add(game)
            s.flush()
            finish(s, game, result)
            s.add(LadderGame(game_id=game.id, ladder="duel"))
        found = ladders.standing(s, course.ladders["duel"])
    assert [(r.engine, r.games, r.elo) for r in found.ratings] == [(f"v{v}", 2, 0.0) for v in latest]
    assert len(found.games) == 5  # an entry's page still lists the old version's games


def test_the_deadline_tournament_freezes_the_final_versions_and_grades_by_share(db):
    make, course = db
    latest = entered(make, course, 3)
    ladder = course.ladders["duel"]
    with make.begin() as s:
        assert ladders.start_deadline(s, ladder) == 12  # 3 pairs of engines, 4 games each
        with pytest.raises(GraderError, match="started at .* already"):
            ladders.start_deadline(s, ladder)
        assert ladders.schedule_idle(s, course) == 0  # the ladder plans no more
        jobs = s.scalars(select(GameJob)).all()
        assert len(jobs) == 6 and {j.priority for j in jobs} == {TEST_PRIORITY}
        games = s.scalars(select(ArenaGame).join(LadderGame, LadderGame.game_id == ArenaGame.id)
                          .where(LadderGame.stage == DEADLINE)).all()  # fmt: skip
        assert {(g.black_id, g.white_id) for g in games} == {(a, b) for a in latest for b in latest if a != b}
        waiting = ladders.deadline_state(s, course, ladder)
        assert (waiting.unfinished, waiting.over) == (12, False)
        for g in games:  # black wins 40-24, except the best engine wins 50-14 whatever its colour
            best_black, best_white = g.black_id == latest[0], g.white_id == latest[0]
            finish(
                s,
                g,
                "0-1" if best_white else "1-0",
                *((14, 50) if best_white else (50, 14) if best_black else (40, 24)),
            )
        found = ladders.deadline_state(s, course, ladder)
    assert found.played == found.planned == 12 and (found.unfinished, found.over) == (0, True)
    shares = {latest[0]: 400 / 512, latest[1]: (80 + 48 + 56) / 512, latest[2]: (80 + 48 + 56) / 512}
    thresholds = course.config.tournament.grade
    assert [(g.engine, g.games, g.complete) for g in found.grades] == [(f"v{v}", 8, True) for v in latest]
    for g in found.grades:
        assert g.share == pytest.approx(shares[int(g.engine[1:])])
        assert g.grade == grade_by_share(g.share, thresholds)
    assert found.names == {f"v{latest[i]}": f"Student {i}" for i in range(3)}


def test_the_deadline_tournament_starts_by_itself_at_the_assignments_deadline_with_the_versions_of_then(
    db, tmp_path, ladder_course
):
    make, _ = db
    folder = ladder_course(tmp_path / "late")
    text = (folder / "course.yaml").read_text().replace("    ladder:", "    deadline: 2020-01-01 12:00\n    ladder:")
    (folder / "course.yaml").write_text(text)
    course = load_course(folder)
    latest = entered(make, course, 3)
    with make.begin() as s:
        s.execute(
            update(EngineVersion).values(uploaded_at=datetime.datetime(2019, 12, 31, tzinfo=datetime.timezone.utc))
        )
        late = s.get(EngineVersion, latest[0])
        late.uploaded_at = datetime.datetime(2020, 1, 1, 12, 1, tzinfo=datetime.timezone.utc)  # a minute late
        assert ladders.schedule_idle(s, course) == 6  # the tournament's 6 pairs, not a ladder pair
        found = ladders.state(s, course.ladders["duel"])
        assert json.loads(found.deadline_versions) == [latest[0] - 1, latest[1], latest[2]]
        assert ladders.schedule_idle(s, course) == 0


def test_the_deadline_tournament_waits_for_the_check_of_a_version_uploaded_in_time(db, tmp_path, ladder_course):
    """A version uploaded before the deadline whose check is still running then is the one that
    plays once checked: the tournament does not start without it (nor freeze the one before)."""
    make, _ = db
    folder = ladder_course(tmp_path / "late")
    text = (folder / "course.yaml").read_text().replace("    ladder:", "    deadline: 2020-01-01 12:00\n    ladder:")
    (folder / "course.yaml").write_text(text)
    course = load_course(folder)
    latest = entered(make, course, 2)
    with make.begin() as s:
        s.execute(
            update(EngineVersion).values(uploaded_at=datetime.datetime(2019, 12, 31, tzinfo=datetime.timezone.utc))
        )
        s.get(EngineVersion, latest[0]).status = CHECKING  # uploaded the day before, its check not over yet
        assert ladders.schedule_idle(s, course) == 0
        assert ladders.state(s, course.ladders["duel"]).deadline_at is None
        s.get(EngineVersion, latest[0]).status = OK
        assert ladders.schedule_idle(s, course) == 2  # the tournament's 2 pairs
        assert json.loads(ladders.state(s, course.ladders["duel"]).deadline_versions) == latest


def test_the_instructors_start_after_the_deadline_takes_the_versions_uploaded_by_it(db, tmp_path, ladder_course):
    """The workers busy with tests at the deadline plan nothing; the instructor starting the
    tournament then does not let in a version uploaded after the deadline."""
    make, _ = db
    folder = ladder_course(tmp_path / "late")
    text = (folder / "course.yaml").read_text().replace("    ladder:", "    deadline: 2020-01-01 12:00\n    ladder:")
    (folder / "course.yaml").write_text(text)
    course = load_course(folder)
    latest = entered(make, course, 2)
    with make.begin() as s:
        s.execute(
            update(EngineVersion).values(uploaded_at=datetime.datetime(2019, 12, 31, tzinfo=datetime.timezone.utc))
        )
        s.get(EngineVersion, latest[0]).uploaded_at = datetime.datetime(2020, 1, 2, tzinfo=datetime.timezone.utc)
        assert ladders.start_now(s, course, course.ladders["duel"]) == 4
        assert json.loads(ladders.state(s, course.ladders["duel"]).deadline_versions) == [latest[0] - 1, latest[1]]


def test_a_ladder_needs_two_checked_entries_for_its_deadline(db):
    make, course = db
    entered(make, course, 1)
    with make.begin() as s:
        with pytest.raises(GraderError, match="needs two entries with a checked engine; Othello duel has 1"):
            ladders.start_deadline(s, course.ladders["duel"])
        s.execute(update(EngineVersion).values(status="failed"))
        assert ladders.schedule_idle(s, course) == 0


@pytest.mark.slow  # a PostgreSQL server of its own: 3-6 s
def test_a_deadline_tournament_started_twice_at_once_is_queued_once(postgres, ladder_course, tmp_path):  # noqa: F811
    """Two workers (or a worker and the instructor) starting the deadline at once on PostgreSQL:
    the second waits for the first's and is refused, rather than queueing the round-robin again."""
    name = "t_" + secrets.token_hex(6)
    admin = connect(postgres.format(db="postgres")).execution_options(isolation_level="AUTOCOMMIT")
    with admin.connect() as c:
        c.execute(text(f"CREATE DATABASE {name}"))
    engine = connect(postgres.format(db=name))
    try:
        upgrade(engine)
        make, course = sessions(engine), load_course(ladder_course(tmp_path / "course"))
        with make.begin() as s:
            import_roster(s, [RosterEntry(f"s{i}@example.edu", f"Student {i}") for i in range(3)])
        entered(make, course, 3)
        ladder = course.ladders["duel"]
        with make.begin() as s:
            ladders.state(s, ladder)  # the ladder's row, as its first page made it
        first = make()
        first.begin()
        assert ladders.start_deadline(first, ladder) == 3 * 4 // 2 * 2  # not committed yet
        refused: list[str] = []

        def second() -> None:
            try:
                with make.begin() as s:
                    ladders.start_deadline(s, ladder)
            except GraderError as e:
                refused.append(str(e))

        thread = threading.Thread(target=second)
        thread.start()
        with admin.connect() as c:  # the second waits for the ladder's row the first holds (or ends: the bug)
            waiting = "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
            while thread.is_alive() and not c.execute(text(waiting)).scalar():
                time.sleep(0.05)
        first.commit()
        first.close()
        thread.join(60)
        assert len(refused) == 1 and "started at" in refused[0] and "already" in refused[0]
        with make() as s:
            queued = s.scalars(select(LadderGame).where(LadderGame.stage == DEADLINE)).all()
            assert len(queued) == 12
    finally:
        engine.dispose()
        admin.dispose()


@pytest.mark.slow  # a PostgreSQL server of its own: 3-6 s
def test_two_idle_workers_planning_at_once_queue_one_pair(postgres, ladder_course, tmp_path):  # noqa: F811
    """Two idle workers planning the ladder at once on PostgreSQL: the second waits for the
    first's plan and, a pair now waiting, queues none (not the same pair on the same opening again)."""
    name = "t_" + secrets.token_hex(6)
    admin = connect(postgres.format(db="postgres")).execution_options(isolation_level="AUTOCOMMIT")
    with admin.connect() as c:
        c.execute(text(f"CREATE DATABASE {name}"))
    engine = connect(postgres.format(db=name))
    try:
        upgrade(engine)
        make, course = sessions(engine), load_course(ladder_course(tmp_path / "course"))
        with make.begin() as s:
            import_roster(s, [RosterEntry(f"s{i}@example.edu", f"Student {i}") for i in range(2)])
        entered(make, course, 2)
        with make.begin() as s:
            ladders.state(s, course.ladders["duel"])  # the ladder's row, as its first page made it
        first = make()
        first.begin()
        assert ladders.schedule_idle(first, course) == 1  # not committed yet
        planned: list[int] = []
        thread = threading.Thread(target=lambda: planned.append(_schedule(make, course)))
        thread.start()
        with admin.connect() as c:  # the second waits for the ladder's row the first holds (or ends: the bug)
            waiting = "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
            while thread.is_alive() and not c.execute(text(waiting)).scalar():
                time.sleep(0.05)
        first.commit()
        first.close()
        thread.join(60)
        assert planned == [0]
        with make() as s:
            assert len(s.scalars(select(GameJob)).all()) == 1
    finally:
        engine.dispose()
        admin.dispose()


def _schedule(make, course) -> int:
    with make.begin() as s:
        return ladders.schedule_idle(s, course)


TICTACTOE = Path(__file__).resolve().parent.parent / "grader" / "share" / "submissions" / "tictactoe"


@pytest.mark.slow  # real engines play a ladder on the portal's worker threads: 20-40 s
def test_real_engines_play_a_ladder_on_the_workers_while_they_idle(tmp_path, ladder_course):
    from grader.portal.arena import arena
    from grader.portal.jobs.workers import Workers

    folder = ladder_course(tmp_path / "course", "ladders:\n  - {name: ttt, game: tictactoe, tc: 20+0.5}\n")
    engine = connect(f"sqlite:///{tmp_path / 'portal.sqlite3'}")
    upgrade(engine)
    make, course = sessions(engine), load_course(folder)
    scripts = ("minimax", "can_lose", "first_empty")
    with make.begin() as s:
        import_roster(s, [RosterEntry(f"{n}@example.edu", n) for n in scripts])
        for n in scripts:
            owner = user(s, f"{n}@example.edu")
            bot = arena.new_engine(s, owner, n, "script", "tictactoe")
            arena.new_version(s, course, bot, f"{n}.py", (TICTACTOE / f"{n}.py").read_bytes())
            ladders.enter(s, course, course.ladders["ttt"], owner, bot.id)
    workers = Workers(course, make, count=2)
    workers.start()
    try:
        deadline = time.monotonic() + 240
        while True:
            with make() as s:
                done = ladders.standing(s, course.ladders["ttt"])
            if len(done.games) >= 12:
                break
            assert time.monotonic() < deadline, f"only {len(done.games)} ladder games played in 240 s"
            time.sleep(0.5)
    finally:
        workers.stop()
        for t in workers.threads:
            t.join(timeout=60)
        workers.close()
    with make() as s:
        versions = {v.id: v for v in s.scalars(select(EngineVersion))}
        assert {v.status for v in versions.values()} == {OK}  # each checked by its game against the bundled engine
        rows = s.scalars(select(ArenaGame).join(LadderGame, LadderGame.game_id == ArenaGame.id)
                         .where(ArenaGame.status == DONE).order_by(ArenaGame.id)).all()  # fmt: skip
    by_job: dict[int, list[ArenaGame]] = {}
    for g in rows:
        by_job.setdefault(g.job_id, []).append(g)
    pairs = [p for p in by_job.values() if len(p) == 2]
    assert len(pairs) >= 6
    for first, second in pairs:  # one opening, each engine black once, under the ladder's clock
        assert (first.black_id, first.white_id) == (
            second.white_id,
            second.black_id,
        ) and first.opening == second.opening
        assert first.tc_seconds == 20 and json.loads(first.record)["reason"] in ("normal", "adjudicated")
    met = {frozenset((p[0].black_id, p[0].white_id)) for p in pairs}
    assert len(met) == 3  # every two entries met before any met twice more often
    names = {f"v{v.id}": s for v in versions.values() for s in scripts if v.filename == f"{s}.py"}
    rated = {names[r.engine]: r for r in done.ratings}
    assert all(r.elo is not None and r.error is not None for r in rated.values())
    assert rated["minimax"].points >= rated["first_empty"].points


def seed(make, course, ladder_name: str, emails: list[str]) -> list[str]:
    """Each of ``emails`` enters a checked engine; each beats the next in three pairs. Their version keys."""
    ladder = course.ladders[ladder_name]
    with make.begin() as s:
        versions = []
        for email in emails:
            person = user(s, email)
            ladders.enter(s, course, ladder, person, engine_of(s, person, checked=1).id)
            versions.append(ladders.standing(s, ladder).entries[-1].engine)
        for a, b in zip(versions, versions[1:]):
            for _ in range(3):
                for black, white, result in ((a, b, "1-0"), (b, a, "0-1")):
                    game = ArenaGame(black_id=int(black[1:]), white_id=int(white[1:]), opening="f5", status=DONE)
                    s.add(game)
                    s.flush()
                    finish(s, game, result)
                    s.add(LadderGame(game_id=game.id, ladder=ladder.name))
    return versions


def roster_course(ladder_course, tmp_path: Path, students: int, entered: int):
    """A ladder course of ``students`` (s0@...), its migrated SQLite database synced, the first
    ``entered`` students' engines in the duel ladder: (folder, url, engine, sessions, course)."""
    from grader.portal.course.sync import apply

    folder = ladder_course(tmp_path / "course")
    (folder / "roster.csv").write_text(
        "Email,Name\n" + "".join(f"s{i}@example.edu,Student {i}\n" for i in range(students))
    )
    (folder / "course.yaml").write_text((folder / "course.yaml").read_text() + "roster: roster.csv\n")
    url = f"sqlite:///{tmp_path / 'portal.sqlite3'}"
    engine = connect(url)
    upgrade(engine)
    make, course = sessions(engine), load_course(folder)
    apply(course, make)
    seed(make, course, "duel", [f"s{i}@example.edu" for i in range(entered)])
    return folder, url, engine, make, course


@pytest.mark.slow  # a server of its own: 5-10 s
def test_the_ladder_pages_over_http_for_staff_and_students(tmp_path, ladder_course):
    from portal_server import Client, Server

    folder, url, engine, make, course = roster_course(ladder_course, tmp_path, students=5, entered=4)
    with make.begin() as s:
        spare = engine_of(s, user(s, "s4@example.edu"), "spare").id
    server = Server(folder, tmp_path, url, "--workers", "0")
    try:
        prof = Client(server.url)
        prof.sign_in(server.link)
        links = prof.post("/class/links", {"email": "s4@example.edu"}).json()["links"]
        student = Client(server.url)
        student.sign_in(links[0]["link"])
        assert student.get("/api/ladders").json()["ladders"][0]["name"] == "duel"
        entered = student.post("/api/ladder/duel/enter", {"engine": str(spare)}).json()
        seen = student.get("/api/ladder/duel").json()
        assert [r["rank"] for r in seen["rows"]] == [1, 2, 3, 4, 5] and seen["rows"][-1]["mine"]
        assert seen["rows"][-1]["name"] == entered["alias"] and seen["rows"][-1]["elo"] is None  # not rated yet
        assert seen["deadline"] is None and "Student" not in str(seen["rows"])
        cross = student.get("/api/ladder/duel/crosstable").json()
        assert cross["rows"][0]["points"] == [None, 6.0, None, None, None]  # 1st beat 2nd in all six games
        first = seen["rows"][0]["entry"]
        games = student.get(f"/api/ladder/duel/entry/{first}").json()["games"]
        assert len(games) == 6 and {g["result"] for g in games} == {"won"} and all(g["page"] is None for g in games)
        assert {g["opponent"] for g in games} == {seen["rows"][1]["name"]}
        player = Client(server.url)  # s0, whose engine played these games: the arena's page would name its opponent
        player.sign_in(prof.post("/class/links", {"email": "s0@example.edu"}).json()["links"][0]["link"])
        assert [g["mine"] for g in player.get("/api/ladder/duel").json()["rows"][:1]] == [True]
        for path in (f"/api/arena/g/{games[0]['id']}", f"/arena/g/{games[0]['id']}/game.ggf"):
            assert player.get(path).status_code == 404, path
            assert prof.get(path).status_code == 200, path
        records = ggf.parse_records(student.get("/ladder/duel/games.ggf").text)
        assert len(records) == 18 and "Student" not in str(records)
        assert {records[0][1]["PB"], records[0][1]["PW"]} == {seen["rows"][0]["name"], seen["rows"][1]["name"]}
        refused = student.post("/api/ladder/duel/deadline", {})
        assert refused.status_code == 403 and refused.json()["error"].startswith("only an instructor starts")
        assert student.get("/api/ladder/duel/entry/999").status_code == 404
        assert prof.get(f"/api/ladder/duel/entry/{first}").json()["games"][0]["page"].startswith("/arena/g/")
        started = prof.post("/api/ladder/duel/deadline", {}).json()
        assert started == {"deadline": "duel", "games": 5 * 4 // 2 * 4}  # 5 checked entries, 4 games a pair
        again = prof.post("/api/ladder/duel/deadline", {})
        assert again.status_code == 400 and "already" in again.json()["error"]
        with make.begin() as s:
            for g in s.scalars(select(ArenaGame).join(LadderGame, LadderGame.game_id == ArenaGame.id)
                               .where(LadderGame.stage == DEADLINE)):  # fmt: skip
                finish(s, g, "1-0", 40, 24)  # black wins 40-24: every engine holds half of its games' pieces
        deadline = prof.get("/api/ladder/duel").json()["deadline"]
        assert deadline["played"] == deadline["planned"] == 40
        grade = grade_by_share(0.5, course.config.tournament.grade)
        assert [(g["name"], g["share"], g["grade"]) for g in deadline["grades"]] == [
            (f"Student {i}", 50.0, grade) for i in range(5)
        ]
        html = prof.html("/ladder/duel").text
        assert "Started " in html and "40 of 40 games played" in html and "Student 4" in html
        assert (
            html.count('<circle class="dot"') == 4
            and ">not rated yet<" in html
            and 'aria-label="Elo ratings of the entries shown' in html
        )
        for path in ("/ladder/duel", "/ladder/duel/crosstable", f"/ladder/duel/entry/{first}", "/ladders"):
            page = student.html(path)
            main = page.text.split("<main>", 1)[1]  # the header names the reader
            assert (
                page.status_code == 200
                and "Student" not in main
                and (path == "/ladders" or seen["rows"][0]["name"] in main)
            )
        rows = list(csv.DictReader(io.StringIO(prof.get("/ladder/duel/grades.csv").text)))
        assert [(r["name"], r["total"], r["complete"]) for r in rows] == [(f"Student {i}", f"{grade:g}", "yes")
                                                                         for i in range(5)]  # fmt: skip
    finally:
        server.stop()
        engine.dispose()


@pytest.mark.slow  # a server of its own, a deadline tournament followed: 8-15 s
def test_grader_arena_reaches_the_ladders_with_the_rights_of_the_tokens_user(tmp_path, ladder_course):
    """``grader arena ladders / ladder / enter / deadline`` against a running portal: a student's
    token sees aliases, the top 2 and the rows around their own, enters their engine and is
    refused the deadline tournament; the instructor's starts it, follows it and prints the grades."""
    from click.testing import CliRunner

    from grader.cli import main
    from grader.tournaments.tables import share_grades_table

    from portal_server import Client, Server

    folder, url, engine, make, course = roster_course(ladder_course, tmp_path, students=7, entered=6)
    with make.begin() as s:
        mine = engine_of(s, user(s, "s6@example.edu"), "mine")  # v1 checked
        s.add(EngineVersion(engine_id=mine.id, number=2, filename="bot.py", size=1, sha256="0", content=b"x",
                            status=CHECKING))  # fmt: skip
    server = Server(folder, tmp_path, url, "--workers", "0")
    finisher: threading.Thread | None = None
    try:
        prof = Client(server.url)
        prof.sign_in(server.link)
        student = Client(server.url)
        student.sign_in(prof.post("/class/links", {"email": "s6@example.edu"}).json()["links"][0]["link"])
        tokens = {"prof": prof.post("/arena/token", {"label": "cli"}).json()["token"],
                  "student": student.post("/arena/token", {"label": "cli"}).json()["token"]}  # fmt: skip

        def arena(who: str, *args: str) -> tuple[int, str]:
            ran = CliRunner().invoke(main, ["arena", *args, "--portal", server.url, "--token", tokens.get(who, who)])
            return ran.exit_code, ran.output

        code, said = arena("student", "ladders")
        assert code == 0 and said.splitlines()[2].split() == [
            "duel", "Othello", "duel", "othello", "5+0.05", "aliases,", "top", "2", "and", "around", "their", "own"
        ]  # fmt: skip
        assert arena("student", "enter", "duel", "mine", "2") == (
            1, "Error: mine v2 is still being checked: choose a version that passed its check (v1)\n"
        )  # fmt: skip
        code, said = arena("student", "enter", "duel", "mine", "1")
        seen = student.get("/api/ladder/duel").json()
        alias = seen["rows"][-1]["name"]
        assert (code, said) == (0, f"mine entered in the ladder duel: its v1 plays, as you chose; students see it as "
                                   f"{alias}\n")  # fmt: skip
        assert seen["rows"][-1]["engine"] == "mine v1" and all(r["engine"] is None for r in seen["rows"][:-1])
        # the student's table: the page's rows (aliases; top 2, then 5th to 7th), no names, nothing of the deadline
        code, said = arena("student", "ladder", "duel")
        lines = said.splitlines()
        assert code == 0 and lines[0] == "Othello duel: ladder of othello at 5+0.05 a game, 30 games so far"
        assert (
            [line.split()[0] for line in lines[3:-1]]
            == ["1", "2", "5", "6", "7"]
            == [str(r["rank"]) for r in seen["rows"]]
        )
        assert all(r["name"] in line for r, line in zip(seen["rows"], lines[3:-1]))
        assert lines[-2].split() == ["7", *alias.split(), "(you)", "mine", "v1", "not", "rated", "yet", "0", "0"]
        assert lines[-1] == "2 more entries are not shown: you see the top 2 and the entries around your own"
        assert "Student" not in said and "Deadline" not in said
        # each refusal, over HTTP and as the command line's one line
        signed = {"Authorization": f"Bearer {tokens['student']}", "Accept": "application/json"}
        for path in ("", "/crosstable", f"/entry/{seen['rows'][0]['entry']}", "/games.ggf"):
            r = httpx.get(f"{server.url}/api/ladder/duel{path}", headers=signed)
            assert r.status_code == 200 and "Student" not in r.text, path
        r = httpx.post(f"{server.url}/api/ladder/duel/deadline", headers=signed)
        assert (
            r.status_code == 403
            and r.json()["error"] == "only an instructor starts the deadline tournament of Othello duel"
        )
        assert httpx.get(f"{server.url}/api/ladder/duel/grades.csv", headers=signed).status_code == 404  # staff only
        assert httpx.get(f"{server.url}/api/class", headers=signed).status_code == 403  # not a ladder's path
        assert arena("student", "deadline", "duel") == (
            1, "Error: the portal refused: only an instructor starts the deadline tournament of Othello duel\n"
        )  # fmt: skip
        assert arena("student", "ladder", "nope") == (
            1, "Error: the portal refused: no ladder 'nope' in this course: grader arena ladders lists the course's ladders\n"
        )  # fmt: skip
        code, said = arena("grader_x", "ladders")
        assert (code, said) == (
            1,
            "Error: the portal refused: the API token is unknown, revoked or expired: make a new one on "
            "the portal's /arena page\n",
        )
        # the instructor sees the names, starts the deadline tournament and follows it to its grades
        code, said = arena("prof", "ladder", "duel")
        assert code == 0 and all(f"Student {i}" in said for i in range(7))
        assert said.endswith("Deadline tournament: not started\n")

        def finish_the_deadline_games() -> None:
            """The workers' part (the server has none): each deadline game won by black 40-24, once queued."""
            for _ in range(300):
                with make.begin() as s:
                    games = s.scalars(select(ArenaGame).join(LadderGame, LadderGame.game_id == ArenaGame.id)
                                      .where(LadderGame.stage == DEADLINE)).all()  # fmt: skip
                    for g in games:
                        finish(s, g, "1-0", 40, 24)
                if games:
                    return
                time.sleep(0.1)

        finisher = threading.Thread(target=finish_the_deadline_games)
        finisher.start()
        code, said = arena("prof", "deadline", "duel", "--wait")
        lines = said.splitlines()
        assert code == 0 and lines[0] == "Deadline tournament of duel started: 84 games queued"  # 7 entries, 4 a pair
        progress = [line for line in lines if line.endswith(" games played")]  # a line each change, as they finish
        assert all(re.fullmatch(r"started \d{4}-\d\d-\d\d \d\d:\d\d UTC: \d+ of 84 games played", p) for p in progress)
        assert progress[0] == lines[1] and progress[-1] == lines[-11] and lines[-11].endswith(": 84 of 84 games played")
        grade = grade_by_share(0.5, course.config.tournament.grade)
        expected = [ShareGrade(f"Student {i}", 24, 0.5, grade, True) for i in range(7)]
        assert said.endswith("\n\n" + share_grades_table(expected) + "\n")
        code, again = arena("prof", "deadline", "duel", "--wait")  # following it again: not started twice
        assert code == 0 and again.splitlines()[0] == "Deadline tournament of duel started already: following it"
        assert again.endswith("\n\n" + share_grades_table(expected) + "\n")
        code, said = arena("prof", "deadline", "duel")
        assert code == 1 and "already" in said and said.count("\n") == 1
    finally:
        if finisher is not None:
            finisher.join()
        server.stop()
        engine.dispose()


def test_a_ladders_page_draws_its_ratings_with_their_error_bars():
    """The ladder page's chart: each row shown a dot at its Elo and a bar of its 95% interval,
    best first, the reader's own marked; an entry not rated yet says so in words."""
    from grader.portal.pages.ladders import ratings_chart

    rows = [{"rank": 1, "name": "alpha", "elo": 120.0, "margin95": 40.0, "mine": False},
            {"rank": 2, "name": "beta", "elo": -20.0, "margin95": 35.5, "mine": True},
            {"rank": 3, "name": "gamma", "elo": None, "margin95": None, "mine": False}]  # fmt: skip
    svg = ratings_chart(rows)
    assert svg.count('<circle class="dot"') == 2 and svg.count('class="err"') == 2 * 3  # a bar and its two ends
    assert svg.index(">1. alpha<") < svg.index(">2. beta<") < svg.index(">3. gamma<")
    assert re.search(r'<text class="mine" [^>]*>2\. beta</text>', svg) and svg.count('class="mine"') == 1
    assert "not rated yet" in svg and "style" not in svg and 'role="img"' in svg
    assert ratings_chart([]) == ""
