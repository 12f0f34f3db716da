"""Ladders on the portal: who entered which engine, the pairs queued while the game queue is
idle, what each reader sees, and the deadline tournament with its grades. The ladder's
rules (the planner, ratings, aliases, what a student may see) are
``grader.tournaments.ladder``'s; this module reads and writes the tables they work on.

A participant enters one of their arena engines of the ladder's game; the checked version
they choose plays, else its latest checked version. When no game job waits, each ladder
queues one pair (two games on one opening, colours swapped) as a game job of the lowest
priority, so SPRT tests go first. Once the instructor starts the deadline tournament, or the assignment's hard deadline (else its
deadline) passes, the ladder plans no more pairs: each entry's final version (uploaded by the
deadline, when it passed) is frozen, and they play a round-robin of ``deadline_games`` games
a pair, graded by share of the pieces as ``grader tournament --grade`` grades (config.yaml's
tournament.grade)."""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import functools
import hashlib
import json
import secrets
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from ...errors import GraderError
from ...games import get_game, ggf
from ...tournaments import ladder as rules
from ...tournaments import ratings
from ...tournaments.elofit import Rating, fit_ratings
from ...tournaments.formats import fixed_schedule
from ...tournaments.games import GameRecord
from ...tournaments.grades import ShareGrade, grades_of
from ...tournaments.openings import OPENING_PLIES, random_openings
from ..arena import arena
from ..arena.leases import waiting_games
from ..course.course import Course, Ladder
from ..database.arena import (
    CHECKING,
    DONE,
    GAMES,
    LADDER_PRIORITY,
    OK,
    TEST_PRIORITY,
    ArenaEngine,
    ArenaGame,
    EngineVersion,
    GameJob,
)
from ..database.ladders import DEADLINE, LADDER, LadderEntry, LadderGame, LadderState
from ..database.models import QUEUED, RUNNING, User, now

OPENINGS = 100  # random openings a ladder draws from (fewer if the game has fewer)
RECENT = 20  # games shown on an entry's page
HIDDEN = "an entry not shown"  # a player whose entry the reader does not see


def find(course: Course, name: str) -> Ladder:
    found = course.ladders.get(name)
    if found is None:
        raise GraderError(f"no ladder {name!r} in this course")
    return found


def state(session: Session, ladder: Ladder) -> LadderState:
    """The ladder's row, made at its first use (with the random key its aliases are drawn from;
    two requests making it at once: the second takes the first's)."""
    found = session.get(LadderState, ladder.name)
    if found is None:
        try:
            with session.begin_nested():
                session.add(LadderState(name=ladder.name, alias_key=secrets.token_hex(16), created_at=now()))
        except IntegrityError:
            pass
        found = session.get(LadderState, ladder.name)
        assert found is not None
    return found


def enter(session: Session, course: Course, ladder: Ladder, user: User, engine_id: int,
          version: int | None = None) -> LadderEntry:  # fmt: skip
    """Enter ``user``'s engine (one of their arena engines, of the ladder's game) in the ladder, or
    put it in place of the one they entered before (their alias stays); ``version`` (a number:
    3 for v3), one of its checked versions, plays rather than its latest checked one."""
    engine = session.get(ArenaEngine, engine_id)
    if engine is None or engine.owner_id != user.id:
        raise GraderError("enter one of your own engines: upload it on the arena's page first")
    if get_game(engine.game).name != get_game(ladder.game).name:
        raise GraderError(f"the ladder plays {ladder.game}, and the engine '{engine.name}' plays {engine.game}: "
                          f"enter an engine of {ladder.game}")  # fmt: skip
    chosen = None if version is None else _checked_version(session, engine, version)
    key = state(session, ladder).alias_key
    entry = session.scalar(select(LadderEntry).where(LadderEntry.ladder == ladder.name, LadderEntry.user_id == user.id))
    if entry is None:
        joined = session.scalars(select(LadderEntry.user_id).where(LadderEntry.ladder == ladder.name)
                                 .order_by(LadderEntry.id)).all()  # fmt: skip
        alias = rules.aliases(key, [str(u) for u in [*joined, user.id]])[str(user.id)]
        entry = LadderEntry(ladder=ladder.name, user_id=user.id, engine_id=engine.id, alias=alias, joined_at=now())
        session.add(entry)
    else:
        entry.engine_id = engine.id
    entry.version_id = chosen
    session.flush()
    return entry


