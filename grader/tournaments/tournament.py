"""Tournaments between engines (round-robin, gauntlet, Swiss, SPRT), with clocks, game
records and resume.

A script engine is run as 'SCRIPT BOARD TOKEN' for every move, through the same runner as
grading; its move is the last integer it printed (at a per-move time limit: the last one
printed before the kill). A protocol engine (NBoard) runs for the whole game in the same
isolation (``grader.engines.sessions``). Passes are applied by the harness. Every pair of
engines plays game pairs from the same opening with colours swapped; x is black and moves first.
"""

from __future__ import annotations

import shutil
import warnings
from dataclasses import replace as dataclass_replace
from pathlib import Path
from typing import Callable, Sequence

from ..config import Config
from ..engines.programs import ProtocolEngine
from ..engines.protocol import EnginePool
from ..engines.scripts import Script
from ..errors import GraderError, GraderWarning
from ..execution.executor import Executor, LocalExecutor, interrupt_reason, using
from ..games import DEFAULT, get_game
from ..runs.seeds import new_seed
from ..stop import Stop
from . import ratings
from .engines import Engine, _check_openings, engine_list
from .folder import TournamentFolder, default_folder
from .formats import Format, Planner, SprtPlanner, SprtSettings, SwissPlanner
from .games import _POOLS, GameRecord, GameTask
from .openings import OPENING_PLIES, random_openings
from .outputs import write_outputs
from .results import TournamentResult
from .settings import TournamentSettings, _capped


def run_tournament(
    engines: Sequence[str | Path | Engine] = (),
    *,
    settings: TournamentSettings | None = None,
    rounds: int = 1,
    format: str | Format = "round-robin",
    opponents: Sequence[str | Path | Engine] = (),
    sprt: SprtSettings | None = None,
    openings: list[str] | None = None,
    opening_plies: int | None = None,
    seed: int | None = None,
    out: str | Path | None = None,
    resume: str | Path | None = None,
    jobs: int | None = None,
    private: Sequence[str | Path] = (),
    on_start: Callable[[TournamentFolder, TournamentSettings, int], None] | None = None,
    on_game: Callable[[GameRecord], None] | None = None,
    executor: Executor | None = None,
    stop: Stop | None = None,
) -> TournamentResult:
    """A tournament between ``engines`` (script paths, 'builtin:NAME', or Engines), played
    in a tournament folder that records each game as it ends. Without ``settings``, those of
    the command with no options and no config.yaml (``TournamentSettings.resolve(Config(), ...)``:
    5 s a move, Othello).

    ``format``: 'round-robin' (every pair, ``rounds`` openings), 'gauntlet' (each engine
    against each of ``opponents`` only), 'swiss' (``rounds`` Swiss rounds) or 'sprt' (two
    engines until the ``sprt`` test decides or its game limit). Openings: the given move
    sequences, else random legal openings of ``opening_plies`` moves (None: ``OPENING_PLIES``) from ``seed``.
    ``resume`` continues a folder with its own engines, format, openings and settings (``jobs``
    may change), playing only the games not recorded and those of an engine whose script
    changed. Before any game, the isolation is checked as for a class (``private``: more
    files the engines must not read). ``on_start(folder, settings, games played before)`` is
    called once the folder is ready, ``on_game`` with each game as it ends. Ctrl-C (or
    ``stop`` set: the run's switch when it makes its own executor) keeps the games that ended
    (``interrupted`` set). The folder gets games.txt, results.json,
    report.html and, for Othello, games.ggf; for Gomoku, psq/ (a PSQ file a game).
    """
    if resume is not None:
        folder = TournamentFolder.open(resume)
        players, settings = folder.engines(), folder.settings(jobs)
        fmt, openings = folder.format(), folder.openings()
        for e in players:
            if e.protocol is None and not Path(e.path or "").is_file():
                raise GraderError(f"the script of engine '{e.name}' ({e.path}) is gone: restore it to resume")
            program = e.protocol.program() if e.protocol is not None else None
            if program and not Path(program).is_file() and shutil.which(program) is None:
                raise GraderError(f"the program of engine '{e.name}' ({program}) is gone: restore it to resume")
        settings.sandbox_mechanism([folder.path, *(p for e in players for p in e.paths), *map(Path, private)])
    else:
        settings = _capped(settings or TournamentSettings.resolve(Config(), get_game(DEFAULT)))
        fmt = format if isinstance(format, Format) else Format(format, rounds, (), sprt)
        players = engine_list([*engines, *opponents], settings.rules)
        if opponents:  # a gauntlet's reference engines (any other format refuses them)
            fmt = dataclass_replace(fmt, opponents=tuple(e.name for e in players[len(players) - len(opponents) :]))
        fmt.check([e.name for e in players])
        if jobs:
            settings = dataclass_replace(settings, jobs=jobs)
        seed = new_seed() if seed is None else seed
        opening_plies = OPENING_PLIES if opening_plies is None else opening_plies
        openings = openings or random_openings(settings.rules, seed, opening_plies, fmt.openings_needed())
        if not openings:
            raise GraderError(f"no random opening of {opening_plies} moves: every {settings.rules.title} game "
                              "tried ended sooner; give fewer --random-openings")  # fmt: skip
        _check_openings(players, openings, settings.rules)
        static = fmt.kind in ("round-robin", "gauntlet")
        fixed = fmt.planner([e.name for e in players], openings, GameRecord).more(0) if static else []
        settings.check()  # a missing Python, or none, said as itself (not as isolation that fails under it)
        settings.sandbox_mechanism([*(p for e in players for p in e.paths), *map(Path, private)])
        folder = TournamentFolder.create(out or default_folder(), players, fixed, settings, seed, fmt, openings)
    names = [e.name for e in players]
    planner = fmt.planner(names, openings, GameRecord)
    if isinstance(planner, SprtPlanner):
        planner.window = max(1, settings.jobs)
    specs = {e.name: e.spec() for e in players}
    for spec in specs.values():
        if isinstance(spec, Script):
            spec.command(settings)  # an engine the grader cannot run stops us before any game
        elif executor is not None and not isinstance(executor, LocalExecutor):
            raise GraderError("protocol engines run on this machine only: leave out --cluster, or give scripts")
    settings.check()
    done = folder.finished({name: s.digest for name, s in specs.items()}) if resume is not None else {}
    if folder.tampering():
        warnings.warn(folder.tampering() or "", GraderWarning, stacklevel=2)  # those games are played again
    if resume is not None and folder.changed_engines():
        warnings.warn(folder.changed_engines() or "", GraderWarning, stacklevel=2)
    if on_start:
        on_start(folder, settings, len(done))
    played: dict[str, GameRecord] = {}
    pool = None if settings.restart or all(e.protocol is None for e in players) else f"{folder.path}:{id(specs)}"
    if pool:
        _POOLS[pool] = EnginePool()
    try:
        interrupted = _play(folder, planner, done, played, specs, settings, on_game, executor, stop, pool)
    finally:
        if pool:
            _POOLS.pop(pool).close()
    if isinstance(planner, SwissPlanner):
        planner.finish()
    games = list(played.values())
    result = TournamentResult(
        folder, players, games, fmt.planned_games(len(players)), ratings.standings(games, names),
        ratings.crosstable(games, names), interrupted, fmt,
        swiss=planner.summary() if isinstance(planner, SwissPlanner) else None,
        sprt=planner.summary() if isinstance(planner, SprtPlanner) else None,
        stopped_early=planner.stopped_early,
    )  # fmt: skip
    if result.swiss is not None:  # the standings follow the Swiss ranking
        order = {s.engine: i for i, s in enumerate(result.swiss.standings)}
        result.standings.sort(key=lambda s: order[s.engine])
    write_outputs(result, settings)
    return result


