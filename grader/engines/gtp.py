"""The Go Text Protocol (GTP 2), as GoGui and the course's Gomoku players speak it.

A command is one line; the answer is '= TEXT' (success) or '? TEXT' (failure), possibly over
several lines, ended by an empty line. A command may carry a number ('12 genmove b'), which
the answer repeats ('=12 C3'). Lines the program prints between answers that do not start
one are kept as noise; stderr is the program's own.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from ..errors import BoardError
from ..games import PASS, Game, Position
from .protocol import Answer, ProtocolError, Silent
from .sessions import Ended, Session, SessionProtocol


class GtpError(ProtocolError):
    """The program broke the protocol (the message says how)."""


class GtpSilent(GtpError, Silent):
    """The program gave no complete answer in time."""


@dataclass
class Reply:
    """One answer: success or failure, its text, how long it took, and stray lines before it."""

    ok: bool
    text: str
    seconds: float
    noise: list[str] = field(default_factory=list)


class GtpClient:
    """One GTP program, talked to a command at a time."""

    def __init__(self, session: Session):
        self.session = session

    def send(self, command: str, seconds: float) -> Reply:
        """Send ``command`` and read its answer within ``seconds``. Raises GtpSilent when
        none comes in time, GtpError for a malformed one, Ended when the program ends."""
        started = time.monotonic()
        until = started + seconds
        if not self.session.send(command.strip() + "\n"):
            raise GtpError("the program stopped reading its input")
        noise: list[str] = []
        while True:  # the first line of the answer
            line = self._line(until, command, seconds, noise)
            if line[:1] in ("=", "?"):
                break
            if line.strip():
                noise.append(line[:200])
        ok = line[0] == "="
        first = line[1:].lstrip("0123456789").strip()
        body = [first] if first else []
        while True:  # up to the empty line
            line = self._line(until, command, seconds, noise, " ".join(["=" if ok else "?", *body]))
            if not line.strip():
                return Reply(ok, "\n".join(body).strip(), time.monotonic() - started, noise)
            body.append(line.rstrip())

    def _line(self, until: float, command: str, seconds: float, noise: list[str], begun: str | None = None) -> str:
        line = self.session.read_line(until)
        if line is None:
            raise GtpSilent(silence(command, seconds, noise, begun))
        return line.replace("\t", " ")


def silence(command: str, seconds: float, noise: list[str], begun: str | None) -> str:
    """Why no complete answer came: none at all, one not ended by its empty line (``begun``),
    or lines that are not GTP instead of one (``noise``)."""
    what = f"no complete answer to '{command.strip()[:40]}' within {seconds:g} s"
    if begun is not None:
        return f"{what}: its answer '{begun[:40]}' was not ended by an empty line (GTP ends every answer with one)"
    if noise:
        return f"{what}: it printed '{noise[-1][:40]}'; a GTP answer starts with '=' or '?'"
    return what


class GtpProtocol(SessionProtocol):
    """One engine's side of games over GTP: 'boardsize' and 'clear_board' for each game,
    'play' for the opponent's moves since the engine's last (not its passes: Othello's are
    forced, and its GTP engines, such as GRhino's, refuse 'play b pass' and infer them),
    'genmove' for its move (the engine plays its own answer on its board, as GTP says)."""

    name, title = "gtp", "GTP"

    def __init__(self, session: Session, game: Game, depth: int | None = None):
        super().__init__(session, game, depth)
        self.client = GtpClient(session)
        self._told: int | None = None
        self.clocked = False  # the engine knows 'time_left': it is told its time before each genmove

    @classmethod
    def sets_up(cls, game: Game) -> bool:
        """GTP sets up a position by playing its stones, which only a game of placing allows: in
        Othello a GTP engine can only be told a game from the start, move by move."""
        return game.placing

    def hello(self, seconds: float) -> list[str]:
        reply = self.client.send("protocol_version", seconds)
        known = self.client.send("known_command time_left", seconds)
        self.clocked = known.ok and known.text.strip().lower() == "true"
        return [f"protocol_version {reply.text}"]

    def new_game(self) -> None:
        self._told = None

    def ask(self, start: Position, plies: list[int], seconds: float) -> Answer:
        until = time.monotonic() + seconds
        colours = dict(zip(self.game.sides, ("b", "w")))
        pos = start
        if self._told is None:
            size = round(len(start.board_string()) ** 0.5)
            for command in (f"boardsize {size}", "clear_board"):
                self._ok(command, until)
            for token, sq in self._setup(start):
                self._ok(f"play {colours[token]} {self.game.square_name(sq)}", until)
            self._told = 0
        for i, sq in enumerate(plies):
            if i >= self._told and sq != PASS:  # the opponent's moves since its last (a pass is forced: not told)
                self._ok(f"play {colours[pos.token]} {self.game.square_name(sq)}", until)
            pos = pos.play(sq)
        if self.clocked:  # GTP's time is whole seconds: what is left of the clock (or the move's limit), rounded down
            self._ok(f"time_left {colours[pos.token]} {int(max(until - time.monotonic(), 0))} 0", until)
        reply = self.client.send(f"genmove {colours[pos.token]}", max(until - time.monotonic(), 0.001))
        if not reply.ok:
            raise ProtocolError(f"genmove failed: '? {reply.text[:60]}'")
        self._told = len(plies) + 1  # it played its own move
        text = reply.text.split()[0] if reply.text.split() else ""
        if text.lower() == "resign":
            raise ProtocolError("the engine resigned")
        try:
            move = self.game.parse_square(text)
        except BoardError:
            raise ProtocolError(f"it answered '= {reply.text[:20]}' to genmove, and '{text[:20]}' is not a point "
                                f"(like {self.game.square_name(0)})") from None  # fmt: skip
        return Answer(move, text, None, None, reply.noise)

    def _setup(self, start: Position) -> list[tuple[str, int]]:
        """The plays that set up ``start`` after 'clear_board' (which gives the game's start):
        none from the start; else its stones, black's then white's, where a move only places
        a stone (Gomoku). Othello's flips allow no such setup (tournaments refuse it first)."""
        if start.board_string() == self.game.start().board_string() and start.token == self.game.sides[0]:
            return []
        if not self.game.placing:
            raise ProtocolError(f"GTP sets up {self.game.title} only from its start position")
        board = start.board_string()
        return [(token, sq) for token in self.game.sides for sq, ch in enumerate(board) if ch == token]

    def _ok(self, command: str, until: float) -> None:
        reply = self.client.send(command, max(until - time.monotonic(), 0.001))
        if not reply.ok:
            raise ProtocolError(f"'{command}' failed: '? {reply.text[:60]}'")


__all__ = ["Ended", "GtpClient", "GtpError", "GtpProtocol", "GtpSilent", "Reply"]
