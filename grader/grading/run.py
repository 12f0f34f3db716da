"""Grading runs: every test of a plan on one script (``grade``) or a whole class
(``grade_class``, with a run folder and resume), through the executor, judged in test order."""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Protocol, Sequence

from ..engines.parse import Claim
from ..engines.runner import RunResult
from ..engines.scripts import RunSettings, Script, run_script
from ..errors import GraderError
from ..execution.executor import Executor, Worker, interrupt_reason, using
from ..games import Position, available, base_name, get_game
from ..runs.archives import archive_name, is_archive
from ..runs.folders import ClassResults, default_path
from ..runs.submissions import Submission, archive_script, find_submissions
from ..stop import Stop, Stopped
from .judge import Answer, judge
from .plans import Plan, standard_plan
from .results import ScriptResult, Settings, TestResult, settings_for, stop_at
from .runfolder import RunFolder


@dataclass(frozen=True)
class TestTask:
    """One test's work on a worker: run the script on the position, read its claim."""

    script: Script
    position: Position
    settings: RunSettings

    def __call__(self, worker: Worker) -> tuple[RunResult, Claim]:
        result, claim = run_script(self.script, self.position, self.settings, worker)
        if result.interrupted:
            raise Stopped(worker.stop.reason)
        return result, claim

    def lost(self, reason: str) -> tuple[RunResult, Claim]:
        """The outcome of a test that kept killing the cluster worker running it: a crash."""
        return RunResult(None, False, 0.0, 0.0, start_error=reason), Claim(None, (), None)


# --- the run itself -------------------------------------------------------------------

OnTest = Callable[[str, TestResult], None]
OnStudent = Callable[[ScriptResult], None]


class _Student:
    """One script's tests in a run: results so far, in-order delivery, stopping."""

    def __init__(self, sub: Submission, plan: Plan):
        self.sub, self.plan = sub, plan
        self.results: dict[int, TestResult] = {}  # test index (0-based) -> result
        self.delivered = 0
        self.outstanding: set[int] = set()
        self.stopped: str | None = sub.problem
        self.reported = False
        self.start = time.monotonic()

    def deliver(self, on_test: OnTest | None, stop_on_error: bool) -> None:
        """Hand on the results that are next in test order; stop at an error if asked to."""
        while self.delivered in self.results and self.stopped is None:
            test = self.results[self.delivered]
            self.delivered += 1
            if on_test:
                on_test(self.sub.name, test)
            if stop_on_error and test.error:
                self.stopped = stop_at(test)

    def finished(self) -> bool:
        return not self.outstanding and (self.stopped is not None or self.delivered == len(self.plan.positions))

    def result(self, interrupted: str | None = None, backend: str = "") -> ScriptResult:
        if interrupted:
            tests = [self.results[i] for i in sorted(self.results)]
        else:
            tests = [self.results[i] for i in range(self.delivered)]
        path = str(self.sub.path) if self.sub.path else ""
        stopped = self.stopped or interrupted
        return ScriptResult(path, self.plan, tests, time.monotonic() - self.start, stopped, bool(interrupted), self.sub.name,
                            backend, not_graded=self.sub.problem is not None)  # fmt: skip


class AnswerStore(Protocol):
    """Where a run keeps its exact answers (a run folder's answers.jsonl)."""

    def answers(self, plan: Plan, scoring: str) -> dict[int, Answer]: ...

    def append_answer(self, index: int, pos: Position, scoring: str, answer: Answer, backend: str) -> None: ...


