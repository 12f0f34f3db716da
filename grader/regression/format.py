"""GTP regression test files (GoGui's gogui-regress format): parsed, checked, written, and the
game a file sets up as the grader follows it (``Shadow``).

A file is GTP commands, one a line. A numbered command ('10 solve') is a test; the line after
it, ``#? [REGEX]``, is its expected answer (the whole answer must match), with ``*`` after
the ``]`` for a test expected to fail. Other lines starting with '#' are comments."""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass, replace
from typing import Sequence

from ..errors import BoardError, GraderError, GraderWarning
from ..games import Game, Position

COLOURS = ("b", "w")  # GTP's names of the first and second player


DEFAULT_TIMELIMIT = 1  # seconds: the course's default before any 'timelimit' command


@dataclass(frozen=True)
class Command:
    """One line of a regression file: a command, and for a test its number and expectation."""

    line: int
    text: str
    number: int | None = None
    expected: str | None = None  # the regex of '#? [...]'
    expect_failure: bool = False


def whole(word: str) -> bool:
    """A whole number in ASCII digits (str.isdigit() alone takes '²', which int() refuses)."""
    return word.isascii() and word.isdigit()


def parse_regress(text: str, source: str, game: Game | None = None) -> list[Command]:
    """The commands of a regression file; BoardError naming the line of a malformed one (a
    test without its '#?' line, a test number used twice, a ``timelimit`` or ``boardsize``
    that is not a whole number, a board size ``game`` is not played on), or the file when it
    holds no test."""
    out: list[Command] = []
    for i, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if line.startswith("#?"):
            found = re.fullmatch(r"#\?\s*\[(.*)\](\*?)\s*", line)
            if not found:
                raise BoardError(
                    f"{source}:{i}: an expected answer is '#? [REGEX]' (with * after ] for an expected failure)"
                )
            if not out or out[-1].number is None or out[-1].expected is not None:
                raise BoardError(f"{source}:{i}: '#?' must follow a numbered command, like '10 solve'")
            try:
                re.compile(found.group(1))
            except re.error as e:
                raise BoardError(f"{source}:{i}: the expected answer is not a regular expression: {e}") from None
            last = out[-1]
            out[-1] = Command(last.line, last.text, last.number, found.group(1), found.group(2) == "*")
            continue
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        words = line.split()
        number = int(words[0]) if whole(words[0]) else None
        _check_test(out, source)
        out.append(Command(i, " ".join(words[1:]) if number is not None else line, number))
        _check_command(out, source, game)
    _check_test(out, source)
    if all(c.number is None for c in out):
        raise BoardError(f"{source}: no test in it: a test is a numbered command, like '10 solve', then '#? [REGEX]'")
    return out


def _check_test(commands: list[Command], source: str) -> None:
    """BoardError when the last command is a test with no '#?' line after it."""
    last = commands[-1] if commands else None
    if last is not None and last.number is not None and last.expected is None:
        raise BoardError(f"{source}:{last.line}: test {last.number} has no expected answer: put '#? [REGEX]' on the "
                         "line after it ('#? [.*]' takes any answer)")  # fmt: skip


def _check_command(commands: list[Command], source: str, game: Game | None) -> None:
    """BoardError when the last command reuses a test number, or sets a timelimit or a board
    size that is not a whole number (or a size ``game`` is not played on)."""
    c = commands[-1]
    where = f"{source}:{c.line}"
    if c.number is not None:
        first = next(d for d in commands if d.number == c.number)
        if first is not c:
            raise BoardError(f"{where}: test number {c.number} is used twice (line {first.line} too): give each "
                             "test its own number")  # fmt: skip
    words = c.text.split()
    if words[:1] == ["timelimit"] and (len(words) != 2 or not whole(words[1])):
        raise BoardError(f"{where}: '{c.text}': timelimit takes a whole number of seconds, like 'timelimit 5'")
    if words[:1] == ["boardsize"]:
        if len(words) != 2 or not whole(words[1]):
            raise BoardError(f"{where}: '{c.text}': boardsize takes a whole number, like 'boardsize 7'")
        if game is not None:
            try:
                game.sized(int(words[1]))
            except GraderError as e:
                raise BoardError(f"{where}: '{c.text}': {e}") from None


def capped_timelimits(commands: list[Command], maximum: int, source: str) -> list[Command]:
    """``commands`` with each ``timelimit`` above ``maximum`` seconds lowered to it, with a
    GraderWarning naming its line (one typo must not make a run sit for a day)."""
    out = [cap_timelimit(c, maximum) for c in commands]
    for c, capped in zip(commands, out):
        if capped is not c:
            warnings.warn(f"{source}:{c.line}: '{c.text}' is over the most a test may take (regress.max_timelimit "
                          f"in config.yaml): each test gets {maximum} s", GraderWarning, stacklevel=2)  # fmt: skip
    return out


