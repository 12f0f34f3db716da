"""Playing the arena's game jobs on a worker thread, with the tournaments' own ``play_game``
under the course's tournament settings (limits, sandbox): a version's check game, or a pair of
a test. Each thread keeps its job slot (``Worker``: its sandbox uid, its staged files) and a
pool of engine processes that played cleanly, for the next game of the same engines (as
``grader tournament`` keeps them). A game's moves are written as they come, at most every
``LIVE_SECONDS`` (a move that comes sooner, by a timer once they have passed) and only under
the job's lease; its result only by the lease's holder, in the transaction that marks the job
done, so a game replayed after its worker died counts once."""

from __future__ import annotations

import hashlib
import json
import logging
import tempfile
import threading
import time
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from sqlalchemy import select, update
from sqlalchemy.orm import Session, sessionmaker

from ...engines.programs import ProtocolEngine
from ...engines.protocol import EnginePool
from ...engines.scripts import Script, Stage
from ...errors import GraderError
from ...execution.executor import Worker
from ...games import get_game
from ...stop import Stop
from ...tournaments.games import GameRecord, play_game
from ...tournaments.settings import TournamentSettings
from ..course.course import Course
from ..database.arena import CHECK, FAILED, OK, ArenaEngine, ArenaGame, ArenaTest, EngineVersion, GameJob
from ..database.leases import MAX_ATTEMPTS
from ..database.models import RUNNING, now
from . import arena
from .leases import GameLease, claim_game, finish_game

log = logging.getLogger("grader.portal")
LIVE_SECONDS = 0.5  # a game's moves reach the database at most this often while it is played
BUNDLED = "bundled"  # the check game's opponent, by name
KEPT_SPECS = 32  # engines kept unpacked by a worker thread (then it forgets them all)

GamesDone = Callable[[Session, list[ArenaGame]], object]  # told, in the transaction, of a job's games written


Upload = tuple[str, str, bytes, "str | None"]  # an engine's protocol, file name, bytes, command


@dataclass(frozen=True)
class CheckJob:
    """A version's check, as claimed."""

    version_id: int
    name: str
    upload: Upload
    game: str


@dataclass(frozen=True)
class PairJob:
    """A job's games as claimed: their records to play (by game id), the engines' uploads by name."""

    test_id: str | None
    planned: list[tuple[int, GameRecord]]
    uploads: dict[str, Upload]
    game: str
    tc: tuple[float, float] | None


