"""One resolver of a run's settings, for every mode (grading, regression, tournaments) and
every caller (the command, the library, the portal).

A field takes the value of the first layer that holds it, in one order: what was given (an
option, an argument), then the plan, then config.yaml, then the field's built-in default.
"Given" means present in the given layer, never "different from the default": an option
given with the default's value still wins over the plan.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import warnings
from typing import Any, Mapping, TypeVar

from .config import Config
from .engines.interpreters import course_python
from .errors import GraderWarning
from .games import Game, base_name
from .limits import NOT_GIVEN, Limits, cap_jobs

T = TypeVar("T")
Layer = Mapping[str, Any]  # field name -> value; for 'limits' a whole Limits or a mapping of some of its keys


def resolve(cls: type[T], *layers: Layer) -> T:
    """An instance of the dataclass ``cls`` whose every field comes from the first of
    ``layers`` that holds it, else from its default. ``limits`` merge key by key: a layer
    may give some of them ({'wall_seconds': 10}) and leave the rest to the layers below."""
    values: dict[str, Any] = {}
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        if not f.init:
            continue
        held = [layer[f.name] for layer in layers if f.name in layer]
        if f.name == "limits":
            values["limits"] = merge_limits(*held)
        elif held:
            values[f.name] = held[0]
    return cls(**values)


def merge_limits(*layers: Limits | Mapping[str, Any]) -> Limits:
    """The limits of the first layer holding each key (a whole Limits holds every key), or
    ``NOT_GIVEN`` when no layer sets any (a plan met later may still set them)."""
    layers = tuple(layer for layer in layers if layer is not NOT_GIVEN)
    if not layers:
        return NOT_GIVEN
    values: dict[str, Any] = {}
    for layer in reversed(layers):  # the first layer wins: applied last
        values.update(dataclasses.asdict(layer) if isinstance(layer, Limits) else layer)
    return Limits(**values)


def given(**options: Any) -> dict[str, Any]:
    """The layer of a command's options: those not given (None) are left out; ``time_limit``
    is the limit on wall seconds."""
    out = {k: v for k, v in options.items() if v is not None and k != "time_limit"}
    if options.get("time_limit") is not None:
        out["limits"] = {"wall_seconds": options["time_limit"]}
    return out


def jobs(config: Config) -> int:
    """The job slots config.yaml asks for: its ``jobs`` (at most ``max_jobs()``, a
    GraderWarning saying so), else one per core."""
    if not config.jobs:
        return os.cpu_count() or 1
    capped, said = cap_jobs(config.jobs, "config.yaml's jobs:")
    if said:
        warnings.warn(said, GraderWarning, stacklevel=2)
    return capped


def run_layer(config: Config) -> dict[str, Any]:
    """config.yaml's values of what every mode shares (``RunSettings``): limits, isolation,
    python, commands, jobs, backend, fair_cpu. A value left out there (None) is the built-in default."""
    return {
        "limits": config.limits,
        "isolation": config.isolation,
        "python": course_python(config.python) if config.python else sys.executable,
        "commands": dict(config.commands),
        "jobs": jobs(config),
        "backend": config.backend,
        "fair_cpu": config.fair_cpu,
    }


def own_game(config: Config, game: Game | str) -> bool:
    """Whether config.yaml's game-specific values (its scoring rules) apply to ``game``."""
    name = game.name if isinstance(game, Game) else game
    return base_name(name) == base_name(config.game)


def grading_layer(config: Config, game: Game) -> dict[str, Any]:
    """config.yaml's values for grading ``game``: the shared ones, its scoring (for its own
    game only) and max_solve_seconds."""
    layer = dict(run_layer(config), max_solve_seconds=config.max_solve_seconds)
    if own_game(config, game) and config.scoring is not None:
        layer["scoring"] = config.scoring
    return layer


def plan_layer(scoring: str | None, limits: Limits | None) -> dict[str, Any]:
    """A plan file's values: its scoring and its limits (whole), where it sets them."""
    return {k: v for k, v in (("scoring", scoring), ("limits", limits)) if v is not None}


def tournament_layer(config: Config, game: Game | str) -> dict[str, Any]:
    """config.yaml's values for a tournament of ``game``: the shared ones, then its
    ``tournament:`` section (move_seconds as the limit per move, scoring for its own game)."""
    section = config.tournament
    layer = dict(run_layer(config), on_illegal=section.on_illegal, tc=section.tc, time_margin=section.time_margin,
                 clock=section.clock)  # fmt: skip
    layer["limits"] = dataclasses.replace(config.limits, wall_seconds=section.move_seconds)
    if own_game(config, game) and section.scoring is not None:
        layer["scoring"] = section.scoring
    return layer


def regress_layer(config: Config) -> dict[str, Any]:
    """config.yaml's values for a regression run: the shared ones and its ``regress:`` section."""
    section = config.regress
    return dict(run_layer(config), unknown_credit=section.unknown_credit, margin=section.margin,
                per_test=section.per_test, solve_seconds=section.solve_seconds, max_timelimit=section.max_timelimit,
                unverified_credit=section.unverified_credit, count=section.count)  # fmt: skip
