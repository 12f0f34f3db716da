"""One untrusted program at a time: running it under limits (runner), what it can see (isolation),
its staged files and a run on a position (scripts), reading its output (parse), protocol
engines' programs (programs) and the protocols a game plays engines by (protocol,
script_protocol, sessions, nboard, gtp). Imports games and the ground floor only.

Protocols are plugins, as games are: a protocol is a ``Protocol`` subclass found by name
(``get_protocol('nboard')``). Built in: ``script``, ``nboard`` and ``gtp``. Another installed
package adds one through the ``grader.protocols`` entry point group (``uci =
mypackage.uci:UciProtocol``); config.yaml's ``engines:`` and the ``NAME:COMMAND`` engines of a
tournament take its name.

This package's own module holds only the registry's names (``available_protocols``), so that
config.yaml can be checked without loading a protocol; ``get_protocol`` and ``player_for``
live in ``registry`` and are imported from there when first asked for here.
"""

from __future__ import annotations

import importlib
from typing import Any

from . import cgroups  # noqa: F401  (it names fair CPU's cgroups as this grader's, whoever imports the engines)

ENTRY_POINTS = "grader.protocols"


BUILTIN = {  # the protocols that come with the grader, loaded by name as a plugin's are
    "nboard": "grader.engines.nboard:NBoardProtocol",
    "gtp": "grader.engines.gtp:GtpProtocol",
    "script": "grader.engines.script_protocol:ScriptProtocol",
}


def available_protocols() -> dict[str, str]:
    """Every protocol installed: name -> where it comes from."""
    from importlib import metadata  # here: its import is a tenth of the grader's start

    out = {name: "built in" for name in BUILTIN}
    for ep in metadata.entry_points(group=ENTRY_POINTS):
        out.setdefault(ep.name, ep.value)
    return out


_loaded: dict[str, Any] = {}  # name -> its Protocol class, once registry.get_protocol has loaded it

_LATER = {"Protocol": "protocol", "get_protocol": "registry", "player_for": "registry"}


def __getattr__(name: str) -> Any:
    """``Protocol``, ``get_protocol`` and ``player_for``, from their modules when first used."""
    if name not in _LATER:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_LATER[name]}", __name__), name)


__all__ = ["BUILTIN", "ENTRY_POINTS", "Protocol", "available_protocols", "get_protocol", "player_for"]
