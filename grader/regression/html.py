"""report.html of a class on GTP regression files."""

from __future__ import annotations

import datetime
from html import escape

from ..games import Game
from ..runs.html import MAX_BOARDS, page
from ..runs.text import fmt_credit, plural
from .judge import answered_move, position_of
from .results import REGRESS_SYMBOLS, RegressTest, StudentRegress

_REGRESS_CLASS = {"+": "ok", "W": "half", "u": "low", "v": "low", "-": "bad", "t": "bad"}


def _regress_symbols(symbols: str) -> str:
    return "".join(
        f'<span class="sym {_REGRESS_CLASS[s]}" title="{escape(REGRESS_SYMBOLS[s][1])}">{escape(s)}</span>'
        for s in symbols
    )


def _regress_block(t: RegressTest, file: str, game: Game) -> str:
    rows = [
        ("test", escape(f"{file}: {t.number} {t.command}")),
        ("verdict", f"{_regress_symbols(t.symbol)} ({fmt_credit(t.credit)}): {escape(REGRESS_SYMBOLS[t.symbol][1])}"),
        ("answer", f"<code>{escape(t.answer)}</code>" if t.answer is not None else "none"),
        ("note", escape(t.note)),
        ("position", f"<code>{escape(t.board)}</code>"),
    ]
    board, _, token = t.board.partition(" ")
    pos, _ = position_of(game, board, token)
    drawing = ""
    if pos is not None and t.judged_by == "solver":
        best = [pos.game.parse_square(m) for m in t.best.split(", ") if m]
        drawing = pos.game.svg(pos, best, answered_move(t, pos))
    details = "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in rows)
    return f'<div class="test">{drawing}<dl>{details}</dl></div>'


def regress_report_html(students: list[StudentRegress], files: list[str], game: Game,
                        title: str = "Regression report") -> str:  # fmt: skip
    """report.html of a class on regression files: the table, then each student's tests below
    full credit (boards for those the solver judged)."""
    anchors = [f"s{i + 1}" for i in range(len(students))]
    rows, sections = [], []
    for st, anchor in zip(students, anchors):
        cells = [f'<td><a href="#{anchor}">{escape(st.name)}</a></td>', *(f"<td>{t}</td>" for t in st.file_totals(files)),
                 f"<td>{st.total:.1f}</td>", f"<td>{escape(st.note)}</td>"]  # fmt: skip
        rows.append("<tr>" + "".join(cells) + "</tr>")
        out = [f'<section class="student" id="{anchor}">', f"<h2>{escape(st.name)}: {st.total:.1f}/100</h2>"]
        out += [f'<p class="symbols">{escape(r.file)}: {_regress_symbols(r.symbols)}</p>' for r in st.results]
        if st.note:
            out.append(f'<p class="note">{escape(st.note)}</p>')
        worst = [(r.file, t) for r in st.results for t in r.tests if t.credit < 1 and not t.expect_failure]
        out += [_regress_block(t, file, game) for file, t in worst[:MAX_BOARDS]]
        if len(worst) > MAX_BOARDS:
            out.append(f'<p class="note">{len(worst) - MAX_BOARDS} more tests below full credit: see results.json.</p>')
        if not worst and st.results:
            out.append("<p>Every test right.</p>")
        sections.append("\n".join([*out, "</section>"]))
    legend = " &nbsp; ".join(f"{_regress_symbols(s)} {escape(meaning)}" for s, (_, meaning) in REGRESS_SYMBOLS.items())
    heads = "".join(f"<th>{escape(f)}</th>" for f in files) + "<th>total</th><th>note</th>"
    meta = (f"{plural(len(students), 'student', 'students')} · {escape(game.title)} · "
            f"written {datetime.datetime.now().strftime('%Y-%m-%d %H:%M')}")  # fmt: skip
    return page(title, meta, [st.total for st in students], 100, heads, rows, legend,
                 "the moves that achieve the result", "program", sections)  # fmt: skip
