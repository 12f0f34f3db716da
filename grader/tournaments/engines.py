"""The engines of a tournament: scripts, builtin engines, protocol programs and config.yaml's, and the checks that they can play the game."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from dataclasses import replace as dataclass_replace
from pathlib import Path
from typing import Any, Sequence

from ..config import Config
from ..engines import available_protocols
from ..engines.programs import PYTHON, ProtocolEngine
from ..engines.registry import get_protocol
from ..engines.scripts import Script
from ..errors import GraderError
from ..files import bundled
from ..games import DEFAULT, get_game
from ..games import Game as GameRules

BUILTIN = "builtin:"  # 'builtin:greedy' names an engine shipped with the package


NBOARD = "nboard:"  # 'nboard:./edax -nboard' names a program speaking the NBoard protocol
SCRIPTS = "script"  # the protocol of scripts, run for each move (grader.engines.script_protocol)
SCRIPT = f"{SCRIPTS}:"  # 'script:lab.py' is 'lab.py'; without a prefix an engine is a script


@dataclass(frozen=True)
class Engine:
    """An engine: its name in the standings, and its script (read once, when the tournament
    starts) or the protocol engine it is (``protocol``)."""

    name: str
    path: Path | None = None
    protocol: ProtocolEngine | None = None

    def spec(self) -> Script | ProtocolEngine:
        """What a game needs to play it."""
        if self.protocol is not None:
            return self.protocol
        assert self.path is not None
        return Script.from_path(self.path)

    @property
    def sha256(self) -> str:
        return self.spec().digest

    @property
    def paths(self) -> list[Path]:
        """Its files and folders (for the isolation's check that no private file is among them)."""
        if self.protocol is None:
            return [Path(self.path or "")]
        return [Path(self.protocol.folder)] if self.protocol.folder else []

    def to_json(self) -> dict[str, Any]:
        if self.protocol is not None:
            p = self.protocol
            return {
                "protocol": p.protocol,
                "command": p.origin,
                "workdir": p.workdir,
                "depth": p.depth,
                "sha256": p.digest,
            }
        return {"path": str(Path(self.path or "").absolute()), "sha256": self.sha256}

    @classmethod
    def from_json(cls, name: str, info: dict[str, Any]) -> Engine:
        if "protocol" in info:  # read again: a changed engine gets a new digest, and its games are played again
            return cls(
                name, protocol=protocol_engine(info["command"], info["protocol"], info["workdir"], info["depth"])
            )
        return cls(name, Path(info["path"]))


def engine_list(paths: Sequence[str | Path | Engine], game: GameRules | None = None) -> list[Engine]:
    """Engines named by their file names (with the folder when two share a name):

    - a script's path, or 'builtin:NAME', an example script shipped with the package for
      ``game`` (for Othello: random_mover, greedy, negamax), run afresh for each move (a
      game whose lab speaks a protocol has examples of that protocol: Gomoku's
      'builtin:solver' is 'builtin:gtp:solver');
    - 'nboard:COMMAND' ('nboard:./edax -nboard'), a program speaking the NBoard protocol, or
      'builtin:nboard:NAME', an example script behind the package's NBoard adapter;
    - an ``Engine`` (config.yaml's ``engines:`` table gives them names and options).

    A name given as cutechess's ``name=`` is the engine's name ('nboard:name=v1:./engine.py',
    'script:name=v2:lab.py'): two versions whose files share a name can meet.
    """
    game = game or get_game(DEFAULT)
    engines: list[Engine] = []
    named: set[str] = set()  # names given on the command line: never lengthened
    for p in paths:
        if isinstance(p, Engine):
            if p.protocol is not None:
                _check_protocol(p.name, p.protocol.protocol, game)
            engines.append(p)
            continue
        given, text = _given_name(str(p))
        engine = _read_engine(text, game)
        if given is not None:
            engine = dataclass_replace(engine, name=given)
            named.add(given)
        engines.append(engine)
    for longer in (_protocol_name, _folder_name):  # two engines with one name: the protocol's, then the folder's
        names = [e.name for e in engines]
        engines = [longer(e) if names.count(e.name) > 1 and e.name not in named else e for e in engines]
    if len({e.name for e in engines}) < len(engines):
        twice = next(e.name for e in engines if [f.name for f in engines].count(e.name) > 1)
        raise GraderError(f"two engines are named '{twice}': give each engine once, or name them on the command "
                          "line (nboard:name=v1:COMMAND, script:name=v1:FILE) or in config.yaml's engines:")  # fmt: skip
    for e in engines:
        if any(not ch.isprintable() for ch in e.name):
            raise GraderError(f"engine name {e.name!r} holds a control character, which would break the records "
                              "and tables: rename its file (or name it in config.yaml's engines:)")  # fmt: skip
    if len(engines) < 2:
        raise GraderError("a tournament needs at least two engines")
    return engines


def _read_engine(text: str, game: GameRules) -> Engine:
    """One engine from its text on the command line (without a name given to it)."""
    if text.startswith(SCRIPT):  # 'script:PATH' is PATH: scripts are the default
        text = text[len(SCRIPT) :]
    elif text.startswith(BUILTIN + SCRIPT):
        text = BUILTIN + text[len(BUILTIN + SCRIPT) :]
    spoken = [name for name in available_protocols() if name != SCRIPTS]
    protocol = next((p for p in spoken if text.startswith(f"{p}:") or text.startswith(f"{BUILTIN}{p}:")), None)
    if protocol is not None:
        _check_protocol(text, protocol, game)
        proto = protocol_engine(text, protocol, game=game)
        return Engine(proto.stem, protocol=proto)
    if text.startswith(BUILTIN) and game.lab_protocol:  # the lab's examples are programs of a protocol
        text = f"{BUILTIN}{game.lab_protocol}:{text[len(BUILTIN) :]}"
        proto = protocol_engine(text, game.lab_protocol, game=game)
        return Engine(proto.stem, protocol=proto)
    if text.startswith(BUILTIN):
        path = _example(bundled(*game.examples.split("/")), text[len(BUILTIN) :], text)
        return Engine(path.stem, path)
    path = Path(text)
    if not path.is_file():
        raise GraderError(f"engine '{text}' not found: give the path of a script file, builtin:NAME or nboard:COMMAND")
    return Engine(path.stem, path)


def _given_name(text: str) -> tuple[str | None, str]:
    """The name given in an engine's text, as cutechess's ``name=`` ('nboard:name=v1:./engine',
    'script:name=v2:lab.py'), and the text without it; (None, text) when none is given."""
    kind, _, rest = text.partition(":")
    if not rest.startswith("name=") or kind not in {*available_protocols(), SCRIPTS}:
        return None, text
    name, colon, command = rest[len("name=") :].partition(":")
    if not colon or not name.strip() or not command:
        raise GraderError(f"engine '{text[:60]}': give a name and a command, as {kind}:name=NAME:COMMAND")
    return name.strip(), f"{kind}:{command}"


def configured_engines(config: Config) -> dict[str, Engine]:
    """The engines config.yaml names (``engines:``), by name; a working folder is relative to
    the config file's folder."""
    base = Path(config.source).parent if Path(config.source).is_file() else Path.cwd()
    out = {}
    for e in config.engines:
        cwd = (base / Path(e.workdir).expanduser()) if e.workdir else None
        try:
            out[e.name] = _configured(e.name, e.command, e.protocol, cwd, e.depth, base)
        except GraderError as err:
            raise GraderError(f"{config.source}: engine '{e.name}': {err}") from None
    return out


def _configured(name: str, command: str, protocol: str, cwd: Path | None, depth: int | None, base: Path) -> Engine:
    """One engine of config.yaml's ``engines:``: a script (``protocol: script``, ``command``
    its path) or a protocol engine."""
    if protocol != SCRIPTS:
        return Engine(name, protocol=ProtocolEngine.from_command(command, protocol, cwd, depth, here=base))
    get_protocol(protocol).check(depth)
    path = (cwd or base) / Path(command).expanduser()
    if not path.is_file():
        raise GraderError(f"script '{command}' not found in {(cwd or base).absolute()}: fix its path")
    return Engine(name, path.absolute())


def protocol_engine(command: str, protocol: str = "nboard", folder: str | Path | None = None, depth: int | None = None,
                    game: GameRules | None = None) -> ProtocolEngine:  # fmt: skip
    """A protocol engine from its command ('nboard:./edax -nboard', or 'builtin:nboard:NAME',
    an example engine behind the package's NBoard adapter), read now."""
    game = game or get_game(DEFAULT)
    if command.startswith(f"{BUILTIN}nboard:"):  # an example script behind the NBoard adapter
        script = _example(bundled(*game.examples.split("/")), command[len(BUILTIN + NBOARD) :], command)
        files = {"engine.py": bundled("nboard", "engine.py"), script.name: script}
        bundle = Script.of_files("engine.py", files, command)
        argv = (PYTHON, "{dir}/engine.py", "{dir}/" + script.name)
        return ProtocolEngine.made(argv, protocol, bundle, depth, command)
    if command.startswith(f"{BUILTIN}{protocol}:"):  # an example program that speaks the protocol itself
        script = _example(bundled(*game.examples.split("/")), command[len(f"{BUILTIN}{protocol}:") :], command)
        return ProtocolEngine.from_command(shlex.join([PYTHON, str(script)]), protocol, depth=depth)
    if command.startswith(f"{protocol}:"):
        command = command[len(protocol) + 1 :]
    return ProtocolEngine.from_command(command, protocol, folder, depth)


def _example(examples: Path, name: str, text: str) -> Path:
    path = examples / (name + ".py")
    if not path.is_file():
        known = ", ".join(sorted(f.stem for f in examples.glob("*.py")))
        raise GraderError(f"no bundled engine '{text}': use one of {known} after '{BUILTIN}' (or '{BUILTIN}{NBOARD}')")
    return path


def _protocol_name(e: Engine) -> Engine:
    return dataclass_replace(e, name=f"{e.protocol.protocol}:{e.name}") if e.protocol is not None else e


def _folder_name(e: Engine) -> Engine:
    return Engine(f"{e.path.parent.name}/{e.path.stem}", e.path) if e.path is not None else e


def _check_protocol(name: str, protocol: str, game: GameRules) -> None:
    if not get_protocol(protocol).plays(game):
        playing = [p for p in available_protocols() if p != SCRIPTS and _plays(p, game)]
        speak = f"speak {' or '.join(playing)}, or are scripts" if playing else "are scripts"
        raise GraderError(f"engine '{name}' speaks {protocol}, which does not play {game.title}: its engines {speak}")


def _plays(protocol: str, game: GameRules) -> bool:
    """Whether engines of ``protocol`` play ``game`` (a plugin that cannot be loaded: no)."""
    try:
        return get_protocol(protocol).plays(game)
    except GraderError:
        return False


def _check_openings(players: list[Engine], openings: list[str], game: GameRules) -> None:
    """An engine whose protocol tells it a game only from the start (GTP in Othello) cannot
    start from an opening given as a position."""
    for e in players:
        kind = get_protocol(e.protocol.protocol) if e.protocol is not None else None
        if kind and not kind.sets_up(game) and any(" " in o.strip() for o in openings):  # 'BOARD TOKEN': a position
            raise GraderError(f"engine '{e.name}' speaks {kind.title}, which can tell it a {game.title} game only from "
                              "the start: give openings as move sequences (f5d6c3), not positions")  # fmt: skip
