"""GTP regression test files (GoGui's gogui-regress format), run against a GTP program and
judged by the grader's own solver.

A file is GTP commands, one a line. A numbered command ('10 solve') is a test; the line after
it, ``#? [REGEX]``, is its expected answer (the whole answer must match), with ``*`` after
the ``]`` for a test expected to fail. Other lines starting with '#' are comments.

The grader keeps its own copy of the game (boardsize, clear_board, play, and each genmove's
answer), so it judges ``solve`` and ``genmove`` by exact search, not by the file's regex:
``solve`` answers 'WINNER [MOVE]' (WINNER b, w, draw or unknown; a MOVE that achieves it when
the side to move wins or draws), and any move that achieves the best outcome counts. When
the grader cannot solve the position within its own budget, the regex decides. Every other
test is judged by its regex.
"""

from __future__ import annotations

import re
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from ..engines.gtp import Ended, GtpClient, GtpError, GtpSilent
from ..engines.players import ProtocolEngine
from ..engines.runner import RunResult, Session
from ..engines.sandbox import Sandbox, claim_uid, release_uid
from ..engines.scripts import RunSettings
from ..errors import BoardError, GraderError
from ..execution.executor import Executor, Worker, using
from ..files import parse_range, read_lines
from ..games import Game, Position, get_game
from ..stop import Stop, Stopped
from .plans import plan_seed, seed_warning, spread_public

if TYPE_CHECKING:
    from ..config import Config

COLOURS = ("b", "w")  # GTP's names of the first and second player
REGRESS_SYMBOLS = {
    "+": (1.0, "right: the winner and a move that achieves it (or the expected answer)"),
    "W": (0.5, "the winner right, the move missing or not achieving it"),
    "u": (0.0, "unknown: not solved within the time limit (credit: --unknown-credit)"),
    "-": (0.0, "wrong, or an error answer"),
    "t": (0.0, "no answer in time, or the program ended"),
}
DEFAULT_TIMELIMIT = 1  # seconds: the course's default before any 'timelimit' command
REGRESS_GAME = "gomoku"  # the game of regression files, unless told (see regress_game)
EMPTIES = "4-10"  # empty points of a regression plan's positions
PER_LEVEL = 2  # positions per number of empty points
TIMELIMIT = 5  # the 'timelimit' a regression plan's file sets


@dataclass(frozen=True)
class Command:
    """One line of a regression file: a command, and for a test its number and expectation."""

    line: int
    text: str
    number: int | None = None
    expected: str | None = None  # the regex of '#? [...]'
    expect_failure: bool = False


def parse_regress(text: str, source: str) -> list[Command]:
    """The commands of a regression file; BoardError naming the line of a malformed one."""
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
        number = int(words[0]) if words[0].isdigit() else None
        out.append(Command(i, " ".join(words[1:]) if number is not None else line, number))
    return out


def write_regress(commands: list[Command]) -> str:
    """A regression file's text."""
    lines = []
    for c in commands:
        lines.append(f"{c.number} {c.text}" if c.number is not None else c.text)
        if c.expected is not None:
            lines.append(f"#? [{c.expected}]" + ("*" if c.expect_failure else ""))
        if c.text == "quit":
            lines.append("")
    return "\n".join(lines) + "\n"


@dataclass
class RegressTest:
    """One numbered test: what was asked, on which position, what came back, and the verdict."""

    number: int
    command: str
    board: str  # the position it was asked on, 'BOARD TOKEN'
    expected: str | None
    answer: str | None  # None: no answer
    symbol: str
    credit: float
    note: str
    seconds: float
    expect_failure: bool = False
    judged_by: str = "regex"  # solver | regex


