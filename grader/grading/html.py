"""report.html: one self-contained page (inline CSS and SVG, no script, no network), of a
grading run or of a class on GTP regression files.

A class overview (the table and a chart of the totals), then a section per student with
each test below full credit drawn as a board, the claim next to the exact answer, and the
first wrong ply of the line. Everything a script printed is escaped.
"""

from __future__ import annotations

import datetime
from html import escape

from ..runs.html import MAX_BOARDS, page
from ..runs.text import fmt_credit, fmt_total, plural, sort_results
from .judge import SYMBOL_TABLE, SYMBOLS
from .report import status
from .results import ScriptResult, TestResult

_SYMBOL_CLASS = {"+": "ok", "M": "good", "Q": "good", "T": "half", "m": "half", "s": "low", "-": "bad", "t": "bad"}


def _symbols(symbols: str) -> str:
    return "".join(
        f'<span class="sym {_SYMBOL_CLASS[s]}" title="{SYMBOL_TABLE[s].meaning}">{escape(s)}</span>' for s in symbols
    )


def _test_block(t: TestResult) -> str:
    c = t.claim
    game = t.position.game
    best = game.moves_text(t.optimal_moves)
    rows = [
        ("test", f"{t.index}: {escape(t.position.token)} to move, {plural(t.position.empties, 'empty', 'empties')}"),
        ("verdict", f'{_symbols(t.symbol)} ({fmt_credit(t.verdict.credit)}): {SYMBOL_TABLE[t.symbol].meaning}'),
        ("claimed", f"score {c.score:+d}, move {escape(game.move_text(c.move)) if c.move is not None else 'none'}"
         if c.has_score_line else f"no score line; move {escape(game.move_text(c.move)) if c.move is not None else 'none'}"),
        ("exact", f"value {t.value:+d}; optimal {escape(best)}"),
    ]  # fmt: skip
    if c.score_text:
        rows.append(("score line", f"<code>{escape(c.score_text)}</code>"))
    check = t.verdict.line_check
    if check is not None and not check.ok:
        rows.append(("line", escape(check.describe(t.position.token, game))))
    ended = t.run.describe()
    if ended:
        rows.append(("run", escape(f"the script {ended}")))
    rows.append(("diagnosis", escape(t.diagnosis)))
    rows.append(("board", f"<code>{t.position.board_string()} {t.position.token}</code>"))
    details = "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in rows)
    return f'<div class="test">{game.svg(t.position, t.optimal_moves, c.move)}<dl>{details}</dl></div>'


def _student(r: ScriptResult, anchor: str) -> str:
    worst = sorted((t for t in r.tests if t.verdict.credit < 1), key=lambda t: (t.verdict.credit, t.index))
    out = [
        f'<section class="student" id="{anchor}">',
        f"<h2>{escape(r.name)}: {fmt_total(r.total)}/{r.max_total}</h2>",
        f'<p class="symbols">{_symbols(r.symbols)}</p>',
    ]
    if r.stopped:
        out.append(f'<p class="note">{escape(r.stopped)}</p>')
    if r.game_hint:
        out.append(f'<p class="note">{escape(r.game_hint[:1].upper() + r.game_hint[1:])}</p>')
    if not worst and r.tests:
        out.append("<p>Every test fully correct.</p>")
    for t in sorted(worst[:MAX_BOARDS], key=lambda t: t.index):
        out.append(_test_block(t))
    if len(worst) > MAX_BOARDS:
        out.append(f'<p class="note">{len(worst) - MAX_BOARDS} more tests below full credit: see results.json.</p>')
    out.append("</section>")
    return "\n".join(out)


def report_html(results: list[ScriptResult], title: str = "Grading report") -> str:
    """The whole page for a run's results."""
    results = sort_results(results)
    plan = results[0].plan if results else None
    head = [f"{plural(len(results), 'student', 'students')}"]
    if plan is not None:
        head.append(f"{escape(plan.game.title)}, {len(plan.positions)} tests ({escape(plan.source)})")
    head.append(f"written {datetime.datetime.now().strftime('%Y-%m-%d %H:%M')}")
    rows = []
    anchors = [f"s{i + 1}" for i in range(len(results))]  # by position: names may clash once cleaned
    for r, anchor in zip(results, anchors):
        cells = [f'<td><a href="#{anchor}">{escape(r.name)}</a></td>', f"<td>{fmt_total(r.total)}/{r.max_total}</td>"]
        cells += [f"<td>{n}</td>" for n in r.counts().values()]
        cells += [f"<td>{r.timeouts}</td>", f"<td>{r.crashes}</td>", f"<td>{r.script_seconds:.1f}</td>"]
        cells.append(f"<td>{escape(status(r))}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    sym_heads = "".join(
        f'<th><span class="sym {_SYMBOL_CLASS[s]}" title="{SYMBOL_TABLE[s].meaning}">{escape(s)}</span></th>'
        for s in SYMBOLS
    )
    max_total = results[0].max_total if results else 0
    legend = " &nbsp; ".join(f"{_symbols(s)} {SYMBOL_TABLE[s].meaning}" for s in SYMBOLS)
    return page(title, " · ".join(head), [r.total for r in results], max_total,
                 f"<th>total</th>{sym_heads}<th>timeouts</th><th>crashes</th><th>time (s)</th><th>status</th>", rows,
                 legend, "the optimal moves", "script", [_student(r, a) for r, a in zip(results, anchors)])  # fmt: skip
