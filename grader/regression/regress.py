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
import warnings
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Callable, Sequence

from .. import settings as layers
from ..config import Config, RegressDefaults
from ..engines.gtp import Ended, GtpClient, GtpError
from ..engines.programs import PYTHON, ProtocolEngine
from ..engines.runner import RunResult, Session
from ..engines.sandbox import Sandbox, claim_uid, release_uid
from ..engines.scripts import RunSettings
from ..errors import BoardError, GraderError, GraderWarning
from ..execution.executor import Executor, Worker, using
from ..files import parse_range, read_lines
from ..games import Game, Position, get_game
from ..runs.seeds import plan_seed, seed_warning, spread_public
from ..runs.text import stderr_lines
from ..stop import Stop, Stopped
from .solutions import Solutions, key

COLOURS = ("b", "w")  # GTP's names of the first and second player
REGRESS_SYMBOLS = {
    "+": (1.0, "right: the winner and a move that achieves it (or the expected answer)"),
    "W": (0.5, "the winner right, the move missing or not achieving it"),
    "u": (0.0, "unknown: not solved within the time limit (credit: --unknown-credit)"),
    "v": (
        0.0,
        "unverified: a result where the file expects unknown, which the grader's solver could not settle "
        "(credit: --unverified-credit)",
    ),
    "-": (0.0, "wrong, or an error answer"),
    "t": (0.0, "no answer in time, or the program ended"),
}
ENDED = "the program had ended: "  # the note of a test not run after the program ended (then why)
STDERR_ENDS = "; stderr ends: "  # in why a program ended: then the last lines of its stderr
DEFAULT_TIMELIMIT = 1  # seconds: the course's default before any 'timelimit' command
LIST_SECONDS = 2.0  # the most the grader spends listing every best move for a test's feedback
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


def _whole(word: str) -> bool:
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
        number = int(words[0]) if _whole(words[0]) else None
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
    if words[:1] == ["timelimit"] and (len(words) != 2 or not _whole(words[1])):
        raise BoardError(f"{where}: '{c.text}': timelimit takes a whole number of seconds, like 'timelimit 5'")
    if words[:1] == ["boardsize"]:
        if len(words) != 2 or not _whole(words[1]):
            raise BoardError(f"{where}: '{c.text}': boardsize takes a whole number, like 'boardsize 7'")
        if game is not None:
            try:
                game.sized(int(words[1]))
            except GraderError as e:
                raise BoardError(f"{where}: '{c.text}': {e}") from None


def capped_timelimits(commands: list[Command], maximum: int, source: str) -> list[Command]:
    """``commands`` with each ``timelimit`` above ``maximum`` seconds lowered to it, with a
    GraderWarning naming its line (one typo must not make a run sit for a day)."""
    out = [_capped(c, maximum) for c in commands]
    for c, capped in zip(commands, out):
        if capped is not c:
            warnings.warn(f"{source}:{c.line}: '{c.text}' is over the most a test may take (regress.max_timelimit "
                          f"in config.yaml): each test gets {maximum} s", GraderWarning, stacklevel=2)  # fmt: skip
    return out


def _capped(c: Command, maximum: int) -> Command:
    """``c``, or its ``timelimit`` lowered to ``maximum`` seconds."""
    words = c.text.split()
    if words[:1] == ["timelimit"] and len(words) == 2 and _whole(words[1]) and int(words[1]) > maximum:
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
    judged_by: str = "regex"  # solver | regex | rule (an answer of more than one line)
    best: str = ""  # the moves that achieve the best result, where the solver listed them ('C3, D4')
    error: bool = False  # the program answered '? ...' (``answer`` shows it so)


_TEST_FIELDS = [f.name for f in fields(RegressTest)]


@dataclass
class RegressResult:
    """A regression file run against one program."""

    program: str
    file: str
    tests: list[RegressTest] = field(default_factory=list)
    stopped: str | None = None  # why the run ended before the file did
    ended: str | None = None  # how the program ended, when it did before the file did
    host: str | None = None  # the cluster worker's machine that ran it (None: this machine)
    count: str = "all"  # the tests that count: all, or solve-genmove (``RegressSettings.count``)
    apart: bool = False  # the private tests ran in a program of their own (``run_regress(apart=True)``)
    private_stopped: str | None = None  # apart: why the private tests' program ended before its last test

    def counts(self, t: RegressTest) -> bool:
        """Whether ``t`` counts: not expected to fail, and (solve-genmove) a 'solve' or 'genmove'."""
        return not t.expect_failure and (self.count == "all" or t.command.split()[:1] in (["solve"], ["genmove"]))

    @property
    def counted(self) -> list[RegressTest]:
        """The tests that count (``counts``)."""
        return [t for t in self.tests if self.counts(t)]

    @property
    def counting(self) -> str:
        """Which tests count, in words."""
        return "the solve and genmove tests" if self.count == "solve-genmove" else "every test"

    @property
    def total(self) -> float:
        """Out of 100, over the tests that count."""
        return 100 * sum(t.credit for t in self.counted) / len(self.counted) if self.counted else 0.0

    @property
    def symbols(self) -> str:
        return "".join(t.symbol for t in self.tests)

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "total": round(self.total, 2)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RegressResult:
        """A result written by ``to_json`` (KeyError or TypeError when it is damaged)."""
        tests = [RegressTest(**{k: t[k] for k in _TEST_FIELDS if k in t}) for t in data["tests"]]
        return cls(data["program"], data["file"], tests, data.get("stopped"), data.get("ended"), data.get("host"),
                   data.get("count", "all"), data.get("apart", False), data.get("private_stopped"))  # fmt: skip


