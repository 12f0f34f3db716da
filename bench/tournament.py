"""Tournament benchmark: games per second, and the harness's cost per move against a bare loop.

Run: python bench/tournament.py [--rounds 2] [--jobs 1] [--isolation auto] [--seed 1]
Plays a round-robin of two bundled engines (greedy, random_mover), then replays every engine
move of those games in a bare loop: the same engine processes started with subprocess.run,
one after another, in the environment the harness gives scripts, but no limits, no sandbox,
no records. The harness's cost per move is
(tournament wall x jobs - bare loop wall) / moves. fastchess's maintainers measured 4.4 ms a
move for fastchess and 11.2 ms for cutechess on identical games (UCI engines that stay up;
ours start a process per move, so the bare loop is the floor here).

Then the same moves again, each run bare and through the harness's script path in turn (a
ScriptPlayer's turn on an executor's job slot) under --isolation and under none: move by
move, the machine's load falls on both alike (a whole tournament against a whole bare loop
measured after it is at the mercy of a load that comes and goes); the tournament's own
bookkeeping per move is left out of these two.

Then the same with persistent NBoard engines (the bundled greedy and random_mover behind the
NBoard adapter, 'set depth 1'): a round-robin at --jobs 1 (each engine's process plays all
its games), and a bare loop that starts the same two adapter processes with
subprocess.Popen and drives them through the same moves (set game, move, ping, go) with no
sandbox, clock or records; the harness's cost per move is again (tournament wall - bare
loop wall) / moves, the tournament's one-time costs (the isolation check, report.html)
included. Then --games (default 100) games
between the two at --nboard-jobs (default 2), timed. Then the Swiss pairing time of 64
engines x 7 rounds (grader.tournaments.swiss, random results).
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from grader import Limits, LocalExecutor, TournamentSettings, run_tournament
from grader.engines.runner import script_env
from grader.engines.script_protocol import ScriptPlayer
from grader.engines.scripts import Script
from grader.files import bundled
from grader.games import PASS, get_game
from grader.games.ggf import game_in_progress
from grader.tournaments.engines import Engine, protocol_engine
from grader.tournaments.swiss import BYE_POINTS, NoPairing, pair_round, pairing_state

ROOT = Path(__file__).resolve().parents[1]


def bare_loop(result, python: str) -> tuple[float, int]:
    """Seconds to run every engine move of ``result``'s games as a bare subprocess, and moves."""
    game = get_game("othello")
    paths = {e.name: str(e.path) for e in result.engines}
    moves = 0
    work = tempfile.mkdtemp(prefix="bare-")
    env = script_env(work)  # the environment the harness gives scripts (no PYTHONPATH, no site tweaks)
    start = time.perf_counter()
    for g in result.games:
        pos, opening = game.opening_start(g.opening)
        pos = game.replay(opening, pos)
        for sq in game.parse_transcript(g.moves)[len(opening) :]:
            if pos.must_pass():
                pos = pos.pass_turn()
            script = paths[g.black if pos.token == "x" else g.white]
            subprocess.run(
                [python, script, pos.board_string(), pos.token], capture_output=True, check=False, env=env, cwd=work
            )
            moves += 1
            pos = pos.play(sq)
    return time.perf_counter() - start, moves


def moves_of(result):
    """(engine's path, position) of every engine move of ``result``'s games, in order."""
    game = get_game("othello")
    paths = {e.name: str(e.path) for e in result.engines}
    for g in result.games:
        pos, opening = game.opening_start(g.opening)
        pos = game.replay(opening, pos)
        for sq in game.parse_transcript(g.moves)[len(opening) :]:
            if pos.must_pass():
                pos = pos.pass_turn()
            yield paths[g.black if pos.token == "x" else g.white], pos
            pos = pos.play(sq)


