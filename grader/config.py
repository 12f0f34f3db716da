"""config.yaml: the defaults a user edits, loaded and validated with errors that name the key."""

from __future__ import annotations

import dataclasses
import difflib
import math
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import yaml

from .engines import available_protocols
from .engines.fairness import FAIR_CPU
from .engines.isolation import ISOLATIONS
from .errors import ConfigError, GraderError
from .games import BACKENDS, BUILTIN, DEFAULT, Game, available, base_name, get_game, parse_options
from .limits import NOT_GIVEN, Limits

DEFAULT_PATH = Path("config.yaml")


@dataclass(frozen=True)
class TournamentDefaults:
    """Defaults of 'grader tournament'."""

    move_seconds: float = 5.0  # per move
    scoring: str | None = None  # None: the game's tournament rule
    on_illegal: str = "forfeit"  # forfeit | random
    # --grade: (share of the pieces in percent, points out of 100), share ascending: an engine gets the
    # points of the highest share it reaches, 0 below the first.
    grade: tuple[tuple[float, float], ...] = ((20, 20), (30, 40), (40, 60), (50, 80), (60, 100))
    tc: tuple[float, float] | None = None  # a game clock: (seconds, increment per move); None: move_seconds per move
    time_margin: float = 0.1  # seconds an engine may overstep its clock before its flag falls
    clock: str = "wall"  # what the clock counts: wall | cpu (the CPU seconds of all the engine's processes)


COUNTS = ("all", "solve-genmove")  # the tests a regression total counts (those not expected to fail)


@dataclass(frozen=True)
class RegressDefaults:
    """Defaults of 'grader regress' (GTP regression files)."""

    unknown_credit: float = 0.0  # the credit of a 'solve' answered 'unknown' (the course decides)
    margin: float = 0.5  # seconds beyond the program's timelimit each command may take
    per_test: bool = False  # a fresh program for every test (else one per file)
    unverified_credit: float = 0.0  # a result where the file expects unknown that the solver cannot settle
    count: str = "all"  # the tests a total counts: all, or solve-genmove (a 'timelimit' test answered with text)
    solve_seconds: float = 30.0  # the solver's budget for one position, in regress and plan regress alike
    max_timelimit: int = 60  # the most a file's 'timelimit' may give a test: a larger one is capped, with a warning


@dataclass(frozen=True)
class GomokuDefaults:
    """Gomoku's rules wherever it is played: the board tournaments start on and random
    positions are drawn on (any size from 5 to 19 parses), and whether a line of six or more wins."""

    size: int = 7
    overline: bool = True  # True: five or more in a row wins (the course); False: exactly five (standard Gomoku)


@dataclass(frozen=True)
class EngineEntry:
    """A named engine of config.yaml's ``engines:`` list (a protocol engine, as cutechess's
    -engine, or a script: ``protocol: script``)."""

    name: str
    command: str  # './edax -nboard', run in ``workdir``; a script's path with ``protocol: script``
    protocol: str = "nboard"
    workdir: str | None = None  # relative to the config file's folder; None: the folder of the command's file
    depth: int | None = None  # NBoard 'set depth N' (a GTP engine's level is in its command)


@dataclass(frozen=True)
class ClusterConfig:
    """Where tests run: a Dask scheduler's address (or local:N), and its TLS certificates."""

    address: str | None = None  # tcp://HOST:8786, tls://HOST:8786, local:N; None: this machine
    ca_file: str | None = None  # TLS: the certificate authority that signed the cluster's certificates
    cert: str | None = None  # TLS: this client's certificate
    key: str | None = None  # TLS: this client's private key
    connect_seconds: float = 10.0  # how long connecting to a scheduler may take before it is given up


@dataclass(frozen=True)
class Config:
    """Validated settings; every field has a default, so an empty file is a valid config."""

    game: str = DEFAULT
    scoring: str | None = None  # None: the game's lab rule
    limits: Limits = NOT_GIVEN  # per test: wall and CPU seconds, memory, processes, output
    isolation: str = "auto"  # auto | bwrap | unshare | uid | none
    fair_cpu: str = "auto"  # auto | required: refuse a class or tournament without fair CPU (engines.fairness)
    jobs: int | None = None  # tests at once; None: the number of cores
    seed: int | None = None  # the standard plan's seed; None: a new one each run
    python: str | None = None  # interpreter for .py scripts; None: the one running the grader
    commands: dict[str, str] = field(default_factory=dict)  # suffix -> '... {board} {token}'
    entry: str | None = None  # the script to run in a student folder holding several
    tournament: TournamentDefaults = TournamentDefaults()
    regress: RegressDefaults = RegressDefaults()
    gomoku: GomokuDefaults = GomokuDefaults()
    backend: str = "auto"  # the exact solver: auto (native if built) | native | python
    max_solve_seconds: float | None = 60.0  # a plan whose boards would take longer to solve is refused
    cluster: ClusterConfig = ClusterConfig()
    engines: tuple[EngineEntry, ...] = ()  # named engines for 'grader tournament NAME ...'
    source: str = "built-in defaults"  # the file the values came from

    def get_game(self, name: str | Game | None = None) -> Game:
        """The game ``name`` names (None: ``game``): a name or variant spec ('gomoku:size=9'), its
        settings left out of the name taken from this config's section of the game (``gomoku:``)."""
        if isinstance(name, Game):
            return name
        spec = name or self.game
        game = get_game(spec)
        section = getattr(self, base_name(spec), None) if base_name(spec) in GAME_SECTIONS else None
        if section is None:
            return game
        given = set(parse_options(spec, game)) if ":" in spec else set()
        wanted = {k: v for k, v in dataclasses.asdict(section).items() if k not in given}
        return game.variant(**wanted)


