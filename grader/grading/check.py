"""``grader check``: the presubmission check a student runs before handing in: a script on
the lab's positions (below), or a GTP program on a short regression file (``check_gtp``).

A handful of easy public positions, run like tests; for each, whether the output can be
read (a score line, a line that replays, a last integer that is a legal move), the time it
took against the limit, and what to fix when it cannot: a date or a time printed last, output
lost in a buffer, a score from the wrong side's view, a line printed forward, passes written
as squares.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..config import Config
from ..errors import GraderError, PlanError
from ..games import DEFAULT, Game, get_game
from ..runs.submissions import find_submission_folder
from ..runs.text import stderr_lines
from .plans import PUBLIC, Plan, standard_plan
from .results import Settings, TestResult, settings_for
from .run import grade

COUNT = 5  # positions checked
CHECK_SECONDS = 3.0  # a check waits at most this long per position (it reports against the real limit)
_DATE_OR_TIME = re.compile(r"\d{4}-\d{1,2}-\d{1,2}|\d{1,2}:\d{2}|\d{1,2}/\d{1,2}/\d{2,4}")


@dataclass
class Checked:
    """One position's check: the graded test, and the problems found in its output."""

    test: TestResult
    limit: float
    problems: list[str] = field(default_factory=list)  # what makes the output unreadable, with the fix

    @property
    def readable(self) -> bool:
        return self.test.verdict.failure is None


@dataclass
class CheckReport:
    script: str
    game: Game
    checked: list[Checked]

    @property
    def all_fail(self) -> bool:
        """Every position fails for a reason of format (no move, an illegal move, a crash)."""
        return not any(c.readable for c in self.checked)

    def text(self) -> str:
        """What ``grader check`` shows (``report.check_text``)."""
        from .report import check_text  # here: tables are written once the scripts have run

        return check_text(self)

    def wrong_answers(self) -> str | None:
        """A sentence when outputs that can be read give wrong answers (the score, the move
        or the line against the exact solver), else None: a check is not a grade, but a
        script whose every score is wrong should hear it before it is graded."""
        read = [c.test for c in self.checked if c.readable]
        wrong = [(what, sum(bad(t) for t in read)) for what, bad in (
            ("the score", lambda t: t.verdict.score_ok is False),
            ("the move", lambda t: not t.verdict.move_ok),
            ("the line", lambda t: t.verdict.line_ok is False),
        )]  # fmt: skip
        said = [f"{what} on {n} of {len(self.checked)} positions" for what, n in wrong if n]
        if not said:
            return None
        return (f"But not every answer is right: {', '.join(said)} differ from the exact solver's (see above); "
                "check your search before you submit")  # fmt: skip


def easy_positions(game: Game, plan: Plan | None) -> Plan:
    """The positions to check: the public ones of ``plan`` with the fewest empties, one per
    number of empties where it can. Without a plan: the boards of the game's standard plan that
    ship with the grader, when they hold COUNT numbers of empties (Othello's fixed boards with
    1 to 5 empties), else the standard plan's; so that the script starts without drawing the
    plan's random boards first."""
    if plan is None:
        shipped = game.published("standard")
        enough = len({p.empties for p in shipped}) >= COUNT
        plan = Plan(tuple(shipped), None, "shipped boards") if enough else standard_plan(0, game)
    public = [p for i, p in enumerate(plan.positions, 1) if plan.is_public(i)]
    chosen: list = []
    for pos in sorted(public, key=lambda p: p.empties):
        if len(chosen) < COUNT and all(c.empties != pos.empties for c in chosen):
            chosen.append(pos)
    for pos in sorted(public, key=lambda p: p.empties):  # fewer counts of empties than COUNT
        if len(chosen) < COUNT and pos not in chosen:
            chosen.append(pos)
    return Plan(tuple(chosen), None, "easy public positions")


