"""The ``grader`` command: a thin layer turning flags into library calls and errors into one line."""

from __future__ import annotations

import dataclasses
import functools
import itertools
import json
import os
import random
import signal
import sys
import time
from pathlib import Path
from typing import Any, Callable

import click
from tabulate import tabulate

from . import __version__
from . import gradescope, ratings, report, runner
from . import tournament as tournament_module
from .board import PASS, SCORING_NAMES, Position, Scoring, square_name
from .boards import BoardEntry, file_plan, parse_empties, random_boards, read_boards, standard_plan
from .config import Config, load_config
from .errors import GraderError
from .grading import ScriptResult, Settings, Submission, TestResult, command_for, grade_many
from .report import plural
from .runfolder import RunFolder, default_path
from .submissions import find_submission_folder, find_submissions
from .tournament import Game, TournamentFolder, TournamentSettings, engine_list, read_openings, run_tournament
from .runner import check_isolation
from .solver import Analysis, Solver


def _fail_cleanly(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Turn a user-fixable library error into click's one-line 'Error: ...' and exit 1."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except GraderError as e:
            raise click.ClickException(str(e)) from None

    return wrapper


def config_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--config",
        "config_path",
        type=click.Path(dir_okay=False),
        default=None,
        help="Settings file (default: ./config.yaml if present, else built-in defaults).",
    )(fn)


def scoring_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--scoring",
        type=click.Choice(SCORING_NAMES),
        default=None,
        help="Final-score rule (default: from config, 'plain' for the lab).",
    )(fn)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="grader")
def main() -> None:
    """Grade Othello endgame scripts against an exact solver."""


@main.command()
@click.argument("board", required=False)
@click.argument("token", required=False)
@click.option("--boards", "boards_file", type=click.Path(dir_okay=False), help="Solve every position in FILE.")
@scoring_option
@click.option("--all", "all_values", is_flag=True, help="Also give the exact value of every legal move.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (a list with --boards).")
@config_option
@_fail_cleanly
def solve(
    board: str | None,
    token: str | None,
    boards_file: str | None,
    scoring: str | None,
    all_values: bool,
    as_json: bool,
    config_path: str | None,
) -> None:
    """Solve BOARD with TOKEN to move exactly, or every position in --boards FILE.

    BOARD is 64 characters ('.', 'x', 'o'), row-major from a1 (square 0) to h8 (63).
    FILE holds one 'BOARD TOKEN' per line ('#' comments allowed), or lines in the FFO
    'number|board|side|...' format, or Edax OBF 'BOARD SIDE;' lines.

    \b
    Example:
      grader solve xxxxxxo.xxxxxo..xxooooooxoxxooooxoxxooooxxxoxoooxxo.oxooxooooooo x --all
    """
    config = load_config(config_path)
    rule = Scoring(scoring) if scoring else config.scoring
    if boards_file and (board or token):
        raise click.UsageError("give either BOARD TOKEN or --boards FILE, not both")
    if boards_file:
        entries = read_boards(boards_file)
    elif board and token:
        entries = [BoardEntry(Position.from_string(board, token), "")]
    else:
        raise click.UsageError("give a BOARD and a TOKEN (x or o), or --boards FILE")

    solver = Solver(rule)
    results = []
    for i, entry in enumerate(entries):
        analysis = solver.analyze(entry.position, all_values=all_values)
        if as_json:
            results.append(analysis_json(analysis))
        else:
            if i:
                click.echo()
            click.echo(format_analysis(analysis, entry))
    if as_json:
        click.echo(json.dumps(results if boards_file else results[0], indent=2))


def analysis_json(a: Analysis) -> dict[str, Any]:
    """The JSON object for one solved position."""
    out: dict[str, Any] = {
        "board": a.position.board_string(),
        "token": a.position.token,
        "scoring": a.scoring.value,
        "value": a.value,
        "optimal_moves": a.optimal_moves,
        "line": a.line,
    }
    if a.move_values is not None:
        out["move_values"] = {str(sq): v for sq, v in a.move_values.items()}
    out["nodes"] = a.nodes
    out["seconds"] = round(a.seconds, 6)
    return out


def _moves_text(moves: list[int]) -> str:
    return ", ".join("pass" if m == PASS else f"{m} ({square_name(m)})" for m in moves) or "none"


