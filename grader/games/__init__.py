"""Games as plugins: everything that knows the rules of a game lives in its module here.

A game is a ``Game`` object found by name (``get_game('othello')``), as python-chess finds
its variants; a game with settings (``Game.options``) also by a spec of them
(``get_game('gomoku:size=9,overline=false')``), which is then its name. Built in: ``othello``, ``tictactoe`` and ``gomoku``. Another installed package adds one
through the ``grader.games`` entry point group (``toy = mypackage.toy:ToyGame``). Nothing
above this package asks which game it has: the runner, parser, judge, grading, run folders,
reports, tournaments and proofs all work through this interface.
"""

from __future__ import annotations

import importlib
from typing import Any

from ..errors import GraderError
from . import othello_native, othello_solver  # noqa: F401  (they give Othello its solvers; Gomoku imports its own when first asked)
from .base import BACKENDS, DEFAULT, HUGE, PASS, BoardEntry, Game, Position
from .cost import refuse_over
from .solving import Analysis, ExactSolver, LineCheck

__all__ = ["BACKENDS", "BUILTIN", "DEFAULT", "HUGE", "PASS", "Analysis", "BoardEntry", "ExactSolver", "Game", "LineCheck", "Position",
           "available", "base_name", "get_game", "hint_other_game", "parse_options", "solve"]  # fmt: skip


# --- the registry -------------------------------------------------------------------------

ENTRY_POINTS = "grader.games"


BUILTIN = {  # the games that come with the grader, each imported when first asked for by name
    "othello": "grader.games.othello:OTHELLO",
    "tictactoe": "grader.games.tictactoe:TICTACTOE",
    "gomoku": "grader.games.gomoku:GOMOKU",
}


def _plugins() -> list[Any]:
    """The ``grader.games`` entry points of the installed packages."""
    from importlib import metadata  # here: its import is a tenth of the grader's start

    return list(metadata.entry_points(group=ENTRY_POINTS))


def available() -> dict[str, str]:
    """Every game installed: name -> where it comes from."""
    out = {name: "built in" for name in BUILTIN}
    for ep in _plugins():
        out.setdefault(ep.name, ep.value)
    return out


_loaded: dict[str, Game] = {}


def get_game(name: str | Game) -> Game:
    """The game called ``name``: built in, or from an installed package's entry point. A
    variant is ``NAME:KEY=VALUE,...`` (``gomoku:size=9,overline=false``), the keys those of
    the game's ``options``; the variant's ``name`` is that spec with the defaults left out."""
    if isinstance(name, Game):
        return name
    base, _, spec = name.partition(":")
    if spec:
        if name not in _loaded:
            game = get_game(base)
            options = parse_options(name, game)
            try:
                _loaded[name] = game.variant(**options)
            except GraderError as e:
                raise GraderError(f"bad game {name!r}: {e}") from None
        return _loaded[name]
    if name not in _loaded:
        if name in BUILTIN:
            module, _, attribute = BUILTIN[name].partition(":")
            _loaded[name] = getattr(importlib.import_module(module), attribute)
        else:
            found = [ep for ep in _plugins() if ep.name == name]
            if not found:
                raise GraderError(f"unknown game {name!r}: installed games are {', '.join(sorted(available()))}")
            try:
                game = found[0].load()
                _loaded[name] = game() if isinstance(game, type) else game
            except Exception as e:  # a broken plugin is the user's to fix: say which and why
                raise GraderError(f"the game {name!r} ({found[0].value}) cannot be loaded: {e}") from None
    return _loaded[name]


def base_name(name: str) -> str:
    """The registered name of a game or variant: 'gomoku' for 'gomoku:size=9'."""
    return name.partition(":")[0]


_BOOLS = {"true": True, "false": False}


def parse_options(spec: str, game: Game) -> dict[str, Any]:
    """The settings of a variant spec ('gomoku:size=9,overline=false'), typed by ``game.options``;
    GraderError naming the bad part."""
    out: dict[str, Any] = {}
    if not game.options:
        raise GraderError(f"bad game {spec!r}: {game.name} is played one way only; give --game {game.name}")
    keys = ", ".join(game.options)
    for part in spec.partition(":")[2].split(","):
        key, eq, text = (s.strip() for s in part.partition("="))
        kind = game.options.get(key)
        if not eq or kind is None:
            raise GraderError(f"bad game {spec!r}: {part.strip()!r} is not KEY=VALUE with a key of {game.name} "
                              f"(its keys: {keys})")  # fmt: skip
        if kind is bool:
            if text.lower() not in _BOOLS:
                raise GraderError(f"bad game {spec!r}: {key} must be true or false, not {text!r}")
            out[key] = _BOOLS[text.lower()]
        else:
            if not (text.isascii() and text.isdigit()):
                raise GraderError(f"bad game {spec!r}: {key} must be a whole number, not {text!r}")
            out[key] = int(text)
    return out


def hint_other_game(text: str, game: Game) -> str:
    """' (it is a tictactoe board: use --game tictactoe)' when ``text`` ('BOARD TOKEN') is a
    board of another installed game, else ''."""
    for name in available():
        if name == base_name(game.name):
            continue
        try:
            other = get_game(name)
            if other.parse_board_line(text, "") is not None:
                return f" (it is a {name} board: use --game {name})"
        except GraderError:
            continue
    return ""


def solve(board: str | Position, token: str | None = None, scoring: str | None = None, game: str | Game = DEFAULT,
          all_values: bool = False, backend: str = "auto", max_seconds: float | None = None) -> Analysis:  # fmt: skip
    """Solve one position exactly: ``solve(BOARD, 'x')`` or ``solve(position)``, as ``grader
    solve`` does: with the ``backend`` solver (auto: the fastest built here), refused with a
    GraderError before it starts when estimated to take longer than ``max_seconds``."""
    if isinstance(board, str):
        g = get_game(game)
        try:
            pos = g.parse(board, token or "")
        except GraderError as e:
            raise GraderError(f"{e}{hint_other_game(f'{board} {token}', g)}") from None
    else:
        g, pos = board.game, board
    used = g.backend(backend)
    refuse_over([pos], g, used, max_seconds)
    return g.solver(g.scoring(scoring), backend=used).analyze(pos, all_values=all_values)
