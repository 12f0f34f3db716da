"""Test plans: the positions a grading run asks about, in test order; and board files."""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from .. import settings as layers
from ..config import SCHEMA, Config
from ..errors import BoardError, BoardFileError, ConfigError, GraderError, OptionError, PlanError
from ..files import read_lines
from ..games import DEFAULT, BoardEntry, Game, Position, get_game, hint_other_game
from ..limits import Limits
from ..runs.seeds import choose_seed, new_seed, plan_seed, seed_warning, spread_public
from ..version import __version__


@dataclass(frozen=True)
class Plan:
    """The positions of a grading run, in test order (all of one game), and what a plan file
    may fix besides: which tests students may see, the scoring rule, the limits."""

    positions: tuple[Position, ...]
    seed: int | None  # None for a plan read from a board file
    source: str  # in words, for the user
    public: frozenset[int] | None = None  # numbers (1-based) of the tests students may see; None: all
    kind: str = "full"  # 'public': a plan file handed to students (its public tests only)
    scoring: str | None = None  # the plan's rule, if it sets one
    limits: Limits | None = None  # the plan's limits, if it sets them
    empties: tuple[int, int] | None = None  # a speed plan's ladder of empties (first, last); None: not one

    @property
    def game(self) -> Game:
        return self.positions[0].game

    def is_public(self, index: int) -> bool:
        """May students see test ``index`` (1-based) in full?"""
        return self.public is None or index in self.public

    @property
    def has_private(self) -> bool:
        return self.public is not None and len(self.public) < len(self.positions)


def standard_plan(seed: int | None = None, game: str | Game = DEFAULT, name: str = "standard") -> Plan:
    """A game's named plan ('standard': the lab's 100 tests) from ``seed`` (None: a new one);
    a speed plan's ladder (``Game.ladders``) has ``SPEED_PER_LEVEL`` boards a level."""
    g = get_game(game)
    seed = new_seed() if seed is None else seed
    ladder = g.ladders.get(name)
    positions = tuple(_ladder(g, ladder, seed) if ladder else g.make_plan(name, seed))
    source = f"{name} plan, seed {seed}" if name == "standard" or ladder else f"{name} plan"
    return Plan(positions, seed, source, empties=ladder)


SPEED_PER_LEVEL = 5  # boards per number of empties of a speed plan


def speed_plan(empties: tuple[int, int], seed: int | None = None, game: str | Game = DEFAULT,
               per_level: int = SPEED_PER_LEVEL) -> Plan:  # fmt: skip
    """A speed plan: ``per_level`` random boards (from ``seed``) for each number of empties
    from ``empties[0]`` to ``empties[1]``, fewest first."""
    g = get_game(game)
    first, last = empties
    if not (first <= last and first in g.empties_allowed and last in g.empties_allowed):
        raise PlanError(f"cannot make a speed plan of {first}-{last} empties for {g.name}: "
                        f"use a range within {g.empties_allowed.start}-{g.empties_allowed.stop - 1}")  # fmt: skip
    seed = new_seed() if seed is None else seed
    positions = tuple(_ladder(g, empties, seed, per_level))
    return Plan(positions, seed, f"speed plan {first}-{last} empties, seed {seed}", empties=(first, last))


def _ladder(game: Game, empties: tuple[int, int], seed: int, per_level: int = SPEED_PER_LEVEL) -> list[Position]:
    """``per_level`` random boards for each number of empties of the ladder, fewest first."""
    return game.random_positions(seed, range(empties[0], empties[1] + 1), per_level)


def parse_empties(text: str) -> tuple[int, int]:
    """'11-16' -> (11, 16); '12' -> (12, 12); PlanError otherwise."""
    parts = str(text).replace(" ", "").split("-")
    if len(parts) not in (1, 2) or not all(x.isascii() and x.isdigit() for x in parts):
        raise PlanError(f"bad empties {text!r}: write a range like 11-16")
    first, last = int(parts[0]), int(parts[-1])
    if first > last:
        raise PlanError(f"bad empties {text!r}: the first number must not exceed the last")
    return first, last


