"""``grader export canvas|moodle``: a run folder's grades, or a portal assignment's, as the CSV an LMS imports."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import click

from ..errors import GraderError
from ..runs.lms import export_grades
from ..runs.text import plural
from .options import echo, fail_cleanly


@click.group("export")
def export_group() -> None:
    """Write a run folder's grades (a class run of grader grade, a class of grader regress, a
    tournament run with --grade), or a portal assignment's (--portal COURSE: each student's
    counted submission, the late policy applied), as the CSV an LMS imports, matched to the
    roster it exported.

    \b
    Examples:
      grader export canvas runs/lab5 --roster canvas-gradebook.csv --out lab5-canvas.csv
      grader export moodle runs/lab5 --roster moodle-grades.csv --out lab5-moodle.csv
      grader export moodle --portal course/ --assignment othello --out othello-moodle.csv
      grader export moodle --portal course/ --out grades/     # every assignment, a CSV each
    """


def _options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """FOLDER or --portal, --assignment, --database, --column and --out, which both commands take."""
    fn = click.option("--out", type=click.Path(dir_okay=False), default=None, metavar="FILE",
                      help="Where to write the CSV (default: print it).")(fn)  # fmt: skip
    fn = click.option("--column", default=None, metavar="NAME",
                      help="With --portal: the grade's column (default: the assignment's title).")(fn)  # fmt: skip
    fn = click.option("--database", default=None, metavar="URL",
                      help="With --portal: the portal's database (default: SQLite in COURSE/.portal/).")(fn)  # fmt: skip
    fn = click.option("--assignment", default=None, metavar="NAME",
                      help="The assignment's column (default: the run folder's name); with --portal, the "
                           "course.yaml assignment to export (default: every one, a CSV each in the folder "
                           "--out).")(fn)  # fmt: skip
    fn = click.option("--portal", "course", default=None, metavar="COURSE", type=click.Path(file_okay=False),
                      help="Export a portal assignment from the course's database instead of a run folder.")(fn)  # fmt: skip
    return click.argument("folder", required=False, type=click.Path(exists=True, file_okay=False))(fn)


def _save(text: str, out: str) -> None:
    try:
        Path(out).write_text(text, encoding="utf-8")
    except OSError as e:
        raise click.ClickException(f"cannot write '{out}': {e}") from None
    echo(f"Wrote {out}")


def _write(lms: str, folder: str | None, course: str | None, roster: str | None, assignment: str | None,
           database: str | None, column: str | None, out: str | None, notes: str | None = None) -> None:  # fmt: skip
    if (folder is None) == (course is None):
        raise GraderError("give a run folder or --portal COURSE (one of them)")
    for given, option in ((out, "--out"), (notes, "--notes")):
        if given is not None and roster is not None and Path(given).resolve() == Path(roster).resolve():
            raise GraderError(f"{option} {given} is the roster itself (--roster): write the grades to another file")
    if course is None and (database or column or notes):
        raise GraderError("--database, --column and --notes go with --portal COURSE: leave them out for a run folder")
    if course is not None and assignment is None:
        _write_all(lms, course, roster, database, column, out, notes)
        return
    if course is not None:
        assert assignment is not None
        from ..portal import check_extra

        check_extra()
        from ..portal.course.exports import export_course_grades

        made = export_course_grades(course, lms, assignment, database, roster, column)
        text, unmatched, incomplete, note_text = made.csv, made.unmatched, made.not_final, made.notes
    else:
        assert folder is not None
        export = export_grades(folder, lms, roster, assignment)
        text, unmatched, incomplete, note_text = export.text, export.unmatched, export.incomplete, None
    if out is None:
        click.echo(text, nl=False)
    else:
        _save(text, out)
    if note_text is not None:
        if notes is None and out is not None:
            notes = str(Path(out).with_name(Path(out).stem + "-notes.csv"))
        if notes is not None:
            _save(note_text, notes)
    for name in unmatched:
        echo(f"Warning: '{name}' is not in the roster (or is twice): their grade is not in the CSV", err=True)
    for grade in incomplete:
        echo(f"Warning: {grade.name}'s grade is not final: {grade.note or 'incomplete'}", err=True)
    if incomplete and folder is not None:  # an interrupted run: its unfinished students are left out
        command = next((c for meta, c in (("regress.json", "regress"), ("tournament.json", "tournament"))
                        if (Path(folder) / meta).is_file()), "grade")  # fmt: skip
        raise click.ClickException(
            f"{plural(len(incomplete), 'grade is', 'grades are')} not final, left out of the CSV (empty): "
            f"finish the run (grader {command} --resume {folder}) and export it again"
        )


def _write_all(lms: str, course: str, roster: str | None, database: str | None, column: str | None,
               out: str | None, notes: str | None) -> None:  # fmt: skip
    """--portal without --assignment: every assignment's CSV (and Canvas's notes) in the folder --out."""
    if out is None:
        raise GraderError("--portal without --assignment exports every assignment, a CSV each: give --out FOLDER "
                          "(or --assignment NAME for one)")  # fmt: skip
    if column is not None or notes is not None:
        raise GraderError("--column and --notes are one assignment's: give --assignment NAME with them")
    from ..portal import check_extra

    check_extra()
    from ..portal.course.course import load_course
    from ..portal.course.exports import export_course_grades

    folder = Path(out)
    if folder.exists() and not folder.is_dir():
        raise GraderError(f"--out {out} is a file: give a folder for every assignment's CSV (made if missing)")
    names = list(load_course(course).assignments)
    made = {name: export_course_grades(course, lms, name, database, roster) for name in names}  # all, or none
    folder.mkdir(parents=True, exist_ok=True)
    for name, grades in made.items():
        _save(grades.csv, str(folder / f"{name}-{lms}.csv"))
        if grades.notes is not None:
            _save(grades.notes, str(folder / f"{name}-{lms}-notes.csv"))
        for who in grades.unmatched:
            echo(f"Warning: {name}: '{who}' is not in the roster (or is twice): their grade is not in the CSV",
                 err=True)  # fmt: skip
        for grade in grades.not_final:
            echo(f"Warning: {name}: {grade.name}'s grade is not final: {grade.note or 'incomplete'}", err=True)
    echo(f"Exported {plural(len(names), 'assignment', 'assignments')} for {lms.capitalize()} to {folder}")


@export_group.command("canvas")
@_options
@click.option("--roster", required=True, type=click.Path(exists=True, dir_okay=False), metavar="CSV",
              help="Canvas's gradebook export (Grades > Export): its students and their IDs.")  # fmt: skip
@click.option("--notes", default=None, type=click.Path(dir_okay=False), metavar="FILE",
              help="With --portal: where to write the notes CSV (default: beside --out, as OUT-notes.csv).")  # fmt: skip
@fail_cleanly
def canvas(folder: str | None, course: str | None, roster: str, assignment: str | None, database: str | None,
           column: str | None, out: str | None, notes: str | None) -> None:  # fmt: skip
    """The grades of FOLDER as Canvas's gradebook import (Grades > Import): Student, ID, SIS User
    ID, SIS Login ID, Section, the assignment's column, and the 'Points Possible' row. A student
    of the run is found in the roster by SIS Login ID, SIS User ID, ID or name; a roster student
    without a grade gets an empty cell, which Canvas leaves as it is. Name an existing
    assignment's column as Canvas exports it ('Lab 5 (1234)') to fill it; another name makes a
    new assignment.

    With --portal COURSE, the grades are the portal assignment's: each student's counted
    submission (latest or best) after the late policy (late days, penalty, extensions), found
    in the roster by e-mail (or its user part) as SIS Login ID. Canvas would read any other
    column as an assignment, so how the policy made each grade goes to a notes CSV beside it
    (--notes), which is not imported.

    \b
    Examples:
      grader export canvas runs/lab5 --roster canvas-gradebook.csv --assignment "Lab 5 (1234)" --out lab5.csv
      grader export canvas --portal course/ --assignment othello --roster canvas-gradebook.csv --out othello.csv
    """
    _write("canvas", folder, course, roster, assignment, database, column, out, notes)


@export_group.command("moodle")
@_options
@click.option("--roster", default=None, type=click.Path(exists=True, dir_okay=False), metavar="CSV",
              help="Moodle's gradebook export (or its participants): First name, Last name, Email address.")  # fmt: skip
@fail_cleanly
def moodle(folder: str | None, course: str | None, roster: str | None, assignment: str | None,
           database: str | None, column: str | None, out: str | None) -> None:  # fmt: skip
    """The grades of FOLDER as Moodle's CSV grade import (Grades > Import > CSV file): First
    name, Last name, ID number, Email address, the grade and a feedback column (the total out of
    the maximum, and why a grade is not final). On import, map 'Email address' to the e-mail
    address, the grade to the grade item and the feedback to its feedback. Without --roster,
    one 'Username' column holds the run's names (students' folders named by their usernames).

    With --portal COURSE, the grades are the portal assignment's: each student's counted
    submission (latest or best) after the late policy (late days, penalty, extensions); without
    --roster, one 'Email address' column names them. The feedback says how the policy made
    each grade ('2 days late: 1 day of late days spent, 10% penalty (graded 40)').

    \b
    Examples:
      grader export moodle runs/lab5 --roster moodle-grades.csv --out lab5-moodle.csv
      grader export moodle --portal course/ --assignment othello --out othello-moodle.csv
    """
    _write("moodle", folder, course, roster, assignment, database, column, out)