class _Shadow:
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
        if words[:1] == ["boardsize"] and len(words) == 2 and _whole(words[1]):
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


@dataclass(frozen=True)
class RegressSettings(RunSettings):
    """How a regression file is run: the shared ``RunSettings`` (the program's limits,
    isolation, python) and regress's own fields.

    - ``unknown_credit``: the credit of a 'solve' answered 'unknown' (the course decides).
    - ``margin``: seconds beyond the program's timelimit (or ``limits.wall_seconds``) each command may take.
    - ``solve_seconds``: the grader's own budget for settling one position, once per run
      (beyond it, the regex decides; where the file expects 'unknown', a result is unverified).
    - ``unverified_credit``: the credit of such an unverified result (the course decides).
    - ``count``: the tests a total counts: 'all' (as gogui-regress), or 'solve-genmove' (a
      'timelimit' test answered with text then costs nothing).
    - ``per_test``: a fresh program for every test (the game so far replayed to it), so that
      a crash or a hang costs one test; by default one program runs the whole file, and
      the tests after it ended count 0.
    - ``max_timelimit``: the most seconds a file's ``timelimit`` gives a test; a larger one
      is sent to the program, and waited for, as this (``capped_timelimits`` warns of it).
    """

    unknown_credit: float = RegressDefaults.unknown_credit
    margin: float = RegressDefaults.margin
    solve_seconds: float = RegressDefaults.solve_seconds
    per_test: bool = RegressDefaults.per_test
    unverified_credit: float = RegressDefaults.unverified_credit
    count: str = RegressDefaults.count
    max_timelimit: int = RegressDefaults.max_timelimit

    @classmethod
    def resolve(cls, config: Config, unknown_credit: float | None = None, margin: float | None = None,
                **options: Any) -> RegressSettings:  # fmt: skip
        """The settings of a regression run, as ``grader regress`` takes them: the options
        given win, then config.yaml (limits, isolation, python; regress: unknown_credit,
        margin, per_test, unverified_credit, count, solve_seconds, max_timelimit)."""
        given = layers.given(unknown_credit=unknown_credit, margin=margin, **options)
        return layers.resolve(cls, given, layers.regress_layer(config))


def run_regress(program: ProtocolEngine, path: str | Path, game: Game, settings: RegressSettings | None = None,
                executor: Executor | None = None, stop: Stop | None = None,
                on_test: Callable[[RegressTest], None] | None = None, commands: list[Command] | None = None,
                solutions: Solutions | None = None, apart: bool = False) -> RegressResult:  # fmt: skip
    """Run the regression file at ``path`` (or ``commands``, ``path`` then only naming them)
    against ``program`` (a GTP program, started once for the file, or for each test with
    ``settings.per_test``) and judge each test. A test the program did not reach (it had
    ended) counts 0. The file's positions are solved first (``solve_file``) into
    ``solutions``, by default those kept beside the file, kept there again after.

    ``apart``: the tests the file keeps private (``private_tests``) run in a program of their
    own, after the public ones (``split_apart``), so that nothing a student sees before the
    private results are released comes from a program that was told a private position."""
    settings = settings or RegressSettings()
    text = None
    if commands is None:
        text = "\n".join(read_lines(path, "regression file"))
        commands = parse_regress(text, str(path), game)
    private = private_tests(text, commands) if apart and text is not None and not settings.per_test else frozenset()
    origin = program.origin.replace(PYTHON, settings.python)
    lists = split_apart(commands, private, game) if private else [commands]
    results = [RegressResult(origin, str(path)) for _ in lists]
    with using(executor, 1, stop) as ex:
        if solutions is None:
            solutions = Solutions.load(path, settings.solve_seconds)
            solve_file(commands, game, solutions, ex.stop)
            solutions.save(path)
        run_solutions = solutions

        def task(worker: Worker) -> None:
            for listed, result in zip(lists, results):  # the public tests' program first, then the private's
                run_commands(program, listed, game, settings, worker, result, on_test, run_solutions)

        ex.submit("file", task)
        for _ in ex.results():
            pass
    return results[0] if not private else _merged(results[0], results[1], commands)


