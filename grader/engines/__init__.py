"""One untrusted program at a time: running it under limits (runner), what it can see (isolation),
its staged files and a run on a position (scripts), reading its output (parse), protocol
engines' programs (programs) and the protocols a game plays engines by (protocol,
script_protocol, sessions, nboard, gtp). Imports games and the ground floor only.

Protocols are plugins, as games are: a protocol is a ``Protocol`` subclass found by name
(``get_protocol('nboard')``). Built in: ``script``, ``nboard`` and ``gtp``. Another installed
package adds one through the ``grader.protocols`` entry point group (``uci =
mypackage.uci:UciProtocol``); config.yaml's ``engines:`` and the ``NAME:COMMAND`` engines of a
tournament take its name.
"""

from __future__ import annotations

import importlib
from importlib import metadata

from ..errors import GraderError
from ..games import Game
from .protocol import EnginePool, EngineSpec, Player, Protocol
from .scripts import Runs, RunSettings

ENTRY_POINTS = "grader.protocols"


BUILTIN = {  # the protocols that come with the grader, loaded by name as a plugin's are
    "nboard": "grader.engines.nboard:NBoardProtocol",
    "gtp": "grader.engines.gtp:GtpProtocol",
    "script": "grader.engines.script_protocol:ScriptProtocol",
}


def available_protocols() -> dict[str, str]:
    """Every protocol installed: name -> where it comes from."""
    out = {name: "built in" for name in BUILTIN}
    for ep in metadata.entry_points(group=ENTRY_POINTS):
        out.setdefault(ep.name, ep.value)
    return out


_loaded: dict[str, type[Protocol]] = {}


def get_protocol(name: str) -> type[Protocol]:
    """The protocol called ``name``: built in, or from an installed package's entry point.
    GraderError names the installed ones when there is none of that name, and a plugin that
    cannot be loaded or is not a Protocol."""
    if name in _loaded:
        return _loaded[name]
    if name in BUILTIN:
        module, _, attribute = BUILTIN[name].partition(":")
        _loaded[name] = getattr(importlib.import_module(module), attribute)
        return _loaded[name]
    found = [ep for ep in metadata.entry_points(group=ENTRY_POINTS) if ep.name == name]
    if not found:
        raise GraderError(f"unknown engine protocol {name!r}: use one of {', '.join(available_protocols())}")
    try:
        protocol = found[0].load()
    except Exception as e:  # a broken plugin is the user's to fix: say which and why
        raise GraderError(f"the engine protocol {name!r} ({found[0].value}) cannot be loaded: {e}") from None
    if not (isinstance(protocol, type) and issubclass(protocol, Protocol)) or protocol.name != name:
        raise GraderError(f"the engine protocol {name!r} ({found[0].value}) is not a grader.engines.protocol.Protocol "
                          f"named {name!r}: fix the entry point or the class")  # fmt: skip
    _loaded[name] = protocol
    return protocol


def player_for(engine: EngineSpec, settings: RunSettings, where: Runs, game: Game,
               pool: EnginePool | None = None) -> Player:  # fmt: skip
    """The player of ``engine`` in a game of ``game``, as its protocol plays it (a kept engine
    from ``pool`` if one waits there)."""
    return get_protocol(engine.protocol).player(engine, settings, where, game, pool)


__all__ = ["ENTRY_POINTS", "Protocol", "available_protocols", "get_protocol", "player_for"]
