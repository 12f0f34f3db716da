"""The ranking as a table, as JSON, and as a self-contained HTML page showing each pair's
files side by side with their similar passages marked."""

from __future__ import annotations

import json
from html import escape

from tabulate import tabulate

from .compare import FileMatch, PairResult, SimilarityReport

CAVEAT = (
    "A high similarity is a reason to look at a pair, not a finding: the starter code is left out, "
    "but short shared idioms and what the lab's statement gives also match."
)

STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1400px; color: #222; padding: 0 1em; }
h1 { margin-bottom: .2em; } .meta, .caveat { color: #555; margin-top: 0; }
table.rank { border-collapse: collapse; margin: 1em 0; }
table.rank th, table.rank td { padding: .25em .6em; border-bottom: 1px solid #ddd; text-align: right; }
table.rank td.name, table.rank th.name { text-align: left; }
section.pair { border-top: 2px solid #444; margin-top: 2em; padding-top: .5em; }
.sides { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 32em), 1fr)); gap: 1em; }
.sides > div { min-width: 0; }
table.rank { display: block; overflow-x: auto; max-width: 100%; }
td.name, h1, h2, h3, h4, p { overflow-wrap: anywhere; }
.sides h4 { margin: .3em 0; font-family: ui-monospace, monospace; font-weight: normal; }
pre { background: #fafafa; border: 1px solid #e5e5e5; padding: .6em; overflow-x: auto; font-size: 13px; margin: 0; }
mark { background: #ffe08a; }
"""


def _percent(share: float) -> str:
    return f"{100 * share:.0f}%"


def report_table(report: SimilarityReport, fmt: str = "simple") -> str:
    """The ranked pairs: rank, the two submissions, similarity, each side's share, similar tokens."""
    rows = []
    for rank, p in enumerate(report.pairs, 1):
        m = p.matches[0]
        right = f"{p.right} (archive)" if p.right_archive else p.right
        rows.append([rank, p.left, right, _percent(p.similarity), _percent(m.left_share), _percent(m.right_share),
                     m.tokens])  # fmt: skip
    headers = ["rank", "submission", "similar to", "similarity", "left share", "right share", "tokens"]
    return tabulate(rows, headers=headers, tablefmt=fmt, disable_numparse=True)


def report_json(report: SimilarityReport) -> str:
    return json.dumps(report.to_json(), indent=1)


def marked(text: str, spans: tuple[tuple[int, int], ...]) -> str:
    """``text`` escaped for HTML, its ``spans`` inside <mark>."""
    parts, at = [], 0
    for start, end in spans:
        parts.append(escape(text[at:start]))
        parts.append(f"<mark>{escape(text[start:end])}</mark>")
        at = end
    parts.append(escape(text[at:]))
    return "".join(parts)


def _side(report: SimilarityReport, name: str, relative: str, share: float, spans: tuple[tuple[int, int], ...]) -> str:
    return (f"<div><h4>{escape(name)}: {escape(relative)} ({_percent(share)} similar)</h4>"
            f'<pre tabindex="0">{marked(report.text(name, relative), spans)}</pre></div>')  # fmt: skip


def _pair_section(report: SimilarityReport, rank: int, pair: PairResult) -> str:
    right = f"{pair.right} (archive)" if pair.right_archive else pair.right
    parts = [f'<section class="pair" id="pair-{rank}">',
             f"<h2>{rank}. {escape(pair.left)} and {escape(right)}: {_percent(pair.similarity)} similar</h2>"]  # fmt: skip
    for m in pair.matches:
        parts.append(_match_html(report, pair, m))
    parts.append("</section>")
    return "\n".join(parts)


def _match_html(report: SimilarityReport, pair: PairResult, m: FileMatch) -> str:
    return (f"<h3>{escape(m.left)} and {escape(m.right)}: {m.tokens} similar tokens</h3>"
            f'<div class="sides">{_side(report, pair.left, m.left, m.left_share, m.left_spans)}'
            f"{_side(report, pair.right, m.right, m.right_share, m.right_spans)}</div>")  # fmt: skip


def report_html(report: SimilarityReport, title: str = "Similar submissions") -> str:
    """A page with no outside resources: the ranking, then each pair's files side by side."""
    archived = sum(s.archive for s in report.submissions)
    meta = (f"{len(report.submissions) - archived} submissions, {archived} archived; {report.compared} pairs compared; "
            f"{report.base_files} starter files left out; matches of at least {report.noise} characters of "
            f"tokenized code (copydetect)")  # fmt: skip
    rows = []
    for rank, p in enumerate(report.pairs, 1):
        right = f"{p.right} (archive)" if p.right_archive else p.right
        rows.append(f'<tr><td>{rank}</td><td class="name"><a href="#pair-{rank}">{escape(p.left)}</a></td>'
                    f'<td class="name">{escape(right)}</td><td>{_percent(p.similarity)}</td>'
                    f"<td>{p.matches[0].tokens}</td></tr>")  # fmt: skip
    return "\n".join([
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(title)}</title><style>{STYLE}</style></head><body>",
        f"<h1>{escape(title)}</h1>",
        f'<p class="meta">{escape(meta)}</p>',
        f'<p class="caveat">{escape(CAVEAT)}</p>',
        '<table class="rank"><thead><tr><th>rank</th><th class="name">submission</th>'
        '<th class="name">similar to</th><th>similarity</th><th>tokens</th></tr></thead><tbody>',
        *rows,
        "</tbody></table>",
        *(_pair_section(report, rank, p) for rank, p in enumerate(report.pairs, 1)),
        "</body></html>",
        "",
    ])  # fmt: skip