def split_apart(commands: list[Command], private: frozenset[int], game: Game) -> list[list[Command]]:
    """The file's commands as two programs get them: the public tests, each with the commands
    since the test before it, then the private tests likewise. Where a test's block of
    commands goes on from a game the other program was told, it starts with the commands that
    bring its own program there (the file's last 'timelimit', then 'boardsize', 'clear_board'
    and the stones as the grader follows the file; not the move a 'genmove' of the other
    program chose, which no other program may learn); a block that starts with 'boardsize'
    sets its own game up. Commands after the last test are left out."""
    shadow = _Shadow(game)
    lists: tuple[list[Command], list[Command]] = ([], [])
    block: list[Command] = []
    timelimit: str | None = None
    told: list[str | None] = [None, None]  # the timelimit each program was last told
    last: int | None = None  # the list that took the last block
    for c in commands:
        block.append(c)
        if c.number is None:
            continue
        side = int(c.number in private)
        first = block[0].text.split()[:1]
        if last is not None and last != side:
            sets_time = any(b.text.split()[:1] == ["timelimit"] for b in block)
            sync = [timelimit] if timelimit is not None and told[side] != timelimit and not sets_time else []
            sync += [] if first == ["boardsize"] else shadow.setup()
            lists[side].extend(Command(block[0].line, text) for text in sync if text)
        lists[side].extend(block)
        for b in block:
            if b.text.split()[:1] == ["timelimit"]:
                timelimit = b.text
            shadow.command(b.text, "")
        told[side], last, block = timelimit, side, []
    return [lists[0], lists[1]]


def _merged(public: RegressResult, private: RegressResult, commands: list[Command]) -> RegressResult:
    """The two programs' results of a run with its private tests apart, as one, in the file's order."""
    order = {c.number: i for i, c in enumerate(commands) if c.number is not None}
    tests = sorted([*public.tests, *private.tests], key=lambda t: order.get(t.number, 0))
    return replace(public, tests=tests, ended=public.ended or private.ended, apart=True,
                   private_stopped=private.stopped)  # fmt: skip


def solve_file(commands: list[Command], game: Game, solutions: Solutions, stop: Stop) -> int:
    """Settle in ``solutions`` every position of a 'solve' or 'genmove' test that the file
    itself sets up (not one after a program's own 'genmove', which only a run knows, nor one
    whose test expects 'unknown', solved only for a program that answers otherwise), each
    within the budget, before any program runs: so each is solved once per run. How many
    positions the budget did not settle."""
    shadow, unsettled, known = _Shadow(game), 0, True
    solvers: dict[str, Any] = {}
    for c in commands:
        words = c.text.split()
        if known and c.number is not None and words[:1] in (["solve"], ["genmove"]) and not _expects_unknown(c):
            pos, _ = shadow.position()
            if pos is not None and not (words[0] == "genmove" and pos.is_game_over()):
                rules = pos.game
                solver = solvers.setdefault(rules.name, rules.solver(rules.scorings[0]))
                if solutions.solve(solver, pos, stop.is_set).value is None:
                    unsettled += 1
        if words[:1] in (["boardsize"], ["clear_board"]):
            known = True
        elif words[:1] == ["genmove"]:
            known = False  # the game goes on from the program's own move, until the file sets it up again
        shadow.command(c.text, "")
    return unsettled


class _Program:
    """The GTP program of a run, started when first needed and again after it is closed."""

    def __init__(self, program: ProtocolEngine, settings: RegressSettings, worker: Worker, sandbox: Sandbox):
        folder = str(worker.stage.folder(program.bundle)) if program.bundle else None
        self.argv, self.folder = program.command(settings.python, folder), folder
        self.settings, self.worker, self.sandbox = settings, worker, sandbox
        self.interpreter = program.interpreter(settings.python)
        self.session: Session | None = None
        self.client: GtpClient | None = None
        self.tests = 0  # tests this process has answered
        self.answers = 0  # commands this process has answered: none, and it ended at start-up

    def start(self) -> str | None:
        """Start the program; None, or what went wrong."""
        self.session = Session(
            self.argv, self.settings.limits, self.sandbox, self.worker.stop, self.folder, self.folder
        )
        self.client, self.tests, self.answers = None, 0, 0
        error = self.session.start()
        if error:
            self.session.close()
            self.session = None
            return f"the program {error}"
        self.client = GtpClient(self.session)
        return None

    def failed(self, e: Exception) -> tuple[str, RunResult | None]:
        """Why a command got no answer, and how the program ended (it is closed)."""
        if self.worker.stop.is_set():
            raise Stopped(self.worker.stop.reason) from None
        answers, ended = self.answers, self.close()
        if not isinstance(e, Ended) or ended is None:
            return (str(e) if not isinstance(e, Ended) else "the program ended"), None
        said = stderr_lines(ended.stderr_tail, 3)
        why = f"the program {ended.describe() or 'ended'}" + (f"{STDERR_ENDS}{' | '.join(said)}" if said else "")
        if not answers:  # it never answered: it could not start (a missing package of its interpreter, say)
            run_by = f" under Python {self.interpreter.describe()}" if self.interpreter is not None else ""
            why = f"the program could not start{run_by}: {why[len('the program ') :]}"
        return why, ended

    def close(self) -> RunResult | None:
        session, self.session, self.client = self.session, None, None
        return session.close() if session is not None else None


