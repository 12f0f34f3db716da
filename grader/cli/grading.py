"""Grading commands: ``grader grade``, ``report``, ``rejudge``, ``gradescope`` and ``check``."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any, Callable

import click

from ..config import load_config
from ..errors import GraderError
from ..files import check_output_file, write_json
from ..grading import gradescope, report
from ..grading.exports import write_exports
from ..grading.judge import SYMBOL_TABLE
from ..grading.rejudge import rejudge
from ..grading.results import Settings, TestResult
from ..grading.run import ClassRun, grade_class
from ..grading.run import grade as grade_script
from ..grading.runfolder import RunFolder
from ..labs import gradescope_results
from ..regression.runs import (
    RegressFolder,
    regress_table,
    rejudge_regress,
    student_text,
    write_regress_exports,
)
from ..runs.changes import GradeChange
from ..runs.folders import check_new_folder
from ..runs.text import fmt_credit, plural, sort_results
from ..stop import Stop, exit_status
from .options import (
    backend_option,
    chosen_game,
    chosen_plan,
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
    plan_options,
    private_files,
    scoring_option,
    seed_option,
    sentence,
    stoppable,
    time_limit_option,
)

# --- grade -----------------------------------------------------------------------------

_SYMBOL_HELP = "\n".join(f"  {s.char}  {s.meaning} ({fmt_credit(s.credit)})" for s in SYMBOL_TABLE.values())


@click.command(
    help=f"""Grade scripts on the lab's 100 tests (or the boards in --boards FILE).

    Each SCRIPT is run as 'SCRIPT BOARD TOKEN' (Python files with the grader's Python) under
    the limits; its last 'score' line and its last integer are judged against the exact
    solver, test by test, with a total out of the number of tests:

    \b
{_SYMBOL_HELP}

    A crash, no integer, or a last integer that is not a legal move fails the test (0).

    A DIR is a class: each script in it is a student, and so is each sub-folder holding one
    script. A class run writes a run folder (results as they happen, grades.csv,
    results.json, junit.xml, report.html) that --resume continues after an interruption.

    \b
    Examples:
      grader grade submissions/negamax.py --seed 7
      grader grade class-folder/ --seed 7 --out runs/lab5
      grader grade --resume runs/lab5
    """,
)
@click.argument("scripts", nargs=-1, metavar="SCRIPT_OR_DIR...")
@seed_option("standard plan's random boards")
@time_limit_option("Seconds per test (default: config limits.wall_seconds, 10).")
@jobs_option("Tests at once, over all scripts")
@plan_options(
    "A plan file (lab5.plan), or a plan of the game instead of 'standard' (othello: speed; tictactoe: exhaustive)."
)
@scoring_option
@game_option
@json_option("the full results")
@click.option(
    "--stop-on-error", is_flag=True, help="Stop a script's run at its first failed test (crash, no move, illegal move)."
)
@folder_options("New run folder for the results as they happen (default for a class: runs/DATE_TIME).",
                "Continue the run in this folder: only missing tests (or changed scripts) are run.")  # fmt: skip
@click.option(
    "--sort", type=click.Choice(["name", "total"]), default="name", show_default=True, help="Order of the class table."
)
@backend_option
@cluster_option
@config_option
@fail_cleanly
@stoppable
def grade(scripts: tuple[str, ...], seed: int | None, time_limit: float | None, jobs: int | None,
          boards_file: str | None, plan_name: str | None, scoring: str | None, game_name: str | None,
          json_file: str | None, stop_on_error: bool, out: str | None, resume: str | None, sort: str,
          backend: str | None, cluster: str | None, config_path: str | None, stop: Stop) -> None:  # fmt: skip
    config = load_config(config_path)
    if json_file:
        check_output_file(json_file)
    if resume:
        if (
            seed is not None
            or boards_file
            or plan_name
            or scoring
            or game_name
            or time_limit
            or stop_on_error
            or out
            or backend
        ):
            raise click.UsageError(
                "--resume continues a run with its own plan and settings: drop --seed, --boards, --plan, --scoring, "
                "--game, --time-limit, --stop-on-error, --backend and --out, or start a new run"
            )
        with on_cluster(cluster, config, stop) as ex:
            run = _class_run(
                lambda **kw: grade_class(scripts, resume=resume, settings=Settings(jobs=jobs) if jobs else None,
                                         entry=config.entry, private=private_files(config), executor=ex, stop=stop, **kw))  # fmt: skip
        results, single = run.results, False
    else:
        if not scripts:
            raise click.UsageError("give the scripts or folders to grade (or --resume DIR)")
        game = chosen_game(game_name, config)
        single = len(scripts) == 1 and not Path(scripts[0]).is_dir()
        plan = chosen_plan(game, plan_name, boards_file, seed, config, graded=not single)
        settings = Settings.resolve(
            config, game, plan, time_limit, scoring, jobs=jobs, stop_on_error=stop_on_error, backend=backend
        )
        if out:
            check_new_folder(Path(out))
        with on_cluster(cluster, config, stop) as ex:
            if single:
                header = _grading_line(scripts[0], plan, settings) + (f"\nRun folder: {out}" if out else "")
                results = [grade_script(scripts[0], plan, settings, out=out, private=private_files(config, boards_file),
                                        on_start=lambda: echo(header), on_test=_echo_symbol, executor=ex,
                                        stop=stop, entry=config.entry)]  # fmt: skip
                echo()
                run = None
            else:
                run = _class_run(lambda **kw: grade_class(scripts, plan, settings, out=out, entry=config.entry,
                                                          private=private_files(config, boards_file), executor=ex,
                                                          stop=stop, **kw))  # fmt: skip
                results = run.results
    if single:
        echo(report.summary(results[0]))
        echo()
        if results[0].is_speed:
            echo(report.levels_table(results[0]))
            echo()
        echo(report.offending_report(results[0]))
        echo()
    else:
        echo()
        echo(report.class_table(sort_results(results, sort)))
    if run is not None or out:
        where = run.folder.path if run is not None else out
        echo(f"Results in {where}: grades.csv, results.json, junit.xml, report.html")
    if json_file:
        write_json(json_file, report.results_json(results))
        echo(f"Results written to {json_file}")
    if single and results[0].game_hint:
        echo(sentence(results[0].game_hint))
        raise SystemExit(1)
    interrupted = run.interrupted if run is not None else (results[0].stopped if results[0].interrupted else None)
    if interrupted:
        where = run.folder.path if run is not None else out
        hint = f": continue with  grader grade --resume {where}" if where else "."
        echo(f"{sentence(interrupted)}{hint}")
        raise SystemExit(exit_status(interrupted))


def _grading_line(what: str, plan: Any, settings: Settings) -> str:
    jobs = f"{settings.jobs} job{'s' if settings.jobs > 1 else ''}"
    return (f"Grading {what}: {len(plan.positions)} tests ({plan.source}), time limit "
            f"{settings.limits.wall_seconds:g} s, {jobs}, scoring {settings.scoring}, {isolation_text(settings)}, "
            f"{plan.game.backend(settings.backend)} solver")  # fmt: skip


def _echo_symbol(test: TestResult) -> None:
    echo(test.symbol, nl=False)
    sys.stdout.flush()


def _class_run(start: Callable[..., ClassRun]) -> ClassRun:
    """Run a class: a line saying what runs, a line per student as it finishes and, on a
    terminal, a progress bar."""
    bar = _ProgressBar(enabled=sys.stdout.isatty())

    def on_start(folder: RunFolder, tests: int, recorded: int) -> None:
        students = plural(len(folder.meta["scripts"]), "student", "students")
        echo(_grading_line(students, folder.plan, folder.settings()))
        echo(f"Run folder: {folder.path}" + (f" ({recorded} tests already recorded)" if recorded else ""))
        bar.total = tests

    try:
        return start(on_start=on_start, on_test=lambda name, test: bar.advance(),
                     on_student=lambda result: bar.echo(report.student_line(result)))  # fmt: skip
    finally:
        bar.close()


class _ProgressBar:
    """A one-line progress bar on a terminal, kept below the lines printed above it."""

    def __init__(self, enabled: bool):
        self.total, self.done, self.enabled = 0, 0, enabled

    def advance(self) -> None:
        self.done += 1
        self._draw()

    def echo(self, line: str) -> None:
        if self.enabled:
            click.echo("\r\033[K", nl=False)
        echo(line)
        self._draw()

    def _draw(self) -> None:
        if self.enabled and self.total > 0:
            filled = 30 * self.done // self.total
            click.echo(f"\r[{'#' * filled}{'.' * (30 - filled)}] {self.done}/{self.total} tests", nl=False)
            sys.stdout.flush()

    def close(self) -> None:
        if self.enabled:
            click.echo("\r\033[K", nl=False)


@click.command("report")
@click.argument("run_dir", type=click.Path(file_okay=False))
@click.option(
    "--sort", type=click.Choice(["name", "total"]), default="name", show_default=True, help="Order of the class table."
)
@click.option(
    "--student", default=None, metavar="NAME", help="Print what this student may see (private tests as counts) instead."
)
@click.option("--full", is_flag=True, help="With --student: show the private tests in full too.")
@fail_cleanly
def report_command(run_dir: str, sort: str, student: str | None, full: bool) -> None:
    """Write grades.csv, results.json, junit.xml and report.html again from a run folder; or,
    with --student NAME, print that student's report: each public test in full, private
    tests as counts only (unless --full). Records changed after the grader wrote them fail
    their seal: they are left out, the table says so, and the exit status is 1.

    \b
    Examples:
      grader report runs/lab5
      grader report runs/lab5 --student alice
    """
    if (Path(run_dir) / RegressFolder.META).exists():
        _regress_report(RegressFolder.open(run_dir), student, sort, full)
        return
    folder = RunFolder.open(run_dir)
    results = folder.results()
    if student is not None:
        found = {r.name: r for r in results}
        if student not in found:
            raise GraderError(f"no student {student!r} in {run_dir}: the students are {', '.join(sorted(found))}")
        echo(report.student_report(found[student], full))
    else:
        echo(report.class_table(sort_results(results, sort)))
        files = write_exports(folder.path, results)
        echo(f"Results in {folder.path}: {', '.join(files)}")
    if folder.tampered:
        echo(f"{sentence(folder.tampering() or '')}.")
        raise SystemExit(1)


def _regress_report(folder: RegressFolder, student: str | None, sort: str, full: bool) -> None:
    """'grader report' of a regression run: the class table and exports, or one student's tests
    (the files' private tests as counts only, unless ``full``)."""
    students = sort_results(folder.results(), sort)
    files = folder.file_names
    if student is not None:
        found = {s.name: s for s in students}
        if student not in found:
            raise GraderError(f"no student {student!r} in {folder.path}: the students are {', '.join(sorted(found))}")
        echo(student_text(found[student], folder.game, None if full else folder.private_tests()))
    else:
        echo(regress_table(students, files))
        echo(f"Results in {folder.path}: {', '.join(write_regress_exports(folder.path, students, files, folder.game))}")
    if folder.tampered:
        echo(f"{sentence(folder.tampering() or '')}.")
        raise SystemExit(1)


@click.command("rejudge")
@click.argument("run_dir", type=click.Path(file_okay=False))
@click.option("--unknown-credit", type=click.FloatRange(0, 1), default=None,
              help="A regression run (grader regress): the new credit of a 'solve' answered 'unknown'.")  # fmt: skip
@fail_cleanly
def rejudge_command(run_dir: str, unknown_credit: float | None) -> None:
    """Judge every recorded test of RUN_DIR again from what the scripts printed and how they
    ended, with the current rules and exact answers, without running a script; rewrite its
    records and exports, and list each grade that changed and why. (Running the scripts
    again is 'grader grade --resume' or a new run.) A regression run's folder ('grader
    regress' of a class) is judged again from each recorded answer.

    \b
    Examples:
      grader rejudge runs/lab5
      grader rejudge runs/lab2 --unknown-credit 0.5
    """
    if (Path(run_dir) / RegressFolder.META).exists():
        again = rejudge_regress(run_dir, unknown_credit)
        echo(f"Re-judged {again.tests} tests of {len(again.run.students)} students: "
                   f"{again.tests_changed} verdicts changed, {len(again.changes)} grades changed.")  # fmt: skip
        _changes(again.changes)
        echo(f"\nResults in {again.run.folder.path}: {', '.join(again.run.files)}")
        return
    if unknown_credit is not None:
        raise click.UsageError("--unknown-credit is for a regression run's folder (grader regress)")
    done = rejudge(run_dir)
    if done.adopted:
        echo(f"{run_dir} was written before records were sealed: its records are sealed now, as they were found")
    echo(f"Re-judged {done.tests} tests of {len(done.results)} students: {done.tests_changed} verdicts changed, "
               f"{len(done.changes)} grades changed.")  # fmt: skip
    if done.skipped:
        echo(
            f"{done.skipped} damaged record(s) were left out: 'grader grade --resume {run_dir}' runs those tests again"
        )
    _changes(done.changes)
    echo(f"\nResults in {done.folder.path}: {', '.join(done.files)}")


def _changes(changes: list[GradeChange]) -> None:
    for c in changes:
        echo(f"\n{c.student}: {c.before:g} -> {c.after:g} of {c.max_total}")
        for t in c.tests:
            echo(f"  test {t.index}: {t.before} -> {t.after}: {t.why}")


# --- gradescope ---------------------------------------------------------------------------


@click.command("gradescope")
@click.option(
    "--submission",
    type=click.Path(file_okay=False),
    default=gradescope.SUBMISSION,
    show_default=True,
    help="Folder holding the student's files.",
)
@click.option(
    "--results",
    "results_file",
    type=click.Path(dir_okay=False),
    default=gradescope.RESULTS,
    show_default=True,
    help="Where to write Gradescope's results.json.",
)
@seed_option("standard plan's random boards")
@plan_options("A plan file (lab5.plan), or a plan of the game instead of 'standard'; a GTP lab: its regression file.")
@click.option(
    "--visibility",
    type=click.Choice(gradescope.VISIBILITIES),
    default="visible",
    show_default=True,
    help="When students see the test results.",
)
@backend_option
@game_option
@config_option
@fail_cleanly
def gradescope_command(submission: str, results_file: str, seed: int | None, boards_file: str | None,
                       plan_name: str | None, visibility: str, backend: str | None, game_name: str | None,
                       config_path: str | None) -> None:  # fmt: skip
    """Grade the submission in a Gradescope autograder and write its results.json.

    The student's folder must hold one script (or set 'entry' in config.yaml). Whatever the
    script does, results.json is written; the exit status is non-zero only when it cannot be.
    A GTP lab (Gomoku) runs the student's program on the regression file given as --plan:
    the tests its '# grader: public tests' line names are shown in full, the others only by
    their verdict until grades are published.

    \b
    Examples (run_autograder):
      cd /autograder/source && grader gradescope --config config.yaml
      cd /autograder/source && grader gradescope --game gomoku --plan lab2.gtp
    """
    start = time.monotonic()
    config = load_config(config_path)
    check_output_file(results_file, make_parent=True)
    data = gradescope_results(submission, config, game_name=game_name, plan_name=plan_name, boards_file=boards_file,
                              seed=seed, backend=backend, visibility=visibility,
                              private=private_files(config, boards_file), started=start)  # fmt: skip
    write_json(results_file, data)
    echo(data["output"])
    echo(f"\nResults written to {results_file}")
