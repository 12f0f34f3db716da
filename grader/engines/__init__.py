"""One untrusted program at a time: running it under limits (runner), what it can see (isolation),
its staged files and a run on a position (scripts), reading its output (parse), the protocols a
program may speak for a whole game (protocol, nboard, gtp) and players (players). Imports games
and the ground floor only.

Protocols are plugins, as games are: a protocol is a ``Protocol`` subclass found by name
(``get_protocol('nboard')``). Built in: ``nboard`` and ``gtp``. Another installed package adds
one through the ``grader.protocols`` entry point group (``uci = mypackage.uci:UciProtocol``);
config.yaml's ``engines:`` and the ``NAME:COMMAND`` engines of a tournament take its name.
"""

from __future__ import annotations

from importlib import metadata

from ..errors import GraderError
from .protocol import Protocol

ENTRY_POINTS = "grader.protocols"


def _builtin() -> dict[str, type[Protocol]]:
    """The protocols that come with the grader."""
    from .gtp import GtpProtocol
    from .nboard import NBoardProtocol

    return {p.name: p for p in (NBoardProtocol, GtpProtocol)}


def available_protocols() -> dict[str, str]:
    """Every protocol installed: name -> where it comes from."""
    out = {name: "built in" for name in _builtin()}
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
    builtin = _builtin()
    if name in builtin:
        _loaded[name] = builtin[name]
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


__all__ = ["ENTRY_POINTS", "Protocol", "available_protocols", "get_protocol"]
