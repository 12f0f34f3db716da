"""What a tournament shows in a terminal: standings, crosstable, the Swiss ranking, the SPRT's
state and a graded gauntlet's grades, as text tables (tabulate; ``fmt`` chooses its format).
Each takes the typed rows the tournament gives."""

from __future__ import annotations

import math
from typing import Sequence

from tabulate import tabulate

from ..runs.text import fmt_total
from .grades import ShareGrade
from .ratings import Standing
from .sprt import SprtState, no_elo_reason, signed_text
from .swiss import SwissStanding


def standings_table(rows: Sequence[Standing], fmt: str = "simple") -> str:
    """Engine, games, points, wins/draws/losses, average margin (score from its view), Elo +- 95%, forfeits,
    timeouts, share of the pieces at the games' ends."""
    table = []
    for s in rows:
        rating = "n/a" if s.elo is None else f"{round(s.elo) + 0:+d}"  # + 0: never '-0'
        error = "n/a" if s.elo is None or s.elo_error is None or math.isinf(s.elo_error) else f"{s.elo_error:.0f}"
        table.append([s.engine, s.games, fmt_total(s.points), s.wins, s.draws, s.losses, f"{s.margin:+.1f}",
                      rating, error, s.forfeits, s.timeouts,
                      "n/a" if s.share is None else f"{100 * s.share:.1f}%"])  # fmt: skip
    headers = ["engine", "games", "points", "W", "D", "L", "margin", "Elo (logistic)", "+-95%", "forfeits", "timeouts",
               "share"]  # fmt: skip
    return tabulate(table, headers=headers, tablefmt=fmt, disable_numparse=True)


def share_grades_table(grades: Sequence[ShareGrade], fmt: str = "simple") -> str:
    """Each graded engine: share of the pieces, grade out of 100, whether all its games were played."""
    rows = [[g.engine, "n/a" if g.share is None else f"{100 * g.share:.1f}%", fmt_total(g.grade),
             "yes" if g.complete else f"no ({g.note})"] for g in grades]  # fmt: skip
    return tabulate(rows, headers=["engine", "share", "grade /100", "complete"], tablefmt=fmt, disable_numparse=True)


def swiss_table(rows: Sequence[SwissStanding], fmt: str = "simple") -> str:
    """The Swiss ranking: points (a pair up to 2, a bye 2), Buchholz, Sonneborn-Berger."""
    table = [
        [i, s.engine, fmt_total(s.points), fmt_total(s.buchholz), f"{s.sonneborn_berger:g}"]
        for i, s in enumerate(rows, 1)
    ]
    return tabulate(table, headers=["#", "engine", "points", "Buchholz", "S-B"], tablefmt=fmt, disable_numparse=True)


def sprt_text(s: SprtState) -> str:
    """The SPRT's state: LLR and bounds, the decision, Elo and its interval, pairs and games."""
    decision = {"H1": "H1 accepted", "H0": "H0 accepted"}.get(s.decision or "", "no decision")
    lo, hi = s.interval
    elo = (
        "n/a"
        if s.elo is None
        else f"{s.elo:+.1f}" + ("" if lo is None or hi is None else f" (95%: {lo:+.1f} to {hi:+.1f})")
    )
    if s.elo is None:
        elo = f"none: {no_elo_reason(s.penta, s.model)}"
    return "\n".join([
        f"SPRT {s.engines[0]} vs {s.engines[1]}: H0 {s.elo0:g}, H1 {s.elo1:g} ({s.model} Elo), "
        f"alpha {s.alpha:g}, beta {s.beta:g}",
        f"LLR {signed_text(s.llr, 2)} ({s.lower:.2f}, {s.upper:.2f}): {decision}",
        f"Elo ({s.model}) {elo}",
        f"Pairs [LL, LD, DD+WL, WD, WW]: {list(s.penta.counts)}; games {s.games} of at most {s.max_games}",
    ])  # fmt: skip


def crosstable_text(cross: dict[str, dict[str, float | None]], engines: list[str], fmt: str = "simple") -> str:
    """Each engine's points against each other engine (row against column); '-' for a pair
    that never met."""
    rows = [[e] + ["-" if o == e or (v := cross[e][o]) is None else fmt_total(v) for o in engines] for e in engines]
    return tabulate(rows, headers=["", *engines], tablefmt=fmt, disable_numparse=True)