def lab_line(value: int, line: list[int]) -> str:
    """The lab's score line: the score, then the line in reverse (passes as -1)."""
    return " ".join(["score", str(value)] + [str(m) for m in reversed(line)])


def format_analysis(a: Analysis, entry: BoardEntry | None = None) -> str:
    """The text report of one solved position."""
    pos = a.position
    legal = pos.moves()
    marks = {sq: ("*" if sq in a.optimal_moves else "+") for sq in legal}
    out = []
    if entry is not None and entry.label:
        out.append(entry.label)
    out.append(pos.render(marks))
    out.append(f"{pos.token} to move, {pos.empties} empties, scoring {a.scoring}  (* optimal move, + other legal move)")
    if not legal:
        out.append(f"{pos.token} has no legal move: " + ("the game is over" if pos.is_game_over() else "it must pass"))
    out.append(f"value:         {a.value:+d}")
    out.append(f"optimal moves: {_moves_text(a.optimal_moves)}")
    out.append(f"line:          {_moves_text(a.line)}")
    out.append(f"lab format:    {lab_line(a.value, a.line)}")
    if a.move_values is not None:
        rows = [[sq, square_name(sq), f"{v:+d}"] for sq, v in sorted(a.move_values.items(), key=lambda kv: (-kv[1], kv[0]))]
        out.append(tabulate(rows, headers=["move", "square", "value"], colalign=("right", "left", "right")))
    if entry is not None and entry.score is not None:
        out.append(_file_answer(a, entry))
    out.append(f"solved in {a.seconds:.3f} s, {a.nodes} nodes")
    return "\n".join(out)


def _file_answer(a: Analysis, entry: BoardEntry) -> str:
    best = ",".join(square_name(s) for s in entry.best_moves or ())
    claim = f"file says:     {entry.score:+d} {best}".rstrip()
    if a.scoring is not Scoring.WINNER_TAKES_EMPTIES:
        return f"{claim} (under winner-takes-empties: use --scoring winner-takes-empties to compare)"
    same = a.value == entry.score and (entry.best_moves is None or sorted(entry.best_moves) == a.optimal_moves)
    return f"{claim} ({'matches' if same else 'DIFFERS'})"


def _seconds(value: float | None) -> float | None:
    """A time limit: a number of seconds above 0, at most a day."""
    if value is not None and not 0 < value <= 86400:  # also refuses nan
        raise click.BadParameter(f"{value} is not a number of seconds between 0 and 86400")
    return value


def seed_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--seed", type=click.IntRange(min=0), default=None, help="Seed for the random boards (default: config, else a new one, printed).")(fn)


def _seed(seed: int | None, config: Config) -> int:
    if seed is not None:
        return seed
    if config.seed is not None:
        return config.seed
    return random.SystemRandom().randrange(1, 1_000_000)


