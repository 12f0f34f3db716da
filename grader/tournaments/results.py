"""What a tournament produces: its games, standings, crosstable and the files written."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ..games import ggf, psq
from . import ratings
from .engines import Engine
from .folder import RECORDS, TournamentFolder
from .formats import Format
from .games import GameRecord
from .html import tournament_page
from .settings import TournamentSettings
from .sprt import SprtState
from .swiss import SwissResult


@dataclass
class TournamentResult:
    """A tournament's games (in the order planned), standings, crosstable and where they are.
    ``swiss``: the Swiss ranking (points with byes, Buchholz, Sonneborn-Berger) and rounds; ``sprt``:
    the test's state; ``stopped_early``: why a format ended before its planned games (a Swiss
    round that cannot be paired)."""

    folder: TournamentFolder
    engines: list[Engine]
    games: list[GameRecord]
    scheduled: int
    standings: list[ratings.Standing]
    crosstable: dict[str, dict[str, float | None]]  # None: the pair never met
    interrupted: str | None = None
    format: Format = field(default_factory=Format)
    swiss: SwissResult | None = None
    sprt: SprtState | None = None
    stopped_early: str | None = None
    files: list[str] = field(default_factory=list)  # what the folder holds besides the records

    def setup_fixes(self) -> dict[str, str]:
        """Engine -> what to change, for each engine a setup mistake made forfeit (not
        executable, the wrong protocol, the wrong game): one sentence, as ``grade``'s last line."""
        return {g.forfeit: fix for g in self.games if g.forfeit and (fix := g.fix())}

    def to_json(self) -> dict[str, Any]:
        """The --json schema."""
        out: dict[str, Any] = {
            "format": self.format.kind,
            "standings": [s.to_json() for s in self.standings],
            "crosstable": self.crosstable,
            "games": [g.summary() for g in self.games],
        }
        if self.swiss is not None:
            out.update(self.swiss.to_json())
        if self.sprt is not None:
            out["sprt"] = self.sprt.to_json()
        if self.stopped_early:
            out["stopped_early"] = self.stopped_early
        return out


def write_outputs(result: TournamentResult, settings: TournamentSettings) -> None:
    """games.txt, results.json, games.ggf (Othello), psq/ (Gomoku) and report.html in the folder."""
    folder = result.folder
    folder.write(RECORDS, "".join(g.record_line() + "\n" for g in result.games))
    folder.write("results.json", json.dumps(result.to_json(), indent=1))
    result.files = [RECORDS, "games.jsonl", "results.json"]
    if ggf.supports(settings.rules):
        folder.write(ggf.FILE, ggf.write_games(result.games, settings.rules, folder.meta.get("created", "")))
        result.files.append(ggf.FILE)
    if psq.supports(settings.rules):  # a game a file, as Piskvork and Gomocup keep them
        seconds = settings.tc[1] if settings.tc else settings.limits.wall_seconds  # a clock's increment
        for name, text in psq.write_games(result.games, settings.rules, seconds).items():
            folder.write(f"{psq.FOLDER}/{name}", text)
        result.files.append(f"{psq.FOLDER}/")
    folder.write("report.html", tournament_page(result, settings.rules))
    result.files.append("report.html")
