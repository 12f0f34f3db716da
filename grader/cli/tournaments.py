"""``grader tournament``: round-robin, gauntlet, Swiss and SPRT tournaments between engines."""

from __future__ import annotations

import click

from ..config import load_config
from ..files import check_output_file, write_json
from ..games import DEFAULT
from ..runs.text import plural
from ..stop import Stop, exit_status
from ..tournaments import tables
from ..tournaments.folder import TournamentFolder
from ..tournaments.games import GameRecord
from ..tournaments.grades import write_grades
from ..tournaments.openings import OPENING_PLIES
from ..tournaments.request import TournamentRequest
from ..tournaments.settings import TournamentSettings
from ..tournaments.tournament import run_tournament
from .options import (
    TIME_CONTROL,
    backend_option,
    cluster_option,
    config_option,
    echo,
    fail_cleanly,
    folder_options,
    game_option,
    isolation_text,
    jobs_option,
    json_option,
    on_cluster,
    private_files,
    seed_option,
    sentence,
    stoppable,
    time_limit_option,
)

# --- tournament ---------------------------------------------------------------------------


@click.command()
@click.argument("engine_paths", nargs=-1, metavar="ENGINES...")
@click.option(
    "--format",
    "format_name",
    type=click.Choice(["round-robin", "gauntlet", "swiss"]),
    default=None,
    help="round-robin (the default): all pairs; gauntlet: each SCRIPT against the --opponents only; swiss: --rounds Swiss rounds.",
)
@click.option(
    "--opponents",
    multiple=True,
    metavar="SCRIPT",
    help="Gauntlet: the reference opponents (repeat, or separate with commas).",
)
@click.option(
    "--rounds",
    type=click.IntRange(min=1),
    default=None,
    help="Openings each pair plays, a game with each colour; Swiss: rounds (default: 1).",
)
@click.option(
    "--sprt",
    nargs=2,
    type=float,
    default=None,
    metavar="ELO0 ELO1",
    help="SPRT between two engines: H0 Elo = ELO0 against H1 Elo = ELO1 (normalized Elo).",
)
@click.option("--alpha", type=float, default=None, help="SPRT: the false positive rate (default: 0.05).")
@click.option("--beta", type=float, default=None, help="SPRT: the false negative rate (default: 0.05).")
@click.option(
    "--max-games", type=click.IntRange(min=2), default=None, help="SPRT: stop undecided after this many games."
)
@click.option(
    "--grade",
    is_flag=True,
    help="Gauntlet: grade each SCRIPT out of 100 by its share of the pieces on the board at its games' ends (config tournament.grade) into grades.csv.",
)
@click.option(
    "--openings",
    "openings_file",
    type=click.Path(dir_okay=False),
    help="Openings file: a move sequence like f5d6c3 or a position per line, or GGF games (games.ggf).",
)
@click.option(
    "--opening-plies",
    type=click.IntRange(min=0),
    default=None,
    metavar="N",
    help="With --openings: the first N moves of each (GGF games are whole games: cut them).",
)
@click.option(
    "--random-openings",
    type=click.IntRange(min=0, max=40),
    default=None,
    metavar="PLIES",
    help=f"Random legal openings of PLIES moves from the seed (default: {OPENING_PLIES}).",
)
@seed_option("random openings")
@time_limit_option("Seconds per move (default: config tournament.move_seconds).")
@click.option(
    "--tc",
    type=TIME_CONTROL,
    default=None,
    help="A game clock instead, SECONDS[+INCREMENT] as cutechess writes it (60+0.5): a flag falls when it runs out. "
    "cpu:60+0.5 counts the CPU time of the engine's processes instead of wall time.",
)
@click.option(
    "--timemargin",
    "time_margin_ms",
    type=click.IntRange(min=0, max=60000),
    default=None,
    metavar="MS",
    help="Milliseconds an engine may overstep its clock before its flag falls (default: config, else 100).",
)
@click.option(
    "--restart",
    is_flag=True,
    help="Start protocol engines afresh for every game (default: a process plays its engine's next games).",
)
@jobs_option("Games at once")
@click.option(
    "--adjudicate",
    type=click.IntRange(min=1),
    default=None,
    metavar="K",
    help="The exact solver finishes games once K or fewer squares are empty (at most what it solves in about a second).",
)
@backend_option
@click.option(
    "--scoring",
    default=None,
    metavar="RULE",
    help="Final-score rule (default: config, else the game's tournament rule).",
)
@game_option
@click.option(
    "--size",
    "board_size",
    type=click.IntRange(5, 19),
    default=None,
    metavar="N",
    help="The board, N x N, for Gomoku (default: config gomoku.size, else 7); GTP engines get 'boardsize N'.",
)
@folder_options("New folder for the games as they finish (default: runs/DATE_TIME-tournament).",
                "Continue the tournament in this folder without replaying finished games.")  # fmt: skip
