"""What a tournament produces: its games, standings, crosstable and the files written."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from . import ratings
from .engines import Engine
from .folder import TournamentFolder
from .formats import Format
from .games import GameRecord
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