@dataclass
class RegressResult:
    """A regression file run against one program."""

    program: str
    file: str
    tests: list[RegressTest] = field(default_factory=list)
    stopped: str | None = None  # why the run ended before the file did
    ended: RunResult | None = None

    @property
    def counted(self) -> list[RegressTest]:
        """The tests that count: not those expected to fail."""
        return [t for t in self.tests if not t.expect_failure]

    @property
    def total(self) -> float:
        """Out of 100, over the tests that count."""
        return 100 * sum(t.credit for t in self.counted) / len(self.counted) if self.counted else 0.0

    @property
    def symbols(self) -> str:
        return "".join(t.symbol for t in self.tests)

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["ended"] = None if self.ended is None else self.ended.describe()
        out["total"] = round(self.total, 2)
        return out


class _Shadow:
    """The grader's copy of the game the program is told about."""

    def __init__(self, game: Game):
        self.rules = game
        self.pos: Position = game.start()

    def command(self, text: str, answer: str | None) -> None:
        words = text.split()
        if not words:
            return
        if words[0] == "boardsize" and len(words) > 1 and words[1].isdigit():
            self.rules = self.rules.sized(int(words[1]))
            self.pos = self.rules.start()
        elif words[0] == "clear_board":
            self.pos = self.rules.start()
        elif words[0] == "play" and len(words) == 3:
            self._play(words[1], words[2])
        elif words[0] == "genmove" and answer and len(words) == 2:
            self._play(words[1], answer.split()[0])

    def _play(self, colour: str, point: str) -> None:
        token = self.rules.sides[COLOURS.index(colour[0].lower())] if colour[:1].lower() in COLOURS else None
        try:
            sq = self.rules.parse_square(point)
        except BoardError:
            return  # 'pass', 'resign' or nonsense: the position does not change
        if token is None or not (0 <= sq < len(self.pos.board_string())) or self.pos.board_string()[sq] != ".":
            return
        board = self.pos.board_string()
        board = board[:sq] + token + board[sq + 1 :]
        other = self.rules.sides[1] if token == self.rules.sides[0] else self.rules.sides[0]
        try:
            self.pos = self.rules.parse(board, other)
        except BoardError:  # a position out of turn order: keep the stones, whoever moves
            self.pos = self.rules.parse(board, token) if board.count(token) <= board.count(other) else self.pos

    def side(self) -> str:
        return COLOURS[self.rules.sides.index(self.pos.token)]


@dataclass(frozen=True)
class RegressSettings(RunSettings):
    """How a regression file is run: the shared ``RunSettings`` (the program's limits,
    isolation, python) and regress's own fields.

    - ``unknown_credit``: the credit of a 'solve' answered 'unknown' (the course decides).
    - ``margin``: seconds beyond the program's timelimit (or ``limits.wall_seconds``) each command may take.
    - ``solve_seconds``: the grader's own budget for judging one position (beyond it, the regex decides).
    """

    unknown_credit: float = 0.0
    margin: float = 0.5
    solve_seconds: float = 30.0

    @classmethod
    def resolve(cls, config: Config, unknown_credit: float | None = None, margin: float | None = None,
                **options: Any) -> RegressSettings:  # fmt: skip
        """The settings of a regression run, as ``grader regress`` takes them: the options
        given win, then config.yaml (limits, isolation, python), then these defaults."""
        values = dict(RunSettings.config_values(config), unknown_credit=unknown_credit, margin=margin, **options)
        return cls(**{k: v for k, v in values.items() if v is not None})


def run_regress(program: ProtocolEngine, path: str | Path, game: Game, settings: RegressSettings | None = None,
                executor: Executor | None = None, stop: Stop | None = None,
                on_test: Callable[[RegressTest], None] | None = None) -> RegressResult:  # fmt: skip
    """Run the regression file at ``path`` against ``program`` (a GTP program, started once
    for the file) and judge each test."""
    settings = settings or RegressSettings()
    commands = parse_regress("\n".join(read_lines(path, "regression file")), str(path))
    result = RegressResult(program.origin, str(path))
    with using(executor, 1, stop) as ex:
        ex.submit("file", lambda worker: _run(program, commands, game, settings, worker, result, on_test))
        for _ in ex.results():
            pass
    return result


