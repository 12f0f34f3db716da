"""The NBoard protocol: an Othello engine kept running for a whole game, talked to by lines.

As Chris Welty's NBoard GUI speaks it, and as Edax, NTest and most hobby engines answer it.
The grader sends:

- ``nboard 2`` once, then ``set depth N`` when the engine has a depth option;
- ``set game GGF`` before the engine's first move of a game (the game from the position it
  started from, every ply since, a pass as PA), then ``move M`` for each ply played since the
  engine last moved, its own move included (the engine does not play its answer itself);
- ``ping N`` then ``go`` for each move: the engine answers ``pong N`` once it has read
  everything before, then ``=== M[/EVAL[/TIME]]`` (``=== M EVAL TIME`` as Edax writes it
  is read too). An answer before the ``pong`` is an answer to something earlier: it is not
  trusted, and the grader goes on waiting.

It never sends ``hint``, ``learn`` nor ``analyze``. The engine's other lines are kept with
the move they came with (``status ...``, ``nodestats ...``, ``search ...``, ``set myname``),
and any line the protocol does not know is kept too and otherwise ignored.
"""

from __future__ import annotations

import math
import time

from ..errors import BoardError
from ..games import PASS, Game, Position
from ..games.ggf import game_in_progress
from .protocol import Answer, ProtocolError, Silent
from .sessions import Ended, Session, SessionProtocol

VERSION = 2
KEEP_LINES = 20  # analysis lines kept per move


class NBoardProtocol(SessionProtocol):
    """One engine's side of games over NBoard: ``hello`` once, then ``ask`` for each move."""

    name, title, depth_option = "nboard", "NBoard", True

    def __init__(self, session: Session, game: Game, depth: int | None = None):
        super().__init__(session, game, depth)
        self.myname: str | None = None  # what the engine calls itself ('set myname')
        self._ping = 0
        self._told: int | None = None  # plies the engine knows of this game; None: no game yet
        self.stale = 0  # answers it gave before its pong (not trusted)

    def new_game(self) -> None:
        """The next question starts a new game ('set game')."""
        self._told = None

    def _send(self, text: str) -> None:
        if not self.session.send(text):
            raise ProtocolError("the engine stopped reading its input")

    def hello(self, seconds: float) -> list[str]:
        """Start the protocol and wait for the engine to be ready (its pong)."""
        self._send(f"nboard {VERSION}\n" + (f"set depth {self.depth}\n" if self.depth is not None else ""))
        return self._sync(time.monotonic() + seconds, "the NBoard handshake (nboard, ping)")

    def ask(self, start: Position, plies: list[int], seconds: float) -> Answer:
        """The engine's move in the game from ``start`` after ``plies`` (passes included),
        within ``seconds``. Raises Silent when it gives none in time, ProtocolError when it
        answers something that is not a move, Ended when it ends."""
        until = time.monotonic() + seconds
        if self._told is None:
            self._send(f"set game {game_in_progress(start, plies, self.game)}\n")
        else:
            self._send("".join(f"move {self._move_text(m)}\n" for m in plies[self._told :]))
        self._told = len(plies)  # its own answer is not played until it is told it, with the next moves
        lines = self._sync(until, "the move", then="go\n")
        while True:
            line = self.session.read_line(until)
            if line is None:
                raise Silent(f"no move within {seconds:.2f} s" + _stray(lines))
            if not line.startswith("==="):
                if self._bare_move(line):
                    raise ProtocolError(f"it printed '{line.strip()[:40]}'; an NBoard answer starts with '=== ' "
                                        f"('=== {line.split()[-1][:20]}')")  # fmt: skip
                self._keep(line, lines)
                continue
            return self._answer(line, lines)

    def _bare_move(self, line: str) -> bool:
        """Whether ``line`` is a move without the '=== ' an answer starts with ('f5', 'move f5')."""
        words = line.split()
        if not words or len(words) > 2 or (len(words) == 2 and words[0].lower() not in ("move", "play", "bestmove")):
            return False
        if words[-1].upper() == "PA":
            return True
        try:
            self.game.parse_square(words[-1])
        except BoardError:
            return False
        return True

    def _sync(self, until: float, what: str, then: str = "") -> list[str]:
        """Send a ping (and ``then``) and read up to its pong; the lines before it are kept."""
        self._ping += 1
        self._send(f"ping {self._ping}\n{then}")
        lines: list[str] = []
        while True:
            line = self.session.read_line(until)
            if line is None:
                raise Silent(f"no pong to ping {self._ping} before {what}: the engine did not answer in time")
            words = line.split()
            if words[:1] == ["pong"] and words[1:2] == [str(self._ping)]:
                return lines
            if line.startswith("==="):
                self.stale += 1  # an answer to an earlier question: not this move's
            self._keep(line, lines)

    def _keep(self, line: str, lines: list[str]) -> None:
        if line.startswith("set myname "):
            self.myname = line[len("set myname ") :].strip()[:40] or self.myname
        if line.strip() and len(lines) < KEEP_LINES:
            lines.append(line[:200])

    def _answer(self, line: str, lines: list[str]) -> Answer:
        rest = line[3:].strip()
        parts = [p.strip() for p in rest.split("/")] if "/" in rest else rest.split()
        if not parts or not parts[0]:
            raise ProtocolError(f"'{line[:60]}' is not an answer of the form '=== MOVE[/EVAL[/TIME]]'")
        text = parts[0]
        try:
            move = PASS if text.upper() == "PA" else self.game.parse_square(text)
        except BoardError:
            raise ProtocolError(f"'{text[:20]}' in '{line[:60]}' is not a square (a1-h8) nor PA") from None
        return Answer(move, text, _number(parts, 1), _number(parts, 2), lines)

    def _move_text(self, move: int) -> str:
        return "PA" if move == PASS else self.game.square_name(move)


KNOWN = ("status", "nodestats", "search", "set", "pong", "learn", "hint", "===")  # lines NBoard engines print


def _stray(lines: list[str]) -> str:
    """What the engine printed that NBoard does not know, if anything: said after a silence."""
    stray = [line for line in lines if line.split()[:1] and not any(line.startswith(k) for k in KNOWN)]
    return f": it printed '{stray[-1][:40]}', and an NBoard answer starts with '=== '" if stray else ""


def _number(parts: list[str], i: int) -> float | None:
    """The ``i``-th field as a number (None: missing, empty, not a number, or not finite:
    'nan' and 'inf' would make the records invalid JSON)."""
    try:
        value = float(parts[i]) if i < len(parts) and parts[i] else None
    except ValueError:
        return None
    return value if value is not None and math.isfinite(value) else None


__all__ = ["Answer", "Ended", "NBoardProtocol", "ProtocolError", "Silent"]