def _checked_version(session: Session, engine: ArenaEngine, number: int) -> int:
    """The id of ``engine``'s version ``number``, which passed its check (GraderError, saying why, when not)."""
    found = session.scalars(select(EngineVersion).where(EngineVersion.engine_id == engine.id)).all()
    by_number = {v.number: v for v in found}
    v = by_number.get(number)
    if v is None:
        known = ", ".join(f"v{n}" for n in sorted(by_number)) or "none yet"
        raise GraderError(f"{engine.name} has no version {number} (it has {known}): upload it in the arena first")
    if v.status != OK:
        why = "is still being checked" if v.status == CHECKING else "failed its check"
        checked = [f"v{n}" for n in sorted(by_number) if by_number[n].status == OK]
        raise GraderError(f"{engine.name} v{number} {why}: choose a version that passed its check"
                          + (f" ({', '.join(checked)})" if checked else ""))  # fmt: skip
    return v.id


@dataclass(frozen=True)
class Played:
    """A finished game of a ladder as the ratings take it: versions as 'v<id>'."""

    id: int
    black: str
    white: str
    result: str
    opening: str
    finished: str

    @property
    def black_score(self) -> float:
        return {"1-0": 1.0, "0-1": 0.0}.get(self.result, 0.5)


def version_key(version_id: int) -> str:
    return f"v{version_id}"


@dataclass(frozen=True)
class Standing:
    """A ladder's state: its entries (each with the key of the version that plays for it, or
    of the entry itself while it has none checked), their names and aliases, its games."""

    ladder: Ladder
    entries: list[rules.Entry]
    aliases: dict[str, str]  # participant -> alias
    entry_ids: dict[str, int]  # engine key -> entry id
    games: list[Played]
    ratings: list[Rating]


def standing(session: Session, ladder: Ladder, stage: str = LADDER, before: dt.datetime | None = None) -> Standing:
    """Every entry with the engine that plays for it now (``before``: its latest checked version
    uploaded by then), the ladder's finished games of ``stage`` (oldest first), and the ratings
    of those versions from all their games against each other (an older version's games leave
    the fit: it stays the size of the class)."""
    rows = session.execute(
        select(LadderEntry, User.name).join(User, User.id == LadderEntry.user_id)
        .where(LadderEntry.ladder == ladder.name).order_by(LadderEntry.id)
    ).all()  # fmt: skip
    latest = _latest_versions(session, [entry.engine_id for entry, _ in rows], before)
    chosen = _chosen_versions(session, [entry.version_id for entry, _ in rows if entry.version_id], before)
    entries, aliases, ids = [], {}, {}
    for entry, name in rows:
        version = entry.version_id if entry.version_id in chosen else latest.get(entry.engine_id)
        key = version_key(version) if version is not None else f"e{entry.id}"
        entries.append(rules.Entry(str(entry.user_id), name, key))
        aliases[str(entry.user_id)] = entry.alias
        ids[key] = entry.id
    games = _games(session, ladder, stage)
    current = {e.engine for e in entries}
    among = [g for g in games if g.black in current and g.white in current]
    return Standing(ladder, entries, aliases, ids, games, fit_ratings(among, [e.engine for e in entries]))


def _latest_versions(session: Session, engine_ids: list[int], before: dt.datetime | None = None) -> dict[int, int]:
    """Engine id -> its newest version that passed its check (``before``: uploaded by then)."""
    chosen = select(EngineVersion.engine_id, EngineVersion.id).where(
        EngineVersion.engine_id.in_(engine_ids), EngineVersion.status == OK
    )
    if before is not None:
        chosen = chosen.where(EngineVersion.uploaded_at <= before)
    found = session.execute(chosen.order_by(EngineVersion.number)).all()
    return {engine: version for engine, version in found}


def checked_numbers(session: Session, engine_id: int) -> list[int]:
    """The numbers of an engine's versions that passed their check, newest first."""
    return list(session.scalars(select(EngineVersion.number).where(EngineVersion.engine_id == engine_id,
                                                                   EngineVersion.status == OK)
                                .order_by(EngineVersion.number.desc())))  # fmt: skip


def _chosen_versions(session: Session, ids: list[int], before: dt.datetime | None = None) -> set[int]:
    """Of the versions authors chose, those that may play: checked (``before``: uploaded by then)."""
    chosen = select(EngineVersion.id).where(EngineVersion.id.in_(ids), EngineVersion.status == OK)
    if before is not None:
        chosen = chosen.where(EngineVersion.uploaded_at <= before)
    return set(session.scalars(chosen)) if ids else set()