def _run(program: ProtocolEngine, commands: list[Command], game: Game, settings: RegressSettings, worker: Worker,
         result: RegressResult, on_test: Callable[[RegressTest], None] | None) -> RegressResult:  # fmt: skip
    sandbox, uid = worker.sandbox(settings), None
    if sandbox.uid is not None:
        uid = claim_uid()
        sandbox = Sandbox(sandbox.mechanism, uid)
    folder = str(worker.stage.folder(program.bundle)) if program.bundle else None
    session = Session(program.command(settings.python, folder), settings.limits, sandbox, worker.stop, folder, folder)
    shadow, timelimit = _Shadow(game), DEFAULT_TIMELIMIT
    try:
        error = session.start()
        if error:
            result.stopped = f"the program {error}"
            return result
        client = GtpClient(session)
        for c in commands:
            words = c.text.split()
            if words[:1] == ["timelimit"] and len(words) == 2 and words[1].isdigit():
                timelimit = int(words[1])
            thinks = words[:1] in (["solve"], ["genmove"])
            seconds = (timelimit if thinks else settings.limits.wall_seconds) + settings.margin
            asked_on = f"{shadow.pos.board_string()} {shadow.pos.token}"
            try:
                reply = client.send(f"{c.number} {c.text}" if c.number is not None else c.text, seconds)
                answer, ok, took = reply.text, reply.ok, reply.seconds
            except (GtpError, Ended) as e:
                if worker.stop.is_set():
                    raise Stopped(worker.stop.reason) from None
                ended = isinstance(e, Ended)
                result.ended = session.close() if ended or not isinstance(e, GtpSilent) else None
                why = f"the program {result.ended.describe() or 'ended'}" if ended and result.ended else str(e)
                if c.number is not None:
                    _record(result, on_test, RegressTest(c.number, c.text, asked_on, c.expected, None, "t", 0.0, why,
                                                         seconds, c.expect_failure))  # fmt: skip
                result.stopped = f"at line {c.line} ({c.text}): {why}"
                return result
            if c.number is not None:
                pos = shadow.pos
                test = _judge(c, answer if ok else None, answer, pos, shadow.side(), settings, worker)
                test.board, test.seconds = asked_on, round(took, 4)
                _record(result, on_test, test)
            shadow.command(c.text, answer if ok else None)
            if words[:1] == ["quit"]:
                break
        return result
    finally:
        if result.ended is None:
            session.close()
        if uid is not None:
            release_uid(uid)


def _record(result: RegressResult, on_test: Callable[[RegressTest], None] | None, test: RegressTest) -> None:
    result.tests.append(test)
    if on_test:
        on_test(test)


def _judge(c: Command, answer: str | None, raw: str, pos: Position, side: str, settings: RegressSettings,
           worker: Worker) -> RegressTest:  # fmt: skip
    """The verdict on one test's answer (None: the program answered '? ...')."""
    assert c.number is not None
    verb = c.text.split()[0]

    def verdict(symbol: str, note: str, judged_by: str = "solver") -> RegressTest:
        credit = settings.unknown_credit if symbol == "u" else REGRESS_SYMBOLS[symbol][0]
        shown = answer if answer is not None else f"? {raw}"
        return RegressTest(c.number or 0, c.text, "", c.expected, shown, symbol, credit, note, 0.0, c.expect_failure,
                           judged_by)  # fmt: skip

    if answer is not None and verb == "solve" and pos.is_game_over():  # the winner is on the board
        return _judge_solve(answer, pos, side, {}, pos.score(pos.game.scorings[0]), verdict)
    if answer is not None and verb in ("solve", "genmove") and not pos.is_game_over():
        solver = worker.cached(
            ("regress", pos.game.name, pos.game.board_length), lambda: pos.game.solver(pos.game.scorings[0])
        )
        deadline = time.monotonic() + settings.solve_seconds
        solver.should_stop = lambda: time.monotonic() > deadline or worker.stop.is_set()
        try:
            values = solver.move_values(pos)
        except Stopped:
            if worker.stop.is_set():
                raise
            values = None  # beyond the grader's budget: the regex decides
        if values is not None:
            best = max(values.values())
            return (_judge_solve if verb == "solve" else _judge_genmove)(answer, pos, side, values, best, verdict)
    if c.expected is None:
        return verdict("+" if answer is not None else "-", "no expected answer: any success passes", "regex")
    matched = answer is not None and re.fullmatch(c.expected, answer) is not None
    return verdict("+" if matched else "-", f"expected [{c.expected}]", "regex")


