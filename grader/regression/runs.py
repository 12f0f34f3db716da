"""A class on GTP regression files: every student's program on every file, recorded in a run
folder as each file ends, continued with ``resume``, judged again by ``rejudge_regress``, and
exported (grades.csv, results.json, junit.xml, report.html).

    regress.json   grader version, creation time, the game, the settings, each file's text
                   (the run keeps its own copy: a file changed later changes nothing), and
                   each student's program with its content hash
    results.jsonl  one sealed line per finished (student, file): the whole RegressResult

A run killed at any moment loses at most the files that were running; ``resume`` runs only
the (student, file) pairs not recorded, or whose program changed.
"""

from __future__ import annotations

import csv
import io
import json
import re
import warnings
import xml.etree.ElementTree as ET
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Collection, Mapping, Sequence

from tabulate import tabulate

from ..engines.programs import PYTHON, ProtocolEngine
from ..errors import GraderError, GraderWarning
from ..execution.executor import Executor, Worker, interrupt_reason, using
from ..files import read_lines, write_files
from ..games import Game, get_game
from ..runs.changes import GradeChange, TestChange
from ..runs.folders import ClassResults, StudentFolder, default_path
from ..runs.submissions import Submission, find_submissions
from ..runs.text import safe_cell, xml_text
from ..stop import Stop
from .format import Command, capped_timelimits, parse_regress, public_tests
from .html import regress_report_html
from .judge import answered_move, position_of, rejudge_test, solve_file
from .plans import regress_game
from .regress import ENDED, STDERR_ENDS, run_commands, run_regress
from .results import REGRESS_SYMBOLS, RegressResult, RegressSettings, RegressTest, StudentRegress
from .solutions import Solutions


def student_program(sub: Submission) -> ProtocolEngine:
    """A student's GTP program: its script with the files of its own folder (a file given on
    its own: that file alone), run with the configured Python (.py) or as an executable;
    GraderError when there is none to run."""
    script = sub.script()
    if script.suffix != ".py" and script.entry not in script.executables:
        raise GraderError(f"'{script.origin}' is neither a .py file nor executable: a GTP program must be one of them")
    argv = (PYTHON, f"{{dir}}/{script.entry}") if script.suffix == ".py" else (f"{{dir}}/{script.entry}",)
    return ProtocolEngine.made(argv, "gtp", script, None, script.origin, None, str(Path(script.origin).parent))


def regress_submission(sub: Submission, files: Sequence[str | Path], game: Game,
                       settings: RegressSettings | None = None, private: Sequence[str | Path] = (),
                       program: ProtocolEngine | None = None) -> StudentRegress:  # fmt: skip
    """One student's program on every file, here (a Gradescope container): what a class run
    gives that student, without a run folder, as strictly isolated (GraderError where the
    program could read the files or ``private``, config say). A student with no program to
    run gets the reason as its ``problem`` and a total of 0. ``program``: the command that
    starts it in its folder, where the student named one (else its script, ``student_program``).
    The tests a file keeps private run in a program of their own (``run_regress``'s ``apart``)."""
    settings = settings or RegressSettings()
    settings.check()
    settings.sandbox_mechanism(
        [*([sub.folder or sub.path] if sub.path else []), *map(Path, files), *map(Path, private)]
    )
    student = StudentRegress(sub.name, str(sub.path) if sub.path else None, problem=sub.problem)
    if sub.path is None:
        return student
    try:
        program = program or student_program(sub)
    except GraderError as e:
        student.problem = str(e)
        return student
    student.results = [run_regress(program, f, game, settings, apart=True) for f in files]
    return student