@main.command()
@click.argument("scripts", nargs=-1, metavar="SCRIPT_OR_DIR...")
@seed_option
@click.option("--time-limit", type=float, callback=lambda ctx, param, v: _seconds(v), default=None, help="Seconds per test (default: config limits.wall_seconds, 10).")
@click.option("--jobs", type=click.IntRange(min=1), default=None, help="Tests at once, over all scripts (default: config, else the number of cores).")
@click.option("--boards", "boards_file", type=click.Path(dir_okay=False), help="Grade on the positions in FILE instead of the standard plan.")
@scoring_option
@click.option("--json", "json_file", type=click.Path(dir_okay=False), help="Write the full results as JSON to FILE.")
@click.option("--stop-on-error", is_flag=True, help="Stop a script's run at its first illegal move, missing move or crash.")
@click.option("--out", type=click.Path(file_okay=False), default=None, help="Run folder to write results to as they happen (default for a class: runs/DATE-TIME).")
@click.option("--resume", type=click.Path(file_okay=False), default=None, help="Continue the run in this folder: only missing tests (or changed scripts) are run.")
@click.option("--sort", type=click.Choice(["name", "total"]), default="name", show_default=True, help="Order of the class table.")
@config_option
@_fail_cleanly
def grade(
    scripts: tuple[str, ...],
    seed: int | None,
    time_limit: float | None,
    jobs: int | None,
    boards_file: str | None,
    scoring: str | None,
    json_file: str | None,
    stop_on_error: bool,
    out: str | None,
    resume: str | None,
    sort: str,
    config_path: str | None,
) -> None:
    """Grade scripts on the lab's 100 tests (or the boards in --boards FILE).

    Each SCRIPT is run as 'SCRIPT BOARD TOKEN' (Python files with the grader's Python) under
    the limits; its last 'score' line and its last integer are judged against the exact
    solver: + M Q T m s - t, with a total out of the number of tests. A DIR is a class: each
    script in it is a student, and so is each sub-folder holding one script. A class run
    writes a run folder (results as they happen, grades.csv, results.json, junit.xml,
    report.html) that --resume continues after an interruption.

    \b
    Examples:
      grader grade submissions/negamax.py --seed 7
      grader grade class-folder/ --seed 7 --out runs/lab5
      grader grade --resume runs/lab5
    """
    config = load_config(config_path)
    if resume:
        if seed is not None or boards_file or scoring or time_limit or stop_on_error or out:
            raise click.UsageError(
                "--resume continues a run with its own plan and settings: drop --seed, --boards, --scoring, "
                "--time-limit, --stop-on-error and --out, or start a new run"
            )
        folder = RunFolder.open(resume)
        plan, settings = folder.plan, folder.settings(jobs=jobs)
        subs = _submissions(scripts, config) if scripts else folder.submissions()
        single = False
    else:
        if not scripts:
            raise click.UsageError("give the scripts or folders to grade (or --resume DIR)")
        limits = config.limits if time_limit is None else dataclasses.replace(config.limits, wall_seconds=time_limit)
        settings = _run_settings(
            config, limits, jobs, scoring=Scoring(scoring) if scoring else config.scoring, stop_on_error=stop_on_error
        )
        subs = _submissions(scripts, config)
        single = len(subs) == 1 and not Path(scripts[0]).is_dir()
        if single:
            command_for(subs[0].path, settings)  # a missing or unrunnable script is the user's mistake
        plan = file_plan(boards_file) if boards_file else standard_plan(_seed(seed, config))
        folder = RunFolder.create(out or default_path(), plan, settings) if out or not single else None
    signal.signal(signal.SIGTERM, _interrupt)  # stop like Ctrl-C: kill the scripts, keep the results
    hashes = folder.register(subs) if folder else {}
    previous = folder.recorded() if resume else {}
    click.echo(
        f"Grading {subs[0].path if single else plural(len(subs), 'student', 'students')}: "
        f"{len(plan.positions)} tests ({plan.source}), time limit {settings.limits.wall_seconds:g} s, "
        f"{settings.jobs} job{'s' if settings.jobs > 1 else ''}, scoring {settings.scoring}"
        + ("" if settings.isolation == "none" else f", isolation {settings.isolation}")
        + (f"\nRun folder: {folder.path}" + (f" ({len(previous)} tests already recorded)" if resume else "") if folder else "")
    )
    bar = _ProgressBar(len(subs) * len(plan.positions) - len(previous), enabled=not single and sys.stdout.isatty())

    def on_record(sub: Submission, test: TestResult) -> None:
        if folder:
            folder.append(sub, hashes[sub.name], test)
        bar.advance()

    def on_test(sub: Submission, test: TestResult) -> None:
        if single:
            click.echo(test.symbol, nl=False)
            sys.stdout.flush()

    def on_script(result: ScriptResult) -> None:
        if folder and not result.interrupted:
            folder.set_stopped(result.name, result.stopped, len(result.tests))
        if not single:
            bar.echo(report.student_line(result))

    results = grade_many(subs, plan, settings, Solver(settings.scoring), previous, on_test, on_record, on_script)
    bar.close()
    interrupted = any(r.interrupted for r in results)
    if single:
        click.echo()
        click.echo(report.summary(results[0]))
        click.echo()
        click.echo(report.offending_report(results[0]))
        click.echo()
    else:
        click.echo()
        click.echo(report.class_table(report.sort_results(results, sort)))
    if folder:
        results = folder.results()  # the exports come from the records, as with 'grader report'
        files = report.write_exports(folder.path, results)
        click.echo(f"Results in {folder.path}: {', '.join(files)}")
    if json_file:
        try:
            with open(json_file, "w", encoding="utf-8") as f:
                json.dump(report.results_json(results), f, indent=1)
        except OSError as e:
            raise GraderError(f"cannot write {json_file!r}: {e.strerror}") from None
        click.echo(f"Results written to {json_file}")
    if interrupted:
        click.echo(f"Interrupted: continue with  grader grade --resume {folder.path}" if folder else "Interrupted.")
        raise SystemExit(130)