def interleaved_script_path(result, python: str, isolation: str) -> tuple[float, float, int, float]:
    """Every engine move of ``result`` run twice in turn (the order turned each move): bare, as
    bare_loop runs it, and through the harness's script path (a ScriptPlayer's turn on a job
    slot of an executor, under ``isolation``): seconds of each in all, moves, and the median of
    the moves' differences (harness - bare; a load spike on one side of a move moves the mean,
    not the median). Move by move, a load that comes and goes on a shared machine falls on both
    alike; the tournament's own bookkeeping per move (clocks, records) is not in it."""
    work = tempfile.mkdtemp(prefix="bare-")
    env = script_env(work)
    settings = TournamentSettings(limits=Limits(wall_seconds=10), jobs=1, isolation=isolation)
    scripts: dict[str, Script] = {}
    bare = ours = 0.0
    moves = 0
    differences = []
    with LocalExecutor(1) as executor:
        for path, pos in moves_of(result):
            script = scripts.setdefault(path, Script.from_path(path))

            def turn(worker, script=script, pos=pos):
                player = worker.cached(("bench", script.digest), lambda: ScriptPlayer(script, settings, worker))
                return player.turn(pos, pos, [], 10.0)

            took = {}
            for side in ("bare", "harness") if moves % 2 == 0 else ("harness", "bare"):
                start = time.perf_counter()
                if side == "bare":
                    subprocess.run([python, path, pos.board_string(), pos.token], capture_output=True, check=False,
                                   env=env, cwd=work)  # fmt: skip
                else:
                    executor.submit(moves, turn)
                    for _ in executor.results():
                        pass
                took[side] = time.perf_counter() - start
            bare += took["bare"]
            ours += took["harness"]
            differences.append(took["harness"] - took["bare"])
            moves += 1
    return bare, ours, moves, statistics.median(differences)


def bare_nboard_loop(result, python: str) -> tuple[float, int]:
    """Seconds to drive every engine move of ``result``'s games through plain NBoard
    processes, one per engine kept up across games as the harness keeps them (no sandbox, no
    clock, no records), and moves."""
    game = get_game("othello")
    env = script_env(tempfile.mkdtemp(prefix="bare-"))
    moves, start, procs = 0, time.perf_counter(), {}
    for e in result.engines:
        procs[e.name] = subprocess.Popen([python, str(bundled("nboard", "engine.py")), str(bundled("submissions", e.name + ".py"))],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1, env=env)  # fmt: skip
        procs[e.name].stdin.write("nboard 2\nset depth 1\n")
    for g in result.games:
        told = {g.black: -1, g.white: -1}
        begin, opening = game.opening_start(g.opening)
        first = game.replay(opening, begin)
        pos, plies = first, []
        for sq in game.parse_transcript(g.moves)[len(opening) :]:
            if pos.must_pass():
                pos, plies = pos.pass_turn(), plies + [PASS]
            name = g.black if pos.token == "x" else g.white
            proc = procs[name]
            if told[name] < 0:
                proc.stdin.write(f"set game {game_in_progress(first, plies, game)}\n")
            else:
                proc.stdin.write(
                    "".join(f"move {'PA' if m == PASS else game.square_name(m)}\n" for m in plies[told[name] :])
                )
            told[name] = len(plies)
            proc.stdin.write(f"ping {moves}\ngo\n")
            while not proc.stdout.readline().startswith("==="):
                pass
            moves += 1
            pos, plies = pos.play(sq), plies + [sq]
    for proc in procs.values():
        proc.kill()
        proc.wait()
    return time.perf_counter() - start, moves