def read_boards(path: str | Path, game: str | Game = DEFAULT) -> list[BoardEntry]:
    """Every position in a board file: one per line ('BOARD TOKEN', or another format the
    game reads), '#' comments and blank lines allowed."""
    g, p = get_game(game), Path(path)
    entries = []
    for i, line in enumerate(read_lines(p, "board file"), 1):
        text = "" if line.lstrip().startswith("#") else line.split("#", 1)[0].strip()
        if not text:
            continue
        try:
            entry = g.parse_board_line(text, f"{p}:{i}")
        except BoardError as e:
            raise BoardFileError(f"{p}:{i}: {e}{hint_other_game(text, g)}") from None
        if entry is not None:
            entries.append(entry)
    if not entries:
        raise BoardFileError(f"board file {str(p)!r} holds no boards: one 'BOARD TOKEN' per line")
    return entries


def load_plan(path: str | Path, game: str | Game = DEFAULT) -> Plan:
    """A plan of every position in a board file; each must have a legal move for its token."""
    entries = read_boards(path, game)
    for e in entries:
        if not e.position.moves():
            over = e.position.is_game_over()
            raise BoardFileError(
                f"{e.label}: {'the game is over on this board' if over else f'{e.position.token} has no legal move on this board'}; "
                "a test board needs a legal move for the side to move"
            )
    return Plan(tuple(e.position for e in entries), None, f"boards from {path}")


# --- plan files ------------------------------------------------------------------------------

PLAN_FORMAT = "grader-plan 1"
FULL, PUBLIC = "full", "public"


def write_plan_file(plan: Plan, path: str | Path, kind: str = FULL) -> None:
    """Write ``plan`` as a plan file: the full test set, or (``kind='public'``) its public
    tests only, with nothing that tells the private ones (no seed, no count, no numbers)."""
    if kind == PUBLIC and plan.kind == PUBLIC:
        raise GraderError("this plan is already a public plan")
    tests = list(enumerate(plan.positions, 1))
    if kind == PUBLIC:
        tests = [(i, p) for i, p in tests if plan.is_public(i)]
    header = [
        f"# A grader plan ({'public tests only: for students' if kind == PUBLIC else 'keep it private'}).",
        "# One test per line: 'BOARD TOKEN', then 'public' when students may see it.",
        f"format: {PLAN_FORMAT}",
        f"plan: {kind}",
        f"game: {plan.game.name}",
    ]
    if plan.scoring:
        header.append(f"scoring: {plan.scoring}")
    if plan.limits:
        header.append(
            "limits: {"
            + ", ".join(f"{k}: {v}" for k, v in dataclasses.asdict(plan.limits).items() if v is not None)
            + "}"
        )
    if plan.empties is not None:
        header.append(f"empties: {plan.empties[0]}-{plan.empties[1]}  # a speed plan: its ladder of empties")
    if kind == FULL:
        header.append(f"seed: {plan.seed if plan.seed is not None else 'null'}")
        header.append(f"source: {json.dumps(plan.source)}")
    lines = header + ["tests:"]
    for i, pos in tests:
        flag = " public" if kind == FULL and plan.public is not None and i in plan.public else ""
        lines.append(f"  - {pos.board_string()} {pos.token}{flag}")
    try:
        Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")
    except OSError as e:
        raise GraderError(f"cannot write {path!r}: {e.strerror}") from None


