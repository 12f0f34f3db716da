"""The protocols by name: the class a name stands for (built in, or a plugin's through the
``grader.protocols`` entry point group), and the player of an engine in a game."""

from __future__ import annotations

import importlib
from importlib import metadata

from .. import engines
from ..errors import GraderError
from ..games import Game
from .protocol import EnginePool, EngineSpec, Player, Protocol
from .scripts import Runs, RunSettings


def get_protocol(name: str) -> type[Protocol]:
    """The protocol called ``name``: built in, or from an installed package's entry point.
    GraderError names the installed ones when there is none of that name, and a plugin that
    cannot be loaded or is not a Protocol."""
    loaded = engines._loaded  # the package's, where the names are
    if name in loaded:
        return loaded[name]
    if name in engines.BUILTIN:
        module, _, attribute = engines.BUILTIN[name].partition(":")
        loaded[name] = getattr(importlib.import_module(module), attribute)
        return loaded[name]
    found = [ep for ep in metadata.entry_points(group=engines.ENTRY_POINTS) if ep.name == name]
    if not found:
        raise GraderError(f"unknown engine protocol {name!r}: use one of {', '.join(engines.available_protocols())}")
    try:
        protocol = found[0].load()
    except Exception as e:  # a broken plugin is the user's to fix: say which and why
        raise GraderError(f"the engine protocol {name!r} ({found[0].value}) cannot be loaded: {e}") from None
    if not (isinstance(protocol, type) and issubclass(protocol, Protocol)) or protocol.name != name:
        raise GraderError(f"the engine protocol {name!r} ({found[0].value}) is not a grader.engines.protocol.Protocol "
                          f"named {name!r}: fix the entry point or the class")  # fmt: skip
    loaded[name] = protocol
    return protocol


def player_for(engine: EngineSpec, settings: RunSettings, where: Runs, game: Game,
               pool: EnginePool | None = None) -> Player:  # fmt: skip
    """The player of ``engine`` in a game of ``game``, as its protocol plays it (a kept engine
    from ``pool`` if one waits there)."""
    return get_protocol(engine.protocol).player(engine, settings, where, game, pool)


__all__ = ["get_protocol", "player_for"]