@json_option("standings, crosstable and games")
@cluster_option
@config_option
@fail_cleanly
@stoppable
def tournament(engine_paths: tuple[str, ...], format_name: str | None, opponents: tuple[str, ...], rounds: int | None,
               sprt: tuple[float, float] | None, alpha: float | None, beta: float | None, max_games: int | None, grade: bool,
               openings_file: str | None, opening_plies: int | None, random_openings: int | None, seed: int | None, time_limit: float | None,
               tc: tuple[tuple[float, float], str | None] | None, time_margin_ms: int | None, restart: bool, jobs: int | None, adjudicate: int | None,
               backend: str | None, scoring: str | None, game_name: str | None, board_size: int | None, out: str | None, resume: str | None, json_file: str | None,
               cluster: str | None, config_path: str | None, stop: Stop) -> None:  # fmt: skip
    """A tournament between ENGINES, with Elo ratings, game records (games.ggf for Othello,
    psq/ for Gomoku) and report.html in its folder.

    An engine is a SCRIPT, run as 'SCRIPT BOARD TOKEN' for each move under the limits (its
    move is the last integer it printed; at the time limit, the last one printed in time);
    or nboard:COMMAND or gtp:COMMAND, a program speaking the NBoard protocol or GTP (or
    NAME:COMMAND, a protocol an installed package adds), kept up between its games; or the
    name of an engine in config.yaml's engines: list. A name given as cutechess's name= names
    an engine in the results (nboard:name=v1:COMMAND, script:name=v2:FILE), so two versions
    whose files share a name can meet. Every pair plays each opening twice,
    colours swapped. An illegal or missing move, a crash, a protocol error or a fallen flag
    loses the game by forfeit (config tournament.on_illegal). builtin:random_mover,
    builtin:greedy and builtin:negamax ship with the grader, also as NBoard engines
    (builtin:nboard:negamax).

    \b
    Examples:
      grader tournament submissions/negamax.py builtin:greedy builtin:random_mover --rounds 4
      grader tournament nboard:"./edax -nboard" builtin:nboard:negamax --tc 10+0.1
      grader tournament gtp:"/usr/games/gtp-rhino -l 2" builtin:nboard:greedy --tc 30+0.5
      grader tournament new.py --format gauntlet --opponents builtin:greedy,builtin:random_mover --grade
      grader tournament new.py old.py --sprt 0 10 --max-games 400
      grader tournament nboard:name=v2:"python3 v2/engine.py" nboard:name=v1:"python3 v1/engine.py" --sprt 0 10 --max-games 400
      grader tournament builtin:gtp:solver builtin:gtp:random_player --game gomoku --size 9
    """
    config = load_config(config_path)
    if json_file:
        check_output_file(json_file)
    request = TournamentRequest(
        engines=engine_paths, format=format_name, opponents=tuple(p for o in opponents for p in o.split(",") if p),
        rounds=rounds, sprt=sprt, alpha=alpha, beta=beta, max_games=max_games, grade=grade,
        openings_file=openings_file, opening_plies=opening_plies, random_openings=random_openings, seed=seed,
        time_limit=time_limit, tc=tc[0] if tc else None, clock=tc[1] if tc else None,
        time_margin=None if time_margin_ms is None else time_margin_ms / 1000,
        restart=restart, jobs=jobs, adjudicate=adjudicate, backend=backend, scoring=scoring, game=game_name,
        board_size=board_size, out=out, resume=resume,
    )  # fmt: skip
    arguments = request.arguments(config)
    played, total = [0], [0]

    def on_game(game: GameRecord) -> None:
        played[0] += 1
        echo(f"{played[0]:>4}/{total[0]}  {game.black} - {game.white}  {game.black_pieces}-{game.white_pieces}  "
             f"{game.result}  {game.end_text()}")  # fmt: skip

    def on_start(folder: TournamentFolder, settings: TournamentSettings, played_before: int) -> None:
        engines, fmt = len(folder.engines()), folder.format()
        games = fmt.planned_games(engines)
        at_most = "" if fmt.kind in ("round-robin", "gauntlet") else "at most "
        echo(
            f"Tournament{'' if fmt.kind == 'round-robin' else f' ({fmt.kind})'}: {plural(engines, 'engine', 'engines')}, {at_most}{plural(games, 'game', 'games')}"
            + (f" of {settings.game}" if settings.game != DEFAULT else "")
            + ", "
            f"{_clock_text(settings)}, {plural(settings.jobs, 'job', 'jobs')}, scoring {settings.rule}, "
            f"{isolation_text(settings)}"
            + (f", adjudication at {settings.adjudicate} empties" if settings.adjudicate else "")
            + f"\nFolder: {folder.path}"
            + (f" ({played_before} games already played)" if resume else "")
        )
        played[0], total[0] = played_before, games

    with on_cluster(cluster, config, stop) as ex:
        result = run_tournament(on_start=on_start, on_game=on_game, private=private_files(config, openings_file),
                                executor=ex, stop=stop, **arguments)  # fmt: skip
    names = [s.engine for s in result.standings]
    echo()
    if result.swiss is not None:
        echo(tables.swiss_table(result.swiss.standings))
        echo()
    echo(tables.standings_table(result.standings))
    echo()
    echo(tables.crosstable_text(result.crosstable, names))
    if result.sprt is not None:
        echo()
        echo(tables.sprt_text(result.sprt))
    if result.stopped_early:
        echo(f"\nStopped early: {result.stopped_early}")
    fixes = result.setup_fixes()
    if fixes:
        echo()
    for engine, fix in fixes.items():
        echo(f"{engine} forfeited: {fix}")
    if grade:
        grades = write_grades(result, config.tournament.grade)
        echo()
        echo(tables.share_grades_table(grades))
    if json_file:
        write_json(json_file, result.to_json())
    echo(f"\n{len(result.games)} of {result.scheduled} games in {result.folder.path}: {', '.join(result.files)}")
    if result.interrupted:
        echo(f"{sentence(result.interrupted)}: continue with  grader tournament --resume {result.folder.path}")
        raise SystemExit(exit_status(result.interrupted))


def _clock_text(settings: TournamentSettings) -> str:
    if settings.tc is None:
        return f"{settings.limits.wall_seconds:g} s per move"
    kind = "CPU clock" if settings.clock == "cpu" else "clock"
    return f"{kind} {settings.tc[0]:g}+{settings.tc[1]:g} s (margin {settings.time_margin * 1000:g} ms)"