class Run:
    """Tests of many scripts on one plan, sharing the executor; each answer solved once (and,
    with a ``store``, once per run folder: resume reads it back; rejudge solves afresh)."""

    def __init__(self, plan: Plan, settings: Settings, executor: Executor, store: AnswerStore | None = None):
        self.plan, self.settings, self.executor, self.store = plan, settings, executor, store
        game = plan.game
        self.scoring = game.scoring(settings.scoring or plan.scoring)
        self.backend = game.backend(settings.backend)
        stop = executor.stop if executor is not None else None  # None: a rejudge, judging only
        self.solver = game.solver(self.scoring, should_stop=stop, backend=self.backend)
        self._answers: dict[int, Answer] = store.answers(plan, self.scoring) if store is not None else {}

    def answer(self, i: int) -> Answer:
        if i not in self._answers:
            self._answers[i] = Answer.solve(self.solver, self.plan.positions[i])
            if self.store is not None:
                self.store.append_answer(i, self.plan.positions[i], self.scoring, self._answers[i], self.backend)
        return self._answers[i]

    def grade(
        self,
        subs: Sequence[Submission],
        scripts: Mapping[str, Script],
        previous: Mapping[tuple[str, int], TestResult] | None = None,
        on_record: OnTest | None = None,
        on_test: OnTest | None = None,
        on_student: OnStudent | None = None,
    ) -> list[ScriptResult]:
        """Every test of every script not in ``previous`` (results recorded before, by
        (student, test number)); ``on_record`` sees each new result as soon as it is judged,
        ``on_test`` each script's results in test order, ``on_student`` each finished script."""
        previous = previous or {}
        students = {sub.name: _Student(sub, self.plan) for sub in subs}
        to_run: dict[str, set[int]] = {name: set() for name in students}
        for name, st in students.items():
            for i in range(len(self.plan.positions)):
                if (name, i + 1) in previous:
                    st.results[i] = previous[(name, i + 1)]
                elif name in scripts:
                    to_run[name].add(i)
        # Every public test before any private one: nothing a private test showed a script
        # (its board, left in a shared /tmp, or in a process list where isolation cannot hide
        # them) can reach the output of a test students see.
        plan = self.plan
        phases = [
            [i for i in range(len(plan.positions)) if plan.is_public(i + 1) == public] for public in (True, False)
        ]

        def settle(st: _Student) -> None:
            was_stopped = st.stopped
            st.deliver(on_test, self.settings.stop_on_error)
            if st.stopped and not was_stopped:  # stopped at an error: its other tests are not wanted
                st.outstanding -= {i for _, i in self.executor.cancel((st.sub.name, i) for i in st.outstanding)}
            if st.finished() and not st.reported:
                st.reported = True
                if on_student:
                    on_student(st.result())

        def take(key: Any, outcome: tuple[RunResult, Claim]) -> _Student:
            name, i = key
            st = students[name]
            st.outstanding.discard(i)
            if st.stopped is None:
                test = self.judge(i, *outcome)
                st.results[i] = test
                if on_record:
                    on_record(name, test)
            return st

        interrupted = None
        for st in students.values():
            settle(st)
        try:
            for phase in phases:
                if self.executor.stop.is_set():
                    break  # stopped (Ctrl-C, a lost cluster) before this phase: none of it is started
                for name, st in students.items():
                    for i in phase:
                        if i in to_run[name] and st.stopped is None:
                            st.outstanding.add(i)
                            self.executor.submit((name, i), TestTask(scripts[name], plan.positions[i], self.settings))
                for key, outcome in self.executor.results():
                    settle(take(key, outcome))
        except (KeyboardInterrupt, Stopped) as e:  # Stopped: the judge's solver, in a long solve
            interrupted = interrupt_reason(e) if isinstance(e, KeyboardInterrupt) else None
            self.executor.stop.set(interrupted or "interrupted")
            for key, outcome in self.executor.drain():  # tests that finished while we were stopping
                with contextlib.suppress(Stopped):  # one whose answer was not solved yet stays unjudged
                    take(key, outcome)
        if interrupted is None and self.executor.stop.is_set():  # stopped by a caller
            interrupted = self.executor.stop.reason or "interrupted"
        return [st.result(interrupted, self.backend) for st in students.values()]

    def judge(self, i: int, run: RunResult, claim: Claim) -> TestResult:
        pos, answer = self.plan.positions[i], self.answer(i)
        verdict = judge(pos, claim, answer, self.solver, run.describe() if run.crashed else None)
        return TestResult(i + 1, pos, run, claim, verdict, answer.value, list(answer.optimal_moves))


