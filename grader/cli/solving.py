"""``grader solve`` and ``grader prove``: exact values of positions, and proofs that a player never loses."""

from __future__ import annotations

import json
import sys
import time
from typing import Any

import click

from ..config import load_config
from ..errors import GraderError
from ..files import check_output_file, write_json
from ..games import BoardEntry, hint_other_game
from ..games.cost import Estimate, duration, estimate, refuse_over
from ..grading import report
from ..grading.plans import read_boards
from ..grading.results import Settings
from ..prove import prove as run_proof
from ..prove import refuse_costly
from ..stop import Stop, Stopped, exit_status
from .options import (
    SECONDS,
    SideChoice,
    backend_option,
    chosen_game,
    cluster_option,
    config_option,
    echo,
    fail_cleanly,
    game_option,
    isolation_text,
    jobs_option,
    json_option,
    on_cluster,
    scoring_option,
    sentence,
    sides_of,
    stoppable,
    time_limit_option,
)

# --- solve -----------------------------------------------------------------------------


@click.command()
@click.argument("board", required=False)
@click.argument("token", required=False)
@click.option("--boards", "boards_file", type=click.Path(dir_okay=False), help="Solve every position in FILE.")
@scoring_option
@click.option("--all", "all_values", is_flag=True, help="Also give the exact value of every legal move.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (a list with --boards).")
@backend_option
@click.option(
    "--max-seconds", type=SECONDS, default=None, help="Refuse a position whose solve is estimated to take longer."
)
@game_option
@config_option
@fail_cleanly
@stoppable
def solve(board: str | None, token: str | None, boards_file: str | None, scoring: str | None, all_values: bool,
          as_json: bool, backend: str | None, max_seconds: float | None, game_name: str | None,
          config_path: str | None, stop: Stop) -> None:  # fmt: skip
    """Solve BOARD with TOKEN to move exactly, or every position in --boards FILE.

    Othello: BOARD is 64 characters ('.', 'x', 'o'), row-major from a1 (square 0) to h8 (63);
    FILE holds one 'BOARD TOKEN' per line ('#' comments allowed), or lines in the FFO
    'number|board|side|...' format, or Edax OBF 'BOARD SIDE;' lines. Tic-tac-toe: BOARD is
    9 characters, squares 0-8 row by row.

    \b
    Examples:
      grader solve xxxxxxo.xxxxxo..xxooooooxoxxooooxoxxooooxxxoxoooxxo.oxooxooooooo x --all
      grader solve --boards fixtures/ffo-endgames.txt --scoring winner-takes-empties
      grader solve x...o.... x --game tictactoe --all

    Before solving, the cost is estimated from the solver's measured speed: a long solve is
    announced on stderr with its progress, and --max-seconds refuses one beyond it. Ctrl-C or
    SIGTERM stops at once: the positions solved are shown (exit status 130 or 143).
    """
    config = load_config(config_path)
    game = chosen_game(game_name, config)
    settings = Settings.resolve(config, game, scoring=scoring, backend=backend)
    rule, used = game.scoring(settings.scoring), game.backend(settings.backend)
    note = game.backend_note()
    if note and settings.backend == "auto":
        echo(f"Note: {note}", err=True)
    if boards_file and (board or token):
        raise click.UsageError("give either BOARD TOKEN or --boards FILE, not both")
    if boards_file:
        entries = read_boards(boards_file, game)
    elif board and token:
        try:
            entries = [BoardEntry(game.parse(board, token), "")]
        except GraderError as e:
            raise GraderError(f"{e}{hint_other_game(f'{board} {token}', game)}") from None
    else:
        raise click.UsageError(f"give a BOARD and a TOKEN ({' or '.join(game.sides)}), or --boards FILE")
    refuse_over([e.position for e in entries], game, used, max_seconds, [e.label for e in entries])
    progress = _SolveProgress(stop)
    solver = game.solver(rule, should_stop=progress, backend=used)
    results, solved = [], 0
    for i, entry in enumerate(entries):
        if stop.is_set():
            break
        progress.start(solver, estimate(game, entry.position.empties, used), entry.label or "the board")
        try:
            analysis = solver.analyze(entry.position, all_values=all_values)
        except Stopped:
            break
        finally:
            progress.done()
        solved += 1
        if as_json:
            results.append(analysis.to_json())
        else:
            if i:
                echo()
            echo(report.analysis_text(analysis, entry))
    if as_json and (results or not stop.is_set()):
        echo(json.dumps(results if boards_file else results[0], indent=2))
    if stop.is_set():
        reason = stop.reason or "interrupted"
        echo(f"{sentence(reason)}: {solved} of {len(entries)} positions solved.", err=as_json)
        raise SystemExit(exit_status(reason))


