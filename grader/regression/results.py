"""What a regression run is given and what it gives: its settings (``RegressSettings``), each
test's result with its symbol and credit (``RegressTest``), a file's (``RegressResult``) and a
student's program over its files (``StudentRegress``), each to JSON and back."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any

from .. import settings as layers
from ..config import Config, RegressDefaults
from ..engines.scripts import RunSettings

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