def grade_submission(sub: Submission, plan: Plan, settings: Settings, executor: Executor | None = None,
                     on_test: OnTest | None = None, private: Sequence[str | Path] = ()) -> ScriptResult:  # fmt: skip
    """Every test of ``plan`` on one submission, graded for real (a machine that cannot
    isolate it is an error, as for a class); a submission without a runnable script gets 0
    with the reason in ``stopped``."""
    settings = settings.on(plan)
    settings.check()
    settings.check_plan(plan)
    settings.sandbox_mechanism([*([sub.folder or sub.path] if sub.path else []), *map(Path, private)])
    scripts, (sub,) = _load_scripts([sub], settings)
    with using(executor, settings.jobs) as ex:
        (result,) = Run(plan, settings, ex).grade([sub], scripts, on_test=on_test)
    return result


def grade(
    script: str | Path,
    plan: Plan | None = None,
    settings: Settings | None = None,
    *,
    out: str | Path | None = None,
    private: Sequence[str | Path] = (),
    on_start: Callable[[], None] | None = None,
    on_test: Callable[[TestResult], None] | None = None,
    executor: Executor | None = None,
    stop: Stop | None = None,
    entry: str | None = None,
) -> ScriptResult:
    """Run every test of ``plan`` (default: the standard plan, new seed) on ``script``.

    The script runs with the files of its folder beside it. ``script`` may be a .zip or
    .tar.gz of one student's folder instead: unpacked by the portal's own code for uploads
    (``runs.archives``), its script found as a class's student's is (its one script, or
    ``entry``). ``on_start`` is called once the
    script is found runnable, ``on_test`` with each result in test order; ``out`` also
    records the run in a new run folder, with its exports. Raises GraderError when the
    script is missing or cannot be run; whatever the script does is a verdict. Without a run
    folder, a machine that cannot isolate scripts is a warning (a self-test); with one, an
    error. ``private``: your files the script must not read (config, plans), checked where
    only permissions keep it out. Ctrl-C (or setting ``stop``, the run's switch when it makes
    its own executor) returns the tests that finished, ``interrupted`` set.
    """
    plan = plan or standard_plan()
    settings = settings_for(plan, settings)
    sub, loaded = _read_submission(Path(script), settings, entry)
    loaded[sub.name].command(settings)  # a missing or unrunnable script is the user's error here
    settings.check()
    settings.check_plan(plan)
    mechanism = settings.sandbox_mechanism([*map(Path, private), *([Path(out)] if out else [])], out is not None)
    if on_start:
        on_start()
    each = (lambda _, t: on_test(t)) if on_test else None
    if out is None:
        with using(executor, settings.jobs, stop) as ex:
            (result,) = Run(plan, settings, ex).grade([sub], loaded, on_test=each)
    else:
        folder = RunFolder.create(out, plan, settings)
        result = _in_folder(folder, [sub], plan, settings, mechanism, False, None, each, None, executor, stop, True,
                            loaded).results[0]  # fmt: skip
    result.script = str(script)
    if out is None:  # a run folder asked already, and keeps the answer
        with using(executor, settings.jobs, stop) as ex:
            result.game_hint = wrong_game(result, sub, loaded[sub.name], settings, ex)
    return result


def _read_submission(path: Path, settings: Settings, entry: str | None) -> tuple[Submission, dict[str, Script]]:
    """The submission at ``path`` and its script, read: a script file (the files of its folder
    along), or an archive of a student's folder (``archive_script``)."""
    if not is_archive(path.name):
        sub = Submission(path.stem, path, single=True)
        return sub, {sub.name: sub.script()}
    sub = Submission(archive_name(path), path)
    return sub, {sub.name: archive_script(path, set(settings.commands), entry)}


PROBES = 5  # boards of each other game a script that does badly here is tried on
PROBE_SECONDS = 3.0  # the most each probe may take (a script for that game answers at once)


