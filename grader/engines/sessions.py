"""Protocols spoken to a program kept running for a whole game (NBoard, GTP, a plugin's).

The program starts in the same isolation and limits as a script (CPU seconds aside: the clock
is its limit), once for a game, and after a clean game waits in the ``EnginePool`` for its
engine's next game; one that misbehaved is killed with all it started at once. Where the system
can freeze a cgroup, its processes are frozen whenever it is not on move: while its opponent
thinks and while it waits for its next game.
"""

from __future__ import annotations

import time
from abc import abstractmethod
from typing import cast

from ..errors import GraderError
from ..games import Game, Position
from .programs import ProtocolEngine
from .protocol import Answer, EnginePool, EngineSpec, Player, Protocol, ProtocolError, Silent, Turn
from .runner import Ended, RunResult, Session
from .sandbox import Sandbox, claim_uid, release_uid
from .scripts import Runs, RunSettings

HELLO_SECONDS = 10.0  # the most a protocol engine may take to start and answer its first ping


class SessionProtocol(Protocol):
    """One engine's side of games over a protocol spoken to a program kept running: made for
    one program (its ``Session``) and one game; ``hello`` once, then ``ask`` for each move,
    ``new_game`` before the next game. ``ask`` raises Silent when no move comes in time,
    ProtocolError for an answer that is not a move, runner.Ended when the program ends."""

    def __init__(self, session: Session, game: Game, depth: int | None = None) -> None:
        self.session, self.game, self.depth = session, game, depth

    @abstractmethod
    def hello(self, seconds: float) -> list[str]:
        """Start the protocol within ``seconds``; what the engine printed meanwhile."""

    @abstractmethod
    def new_game(self) -> None:
        """The next question starts a new game."""

    @abstractmethod
    def ask(self, start: Position, plies: list[int], seconds: float) -> Answer:
        """The engine's move in the game from ``start`` after ``plies`` (passes included),
        within ``seconds``."""

    @classmethod
    def player(cls, engine: EngineSpec, settings: RunSettings, where: Runs, game: Game,
               pool: EnginePool | None = None) -> Player:  # fmt: skip
        if not isinstance(engine, ProtocolEngine):
            raise GraderError(f"engine '{engine.origin}' is a script: give it without '{cls.name}:'")
        return ProtocolPlayer(engine, settings, where, game, pool, cls)


class Running:
    """A protocol engine's process: its session, its protocol client, and the uid it runs as."""

    def __init__(self, session: Session, client: SessionProtocol, uid: int | None):
        self.session, self.client, self.uid = session, client, uid
        self.ended: RunResult | None = None

    def stderr(self) -> str:
        return self.session.err_tail.decode("utf-8", "replace")

    def close(self) -> RunResult:
        """Kill it and all it started; how it ended."""
        if self.ended is None:
            self.ended = self.session.close()
        if self.uid is not None:
            release_uid(self.uid)
            self.uid = None
        return self.ended


class ProtocolPlayer(Player):
    """An engine of a ``SessionProtocol``: a process of its own in a sandbox (and, as root, a
    uid) of its own, started for the game or taken from ``pool``, where it goes back after a
    clean game."""

    def __init__(self, engine: ProtocolEngine, settings: RunSettings, where: Runs, game: Game,
                 pool: EnginePool | None, protocol: type[SessionProtocol]):  # fmt: skip
        self.engine, self.settings, self.where, self.game, self.pool = engine, settings, where, game, pool
        self.protocol = protocol
        self.running: Running | None = None
        self.failed = False
        self._said: list[str] = []  # what it printed while starting: kept with its first move

    def begin(self) -> Turn | None:
        self.running = cast(Running | None, self.pool.take(self.engine.digest)) if self.pool else None
        if self.running is not None:
            self.running.session.place()  # its last game may have been another job slot's
            self.running.client.new_game()
            return None
        sandbox, uid = self.where.sandbox(self.settings), None
        if sandbox.uid is not None:  # not the worker's: a script's end would kill all of its uid
            uid = claim_uid()
            sandbox = Sandbox(sandbox.mechanism, uid)
        folder = str(self.where.stage.folder(self.engine.bundle)) if self.engine.bundle else None
        argv = self.engine.command(self.settings.python, folder)
        session = Session(argv, self.settings.limits, sandbox, self.where.stop, folder, folder)
        client = self.protocol(session, self.game, self.engine.depth)
        self.running = Running(session, client, uid)
        error = session.start()
        if error:
            self.failed = True
            return Turn(None, f"the engine {error}", fatal=True)
        try:
            self._said = self.running.client.hello(max(HELLO_SECONDS, self.settings.limits.wall_seconds))
        except ProtocolError as e:
            return self._fail(Turn(None, str(e), timed_out=isinstance(e, Silent)))
        except Ended:
            return self._fail(Turn(None, self._gone(), interrupted=self.where.stop.is_set()))
        self.running.session.pause()  # until its turn
        return None

    def turn(self, pos: Position, start: Position, plies: list[int], seconds: float) -> Turn:
        assert self.running is not None
        session = self.running.session
        session.resume()
        asked, used = time.monotonic(), session.cpu_seconds()
        try:
            answer = self.running.client.ask(start, plies, seconds)
        except ProtocolError as e:
            return self._fail(Turn(None, str(e), time.monotonic() - asked, timed_out=isinstance(e, Silent)))
        except Ended:
            problem = self._gone()
            return self._fail(Turn(None, problem, time.monotonic() - asked, interrupted=self.where.stop.is_set()))
        wall = time.monotonic() - asked
        session.pause()
        lines, self._said = self._said + answer.lines, []
        return Turn(answer.move, None, wall, session.cpu_seconds() - used, eval=answer.eval, lines=lines)

    def _fail(self, turn: Turn) -> Turn:
        """A turn the engine cannot go on from: it will be stopped at the end of the game."""
        self.failed = turn.fatal = True
        turn.stderr_tail = self.running.stderr() if self.running else ""
        return turn

    def _gone(self) -> str:
        """The engine ended by itself (or printed past the output limit): how, in words."""
        assert self.running is not None
        ended = self.running.close()
        if ended.output_limited:
            return "the engine printed more than limits.output_bytes and was stopped"
        said = ended.describe()
        return f"the engine {said}" if said else "the engine ended in the middle of the game"

    def end(self, clean: bool = False) -> RunResult | None:
        """After a ``clean`` game (no problem of its own), the engine waits in the pool for its
        next game; else it is stopped."""
        if self.running is None:
            return None
        if clean and self.pool is not None and not self.failed and self.running.ended is None:
            self.pool.give(self.engine.digest, self.running)
            return None
        return self.running.close()