class _SolveProgress:
    """The ``should_stop`` of ``grader solve``'s solver, true once ``stop`` is set: it
    announces a solve estimated to be long and then shows its nodes and time on stderr (a
    line every 10 s when stderr is not a terminal)."""

    ANNOUNCE = 2.0  # seconds: solves estimated longer than this are announced

    def __init__(self, stop: Stop) -> None:
        self.stop = stop
        self.solver: Any = None
        self.began = self.last = 0.0
        self.shown = False
        self.tty = sys.stderr.isatty()

    def start(self, solver: Any, cost: Estimate, label: str) -> None:
        self.solver, self.nodes0, self.cost = solver, solver.nodes, cost
        self.began = self.last = time.monotonic()
        self.shown = cost.seconds > self.ANNOUNCE
        if self.shown:
            echo(f"Solving {label} ({cost.empties} empties) will take {cost.describe()}; Ctrl-C stops it", err=True)

    def __call__(self) -> bool:
        now = time.monotonic()
        if self.shown and now - self.last >= (0.5 if self.tty else 10):
            self.last = now
            nodes = (self.solver.nodes - self.nodes0) / 1e6
            text = f"  {nodes:.1f} M nodes, {duration(now - self.began)} of about {duration(self.cost.seconds)}"
            click.echo(f"\r\033[K{text}" if self.tty else text, nl=not self.tty, err=True)
        return self.stop.is_set()

    def done(self) -> None:
        if self.shown and self.tty:
            click.echo("\r\033[K", nl=False, err=True)


# --- prove -------------------------------------------------------------------------------


PROVE_SECONDS = 60.0  # the default --max-seconds of prove: the estimated solve of its start


@click.command()
@click.argument("script")
@click.option(
    "--as",
    "sides",
    type=SideChoice(),
    default="both",
    show_default=True,
    help="The side the script plays.",
)
@click.option(
    "--from",
    "start",
    nargs=2,
    metavar="BOARD TOKEN",
    default=None,
    help="Prove from this position (an Othello endgame, say) instead of the start.",
)
@time_limit_option("Seconds per position (default: config limits.wall_seconds).")
@jobs_option("Positions asked at once")
@click.option(
    "--no-repeat", is_flag=True, help="Ask each position once only (no check that the script is deterministic)."
)
@json_option("the proof")
@click.option(
    "--max-seconds",
    type=SECONDS,
    default=PROVE_SECONDS,
    show_default=True,
    help="Refuse a start whose solve is estimated to take longer (Othello from the opening: use --from).",
)
@scoring_option
@backend_option
@game_option
@cluster_option
@config_option
@fail_cleanly
@stoppable
def prove_command(script: str, sides: str, start: tuple[str, str] | None, time_limit: float | None, jobs: int | None,
                  no_repeat: bool, json_file: str | None, max_seconds: float, scoring: str | None, backend: str | None,
                  game_name: str | None, cluster: str | None, config_path: str | None, stop: Stop) -> None:  # fmt: skip
    """Prove that SCRIPT never loses: play its move in every position it can reach, against
    every legal reply of the opponent, to the end of every game. Each position is asked once
    (and once more, to check the script answers it the same way). A failure comes with a
    lost game, replayable, and the first position where the script's move turned a draw or a
    win into a loss; also reported: wins it let slip, and moves that were not optimal (from
    an endgame with --from: is the script perfect?). Exit status 1 unless it never loses.
    A start whose exact solve is estimated beyond --max-seconds (Othello's opening) is
    refused before anything runs.

    \b
    Examples:
      grader prove submissions/tictactoe/minimax.py --game tictactoe --from xox.o.... x   # 23 positions: seconds
      grader prove submissions/tictactoe/minimax.py --game tictactoe   # all 546 positions from the start: a minute or so
      grader prove submissions/negamax.py --from BOARD x --as x
    """
    config = load_config(config_path)
    game = chosen_game(game_name, config)
    if json_file:
        check_output_file(json_file)
    settings = Settings.resolve(config, game, None, time_limit, scoring, jobs=jobs, backend=backend)
    game.backend(settings.backend)  # a backend not built here: one line now, not after the first move
    root = game.parse(*start) if start else game.start()
    chosen = sides_of(game, sides)
    refuse_costly(root, game, settings.backend, max_seconds, start is None)
    echo(f"Proving {script} ({game.title}, {settings.scoring}) as {' and '.join(chosen)} from "
               f"{'the start' if not start else root.board_string() + ' ' + root.token}, {isolation_text(settings)}")  # fmt: skip
    with on_cluster(cluster, config, stop) as ex:
        proof = run_proof(script, game, chosen, root, settings, determinism=not no_repeat, executor=ex, stop=stop,
                          max_seconds=max_seconds,
                          on_asked=lambda n: click.echo(f"\r{n} positions asked", nl=False) if sys.stdout.isatty() else None)  # fmt: skip
    if sys.stdout.isatty():
        click.echo("\r\033[K", nl=False)
    echo(report.proof_text(proof))
    if json_file:
        write_json(json_file, proof.to_json())
        echo(f"Proof written to {json_file}")
    if proof.interrupted:
        echo(sentence(proof.interrupted) + ".")
        raise SystemExit(exit_status(proof.interrupted))
    if not all(side.never_loses for side in proof.sides):
        raise SystemExit(1)