def read_plan_file(path: str | Path) -> Plan:
    """A plan file written by ``write_plan_file`` (and perhaps edited by hand): each mistake is
    a one-line PlanError naming the file and the line."""
    p = Path(path)
    lines = read_lines(p, "plan file")
    try:
        data = yaml.safe_load("\n".join(lines))
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        raise PlanError(
            f"{p}: not a plan file{f' (line {mark.line + 1})' if mark else ''}: {getattr(e, 'problem', e)}"
        ) from None
    if isinstance(data, dict) and data.get("format") != PLAN_FORMAT:
        newer = re.fullmatch(r"grader-plan (\d+)", str(data.get("format", "")).strip())
        if newer and int(newer[1]) > int(PLAN_FORMAT.split()[1]):
            raise PlanError(f"{p}: a plan file of format '{newer[0]}', newer than the '{PLAN_FORMAT}' this grader "
                            f"({__version__}) reads: a newer grader wrote it and reads it (pip install -U grader), or "
                            "make the plan again with this one ('grader plan new')")  # fmt: skip
    if not isinstance(data, dict) or data.get("format") != PLAN_FORMAT:
        raise PlanError(f"{p}: not a plan file (no 'format: {PLAN_FORMAT}' line): make one with 'grader plan new'")
    unknown = set(data) - {"format", "plan", "game", "scoring", "limits", "seed", "source", "tests", "empties"}
    if unknown:
        raise PlanError(f"{p}: unknown key {sorted(unknown)[0]!r}: a plan has format, plan, game, scoring, limits, seed, source, "
                        "empties, tests")  # fmt: skip
    kind = data.get("plan")
    if kind not in (FULL, PUBLIC):
        raise PlanError(f"{p}: 'plan' must be {FULL} or {PUBLIC}; got {kind!r}")
    try:
        game = get_game(str(data.get("game", DEFAULT)))
        scoring = game.scoring(data["scoring"]) if data.get("scoring") is not None else None
        limits = _plan_limits(data.get("limits"))
    except GraderError as e:
        raise PlanError(f"{p}: {e}") from None
    ladder = None
    if data.get("empties") is not None:
        try:
            ladder = parse_empties(data["empties"])
        except PlanError as e:
            raise PlanError(f"{p}: {e}") from None
        if data.get("tests") is None:  # a speed plan by its ladder: boards drawn from the seed
            seed = data.get("seed")
            if not isinstance(seed, int) or isinstance(seed, bool):
                raise PlanError(
                    f"{p}: a speed plan without its tests needs 'seed', a whole number (the boards come from it)"
                )
            try:
                made = speed_plan(ladder, seed, game)
            except PlanError as e:
                raise PlanError(f"{p}: {e}") from None
            return dataclasses.replace(made, source=str(data.get("source") or f"plan {p.name} ({made.source})"),
                                       scoring=scoring, limits=limits, kind=kind)  # fmt: skip
    tests = data.get("tests")
    if not isinstance(tests, list) or not tests:
        raise PlanError(f"{p}: no tests: list them under 'tests:', one '- BOARD TOKEN' per line")
    test_lines = [n for n, line in enumerate(lines, 1) if line.lstrip().startswith("- ")]
    positions, public = [], set()
    for i, entry in enumerate(tests, 1):
        where = f"{p}: test {i} (line {test_lines[i - 1] if i <= len(test_lines) else '?'})"
        fields = str(entry).split()
        if len(fields) not in (2, 3) or (len(fields) == 3 and fields[2] != "public"):
            raise PlanError(f"{where}: expected 'BOARD TOKEN' or 'BOARD TOKEN public', got {entry!r}")
        try:
            pos = game.parse(fields[0], fields[1])
        except GraderError as e:
            raise PlanError(f"{where}: {e}{hint_other_game(' '.join(fields[:2]), game)}") from None
        if not pos.moves():
            raise PlanError(f"{where}: the side to move has no legal move: a test board needs one")
        positions.append(pos)
        if kind == PUBLIC or len(fields) == 3:
            public.add(i)
    seed = data.get("seed")
    if seed is not None and (kind == PUBLIC or not isinstance(seed, int)):
        raise PlanError(f"{p}: 'seed' must be a whole number in a full plan, and absent from a public one")
    source = str(data.get("source") or f"plan {p.name}")
    return Plan(tuple(positions), seed, source, frozenset(public), kind, scoring, limits, ladder)


def _plan_limits(value: Any) -> Limits | None:
    if value is None:
        return None
    try:
        return SCHEMA["limits"]("limits", value)
    except (ValueError, ConfigError) as e:
        raise GraderError(str(e)) from None


def load_any_plan(name_or_path: str, game: str | Game = DEFAULT, seed: int | None = None) -> Plan:
    """A plan file (a path), or one of the game's named plans ('standard', ...)."""
    g = get_game(game)
    p = Path(name_or_path)
    if p.suffix == ".plan" or p.is_file():
        plan = read_plan_file(p)
        if plan.game.name != g.name:
            raise PlanError(f"{p} is a plan for {plan.game.name}, not {g.name}: give --game {plan.game.name}")
        return plan
    if name_or_path not in g.plans:
        raise PlanError(
            f"no plan file {name_or_path!r}, and {g.name} has no plan of that name: use one of {', '.join(g.plans)}, or a .plan file"
        )
    return standard_plan(seed, g, name_or_path)