def run_commands(program: ProtocolEngine, commands: list[Command], game: Game, settings: RegressSettings,
                 worker: Worker, result: RegressResult, on_test: Callable[[RegressTest], None] | None,
                 solutions: Solutions | None = None) -> RegressResult:  # fmt: skip
    """Run ``commands`` against ``program`` on ``worker`` (a task of an executor), recording
    each judged test in ``result`` as it is answered; what ``run_regress`` and a class run do.
    ``solutions``: the run's, shared by its programs (by default this file's own)."""
    result.host, result.count = worker.host, settings.count
    solutions = solutions if solutions is not None else Solutions(settings.solve_seconds)
    settings = replace(settings, python=worker.here(settings).python)  # a cluster worker's own Python
    sandbox, uid = worker.sandbox(settings), None
    if sandbox.uid is not None:
        uid = claim_uid()
        sandbox = Sandbox(sandbox.mechanism, uid)
    proc = _Program(program, settings, worker, sandbox)
    shadow, timelimit, told, ended_at = _Shadow(game), DEFAULT_TIMELIMIT, False, ""
    commands = [_capped(c, settings.max_timelimit) for c in commands]  # capped_timelimits warned of them
    try:
        for i, c in enumerate(commands):
            words = c.text.split()
            if words[:1] == ["timelimit"] and len(words) == 2 and _whole(words[1]):
                timelimit, told = int(words[1]), True
            if words[:1] == ["quit"] and proc.client is None:
                break
            asked_on = f"{shadow.board} {shadow.token}"
            if proc.client is not None and c.number is not None and settings.per_test and proc.tests:
                proc.close()  # a fresh program for this test
            if proc.client is None:
                why = proc.start() if i == 0 else _restart(proc, shadow, timelimit if told else None, settings)
                if why is not None:
                    result.stopped = f"at line {c.line} ({c.text}): {why}"
                    _not_run(result, on_test, commands[i:], asked_on, why)
                    return result
            thinks = words[:1] in (["solve"], ["genmove"])
            seconds = (timelimit if thinks else settings.limits.wall_seconds) + settings.margin
            assert proc.client is not None
            try:
                reply = proc.client.send(f"{c.number} {c.text}" if c.number is not None else c.text, seconds)
            except (GtpError, Ended) as e:
                where = f"at line {c.line}" if proc.answers else f"at start-up, before line {c.line}"
                why, ended = proc.failed(e)
                if c.number is not None:  # (per_test: where the last program ended, before this test)
                    _record(result, on_test, RegressTest(c.number, c.text, asked_on, c.expected, None, "t", 0.0,
                                                         why + ended_at, seconds, c.expect_failure))  # fmt: skip
                    ended_at, shadow.refused = "", None  # told of this test, never of a later one
                if settings.per_test and words[:1] != ["quit"]:
                    if c.number is None:  # a setup command: the game goes on as the file sets it up
                        shadow.command(c.text, "")
                        ended_at = ended_at or f" (the program ended at '{c.text}' before this test: {why})"
                    continue  # the next test gets a fresh program
                result.stopped = f"{where} ({c.text}): {why}"
                result.ended = ended.describe() if ended is not None else None
                _not_run(result, on_test, commands[i + 1 :], asked_on, f"{ENDED}{why}")
                return result
            proc.answers += 1
            answer = reply.text if reply.ok else None
            if c.number is None and answer is None:  # named in the next test's note
                shadow.refused = shadow.refused or c.text
            if c.number is not None:
                proc.tests += 1
                pos, problem = shadow.position()
                test = _judge(c, answer, reply.text, pos, problem, shadow.side(), settings, worker, solutions)
                if shadow.refused:
                    test.note += f" (the program refused '{shadow.refused}' before this test)"
                    shadow.refused = None
                test.note, ended_at = test.note + ended_at, ""
                test.board, test.seconds = asked_on, round(reply.seconds, 4)
                _record(result, on_test, test)
            shadow.command(c.text, answer)
            if words[:1] == ["quit"]:
                break
        return result
    finally:
        proc.close()
        if uid is not None:
            release_uid(uid)


def _restart(proc: _Program, shadow: _Shadow, timelimit: int | None, settings: RegressSettings) -> str | None:
    """A fresh program told the game so far (and the file's timelimit); None, or what went
    wrong. A command of the game it refuses is noted for the next test, as in one program."""
    why = proc.start()
    if why is not None:
        return why
    assert proc.client is not None
    for command in [*([f"timelimit {timelimit}"] if timelimit is not None else []), *shadow.setup()]:
        try:
            reply = proc.client.send(command, settings.limits.wall_seconds + settings.margin)
        except (GtpError, Ended) as e:
            return f"while the game so far was replayed to a fresh program, '{command}': {proc.failed(e)[0]}"
        proc.answers += 1
        if not reply.ok and not command.startswith("timelimit"):
            shadow.refused = shadow.refused or command
    return None


def _not_run(result: RegressResult, on_test: Callable[[RegressTest], None] | None, rest: list[Command],
             board: str, why: str) -> None:  # fmt: skip
    """The tests the program never answered: each counts 0 ('t')."""
    for c in rest:
        if c.number is not None and all(t.number != c.number for t in result.tests):
            _record(result, on_test, RegressTest(c.number, c.text, board, c.expected, None, "t", 0.0,
                                                 f"not run: {why}", 0.0, c.expect_failure))  # fmt: skip


def _record(result: RegressResult, on_test: Callable[[RegressTest], None] | None, test: RegressTest) -> None:
    result.tests.append(test)
    if on_test:
        on_test(test)