def swiss_times(engines: int = 64, rounds: int = 7, seed: int = 1) -> list[float]:
    rng = random.Random(seed)
    seeds = [f"e{i}" for i in range(engines)]
    results, times = [], []
    for _ in range(rounds):
        standings, played, had_bye = pairing_state(results, seeds)
        t = time.perf_counter()
        try:
            rnd = pair_round(standings, played, had_bye)
        except NoPairing:
            break
        times.append(time.perf_counter() - t)
        results += [(a, b, *rng.choice([(0.0, 2.0), (1.0, 1.0), (2.0, 0.0), (0.5, 1.5)])) for a, b in rnd.pairs]
        if rnd.bye:
            results.append((rnd.bye, None, BYE_POINTS, 0.0))
    return times


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--isolation", default="auto")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--games", type=int, default=100, help="games between the two NBoard engines (default 100)")
    ap.add_argument("--nboard-jobs", type=int, default=2)
    args = ap.parse_args()

    engines = [str(ROOT / "submissions" / f"{n}.py") for n in ("greedy", "random_mover")]
    settings = TournamentSettings(limits=Limits(wall_seconds=10), jobs=args.jobs, isolation=args.isolation)
    with tempfile.TemporaryDirectory() as work:
        start = time.perf_counter()
        result = run_tournament(engines, settings=settings, rounds=args.rounds, seed=args.seed, out=Path(work) / "t")
        wall = time.perf_counter() - start
    moves = sum(len(g.move_times) for g in result.games)
    bare, bare_moves = bare_loop(result, sys.executable)
    print(
        f"{len(result.games)} games, {moves} engine moves at --jobs {args.jobs}, isolation {args.isolation}: "
        f"{wall:.1f} s, {len(result.games) / wall:.2f} games per second, {wall * args.jobs / moves * 1000:.1f} ms per move"
    )
    print(f"bare loop (same engine processes, no harness): {bare:.1f} s, {bare / bare_moves * 1000:.1f} ms per move")
    print(
        f"harness cost per move: {(wall * args.jobs - bare) / moves * 1000:.1f} ms "
        "(fastchess 4.4 ms, cutechess 11.2 ms, measured on engines that stay up)"
    )
    script_cost = (wall * args.jobs - bare) / moves * 1000
    path_costs = {}
    for isolation in (args.isolation, "none"):
        bare, ours, n, median = interleaved_script_path(result, sys.executable, isolation)
        path_costs[isolation] = (ours - bare) / n * 1000
        print(f"script path, move by move beside the bare loop, isolation {isolation}: bare {bare / n * 1000:.1f} ms, "
              f"harness {ours / n * 1000:.1f} ms a move ({ours / bare:.2f}x): {path_costs[isolation]:.1f} ms "
              f"of harness a move (median of the moves' {median * 1000:.1f} ms)")  # fmt: skip

    # persistent NBoard engines: the same harness cost, then many games
    nboard = [Engine(n, protocol=protocol_engine(f"builtin:nboard:{n}", depth=1)) for n in ("greedy", "random_mover")]
    depth1 = TournamentSettings(limits=Limits(wall_seconds=10), jobs=1, isolation=args.isolation)
    with tempfile.TemporaryDirectory() as work:
        start = time.perf_counter()
        result = run_tournament(nboard, settings=depth1, rounds=args.rounds * 10, seed=args.seed, out=Path(work) / "t")
        wall = time.perf_counter() - start
    moves = sum(len(g.move_times) for g in result.games)
    bare, bare_moves = bare_nboard_loop(result, sys.executable)
    assert bare_moves == moves, (bare_moves, moves)
    nboard_cost = (wall - bare) / moves * 1000
    print(
        f"NBoard engines: {len(result.games)} games, {moves} moves at --jobs 1: {wall:.2f} s; bare loop of the same "
        f"processes and moves: {bare:.2f} s; harness cost per move {nboard_cost:.2f} ms"
    )
    many = TournamentSettings(limits=Limits(wall_seconds=10), jobs=args.nboard_jobs, isolation=args.isolation)
    with tempfile.TemporaryDirectory() as work:
        start = time.perf_counter()
        result = run_tournament(nboard, settings=many, rounds=args.games // 2, seed=args.seed, out=Path(work) / "t")
        many_wall = time.perf_counter() - start
    forfeits = sum(g.reason == "forfeit" for g in result.games)
    print(f"{len(result.games)} games between two bundled NBoard engines at --jobs {args.nboard_jobs}: "
          f"{many_wall:.1f} s ({forfeits} forfeits)")  # fmt: skip
    print(f"ratios: script path {script_cost:.1f} ms a move (target <= 20 ms: {script_cost / 20:.2f}); move by move "
          f"{path_costs[args.isolation]:.1f} ms under {args.isolation} (target <= 10 ms: "
          f"{path_costs[args.isolation] / 10:.2f}), {path_costs['none']:.1f} ms under none (target <= 3 ms: "
          f"{path_costs['none'] / 3:.2f}); "
          f"NBoard {nboard_cost:.2f} ms a move (target <= 1 ms: {nboard_cost:.2f}); "
          f"{len(result.games)} NBoard games in {many_wall:.1f} s (target < 20 s: {many_wall / 20:.2f})")  # fmt: skip
    times = swiss_times()
    print(
        f"Swiss pairing, 64 engines x 7 rounds: worst round {max(times) * 1000:.1f} ms, all {sum(times) * 1000:.1f} ms"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
