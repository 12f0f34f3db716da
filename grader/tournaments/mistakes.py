"""The setup mistakes behind a forfeit, and their fixes: an engine that is not executable,
one given with the wrong protocol, one written for another game.

Asked when an engine forfeits other than on time (in Gomoku an Othello script's move may
be legal by chance, so a forfeit later in the game asks too); each question is answered once per worker and engine, by running
the engine's own files as the grader runs them, never by guessing from its output.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
from pathlib import Path

from ..engines.programs import ProtocolEngine
from ..engines.scripts import RunSettings, Script, run_script
from ..execution.executor import Worker
from ..games import Game, available, base_name, get_game

PROBES = 3  # positions of a game an engine is tried on
PROBE_SECONDS = 3.0  # the most each probe may take (a script that plays the game answers at once)
_TITLES = {"nboard": "NBoard", "gtp": "GTP"}


def setup_fix(engine: Script | ProtocolEngine, game: Game, settings: RunSettings, worker: Worker) -> str | None:
    """What to change when ``engine`` forfeited a game of ``game``, if the cause is a setup
    mistake; None if it is not one of those."""
    key = ("setup fix", engine.digest, game.name)
    return worker.cached(key, lambda: _fix(engine, game, settings, worker))  # type: ignore[no-any-return]


def _fix(engine: Script | ProtocolEngine, game: Game, settings: RunSettings, worker: Worker) -> str | None:
    quick = dataclasses.replace(
        settings,
        limits=dataclasses.replace(settings.limits, wall_seconds=min(settings.limits.wall_seconds, PROBE_SECONDS)),
    )
    if isinstance(engine, ProtocolEngine):
        program = engine.program()
        if program and Path(program).is_file() and not os.access(program, os.X_OK):
            return (f"'{program}' is not executable: make it executable (chmod +x '{program}'), "
                    f"or start it through its interpreter in the command")  # fmt: skip
        if engine.bundle is not None and _plays(engine.bundle, game, quick, worker, optimal=False):
            return (f"it plays as a script ('SCRIPT BOARD TOKEN', a run per move), not as an "
                    f"{_TITLES.get(engine.protocol, engine.protocol)} engine: give it without '{engine.protocol}:'")  # fmt: skip
        return None
    if _plays(engine, game, quick, worker, optimal=False):
        return None  # it plays this game: not a mistake of the setup
    for name in sorted(available()):
        other = get_game(name)
        if other.name != base_name(game.name) and _plays(engine, other, quick, worker):
            return (f"it plays {other.title}, not {game.title}: is it written for {other.title}? "
                    f"Give it to a tournament with --game {other.name}")  # fmt: skip
    return None


def _plays(script: Script, game: Game, settings: RunSettings, worker: Worker, optimal: bool = True) -> bool:
    """Whether ``script`` prints a legal move (``optimal``: an optimal one, as ``grade`` asks
    before it names another game) on each of a few positions of ``game`` where not every
    legal move is optimal."""
    solver = game.solver(game.scoring(None), backend=settings.backend)
    telling = (p for p in game.make_plan("standard", 0) if len(solver.optimal_moves(p)) < len(p.moves()))
    for pos in itertools.islice(telling, PROBES):
        result, claim = run_script(script, pos, settings, worker)
        good = solver.optimal_moves(pos) if optimal else pos.moves()
        if result.crashed or result.interrupted or claim.move is None or claim.move not in good:
            return False
    return True