def _submissions(scripts: tuple[str, ...], config: Config) -> list[Submission]:
    return find_submissions(list(scripts), set(config.commands), config.entry)


class _ProgressBar:
    """A one-line progress bar on a terminal, kept below the lines printed above it."""

    def __init__(self, total: int, enabled: bool):
        self.total, self.done, self.enabled = max(total, 0), 0, enabled and total > 0

    def advance(self) -> None:
        self.done += 1
        self._draw()

    def echo(self, line: str) -> None:
        if self.enabled:
            click.echo("\r\033[K", nl=False)
        click.echo(line)
        self._draw()

    def _draw(self) -> None:
        if self.enabled:
            filled = 30 * self.done // self.total
            click.echo(f"\r[{'#' * filled}{'.' * (30 - filled)}] {self.done}/{self.total} tests", nl=False)
            sys.stdout.flush()

    def close(self) -> None:
        if self.enabled:
            click.echo("\r\033[K", nl=False)


@main.command("gradescope")
@click.option("--submission", type=click.Path(file_okay=False), default=gradescope.SUBMISSION, show_default=True, help="Folder holding the student's files.")
@click.option("--results", "results_file", type=click.Path(dir_okay=False), default=gradescope.RESULTS, show_default=True, help="Where to write Gradescope's results.json.")
@seed_option
@click.option("--boards", "boards_file", type=click.Path(dir_okay=False), help="Grade on the positions in FILE instead of the standard plan.")
@click.option("--visibility", type=click.Choice(gradescope.VISIBILITIES), default="visible", show_default=True, help="When students see the test results.")
@config_option
@_fail_cleanly
def gradescope_command(
    submission: str, results_file: str, seed: int | None, boards_file: str | None, visibility: str, config_path: str | None
) -> None:
    """Grade the submission in a Gradescope autograder and write its results.json.

    The student's folder must hold one script (or set 'entry' in config.yaml). Whatever the
    script does, results.json is written; the exit status is non-zero only when it cannot be.

    \b
    Example (run_autograder):
      cd /autograder/source && grader gradescope --config config.yaml
    """
    start = time.monotonic()
    config = load_config(config_path)
    settings = _run_settings(config, config.limits, None, scoring=config.scoring)
    plan = file_plan(boards_file) if boards_file else standard_plan(_seed(seed, config))
    if not Path(submission).is_dir():
        raise GraderError(f"submission folder '{submission}' not found: give --submission DIR")
    sub = find_submission_folder(Path(submission), set(config.commands), config.entry)
    (result,) = grade_many([sub], plan, settings, Solver(settings.scoring))
    data = gradescope.results_json(result, time.monotonic() - start, visibility)
    try:
        Path(results_file).parent.mkdir(parents=True, exist_ok=True)
        Path(results_file).write_text(json.dumps(data, indent=1), encoding="utf-8")
    except OSError as e:
        raise GraderError(f"cannot write {results_file!r}: {e.strerror}") from None
    click.echo(data["output"])
    click.echo(f"\nResults written to {results_file}")


