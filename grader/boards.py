"""Test boards: reading board files and generating random endgames reached by legal play."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from pathlib import Path

from .board import Position, Square, parse_square
from .errors import BoardError, BoardFileError


@dataclass(frozen=True)
class BoardEntry:
    """One position from a board file, with the answer the file claims, if any."""

    position: Position
    label: str  # where it came from: 'FILE:LINE', or the FFO number
    best_moves: tuple[Square, ...] | None = None  # FFO: every optimal move
    score: int | None = None  # FFO: exact value (winner-takes-empties)


def parse_board_line(line: str, label: str = "") -> BoardEntry | None:
    """One line of a board file; None for a blank or comment line.

    Accepted: ``BOARD TOKEN``; the FFO file's ``number|board|side|empties|best|score|source``;
    Edax OBF ``BOARD SIDE; ...`` with X/O/- (read as x/o/.).
    """
    text = line.split("#", 1)[0].strip() if not line.lstrip().startswith("#") else ""
    if "|" not in text and "%" in text:
        text = text.split("%", 1)[0].strip()  # OBF comment
    if not text:
        return None
    where = f"{label}: " if label else ""
    try:
        if "|" in text:
            return _parse_ffo(text, label)
        head = text.split(";", 1)[0].split()
        if len(head) != 2:
            raise BoardError(
                f"expected 'BOARD TOKEN' (64-character board, then x or o), got {len(head)} field(s)"
            )
        board, token = head
        return BoardEntry(Position.from_string(_obf_board(board), token), label)
    except BoardError as e:
        raise BoardFileError(f"{where}{e}") from None


def _obf_board(board: str) -> str:
    return board.replace("-", ".")


def _parse_ffo(text: str, label: str) -> BoardEntry:
    fields = [f.strip() for f in text.split("|")]
    if len(fields) < 3:
        raise BoardError("FFO line needs at least 'number|board|side'")
    number, board, side = fields[:3]
    pos = Position.from_string(_obf_board(board), side)
    best = tuple(parse_square(s) for s in fields[4].split(",")) if len(fields) > 4 and fields[4] else None
    score = None
    if len(fields) > 5 and fields[5]:
        if not re.fullmatch(r"[-+]?[0-9]{1,3}", fields[5]):
            raise BoardError(f"FFO score {fields[5]!r} is not a whole number of discs")
        score = int(fields[5])
    return BoardEntry(pos, f"FFO #{number}" if number else label, best, score)


def read_lines(path: str | Path, what: str) -> list[str]:
    """The lines of a text file the user gave (``what``: 'board file', say), as UTF-8 with or
    without a byte-order mark. Anything else is a BoardFileError naming the real cause."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise BoardFileError(f"{what} {str(p)!r} not found: give the path of an existing file") from None
    except IsADirectoryError:
        raise BoardFileError(f"{what} {str(p)!r} is a folder: give the path of a file") from None
    except OSError as e:
        raise BoardFileError(f"cannot read {what} {str(p)!r}: {e.strerror}") from None
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise BoardFileError(f"{what} {str(p)!r} is UTF-16 text: save it as UTF-8 (plain text)")
    if b"\0" in data:
        line = data.count(b"\n", 0, data.index(b"\0")) + 1
        raise BoardFileError(f"{what} {str(p)!r} is not a text file (a NUL byte on line {line}): give a plain text file")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        start = 3 if data.startswith(b"\xef\xbb\xbf") else 0
        line = data.count(b"\n", 0, e.start + start) + 1
        raise BoardFileError(
            f"{what} {str(p)!r}: line {line} is not UTF-8 text (byte {data[e.start + start]:#04x}): save the file as UTF-8"
        ) from None
    return text.splitlines()


def read_boards(path: str | Path) -> list[BoardEntry]:
    """Every position in a board file (see ``parse_board_line`` for the formats)."""
    p = Path(path)
    entries = []
    for i, line in enumerate(read_lines(p, "board file"), 1):
        entry = parse_board_line(line, f"{p}:{i}")
        if entry is not None:
            entries.append(entry)
    if not entries:
        raise BoardFileError(f"board file {str(p)!r} holds no boards: one 'BOARD TOKEN' per line")
    return entries


def random_position(rng: random.Random, empties: int) -> Position:
    """A position with ``empties`` empty squares reached by random legal play from the start,
    whose side to move has a legal move."""
    if not 1 <= empties <= 59:
        raise BoardError(f"cannot make a position with {empties} empties: use 1 to 59")
    while True:
        pos = Position.start()
        while pos.empties > empties:
            moves = pos.moves()
            if moves:
                pos = pos.play(rng.choice(moves))
            elif pos.is_game_over():
                break
            else:
                pos = pos.pass_turn()
        if pos.empties != empties:
            continue  # the game ended early: play another
        if pos.moves():
            return pos
        if pos.must_pass():
            return pos.pass_turn()


SHARE = Path(__file__).resolve().parent / "share"  # data that ships with the package


def bundled(*parts: str) -> Path:
    """A file shipped with the package: ``bundled('fixtures', 'standard.txt')``."""
    return SHARE.joinpath(*parts)


def random_boards(seed: int, empties: range, count: int) -> list[Position]:
    """``count`` random positions for each number of empties, in rising order of empties.

    Each number of empties has its own generator seeded from (seed, empties), so the boards
    with 5 empties are the same whichever range they are asked in, on any machine.
    """
    out = []
    for e in empties:
        rng = random.Random(f"grader:{seed}:{e}")
        out += [random_position(rng, e) for _ in range(count)]
    return out


def parse_empties(text: str) -> range:
    """'1-9' or '5' -> a range of numbers of empties."""
    lo, _, hi = text.partition("-")
    try:
        r = range(int(lo), int(hi or lo) + 1)
    except ValueError:
        raise BoardError(f"bad empties range {text!r}: write it like 1-9 or 5") from None
    if not r or r.start < 1 or r.stop > 60:
        raise BoardError(f"bad empties range {text!r}: use numbers from 1 to 59, low-high")
    return r