class RegressFolder(StudentFolder):
    """A regression run's folder (see the module's docstring)."""

    META, LINES, KIND, WRITER = "regress.json", "results.jsonl", "regression run", "grader regress"
    REQUIRED = ("game", "settings", "files", "scripts")

    @classmethod
    def create(cls, path: str | Path, game: Game, files: Sequence[tuple[str, str]],
               settings: RegressSettings) -> RegressFolder:  # fmt: skip
        """A new folder for a run of ``files`` (name, text) in ``game`` with ``settings``."""
        meta = {"game": game.name, "settings": settings.to_json(), "scripts": {},
                "files": [{"name": name, "text": text} for name, text in files]}  # fmt: skip
        return cls._create(path, meta)

    def _check(self) -> None:
        self.game
        self.settings()
        self.files()
        self.submissions()

    @property
    def game(self) -> Game:
        return get_game(self.meta["game"])

    def settings(self, jobs: int | None = None) -> RegressSettings:
        return RegressSettings.from_json(self.meta["settings"], jobs)

    @property
    def file_names(self) -> list[str]:
        """The regression files' names, in the run's order."""
        return [f["name"] for f in self.meta["files"]]

    def files(self) -> list[tuple[str, list[Command]]]:
        """Each file's name and commands, as the run copied them."""
        return [(f["name"], parse_regress(f["text"], f["name"])) for f in self.meta["files"]]

    def private_tests(self) -> dict[str, frozenset[int]]:
        """Each file's private tests: those its '# grader: public tests' line leaves out, all
        of them in a file without that line (as Gradescope keeps them)."""
        out = {}
        for f in self.meta["files"]:
            commands = parse_regress(f["text"], f["name"])
            shown = public_tests(f["text"]) or frozenset()
            out[f["name"]] = frozenset(c.number for c in commands if c.number is not None) - shown
        return out

    def append(self, name: str, digest: str | None, index: int, result: RegressResult) -> None:
        """Record a student's run of file ``index`` (0-based)."""
        self._append({"student": name, "sha256": digest, "file": index, "result": result.to_json()})

    def recorded(self) -> dict[tuple[str, int], RegressResult]:
        """The runs recorded for each student's current program, by (student, file index)."""
        out = {}
        for r in self.current_records():
            try:
                out[(r["student"], int(r["file"]))] = RegressResult.from_json(r["result"])
            except (KeyError, TypeError, ValueError):
                continue  # a damaged record: the file is run again
        return out

    def replace_results(self, records: list[tuple[str, str | None, int, RegressResult]]) -> None:
        """Replace every record by these (student, program digest, file index, result), sealed."""
        self._rewrite([{"student": name, "sha256": digest, "file": i, "result": result.to_json()}
                       for name, digest, i, result in records])  # fmt: skip

    def results(self) -> list[StudentRegress]:
        """Each student's results as recorded, files in order (for reports)."""
        recorded, count = self.recorded(), len(self.meta["files"])
        out = []
        for sub in self.submissions():
            results = [recorded[(sub.name, i)] for i in range(count) if (sub.name, i) in recorded]
            missing = 0 if sub.problem else count - len(results)
            out.append(StudentRegress(sub.name, str(sub.path) if sub.path else None, results, sub.problem, missing))
        return out


@dataclass
class RegressRun(ClassResults[RegressFolder, StudentRegress]):
    """A class run on regression files, in its folder: each student's results as recorded."""

    @property
    def students(self) -> list[StudentRegress]:
        return self.results


def regress_class(paths: Sequence[str | Path] = (), files: Sequence[str | Path] = (), game: Game | None = None,
                  settings: RegressSettings | None = None, *, out: str | Path | None = None,
                  resume: str | Path | None = None, entry: str | None = None, private: Sequence[str | Path] = (),
                  on_start: Callable[[RegressFolder, int, int], None] | None = None,
                  on_student: Callable[[StudentRegress], None] | None = None, executor: Executor | None = None,
                  stop: Stop | None = None, exports: bool = True) -> RegressRun:  # fmt: skip
    """Every student under ``paths`` (script files, folders of them, folders of student
    folders: as ``grade`` finds them) on every regression file, ``settings.jobs`` programs at
    once, each (student, file) recorded in a run folder as it ends.

    ``out`` is the new run folder (default ``runs/DATE_TIME``); ``resume`` continues a run
    with its own files, game and settings (``settings.jobs`` may change), running only what is
    not recorded and the files of students whose program changed (``paths`` may add
    students). ``on_start(folder, files to run, files recorded before)`` is called once the
    folder is ready, ``on_student`` as each student's last file ends. The exports
    (grades.csv, results.json, junit.xml, report.html) are written at the end unless
    ``exports`` is false, also when the run is stopped. Before anything runs, the isolation
    is checked (GraderError where programs could reach the files or the grades); ``private``
    names more files they must not read.
    """
    if resume is not None:
        folder = RegressFolder.open(resume)
        game, settings = folder.game, folder.settings(jobs=settings.jobs if settings else None)
        subs, _ = folder.resumed(paths, settings, entry, private)
        folder.meta["settings"]["jobs"] = settings.jobs  # what this part of the run uses (register() writes it)
    else:
        if not paths or not files:
            raise GraderError("give the students' programs (or a folder of them) and the regression files to run")
        settings = settings or RegressSettings()
        texts = [(str(f), "\n".join(read_lines(f, "regression file")) + "\n") for f in files]
        if len({name for name, _ in texts}) < len(texts):
            raise GraderError("a regression file is given twice: give each file once")
        game = game or regress_game(None, None, files)
        for name, text in texts:  # a malformed file stops the run before it starts
            capped_timelimits(parse_regress(text, name, game), settings.max_timelimit, name)
        subs = find_submissions(list(paths), set(settings.commands), entry)
        settings.check()
        settings.sandbox_mechanism([*map(Path, paths), *map(Path, files), *map(Path, private)])
        folder = RegressFolder.create(Path(out or default_path()), game, texts, settings)
    return _in_folder(folder, subs, settings, resume is not None, on_start, on_student, executor, stop, exports)