def _games(session: Session, ladder: Ladder, stage: str) -> list[Played]:
    found = session.execute(
        select(ArenaGame).join(LadderGame, LadderGame.game_id == ArenaGame.id)
        .where(LadderGame.ladder == ladder.name, LadderGame.stage == stage, ArenaGame.status == DONE)
        .order_by(ArenaGame.finished_at, ArenaGame.id)
    ).scalars()  # fmt: skip
    return [Played(g.id, version_key(g.black_id), version_key(g.white_id), g.result, g.opening,
                   g.finished_at.isoformat() if g.finished_at else "") for g in found]  # fmt: skip


@functools.lru_cache(maxsize=32)
def openings(ladder: Ladder) -> tuple[str, ...]:
    """The ladder's openings: random ones drawn from its name (the same at every start)."""
    seed = int(hashlib.sha256(ladder.name.encode()).hexdigest()[:12], 16)
    return tuple(random_openings(get_game(ladder.game), seed, OPENING_PLIES, OPENINGS))


def schedule_idle(session: Session, course: Course) -> int:
    """When no game job waits, a pair queued for each ladder that can pair two engines (none
    after its deadline tournament started); how many were queued. The ladders' rows are read
    under a lock first: of two workers planning at once (PostgreSQL), the second waits and
    sees the first's pairs waiting, rather than queueing the same pair again."""
    for ladder in course.ladders.values():
        session.refresh(state(session, ladder), with_for_update=True)
    if waiting_games(session):
        return 0
    queued = 0
    for ladder in course.ladders.values():
        if state(session, ladder).deadline_at is not None:
            continue
        cutoff = deadline(course, ladder)
        if cutoff is not None and now() > cutoff:
            if _checking(session, ladder, cutoff):
                continue  # a version uploaded in time plays once checked (the instructor may start it meanwhile)
            with contextlib.suppress(GraderError):  # fewer than two entries: no tournament to play
                queued += start_deadline(session, ladder, before=cutoff) // 2
            continue
        now_ = standing(session, ladder)
        engines = [e.engine for e in now_.entries if e.engine.startswith("v")]
        running = _running_pairs(session, ladder)
        rated = {r.engine: r.elo for r in now_.ratings}
        seed = f"{state(session, ladder).alias_key}:{len(now_.games)}"
        for pair in rules.plan_pairs(engines, now_.games, rated, openings(ladder), 1, seed, running):
            _queue_pair(session, ladder, pair.games, pair.opening, LADDER, LADDER_PRIORITY)
            queued += 1
    return queued


def _checking(session: Session, ladder: Ladder, before: dt.datetime) -> bool:
    """Whether an entered engine has a version uploaded by ``before`` whose check is not over."""
    engines = select(LadderEntry.engine_id).where(LadderEntry.ladder == ladder.name)
    found = session.scalar(select(EngineVersion.id).where(EngineVersion.engine_id.in_(engines),
                                                          EngineVersion.status == CHECKING,
                                                          EngineVersion.uploaded_at <= before).limit(1))  # fmt: skip
    return found is not None


def _running_pairs(session: Session, ladder: Ladder) -> list[tuple[str, str]]:
    """The ladder's pairs queued or being played: (black first, white first)."""
    found = session.execute(
        select(ArenaGame.job_id, ArenaGame.black_id, ArenaGame.white_id).join(LadderGame, LadderGame.game_id == ArenaGame.id)
        .where(LadderGame.ladder == ladder.name, LadderGame.stage == LADDER, ArenaGame.status.not_in((DONE, arena.CANCELLED)))
        .order_by(ArenaGame.id)
    ).all()  # fmt: skip
    first: dict[int | None, tuple[str, str]] = {}
    for job, black, white in found:
        first.setdefault(job, (version_key(black), version_key(white)))
    return list(first.values())


