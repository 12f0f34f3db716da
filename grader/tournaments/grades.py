"""Grades of a gauntlet by share of the pieces, as grades.csv."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from typing import Sequence

from ..errors import GraderError
from ..runs.text import fmt_total, safe_cell
from .ratings import Standing
from .results import TournamentResult


@dataclass(frozen=True)
class ShareGrade:
    """An engine's grade out of 100 from its share of the pieces (None: it has no games)."""

    engine: str
    games: int
    share: float | None
    grade: float
    complete: bool
    note: str = ""


def grade_by_share(share: float | None, thresholds: Sequence[tuple[float, float]]) -> float:
    """The points of the highest threshold (share in percent, points) that ``share`` (0..1)
    reaches; 0 below the first or without pieces."""
    points = 0.0
    for percent, value in thresholds:
        if share is not None and 100 * share >= percent - 1e-9:
            points = value
    return points


def share_grades(result: TournamentResult, thresholds: Sequence[tuple[float, float]]) -> list[ShareGrade]:
    """Grades of a gauntlet's engines (not its reference opponents) by share, in the
    order given; incomplete when an engine's games were not all played."""
    if result.format.kind != "gauntlet":
        raise GraderError("--grade grades a gauntlet: give --format gauntlet --opponents REFERENCE...")
    per_engine = 2 * result.format.rounds * len(result.format.opponents)
    graded = [e.name for e in result.engines if e.name not in result.format.opponents]
    return grades_of(result.standings, graded, per_engine, thresholds)


def grades_of(standings: Sequence[Standing], engines: Sequence[str], per_engine: int,
              thresholds: Sequence[tuple[float, float]]) -> list[ShareGrade]:  # fmt: skip
    """Grades of ``engines`` (in that order) by their share of the pieces in ``standings``;
    incomplete when an engine played fewer than ``per_engine`` games."""
    rows = {s.engine: s for s in standings}
    out = []
    for name in engines:
        s = rows[name]
        complete = s.games == per_engine
        note = "" if complete else f"{s.games} of {per_engine} games played"
        out.append(ShareGrade(name, s.games, s.share, grade_by_share(s.share, thresholds), complete, note))
    return out


def grades_csv(grades: Sequence[ShareGrade]) -> str:
    """grades.csv of a graded gauntlet: name, total, max, share (%), games, complete, note."""

    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["name", "total", "max", "share", "games", "complete", "note"])
    for g in grades:
        share = "" if g.share is None else f"{100 * g.share:.2f}"
        writer.writerow(
            [
                safe_cell(g.engine),
                fmt_total(g.grade),
                100,
                share,
                g.games,
                "yes" if g.complete else "no",
                safe_cell(g.note),
            ]
        )
    return out.getvalue()


def write_grades(result: TournamentResult, thresholds: Sequence[tuple[float, float]]) -> list[ShareGrade]:
    """Grade a gauntlet by share of the pieces and write grades.csv in its folder."""
    grades = share_grades(result, thresholds)
    result.folder.write("grades.csv", grades_csv(grades))
    result.files.append("grades.csv")
    return grades