def _in_folder(folder: RegressFolder, subs: list[Submission], settings: RegressSettings, resumed: bool,
               on_start: Callable[[RegressFolder, int, int], None] | None,
               on_student: Callable[[StudentRegress], None] | None, executor: Executor | None, stop: Stop | None,
               exports: bool) -> RegressRun:  # fmt: skip
    game, parsed = folder.game, folder.files()
    programs: dict[str, ProtocolEngine] = {}
    for i, sub in enumerate(subs):
        if sub.path is not None:
            try:
                programs[sub.name] = student_program(sub)
            except GraderError as e:
                subs[i] = Submission(sub.name, sub.path, str(e), sub.folder, sub.single)
    digests = folder.register(subs, {name: p.digest for name, p in programs.items()})
    previous = folder.recorded() if resumed else {}
    todo = [(name, i) for name in programs for i in range(len(parsed)) if (name, i) not in previous]
    if on_start:
        on_start(folder, len(todo), len(programs) * len(parsed) - len(todo))
    left = {name: sum(1 for n, _ in todo if n == name) for name in programs}
    done: dict[tuple[str, int], RegressResult] = dict(previous)
    by_name = {sub.name: sub for sub in subs}

    def finished(name: str, i: int, result: RegressResult) -> None:
        folder.append(name, digests[name], i, result)
        done[(name, i)] = result
        left[name] -= 1
        if not left[name] and on_student:
            results = [done[(name, j)] for j in range(len(parsed))]
            on_student(StudentRegress(name, str(by_name[name].path), results))

    with using(executor, settings.jobs, stop) as ex:
        solved: dict[int, Solutions] = {}  # each file's positions, solved once for every program
        for i in sorted({i for _, i in todo}):
            path, commands = parsed[i]
            solved[i] = Solutions.load(path, settings.solve_seconds)  # kept beside the file, where it still is
            solve_file(commands, game, solved[i], ex.stop)
            solved[i].save(path)
        for name, i in todo:
            program, (path, commands) = programs[name], parsed[i]

            def task(worker: Worker, program=program, path=path, commands=commands, i=i) -> RegressResult:
                return run_commands(
                    program, commands, game, settings, worker, RegressResult(program.origin, path), None, solved[i]
                )

            ex.submit((name, i), task)
        try:
            for (name, i), result in ex.results():
                finished(name, i, result)
        except KeyboardInterrupt as e:
            ex.stop.set(interrupt_reason(e))
            for (name, i), result in ex.drain():  # files that ended while we were stopping
                finished(name, i, result)
        interrupted = ex.stop.reason or "interrupted" if ex.stop.is_set() else None
    run = RegressRun(folder, folder.results(), interrupted)  # the records are the truth
    _warn_tampering(folder)
    if exports:
        run.files = write_regress_exports(folder.path, run.students, folder.file_names, game)
    return run


@dataclass
class RegressRejudged:
    """What ``rejudge_regress`` did: the run as judged now, and the students whose total changed."""

    run: RegressRun
    changes: list[GradeChange]  # tests by number, 'why' naming the file
    tests: int  # tests judged again
    tests_changed: int  # tests whose symbol changed


