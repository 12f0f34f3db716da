"""What a grading run shows: the summary, the most offending tests, and the JSON record."""

from __future__ import annotations

import csv
import io
import json
import re
import xml.etree.ElementTree as ET
from fractions import Fraction
from pathlib import Path
from typing import Any

from tabulate import tabulate

from .errors import GraderError
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
        f"{result.script or result.name}: {fmt_total(result.total)}/{result.max_total}"
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



# --- a whole class -------------------------------------------------------------------


def student_line(result: ScriptResult) -> str:
    """One line per student as it finishes: name, total, symbols."""
    note = f"  ({result.stopped})" if result.stopped else ""
    return f"{result.name:<24} {fmt_total(result.total):>6}/{result.max_total}  {result.symbols}{note}"


def sort_results(results: list[ScriptResult], by: str = "name") -> list[ScriptResult]:
    if by == "total":
        return sorted(results, key=lambda r: (-r.total, r.name))
    return sorted(results, key=lambda r: r.name)


def class_table(results: list[ScriptResult], fmt: str = "simple") -> str:
    """The summary table: student, total, count per symbol, timeouts, crashes, time."""
    headers = ["student", "total", *SYMBOLS, "timeouts", "crashes", "time (s)"]
    rows = [
        [r.name, f"{fmt_total(r.total)}/{r.max_total}", *r.counts().values(), r.timeouts, r.crashes, f"{r.script_seconds:.1f}"]
        for r in results
    ]
    return tabulate(rows, headers=headers, tablefmt=fmt, disable_numparse=True)


def grades_csv(results: list[ScriptResult]) -> str:
    """One row per student: name, total, max, per-symbol counts, timeouts, crashes."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["name", "total", "max", *SYMBOLS, "timeouts", "crashes"])
    for r in results:
        writer.writerow([_cell(r.name), fmt_total(r.total), r.max_total, *r.counts().values(), r.timeouts, r.crashes])
    return out.getvalue()


def _cell(text: str) -> str:
    """A name a spreadsheet will not read as a formula."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _xml(text: str) -> str:
    """Text XML 1.0 can hold: other characters (control characters, say) become '?'."""
    return _NOT_XML.sub("?", text)


def junit_xml(results: list[ScriptResult]) -> str:
    """JUnit XML: a suite per student, a testcase per test; a test below full credit fails
    with its diagnosis; a student with no script has one failing testcase saying why."""
    root = ET.Element("testsuites", name="grader")
    for r in results:
        failures = sum(t.verdict.credit < 1 for t in r.tests) + (1 if not r.tests and r.stopped else 0)
        suite = ET.SubElement(
            root, "testsuite", name=_xml(r.name), tests=str(max(len(r.tests), 1 if r.stopped else 0)),
            failures=str(failures), errors="0", time=f"{r.script_seconds:.3f}",
        )  # fmt: skip
        for t in r.tests:
            pos = t.position
            case = ET.SubElement(
                suite, "testcase", classname=_xml(r.name),
                name=f"test {t.index:03d} ({pos.token} to move, {plural(pos.empties, 'empty', 'empties')})",
                time=f"{t.run.wall_seconds:.3f}",
            )  # fmt: skip
            if t.verdict.credit < 1:
                failure = ET.SubElement(case, "failure", message=_xml(f"{t.symbol} ({fmt_credit(t.verdict.credit)}): {t.diagnosis}"))
                failure.text = _xml(f"board {pos.board_string()} {pos.token}\n{t.diagnosis}")
        if not r.tests and r.stopped:
            case = ET.SubElement(suite, "testcase", classname=_xml(r.name), name="submission")
            ET.SubElement(case, "failure", message=_xml(r.stopped))
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def write_exports(folder: Path, results: list[ScriptResult]) -> list[str]:
    """grades.csv, results.json, junit.xml and report.html in ``folder``; returns their names."""
    from .html import report_html

    files = {
        "grades.csv": grades_csv(sort_results(results)),
        "results.json": json.dumps(results_json(results), indent=1),
        "junit.xml": junit_xml(results),
        "report.html": report_html(results),
    }
    for name, text in files.items():
        try:
            (folder / name).write_text(text, encoding="utf-8")
        except OSError as e:
            raise GraderError(f"cannot write {folder / name}: {e.strerror}") from None
    return list(files)


# --- tournaments -------------------------------------------------------------------------


def standings_table(rows: list, fmt: str = "simple") -> str:
    """Engine, games, points, wins/draws/losses, average disc difference, Elo +- 95%, forfeits, timeouts."""
    table = []
    for s in rows:
        rating = "n/a" if s.elo is None else f"{s.elo:+.0f}"
        error = "" if s.elo_error is None else f"{s.elo_error:.0f}"
        table.append([s.engine, s.games, fmt_total(s.points), s.wins, s.draws, s.losses, f"{s.disc_diff:+.1f}",
                      rating, error, s.forfeits, s.timeouts])  # fmt: skip
    headers = ["engine", "games", "points", "W", "D", "L", "discs", "Elo", "+-95%", "forfeits", "timeouts"]
    return tabulate(table, headers=headers, tablefmt=fmt, disable_numparse=True)


def crosstable_text(cross: dict[str, dict[str, float]], engines: list[str], fmt: str = "simple") -> str:
    """Each engine's points against each other engine (row against column)."""
    rows = [[e] + ["-" if o == e else fmt_total(cross[e][o]) for o in engines] for e in engines]
    return tabulate(rows, headers=["", *engines], tablefmt=fmt, disable_numparse=True)