def _judge(c: Command, answer: str | None, raw: str, pos: Position | None, problem: str, side: str,
           settings: RegressSettings, worker: Worker, solutions: Solutions | None = None) -> RegressTest:  # fmt: skip
    """The verdict on one test's answer (None: the program answered '? ...'); ``pos`` None:
    the position the file set up cannot arise in play (``problem``), and the regex decides.

    The answer is everything up to the blank line (GTP's rule): a 'solve' or 'genmove' answer
    of more than one line is wrong. Where the file expects 'unknown', 'unknown' passes, and a
    result is judged by the solver, or unverified ('v') where the solver cannot settle it."""
    assert c.number is not None
    verb = c.text.split()[0]
    thinks = verb in ("solve", "genmove")

    def verdict(symbol: str, note: str, judged_by: str = "solver") -> RegressTest:
        credit = {"u": settings.unknown_credit, "v": settings.unverified_credit}.get(symbol, REGRESS_SYMBOLS[symbol][0])
        shown = answer if answer is not None else f"? {raw}"
        return RegressTest(c.number or 0, c.text, "", c.expected, shown, symbol, credit, note, 0.0, c.expect_failure,
                           judged_by, error=answer is None)  # fmt: skip

    lines = answer.splitlines() if answer is not None else []
    if thinks and len(lines) > 1:
        return verdict("-", f"the answer is everything up to the blank line, here {len(lines)} lines "
                            f"('{lines[0][:30]}', then '{lines[1][:30]}'): answer on one line, then a blank line",
                       "rule")  # fmt: skip
    expects_unknown = _expects_unknown(c)
    said_unknown = verb == "solve" and answer is not None and answer.lower().split() == ["unknown"]
    if said_unknown and expects_unknown:
        return verdict("+", "unknown, as the file expects", "regex")
    why_regex = f"; {problem}: the file's answer decides" if pos is None and thinks else ""
    unsettled = f"{problem}: the grader cannot judge it" if pos is None else ""
    if answer is not None and pos is not None and (verb == "solve" or (verb == "genmove" and not pos.is_game_over())):
        solver = worker.cached(
            ("regress", pos.game.name, pos.game.board_length), lambda: pos.game.solver(pos.game.scorings[0])
        )
        truth: _Truth | None = None
        try:
            judge = _judge_solve if verb == "solve" else _judge_genmove
            truth = _Truth(solver, pos, worker, settings.solve_seconds, solutions or Solutions(settings.solve_seconds))
            test = judge(answer, pos, side, truth, verdict)
            test.best = truth.listed
            return test
        except Stopped:
            if worker.stop.is_set():
                raise
            what = "this position" if truth is None or truth.stuck is None else f"{truth.stuck}'s value"
            unsettled = (f"the grader's solver could not settle {what} within {settings.solve_seconds:g} s "
                         "(regress.solve_seconds in config.yaml)")  # fmt: skip
            why_regex = f"; {unsettled}: the file's answer decides"
    if said_unknown:
        return verdict("u", "unknown" + (f"; {unsettled}" if unsettled else ""), "regex")  # the course's credit
    if expects_unknown and answer is not None:  # a result the grader cannot check: never wrong by the regex
        return verdict("v", f"unverified: the file expects unknown; {unsettled}", "regex")
    if c.expected is None:
        return verdict(
            "+" if answer is not None else "-", "no expected answer: any success passes" + why_regex, "regex"
        )
    matched = answer is not None and re.fullmatch(c.expected, answer) is not None
    return verdict("+" if matched else "-", f"expected [{c.expected}]" + why_regex, "regex")


def _expects_unknown(c: Command) -> bool:
    """A 'solve' test that expects 'unknown' (the course's '#? [unknown]'): its regex takes
    'unknown' and no bare winner (not '.*', which expects nothing in particular)."""
    if c.text.split()[:1] != ["solve"] or c.expected is None or not re.fullmatch(c.expected, "unknown"):
        return False
    return not any(re.fullmatch(c.expected, w) for w in ("b", "w", "draw"))


def rejudge_test(test: RegressTest, game: Game, settings: RegressSettings, worker: Worker,
                 solutions: Solutions | None = None) -> RegressTest:  # fmt: skip
    """``test`` judged again from its recorded position and answer, with the grader's solver
    and ``settings`` as they are now (a test with no answer keeps its verdict); ``solutions``:
    the positions solved so far, shared by the tests judged again."""
    if test.answer is None or test.symbol == "t":
        return test
    answer, raw = (None, test.answer[2:]) if test.error else (test.answer, test.answer)
    board, _, token = test.board.partition(" ")
    pos, problem = position_of(game, board, token)
    side = COLOURS[game.sides.index(token)] if token in game.sides else COLOURS[0]
    command = Command(0, test.command, test.number, test.expected, test.expect_failure)
    again = _judge(command, answer, raw, pos, problem, side, settings, worker, solutions)
    refused = test.note.find(" (the program refused '")
    again.note += test.note[refused:] if refused >= 0 else ""
    again.board, again.seconds = test.board, test.seconds
    return again


def answered_move(t: RegressTest, pos: Position) -> int | None:
    """The point a 'solve' or 'genmove' answer names on ``pos`` (None: none, or not a point)."""
    words = (t.answer or "").split() if not t.error else []
    point = words[1] if t.command.startswith("solve") and len(words) > 1 else words[0] if words else ""
    try:
        return pos.game.parse_square(point) if point else None
    except BoardError:
        return None


