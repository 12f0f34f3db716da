"""The arena's tables: engines with their versions, SPRT tests between two versions, the games
they play, and the queue of game jobs the workers claim.

- ``ArenaEngine``: an author's engine (a script, an NBoard or a GTP program) for one game,
  seen by its owner and the course's staff (``open``: by every signed-in user too).
- ``EngineVersion``: one upload of it (its bytes kept here, as a submission's; an archive with
  the command that starts it), checked at once by a ``check`` job: ``checking``, then ``ok`` or
  ``failed`` with the ``message`` the author reads.
- ``ArenaTest``: "version B against version A", its settings, and its running SPRT state.
- ``ArenaGame``: one game (who played whom with which colours, the opening, moves, clocks,
  evaluations, result); ``status`` queued, running (``lease_token`` the job's lease playing
  it; its moves written as they come) or done.
- ``GameJob``: a job of the game queue, claimed with a lease exactly as a grading ``Job``
  (``arena.leases.claim_game``): ``check`` (one version's check game) or ``games`` (the games whose
  ``job_id`` it is: a pair, each opening with both colours). A job whose worker died is
  claimed again, its games replayed from their start, and only the lease's holder writes them:
  each game counts once. Higher ``priority`` first, then the oldest.

How a ladder uses them: a ladder is a set of engines whose games are scheduled while workers
idle. Its own table (with its engines, options, and a ``ladder_id`` column it adds to
``arena_games``) lives beside these; it queues ``GameJob(kind=GAMES, priority=LADDER_PRIORITY)``
jobs with their ``ArenaGame`` rows (``test_id`` None), a pair at a time when ``arena.leases.waiting_games``
is zero, between the engines' latest ``ok`` versions, and reads the results of the ``done``
games. A worker thread plays a job's games (``arena.play.ArenaPlayer``, ``play_game`` for each
game in order, under the game's ``tc_seconds``/``tc_increment``); once they are written, in that
transaction, it calls the ``on_games(session, games)`` its ``Workers`` were given (the ladder's code).
"""

from __future__ import annotations

import datetime as dt

from sqlalchemy import DateTime, Float, ForeignKey, Integer, LargeBinary, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, validates

from ...names import visible
from .models import QUEUED, RUNNING, Base, now

CHECKING, OK, FAILED = "checking", "ok", "failed"  # a version's check
DONE = "done"  # a game, and a game job: QUEUED, RUNNING, then DONE
CHECK, GAMES = "check", "games"  # a game job's kind
TEST_PRIORITY, LADDER_PRIORITY = 10, 0  # tests before ladders: a ladder plays while workers idle
# a test's status: running, then how it ended
H0, H1, LIMIT, STOPPED = "H0", "H1", "limit", "stopped"  # rejected, accepted, game limit reached, stopped by its owner