Validator = Callable[[str, Any], Any]


def _choice(*allowed: str) -> Validator:
    def check(key: str, value: Any) -> str:
        if not isinstance(value, str) or value not in allowed:
            raise ValueError(f"'{key}' must be one of {', '.join(allowed)}; got {_said(value)}")
        return value

    return check


def _said(value: Any) -> str:
    """A value as the YAML file writes it (null, true, [1, 2]), not as Python does (None, True)."""
    if isinstance(value, str):
        return repr(value)
    text = yaml.safe_dump(value, default_flow_style=True, width=1 << 20).strip()
    return text.removesuffix("...").strip()


def _number(minimum: float, integer: bool = False, optional: bool = False, maximum: float | None = None) -> Validator:
    kind = "a whole number" if integer else "a number"
    null = " or null" if optional else ""

    def check(key: str, value: Any) -> Any:
        if value is None and optional:
            return None
        if value is None:
            raise ValueError(f"'{key}' must be {kind}; got null, but it cannot be turned off")
        ok_type = isinstance(value, int) if integer else isinstance(value, (int, float))
        if not ok_type or isinstance(value, bool) or not math.isfinite(value):
            raise ValueError(f"'{key}' must be {kind}{null}; got {_said(value)}")
        if value < minimum or (not integer and minimum == 0 and value == 0):
            limit = f"at least {minimum}" if integer else "greater than 0"
            raise ValueError(f"'{key}' must be {limit}; got {_said(value)}")
        if maximum is not None and value > maximum:
            most = int(maximum) if integer else f"{maximum:g}"
            raise ValueError(f"'{key}' must be at most {most}; got {_said(value)}")
        return value

    return check


def _between(low: float, high: float) -> Validator:
    """A number from ``low`` to ``high``, both included."""

    def check(key: str, value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
            raise ValueError(f"'{key}' must be a number from {low:g} to {high:g}; got {_said(value)}")
        return float(value)

    return check


def _bool(key: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"'{key}' must be true or false; got {_said(value)}")
    return value


def _section(cls: type, schema: dict[str, Validator]) -> Validator:
    """A nested mapping of known keys, made into ``cls``."""

    def check(key: str, value: Any) -> Any:
        if value is None:
            return cls()
        if not isinstance(value, dict):
            raise ValueError(f"'{key}' must be a mapping with keys {', '.join(schema)}; got {_said(value)}")
        return cls(**_validate(value, schema, prefix=f"{key}."))

    return check


def _grade_thresholds(key: str, value: Any) -> tuple[tuple[float, float], ...]:
    """[[share, points], ...]: shares in percent (0-100) rising, points 0-100."""
    shape = f"'{key}' must be a list of [share in percent, points] pairs with rising shares, like [[30, 50], [50, 100]]"
    if not isinstance(value, list) or not value:
        raise ValueError(f"{shape}; got {_said(value)}")
    out = []
    for item in value:
        if (not isinstance(item, list) or len(item) != 2
                or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v <= 100 for v in item)):  # fmt: skip
            raise ValueError(f"{shape} (each number 0 to 100); got {_said(item)}")
        out.append((float(item[0]), float(item[1])))
    if any(a[0] >= b[0] for a, b in zip(out, out[1:])):
        raise ValueError(f"{shape}; the shares do not rise: {_said(value)}")
    return tuple(out)


TIME_CONTROL = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(?:\+\s*(\d+(?:\.\d+)?))?\s*$")
CLOCKS = ("wall", "cpu")  # what a game clock counts


