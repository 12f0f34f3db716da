"""Gomoku game records in PSQ, the format of Piskvork (the manager Gomocup, the computer Gomoku
tournament, plays its games with) and of Gomocup's published games.

Source: Piskvork's own writer and reader, ``savePsq`` and ``openPsq`` in source/game.cpp of
https://github.com/plastovicka/Piskvork. One game a file, a line each:

    Piskvorky 9x9, 7:7, 0     the board (width x height), each player's level, who moved first
    5,5,1234                  a move: column, row (both from 1; row 1 at the top), its milliseconds
    ...
    black                     the players' names, the first named is player 0 (Piskvork
    white                     writes these in tournaments: its engines' file names)
    0                         how the game ended: 0 normally, 15 a loss on time, -2 another error

The grader writes black as player 0, so the header ends in 0. A level is Piskvork's for a time
per move (1: 0.1 s ... 11: 60 s): the tournament's time per move (with a game clock, its
increment), rounded down to one of them.
Rows count from the top as Piskvork draws its board, so a record shows the picture GTP shows
with its row 1 at the bottom: PSQ row = size + 1 - GTP row. PSQ has no result field: a game
that ended normally is decided by its last position (a winning line, or a full board); after
an error code the side to move lost (it forfeited; a game whose second engine failed to start
is the exception: games.txt has its result). A game from a position ('BOARD TOKEN') lists its
stones first, black and white in turn; opening moves, and the solver's moves of an
adjudicated game, take 0 ms.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable

from ..errors import BoardError, BoardFileError
from .base import Game, Position
from .gomoku import Gomoku

FOLDER = "psq"  # the tournament folder's sub-folder of records, one game a file
LEVELS = (100, 300, 600, 1000, 1500, 2500, 5000, 10000, 15000, 30000, 60000)  # Piskvork's levelTab, ms a move
NORMAL, TIMEOUT, ERROR = 0, 15, -2  # Piskvork's codes of how a game ended (finishGame)
_HEADER = re.compile(r"Piskvorky (\d+)x(\d+), (-?\d+):(-?\d+), ([01])")
_MOVE = re.compile(r"(-?\d+),(-?\d+)(?:,(-?\d+))?")


def supports(game: Game) -> bool:
    """Whether PSQ holds this game's records (Gomoku, any size and rule)."""
    return isinstance(game, Gomoku)


def level(move_seconds: float) -> int:
    """Piskvork's level for a time per move: the slowest whose time is not above it (1 at least)."""
    return max(1, sum(ms <= move_seconds * 1000 for ms in LEVELS))


def point(sq: int, size: int) -> tuple[int, int]:
    """A point's PSQ coordinates: (column, row), both from 1, row 1 at the top."""
    row, col = divmod(sq, size)
    return col + 1, size - row


def square(x: int, y: int, size: int) -> int:
    """The point at PSQ (column, row); BoardError off the board."""
    if not (1 <= x <= size and 1 <= y <= size):
        raise BoardError(f"move {x},{y} is off the {size}x{size} board")
    return (size - y) * size + x - 1


def setup_moves(start: Position) -> list[int]:
    """The stones of a position, black and white in turn (black has as many as white, or one more)."""
    board = start.board_string()
    xs, os_ = [i for i, c in enumerate(board) if c == "x"], [i for i, c in enumerate(board) if c == "o"]
    return [m for pair in zip(xs, os_ + [-1]) for m in pair if m >= 0]


def end_code(record: Any) -> int:
    """How a game ended, as Piskvork codes it."""
    if not record.forfeit:
        return NORMAL
    timed = any(e.get("timed_out") for e in record.events if e.get("engine") == record.forfeit)
    return TIMEOUT if timed else ERROR


def game_record(record: Any, game: Game, move_seconds: float) -> str:
    """One tournament game (a GameRecord) as a PSQ file."""
    start, opening = game.opening_start(record.opening)
    moves = game.parse_transcript(record.moves) if record.moves else opening
    size = start.size  # type: ignore[attr-defined]
    times = [0] * len(moves)
    for i, spent in enumerate(record.move_times):  # the engines' moves follow the opening's
        if len(opening) + i < len(times) and spent and spent[0] is not None:
            times[len(opening) + i] = round(spent[0] * 1000)
    lv = level(move_seconds)
    lines = [f"Piskvorky {size}x{size}, {lv}:{lv}, 0"]
    lines += [f"{x},{y},0" for x, y in (point(m, size) for m in setup_moves(start))]
    lines += [f"{x},{y},{t}" for (x, y), t in zip((point(m, size) for m in moves), times)]
    lines += [_name(record.black), _name(record.white), str(end_code(record))]
    return "\n".join(lines) + "\n"


def _name(text: str) -> str:
    return " ".join(text.split()) or "-"


def file_name(record: Any) -> str:
    """A game's file: its id ('r1:0-1:2' -> 'r1_0-1_2.psq')."""
    return re.sub(r"[^A-Za-z0-9.-]", "_", record.id) + ".psq"


def write_games(records: Iterable[Any], game: Game, move_seconds: float) -> dict[str, str]:
    """Each game's PSQ file: file name -> text."""
    return {file_name(r): game_record(r, game, move_seconds) for r in records}


@dataclass(frozen=True)
class PsqGame:
    """A PSQ file read: the board size, the moves as (column, row) from 1 (row 1 at the top),
    their milliseconds, the players (the one who moved first first) and the end code (None:
    not given)."""

    size: int
    moves: tuple[tuple[int, int], ...]
    times: tuple[int, ...]
    players: tuple[str, ...]
    code: int | None

    def replay(self, game: Game) -> tuple[Position, list[int], str]:
        """The last position under ``game``'s rules on this board, the moves as points, and the
        result from black's view: '1-0', '0-1', '1/2-1/2', or '*' for a game not over."""
        rules = game.sized(self.size)
        moves = [square(x, y, self.size) for x, y in self.moves]
        pos = rules.replay(moves)
        if pos.is_game_over():
            won = pos.winner()  # type: ignore[attr-defined]
            return pos, moves, {"x": "1-0", "o": "0-1", None: "1/2-1/2"}[won]
        if self.code not in (None, NORMAL):  # the side to move forfeited
            return pos, moves, "0-1" if pos.token == "x" else "1-0"
        return pos, moves, "*"


def parse(text: str, where: str = "PSQ record") -> PsqGame:
    """A PSQ file's game; BoardFileError naming the line that is not PSQ."""
    lines = [line.strip() for line in text.splitlines()]
    header = _HEADER.fullmatch(lines[0]) if lines else None
    if header is None:
        raise BoardFileError(f"{where}: line 1 is not a PSQ header like 'Piskvorky 15x15, 11:11, 0'")
    width, height, first = int(header.group(1)), int(header.group(2)), int(header.group(5))
    if width != height:
        raise BoardFileError(f"{where}: a {width}x{height} board: Gomoku here is played on square boards")
    moves, times, n = [], [], 1
    while n < len(lines) and (found := _MOVE.fullmatch(lines[n])):
        moves.append((int(found.group(1)), int(found.group(2))))
        times.append(int(found.group(3) or 0))
        n += 1
    rest = [line for line in lines[n:] if line]
    code = int(rest.pop()) if rest and re.fullmatch(r"-?\d+", rest[-1]) else None
    if len(rest) not in (0, 2):
        raise BoardFileError(f"{where}: line {n + 1} is neither a move 'x,y,ms' nor one of the two players' names")
    players = tuple(rest[::-1] if first == 1 else rest)
    return PsqGame(width, tuple(moves), tuple(times), players, code)
