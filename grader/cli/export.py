"""``grader export canvas|moodle``: a run folder's grades as the CSV an LMS imports."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import click

from ..runs.lms import export_grades
from .options import echo, fail_cleanly


@click.group("export")
def export_group() -> None:
    """Write a run folder's grades (a class run of grader grade, a class of grader regress, a
    tournament run with --grade) as the CSV an LMS imports, matched to the roster it exported.

    \b
    Examples:
      grader export canvas runs/lab5 --roster canvas-gradebook.csv --out lab5-canvas.csv
      grader export moodle runs/lab5 --roster moodle-grades.csv --out lab5-moodle.csv
    """


def _options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """FOLDER, --assignment and --out, which both commands take."""
    fn = click.option("--out", type=click.Path(dir_okay=False), default=None, metavar="FILE",
                      help="Where to write the CSV (default: print it).")(fn)  # fmt: skip
    fn = click.option("--assignment", default=None, metavar="NAME",
                      help="The assignment's column (default: the run folder's name).")(fn)  # fmt: skip
    return click.argument("folder", type=click.Path(exists=True, file_okay=False))(fn)


def _write(folder: str, lms: str, roster: str | None, assignment: str | None, out: str | None) -> None:
    export = export_grades(folder, lms, roster, assignment)
    if out is None:
        click.echo(export.text, nl=False)
    else:
        try:
            Path(out).write_text(export.text, encoding="utf-8")
        except OSError as e:
            raise click.ClickException(f"cannot write '{out}': {e}") from None
        echo(f"Wrote {out}")
    for name in export.unmatched:
        echo(f"Warning: '{name}' is not in the roster (or is twice): their grade is not in the CSV", err=True)
    for grade in export.incomplete:
        echo(f"Warning: {grade.name}'s grade is not final: {grade.note or 'incomplete'}", err=True)


@export_group.command("canvas")
@_options
@click.option("--roster", required=True, type=click.Path(exists=True, dir_okay=False), metavar="CSV",
              help="Canvas's gradebook export (Grades > Export): its students and their IDs.")  # fmt: skip
@fail_cleanly
def canvas(folder: str, roster: str, assignment: str | None, out: str | None) -> None:
    """The grades of FOLDER as Canvas's gradebook import (Grades > Import): Student, ID, SIS User
    ID, SIS Login ID, Section, the assignment's column, and the 'Points Possible' row. A student
    of the run is found in the roster by SIS Login ID, SIS User ID, ID or name; a roster student
    without a grade gets an empty cell, which Canvas leaves as it is. Name an existing
    assignment's column as Canvas exports it ('Lab 5 (1234)') to fill it; another name makes a
    new assignment.

    \b
    Example:
      grader export canvas runs/lab5 --roster canvas-gradebook.csv --assignment "Lab 5 (1234)" --out lab5.csv
    """
    _write(folder, "canvas", roster, assignment, out)


@export_group.command("moodle")
@_options
@click.option("--roster", default=None, type=click.Path(exists=True, dir_okay=False), metavar="CSV",
              help="Moodle's gradebook export (or its participants): First name, Last name, Email address.")  # fmt: skip
@fail_cleanly
def moodle(folder: str, roster: str | None, assignment: str | None, out: str | None) -> None:
    """The grades of FOLDER as Moodle's CSV grade import (Grades > Import > CSV file): First
    name, Last name, ID number, Email address, the grade and a feedback column (the total out of
    the maximum, and why a grade is not final). On import, map 'Email address' to the e-mail
    address, the grade to the grade item and the feedback to its feedback. Without --roster,
    one 'Username' column holds the run's names (students' folders named by their usernames).

    \b
    Example:
      grader export moodle runs/lab5 --roster moodle-grades.csv --out lab5-moodle.csv
    """
    _write(folder, "moodle", roster, assignment, out)
