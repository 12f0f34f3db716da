"""``grader regress``: GTP regression files run against one program, or a class into a run folder."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Callable

import click

from ..config import COUNTS, load_config
from ..engines.interpreters import find_interpreter
from ..engines.programs import PYTHON, ProtocolEngine
from ..errors import GraderError
from ..files import check_output_file, read_lines, write_json
from ..regression.format import capped_timelimits, parse_regress
from ..regression.plans import REGRESS_GAME, regress_game
from ..regression.regress import run_regress
from ..regression.results import REGRESS_SYMBOLS, RegressSettings, RegressTest, StudentRegress
from ..regression.runs import RegressFolder, RegressRun, failed_board, regress_class, regress_table, test_line
from ..runs.folders import check_new_folder
from ..stop import Stop, exit_status
from .options import (
    LibraryDefault,
    cluster_option,
    config_option,
    echo,
    fail_cleanly,
    folder_options,
    isolation_text,
    jobs_option,
    json_option,
    on_cluster,
    private_files,
    sentence,
    stoppable,
)


@click.command()
@click.argument("args", nargs=-1, metavar="PROGRAM FILE...")
@click.option("--unknown-credit", type=click.FloatRange(0, 1), cls=LibraryDefault, library_default=RegressSettings.unknown_credit,
              help="Credit of a 'solve' answered 'unknown' (the course decides).")  # fmt: skip
@click.option("--margin", type=click.FloatRange(0, 60), cls=LibraryDefault, library_default=RegressSettings.margin,
              help="Seconds beyond the program's timelimit (or limits.wall_seconds) each command may take.")  # fmt: skip
@click.option("--unverified-credit", type=click.FloatRange(0, 1), cls=LibraryDefault,
              library_default=RegressSettings.unverified_credit,
              help="Credit of a result where the file expects 'unknown' that the grader's solver cannot settle.")  # fmt: skip
@click.option("--count", type=click.Choice(COUNTS), cls=LibraryDefault, library_default=RegressSettings.count,
              help="The tests a total counts: all (as gogui-regress), or only 'solve' and 'genmove' tests.")  # fmt: skip
@click.option("--per-test", is_flag=True, default=None,
              help="A fresh program for every test, told the game so far: a crash or hang costs one test "
                   "(default: one program per file; the tests after it ended count 0).")  # fmt: skip
@json_option("every test's result")
@click.option("--game", "game_name", metavar="NAME", cls=LibraryDefault, library_default=REGRESS_GAME,
              help="The game the files play (config's game instead, if its positions can be set up by play).")  # fmt: skip
@jobs_option("A class: programs at once")
@folder_options("A class: the new run folder for the results as they happen (default: runs/DATE_TIME).",
                "Continue the class run in this folder: only files not recorded (or of changed programs) run.")  # fmt: skip
@cluster_option
@config_option
@fail_cleanly
@stoppable
def regress(args: tuple[str, ...], unknown_credit: float | None, unverified_credit: float | None, count: str | None,
            margin: float | None, per_test: bool | None,
            json_file: str | None, game_name: str | None, jobs: int | None, out: str | None, resume: str | None,
            cluster: str | None, config_path: str | None, stop: Stop) -> None:  # fmt: skip
    """Run each GoGui regression FILE (numbered GTP commands, each followed by '#? [REGEX]')
    against PROGRAM, a GTP program (a .py file is run with the configured Python; anything
    else is a command line, as 'python3 my_player.py'), started once per file (or per test:
    --per-test) in the same isolation and limits as scripts. A test the program never
    answered (it had ended) counts 0. 'solve' and 'genmove' are judged by the grader's own
    solver (any move that achieves the result counts); other tests by their regex.

    A folder as PROGRAM is a class: each student's program, found as 'grader grade' finds
    them, runs every FILE; the results go to a run folder as each file ends (grades.csv,
    results.json, junit.xml, report.html at the end), which --resume continues after an
    interruption and 'grader rejudge' judges again.

    \b
    Examples:
      grader regress submissions/gomoku/solver.py tests.gtp
      grader regress "python3 Gomoku.py" public.gtp private.gtp --unknown-credit 0.5
      grader regress students/ lab2.gtp --out runs/lab2
      grader regress --resume runs/lab2
    """
    config = load_config(config_path)
    if json_file:
        check_output_file(json_file)
    if resume:
        if unknown_credit is not None or unverified_credit is not None or count or margin is not None or per_test \
                or game_name or out:  # fmt: skip
            raise click.UsageError(
                "--resume continues a run with its own files and settings: drop --unknown-credit, "
                "--unverified-credit, --count, --margin, --per-test, --game and --out "
                "(or 'grader rejudge --unknown-credit' a finished run)"
            )
        if any(Path(a).suffix == ".gtp" for a in args):
            raise click.UsageError("--resume runs the run's own copy of its files: give only programs to add (or none)")
        settings = RegressSettings(jobs=jobs) if jobs else None
        with on_cluster(cluster, config, stop) as ex:
            run = _class_run(lambda **kw: regress_class(args, resume=resume, settings=settings, entry=config.entry,
                                                        private=private_files(config), executor=ex, stop=stop, **kw))  # fmt: skip
        _class_end(run, json_file)
        return
    if len(args) < 2:
        raise click.UsageError("give PROGRAM and at least one regression FILE (or --resume DIR)")
    program, files = args[0], args[1:]
    _refuse_swapped(program, files)
    game = regress_game(game_name, config, files)
    settings = RegressSettings.resolve(config, unknown_credit, margin, per_test=per_test, jobs=jobs,
                                       unverified_credit=unverified_credit, count=count)  # fmt: skip
    if Path(program).is_dir():
        if out:
            check_new_folder(Path(out), RegressFolder.KIND)
        with on_cluster(cluster, config, stop) as ex:
            run = _class_run(lambda **kw: regress_class([program], files, game, settings, out=out, entry=config.entry,
                                                        private=private_files(config, *files), executor=ex, stop=stop,
                                                        **kw))  # fmt: skip
        _class_end(run, json_file)
        return
    if out or cluster:
        raise click.UsageError("--out and --cluster are for a class (a folder as PROGRAM); one program runs here")
    command = shlex.join([PYTHON, program]) if program.endswith(".py") and Path(program).is_file() else program
    settings.check()
    engine = ProtocolEngine.from_command(command, "gtp")
    results = []
    parsed = [capped_timelimits(parse_regress("\n".join(read_lines(f, "regression file")), f, game),
                                settings.max_timelimit, f) for f in files]  # each checked first  # fmt: skip
    interpreter = engine.interpreter(settings.python)
    run_by = f", Python {interpreter.describe()}" if interpreter is not None else ""
    for f, commands in zip(files, parsed):
        echo(f"{f}: {program} ({game.title}, {isolation_text(settings)}{run_by})")

        def show(t: RegressTest) -> None:
            echo(test_line(t))
            drawing = failed_board(t, game)
            if drawing:
                echo(drawing)

        result = run_regress(engine, f, game, settings, stop=stop, on_test=show, commands=commands)
        results.append(result)
        if result.stopped:
            echo(f"  stopped {result.stopped}")
        counts = " ".join(f"{s}:{result.symbols.count(s)}" for s in REGRESS_SYMBOLS if s in result.symbols)
        echo(f"  {len(result.counted)} tests counted ({result.counting}), {result.total:.1f}/100 ({counts})")
    if json_file:
        write_json(json_file, [r.to_json() for r in results])
    if stop.is_set():
        reason = stop.reason or "interrupted"
        echo(f"{sentence(reason)}.")
        raise SystemExit(exit_status(reason))
    if not any(t.answer is not None and not t.error for r in results for t in r.tests):  # as grade's: nothing to judge
        ended = next((r.ended for r in results if r.ended), None)
        echo(f"No test got an answer the grader could read{f' (the program ended: {ended})' if ended else ''}.")
        raise SystemExit(1)


def _refuse_swapped(program: str, files: tuple[str, ...]) -> None:
    """One line for a Python file given as a regression FILE, or a regression file as PROGRAM
    (read as GTP, the Python file had failed on its first line that is not a command)."""
    scripts = [f for f in files if Path(f).suffix == ".py"]
    gtp = Path(program).suffix == ".gtp" and Path(program).is_file()
    if gtp and scripts:
        raise GraderError(f"the arguments look swapped: PROGRAM comes first, then the regression FILEs: "
                          f"grader regress {scripts[0]} {program}")  # fmt: skip
    if scripts:
        raise GraderError(f"{scripts[0]} is a Python file, not a regression file: PROGRAM comes first, then the "
                          "regression FILEs (grader regress PROGRAM FILE...)")  # fmt: skip
    if gtp:
        raise GraderError(f"{program} is a regression file, not a GTP program: PROGRAM comes first, then the "
                          "regression FILEs (grader regress PROGRAM FILE...)")  # fmt: skip


def _class_run(start: Callable[..., RegressRun]) -> RegressRun:
    """A class: a line saying what runs and where, then a line per student as it ends."""

    def on_start(folder: RegressFolder, todo: int, recorded: int) -> None:
        settings = folder.settings()
        interpreter = find_interpreter(settings.python)
        run_by = f", .py files by Python {interpreter.describe()}" if interpreter is not None else ""
        echo(f"{len(folder.meta['scripts'])} students on {', '.join(folder.file_names)} ({folder.game.title}, "
                   f"{settings.jobs} at once, {isolation_text(settings)}{run_by})")  # fmt: skip
        echo(f"Run folder: {folder.path}" + (f" ({recorded} files already recorded)" if recorded else ""))

    def on_student(student: StudentRegress) -> None:
        echo(f"  {student.name}: {student.total:.1f}/100  {' '.join(r.symbols for r in student.results)}")

    return start(on_start=on_start, on_student=on_student)


def _class_end(run: RegressRun, json_file: str | None) -> None:
    """The class table, where the results are, and how to resume an interrupted run."""
    echo()
    echo(regress_table(run.students, run.folder.file_names))
    echo(f"Results in {run.folder.path}: {', '.join(run.files)}")
    if json_file:
        write_json(json_file, [st.to_json() for st in run.students])
    if run.interrupted:
        echo(f"{sentence(run.interrupted)}: continue with  grader regress --resume {run.folder.path}")
        raise SystemExit(exit_status(run.interrupted))
