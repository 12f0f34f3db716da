"""A tournament's report.html: standings with Elo and intervals, crosstable, the SPRT's state,
and every game replayable move by move. One self-contained page: inline CSS, boards drawn by
the game's own ``svg``, a small inline script, nothing loaded from the network.

Boards are sent as pieces: each ply's SVG is cut before every tag, and each distinct piece is
stored once for the page, so a board costs a list of numbers (a 60-move Othello game about
15 kB rather than 300). ``#game=N&ply=K`` in the address opens game N (from 1) at ply K.
"""

from __future__ import annotations

import json
import re
from html import escape
from typing import Any, Sequence

from ..games import PASS, Game
from ..runs.text import fmt_total, plural
from .ratings import NO_ELO, Standing, elo_cells
from .results import TournamentResult
from .sprt import SprtState, no_elo_reason, signed_text
from .swiss import SwissResult

_CSS = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; padding: 0 1em; }
h1 { margin-bottom: .2em; } .meta { color: #555; margin-top: 0; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { padding: .25em .6em; border-bottom: 1px solid #ddd; text-align: right; }
th:first-child, td:first-child, td.name { text-align: left; }
.note { color: #8a6d3b; } .legend { color: #555; font-size: 90%; }
#viewer { display: flex; gap: 1.5em; align-items: flex-start; padding: .8em; background: #fafafa; border: 1px solid #e5e5e5; }
#viewer-moves { font-family: ui-monospace, monospace; max-width: 40em; word-break: break-word; }
#viewer-moves .now { background: #ffe082; }
button { font: inherit; }
"""

_SCRIPT = """
(function () {
  var parts = JSON.parse(document.getElementById('svg-parts').textContent);
  var games = JSON.parse(document.getElementById('game-data').textContent);
  var current = 0, ply = 0;
  function show() {
    var g = games[current];
    ply = Math.max(0, Math.min(ply, g.boards.length - 1));
    document.getElementById('viewer-board').innerHTML = g.boards[ply].map(function (i) { return parts[i]; }).join('');
    document.getElementById('viewer-title').textContent = g.title;
    document.getElementById('viewer-ply').textContent = 'ply ' + ply + ' of ' + (g.boards.length - 1);
    var moves = document.getElementById('viewer-moves');
    moves.textContent = '';
    g.moves.forEach(function (m, i) {
      var span = document.createElement('span');
      span.textContent = (i + 1) + '.' + m + ' ';
      if (i + 1 === ply) { span.className = 'now'; }
      moves.appendChild(span);
    });
  }
  function open(n, k) { current = Math.max(0, Math.min(n, games.length - 1)); ply = k; show(); }
  document.getElementById('first').onclick = function () { ply = 0; show(); };
  document.getElementById('prev').onclick = function () { ply -= 1; show(); };
  document.getElementById('next').onclick = function () { ply += 1; show(); };
  document.getElementById('last').onclick = function () { ply = games[current].boards.length - 1; show(); };
  Array.prototype.forEach.call(document.querySelectorAll('button.replay'), function (b) {
    b.onclick = function () { open(parseInt(b.dataset.game, 10), 0); document.getElementById('viewer').scrollIntoView(); };
  });
  document.addEventListener('keydown', function (e) {
    if (e.key === 'ArrowRight') { ply += 1; show(); } else if (e.key === 'ArrowLeft') { ply -= 1; show(); }
  });
  var m = /game=(\\d+)(?:&ply=(\\d+))?/.exec(location.hash);
  if (games.length) { open(m ? parseInt(m[1], 10) - 1 : 0, m && m[2] ? parseInt(m[2], 10) : 0); }
})();
"""


class _Parts:
    """SVG pieces stored once for the page."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {}

    def cut(self, svg: str) -> list[int]:
        return [self.index.setdefault(p, len(self.index)) for p in re.split(r"(?=<)", svg) if p]

    def to_json(self) -> list[str]:
        return list(self.index)


def game_boards(record, game: Game) -> tuple[list[Any], list[str]]:
    """Each position of a game from where it started (the next move ringed) and its moves as
    text (passes included; an engine's move with its evaluation and its clock after it,
    when there are)."""
    start, opening = game.opening_start(record.opening)
    moves = game.parse_transcript(record.moves)
    pos, positions, texts = start, [], []
    played: list[int | None] = []
    for i, sq in enumerate(moves):
        if pos.must_pass():
            positions.append(pos)
            played.append(PASS)
            texts.append("pass")
            pos = pos.pass_turn()
        positions.append(pos)
        played.append(sq)
        texts.append(game.square_name(sq) + _move_note(record, i - len(opening)))
        pos = pos.play(sq)
    positions.append(pos)
    played.append(None)
    return list(zip(positions, played)), texts


def _move_note(record, j: int) -> str:
    """' (-2.50, 58.3 s left)': engine move ``j``'s evaluation and clock, when known."""
    evals, clocks = getattr(record, "evals", []), getattr(record, "clocks", [])
    notes = []
    if 0 <= j < len(evals) and evals[j] is not None:
        notes.append(f"{evals[j]:+.2f}")
    if 0 <= j < len(clocks):
        notes.append(f"{clocks[j]:.1f} s left")
    return f" ({', '.join(notes)})" if notes else ""


def _json_script(element_id: str, data: Any) -> str:
    text = json.dumps(data, separators=(",", ":")).replace("</", "<\\/")
    return f'<script type="application/json" id="{element_id}">{text}</script>'


def _elo(s: Standing) -> tuple[str, str]:
    rating, error = elo_cells(s)
    if s.elo is None or s.elo_error is None or error == NO_ELO:
        return rating, NO_ELO
    lo, hi = round(s.elo - s.elo_error) + 0, round(s.elo + s.elo_error) + 0
    return rating, f"± {error} ({lo:+d} to {hi:+d})"


def _standings(standings: Sequence[Standing], swiss_result: SwissResult | None) -> str:
    swiss = {s.engine: s for s in swiss_result.standings} if swiss_result else {}
    head = "<th>#</th><th>engine</th><th>games</th><th>points</th><th>W</th><th>D</th><th>L</th>"
    head += "<th>share</th><th>margin per game</th><th>Elo (logistic)</th><th>95% interval</th><th>forfeits</th><th>timeouts</th>"
    if swiss:
        head += "<th>Swiss points</th><th>Buchholz</th><th>Sonneborn-Berger</th>"
    rows = []
    for i, s in enumerate(standings, 1):
        rating, interval = _elo(s)
        share = "n/a" if s.share is None else f"{100 * s.share:.1f}%"
        cells = [str(i), escape(s.engine), str(s.games), fmt_total(s.points), str(s.wins), str(s.draws), str(s.losses),
                 share, f"{s.margin:+.1f}", rating, interval, str(s.forfeits), str(s.timeouts)]  # fmt: skip
        if swiss:
            w = swiss[s.engine]
            cells += [fmt_total(w.points), fmt_total(w.buchholz), f"{w.sonneborn_berger:g}"]
        rows.append(
            "<tr>" + "".join(f"<td{' class=name' if j == 1 else ''}>{c}</td>" for j, c in enumerate(cells)) + "</tr>"
        )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def _crosstable(standings: Sequence[Standing], cross: dict[str, dict[str, float | None]]) -> str:
    names = [s.engine for s in standings]
    head = "".join(f"<th>{escape(n)}</th>" for n in names)
    rows = []
    for e in names:
        cells = "".join("<td>-</td>" if o == e or (v := cross[e][o]) is None else f"<td>{fmt_total(v)}</td>"
                        for o in names)  # fmt: skip
        rows.append(f"<tr><td class=name>{escape(e)}</td>{cells}</tr>")
    return f"<table><thead><tr><th></th>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def _sprt(s: SprtState) -> str:
    decision = {"H1": "H1 accepted: stronger by at least ELO1", "H0": "H0 accepted: not stronger by ELO1"}.get(
        s.decision or "", "undecided"
    )
    lo, hi = s.interval
    elo = (
        "n/a"
        if s.elo is None
        else f"{s.elo:+.1f}" + ("" if lo is None or hi is None else f" (95%: {lo:+.1f} to {hi:+.1f})")
    )
    if s.elo is None:
        elo = f"none: {escape(no_elo_reason(s.penta, s.model))}"
    ll, ld, dd, wd, ww = s.penta.counts
    rows = [
        ("test", f"{escape(s.engines[0])} against {escape(s.engines[1])}: H0 Elo = {s.elo0:g}, "
                 f"H1 Elo = {s.elo1:g} ({escape(s.model)}), alpha {s.alpha:g}, beta {s.beta:g}"),
        ("LLR", f"{signed_text(s.llr, 3)} (bounds {s.lower:.3f}, {s.upper:.3f})"),
        ("state", decision),
        (f"Elo ({escape(s.model)})", elo),
        ("pairs", f"[LL, LD, DD+WL, WD, WW] = [{ll}, {ld}, {dd}, {wd}, {ww}]"),
        ("games", f"{s.games} counted of at most {s.max_games}"),
    ]  # fmt: skip
    body = "".join(f"<tr><td class=name>{k}</td><td class=name>{v}</td></tr>" for k, v in rows)
    return f'<h2>SPRT</h2><table id="sprt"><tbody>{body}</tbody></table>'


def tournament_page(result: TournamentResult, game: Game) -> str:
    """The whole page for a tournament's result."""
    parts = _Parts()
    data, rows = [], []
    for n, g in enumerate(result.games):
        boards, texts = game_boards(g, game)
        title = f"{g.black} (x) - {g.white} (o): {g.black_pieces}-{g.white_pieces}, {g.result}, {g.reason}"
        data.append({"title": title, "moves": texts,
                     "boards": [parts.cut(game.svg(pos, [], nxt if nxt is not None and nxt >= 0 else None)) for pos, nxt in boards]})  # fmt: skip
        rows.append(f"<tr><td>{n + 1}</td><td>{g.round}</td><td class=name>{escape(g.black)}</td><td class=name>{escape(g.white)}</td>"
                    f"<td>{g.black_pieces}-{g.white_pieces}</td><td>{escape(g.result)}</td><td class=name>{escape(g.end_text())}</td>"
                    f'<td><button class="replay" data-game="{n}">replay</button></td></tr>')  # fmt: skip
    fmt = result.format
    meta = [escape(game.title), escape(fmt.kind), plural(len(result.engines), "engine", "engines"),
            f"{len(result.games)} of {result.scheduled} games", escape(str(result.folder.path))]  # fmt: skip
    notes = []
    if result.stopped_early:
        notes.append(f'<p class="note">Stopped early: {escape(result.stopped_early)}</p>')
    for engine, fix in result.setup_fixes().items():
        notes.append(f'<p class="note">{escape(engine)} forfeited: {escape(fix)}</p>')
    if result.interrupted:
        notes.append(f'<p class="note">{escape(result.interrupted)}: not every game was played.</p>')
    viewer = (
        '<h2>Replay</h2><div id="viewer"><div id="viewer-board"></div><div>'
        '<p><strong id="viewer-title"></strong></p><p id="viewer-ply"></p>'
        '<p><button id="first">|&lt;</button> <button id="prev">&lt; back</button> '
        '<button id="next">forward &gt;</button> <button id="last">&gt;|</button></p>'
        '<p id="viewer-moves"></p><p class="legend">The red ring marks the next move; arrow keys step too.</p></div></div>'
    )
    return "\n".join([
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>Tournament report</title><style>{_CSS}</style></head><body>",
        "<h1>Tournament report</h1>",
        f'<p class="meta">{" · ".join(meta)}</p>',
        *notes,
        "<h2>Standings</h2>",
        _standings(result.standings, result.swiss),
        '<p class="legend">Elo is logistic Elo relative to the field, its interval 95% over game pairs (n/a: '
        "too few pairs, or pairs that all scored alike, to give one); share: "
        "an engine's pieces over all pieces on the board at its games' ends.</p>",
        "<h2>Crosstable</h2>",
        _crosstable(result.standings, result.crosstable),
        _sprt(result.sprt) if result.sprt else "",
        viewer if result.games else "",
        "<h2>Games</h2>",
        "<table><thead><tr><th>#</th><th>round</th><th>black (x)</th><th>white (o)</th><th>pieces</th><th>result</th>"
        f"<th>end</th><th></th></tr></thead><tbody>{''.join(rows)}</tbody></table>",
        _json_script("svg-parts", parts.to_json()),
        _json_script("game-data", data),
        f"<script>{_SCRIPT}</script>" if result.games else "",
        "</body></html>",
    ])  # fmt: skip