def rejudge_regress(path: str | Path, unknown_credit: float | None = None, exports: bool = True) -> RegressRejudged:
    """Judge every recorded test of the regression run folder ``path`` again with the
    grader's solver as it is now (and ``unknown_credit`` when given, recorded as the run's
    setting from then on), rewrite its records (sealed) and, unless ``exports`` is false, its
    exports. No program runs again."""
    folder = RegressFolder.open(path)
    before = {s.name: s for s in folder.results()}
    _warn_tampering(folder)  # those records are left out: resume runs their files again
    settings, game = folder.settings(jobs=1), folder.game
    if unknown_credit is not None:
        settings = replace(settings, unknown_credit=unknown_credit)
    hashes = {name: info["sha256"] for name, info in folder.meta["scripts"].items()}
    recorded = sorted(folder.recorded().items())

    solved = Solutions(settings.solve_seconds)  # each position solved once for the whole class

    def judge_all(worker: Worker) -> list[tuple[str, str | None, int, RegressResult]]:
        return [(name, hashes[name], i, replace(result, tests=[rejudge_test(t, game, settings, worker, solved)
                                                                for t in result.tests]))
                for (name, i), result in recorded]  # fmt: skip

    with using(None, 1) as ex:
        ex.submit("rejudge", judge_all)
        records = next(iter(ex.results()))[1]
    folder.replace_results(records)
    if unknown_credit is not None:  # the run's setting from now on, once its records agree
        folder.meta["settings"]["unknown_credit"] = unknown_credit
        folder._write_meta()
    run = RegressRun(folder, folder.results())
    if exports:
        run.files = write_regress_exports(folder.path, run.students, folder.file_names, game)
    changes, changed = [], 0
    for st in run.students:
        old = before.get(st.name)
        tests = [TestChange(t.number, o.symbol, t.symbol, f"{r.file}: {t.note}")
                 for r, q in zip(st.results, old.results if old else []) for o, t in zip(q.tests, r.tests)
                 if o.symbol != t.symbol or o.credit != t.credit]  # fmt: skip
        changed += sum(t.before != t.after for t in tests)
        if old is not None and round(old.total, 6) != round(st.total, 6):
            changes.append(GradeChange(st.name, round(old.total, 2), round(st.total, 2), 100, tests))
    return RegressRejudged(run, changes, sum(len(r.tests) for _, _, _, r in records), changed)


def _warn_tampering(folder: RegressFolder) -> None:
    """A warning naming the records that failed their seal at the folder's last read."""
    if folder.tampered:
        warnings.warn(folder.tampering() or "", GraderWarning, stacklevel=3)


PRIVATE_STOP = "early (in a private test)"


def student_stop(result: RegressResult, private: Collection[int]) -> str | None:
    """How the run of a file with ``private`` tests ended early, as a student may read it:
    None when it did not; PRIVATE_STOP when where and why would tell of a private test: it
    ended in one, or in the commands before one (the first test it never reached), or after
    the last test when that one is private; else why, without its line number ('at 'play
    B C4': ...', 'at start-up, before 'timelimit 5': ...'), which would count the lines kept
    private before it."""
    if result.stopped is None or not private:
        return result.stopped
    k = _first_not_run(result)
    if k == len(result.tests):
        near = result.tests[-1] if result.tests else None
    else:  # the test it ended in, if the tests it never reached say so (run_commands), else the next
        last = result.tests[k - 1] if k else None
        ended_in_last = last is not None and result.tests[k].note == f"not run: {ENDED}{last.note}"
        near = last if ended_in_last else result.tests[k]
    if near is None or near.number in private:
        return PRIVATE_STOP
    return _unnumbered(result.stopped)


def _unnumbered(stopped: str) -> str:
    """Where a run stopped without its line number, which would count the lines kept private before it."""
    return re.sub(r"^at (start-up, before )?line \d+ \((.*?)\):", r"at \1'\2':", stopped)


def _first_not_run(result: RegressResult) -> int:
    """The index of the first test the program never reached (len(tests): none)."""
    return next((i for i, t in enumerate(result.tests) if t.note.startswith("not run")), len(result.tests))


