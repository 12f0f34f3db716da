"""What a grading run shows: the summary, the most offending tests, and the JSON record."""

from __future__ import annotations

import csv
import io
import re
import xml.etree.ElementTree as ET
from typing import Any

from tabulate import tabulate

from ..games import BoardEntry
from ..games.solving import Analysis
from ..runs.text import fmt_credit, fmt_total, plural, safe_cell, stderr_lines, xml_text
from .judge import SYMBOLS
from .results import ScriptResult, TestResult, stopped_test


def summary(result: ScriptResult) -> str:
    """Total, the count of each symbol, time taken."""
    counts = "  ".join(f"{s} {n}" for s, n in result.counts().items())
    lines = [
        f"{result.script or result.name}: {fmt_total(result.total)}/{result.max_total}"
        f"  ({plural(len(result.tests), 'test', 'tests')} run, {result.plan.source}, {result.seconds:.1f} s)",
        f"symbols: {counts}",
    ]
    if result.timeouts or result.crashes or result.illegal_moves:
        lines.append(f"timeouts: {result.timeouts}  crashes: {result.crashes}  illegal moves: {result.illegal_moves}")
    if result.interrupted:
        lines.append(
            f"{result.stopped or 'interrupted'}: {len(result.tests)} of {result.max_total} tests finished, "
            "so the total is not a grade"
        )
    elif result.stopped:
        lines.append(result.stopped)
    if result.is_speed:
        lines.append(f"deepest level: {fmt_deepest(result)} (every board up to it right within the time limit)")
    return "\n".join(lines)


def fmt_deepest(result: ScriptResult) -> str:
    """A speed plan's headline: '14 empties', or 'none' when the first level failed."""
    return "none" if result.deepest is None else f"{result.deepest} empties"


def levels_table(result: ScriptResult, fmt: str = "simple") -> str:
    """A speed plan's ladder: per number of empties, the tests right and the median time."""
    rows = [[lv.empties, f"{lv.right}/{lv.tests}", "-" if lv.median_seconds is None else f"{lv.median_seconds:.2f}"]
            for lv in result.levels()]  # fmt: skip
    return tabulate(rows, headers=["empties", "right", "median time (s)"], tablefmt=fmt, disable_numparse=True)


def most_offending(result: ScriptResult, n: int = 2, public_only: bool = False) -> list[TestResult]:
    """The ``n`` worst tests (``public_only``: of those students may see): lowest credit, then
    largest score error, then fewest empties."""

    def key(t: TestResult) -> tuple:
        error = abs(t.claim.score - t.value) if t.claim.score is not None else 0
        return (t.verdict.credit, -error, t.position.empties, t.index)

    tests = [t for t in result.tests if not public_only or result.plan.is_public(t.index)]
    return sorted((t for t in tests if t.verdict.credit < 1), key=key)[:n]


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
        pos.game.render(pos, marks),
        "  (* optimal move" + (", @ the script's move)" if "@" in marks.values() else ")"),
    ]
    if t.claim.has_score_line:
        lines.append(f'printed:  "{t.claim.score_text}"')
        lines.append(f"          score {t.claim.score:+d}; line, forward: {_fmt_line(pos, t.claim.line)}")
    else:
        lines.append("printed:  no score line")
    lines.append(f"move:     {_printed_move(t)}")
    ended = t.run.describe()
    if ended:
        lines.append(f"run:      the script {ended} ({t.run.wall_seconds:.2f} s wall, {t.run.cpu_seconds:.2f} s CPU)")
    if t.run.timed_out and t.run.stdout_tail.strip():
        lines += ["output:   " + ln for ln in t.run.stdout_tail.strip().splitlines()[-3:]]  # what it printed in time
    if t.run.crashed and t.run.stderr_tail.strip():
        lines += ["stderr:   " + ln for ln in stderr_lines(t.run.stderr_tail, 5)]
    best = pos.game.moves_text(t.optimal_moves)
    lines.append(f"exact:    value {t.value:+d}; optimal moves {best}")
    lines.append(f"verdict:  {v.diagnosis}")
    return "\n".join(lines)


def _fmt_line(pos, line: tuple[int, ...]) -> str:
    return ", ".join(pos.game.move_text(m) if m >= 0 else "pass" for m in line) or "(none)"