def parse_tc(text: str) -> tuple[float, float]:
    """'60+0.5' (cutechess's notation: seconds, then the increment per move) or '60'; ValueError if neither."""
    found = TIME_CONTROL.match(str(text))
    if not found or not 0 < float(found.group(1)) <= 86400 or float(found.group(2) or 0) > 3600:
        raise ValueError(
            f"a time control is SECONDS[+INCREMENT], like 60+0.5 (at most a day, increment at most an hour); got {text!r}"
        )
    return float(found.group(1)), float(found.group(2) or 0)


def parse_clock(text: str) -> tuple[tuple[float, float], str | None]:
    """'cpu:60+0.5' (a clock on CPU time), 'wall:60+0.5' or '60+0.5' (the clock of config,
    None): the time control and the clock; ValueError if neither."""
    kind, colon, rest = str(text).partition(":")
    if not colon:
        return parse_tc(text), None
    if kind.strip().lower() not in CLOCKS:
        raise ValueError(f"a clock is {' or '.join(CLOCKS)}, as in cpu:60+0.5; got {kind!r}")
    return parse_tc(rest), kind.strip().lower()


def _tc(key: str, value: Any) -> tuple[float, float] | None:
    if value is None:
        return None
    try:
        return parse_tc(str(value))
    except ValueError as e:
        raise ValueError(f"'{key}': {e}") from None


def _engines(key: str, value: Any) -> tuple[EngineEntry, ...]:
    """A list of {name, command, protocol, workdir, depth}, names unique."""
    shape = (
        f"'{key}' must be a list of engines like - {{name: edax, command: ./edax -nboard, workdir: ~/edax, depth: 10}}"
    )
    if value is None:
        return ()
    if not isinstance(value, list):
        raise ValueError(f"{shape}; got {_said(value)}")
    schema: dict[str, Validator] = {
        "name": _optional_string, "command": _optional_string, "protocol": _protocol,
        "workdir": _optional_string, "depth": _number(0, integer=True, optional=True),
    }  # fmt: skip
    out: list[EngineEntry] = []
    for i, item in enumerate(value):
        if not isinstance(item, dict):
            raise ValueError(f"{shape}; item {i + 1} is {item!r}")
        fields = _validate(item, schema, prefix=f"{key}[{i + 1}].")
        if not fields.get("name") or not fields.get("command"):
            raise ValueError(f"'{key}[{i + 1}]' needs a name and a command")
        if any(e.name == fields["name"] for e in out):
            raise ValueError(f"'{key}' names '{fields['name']}' twice: give each engine its own name")
        out.append(EngineEntry(**fields))
    return tuple(out)


def _protocol(key: str, value: Any) -> str:
    """The name of an installed engine protocol (built in, or a plugin's)."""
    return _choice(*available_protocols())(key, value)


def _optional_string(key: str, value: Any) -> str | None:
    if value is None or (isinstance(value, str) and value.strip()):
        return value
    raise ValueError(f"'{key}' must be a non-empty string or null; got {_said(value)}")


LOCAL = "local:"  # a cluster address of N worker processes on this machine: local:N
ADDRESS = re.compile(r"^(tcp|tls)://(\[[0-9a-fA-F:]+\]|[A-Za-z0-9._-]+):(\d{1,5})$")


def check_address(address: str) -> str:
    """``address`` if it is tcp://HOST:PORT, tls://HOST:PORT or local:N; else GraderError."""
    text = address.strip()
    if text.startswith(LOCAL):
        n = text[len(LOCAL) :]
        if n.isascii() and n.isdigit() and 1 <= int(n) <= 512:
            return text
        raise GraderError(
            f"bad cluster address {address!r}: local:N needs a number of workers from 1 to 512, like local:2"
        )
    m = ADDRESS.match(text)
    if not m or not 0 < int(m.group(3)) < 65536:
        raise GraderError(f"bad cluster address {address!r}: give tcp://HOST:8786, tls://HOST:8786 or local:N")
    return text


def _address(key: str, value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"'{key}' must be an address like tcp://HOST:8786, or null; got {_said(value)}")
    try:
        return check_address(value)
    except GraderError as e:
        raise ValueError(f"'{key}': {e}") from None


def _commands(key: str, value: Any) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValueError(
            f"'{key}' must map a file suffix to a command, like '.java': 'java -cp {{dir}} {{stem}} {{board}} {{token}}'"
        )
    out = {}
    for suffix, template in value.items():
        if not isinstance(suffix, str) or not suffix.startswith("."):
            raise ValueError(f"'{key}': {suffix!r} is not a file suffix: write it like '.java'")
        if not isinstance(template, str) or "{board}" not in template or "{token}" not in template:
            raise ValueError(f"'{key}.{suffix}' must be a command holding {{board}} and {{token}}; got {template!r}")
        try:
            for part in shlex.split(template):
                part.format(board="", token="", script="", dir="", stem="")
        except (ValueError, KeyError, IndexError) as e:
            raise ValueError(
                f"'{key}.{suffix}': cannot use {template!r} ({e}): the placeholders are "
                "{board}, {token}, {script}, {dir} and {stem}; quotes must be closed"
            ) from None
        out[suffix.lower()] = template
    return out


