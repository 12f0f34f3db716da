"""What every engine protocol is: a class that talks to one program kept running for a game.

python-chess's ``engine.Protocol`` (``UciProtocol`` and ``XBoardProtocol`` beneath it) is the
model: a protocol is a subclass of ``Protocol``, found by its ``name`` in the registry
(``grader.engines.get_protocol``), and nothing above the engines asks which one it has. It is
made for one program (its ``Session``) and one game, and is asked ``hello`` once, ``ask`` for
each move and ``new_game`` between games. Built in: ``nboard`` and ``gtp``; another installed
package adds one through the ``grader.protocols`` entry point group.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import ClassVar

from ..errors import GraderError
from ..games import Game, Position
from .runner import Session


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


class Protocol(ABC):
    """One engine's side of games over a protocol: ``hello`` once, then ``ask`` for each move,
    ``new_game`` before the next game. ``ask`` raises Silent when no move comes in time,
    ProtocolError for an answer that is not a move, runner.Ended when the program ends."""

    name: ClassVar[str]  # 'nboard': config.yaml's 'protocol:', and the prefix of 'nboard:COMMAND'
    title: ClassVar[str]  # 'NBoard': in messages
    depth_option: ClassVar[bool] = False  # whether it can set the engine's depth (config.yaml's 'depth:')

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


__all__ = ["Answer", "Protocol", "ProtocolError", "Silent"]