def check(script: str | Path, game: str | Game = DEFAULT, plan: Plan | None = None,
          settings: Settings | None = None, entry: str | None = None) -> CheckReport:  # fmt: skip
    """Run ``script`` on a few easy public positions and say what keeps its output from being
    read. ``script`` may be a student's folder holding one script (or ``entry``)."""
    g = get_game(game)
    if plan is not None:  # a plan file's limits and scoring, as 'grader check --plan' takes them
        settings = settings_for(plan, settings)
    settings = settings or Settings.resolve(Config(), g)
    if Path(script).is_dir():
        sub = find_submission_folder(Path(script), set(settings.commands), entry)
        if sub.path is None:
            raise GraderError(f"'{script}' is a folder, not a script: {sub.problem} (or give the script itself)")
        script = sub.path
    if plan is not None and plan.kind != PUBLIC and plan.has_private:
        raise PlanError("this plan holds private tests: check with its public half (grader plan public)")
    limit = settings.limits.wall_seconds
    quick = dataclasses.replace(
        settings, limits=dataclasses.replace(settings.limits, wall_seconds=min(limit, CHECK_SECONDS))
    )
    result = grade(script, easy_positions(g, plan), quick)
    seen: dict[str, int] = {}  # a crash's stderr -> the first position it was shown on
    return CheckReport(str(script), g, [Checked(t, limit, _problems(t, g, limit, seen)) for t in result.tests])


def _problems(t: TestResult, game: Game, limit: float, seen: dict[str, int] | None = None) -> list[str]:
    """What keeps this output from being read (or from being right in form), with the fix.
    A crash whose stderr ended as on an earlier position (``seen``) points there instead of
    showing it again."""
    out, claim, run, pos = [], t.claim, t.run, t.position
    if run.crashed:
        said = stderr_lines(run.stderr_tail, 6)
        first = None if seen is None or not said else seen.setdefault("\n".join(said), t.index)
        if first is not None and first != t.index:
            out.append(f"it {run.describe()}: the same error as on position {first}")
        else:
            out.append(f"it {run.describe()}: a crash fails the test; "
                       + ("fix the error its stderr ends with:\n      " + "\n      ".join(said) if said else "it printed nothing on stderr"))  # fmt: skip
    if claim.move is None:
        if run.timed_out and not run.stdout_tail.strip():
            out.append("nothing was printed before the time limit: print as you go and flush (print(..., flush=True)); "
                       "output left in a buffer when the script is stopped is lost")  # fmt: skip
        else:
            out.append("no integer in the output: the last integer printed is read as the move")
    elif not pos.is_legal(claim.move):
        printed = claim.move_text or ""
        line_forward = claim.line and list(reversed(claim.line))
        if _DATE_OR_TIME.search(printed):
            out.append(f"the last integer, {claim.move}, comes from {printed!r}, which looks like a date or a time: "
                       "print your move last")  # fmt: skip
        elif line_forward and pos.game.solver(game.scorings[0]).verify_line(pos, line_forward).ok:
            out.append(
                "the line is printed from the first move forward: print it in reverse, so that your move is the last integer"
            )
        else:
            out.append(f"the last integer, {claim.move}, is not a legal move here: print your move last")
    if claim.has_score_line:
        if claim.score == -t.value != 0:
            out.append(
                f"the score {claim.score:+d} is the other side's: print the score for the side to move ({t.value:+d})"
            )
        if any(m >= game.board_length for m in claim.line):
            out.append("the line holds numbers that are not squares: write a pass as -1 (or leave it out)")
    else:
        out.append(
            "no score line: print a line with 'score', the value, then the line in reverse (e.g. 'score 18 15 -1 7 51')"
        )
    if run.wall_seconds > limit / 2 and not run.timed_out:
        out.append(f"it took {run.wall_seconds:.1f} s of the {limit:g} s limit on an easy position")
    if run.timed_out and limit > CHECK_SECONDS:
        out.append(f"still running after {CHECK_SECONDS:g} s on an easy position (the limit is {limit:g} s)")
    return out
