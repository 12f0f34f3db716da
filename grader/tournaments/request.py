"""A tournament as a user asks for it, option by option (the command's flags, a form of the
portal), and the rules of which options go together: ``TournamentRequest.arguments`` checks
them and resolves the rest into ``run_tournament``'s arguments, so that every front end
meets the same rules and the same errors."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import Config
from ..errors import OptionError
from ..runs.folders import check_new_folder
from ..runs.seeds import choose_seed
from .engines import configured_engines
from .formats import Format, SprtSettings
from .openings import read_openings
from .settings import TournamentSettings

FORMATS = ("round-robin", "gauntlet", "swiss")  # what --format names; 'sprt' comes with its bounds


@dataclass(frozen=True)
class TournamentRequest:
    """What was asked for; None (or empty, or False): not given."""

    engines: tuple[str, ...] = ()  # script paths, builtin:NAME, nboard:/gtp:COMMAND, or config.yaml's engine names
    format: str | None = None  # round-robin (the default) | gauntlet | swiss
    opponents: tuple[str, ...] = ()  # a gauntlet's opponents
    rounds: int | None = None
    sprt: tuple[float, float] | None = None  # Elo bounds: an SPRT test between two engines
    alpha: float | None = None
    beta: float | None = None
    max_games: int | None = None
    grade: bool = False  # grade a gauntlet by share of the pieces
    openings_file: str | None = None
    opening_plies: int | None = None  # cut the openings of openings_file
    random_openings: int | None = None  # plies of random openings
    seed: int | None = None
    time_limit: float | None = None  # seconds per move
    tc: tuple[float, float] | None = None  # a game clock
    clock: str | None = None  # what the clock counts: wall | cpu (the CPU time of the engine's processes)
    time_margin: float | None = None  # seconds an engine may overstep its clock
    restart: bool = False
    jobs: int | None = None
    adjudicate: int | None = None
    backend: str | None = None
    scoring: str | None = None
    game: str | None = None  # a game's name or variant spec
    board_size: int | None = None
    out: str | None = None
    resume: str | None = None

    def check(self) -> None:
        """OptionError naming the options that do not go together, and what to give instead."""
        if self.resume:
            given = [name for name, value in self._new_tournament_options() if value]
            if given:
                raise OptionError(f"--resume continues a tournament with its own engines, format, openings and "
                                  f"settings: give only --resume DIR (and --jobs, --grade), not {given[0]}")  # fmt: skip
            return
        if self.format is not None and self.format not in FORMATS:
            raise OptionError(f"unknown format {self.format!r}: use one of {', '.join(FORMATS)}, or --sprt")
        if self.openings_file and self.random_openings is not None:
            raise OptionError("give --openings FILE or --random-openings PLIES, not both")
        if self.opening_plies is not None and not self.openings_file:
            raise OptionError("--opening-plies cuts the openings of --openings FILE: give the file too")
        if self.tc and self.time_limit:
            raise OptionError("give --tc (a game clock) or --time-limit (seconds per move), not both")
        if self.clock is not None and not self.tc:
            raise OptionError(f"a {self.clock} clock needs a time control: give --tc {self.clock}:SECONDS[+INCREMENT]")
        if self.time_margin is not None and not self.tc:
            raise OptionError("--timemargin is how far an engine may overstep its clock: give --tc too")
        if self.sprt is not None:
            if self.format not in (None, "round-robin") or self.opponents:
                raise OptionError("--sprt is its own format between two engines: leave out --format and --opponents")
            if self.max_games is None:
                raise OptionError("--sprt needs --max-games N: the most games to play undecided")
            if self.rounds is not None:
                raise OptionError("--rounds is not for --sprt: it plays pairs until a bound or --max-games")
        elif self.max_games is not None or self.alpha is not None or self.beta is not None:
            raise OptionError("--max-games, --alpha and --beta are for --sprt")
        kind = "sprt" if self.sprt is not None else self.format or "round-robin"
        if self.opponents and kind != "gauntlet":
            raise OptionError("--opponents is for --format gauntlet (the engines given play only them)")
        if self.grade and kind != "gauntlet":
            raise OptionError("--grade grades a gauntlet: give --format gauntlet --opponents REFERENCE...")

    def _new_tournament_options(self) -> list[tuple[str, Any]]:
        """The options that only a new tournament takes, with their values."""
        return [("ENGINES", self.engines), ("--format", self.format not in (None, "round-robin")),
                ("--opponents", self.opponents), ("--rounds", self.rounds), ("--sprt", self.sprt),
                ("--alpha", self.alpha is not None), ("--beta", self.beta is not None), ("--max-games", self.max_games),
                ("--openings", self.openings_file), ("--opening-plies", self.opening_plies is not None),
                ("--random-openings", self.random_openings is not None), ("--seed", self.seed is not None),
                ("--time-limit", self.time_limit), ("--tc", self.tc), ("--timemargin", self.time_margin is not None),
                ("--restart", self.restart), ("--adjudicate", self.adjudicate), ("--backend", self.backend),
                ("--scoring", self.scoring), ("--game", self.game), ("--size", self.board_size),
                ("--out", self.out)]  # fmt: skip

    def arguments(self, config: Config) -> dict[str, Any]:
        """``run_tournament``'s arguments for this request under ``config`` (the rules checked,
        the settings resolved, the seed chosen: given, else config.yaml's, else a new one;
        config.yaml's engines found by name). Raises OptionError or GraderError."""
        self.check()
        if self.resume:
            return {"resume": self.resume, "jobs": self.jobs}
        game = config.get_game(self.game)
        game = game.sized(self.board_size) if self.board_size else game
        settings = TournamentSettings.resolve(config, game, self.time_limit, self.scoring, self.adjudicate,
                                              jobs=self.jobs, backend=self.backend, tc=self.tc, clock=self.clock,
                                              time_margin=self.time_margin, restart=self.restart or None)  # fmt: skip
        if self.out:
            check_new_folder(Path(self.out), "tournament")
        named = configured_engines(config)

        def pick(engine: str) -> Any:  # a name given that is not a file is one of config.yaml's engines
            return named[engine] if engine in named and not Path(engine).is_file() else engine

        return {
            "engines": [pick(e) for e in self.engines],
            "settings": settings,
            "format": self.tournament_format(),
            "opponents": [pick(e) for e in self.opponents],
            "seed": choose_seed(self.seed, config),
            "out": Path(self.out) if self.out else None,
            "openings": read_openings(self.openings_file, game, self.opening_plies) if self.openings_file else None,
            "opening_plies": self.random_openings,
        }

    def tournament_format(self) -> Format:
        """The format asked for (SPRT: with its bounds, error rates and game limit)."""
        if self.sprt is not None:
            assert self.max_games is not None  # check() says so
            rates: dict[str, Any] = {
                k: v for k, v in (("alpha", self.alpha), ("beta", self.beta)) if v is not None
            }  # else the library's
            return Format("sprt", sprt=SprtSettings(self.sprt[0], self.sprt[1], self.max_games, **rates))
        return Format(self.format or "round-robin", self.rounds or 1)