def student_view(result: RegressResult, private: Collection[int]) -> tuple[str | None, list[RegressTest]]:
    """How the run ended early as its student may read it (student_stop), and its tests:
    those it never reached after ending in a private test say only that. After a private
    test, what the program chose to say is cut to what was judged: an answer to a winner
    and a point (_judged_words), a note without the answer's lines or how many words it had
    (_judged_note), no stderr: the program had the private position, and anything more it
    wrote could carry it to a student."""
    if result.apart and private:  # the public tests' program was told no private test: all it said may be shown
        return (_unnumbered(result.stopped) if result.stopped else None), result.tests
    if result.apart:
        stops = [
            *([result.stopped] if result.stopped else []),
            *([f"(the private tests' program) {result.private_stopped}"] if result.private_stopped else []),
        ]
        return ("; ".join(stops) or None), result.tests
    why = student_stop(result, private)
    first = next((i for i, t in enumerate(result.tests) if t.number in private), len(result.tests))
    if first == len(result.tests):
        return why, result.tests
    tests = [replace(t, answer=_judged_words(t.answer), note=_judged_note(t.note)) if i > first else t
             for i, t in enumerate(result.tests)]  # fmt: skip
    if why != PRIVATE_STOP:
        return (_no_stderr(why) if why and _first_not_run(result) > first else why), tests
    note = "not run: the program had ended in a private test"
    return why, [replace(t, note=note) if t.note.startswith("not run") else t for t in tests]


_ANSWER_WORD = re.compile(r"b|w|draw|unknown|pass|resign|[a-z][0-9]{1,2}", re.IGNORECASE)


def _judged_words(answer: str | None) -> str | None:
    """An answer as far as a verdict reads it: its first two words where each is a winner or a
    point (or 'pass', 'resign'), else '?'; '~' for any more: nothing a program could fill with
    a position."""
    if answer is None:
        return None
    words = answer.split()
    shown = [w if _ANSWER_WORD.fullmatch(w) else "?" for w in words[:2]]
    return " ".join(shown) + (" ~" if len(words) > 2 else "")


_MANY_LINES = re.compile(r"^the answer is everything up to the blank line, here \d+ lines \(.*\): (answer on one line)")
_MANY_WORDS = re.compile(r", not \d+ words")


def _judged_note(note: str) -> str:
    """A verdict's note without what the program chose: the lines of an answer of several
    (quoted), how many lines or words it had, the end of its stderr."""
    note = _MANY_LINES.sub(r"the answer is everything up to the blank line, here more than one line: \1", note)
    return _MANY_WORDS.sub(", not more", _no_stderr(note))


def _no_stderr(text: str) -> str:
    """``text`` without the end of a program's stderr (and whatever follows it)."""
    return text.split(STDERR_ENDS)[0]


def private_counts(symbols: str) -> str:
    """The line that stands for private tests: '  and 3 private tests: + 2, - 1'."""
    counts = ", ".join(f"{s} {symbols.count(s)}" for s in dict.fromkeys(symbols))
    return f"  and {len(symbols)} private tests: {counts}"


def student_text(student: StudentRegress, game: Game, private: Mapping[str, frozenset[int]] | None = None) -> str:
    """One student's report: each file's tests (symbol, command, answer, note, and the board
    of each one judged wrong), its total. The tests in ``private[file]`` are only counted by
    symbol, and a run that ended in one does not say where or why (student_stop)."""
    private = private or {}
    lines, note = [], student.note if student.problem or student.missing else ""
    for r in student.results:
        hidden = private.get(r.file, frozenset())
        why, tests = student_view(r, hidden)
        note = note or (f"{r.file}: stopped {why}" if why else "")
        lines.append(f"{r.file}: {r.total:.1f}/100" + (f", stopped {why}" if why else ""))
        for t in tests:
            if t.number not in hidden:
                lines.append(test_line(t))
                drawing = failed_board(t, game)
                lines += [drawing] if drawing else []
        if kept := "".join(t.symbol for t in r.tests if t.number in hidden):
            lines.append(private_counts(kept))
    head = f"{student.name}: {student.total:.1f}/100" + (f" ({note})" if note else "")
    return "\n".join([head, *lines])