def position_of(game: Game, board: str, token: str) -> tuple[Position | None, str]:
    """The position of a recorded board (sized as it was played), or None and why not."""
    try:
        side = round(len(board) ** 0.5)
        rules = game.sized(side) if side != board_size(game) and side * side == len(board) else game
        return rules.parse(board, token), ""
    except (BoardError, GraderError) as e:
        return None, str(e)


class _Truth:
    """What the grader's solver says of one position, from the run's ``solutions`` (each
    position solved once per run) or searched only as far as a verdict needs: its value, one
    move's value, and the best moves for the feedback (those settled, and a word that there
    may be others, when the budget ran out while listing them). Raises Stopped when the value,
    or a move's, cannot be settled within ``seconds``: a move's at once where a search of as
    long failed before in the run (another program's answer), its name in ``stuck``."""

    def __init__(self, solver: Any, pos: Position, worker: Worker, seconds: float, solutions: Solutions):
        self.solver, self.pos, self.worker, self.seconds, self.solutions = solver, pos, worker, seconds, solutions
        self.entry = solutions.solve(solver, pos, worker.stop.is_set, moves=False)
        if self.entry.value is None:
            raise Stopped("the position was not settled")
        self.value: int = self.entry.value
        self._best: str | None = None
        self._more = ""  # why the list may be incomplete
        self.stuck: str | None = None  # the move whose value was not settled

    def move_value(self, move: int) -> int:
        if move in self.entry.moves:
            return self.entry.moves[move]
        if self.solutions.unsettled(self.pos, move, self.seconds):
            self.stuck = self.pos.game.square_name(move)
            raise Stopped("the move was not settled before")
        deadline = time.monotonic() + self.seconds
        self.solver.should_stop = lambda: time.monotonic() > deadline or self.worker.stop.is_set()
        try:
            value: int = self.solver.move_value(self.pos, move)
        except Stopped:
            if not self.worker.stop.is_set():
                self.stuck = self.pos.game.square_name(move)
                self.solutions.give_up(self.pos, move, self.seconds)
            raise
        self.solutions.record(self.pos, move, value)
        return value

    @property
    def listed(self) -> str:
        """The best moves, if ``best`` was asked for ('' otherwise): those settled, if not all."""
        return self._best or ""

    def best(self) -> str:
        """The best moves for the feedback, with a word where there may be others."""
        if self._best is None and self.entry.best is not None:
            self._best = ", ".join(self.pos.game.square_name(m) for m in self.entry.best)
        if self._best is None and self.entry.gave_up >= self.solutions.budget:
            # the run's whole budget did not list them (not again for each program): those it settled
            self._best = ", ".join(self.pos.game.square_name(m) for m in self.entry.achieving())
            if self._best:
                self._more = (f" and perhaps others (the solver did not settle every move within "
                              f"{self.solutions.budget:g} s)")  # fmt: skip
        if self._best is None:
            until = time.monotonic() + LIST_SECONDS  # within the verdict's own budget
            self.solver.should_stop = lambda: time.monotonic() > until or self.worker.stop.is_set()
            try:
                self._best = ", ".join(self.pos.game.square_name(m) for m in self.solver.optimal_moves(self.pos))
            except Stopped:
                if self.worker.stop.is_set():
                    raise
                self._best = ""
        return self._best + self._more if self._best else ""


def _judge_solve(answer: str, pos: Position, side: str, truth: _Truth, verdict) -> RegressTest:
    words = answer.lower().split()
    other = COLOURS[1 - COLOURS.index(side)]
    best, over, game = truth.value, pos.is_game_over(), pos.game
    winner = side if best > 0 else other if best < 0 else "draw"

    def moves(prefix: str) -> str:  # the moves that achieve the result, where there are any to show
        listed = truth.best() if best >= 0 and not over else ""
        return prefix.format(listed) if listed else ""

    if not words or words[0] not in (*COLOURS, "draw", "unknown"):
        return verdict("-", f"an answer is 'b', 'w', 'draw' or 'unknown' and a move; the winner is {winner}")
    if len(words) > 2:
        return verdict("-", f"an answer is a winner and at most a move, not {len(words)} words; the winner is {winner}")
    if words[0] == "unknown":
        return verdict("u", f"unknown; the winner is {winner}" + moves(" ({})"))
    if words[0] != winner:
        return verdict("-", f"said {words[0]}; the winner is {winner}" + moves(" ({})"))
    if best < 0 or over:  # a loss, or a game over: no move to write
        if len(words) > 1:
            return verdict("W", f"{winner} is right, but a move is written only when the side to move wins or draws")
        return verdict(
            "+", f"{winner} is right: " + ("the game is over" if over else f"{side} loses whatever it plays")
        )
    if len(words) < 2:
        return verdict("W", f"{winner} is right, but no move" + moves(": one of {} achieves it"))
    try:
        move = game.parse_square(words[1])
    except BoardError:
        return verdict("W", f"{winner} is right, but its move is not a point" + moves("; one of {} achieves it"))
    if not pos.is_legal(move):
        return verdict("W", f"{winner} is right, but {game.square_name(move)} is not a legal move"
                            + moves("; one of {} achieves it"))  # fmt: skip
    value = truth.move_value(move)
    if value != best:
        how = f"gives {'a draw' if value == 0 else 'a loss'}"
        return verdict("W", f"{winner} is right, but {game.square_name(move)} {how}" + moves("; one of {} achieves it"))
    return verdict("+", f"{winner} {game.square_name(move)} is right" + moves(" (any of {})"))


