"""What every engine protocol is: how the grader plays an engine's program, one move at a time.

python-chess's ``engine.Protocol`` (``UciProtocol`` and ``XBoardProtocol`` beneath it) is the
model: a protocol is a subclass of ``Protocol``, found by its ``name`` in the registry
(``grader.engines.get_protocol``), and nothing above the engines asks which one it has: a game
asks each engine's protocol for its ``Player``. Built in: ``script``, the labs' own interface,
a run per move (``script_protocol``), and ``nboard`` and ``gtp``, spoken to a program kept
running for the game (``sessions.SessionProtocol``, the class a new protocol of that kind
subclasses). Another installed package adds one through the ``grader.protocols`` entry point
group.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar
from typing import Protocol as Structural

from ..errors import GraderError
from ..games import Game, Position
from .runner import RunResult
from .scripts import Runs, RunSettings


class ProtocolError(Exception):
    """The engine broke the protocol: the message says how (the game is forfeited)."""


class Silent(ProtocolError):
    """The engine did not answer in time."""


@dataclass
class Answer:
    """An engine's move, as it gave it."""

    move: int  # a square, or PASS
    text: str  # as the engine wrote it ('F5', 'PA')
    eval: float | None  # its evaluation, from its own view (discs), when it gave one
    seconds: float | None  # the time it says it took
    lines: list[str] = field(default_factory=list)  # what else it printed since the question


@dataclass
class Turn:
    """One move asked of an engine, and how it went."""

    move: int | None  # None: no move (``problem`` says why)
    problem: str | None = None  # why the engine gave no move it can play: a crash, a protocol error
    wall: float = 0.0  # seconds from the question to the answer
    cpu: float | None = None  # CPU seconds of all its processes (None: not counted)
    timed_out: bool = False
    eval: float | None = None  # the engine's evaluation, from its own view, when it gives one
    lines: list[str] = field(default_factory=list)  # what else it printed (status, analysis)
    output_tail: str = ""
    stderr_tail: str = ""
    interrupted: bool = False  # the run was stopped (Ctrl-C)
    fatal: bool = False  # the engine cannot go on with the game (it ended, broke the protocol, lost on time)


class Player(ABC):
    """One engine in one game."""

    @abstractmethod
    def begin(self) -> Turn | None:
        """Get ready for the game; None, or what went wrong (the game is forfeited)."""

    @abstractmethod
    def turn(self, pos: Position, start: Position, plies: list[int], seconds: float) -> Turn:
        """Its move at ``pos``, reached from ``start`` by ``plies`` (passes included), within ``seconds``."""

    def end(self, clean: bool = False) -> RunResult | None:
        """The game is over (``clean``: without a problem of this engine's): stop or keep
        the engine; how it ended, if it was stopped."""
        return None


class EngineSpec(Structural):
    """An engine as its protocol gets it: a ``scripts.Script``, or a ``programs.ProtocolEngine``."""

    @property
    def protocol(self) -> str: ...  # the name of its protocol

    @property
    def digest(self) -> str: ...  # of its files and options

    @property
    def origin(self) -> str: ...  # where it was read from, for messages


class Kept(Structural):
    """An engine's process waiting between games."""

    def close(self) -> Any: ...


class EnginePool:
    """Engines kept running between games: a process that played a game cleanly waits here
    for its engine's next game (cutechess keeps engines up between games the same way), and
    ``close`` ends them all. Thread-safe."""

    def __init__(self) -> None:
        self._idle: dict[str, list[Kept]] = {}
        self._lock = threading.Lock()
        self._closed = False

    def take(self, digest: str) -> Kept | None:
        with self._lock:
            idle = self._idle.get(digest)
            return idle.pop() if idle else None

    def give(self, digest: str, running: Kept) -> None:
        with self._lock:
            if not self._closed:
                self._idle.setdefault(digest, []).append(running)
                return
        running.close()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle, self._idle = [r for rs in self._idle.values() for r in rs], {}
        for running in idle:
            running.close()


class Protocol(ABC):
    """How the grader plays one kind of engine, registered by ``name``: its ``player`` in a game."""

    name: ClassVar[str]  # 'nboard': config.yaml's 'protocol:', and the prefix of 'nboard:COMMAND'
    title: ClassVar[str]  # 'NBoard': in messages
    depth_option: ClassVar[bool] = False  # whether it can set the engine's depth (config.yaml's 'depth:')

    @classmethod
    @abstractmethod
    def player(cls, engine: EngineSpec, settings: RunSettings, where: Runs, game: Game,
               pool: EnginePool | None = None) -> Player:  # fmt: skip
        """``engine`` in a game of ``game`` (a kept engine from ``pool`` if one waits there)."""

    @classmethod
    def plays(cls, game: Game) -> bool:
        """Whether engines of this protocol play ``game`` (by default: the game names it in ``protocols``)."""
        return cls.name in game.protocols

    @classmethod
    def sets_up(cls, game: Game) -> bool:
        """Whether it can tell an engine a game of ``game`` from any position, not only move by
        move from the start."""
        return True

    @classmethod
    def check(cls, depth: int | None) -> None:
        """GraderError when an engine of this protocol cannot take these options."""
        if depth is not None and not cls.depth_option:
            raise GraderError(f"a depth is NBoard's 'set depth': give a {cls.title} engine its level in its command")


__all__ = ["Answer", "EngineSpec", "EnginePool", "Player", "Protocol", "ProtocolError", "Silent", "Turn"]