class ArenaEngine(Base):
    __tablename__ = "arena_engines"
    __table_args__ = (UniqueConstraint("owner_id", "name"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    owner_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    name: Mapped[str] = mapped_column(String(60))
    protocol: Mapped[str] = mapped_column(String(16))  # a protocol of the registry: script, nboard, gtp, ...
    game: Mapped[str] = mapped_column(String(40))  # a game's name or variant spec (othello, gomoku:size=9)
    open: Mapped[int] = mapped_column(Integer, default=0)  # 1: every signed-in user sees it (an open ladder)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=now)

    @validates("name")
    def _visible(self, key: str, value: str) -> str:
        return visible(value)


class EngineVersion(Base):
    __tablename__ = "engine_versions"
    __table_args__ = (UniqueConstraint("engine_id", "number"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    engine_id: Mapped[int] = mapped_column(ForeignKey("arena_engines.id"), index=True)
    number: Mapped[int] = mapped_column(Integer)  # 1, 2, ... per engine
    label: Mapped[str] = mapped_column(String(60), default="")  # the author's note (a commit, "deeper search")
    filename: Mapped[str] = mapped_column(String(120))  # as uploaded, shown only
    size: Mapped[int] = mapped_column(Integer)
    sha256: Mapped[str] = mapped_column(String(64))
    content: Mapped[bytes] = mapped_column(LargeBinary)
    command: Mapped[str | None] = mapped_column(String(300), nullable=True)  # an archive's: how it starts
    status: Mapped[str] = mapped_column(String(16), default=CHECKING)
    message: Mapped[str | None] = mapped_column(Text, nullable=True)  # why the check failed, or how it went
    check_game: Mapped[str | None] = mapped_column(Text, nullable=True)  # JSON: the check game's GameRecord
    uploaded_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=now)
    checked_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)

    @validates("label", "filename")
    def _visible(self, key: str, value: str) -> str:
        return visible(value)


class ArenaTest(Base):
    """An SPRT test of ``new_id`` against ``base_id`` (versions of one engine, or of two of the
    owner's): played in pairs until the SPRT decides or ``max_games`` are played."""

    __tablename__ = "arena_tests"
    id: Mapped[str] = mapped_column(String(32), primary_key=True)  # random: ids are not guessable
    owner_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    engine_id: Mapped[int] = mapped_column(ForeignKey("arena_engines.id"), index=True)  # the new version's
    new_id: Mapped[int] = mapped_column(ForeignKey("engine_versions.id"))
    base_id: Mapped[int] = mapped_column(ForeignKey("engine_versions.id"))
    game: Mapped[str] = mapped_column(String(40))
    tc_seconds: Mapped[float] = mapped_column(Float)
    tc_increment: Mapped[float] = mapped_column(Float, default=0.0)
    openings: Mapped[str] = mapped_column(Text)  # JSON: the list of openings, played in order
    openings_name: Mapped[str] = mapped_column(String(120))  # where they came from: "bundled", a file's name
    elo0: Mapped[float] = mapped_column(Float)
    elo1: Mapped[float] = mapped_column(Float)
    alpha: Mapped[float] = mapped_column(Float)
    beta: Mapped[float] = mapped_column(Float)
    model: Mapped[str] = mapped_column(String(16))
    max_games: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(16), default=RUNNING)  # running, H0, H1, limit, stopped
    pairs_queued: Mapped[int] = mapped_column(Integer, default=0)
    # the pentanomial counts of the new version's pairs: LL, LD, DD+WL, WD, WW
    ll: Mapped[int] = mapped_column(Integer, default=0)
    ld: Mapped[int] = mapped_column(Integer, default=0)
    dd: Mapped[int] = mapped_column(Integer, default=0)
    wd: Mapped[int] = mapped_column(Integer, default=0)
    ww: Mapped[int] = mapped_column(Integer, default=0)
    wins: Mapped[int] = mapped_column(Integer, default=0)  # games of the new version
    draws: Mapped[int] = mapped_column(Integer, default=0)
    losses: Mapped[int] = mapped_column(Integer, default=0)
    llr: Mapped[float] = mapped_column(Float, default=0.0)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=now)
    finished_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)

    @validates("openings_name")
    def _visible(self, key: str, value: str) -> str:
        return visible(value)


class ArenaGame(Base):
    __tablename__ = "arena_games"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    test_id: Mapped[str | None] = mapped_column(ForeignKey("arena_tests.id"), index=True, nullable=True)
    job_id: Mapped[int | None] = mapped_column(ForeignKey("game_jobs.id"), index=True, nullable=True)
    pair: Mapped[int] = mapped_column(Integer, default=0)  # the two games of a pair share it (within a test)
    black_id: Mapped[int] = mapped_column(ForeignKey("engine_versions.id"), index=True)  # moves first
    white_id: Mapped[int] = mapped_column(ForeignKey("engine_versions.id"), index=True)
    opening: Mapped[str] = mapped_column(Text, default="")
    tc_seconds: Mapped[float | None] = mapped_column(Float, nullable=True)
    tc_increment: Mapped[float | None] = mapped_column(Float, nullable=True)
    status: Mapped[str] = mapped_column(String(16), default=QUEUED, index=True)
    lease_token: Mapped[str | None] = mapped_column(String(32), nullable=True)  # the job's lease playing it
    played_by: Mapped[str | None] = mapped_column(String(100), nullable=True)
    moves: Mapped[str] = mapped_column(Text, default="")  # the transcript, the opening included
    clocks: Mapped[str] = mapped_column(Text, default="[]")  # JSON: seconds left after each engine move
    evals: Mapped[str] = mapped_column(Text, default="[]")  # JSON: each engine move's evaluation, or null
    result: Mapped[str] = mapped_column(String(8), default="")  # 1-0, 0-1, 1/2-1/2 (black's first)
    reason: Mapped[str] = mapped_column(String(16), default="")  # normal, forfeit, adjudicated
    cause: Mapped[str | None] = mapped_column(Text, nullable=True)  # why the forfeiting side lost
    record: Mapped[str | None] = mapped_column(Text, nullable=True)  # JSON: the whole GameRecord once done
    started_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    finished_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class GameJob(Base):
    __tablename__ = "game_jobs"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    kind: Mapped[str] = mapped_column(String(16))  # CHECK or GAMES
    version_id: Mapped[int | None] = mapped_column(ForeignKey("engine_versions.id"), nullable=True)  # CHECK's
    priority: Mapped[int] = mapped_column(Integer, default=TEST_PRIORITY)
    state: Mapped[str] = mapped_column(String(16), index=True, default=QUEUED)  # queued, running, done
    claimed_by: Mapped[str | None] = mapped_column(String(100), nullable=True)
    claimed_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    lease_token: Mapped[str | None] = mapped_column(String(32), nullable=True)
    lease_until: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=now)