@main.command()
@click.argument("engine_paths", nargs=-1, metavar="SCRIPT...")
@click.option("--rounds", type=click.IntRange(min=1), default=1, show_default=True, help="Openings each pair plays, a game with each colour.")
@click.option("--openings", "openings_file", type=click.Path(dir_okay=False), help="Openings file: one move sequence like f5d6c3 per line.")
@click.option("--random-openings", type=click.IntRange(min=0, max=40), default=None, metavar="PLIES", help="Random legal openings of PLIES moves from the seed (default: 4).")
@seed_option
@click.option("--time-limit", type=float, callback=lambda ctx, param, v: _seconds(v), default=None, help="Seconds per move (default: config tournament.move_seconds).")
@click.option("--jobs", type=click.IntRange(min=1), default=None, help="Games at once (default: config, else the number of cores).")
@click.option("--adjudicate", type=click.IntRange(min=1, max=20), default=None, metavar="K", help="The exact solver finishes games once K or fewer squares are empty.")
@click.option("--scoring", type=click.Choice(SCORING_NAMES), default=None, help="Final-score rule (default: config, winner-takes-empties).")
@click.option("--out", type=click.Path(file_okay=False), default=None, help="Folder for the games as they finish (default: runs/DATE-TIME-tournament).")
@click.option("--resume", type=click.Path(file_okay=False), default=None, help="Continue the tournament in this folder without replaying finished games.")
@click.option("--json", "json_file", type=click.Path(dir_okay=False), help="Write standings, crosstable and games as JSON to FILE.")
@config_option
@_fail_cleanly
def tournament(
    engine_paths: tuple[str, ...],
    rounds: int,
    openings_file: str | None,
    random_openings: int | None,
    seed: int | None,
    time_limit: float | None,
    jobs: int | None,
    adjudicate: int | None,
    scoring: str | None,
    out: str | None,
    resume: str | None,
    json_file: str | None,
    config_path: str | None,
) -> None:
    """Round-robin tournament between engine SCRIPTs, with Elo ratings and game records.

    Each move an engine is run as 'SCRIPT BOARD TOKEN' under the limits; its move is the last
    integer it printed (at the time limit, the last one printed in time). Every pair plays
    each opening twice, colours swapped. An illegal or missing move, or a crash, loses the
    game by forfeit (config tournament.on_illegal).

    \b
    Example:
      grader tournament submissions/negamax.py submissions/greedy.py submissions/random_mover.py --rounds 4
    """
    config = load_config(config_path)
    defaults = config.tournament
    if resume:
        if engine_paths or openings_file or random_openings is not None or seed is not None or adjudicate or scoring or time_limit or out:
            raise click.UsageError("--resume continues a tournament with its own engines, openings and settings: give only --resume DIR (and --jobs)")
        folder = TournamentFolder.open(resume)
        meta = folder.meta["settings"]
        engines, games = folder.engines(), folder.games()
        run_settings = _run_settings(config, runner.Limits(**meta["move_limits"]), jobs, isolation=meta["isolation"])
        settings = TournamentSettings(run_settings, Scoring(meta["scoring"]), meta["on_illegal"], meta["adjudicate"])
        done = folder.finished()
    else:
        if openings_file and random_openings is not None:
            raise click.UsageError("give --openings FILE or --random-openings PLIES, not both")
        engines = engine_list(list(engine_paths))
        chosen_seed = _seed(seed, config)
        if openings_file:
            openings = read_openings(openings_file)
        else:
            openings = tournament_module.random_openings(chosen_seed, 4 if random_openings is None else random_openings, rounds)
        move_limits = dataclasses.replace(config.limits, wall_seconds=time_limit or defaults.move_seconds)
        run_settings = _run_settings(config, move_limits, jobs)
        settings = TournamentSettings(run_settings, Scoring(scoring) if scoring else defaults.scoring, defaults.on_illegal, adjudicate)
        games = tournament_module.schedule([e.name for e in engines], openings, rounds)
        folder = TournamentFolder.create(out or tournament_module.default_folder(), engines, games, settings, chosen_seed)
        done = {}
    signal.signal(signal.SIGTERM, _interrupt)
    names = [e.name for e in engines]
    click.echo(
        f"Tournament: {plural(len(engines), 'engine', 'engines')}, {plural(len(games), 'game', 'games')}, "
        f"{settings.run.limits.wall_seconds:g} s per move, {settings.run.jobs} job{'s' if settings.run.jobs > 1 else ''}, "
        f"scoring {settings.scoring}" + (f", adjudication at {settings.adjudicate} empties" if settings.adjudicate else "")
        + f"\nFolder: {folder.path}" + (f" ({len(done)} games already played)" if resume else "")
    )
    count = itertools.count(len(done) + 1)

    def on_game(game: Game) -> None:
        folder.append(game)
        note = f" ({game.forfeit} forfeits)" if game.forfeit else ""
        click.echo(f"{next(count):>4}/{len(games)}  {game.black} - {game.white}  {game.black_discs}-{game.white_discs}  "
                   f"{game.result}  {game.reason}{note}")  # fmt: skip

    played, interrupted = run_tournament(engines, games, settings, done, on_game)
    folder.write_records(played)
    table = ratings.standings(played, names)
    cross = ratings.crosstable(played, names)
    click.echo()
    click.echo(report.standings_table(table))
    click.echo()
    click.echo(report.crosstable_text(cross, names))
    data = {"standings": [s.to_json() for s in table], "crosstable": cross, "games": [g.summary() for g in played]}
    folder.write("results.json", json.dumps(data, indent=1))
    if json_file:
        try:
            Path(json_file).write_text(json.dumps(data, indent=1), encoding="utf-8")
        except OSError as e:
            raise GraderError(f"cannot write {json_file!r}: {e.strerror}") from None
    click.echo(f"\nGames in {folder.path}: games.txt (transcripts), games.jsonl, results.json")
    if interrupted:
        click.echo(f"Interrupted: continue with  grader tournament --resume {folder.path}")
        raise SystemExit(130)