def _judge_solve(answer: str, pos: Position, side: str, values: dict[int, int], best: int, verdict) -> RegressTest:
    words = answer.lower().split()
    other = COLOURS[1 - COLOURS.index(side)]
    truth = side if best > 0 else other if best < 0 else "draw"
    game = pos.game
    right = ", ".join(game.square_name(m) for m, v in sorted(values.items()) if v == best)
    if not words or words[0] not in (*COLOURS, "draw", "unknown"):
        return verdict("-", f"an answer is 'b', 'w', 'draw' or 'unknown' and a move; the winner is {truth}")
    if words[0] == "unknown":
        return verdict("u", f"unknown; the winner is {truth}" + (f" ({right})" if best >= 0 else ""))
    if words[0] != truth:
        return verdict("-", f"said {words[0]}; the winner is {truth}" + (f" ({right})" if best >= 0 else ""))
    if best < 0 or not values:  # a loss, or a game over: no move to write
        if len(words) > 1:
            return verdict("W", f"{truth} is right, but a move is written only when the side to move wins or draws")
        return verdict(
            "+", f"{truth} is right: " + ("the game is over" if not values else f"{side} loses whatever it plays")
        )
    if len(words) < 2:
        return verdict("W", f"{truth} is right, but no move: one of {right} achieves it")
    try:
        move = game.parse_square(words[1])
    except BoardError:
        return verdict("W", f"{truth} is right, but '{words[1]}' is not a point; one of {right} achieves it")
    if values.get(move) != best:
        how = "not a legal move" if move not in values else f"gives {'a draw' if values[move] == 0 else 'a loss'}"
        return verdict("W", f"{truth} is right, but {game.square_name(move)} {how}; one of {right} achieves it")
    return verdict("+", f"{truth} {game.square_name(move)} is right (any of {right})")


def _judge_genmove(answer: str, pos: Position, side: str, values: dict[int, int], best: int, verdict) -> RegressTest:
    game = pos.game
    right = ", ".join(game.square_name(m) for m, v in sorted(values.items()) if v == best)
    try:
        move = game.parse_square(answer.split()[0]) if answer.split() else None
    except BoardError:
        move = None
    if move is None or move not in values:
        return verdict("-", f"'{answer[:20]}' is not a legal move; best: {right}")
    if values[move] != best:
        return verdict("-", f"{game.square_name(move)} gives {values[move]:+d}, best is {best:+d} ({right})")
    return verdict("+", f"{game.square_name(move)} is optimal ({best:+d})")


