"""Grades for an LMS: a run folder's grades.csv (a class run, a regression class, a graded
tournament) matched to the roster the LMS exported, written as the CSV that LMS imports.

Canvas: its gradebook export (Student, ID, SIS User ID, SIS Login ID, Section, then a column
per assignment, a 'Points Possible' row first) is its roster, and its import reads the same
columns back: a student is found by ID, SIS User ID or SIS Login ID; a new column header makes
a new assignment worth its 'Points Possible'. Moodle: its gradebook export (First name, Last
name, ID number, Institution, Department, Email address, a column per grade item) is its
roster; its CSV import maps one column to a user field (here 'Email address' to the e-mail
address) and the others to a grade item and its feedback."""

from __future__ import annotations

import csv
import io
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import GraderError, RunFolderError
from .text import safe_cell

CANVAS_IDS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
MOODLE_IDS = ("First name", "Last name", "ID number", "Email address")
POINTS_POSSIBLE = "Points Possible"


@dataclass(frozen=True)
class RunGrade:
    """One student's grade in a run folder's grades.csv."""

    name: str
    total: float
    max: float
    complete: bool
    note: str
    policy: str = ""  # how a late policy made the total (the portal's: days late, late days, penalty)
    graded: float | None = None  # the total before that policy (None: no policy applied)


@dataclass(frozen=True)
class RosterStudent:
    """A student of an LMS roster: the columns its import reads back, and every name by which a
    run folder may know the student (a login, an e-mail address or its user part, an ID)."""

    columns: tuple[str, ...]
    keys: frozenset[str]


@dataclass(frozen=True)
class Roster:
    lms: str
    header: tuple[str, ...]
    students: tuple[RosterStudent, ...]


@dataclass
class LmsExport:
    """The CSV text, and the run's students the roster does not name."""

    text: str
    unmatched: list[str]
    incomplete: list[RunGrade]


def _cell(text: str) -> str:
    """A name as the run knows it: grades.csv's quote against spreadsheet formulas taken off."""
    return text[1:] if text[:1] == "'" and text[1:2] in ("=", "+", "-", "@", "\t", "\r") else text


def read_grades(folder: str | Path) -> list[RunGrade]:
    """The grades in ``folder``/grades.csv (its name, total, max, complete and note columns)."""
    path = Path(folder) / "grades.csv"
    try:
        rows = list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))
    except (OSError, UnicodeDecodeError) as e:
        raise RunFolderError(f"cannot read '{path}': {e}: give a run or tournament folder with grades") from None
    out = []
    for n, row in enumerate(rows, 2):
        try:
            out.append(RunGrade(_cell(row["name"]), float(row["total"] or 0), float(row["max"]),
                                row.get("complete", "yes") == "yes", row.get("note") or ""))  # fmt: skip
        except (KeyError, TypeError, ValueError):
            raise RunFolderError(
                f"{path}: line {n} has no name, total and max: write it again with grader report"
            ) from None
    return out


def _rows(text: str, source: str) -> tuple[list[str], list[list[str]]]:
    rows = [r for r in csv.reader(io.StringIO(text.lstrip("\ufeff"))) if any(c.strip() for c in r)]
    if not rows:
        raise GraderError(f"{source}: empty: give the roster the LMS exported")
    return [h.strip() for h in rows[0]], rows[1:]


def _keys(*values: str) -> frozenset[str]:
    keys = set()
    for value in (v.strip().lower() for v in values):
        if value:
            keys.add(value)
            if "@" in value:
                keys.add(value.split("@", 1)[0])
            if ", " in value:  # Canvas's 'Last, First'
                last, first = value.split(", ", 1)
                keys.add(f"{first} {last}")
    return frozenset(keys)