GAME_SECTIONS = ("gomoku",)  # games with a section of settings (the keys of their ``options``)


def _game(key: str, value: Any) -> str:
    """A game's name, or a variant's spec ('gomoku:size=9')."""
    if not (isinstance(value, str) and base_name(value) in BUILTIN):  # a plugin's name: ask the installed packages
        _choice(*sorted(available()))(key, base_name(value) if isinstance(value, str) else value)
    try:
        get_game(value)
    except GraderError as e:
        raise ValueError(f"'{key}': {e}") from None
    return value


# key -> validator returning the converted value
SCHEMA: dict[str, Validator] = {
    "game": _game,
    "scoring": lambda key, value: value,  # checked against the game's rules below
    "limits": _section(
        Limits,
        {
            "wall_seconds": _number(0, maximum=86400),
            "cpu_seconds": _number(0, optional=True, maximum=86400),
            "memory_mb": _number(16, integer=True, optional=True, maximum=2**24),  # 16 TiB; null: no limit
            "processes": _number(1, integer=True, optional=True, maximum=2**22),  # Linux's most pids
            "output_bytes": _number(1024, integer=True, optional=True, maximum=2**50),
        },
    ),
    "isolation": _choice(*ISOLATIONS),
    "fair_cpu": _choice(*FAIR_CPU),
    "jobs": _number(1, integer=True, optional=True),
    "seed": _number(0, integer=True, optional=True),
    "python": _optional_string,
    "commands": _commands,
    "entry": _optional_string,
    "tournament": _section(
        TournamentDefaults,
        {
            "move_seconds": _number(0, maximum=86400),
            "scoring": lambda key, value: value,
            "on_illegal": _choice("forfeit", "random"),
            "grade": _grade_thresholds,
            "tc": _tc,
            "time_margin": _number(0, maximum=60),
            "clock": _choice(*CLOCKS),
        },
    ),
    "regress": _section(
        RegressDefaults,
        {
            "unknown_credit": _between(0, 1),
            "margin": _between(0, 60),
            "per_test": _bool,
            "unverified_credit": _between(0, 1),
            "count": _choice(*COUNTS),
            "solve_seconds": _number(0.1, maximum=86400),
            "max_timelimit": _number(1, integer=True, maximum=86400),
        },  # fmt: skip
    ),
    "gomoku": _section(GomokuDefaults, {"size": _number(5, integer=True, maximum=19), "overline": _bool}),
    "backend": _choice(*BACKENDS),
    "max_solve_seconds": _number(0, optional=True, maximum=10**7),
    "engines": _engines,
    "cluster": _section(
        ClusterConfig,
        {
            "address": _address,
            "ca_file": _optional_string,
            "cert": _optional_string,
            "key": _optional_string,
            "connect_seconds": _number(0, maximum=3600),
        },
    ),
}


def parse_config(data: Any, source: str) -> Config:
    """Validate the parsed YAML of a config file."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: expected 'key: value' lines at the top level, got {type(data).__name__}")
    try:
        config = Config(**_validate(data, SCHEMA), source=source)
        game = get_game(config.game)
        for key, rule in (("scoring", config.scoring), ("tournament.scoring", config.tournament.scoring)):
            if rule is not None and rule not in game.scorings:
                raise ValueError(
                    f"'{key}' must be one of {', '.join(game.scorings)} (for {game.name}), or null; got {rule!r}"
                )
        return config
    except ValueError as e:
        raise ConfigError(f"{source}: {e}") from None


def _validate(data: dict, schema: dict[str, Validator], prefix: str = "") -> dict[str, Any]:
    values: dict[str, Any] = {}
    for key, value in data.items():
        if key not in schema:
            close = difflib.get_close_matches(str(key), schema, n=1)
            hint = f" (did you mean '{prefix}{close[0]}'?)" if close else ""
            raise ValueError(f"unknown key '{prefix}{key}'{hint}; known keys: {', '.join(prefix + k for k in schema)}")
        values[key] = schema[key](prefix + key, value)
    return values


def load_config(path: str | Path | None = None) -> Config:
    """Load ``path``; without one, ./config.yaml if present, else the built-in defaults."""
    if path is None:
        if not DEFAULT_PATH.is_file():
            return Config()
        path = DEFAULT_PATH
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"config file '{p}' not found: check the path given to --config") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"cannot read config file '{p}': {e}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(e, "problem", None) or "cannot parse"
        raise ConfigError(f"{p}: not valid YAML{where}: {problem}") from None
    return parse_config(data, str(p))