def _queue_pair(session: Session, ladder: Ladder, games: Any, opening: str, stage: str, priority: int) -> None:
    """A game job of two games (black, white given as version keys) on ``opening``."""
    job = GameJob(kind=GAMES, priority=priority, state=QUEUED, attempts=0, created_at=now())
    session.add(job)
    session.flush()
    for black, white in games:
        game = ArenaGame(job_id=job.id, pair=job.id, black_id=int(black[1:]), white_id=int(white[1:]),
                         opening=opening, tc_seconds=ladder.tc[0], tc_increment=ladder.tc[1], status=QUEUED)  # fmt: skip
        session.add(game)
        session.flush()
        session.add(LadderGame(game_id=game.id, ladder=ladder.name, stage=stage))


def deadline(course: Course, ladder: Ladder) -> dt.datetime | None:
    """When an assignment's ladder starts its deadline tournament by itself: at the assignment's
    hard deadline, else its deadline (None: an open ladder, or an assignment without one)."""
    assignment = course.assignments.get(ladder.assignment or "")
    return None if assignment is None else assignment.hard_deadline or assignment.deadline


def start_deadline(session: Session, ladder: Ladder, before: dt.datetime | None = None) -> int:
    """Freeze each entry's latest checked version (``before``: uploaded by then) and queue the
    deadline round-robin between them (``deadline_games`` a pair, two to an opening); how many
    games were queued. The ladder's row is read anew under a lock: of two starts at once (the
    workers at the deadline, the instructor), the second waits for the first's and is refused."""
    found = state(session, ladder)
    session.flush()  # a change not yet written would be lost to the refresh
    session.refresh(found, with_for_update=True)
    if found.deadline_at is not None:
        raise GraderError(
            f"the deadline tournament of {ladder.title} started at {found.deadline_at:%Y-%m-%d %H:%M} UTC already"
        )
    entries = [e.engine for e in standing(session, ladder, before=before).entries if e.engine.startswith("v")]
    if len(entries) < 2:
        raise GraderError(f"the deadline tournament needs two entries with a checked engine; {ladder.title} has "
                          f"{len(entries)}")  # fmt: skip
    schedule = fixed_schedule(rules.deadline_format(ladder.deadline_games), entries, list(openings(ladder)),
                              lambda id, pair, round, black, white, opening: (black, white, opening))  # fmt: skip
    for (black, white, opening), second in zip(schedule[::2], schedule[1::2]):
        _queue_pair(session, ladder, [(black, white), second[:2]], opening, DEADLINE, TEST_PRIORITY)
    found.deadline_at, found.deadline_versions = now(), json.dumps([int(e[1:]) for e in entries])
    return len(schedule)


def start_now(session: Session, course: Course, ladder: Ladder) -> int:
    """The instructor's start of the deadline tournament: with each entry's latest checked
    version, uploaded by the deadline once it passed (as the workers' start takes them)."""
    cutoff = deadline(course, ladder)
    return start_deadline(session, ladder, before=cutoff if cutoff is not None and now() > cutoff else None)


@dataclass(frozen=True)
class DeadlineState:
    """The deadline tournament: games played of all, those still queued or being played, and
    each final version's grade so far."""

    started: str | None
    played: int
    planned: int
    grades: list[ShareGrade]
    names: dict[str, str]  # version key -> the participant's name
    unfinished: int = 0

    @property
    def over(self) -> bool:
        """Started, and no game of it waits or is being played (a game its workers kept dying on is cancelled)."""
        return self.started is not None and self.unfinished == 0


def deadline_state(session: Session, course: Course, ladder: Ladder) -> DeadlineState:
    found = state(session, ladder)
    if found.deadline_at is None:
        return DeadlineState(None, 0, 0, [], {})
    versions = [version_key(v) for v in json.loads(found.deadline_versions or "[]")]
    records = []
    for g in session.scalars(select(ArenaGame).join(LadderGame, LadderGame.game_id == ArenaGame.id)
                             .where(LadderGame.ladder == ladder.name, LadderGame.stage == DEADLINE,
                                    ArenaGame.status == DONE, ArenaGame.record.is_not(None))):  # fmt: skip
        record = GameRecord.from_json(json.loads(g.record or "{}"))
        record.black, record.white, record.pair = version_key(g.black_id), version_key(g.white_id), str(g.pair)
        if record.forfeit is not None:
            record.forfeit = record.black if record.result == "0-1" else record.white
        records.append(record)
    table = ratings.standings(records, versions)
    per_engine = ladder.deadline_games * (len(versions) - 1)
    grades = grades_of(table, versions, per_engine, course.config.tournament.grade)
    owners = session.execute(
        select(EngineVersion.id, User.name).join(ArenaEngine, ArenaEngine.id == EngineVersion.engine_id)
        .join(User, User.id == ArenaEngine.owner_id).where(EngineVersion.id.in_([int(v[1:]) for v in versions]))
    ).all()  # fmt: skip
    names = {version_key(v): name for v, name in owners}
    planned = per_engine * len(versions) // 2
    unfinished = session.scalar(
        select(func.count()).select_from(ArenaGame).join(LadderGame, LadderGame.game_id == ArenaGame.id)
        .where(LadderGame.ladder == ladder.name, LadderGame.stage == DEADLINE, ArenaGame.status.in_((QUEUED, RUNNING)))
    )  # fmt: skip
    return DeadlineState(found.deadline_at.isoformat(), len(records), planned, grades, names, unfinished or 0)