def read_roster(text: str, source: str = "roster") -> Roster:
    """The students of a roster exported by Canvas (its gradebook CSV) or Moodle (its gradebook
    export, or its participants with First name, Last name/Surname and Email address)."""
    header, rows = _rows(text, source)
    at = {h.lower(): i for i, h in enumerate(header)}
    students = []
    if {"student", "id", "sis login id"} <= at.keys():
        for row in rows:
            cells = row + [""] * (len(header) - len(row))
            if cells[0].strip().startswith(POINTS_POSSIBLE) or cells[0].strip() == "Student, Test":
                continue  # Canvas's row of points, and its test student
            columns = tuple(cells[at[c.lower()]].strip() if c.lower() in at else "" for c in CANVAS_IDS)
            students.append(RosterStudent(columns, _keys(*columns[:4])))
        return Roster("canvas", CANVAS_IDS, tuple(students))
    last = at.get("last name", at.get("surname"))
    if "email address" in at and "first name" in at and last is not None:
        for n, row in enumerate(rows, 2):
            cells = row + [""] * (len(header) - len(row))
            email = cells[at["email address"]].strip()
            if "@" not in email:
                raise GraderError(f"{source}: line {n}: {email!r} is not an e-mail address")
            ident = cells[at["id number"]].strip() if "id number" in at else ""
            first, family = cells[at["first name"]].strip(), cells[last].strip()
            username = cells[at["username"]].strip() if "username" in at else ""
            students.append(
                RosterStudent((first, family, ident, email), _keys(email, ident, username, f"{first} {family}"))
            )
        return Roster("moodle", MOODLE_IDS, tuple(students))
    raise GraderError(
        f"{source}: neither Canvas's columns (Student, ID, SIS Login ID) nor Moodle's (First name, Last name, "
        f"Email address) in its header {header}: give the CSV the LMS's gradebook exported"
    )


def roster_file(path: str | Path) -> Roster:
    try:
        return read_roster(Path(path).read_text(encoding="utf-8"), str(path))
    except (OSError, UnicodeDecodeError) as e:
        raise GraderError(f"cannot read the roster '{path}': {e}") from None


def _points(grades: list[RunGrade]) -> float:
    maxima = sorted({g.max for g in grades})
    if len(maxima) > 1:
        raise GraderError(f"the run's grades are out of different maxima ({', '.join(f'{m:g}' for m in maxima)}): "
                          "export runs of one plan")  # fmt: skip
    return maxima[0] if maxima else 100.0


def _match(roster: Roster, grades: list[RunGrade]) -> tuple[dict[int, RunGrade], list[str]]:
    """Each roster student's grade (by row), and the run's names no student answers to. A name
    that is an e-mail address no student answers to is tried by its user part (a Canvas SIS
    Login ID is often the login alone), where no other name of the run has that user part and
    no other grade took that student."""

    def rows(key: str) -> list[int]:
        return [i for i, s in enumerate(roster.students) if key in s.keys]

    names = [g.name.strip().lower() for g in grades]
    users = Counter(n.split("@", 1)[0] for n in names if "@" in n)
    found: dict[int, RunGrade] = {}
    tried: list[tuple[RunGrade, str]] = []
    unmatched = []
    for g, name in zip(grades, names):
        exact = rows(name)
        if len(exact) == 1:
            found[exact[0]] = g
        elif not exact and "@" in name and users[name.split("@", 1)[0]] == 1:
            tried.append((g, name.split("@", 1)[0]))
        else:
            unmatched.append(g.name)
    for g, user in tried:
        by_user = rows(user)
        if len(by_user) == 1 and by_user[0] not in found:
            found[by_user[0]] = g
        else:
            unmatched.append(g.name)
    return found, unmatched


def _number(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".")


def canvas_csv(grades: list[RunGrade], roster: Roster, assignment: str, final_only: bool = False) -> LmsExport:
    """Canvas's gradebook import: its identifying columns, the assignment's column, and the
    'Points Possible' row; a student of the roster without a grade (or, ``final_only``,
    without a final one) has an empty cell (Canvas leaves such a grade as it is)."""
    found, unmatched = _match(roster, grades)
    shown = {i: g for i, g in found.items() if g.complete or not final_only}
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([*CANVAS_IDS, assignment])
    writer.writerow([POINTS_POSSIBLE, "", "", "", "", _number(_points(grades))])
    for i, student in enumerate(roster.students):
        grade = shown.get(i)
        writer.writerow([*(safe_cell(c) for c in student.columns), "" if grade is None else _number(grade.total)])
    return LmsExport(out.getvalue(), unmatched, [g for g in found.values() if not g.complete])


