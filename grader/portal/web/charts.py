"""Charts drawn on the server as inline SVG (the CSP allows no script to draw them): an SPRT
test's LLR against games between its two bounds, as fishtest draws it, and Elo estimates with
their 95% error bars. Colours come from the stylesheet's classes (.chart ...), never from a
style attribute; each chart names what it shows in its <title> for a screen reader."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

WIDTH = 640  # the viewBox's width: CSS scales the chart down to a phone's
LLR_HEIGHT = 260
PAD_LEFT, PAD_RIGHT, PAD_TOP, PAD_BOTTOM = 44, 60, 14, 30
BAR_ROW = 22  # an error bar's row height
LABEL_WIDTH = 150  # the names left of the error bars


def _svg(height: int, label: str, body: list[str]) -> str:
    return (f'<svg class="chart" viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" height="{height}" role="img" '
            f'aria-label="{escape(label)}"><title>{escape(label)}</title>{"".join(body)}</svg>')  # fmt: skip


def _ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """Round values between ``lo`` and ``hi``, about ``count`` of them."""
    span = hi - lo
    if span <= 0:
        return [lo]
    raw = span / count
    step = min((m * 10**e for e in range(-3, 7) for m in (1, 2, 5) if m * 10**e >= raw), default=raw)
    first = int(lo // step) + (lo % step > 1e-9)
    out, k = [], first
    while k * step <= hi + 1e-9:
        out.append(round(k * step, 6))
        k += 1
    return out


def llr_chart(points: Sequence[tuple[int, float]], lower: float, upper: float, max_games: int) -> str:
    """The LLR after each counted pair (``points``: games played, LLR) against games, with the
    lower bound (accept H0) and the upper (accept H1) as dashed lines; the x axis runs to the
    games played, or to the test's limit if nothing is played yet."""
    games = max((g for g, _ in points), default=0)
    x_max = games if games > 0 else max(max_games, 2)
    values = [v for _, v in points]
    y_lo = min([lower, *values]) * 1.1
    y_hi = max([upper, *values]) * 1.1
    plot_w, plot_h = WIDTH - PAD_LEFT - PAD_RIGHT, LLR_HEIGHT - PAD_TOP - PAD_BOTTOM

    def x(g: float) -> float:
        return PAD_LEFT + plot_w * g / x_max

    def y(v: float) -> float:
        return PAD_TOP + plot_h * (y_hi - v) / (y_hi - y_lo)

    body = [f'<line class="axis" x1="{PAD_LEFT}" y1="{y(0):.1f}" x2="{PAD_LEFT + plot_w}" y2="{y(0):.1f}"/>',
            f'<line class="axis" x1="{PAD_LEFT}" y1="{PAD_TOP}" x2="{PAD_LEFT}" y2="{PAD_TOP + plot_h}"/>']  # fmt: skip
    for tick in _ticks(0, x_max):
        body.append(f'<text x="{x(tick):.1f}" y="{LLR_HEIGHT - 12}" text-anchor="middle">{tick:g}</text>')
    body.append(f'<text x="{PAD_LEFT + plot_w / 2:.1f}" y="{LLR_HEIGHT - 1}" text-anchor="middle">games</text>')
    for tick in _ticks(y_lo, y_hi, 4):
        body.append(f'<text x="{PAD_LEFT - 4}" y="{y(tick) + 4:.1f}" text-anchor="end">{tick:g}</text>')
    for value, name, kind in ((lower, "H0", "bound"), (upper, "H1", "bound up")):
        body.append(f'<line class="{kind}" x1="{PAD_LEFT}" y1="{y(value):.1f}" x2="{PAD_LEFT + plot_w}" '
                    f'y2="{y(value):.1f}"/><text class="bound-label" x="{PAD_LEFT + plot_w + 4}" '
                    f'y="{y(value) + 4:.1f}">{name} {value:.2f}</text>')  # fmt: skip
    if points:
        step = -(-len(points) // plot_w)  # one point a unit of width at most: 20,000 games stay a few KB
        shown = [*points[:-1:step], points[-1]]
        path = " ".join(f"{x(g):.1f},{y(v):.1f}" for g, v in shown)
        body.append(f'<polyline class="line" points="{path}"/>')
        g, v = points[-1]
        body.append(f'<circle class="dot" cx="{x(g):.1f}" cy="{y(v):.1f}" r="3"/>')
    last = f"LLR {points[-1][1]:.2f} after {points[-1][0]} games" if points else "no games counted yet"
    label = f"LLR against games: {last}; H0 is accepted at {lower:.2f}, H1 at {upper:.2f}"
    return _svg(LLR_HEIGHT, label, body)


@dataclass(frozen=True)
class Bar:
    """One estimate on an error-bar chart: its name, value and 95% interval (None: not finite)."""

    name: str
    value: float | None
    lower: float | None
    upper: float | None
    mine: bool = False


def error_bars(bars: Sequence[Bar], label: str, marks: Sequence[tuple[float, str]] = ()) -> str:
    """Each estimate a dot on its row with its 95% interval as a line, on one Elo axis (0 and
    ``marks``, e.g. an SPRT's elo0 and elo1, drawn as labelled vertical lines); a row with no
    finite estimate says so in words."""
    finite = [v for b in bars for v in (b.value, b.lower, b.upper) if v is not None]
    ends = [*finite, 0.0, *(m for m, _ in marks)]
    lo, hi = min(ends), max(ends)
    pad = (hi - lo) * 0.08 or 10.0
    lo, hi = lo - pad, hi + pad
    top = 18 if marks else 6
    height = top + BAR_ROW * len(bars) + 26
    left, right = LABEL_WIDTH, WIDTH - 16

    def x(v: float) -> float:
        return left + (right - left) * (v - lo) / (hi - lo)

    bottom = top + BAR_ROW * len(bars)
    body = [f'<line class="axis" x1="{left}" y1="{bottom}" x2="{right}" y2="{bottom}"/>',
            f'<line class="axis zero" x1="{x(0):.1f}" y1="{top}" x2="{x(0):.1f}" y2="{bottom}"/>']  # fmt: skip
    for tick in _ticks(lo, hi, 6):
        body.append(f'<text x="{x(tick):.1f}" y="{bottom + 14}" text-anchor="middle">{tick:+g}</text>')
    body.append(f'<text x="{(left + right) / 2:.1f}" y="{bottom + 25}" text-anchor="middle">Elo</text>')
    for value, name in marks:
        body.append(f'<line class="mark" x1="{x(value):.1f}" y1="{top - 4}" x2="{x(value):.1f}" y2="{bottom}"/>'
                    f'<text x="{x(value):.1f}" y="{top - 7}" text-anchor="middle">{escape(name)}</text>')  # fmt: skip
    for i, b in enumerate(bars):
        mid = top + BAR_ROW * i + BAR_ROW / 2
        cls = ' class="mine"' if b.mine else ""
        name = b.name if len(b.name) <= 22 else b.name[:21] + "\u2026"
        body.append(f'<text{cls} x="{left - 6}" y="{mid + 4:.1f}" text-anchor="end">{escape(name)}</text>')
        if b.value is None:
            body.append(f'<text x="{left + 4}" y="{mid + 4:.1f}">not rated yet</text>')
            continue
        if b.lower is not None and b.upper is not None:
            body.append(f'<line class="err" x1="{x(b.lower):.1f}" y1="{mid:.1f}" x2="{x(b.upper):.1f}" y2="{mid:.1f}"/>'
                        f'<line class="err" x1="{x(b.lower):.1f}" y1="{mid - 5:.1f}" x2="{x(b.lower):.1f}" y2="{mid + 5:.1f}"/>'
                        f'<line class="err" x1="{x(b.upper):.1f}" y1="{mid - 5:.1f}" x2="{x(b.upper):.1f}" y2="{mid + 5:.1f}"/>')  # fmt: skip
        body.append(f'<circle class="dot" cx="{x(b.value):.1f}" cy="{mid:.1f}" r="4"/>')
    return _svg(height, label, body)
