"""The HTML page every report.html is made of: the class overview (a histogram of totals and
the table), then each student's section."""

from __future__ import annotations

from html import escape

_CSS = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; padding: 0 1em; }
h1 { margin-bottom: .2em; } .meta { color: #555; margin-top: 0; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { padding: .25em .6em; border-bottom: 1px solid #ddd; text-align: right; }
th:first-child, td:first-child { text-align: left; }
.sym { font-family: ui-monospace, monospace; font-weight: bold; padding: 0 1px; }
.ok { color: #1b7f2a; } .good { color: #4f8f00; } .half { color: #b8860b; } .low { color: #d2691e; } .bad { color: #c62828; }
.symbols { font-family: ui-monospace, monospace; word-break: break-all; letter-spacing: 1px; }
section.student { border-top: 2px solid #444; margin-top: 2em; padding-top: .5em; }
.test { display: flex; gap: 1.5em; align-items: flex-start; margin: 1.2em 0; padding: .8em; background: #fafafa; border: 1px solid #e5e5e5; }
.test svg.board { flex: none; }
.test dl { display: grid; grid-template-columns: max-content 1fr; gap: .2em 1em; margin: 0; }
.test dt { color: #666; } .test dd { margin: 0; } code { background: #eee; padding: 0 .25em; word-break: break-all; }
.legend { color: #555; font-size: 90%; } .note { color: #8a6d3b; }
"""


def histogram_svg(totals: list[float], max_total: int) -> str:
    """Bars of how many students scored in each tenth of the maximum."""
    bins = [0] * 10
    for t in totals:
        bins[min(9, int(10 * t / max_total)) if max_total else 0] += 1
    width, height, bar, top_pad = 520, 160, 44, 20
    top = max(bins) or 1
    base = top_pad + height
    parts = [
        f'<svg width="{width}" height="{base + 30}" viewBox="0 0 {width} {base + 30}" role="img" '
        'aria-label="distribution of totals">'
    ]  # the viewBox: drawn whole when a page makes it narrower
    for i, n in enumerate(bins):
        h = height * n / top
        x = 20 + i * (bar + 6)
        parts.append(f'<rect x="{x}" y="{base - h:.1f}" width="{bar}" height="{h:.1f}" fill="#5c8ddb"/>')
        if n:
            parts.append(
                f'<text x="{x + bar / 2}" y="{base - h - 5:.1f}" font-size="12" text-anchor="middle">{n}</text>'
            )
        lo = max_total * i / 10
        parts.append(f'<text x="{x + bar / 2}" y="{base + 16}" font-size="11" text-anchor="middle">{lo:g}-</text>')
    parts.append(f'<line x1="16" y1="{base}" x2="{width - 4}" y2="{base}" stroke="#333"/></svg>')
    return "".join(parts)


def page(title: str, meta: str, totals: list[float], max_total: int, heads: str, rows: list[str], legend: str,
          marked: str, mover: str, sections: list[str]) -> str:  # fmt: skip
    """A whole report page: the class overview (histogram of ``totals``, the table of
    ``rows`` under ``heads`` after 'student', the legend), then each student's ``sections``."""
    return "\n".join([
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{escape(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{escape(title)}</h1>",
        f'<p class="meta">{meta}</p>',
        "<h2>Class overview</h2>",
        f"<figure>{histogram_svg(totals, max_total)}"
        f"<figcaption class=\"legend\">Students by total (out of {max_total})</figcaption></figure>",
        f"<table><thead><tr><th>student</th>{heads}</tr></thead><tbody>",
        *rows,
        "</tbody></table>",
        f'<p class="legend">{legend}</p>',
        f'<p class="legend">Boards: green dots mark {marked}, a red ring the '
        f"{mover}'s move (a red cross where that move is not legal).</p>",
        *sections,
        "</body></html>",
    ])  # fmt: skip


MAX_BOARDS = 20  # boards drawn per student; the rest are listed in results.json