def offending_report(result: ScriptResult, n: int = 2, public_only: bool = False) -> str:
    worst = most_offending(result, n, public_only)
    if not worst:
        if public_only and result.plan.has_private:
            run = any(result.plan.is_public(t.index) for t in result.tests)
            return "No public test below full credit." if run else "No public test was run."
        if not result.tests:
            return "No test was run."
        return (
            "All tests perfect." if result.complete else f"No test below full credit among the {len(result.tests)} run."
        )
    title = "Most offending test" + ("s" if len(worst) > 1 else "") + ":"
    return "\n\n".join([title] + [offending_test(t) for t in worst])


def student_report(result: ScriptResult, full: bool = False) -> str:
    """What a student may see of their run: with private tests (and not ``full``), each
    public test in full and the private ones as counts only, never their boards."""
    if full or not result.plan.has_private:
        return summary(result) + "\n\n" + offending_report(result)
    public = [t for t in result.tests if result.plan.is_public(t.index)]
    private = [t for t in result.tests if not result.plan.is_public(t.index)]
    n_private = len(result.plan.positions) - len(result.plan.public or ())
    lines = [
        f"{result.name or result.script}: {fmt_total(result.total)}/{result.max_total}",
        f"public tests: {fmt_total(sum(t.verdict.credit for t in public))}/{len(result.plan.public or ())}  "
        f"{''.join(t.symbol for t in public)}",
        f"private: {fmt_total(sum(t.verdict.credit for t in private))}/{n_private}, "
        f"{plural(sum(t.run.timed_out for t in private), 'timeout', 'timeouts')}, "
        f"{plural(sum(t.run.crashed for t in private), 'crash', 'crashes')}",
    ]
    if result.interrupted or result.stopped:
        at = stopped_test(result.stopped)
        private_stop = at is not None and not result.plan.is_public(at)
        lines.append("stopped at a private test (--stop-on-error)" if private_stop else result.stopped or "interrupted")
    return "\n".join(lines) + "\n\n" + offending_report(result, public_only=True)


def results_json(results: list[ScriptResult]) -> dict[str, Any]:
    return {"scripts": [r.to_json() for r in results]}


# --- solved positions -------------------------------------------------------------------


def lab_line(value: int, line: list[int]) -> str:
    """The lab's score line: the score, then the line in reverse (passes as -1)."""
    return " ".join(["score", str(value)] + [str(m) for m in reversed(line)])


def analysis_text(a: Analysis, entry: BoardEntry | None = None) -> str:
    """The text report of one solved position (``grader solve``)."""
    pos = a.position
    game = pos.game
    legal = pos.moves()
    marks = {sq: ("*" if sq in a.optimal_moves else "+") for sq in legal}
    out = []
    if entry is not None and entry.label:
        out.append(entry.label)
    out.append(game.render(pos, marks))
    out.append(f"{pos.token} to move, {pos.empties} empties, scoring {a.scoring}  (* optimal move, + other legal move)")
    if not legal:
        out.append(f"{pos.token} has no legal move: " + ("the game is over" if pos.is_game_over() else "it must pass"))
    out.append(f"value:         {a.value:+d}")
    out.append(f"optimal moves: {game.moves_text(a.optimal_moves)}")
    out.append(f"line:          {game.moves_text(a.line)}")
    out.append(f"lab format:    {lab_line(a.value, a.line)}")
    if a.move_values is not None:
        rows = [
            [sq, game.square_name(sq), f"{v:+d}"]
            for sq, v in sorted(a.move_values.items(), key=lambda kv: (-kv[1], kv[0]))
        ]
        out.append(tabulate(rows, headers=["move", "square", "value"], colalign=("right", "left", "right")))
    if entry is not None and entry.score is not None:
        out.append(_file_answer(a, entry))
    out.append(f"solved in {a.seconds:.3f} s, {a.nodes} nodes")
    return "\n".join(out)


def _file_answer(a: Analysis, entry: BoardEntry) -> str:
    best = ",".join(a.position.game.square_name(s) for s in entry.best_moves or ())
    claim = f"file says:     {entry.score:+d} {best}".rstrip()
    if entry.scoring is not None and a.scoring != entry.scoring:
        return f"{claim} (under {entry.scoring}: use --scoring {entry.scoring} to compare)"
    same = a.value == entry.score and (entry.best_moves is None or sorted(entry.best_moves) == a.optimal_moves)
    return f"{claim} ({'matches' if same else 'DIFFERS'})"


# --- a whole class -------------------------------------------------------------------


def student_line(result: ScriptResult) -> str:
    """One line per student as it finishes: name, total, symbols."""
    note = f"  ({result.stopped})" if result.stopped else ""
    return f"{result.name:<24} {fmt_total(result.total):>6}/{result.max_total}  {result.symbols}{note}"