def make_regress(game: Game, positions: list[Position], timelimit: int, seconds: float = 600.0) -> list[Command]:
    """A regression file of ``solve`` tests on ``positions``, answers from the grader's solver:
    each position set up by 'boardsize', 'clear_board' and a 'play' per stone, then a numbered
    'solve' whose expected answer lists every move that achieves the result ('b C3|b D4')."""
    out = [Command(0, f"timelimit {timelimit}")]
    solver = game.solver(game.scorings[0])
    deadline = time.monotonic() + seconds
    solver.should_stop = lambda: time.monotonic() > deadline
    for n, pos in enumerate(positions, 1):
        game = pos.game
        out += [Command(0, f"boardsize {board_size(game)}"), Command(0, "clear_board")]
        board = pos.board_string()
        stones = {t: [i for i, ch in enumerate(board) if ch == t] for t in game.sides}
        first, second = stones[game.sides[0]], stones[game.sides[1]]
        for i in range(len(first)):  # black and white in turn (no subset of the stones has a winning line)
            out.append(Command(0, f"play {COLOURS[0]} {game.square_name(first[i])}"))
            if i < len(second):
                out.append(Command(0, f"play {COLOURS[1]} {game.square_name(second[i])}"))
        try:
            values = solver.move_values(pos)
        except Stopped:
            raise GraderError(
                f"position {n} takes the solver longer than {seconds:g} s: choose positions with fewer empty points"
            ) from None
        best = max(values.values())
        side = COLOURS[game.sides.index(pos.token)]
        winner = side if best > 0 else COLOURS[1 - COLOURS.index(side)] if best < 0 else "draw"
        moves = [game.square_name(m) for m, v in sorted(values.items()) if v == best]
        expected = winner if best < 0 else "|".join(f"{winner} {m}" for m in moves)
        out.append(Command(0, "solve", n * 10, expected))
    return out


def board_size(game: Game) -> int:
    """The side of ``game``'s square board (GTP's boardsize)."""
    return round(game.board_length**0.5)


def regress_game(name: str | Game | None = None, config: Config | None = None) -> Game:
    """The game regression files play: ``name``, else config.yaml's game when a file can set
    up its positions ('play' commands only place pieces: ``Game.placing``), else Gomoku."""
    if name is not None:
        return get_game(name)
    if config is not None and get_game(config.game).placing:
        return get_game(config.game)
    return get_game(REGRESS_GAME)


@dataclass(frozen=True)
class RegressPlan:
    """The solve tests of a regression file: positions reached by legal play from ``seed``,
    the file's ``timelimit``, the tests students may see (numbers from 1), and a warning for
    its maker (``seed_warning``), if one is due."""

    game: Game
    positions: tuple[Position, ...]
    seed: int
    levels: range
    timelimit: int
    public: tuple[int, ...] = ()
    warning: str | None = None

    @property
    def size(self) -> int:
        return board_size(self.game)

    def commands(self, public: bool = False) -> list[Command]:
        """The file's commands, answers from the solver; ``public``: its public tests only."""
        chosen = [self.positions[i - 1] for i in self.public] if public else list(self.positions)
        return make_regress(self.game, chosen, self.timelimit)


def regress_plan(config: Config | None = None, game: str | Game | None = None, *, size: int | None = None,
                 empties: str | None = None, per_level: int | None = None, timelimit: int | None = None,
                 public: int = 0, seed: int | None = None) -> RegressPlan:  # fmt: skip
    """A regression file's tests, as ``grader plan regress`` writes them: ``per_level``
    positions (default ``PER_LEVEL``) for each number of empty points in ``empties`` (default
    ``EMPTIES``) of ``regress_game(game, config)`` on a ``size`` board, drawn from
    ``plan_seed(seed, config)`` as a plan's are; ``public`` of them spread over the levels."""
    g = regress_game(game, config)
    g = g.sized(size) if size else g
    levels = parse_range(empties or EMPTIES, "--empties", g.empties_allowed)
    drawn, chosen = plan_seed(seed, config)
    positions = tuple(g.random_positions(drawn, levels, per_level or PER_LEVEL))
    shown = tuple(sorted(spread_public(positions, public, drawn, frozenset()))) if public else ()
    warning = seed_warning(drawn, chosen, len(shown) < len(positions))
    return RegressPlan(g, positions, drawn, levels, timelimit or TIMELIMIT, shown, warning)


__all__ = [
    "Command",
    "RegressPlan",
    "RegressResult",
    "RegressSettings",
    "RegressTest",
    "make_regress",
    "regress_game",
    "regress_plan",
    "parse_regress",
    "run_regress",
    "write_regress",
]