@dataclass(frozen=True)
class _Rules:
    scoring: str | None = None
    limits: Limits = Limits()


def plan_rules(config: Config, game: Game, plan: Plan | None = None, time_limit: float | None = None,
               scoring: str | None = None) -> tuple[str, Limits]:  # fmt: skip
    """The scoring rule and limits of a run on ``plan`` (``grader.settings.resolve``): the
    options given (``time_limit``, ``scoring``) win, then the plan file's, then config.yaml's
    (its scoring only for its own game), then the game's default rule."""
    found = layers.resolve(_Rules, layers.given(time_limit=time_limit, scoring=scoring),
                           layers.plan_layer(plan.scoring if plan else None, plan.limits if plan else None),
                           layers.grading_layer(config, game))  # fmt: skip
    return game.scoring(found.scoring), found.limits


@dataclass(frozen=True)
class NewPlan:
    """What ``new_plan`` made: the plan, its tests that ship with the grader (public in any
    plan), and a warning for its maker (``seed_warning``), if one is due."""

    plan: Plan
    shipped: frozenset[int]
    warning: str | None = None


def new_plan(config: Config, game: str | Game = DEFAULT, *, seed: int | None = None, name: str | None = None,
             boards: str | Path | None = None, empties: str | None = None, public: int = 0,
             time_limit: float | None = None, scoring: str | None = None) -> NewPlan:  # fmt: skip
    """A full plan, as ``grader plan new`` writes it: the game's named plan ``name`` (default
    'standard') or a speed plan of ``empties`` ('11-16') drawn from ``plan_seed(seed, config)``,
    or the positions in the board file ``boards``; ``public`` random tests students may see,
    spread over the numbers of empties, besides those that ship with the grader; the scoring
    and limits of ``plan_rules``."""
    if boards is not None and name is not None:
        raise OptionError("give --plan or --boards, not both")
    if sum(x is not None for x in (name, boards, empties)) > 1:
        raise OptionError("give --empties, --plan or --boards, not two of them")
    g = get_game(game)
    if g.lab_protocol == "gtp":
        raise PlanError(f"{g.title} is graded over GTP with regression files: write them with 'grader plan regress'")
    drawn, chosen = plan_seed(seed, config)
    if empties is not None:
        plan = speed_plan(parse_empties(empties), drawn, g)
    elif boards is not None:
        plan = load_plan(boards, g)
    else:
        plan = load_any_plan(name or "standard", g, drawn)
    rule, limits = plan_rules(config, g, plan, time_limit, scoring)
    known = set(g.published(name or "standard")) if empties is None and boards is None else set()
    shipped = frozenset(i for i, p in enumerate(plan.positions, 1) if p in known)
    tests = spread_public(plan.positions, public, plan.seed if plan.seed is not None else str(boards), shipped)
    plan = dataclasses.replace(plan, public=tests, scoring=rule, limits=limits, kind=FULL)
    return NewPlan(plan, shipped, seed_warning(drawn, chosen and plan.seed is not None, plan.has_private))


def plan_for(game: Game, config: Config, plan_name: str | None = None, boards_file: str | Path | None = None,
             seed: int | None = None, graded: bool = False) -> Plan:  # fmt: skip
    """The plan a grading run asked for: a board file, a plan file, or a named plan of the game
    (its seed: ``seed``, else config.yaml's, else a new one). ``graded``: grades that count (a
    class, Gradescope) need the full plan, never its public half."""
    if boards_file and plan_name:
        raise OptionError("give --plan or --boards, not both")
    if boards_file:
        return load_plan(boards_file, game)
    plan = load_any_plan(plan_name or "standard", game, choose_seed(seed, config))
    if graded and plan.kind == PUBLIC:
        raise PlanError(
            f"{plan_name} is a public plan (the tests students may see): grade with the full plan it came from"
        )
    return plan