@dataclass(frozen=True)
class View:
    """A ladder as one reader sees it: the table (names or aliases, the rows they may see), and
    the name shown for any version of a participant whose row they see."""

    standing: Standing
    table: rules.Table
    owners: dict[str, str]  # version key (any version of an entered engine) -> participant
    shown: dict[str, str]  # participant -> the name shown, for the rows seen
    labels: dict[str, str] = dataclasses.field(default_factory=dict)  # version key -> 'engine vN'
    named: bool = True  # whether the reader sees who plays (staff, or a ladder that is not anonymous)

    def engine_of(self, row: rules.Row) -> str | None:
        """The engine and version that plays for a row, as its reader may see it (None: not theirs to see)."""
        return self.labels.get(row.engine) if self.named or row.mine else None

    def name_of(self, key: str) -> str | None:
        """The name shown for a version (None: its participant's row is not shown to this reader)."""
        return self.shown.get(self.owners.get(key, ""))

    def entry_of(self, entry_id: int) -> rules.Row | None:
        """The row of an entry, if this reader sees it."""
        return next((r for r in self.table.rows if self.standing.entry_ids.get(r.engine) == entry_id), None)


def view(session: Session, ladder: Ladder, user: User) -> View:
    """The ladder as ``user`` sees it: staff every entry by name; students as the course set it
    (aliases when anonymous; with ``top``, the top entries and those around their own)."""
    now_ = standing(session, ladder)
    viewer = rules.Viewer(staff=user.staff, participant=str(user.id))
    table = rules.table(now_.entries, now_.ratings, viewer, rules.Visibility(ladder.anonymous, ladder.top),
                        now_.aliases)  # fmt: skip
    engines = dict(session.execute(select(LadderEntry.engine_id, LadderEntry.user_id)
                                   .where(LadderEntry.ladder == ladder.name)).all())  # fmt: skip
    versions = session.execute(select(EngineVersion.id, EngineVersion.engine_id, EngineVersion.number, ArenaEngine.name)
                               .join(ArenaEngine, ArenaEngine.id == EngineVersion.engine_id)
                               .where(EngineVersion.engine_id.in_(list(engines)))).all()  # fmt: skip
    owners = {version_key(v): str(engines[e]) for v, e, _, _ in versions}
    labels = {version_key(v): f"{name} v{number}" for v, _, number, name in versions}
    by_key = {e.engine: e.participant for e in now_.entries}
    shown = {by_key[r.engine]: r.name for r in table.rows}
    return View(now_, table, owners, shown, labels, user.staff or not ladder.anonymous)


def games_ggf(session: Session, ladder: Ladder, user: User) -> str:
    """Every finished game of the ladder as one GGF text (Othello's), its players named as the
    ladder's table names them for ``user`` ('an entry not shown' for the others). GraderError
    for a game GGF cannot hold."""
    rules = get_game(ladder.game)
    if not ggf.supports(rules):
        raise GraderError(f"GGF holds Othello games only, not {rules.title}'s")
    seen = view(session, ladder, user)
    ids = [g.id for g in seen.standing.games]
    rows = session.scalars(select(ArenaGame).where(ArenaGame.id.in_(ids)).order_by(ArenaGame.finished_at, ArenaGame.id))
    records = []
    for row in rows:
        if row.record is None:
            continue
        record = GameRecord.from_json(json.loads(row.record))
        record.black = seen.name_of(version_key(row.black_id)) or HIDDEN
        record.white = seen.name_of(version_key(row.white_id)) or HIDDEN
        records.append(record)
    return ggf.write_games(records, rules, state(session, ladder).created_at.isoformat())