def failed_board(t: RegressTest, game: Game) -> str | None:
    """The position of a 'solve' or 'genmove' the solver judged wrong, drawn for feedback, the
    answer's move marked '?'; None for other tests."""
    if t.judged_by != "solver" or t.symbol not in ("-", "W"):
        return None
    board, _, token = t.board.partition(" ")
    pos, _ = position_of(game, board, token)
    if pos is None:
        return None
    move = answered_move(t, pos)
    drawing = pos.game.render(pos, {move: "?"} if move is not None and pos.is_legal(move) else {})
    return "\n".join("      " + line for line in drawing.splitlines())


def test_line(t: RegressTest) -> str:
    """A test as the reports show it: symbol, number, command, answer, note."""
    mark = " (expected to fail)" if t.expect_failure else ""
    answer = " ".join((t.answer or "(none)").split())
    answer = answer if len(answer) <= 30 else answer[:27] + "..."
    return f"  {t.symbol} {t.number:>4} {t.command:<14} -> {answer:<18} {t.note}{mark}"


# --- exports ---------------------------------------------------------------------------------


def regress_table(students: list[StudentRegress], files: list[str], fmt: str = "simple") -> str:
    """The class table: each file's total, the overall total, and the note."""
    rows = []
    for st in students:
        rows.append([st.name, *st.file_totals(files), f"{st.total:.1f}", st.note])
    return tabulate(rows, headers=["student", *files, "total", "note"], tablefmt=fmt, disable_numparse=True)


def regress_csv(students: list[StudentRegress], files: list[str]) -> str:
    """grades.csv: a row per student, each file's total, the total out of 100, the count of
    each symbol, whether the grade is final, and the note."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["name", *files, "total", "max", *REGRESS_SYMBOLS, "complete", "note"])
    for st in students:
        symbols = "".join(r.symbols for r in st.results)
        writer.writerow([safe_cell(st.name), *st.file_totals(files, 2, ""), f"{st.total:.2f}", 100,
                         *(symbols.count(s) for s in REGRESS_SYMBOLS), "yes" if st.complete else "no",
                         safe_cell(st.note)])  # fmt: skip
    return out.getvalue()


def regress_junit(students: list[StudentRegress]) -> str:
    """JUnit XML: a suite per student and file, a testcase per test; a test below full
    credit fails with its note; a student with no program has one failing testcase saying why."""
    root = ET.Element("testsuites", name="grader regress")
    for st in students:
        for r in st.results or [RegressResult(st.program or "", "submission")]:
            failing = [t for t in r.tests if t.credit < 1 and not t.expect_failure]
            suite = ET.SubElement(root, "testsuite", name=xml_text(f"{st.name}: {r.file}"),
                                  tests=str(max(len(r.tests), 1)), failures=str(len(failing) + (not r.tests)),
                                  errors="0", time=f"{sum(t.seconds for t in r.tests):.3f}")  # fmt: skip
            for t in r.tests:
                case = ET.SubElement(suite, "testcase", classname=xml_text(st.name),
                                     name=xml_text(f"{t.number} {t.command}"), time=f"{t.seconds:.3f}")  # fmt: skip
                if t in failing:
                    answer = t.answer if t.answer is not None else "(none)"
                    failure = ET.SubElement(case, "failure", message=xml_text(f"{t.symbol}: {t.note}"))
                    failure.text = xml_text(f"position {t.board}\nanswer {answer}\n{t.note}")
            if not r.tests:
                case = ET.SubElement(suite, "testcase", classname=xml_text(st.name), name="program")
                ET.SubElement(case, "failure", message=xml_text(st.note or "no test ran"))
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def write_regress_exports(
    folder: str | Path, students: list[StudentRegress], files: list[str], game: Game
) -> list[str]:
    """Write grades.csv, results.json, junit.xml and report.html of a regression run into ``folder``."""
    texts = {
        "grades.csv": regress_csv(students, files),
        "results.json": json.dumps({"files": files, "students": [s.to_json() for s in students]}, indent=1),
        "junit.xml": regress_junit(students),
        "report.html": regress_report_html(students, files, game),
    }
    return write_files(folder, texts)


__all__ = [
    "RegressFolder",
    "RegressRejudged",
    "RegressRun",
    "StudentRegress",
    "regress_class",
    "regress_csv",
    "regress_submission",
    "regress_junit",
    "regress_table",
    "rejudge_regress",
    "student_program",
    "student_text",
    "test_line",
    "failed_board",
    "write_regress_exports",
]