class ArenaPlayer:
    """One worker thread's arena: its job slot and its engines kept between games."""

    def __init__(self, slot: int, on_games: GamesDone | None = None):
        self.worker = Worker(slot, Stop(), Stage())
        self.pool = EnginePool()
        self.kept: frozenset[str] = frozenset()  # the digests of the engines the pool may hold
        self.on_games = on_games  # a ladder's code, told of the games it queued once they are written
        # what this thread made for the course as loaded (a course synced anew starts them afresh)
        self.course: Course | None = None
        self.specs: dict[tuple[str, str], Script | ProtocolEngine] = {}  # (upload's digest, protocol) -> engine
        self.settings: dict[tuple[str, tuple[float, float] | None], TournamentSettings] = {}

    def _for(self, course: Course) -> None:
        if course is not self.course:
            self.course, self.specs, self.settings = course, {}, {}

    def _settings(self, course: Course, game: str, tc: tuple[float, float] | None) -> TournamentSettings:
        """The settings of a game, made and their sandbox checked once per course loaded (as
        grading: refused where nothing isolates the engines)."""
        self._for(course)
        if (game, tc) not in self.settings:
            settings = arena.game_settings(course, game, tc)
            settings.sandbox_mechanism(course.private_files())
            self.settings[game, tc] = settings
        return self.settings[game, tc]

    def _spec(self, course: Course, protocol: str, filename: str, content: bytes,
              command: str | None) -> Script | ProtocolEngine:  # fmt: skip
        """What a game plays of an upload: unpacked once, then kept (the next games read no archive)."""
        self._for(course)
        key = (hashlib.sha256(content).hexdigest() + (command or ""), protocol + filename)
        if key not in self.specs:
            if len(self.specs) >= KEPT_SPECS:
                self.specs.clear()
            with tempfile.TemporaryDirectory(prefix="grader-arena-") as folder:
                self.specs[key] = arena.build(protocol, filename, content, command, Path(folder), course)
        return self.specs[key]

    def close(self) -> None:
        """Stop the kept engines and give back the slot's uid and staged files."""
        self.pool.close()
        self.worker.release()
        self.worker.stage.close()

    def play_next(self, make: sessionmaker[Session], course: Course, me: str, seconds: float,
                  renewing: Callable[[GameLease], AbstractContextManager[object]],
                  attempts: int = MAX_ATTEMPTS) -> bool:  # fmt: skip
        """Claim the next game job (for ``seconds``, renewed by ``renewing`` while it is
        played) and play it; False when there was none. The claim and the games' start are one
        transaction (on SQLite, each commit waits for the disk). A job whose worker died on it
        ``attempts`` times (the worker's ``--attempts``) is ended first, never claimed."""
        with make.begin() as session:
            lease = claim_game(session, me, seconds, attempts)
            if lease is None:
                return False
            job = self._check_job(session, lease) if lease.kind == CHECK else self._pair_job(session, lease, me)
        if job is not None:
            with renewing(lease):
                if isinstance(job, CheckJob):
                    self._check(make, course, lease, job)
                else:
                    self._games(make, course, lease, job, me)
        return True

    def _check_job(self, session: Session, lease: GameLease) -> CheckJob:
        job = session.get(GameJob, lease.job_id)
        assert job is not None and job.version_id is not None
        version = session.get(EngineVersion, job.version_id)
        assert version is not None
        engine = session.get(ArenaEngine, version.engine_id)
        assert engine is not None
        upload = (engine.protocol, version.filename, version.content, version.command)
        return CheckJob(version.id, arena.version_name(engine, version), upload, engine.game)

    def _check(self, make: sessionmaker[Session], course: Course, lease: GameLease, job: CheckJob) -> None:
        """Play a version's check game against the bundled engine; write whether it passed."""
        record: GameRecord | None = None
        name = job.name
        try:
            rules = get_game(job.game)
            settings = self._settings(course, job.game, None)
            spec = self._spec(course, *job.upload)
            if isinstance(spec, Script):
                spec.command(settings)
            record = GameRecord(id=f"check{job.version_id}", pair="check", round=1, black=name, white=BUNDLED,
                                opening="")  # fmt: skip
            play_game(record, {name: spec, BUNDLED: arena.check_opponent(rules)}, settings, self.worker)
            passed = record.forfeit != name
            message = check_message(record, name)
        except GraderError as e:
            passed, message = False, str(e)
        with make.begin() as session:
            if not finish_game(session, lease):
                return
            version = session.get(EngineVersion, job.version_id)
            assert version is not None
            version.status, version.message, version.checked_at = (OK if passed else FAILED), message, now()
            version.check_game = json.dumps(record.to_json()) if record is not None else None

    def _pair_job(self, session: Session, lease: GameLease, me: str) -> PairJob | None:
        """The job's games, marked running under its lease from their start (a job claimed
        again is replayed whole); None when its test ended before they began (cancelled)."""
        games = list(session.scalars(select(ArenaGame).where(ArenaGame.job_id == lease.job_id)
                                     .order_by(ArenaGame.id)))  # fmt: skip
        test = session.get(ArenaTest, games[0].test_id) if games and games[0].test_id else None
        if not games or (test is not None and test.status != RUNNING):
            if finish_game(session, lease):
                for g in games:
                    g.status = arena.CANCELLED
            return None
        names, uploads, game = {}, {}, ""
        for vid in dict.fromkeys(v for g in games for v in (g.black_id, g.white_id)):
            version = session.get(EngineVersion, vid)
            assert version is not None
            engine = session.get(ArenaEngine, version.engine_id)
            assert engine is not None
            names[vid] = f"{arena.version_name(engine, version)} #{vid}"
            uploads[vid] = (engine.protocol, version.filename, version.content, version.command)
            game = engine.game
        for g in games:
            g.status, g.lease_token, g.played_by, g.started_at = RUNNING, lease.token, me, now()
            g.moves, g.clocks, g.evals, g.result, g.reason, g.record = "", "[]", "[]", "", "", None
        tc = (games[0].tc_seconds, games[0].tc_increment or 0.0) if games[0].tc_seconds else None
        return PairJob(test.id if test is not None else None, [(g.id, arena.game_record(g, names)) for g in games],
                       {names[v]: u for v, u in uploads.items()}, game, tc)  # fmt: skip

    def _games(self, make: sessionmaker[Session], course: Course, lease: GameLease, job: PairJob, me: str) -> None:
        """Play the job's games in order; write them, and count them, if the lease still holds."""
        planned = job.planned
        try:
            settings = self._settings(course, job.game, job.tc)
            specs = {name: self._spec(course, *upload) for name, upload in job.uploads.items()}
            digests = frozenset(s.digest for s in specs.values())
            if digests != self.kept:  # other engines now: the kept processes are of no more use
                self.pool.close()
                self.pool, self.kept = EnginePool(), digests
            played = [play_game(record, specs, settings, self.worker, self.pool, live(make, gid, lease.token))
                      for gid, record in planned]  # fmt: skip
        except GraderError as e:  # the course's settings or this machine, not the engines: the test cannot go on
            log.warning("%s: arena job %d: %s", me, lease.job_id, e)
            with make.begin() as session:
                if finish_game(session, lease) and job.test_id is not None:
                    found = session.get(ArenaTest, job.test_id)
                    if found is not None and found.status == RUNNING:
                        arena.stop_test(session, found, arena.ERROR)
            return
        with make.begin() as session:
            if not finish_game(session, lease):
                log.warning("%s lost its lease on arena job %d: another worker plays it", me, lease.job_id)
                return
            rows = []
            for (gid, _), record in zip(planned, played):
                row = session.get(ArenaGame, gid)
                assert row is not None
                arena.write_record(row, record)
                rows.append(row)
            if job.test_id is not None:
                found = session.get(ArenaTest, job.test_id)
                assert found is not None
                arena.count_pair(session, found, rows)
            elif self.on_games is not None:
                self.on_games(session, rows)


