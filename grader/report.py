"""What a grading run shows: the summary, the most offending tests, and the JSON record."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from .grading import ScriptResult, TestResult, stderr_lines
from .judge import SYMBOLS, fmt_move


def fmt_credit(credit: float) -> str:
    """1, 3/4, 1/2, 1/4, 0 as the lab writes them; totals as decimals."""
    f = Fraction(credit).limit_denominator(4)
    return str(f)


def fmt_total(total: float) -> str:
    return f"{total:g}"


def summary(result: ScriptResult) -> str:
    """Total, the count of each symbol, time taken."""
    counts = "  ".join(f"{s} {n}" for s, n in result.counts().items())
    lines = [
        f"{result.script}: {fmt_total(result.total)}/{result.max_total}"
        f"  ({plural(len(result.tests), 'test', 'tests')} run, {result.plan.source}, {result.seconds:.1f} s)",
        f"symbols: {counts}",
    ]
    timeouts = sum(t.run.timed_out for t in result.tests)
    crashes = sum(t.run.crashed for t in result.tests)
    if timeouts or crashes:
        lines.append(f"timeouts: {timeouts}  crashes: {crashes}")
    if result.stopped:
        lines.append(result.stopped)
    return "\n".join(lines)


def most_offending(result: ScriptResult, n: int = 2) -> list[TestResult]:
    """The ``n`` worst tests: lowest credit, then largest score error, then fewest empties."""

    def key(t: TestResult) -> tuple:
        error = abs(t.claim.score - t.value) if t.claim.has_score_line else 0
        return (t.verdict.credit, -error, t.position.empties, t.index)

    return sorted((t for t in result.tests if t.verdict.credit < 1), key=key)[:n]


def _printed_move(t: TestResult) -> str:
    if t.claim.move is None:
        return "no integer at all"
    where = f' (last integer, in "{t.claim.move_text}")' if t.claim.move_text else ""
    return f"{t.claim.move}{where}"


def offending_test(t: TestResult) -> str:
    """One test in full: the board, what the script printed that mattered, the exact answer."""
    pos = t.position
    marks = {sq: "*" for sq in t.optimal_moves}
    move = t.claim.move
    if move is not None and pos.is_legal(move) and move not in t.optimal_moves:
        marks[move] = "@"
    v = t.verdict
    lines = [
        f"Test {t.index}: {pos.token} to move, {plural(pos.empties, 'empty', 'empties')}: {t.symbol} ({fmt_credit(v.credit)})",
        f"board {pos.board_string()} {pos.token}",
        pos.render(marks),
        "  (* optimal move" + (", @ the script's move)" if "@" in marks.values() else ")"),
    ]
    if t.claim.has_score_line:
        lines.append(f'printed:  "{t.claim.score_text}"')
        lines.append(f"          score {t.claim.score:+d}; line, forward: {_fmt_line(t.claim.line)}")
    else:
        lines.append("printed:  no score line")
    lines.append(f"move:     {_printed_move(t)}")
    ended = t.run.describe()
    if ended:
        lines.append(f"run:      the script {ended} ({t.run.wall_seconds:.2f} s wall, {t.run.cpu_seconds:.2f} s CPU)")
    if t.run.crashed and t.run.stderr_tail.strip():
        lines += ["stderr:   " + ln for ln in stderr_lines(t.run.stderr_tail, 5)]
    best = ", ".join(fmt_move(m) for m in t.optimal_moves)
    lines.append(f"exact:    value {t.value:+d}; optimal moves {best}")
    lines.append(f"verdict:  {v.diagnosis}")
    return "\n".join(lines)


def _fmt_line(line: tuple[int, ...]) -> str:
    return ", ".join(fmt_move(m) if m >= 0 else "pass" for m in line) or "(none)"


def plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def offending_report(result: ScriptResult, n: int = 2) -> str:
    worst = most_offending(result, n)
    if not worst:
        return "All tests perfect."
    title = "Most offending test" + ("s" if len(worst) > 1 else "") + ":"
    return "\n\n".join([title] + [offending_test(t) for t in worst])


def results_json(results: list[ScriptResult]) -> dict[str, Any]:
    return {"scripts": [r.to_json() for r in results]}