def cap_timelimit(c: Command, maximum: int) -> Command:
    """``c``, or its ``timelimit`` lowered to ``maximum`` seconds."""
    words = c.text.split()
    if words[:1] == ["timelimit"] and len(words) == 2 and whole(words[1]) and int(words[1]) > maximum:
        return replace(c, text=f"timelimit {maximum}")
    return c


def write_regress(commands: list[Command], header: Sequence[str] = ()) -> str:
    """A regression file's text; ``header``: comment lines first (without their '# ')."""
    lines = [f"# {line}" for line in header]
    for c in commands:
        lines.append(f"{c.number} {c.text}" if c.number is not None else c.text)
        if c.expected is not None:
            lines.append(f"#? [{c.expected}]" + ("*" if c.expect_failure else ""))
        if c.text == "quit":
            lines.append("")
    return "\n".join(lines) + "\n"


def public_tests(text: str) -> frozenset[int] | None:
    """The numbers of the tests students may see, as ``grader plan regress`` marks them ('#
    grader: public tests 10 30', or 'none'); None: the file does not say (a file written by hand)."""
    found = re.search(r"^#[ \t]*grader:[ \t]*public tests((?:[ \t]+\d+)*|[ \t]+none)[ \t]*$", text, re.MULTILINE)
    return None if found is None else frozenset(int(n) for n in found.group(1).split() if n != "none")


def private_tests(text: str, commands: list[Command]) -> frozenset[int]:
    """The tests a file marks as not public (none where it marks nothing: a file by hand)."""
    shown = public_tests(text)
    return frozenset() if shown is None else frozenset(c.number for c in commands if c.number is not None) - shown


class Shadow:
    """The grader's copy of the game the file sets up: the stones as played, in any order
    (GTP's 'play' may set a position up out of turn), the side to move (the other side of
    the last stone), and what rebuilds it in a fresh program. A setup command the program
    refused is followed all the same: a test is judged on the file's position, never on one
    the program chose by refusing."""

    def __init__(self, game: Game):
        self.rules = game
        self.boardsize: str | None = None  # the last 'boardsize N' the program accepted
        self.refused: str | None = None  # the first command answered '? ...' since the last test
        self.clear()

    def clear(self) -> None:
        start = self.rules.start()
        self.board, self.token = start.board_string(), start.token
        self.plays: list[str] = []

    def command(self, text: str, answer: str | None) -> None:
        """Follow the file's ``text`` (``answer``: the program's answer, None for '? ...')."""
        words = text.split()
        if words[:1] == ["boardsize"] and len(words) == 2 and whole(words[1]):
            try:
                self.rules = self.rules.sized(int(words[1]))
            except (BoardError, GraderError):
                return
            self.boardsize = text
            self.clear()
        elif words[:1] == ["clear_board"]:
            self.clear()
        elif words[:1] == ["play"] and len(words) == 3:
            self._play(words[1], words[2])
        elif words[:1] == ["genmove"] and answer and answer.split() and len(words) == 2:
            self._play(words[1], answer.split()[0])

    def _play(self, colour: str, point: str) -> None:
        if colour[:1].lower() not in COLOURS:
            return
        token = self.rules.sides[COLOURS.index(colour[:1].lower())]
        try:
            sq = self.rules.parse_square(point)
        except BoardError:
            return  # 'pass', 'resign' or nonsense: the position does not change
        if not 0 <= sq < len(self.board) or self.board[sq] != ".":
            return
        self.board = self.board[:sq] + token + self.board[sq + 1 :]
        self.token = self.rules.sides[1] if token == self.rules.sides[0] else self.rules.sides[0]
        self.plays.append(f"play {colour[:1].lower()} {self.rules.square_name(sq)}")

    def position(self) -> tuple[Position | None, str]:
        """The position, or None and why the grader's rules cannot take it."""
        try:
            return self.rules.parse(self.board, self.token), ""
        except BoardError as e:
            return None, str(e)

    def side(self) -> str:
        return COLOURS[self.rules.sides.index(self.token)]

    def setup(self) -> list[str]:
        """The commands that bring a fresh program to this game."""
        return [*([self.boardsize] if self.boardsize else []), "clear_board", *self.plays]


def board_size(game: Game) -> int:
    """The side of ``game``'s square board (GTP's boardsize)."""
    return round(game.board_length**0.5)


def file_game(text: str) -> str | None:
    """The game a regression file names ('# grader: game NAME'), if it names one."""
    found = re.search(r"^#[ \t]*grader:[ \t]*game[ \t]+(\S+)[ \t]*$", text, re.MULTILINE)
    return found.group(1) if found else None