@main.command("report")
@click.argument("run_dir", type=click.Path(file_okay=False))
@click.option("--sort", type=click.Choice(["name", "total"]), default="name", show_default=True, help="Order of the class table.")
@_fail_cleanly
def report_command(run_dir: str, sort: str) -> None:
    """Write grades.csv, results.json, junit.xml and report.html again from a run folder.

    \b
    Example:
      grader report runs/lab5
    """
    folder = RunFolder.open(run_dir)
    results = folder.results()
    click.echo(report.class_table(report.sort_results(results, sort)))
    files = report.write_exports(folder.path, results)
    click.echo(f"Results in {folder.path}: {', '.join(files)}")


def _run_settings(config: Config, limits: runner.Limits, jobs: int | None, isolation: str | None = None, **kw: Any) -> Settings:
    """How scripts are run: these limits, and the rest from options, then config, then defaults."""
    return Settings(
        limits=limits,
        isolation=isolation or _isolation(config),
        jobs=jobs or config.jobs or os.cpu_count() or 1,
        python=config.python or sys.executable,
        commands=config.commands,
        **kw,
    )


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def _isolation(config: Config) -> str:
    """The configured isolation, or 'none' with a warning when its tool is missing and that is allowed."""
    try:
        check_isolation(config.isolation)
    except GraderError as e:
        if not config.isolation_fallback:
            raise
        click.echo(f"Warning: {e}; running without isolation (isolation_fallback: true)", err=True)
        return "none"
    return config.isolation


@main.command()
@seed_option
@click.option("--empties", default="1-9", show_default=True, help="Numbers of empty squares, low-high.")
@click.option("--count", type=click.IntRange(min=1), default=10, show_default=True, help="Boards for each number of empties.")
@click.option("--out", type=click.Path(dir_okay=False), default=None, help="Write to FILE instead of standard output.")
@config_option
@_fail_cleanly
def boards(seed: int | None, empties: str, count: int, out: str | None, config_path: str | None) -> None:
    """Write random test boards: COUNT for each number of empties, reached by legal play.

    Lines are 'BOARD TOKEN' in rising order of empties; the token always has a legal move.
    The same seed gives the same boards on any machine, and the same boards as the random
    part of the standard plan ('--empties 1-9 --count 10').

    \b
    Example:
      grader boards --seed 7 --empties 5-8 --count 3 --out my-boards.txt
    """
    config = load_config(config_path)
    span = parse_empties(empties)
    chosen = _seed(seed, config)
    lines = [f"# grader boards --seed {chosen} --empties {span.start}-{span.stop - 1} --count {count}"]
    lines += [f"{p.board_string()} {p.token}" for p in random_boards(chosen, span, count)]
    text = "\n".join(lines) + "\n"
    if out:
        try:
            with open(out, "w", encoding="utf-8") as f:
                f.write(text)
        except OSError as e:
            raise GraderError(f"cannot write {out!r}: {e.strerror}") from None
        click.echo(f"{len(lines) - 1} boards written to {out} (seed {chosen})")
    else:
        click.echo(text, nl=False)
