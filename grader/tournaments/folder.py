"""A tournament's folder: its engines, format, openings and settings, and each game as it ends."""

from __future__ import annotations

import datetime
from pathlib import Path

from ..engines.isolation import ISOLATIONS
from ..errors import GraderError
from ..runs.folders import RecordFolder
from .engines import Engine
from .formats import Format
from .games import GameRecord
from .settings import ON_ILLEGAL, TournamentSettings

RECORDS = "games.txt"


class TournamentFolder(RecordFolder):
    """tournament.json (engines, the schedule, settings) and games.jsonl (one line per finished game)."""

    META, LINES, KIND, WRITER = "tournament.json", "games.jsonl", "tournament", "a tournament"
    REQUIRED = ("engines", "schedule", "settings")
    set_aside: dict[str, int] = {}  # engine -> its recorded games ``finished`` left out: the engine changed

    @classmethod
    def create(cls, path: str | Path, engines: list[Engine], games: list[GameRecord], settings: TournamentSettings,
               seed: int | None, fmt: Format | None = None, openings: list[str] | None = None) -> TournamentFolder:  # fmt: skip
        meta = {
            "seed": seed,
            "format": (fmt or Format()).to_json(),
            "openings": openings or sorted({g.opening for g in games}),
            "engines": {e.name: e.to_json() for e in engines},
            "schedule": [
                {"id": g.id, "pair": g.pair, "round": g.round, "black": g.black, "white": g.white, "opening": g.opening}
                for g in games
            ],  # fmt: skip
            "settings": settings.to_json(),
        }
        return cls._create(path, meta)

    def engines(self) -> list[Engine]:
        return [Engine.from_json(name, info) for name, info in self.meta["engines"].items()]

    def games(self) -> list[GameRecord]:
        """The fixed schedule (round-robin, gauntlet); Swiss and SPRT games are planned as they go."""
        return [GameRecord(**g) for g in self.meta["schedule"]]

    def format(self) -> Format:
        games = self.games()
        return Format.from_json(self.meta.get("format"), max((g.round for g in games), default=1))

    def openings(self) -> list[str]:
        if "openings" in self.meta:
            return list(self.meta["openings"])
        return list(dict.fromkeys(g.opening for g in self.games()))  # a folder written before formats

    def settings(self, jobs: int | None = None) -> TournamentSettings:
        return TournamentSettings.from_json(self.meta["settings"], jobs)

    def append(self, game: GameRecord) -> None:
        self._append(game.to_json())

    def _check(self) -> None:
        """Build the engines, schedule and settings from tournament.json (raises if it was damaged)."""
        self.engines()
        self.games()
        self.format()
        settings = self.settings()
        if settings.on_illegal not in ON_ILLEGAL or settings.isolation not in ISOLATIONS:
            raise ValueError("bad settings")

    def finished(self, digests: dict[str, str]) -> dict[str, GameRecord]:
        """Games already played by the engines' current scripts (``digests`` by name), by id;
        a changed engine's games are played again (``set_aside`` says whose)."""
        out, old = {}, {}
        for record in self._records():
            try:
                game = GameRecord.from_json(record)
            except TypeError:
                continue
            if all(game.scripts.get(name) == digests.get(name) for name in (game.black, game.white)):
                out[game.id] = game
            else:
                old[game.id] = game
        changed: dict[str, int] = {}
        for game in old.values():
            if game.id not in out:
                for name in (game.black, game.white):
                    if game.scripts.get(name) != digests.get(name):
                        changed[name] = changed.get(name, 0) + 1
        self.set_aside = changed
        return out

    def changed_engines(self) -> str | None:
        """A warning naming the engines whose recorded games were set aside at the last
        ``finished`` because their files changed, if any."""
        changed = self.set_aside
        if not changed:
            return None
        each = ", ".join(
            f"{n} recorded game{'' if n == 1 else 's'} of engine '{name}'" for name, n in sorted(changed.items())
        )
        return (f"{each} set aside because the engine changed since they were played (its command, depth or "
                f"files): they stay in {self.path / self.LINES}, not counted, and are played again")  # fmt: skip

    def write(self, name: str, text: str) -> None:
        try:
            (self.path / name).parent.mkdir(exist_ok=True)
            (self.path / name).write_text(text, encoding="utf-8")
        except OSError as e:
            raise GraderError(f"cannot write {self.path / name}: {e.strerror}") from None


def default_folder() -> Path:
    return Path("runs") / (datetime.datetime.now().strftime("%Y-%m-%d_%H-%M-%S") + "-tournament")