def status(result: ScriptResult) -> str:
    """'' for a student graded to the end, else a few words: 'incomplete', 'not graded', ..."""
    if result.interrupted:
        forged = re.search(r"\((\d+) record\(s\) failed their seal\)", result.stopped or "")
        return f"incomplete: {forged[1]} failed their seal" if forged else "incomplete"
    if result.stopped and not result.tests:
        return "not graded"
    if result.game_hint:  # the class went on; this row says what is likely wrong
        return result.game_hint
    if result.stopped:
        return result.stopped.split(":")[0]  # 'stopped at test 7'
    return ""


def class_table(results: list[ScriptResult], fmt: str = "simple") -> str:
    """The summary table: student, total, count per symbol, timeouts, crashes, time, status;
    on a speed plan also the deepest level."""
    speed = any(r.is_speed for r in results)
    headers = [
        "student",
        "total",
        *(["deepest"] if speed else []),
        *SYMBOLS,
        "timeouts",
        "crashes",
        "time (s)",
        "status",
    ]
    rows = [
        [r.name, f"{fmt_total(r.total)}/{r.max_total}", *([_deepest_cell(r)] if speed else []), *r.counts().values(),
         r.timeouts, r.crashes, f"{r.script_seconds:.1f}", status(r)]
        for r in results
    ]  # fmt: skip
    return tabulate(rows, headers=headers, tablefmt=fmt, disable_numparse=True)


def grades_csv(results: list[ScriptResult]) -> str:
    """One row per student: name, total, max, (on a speed plan: the deepest level,) per-symbol
    counts, timeouts, crashes, whether the grade is final (complete), and why not or why the
    run stopped (note)."""
    speed = any(r.is_speed for r in results)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(
        ["name", "total", "max", *(["deepest"] if speed else []), *SYMBOLS, "timeouts", "crashes", "complete", "note"]
    )
    for r in results:
        writer.writerow([safe_cell(r.name), fmt_total(r.total), r.max_total, *([_deepest_cell(r)] if speed else []),
                         *r.counts().values(), r.timeouts, r.crashes, "yes" if r.complete else "no",
                         safe_cell(note(r))])  # fmt: skip
    return out.getvalue()


def note(r: ScriptResult) -> str:
    """Why a student's run stopped or is not complete, and whether the script seems written
    for another game: grades.csv's note."""
    return "; ".join(text for text in (r.stopped, r.game_hint) if text)


def _deepest_cell(r: ScriptResult) -> str:
    """The deepest level as a number ('' for none, or not a speed run)."""
    return "" if not r.is_speed or r.deepest is None else str(r.deepest)


def junit_xml(results: list[ScriptResult]) -> str:
    """JUnit XML: a suite per student, a testcase per test; a test below full credit fails
    with its diagnosis; a student with no script has one failing testcase saying why."""
    root = ET.Element("testsuites", name="grader")
    for r in results:
        failures = sum(t.verdict.credit < 1 for t in r.tests) + (1 if not r.tests and r.stopped else 0)
        suite = ET.SubElement(
            root, "testsuite", name=xml_text(r.name), tests=str(max(len(r.tests), 1 if r.stopped else 0)),
            failures=str(failures), errors="0", time=f"{r.script_seconds:.3f}",
        )  # fmt: skip
        for t in r.tests:
            pos = t.position
            case = ET.SubElement(
                suite, "testcase", classname=xml_text(r.name),
                name=f"test {t.index:03d} ({pos.token} to move, {plural(pos.empties, 'empty', 'empties')})",
                time=f"{t.run.wall_seconds:.3f}",
            )  # fmt: skip
            if t.verdict.credit < 1:
                failure = ET.SubElement(
                    case, "failure", message=xml_text(f"{t.symbol} ({fmt_credit(t.verdict.credit)}): {t.diagnosis}")
                )
                failure.text = xml_text(f"board {pos.board_string()} {pos.token}\n{t.diagnosis}")
        if not r.tests and r.stopped:
            case = ET.SubElement(suite, "testcase", classname=xml_text(r.name), name="submission")
            ET.SubElement(case, "failure", message=xml_text(r.stopped))
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


# --- proofs ---------------------------------------------------------------------------------


def _value_word(v: int) -> str:
    return "a win" if v > 0 else "a loss" if v < 0 else "a draw"


