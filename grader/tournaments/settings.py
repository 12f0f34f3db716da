"""A tournament's settings: the shared run settings and a tournament's own (clock, scoring, adjudication)."""

from __future__ import annotations

import dataclasses
import warnings
from dataclasses import dataclass
from dataclasses import replace as dataclass_replace
from typing import Any

from .. import settings as layers
from ..config import CLOCKS, Config
from ..engines.scripts import RunSettings
from ..errors import GraderError, GraderWarning
from ..games import DEFAULT, get_game
from ..games import Game as GameRules
from ..games.cost import deepest_within

ON_ILLEGAL = ("forfeit", "random")


ADJUDICATION_SECONDS = 1.0  # the longest a solve for adjudication should take, estimated


def adjudication_cap(game: GameRules, empties: int, backend: str = "auto") -> int:
    """The most empties, up to ``empties``, that ``backend`` solves in about a second (by the
    cost estimate of grader.games.cost): adjudication beyond it would stall each game."""

    fits = deepest_within(game, ADJUDICATION_SECONDS, game.backend(backend))
    return empties if fits is None else max(1, min(empties, fits))


def _capped(settings: TournamentSettings) -> TournamentSettings:
    """``settings`` with adjudication at most as deep as the solver goes in about a second
    (a warning says so): a deeper solve would stall every game."""
    if not settings.adjudicate:
        return settings
    cap = adjudication_cap(settings.rules, settings.adjudicate, settings.backend)
    if cap >= settings.adjudicate:
        return settings
    warnings.warn(f"adjudicating at {cap} empties, not {settings.adjudicate}: the "
                  f"{settings.rules.backend(settings.backend)} solver solves about {cap} empties in a second "
                  "(a deeper solve would stall every game)", GraderWarning, stacklevel=3)  # fmt: skip
    return dataclass_replace(settings, adjudicate=cap)


@dataclass(frozen=True)
class TournamentSettings(RunSettings):
    """How games are played: the shared ``RunSettings`` (``limits`` per move, isolation,
    python, commands, jobs, ``backend`` of the adjudicating solver) and a tournament's own fields.

    - ``scoring``: the rule games are scored by; None: the game's tournament rule.
    - ``on_illegal``: forfeit (the game is lost) | random (a random legal move is played instead).
    - ``adjudicate``: the solver finishes games with this many empties or fewer; None: never.
    - ``game``: the game's name (othello, tictactoe, ...), or a variant's spec (gomoku:size=9).
    - ``tc``: a game clock (seconds, increment per move), as cutechess's ``tc=60+0.5``; None:
      ``limits.wall_seconds`` per move. A flag falls when an engine's clock runs out.
    - ``clock``: what the clock counts: 'wall' (seconds from question to answer) or 'cpu' (the
      CPU seconds of all the engine's processes during its move; a move may still take at most
      CPU_CLOCK_WALL times the clock left in wall time, so that an engine that waits is stopped).
    - ``time_margin``: seconds an engine may overstep its clock (process noise) before its flag falls.
    - ``restart``: start a protocol engine afresh for every game; by default a process that
      played a game cleanly plays its engine's next game on this machine (cutechess's
      ``restart=off``), and every process is stopped when the tournament ends.
    """

    scoring: str | None = None
    on_illegal: str = "forfeit"
    adjudicate: int | None = None
    game: str = DEFAULT
    tc: tuple[float, float] | None = None
    time_margin: float = 0.1
    restart: bool = False
    clock: str = "wall"

    def __post_init__(self) -> None:
        if self.tc is not None:
            object.__setattr__(self, "tc", tuple(self.tc))  # from JSON: a list
        if self.clock not in CLOCKS:
            raise GraderError(f"unknown clock {self.clock!r}: use one of {', '.join(CLOCKS)}")

    @classmethod
    def resolve(cls, config: Config, game: GameRules, time_limit: float | None = None, scoring: str | None = None,
                adjudicate: int | None = None, **options: Any) -> TournamentSettings:  # fmt: skip
        """A tournament's settings as every command takes them: the options given win, then
        config.yaml (tournament: move_seconds, scoring for its own game, on_illegal, tc,
        time_margin), then the game's tournament rule. ``options`` are other fields (jobs,
        backend, tc, ...)."""
        given = layers.given(time_limit=time_limit, scoring=scoring, **options)
        found = layers.resolve(cls, given, layers.tournament_layer(config, game))
        rule = found.scoring or game.tournament_scoring
        return dataclasses.replace(found, scoring=game.scoring(rule), adjudicate=adjudicate, game=game.name)

    def to_json(self) -> dict[str, Any]:
        out = super().to_json()
        out["scoring"] = self.rule
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any], jobs: int | None = None) -> TournamentSettings:
        """Also reads a tournament.json written before the settings were one object (the run's
        settings under "run")."""
        if "run" in data:
            data = dict(data["run"], **{k: v for k, v in data.items() if k not in ("run", "stop_on_error")})
        return super().from_json(data, jobs)

    @property
    def rules(self) -> GameRules:
        return get_game(self.game)

    @property
    def rule(self) -> str:
        """The scoring rule games are scored by."""
        return self.rules.scoring(self.scoring or self.rules.tournament_scoring)