NOTES = ("as graded", "grade", "late policy", "not final")


def canvas_notes(grades: list[RunGrade], roster: Roster, assignment: str) -> str:
    """Beside Canvas's import, a CSV for the instructor (not for Canvas: its importer makes every
    column it does not know an assignment, and writes one titled as a custom column, Notes among
    them, over that column's cells): per roster student with a grade, the total as graded, the
    grade exported, how the late policy made it, and why it is not final."""
    found, _ = _match(roster, grades)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([*CANVAS_IDS, *(f"{assignment} {what}" for what in NOTES)])
    for i, g in sorted(found.items()):
        graded = g.total if g.graded is None else g.graded
        writer.writerow([*(safe_cell(c) for c in roster.students[i].columns), _number(graded), _number(g.total),
                         safe_cell(g.policy), "" if g.complete else safe_cell(g.note or "incomplete")])  # fmt: skip
    return out.getvalue()


def moodle_csv(grades: list[RunGrade], roster: Roster | None, assignment: str, ident: str = "Username",
               final_only: bool = False, absent: Sequence[str] | None = None) -> LmsExport:  # fmt: skip
    """Moodle's grade import: the student's columns (map 'Email address' to the e-mail address;
    without a roster, one ``ident`` column with the run's names: map it to the username, or
    to the e-mail address), the grade, and a feedback column: the total out of the maximum, how
    a late policy made it, and why a grade is not final (``final_only``: such a grade's row is
    left out, and Moodle leaves the grade as it is). Given ``absent`` (the students without a
    grade, as the portal knows them), each student without one keeps a row, as in Canvas's
    import: its grade empty (Moodle reads no grade), its feedback saying there is none; with a
    roster, each of the roster's students without a grade."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    if roster is None:
        writer.writerow([ident, assignment, f"{assignment} feedback"])
        rows = [(g.name, g) for g in grades] + [(name, None) for name in absent or ()]
        for name, g in sorted(rows, key=lambda r: r[0].lower()) if absent is not None else rows:
            if g is None:
                writer.writerow([safe_cell(name), "", NO_GRADE])
            elif g.complete or not final_only:
                writer.writerow([safe_cell(g.name), _number(g.total), safe_cell(_feedback(g))])
        return LmsExport(out.getvalue(), [], [g for g in grades if not g.complete])
    found, unmatched = _match(roster, grades)
    writer.writerow([*MOODLE_IDS, assignment, f"{assignment} feedback"])
    for i, student in enumerate(roster.students):
        g = found.get(i)
        if g is None:
            if absent is not None:
                writer.writerow([*(safe_cell(c) for c in student.columns), "", NO_GRADE])
            continue
        if final_only and not g.complete:
            continue
        writer.writerow([*(safe_cell(c) for c in student.columns), _number(g.total), safe_cell(_feedback(g))])
    return LmsExport(out.getvalue(), unmatched, [g for g in found.values() if not g.complete])


NO_GRADE = "no graded submission"


def _feedback(g: RunGrade) -> str:
    return (f"{_number(g.total)}/{_number(g.max)}" + (f"; {g.policy}" if g.policy else "")
            + ("" if g.complete else f"; not final: {g.note or 'incomplete'}"))  # fmt: skip


def export_grades(folder: str | Path, lms: str, roster: str | Path | None = None,
                  assignment: str | None = None) -> LmsExport:  # fmt: skip
    """``grader export canvas|moodle``: a run folder's grades as the CSV ``lms`` imports. A grade
    that is not final (an interrupted run's student, not all of whose tests ran) is left out:
    an empty cell, which the LMS leaves as it is, never a total of the tests that ran."""
    grades = read_grades(folder)
    name = assignment or Path(folder).resolve().name
    read = roster_file(roster) if roster is not None else None
    if read is not None and read.lms != lms:
        raise GraderError(
            f"the roster '{roster}' is {read.lms.capitalize()}'s: give the roster {lms.capitalize()} exported"
        )
    if lms == "canvas":
        if read is None:
            raise GraderError("Canvas finds students by its IDs: give --roster, its gradebook export (Grades > Export)")
        return canvas_csv(grades, read, name, final_only=True)
    return moodle_csv(grades, read, name, final_only=True)