def proof_text(proof) -> str:
    """What ``grader prove`` shows: per side, never loses or a lost game and where it turned."""
    game = proof.game
    out = []
    for side in proof.sides:
        if not side.complete:
            verdict = "NOT PROVED (interrupted)"
        elif side.never_loses:
            verdict = "never loses" + (", and every move is optimal" if side.perfect else "")
        elif side.lost_game is None and not side.failures:
            verdict = "NOT PROVED (it answered differently when asked again)"
        else:
            verdict = "CAN LOSE"
        det = (
            "deterministic"
            if not side.not_deterministic
            else f"NOT deterministic ({len(side.not_deterministic)} positions)"
        )
        out.append(f"as {side.side}: {verdict} ({plural(side.asked, 'position', 'positions')} asked, {det})")
        if side.lost_game is not None:
            moves = " ".join("pass" if m < 0 else game.square_name(m) for m in side.lost_game)
            out.append(f"  a lost game: {moves}  (moves from the start: {' '.join(map(str, side.lost_game))})")
        if side.first_loss is not None:
            out += ["  " + ln for ln in _move_block(game, side.first_loss, "the first move that loses")]
        for f in side.failures[:3]:
            out.append(f"  no usable move on {f.board} {f.token}: {f.diagnosis}")
        if len(side.failures) > 3:
            out.append(f"  ... {len(side.failures) - 3} more positions without a usable move")
        if side.slipped_wins:
            first = side.slipped_wins[0]
            out.append(f"  wins let slip: {len(side.slipped_wins)} (first: {first.board} {first.token}: it played "
                       f"{game.move_text(first.move)}, {_value_word(first.move_value)}; {game.moves_text(first.best_moves, ' or ')} "
                       f"won)")  # fmt: skip
        if side.suboptimal and not side.slipped_wins and not side.losing_moves:
            first = side.suboptimal[0]
            out.append(f"  moves not optimal: {len(side.suboptimal)} (first: {first.board} {first.token}: "
                       f"{game.move_text(first.move)} gives {first.move_value:+d}, best {first.value:+d})")  # fmt: skip
        for board, token, first, second in side.not_deterministic[:3]:
            out.append(f"  not deterministic on {board} {token}: answered {first}, then {second}")
    out.append(f"{proof.seconds:.1f} s")
    return "\n".join(out)


def _move_block(game, m, title: str) -> list[str]:
    pos = game.parse(m.board, m.token)
    marks = {sq: "*" for sq in m.best_moves}
    marks[m.move] = "@"
    return [
        f"{title}: {m.board} {m.token} ({_value_word(m.value)} for {m.token}):",
        *game.render(pos, marks).splitlines(),
        f"  it played {game.move_text(m.move)} (@), {_value_word(m.move_value)}; "
        f"{game.moves_text(m.best_moves, ' or ')} (*) keeps {_value_word(m.value)}",
    ]


# --- presubmission checks ---------------------------------------------------------------------


def check_text(found) -> str:
    """What ``grader check`` shows: per position, whether the output can be read, the time
    against the limit, and what to fix."""
    out = [f"Checking {found.script} on {plural(len(found.checked), 'easy public position', 'easy public positions')} "
           f"({found.game.title}):"]  # fmt: skip
    for c in found.checked:
        t = c.test
        move = "none" if t.claim.move is None else found.game.move_text(t.claim.move)
        legal = t.claim.move is not None and t.position.is_legal(t.claim.move)
        line_ok = t.verdict.line_ok
        out.append(
            f"{t.index}. {t.position.board_string()} {t.position.token} ({plural(t.position.empties, 'empty', 'empties')}): "
            f"{t.symbol}  {t.run.wall_seconds:.2f} s of {c.limit:g} s; score line {'yes' if t.claim.has_score_line else 'NO'}"
            + ("" if t.verdict.score_ok is not False else f", score {t.claim.score:+d} WRONG (exact {t.value:+d})")
            + ("" if line_ok is None else f", line {'is optimal' if line_ok else 'goes wrong'}")
            + f", move {move} ({'legal' if legal else 'NOT legal'})"
        )
        if line_ok is False and t.verdict.line_check is not None:
            out.append(f"   line: {t.verdict.line_check.describe(t.position.token, found.game)}")
        out += [f"   fix: {p}" for p in c.problems]
    if found.all_fail:
        out.append(
            "None of these outputs can be graded: every test would fail. Fix the problems above before you submit."
        )
    elif any(c.problems for c in found.checked):
        out.append("The output can be read, but see the notes above.")
    else:
        out.append("The output can be read on every position checked.")
    wrong = None if found.all_fail else found.wrong_answers()
    if wrong:
        out.append(wrong)
    return "\n".join(out)