def wrong_game(result: ScriptResult, sub: Submission, script: Script, settings: Settings, ex: Executor) -> str | None:
    """One line when the script seems written for another game than the plan's, else None.

    Asked only when the script earned less than half the credit. One that printed a move at
    least once is then run on a few boards of each other installed game where not every legal
    move is optimal, and a game on whose boards it found an optimal move every time is
    suggested. A script that printed no legal move at all is told so in any case (one that
    printed no move, an empty script say, with why: a timeout or a crash is another problem
    than the game)."""
    tests, game = result.tests, result.plan.game
    if result.interrupted or 2 * result.total >= len(tests):
        return None
    printed = [t for t in tests if t.claim.move is not None]  # a move printed (none: a timeout or crash, not a game)
    if not printed:
        return f"no test printed a legal {game.title} move: {_why_no_move(tests)}"
    legal = sum(t.claim.move is not None and not t.illegal_move for t in tests)
    said = (
        f"only {legal} of {len(tests)} tests printed a legal {game.title} move"
        if legal
        else f"no test printed a legal {game.title} move"
    )
    for name in sorted(available()):
        other = get_game(name)
        if other.name == base_name(game.name):
            continue
        rule = other.scoring(None)
        solver = other.solver(rule, backend=settings.backend)
        telling = (p for p in standard_plan(0, other).positions if len(solver.optimal_moves(p)) < len(p.moves()))
        probe = Plan(tuple(itertools.islice(telling, PROBES)), None, f"{other.title} probe")
        quick = dataclasses.replace(settings.limits, wall_seconds=min(settings.limits.wall_seconds, PROBE_SECONDS))
        here = dataclasses.replace(settings, scoring=rule, stop_on_error=False, limits=quick)
        (tried,) = Run(probe, here, ex).grade([sub], {sub.name: script})
        if len(tried.tests) == PROBES and all(t.verdict.move_ok and not t.run.crashed for t in tried.tests):
            return (f"{said}, but it found an optimal move on each of {PROBES} {other.title} boards: "
                    f"is it written for {other.title}? Grade it with --game {other.name}")  # fmt: skip
    return None if legal else f"{said}: is the script written for {game.title}? (--game chooses the game)"


def _why_no_move(tests: Sequence[TestResult]) -> str:
    """Why no test printed a move: every one crashed, or timed out, or the script printed none."""
    if all(t.run.crashed for t in tests):
        said = [ln.strip() for t in tests for ln in t.run.stderr_tail.splitlines() if ln.strip()]
        last = f"; the last line it wrote to stderr: {said[-1][:200]}" if said else ""
        return f"the script crashed in every test{last} (each test's diagnosis says how)"
    if all(t.run.timed_out for t in tests):
        return "the script ran out of time in every test"
    return "the script printed no move (its move is the last integer it prints)"


@dataclass
class ClassRun(ClassResults[RunFolder, ScriptResult]):
    """A class graded in a run folder: each student's results as recorded."""


def grade_class(
    paths: Sequence[str | Path] = (),
    plan: Plan | None = None,
    settings: Settings | None = None,
    *,
    out: str | Path | None = None,
    resume: str | Path | None = None,
    entry: str | None = None,
    private: Sequence[str | Path] = (),
    on_start: Callable[[RunFolder, int, int], None] | None = None,
    on_test: OnTest | None = None,
    on_student: OnStudent | None = None,
    executor: Executor | None = None,
    stop: Stop | None = None,
    exports: bool = True,
) -> ClassRun:
    """Grade every submission under ``paths`` (script files, folders of scripts or of student
    folders) on one plan, recording each test in a run folder as it finishes.

    ``out`` is the new run folder (default ``runs/DATE_TIME``); ``resume`` continues an
    interrupted run with its own plan and settings (``settings.jobs`` may change), running only
    the tests not recorded and those of students whose script changed (``paths`` may add
    students). ``on_start(folder, tests to run, tests recorded before)`` is called once the
    folder is ready,
    ``on_test(name, test)`` for each test as recorded, ``on_student`` with each student's
    result once complete. The exports (grades.csv, results.json, junit.xml, report.html) are
    written at the end unless ``exports`` is false, also when the run is stopped (Ctrl-C, or
    ``stop`` set: the run's switch when it makes its own executor). Before anything runs, the isolation is
    checked (GraderError where scripts could reach the grades); ``private`` names more of your
    files the scripts must not read (config, plan files).
    """
    if resume is not None:
        folder = RunFolder.open(resume)
        plan, settings = folder.plan, folder.settings(jobs=settings.jobs if settings else None)
        subs, mechanism = folder.resumed(paths, settings, entry, private)
    else:
        if not paths:
            raise GraderError("give the scripts or folders to grade (or a run folder to resume)")
        plan = plan or standard_plan()
        settings = settings_for(plan, settings)
        subs = find_submissions(list(paths), set(settings.commands), entry)
        target = Path(out or default_path())
        settings.check()
        settings.check_plan(plan)
        mechanism = settings.sandbox_mechanism([*map(Path, paths), *map(Path, private)])
        folder = RunFolder.create(target, plan, settings)
    return _in_folder(folder, subs, plan, settings, mechanism, resume is not None, on_start, on_test, on_student,
                      executor, stop, exports)  # fmt: skip