def _play(folder: TournamentFolder, planner: Planner, done: dict[str, GameRecord], played: dict[str, GameRecord],
          specs: dict[str, Script | ProtocolEngine], settings: TournamentSettings, on_game: Callable[[GameRecord], None] | None,
          executor: Executor | None, stop: Stop | None, pool: str | None = None) -> str | None:  # fmt: skip
    """Play what the planner asks for until it asks for nothing more; returns why it was
    interrupted, if it was. Games already in ``done`` are not played again."""
    interrupted = None
    submitted: list[str] = []
    fed = isinstance(planner, SprtPlanner)
    if fed:  # the test counts pairs in the order they ended, as the first run did (games.jsonl's order)
        for game in done.values():
            planner.add(game)
        played.update((key, done[key]) for key in sorted(done, key=lambda k: (done[k].round, k)))
    with using(executor, settings.jobs, stop) as ex:

        def take(game: GameRecord) -> None:
            played[game.id] = game
            folder.append(game)
            planner.add(game)
            if on_game:
                on_game(game)

        try:
            while not ex.stop.is_set():  # a caller's stop, or a cluster's scheduler gone
                wanted = planner.more(ex.pending())
                for g in wanted:
                    if g.id in done:
                        played[g.id] = done[g.id]
                        if not fed:
                            planner.add(done[g.id])
                    else:
                        played[g.id] = None  # type: ignore[assignment]  # keeps the planned order
                        submitted.append(g.id)
                        ex.submit(g.id, GameTask(g, {g.black: specs[g.black], g.white: specs[g.white]}, settings, pool))
                if not ex.pending():
                    if wanted:
                        continue  # all were played before: ask again
                    break
                for _, game in ex.results():
                    take(game)
                    break
                if isinstance(planner, SprtPlanner) and planner.result.decision is not None:
                    ex.cancel(submitted)  # decided: start nothing more; games running end and are kept
        except KeyboardInterrupt as e:
            interrupted = interrupt_reason(e)
            ex.stop.set(interrupted)
            for _, game in ex.drain():  # games that ended while we were stopping
                take(game)
        if interrupted is None and ex.stop.is_set():  # stopped by a caller
            interrupted = ex.stop.reason or "interrupted"
    for key in [k for k, g in played.items() if g is None]:
        del played[key]
    return interrupted