def _judge_genmove(answer: str, pos: Position, side: str, truth: _Truth, verdict) -> RegressTest:
    game = pos.game
    try:
        move = game.parse_square(answer.split()[0]) if answer.split() else None
    except BoardError:
        move = None
    if move is None or not pos.is_legal(move):
        best = truth.best()  # listed only for a wrong answer's feedback
        return verdict("-", "the answer is not a legal move" + (f"; best: {best}" if best else ""))
    if len(answer.split()) > 1:
        return verdict("-", f"an answer is one move, not {len(answer.split())} words")
    value = truth.move_value(move)
    if value != truth.value:
        best = truth.best()
        return verdict("-", f"{game.square_name(move)} gives {value:+d}, best is {truth.value:+d}"
                            + (f" ({best})" if best else ""))  # fmt: skip
    return verdict("+", f"{game.square_name(move)} is optimal ({truth.value:+d})")


def make_regress(game: Game, positions: list[Position], timelimit: int, seconds: float = 600.0,
                 numbers: Sequence[int] | None = None, solutions: Solutions | None = None) -> list[Command]:  # fmt: skip
    """A regression file of ``solve`` tests on ``positions``, answers from the grader's solver:
    each position set up by 'boardsize', 'clear_board' and a 'play' per stone, then a numbered
    'solve' (``numbers``, else 10, 20, ...) whose expected answer lists every move that
    achieves the result ('b C3|b D4'). ``solutions``: where the positions are solved (else
    each within ``seconds``); GraderError for one the budget did not settle."""
    solutions = solutions if solutions is not None else Solutions(seconds)
    out = [Command(0, f"timelimit {timelimit}")]
    solvers: dict[str, Any] = {}
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
        solver = solvers.setdefault(game.name, game.solver(game.scorings[0]))
        entry = solutions.solve(solver, pos)
        if entry.value is None or entry.best is None:
            raise GraderError(
                f"position {n} takes the solver longer than {solutions.budget:g} s: choose positions with fewer "
                "empty points (or raise regress.solve_seconds in config.yaml)"
            )
        best = entry.value
        side = COLOURS[game.sides.index(pos.token)]
        winner = side if best > 0 else COLOURS[1 - COLOURS.index(side)] if best < 0 else "draw"
        moves = [game.square_name(m) for m in entry.best]
        expected = winner if best < 0 else "|".join(f"{winner} {m}" for m in moves)
        out.append(Command(0, "solve", numbers[n - 1] if numbers else n * 10, expected))
    return out


def board_size(game: Game) -> int:
    """The side of ``game``'s square board (GTP's boardsize)."""
    return round(game.board_length**0.5)


def regress_game(name: str | Game | None = None, config: Config | None = None,
                 files: Sequence[str | Path] = ()) -> Game:  # fmt: skip
    """The game regression files play: ``name`` when it names a variant in full, else the game
    ``files`` name ('# grader: game gomoku:overline=false', as ``grader plan regress`` writes;
    ``name`` may be its family, 'gomoku'), else ``name``, else config.yaml's game when a file
    can set up its positions ('play' commands only place pieces: ``Game.placing``), else
    Gomoku. GraderError when the files name different games, or another than ``name``."""
    config = config or Config()  # its gomoku: section fills in what the name leaves out
    named = {n for f in files if (n := file_game("\n".join(read_lines(f, "regression file")))) is not None}
    if len(named) > 1:
        raise GraderError(f"the regression files are of different games ({', '.join(sorted(named))}): run them apart")
    written = named.pop() if named else None
    if isinstance(name, Game) or (name is not None and (":" in name or written is None)):
        return config.get_game(name)  # a variant named in full wins over the file
    if written is not None:
        if name is not None and written.partition(":")[0] != name:
            raise GraderError(
                f"the regression files are of {written}, not {name}: drop --game, or give the files of {name}"
            )
        return get_game(written)  # as the file was written: config does not change it
    if get_game(config.game).placing:
        return config.get_game(config.game)
    return config.get_game(REGRESS_GAME)