def _in_folder(folder: RunFolder, subs: Sequence[Submission], plan: Plan, settings: Settings, mechanism: str, resumed: bool,
               on_start: Callable[[RunFolder, int, int], None] | None, on_test: OnTest | None,
               on_student: OnStudent | None, executor: Executor | None, stop: Stop | None, exports: bool,
               scripts: dict[str, Script] | None = None) -> ClassRun:  # fmt: skip
    """Grade ``subs`` recording in ``folder``: what grade_class and grade(out=...) share
    (``scripts``: the students' scripts when already read)."""
    settings.check()
    if scripts is None:
        scripts, subs = _load_scripts(subs, settings)
    folder.meta["isolation_used"] = mechanism  # written by register(), just below
    folder.meta["backend_used"] = plan.game.backend(settings.backend)
    digests = folder.register(list(subs), {name: s.digest for name, s in scripts.items()})
    previous = folder.recorded() if resumed else {}
    if on_start:
        recorded = sum(1 for name, _ in previous if name in scripts)
        on_start(folder, len(scripts) * len(plan.positions) - recorded, recorded)

    def on_record(name: str, test: TestResult) -> None:
        folder.append(name, digests[name], test)
        if on_test:
            on_test(name, test)

    def finished(result: ScriptResult) -> None:
        folder.set_stopped(result.name, result.stopped, len(result.tests))
        if on_student:
            on_student(result)

    with using(executor, settings.jobs, stop) as ex:
        results = Run(plan, settings, ex, folder).grade(subs, scripts, previous, on_record, None, finished)
        asked = _ask_for_game(folder, results, {s.name: s for s in subs}, scripts, settings, ex)
    interrupted = next((r.stopped for r in results if r.interrupted), None)
    if interrupted is None and not asked:  # every test ran, but not every question: resume asks them
        interrupted = ex.stop.reason or "interrupted"
    run = ClassRun(folder, folder.results(), interrupted)  # the records are the truth, as for 'grader report'
    if exports:
        from .exports import write_exports  # here: a run without a folder writes none (grader check)

        run.files = write_exports(folder.path, run.results)
    return run


def _ask_for_game(folder: RunFolder, results: Sequence[ScriptResult], subs: Mapping[str, Submission],
                  scripts: Mapping[str, Script], settings: Settings, ex: Executor) -> bool:  # fmt: skip
    """Record, for each student graded to the end, whether the script seems written for another
    game (``wrong_game``): the class goes on, the student's row carries the note. False when
    the run was stopped before every student was asked (a resumed run asks at its end)."""
    for r in results:
        if r.name not in scripts or r.interrupted:
            continue
        hint = None if ex.stop.is_set() else wrong_game(r, subs[r.name], scripts[r.name], settings, ex)
        if ex.stop.is_set():
            return False
        folder.set_game_hint(r.name, hint)
    return True


def _load_scripts(subs: Sequence[Submission], settings: Settings) -> tuple[dict[str, Script], list[Submission]]:
    """Each student's script read into memory; a student whose script cannot be read or run
    keeps the reason as a problem (graded 0) instead of stopping the class."""
    scripts: dict[str, Script] = {}
    out = []
    for sub in subs:
        if sub.path is not None:
            try:
                script = sub.script()
                script.command(settings)
                scripts[sub.name] = script
            except GraderError as e:
                sub = dataclasses.replace(sub, problem=str(e))
        out.append(sub)
    return scripts, out