def check_message(record: GameRecord, name: str) -> str:
    """What the author reads of their version's check game."""
    if record.forfeit == name:
        fix = record.fix()
        said = record.stderr_line()
        return (f"it lost its check game by forfeit: {record.cause() or 'no reason given'}" + (f" ({fix})" if fix else "")
                + (f"; the last line it wrote to stderr: {said}" if said else ""))  # fmt: skip
    plies = len(record.move_times)
    return (f"it played a whole legal game as black against the bundled engine: {record.result} "
            f"({record.black_pieces}-{record.white_pieces}, {plies} engine moves)")  # fmt: skip


def live(make: sessionmaker[Session], game_id: int, token: str) -> Callable[[GameRecord], None]:
    """What ``play_game`` calls after each move: the moves, clocks and evaluations written to
    the game's row at most every LIVE_SECONDS, while ``token`` is its job's lease. A move that
    comes sooner is written by the next move that may write, or by a timer LIVE_SECONDS after
    it, whichever comes first: every move shows within LIVE_SECONDS, even the last one."""
    return LiveGame(make, game_id, token).moved


class LiveGame:
    """A running game's row kept up to date with its moves (``live``)."""

    def __init__(self, make: sessionmaker[Session], game_id: int, token: str):
        self.make, self.game_id, self.token = make, game_id, token
        self.last = time.monotonic()  # the first write after LIVE_SECONDS: a game over sooner is written at its end
        self.pending: dict[str, str] | None = None  # the newest values not written yet
        self.timer: threading.Timer | None = None  # writes them LIVE_SECONDS after the first of them came
        self.lock = threading.Lock()

    def moved(self, record: GameRecord) -> None:
        """Write the record's moves now if LIVE_SECONDS have passed since the last write, else later."""
        values = dict(moves=record.moves, clocks=json.dumps(record.clocks), evals=json.dumps(record.evals))
        with self.lock:
            if time.monotonic() - self.last < LIVE_SECONDS:
                self.pending = values
                if self.timer is None:  # at least LIVE_SECONDS after the last write, as this move is
                    self.timer = threading.Timer(LIVE_SECONDS, self._flush)
                    self.timer.daemon = True
                    self.timer.start()
                return
            if self.timer is not None:
                self.timer.cancel()
            self.last, self.pending, self.timer = time.monotonic(), None, None
        self._write(values)

    def _flush(self) -> None:
        with self.lock:
            if self.timer is None or threading.current_thread() is not self.timer:
                return  # cancelled: a move wrote them (and perhaps began another wait)
            values, self.pending, self.timer = self.pending, None, None
            self.last = time.monotonic()
        assert values is not None
        self._write(values)

    def _write(self, values: dict[str, str]) -> None:
        try:
            with self.make.begin() as session:
                session.execute(
                    update(ArenaGame).where(ArenaGame.id == self.game_id, ArenaGame.lease_token == self.token)
                    .values(**values)
                )  # fmt: skip
        except Exception:  # the database busy for a moment: the next move, or the game's end, writes it
            log.exception("writing game %d's moves", self.game_id)