def file_game(text: str) -> str | None:
    """The game a regression file names ('# grader: game NAME'), if it names one."""
    found = re.search(r"^#[ \t]*grader:[ \t]*game[ \t]+(\S+)[ \t]*$", text, re.MULTILINE)
    return found.group(1) if found else None


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
    solutions: Solutions = field(default_factory=lambda: Solutions(RegressDefaults.solve_seconds), compare=False)
    unsolved: tuple[Position, ...] = ()  # drawn, but not settled within the budget: left out

    @property
    def size(self) -> int:
        return board_size(self.game)

    def commands(self, public: bool = False) -> list[Command]:
        """The file's commands, answers from the solver; ``public``: its public tests only
        (numbered as in the full file)."""
        chosen = list(self.public) if public else range(1, len(self.positions) + 1)
        return make_regress(self.game, [self.positions[i - 1] for i in chosen], self.timelimit,
                            numbers=[10 * i for i in chosen], solutions=self.solutions)  # fmt: skip

    def save_solutions(self, path: str | Path, public: bool = False) -> Path | None:
        """Keep the solved positions beside the file written at ``path`` (``public``: only
        its public tests', so that the public half's cache shows no private position)."""
        chosen = {key(self.positions[i - 1]) for i in self.public} if public else None
        return self.solutions.only(chosen).save(path) if chosen is not None else self.solutions.save(path)

    @property
    def unsolved_text(self) -> str | None:
        """What the plan could not solve, in words (None: it solved every position)."""
        if not self.unsolved:
            return None
        levels = sorted({p.board_string().count(".") for p in self.unsolved})
        return (f"{len(self.unsolved)} of the positions drawn ({', '.join(map(str, levels))} empty points) were "
                f"left out: the solver could not settle them within {self.solutions.budget:g} s each "
                "(regress.solve_seconds in config.yaml), nor could regress judge them")  # fmt: skip

    def text(self, public: bool = False) -> str:
        """The file's text; it names its game (with its rules: ``file_game``) and its public
        tests ('# grader: public tests 10 30': ``public_tests``; all of them in the public
        file, none or some in the full one), so that reports show only those in full."""
        shown = " ".join(str(10 * i) for i in self.public) or "none"  # none: every test is private
        return write_regress(self.commands(public), [f"grader: game {self.game.name}", f"grader: public tests {shown}"])


def regress_plan(config: Config | None = None, game: str | Game | None = None, *, size: int | None = None,
                 empties: str | None = None, per_level: int | None = None, timelimit: int | None = None,
                 public: int = 0, seed: int | None = None, stop: Stop | None = None) -> RegressPlan:  # fmt: skip
    """A regression file's tests, as ``grader plan regress`` writes them: ``per_level``
    positions (default ``PER_LEVEL``) for each number of empty points in ``empties`` (default
    ``EMPTIES``) of ``regress_game(game, config)`` on a ``size`` board, drawn from
    ``plan_seed(seed, config)`` as a plan's are; ``public`` of them spread over the levels.
    Each position is solved within config's ``regress.solve_seconds``, the budget regress
    judges with; those it does not settle are left out (``unsolved``)."""
    g = regress_game(game, config)
    g = g.sized(size) if size else g
    levels = parse_range(empties or EMPTIES, "--empties", g.empties_allowed)
    drawn, chosen = plan_seed(seed, config)
    solutions = Solutions((config or Config()).regress.solve_seconds)
    solver = g.solver(g.scorings[0])
    solved: list[Position] = []
    unsolved: list[Position] = []
    for pos in g.random_positions(drawn, levels, per_level or PER_LEVEL):  # each within the budget regress has
        entry = solutions.solve(solver, pos, stop.is_set if stop else lambda: False)
        (solved if entry.value is not None and entry.best is not None else unsolved).append(pos)
    if not solved:
        raise GraderError(
            f"none of the {len(unsolved)} positions drawn could be solved within {solutions.budget:g} s each "
            "(regress.solve_seconds in config.yaml): choose fewer empty points, or raise the budget"
        )
    positions = tuple(solved)
    shown = tuple(sorted(spread_public(positions, public, drawn, frozenset()))) if public else ()
    warning = seed_warning(drawn, chosen, len(shown) < len(positions))
    return RegressPlan(g, positions, drawn, levels, timelimit or TIMELIMIT, shown, warning, solutions, tuple(unsolved))


__all__ = [
    "Command",
    "RegressPlan",
    "RegressResult",
    "RegressSettings",
    "RegressTest",
    "make_regress",
    "regress_game",
    "regress_plan",
    "rejudge_test",
    "run_commands",
    "solve_file",
    "file_game",
    "parse_regress",
    "answered_move",
    "position_of",
    "private_tests",
    "public_tests",
    "run_regress",
    "write_regress",
]


@dataclass
class StudentRegress:
    """One student's GTP program on every regression file of a class run."""

    name: str
    program: str | None  # the file run, None when none could be chosen
    results: list[RegressResult] = field(default_factory=list)  # one per file run, in the files' order
    problem: str | None = None  # why nothing ran
    missing: int = 0  # files not recorded yet (an interrupted run: resume runs them)

    @property
    def total(self) -> float:
        """Out of 100, over every counted test of every file (0 when nothing ran)."""
        counted = [t for r in self.results for t in r.counted]
        return 100 * sum(t.credit for t in counted) / len(counted) if counted else 0.0

    @property
    def complete(self) -> bool:
        return not self.missing

    def file_totals(self, files: list[str], digits: int = 1, missing: str = "-") -> list[str]:
        """Each file's total as text, in the order of ``files`` (``missing`` where not run)."""
        totals = {r.file: f"{r.total:.{digits}f}" for r in self.results}
        return [totals.get(f, missing) for f in files]

    @property
    def note(self) -> str:
        """Why there is no grade, or why it is not final, or where the program ended."""
        if self.problem:
            return self.problem
        if self.missing:
            return f"incomplete: {self.missing} of {self.missing + len(self.results)} files not run yet"
        return next((f"{r.file}: stopped {r.stopped}" for r in self.results if r.stopped), "")

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "program": self.program, "problem": self.problem, "total": round(self.total, 2),
                "complete": self.complete, "files": [r.to_json() for r in self.results]}  # fmt: skip
