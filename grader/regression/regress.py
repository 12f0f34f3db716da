"""Running a GTP program over a regression file (``run_regress``): one program for the file,
or a fresh one for each test (``per_test``), each answer judged as it comes
(``grader.regression.judge``) and each test recorded; a program that ended or hung costs
the tests after it."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Callable

from ..engines.gtp import Ended, GtpClient, GtpError
from ..engines.programs import PYTHON, ProtocolEngine
from ..engines.runner import RunResult
from ..engines.sandbox import Sandbox, claim_uid, release_uid
from ..engines.sessions import Session
from ..execution.executor import Executor, Worker, using
from ..files import read_lines
from ..games import Game
from ..runs.text import stderr_lines
from ..stop import Stop, Stopped
from .format import DEFAULT_TIMELIMIT, Command, Shadow, cap_timelimit, parse_regress, private_tests, whole
from .judge import judge, solve_file
from .results import RegressResult, RegressSettings, RegressTest
from .solutions import Solutions

ENDED = "the program had ended: "  # the note of a test not run after the program ended (then why)
STDERR_ENDS = "; stderr ends: "  # in why a program ended: then the last lines of its stderr


def run_regress(program: ProtocolEngine, path: str | Path, game: Game, settings: RegressSettings | None = None,
                executor: Executor | None = None, stop: Stop | None = None,
                on_test: Callable[[RegressTest], None] | None = None, commands: list[Command] | None = None,
                solutions: Solutions | None = None, apart: bool = False) -> RegressResult:  # fmt: skip
    """Run the regression file at ``path`` (or ``commands``, ``path`` then only naming them)
    against ``program`` (a GTP program, started once for the file, or for each test with
    ``settings.per_test``) and judge each test. A test the program did not reach (it had
    ended) counts 0. The file's positions are solved first (``solve_file``) into
    ``solutions``, by default those kept beside the file, kept there again after.

    ``apart``: the tests the file keeps private (``private_tests``) run in a program of their
    own, after the public ones (``split_apart``), so that nothing a student sees before the
    private results are released comes from a program that was told a private position."""
    settings = settings or RegressSettings()
    text = None
    if commands is None:
        text = "\n".join(read_lines(path, "regression file"))
        commands = parse_regress(text, str(path), game)
    private = private_tests(text, commands) if apart and text is not None and not settings.per_test else frozenset()
    origin = program.origin.replace(PYTHON, settings.python)
    lists = split_apart(commands, private, game) if private else [commands]
    results = [RegressResult(origin, str(path)) for _ in lists]
    with using(executor, 1, stop) as ex:
        if solutions is None:
            solutions = Solutions.load(path, settings.solve_seconds)
            solve_file(commands, game, solutions, ex.stop)
            solutions.save(path)
        run_solutions = solutions

        def task(worker: Worker) -> None:
            for listed, result in zip(lists, results):  # the public tests' program first, then the private's
                run_commands(program, listed, game, settings, worker, result, on_test, run_solutions)

        ex.submit("file", task)
        for _ in ex.results():
            pass
    return results[0] if not private else _merged(results[0], results[1], commands)


def split_apart(commands: list[Command], private: frozenset[int], game: Game) -> list[list[Command]]:
    """The file's commands as two programs get them: the public tests, each with the commands
    since the test before it, then the private tests likewise. Where a test's block of
    commands goes on from a game the other program was told, it starts with the commands that
    bring its own program there (the file's last 'timelimit', then 'boardsize', 'clear_board'
    and the stones as the grader follows the file; not the move a 'genmove' of the other
    program chose, which no other program may learn); a block that starts with 'boardsize'
    sets its own game up. Commands after the last test are left out."""
    shadow = Shadow(game)
    lists: tuple[list[Command], list[Command]] = ([], [])
    block: list[Command] = []
    timelimit: str | None = None
    told: list[str | None] = [None, None]  # the timelimit each program was last told
    last: int | None = None  # the list that took the last block
    for c in commands:
        block.append(c)
        if c.number is None:
            continue
        side = int(c.number in private)
        first = block[0].text.split()[:1]
        if last is not None and last != side:
            sets_time = any(b.text.split()[:1] == ["timelimit"] for b in block)
            sync = [timelimit] if timelimit is not None and told[side] != timelimit and not sets_time else []
            sync += [] if first == ["boardsize"] else shadow.setup()
            lists[side].extend(Command(block[0].line, text) for text in sync if text)
        lists[side].extend(block)
        for b in block:
            if b.text.split()[:1] == ["timelimit"]:
                timelimit = b.text
            shadow.command(b.text, "")
        told[side], last, block = timelimit, side, []
    return [lists[0], lists[1]]


def _merged(public: RegressResult, private: RegressResult, commands: list[Command]) -> RegressResult:
    """The two programs' results of a run with its private tests apart, as one, in the file's order."""
    order = {c.number: i for i, c in enumerate(commands) if c.number is not None}
    tests = sorted([*public.tests, *private.tests], key=lambda t: order.get(t.number, 0))
    return replace(public, tests=tests, ended=public.ended or private.ended, apart=True,
                   private_stopped=private.stopped)  # fmt: skip


class _Program:
    """The GTP program of a run, started when first needed and again after it is closed."""

    def __init__(self, program: ProtocolEngine, settings: RegressSettings, worker: Worker, sandbox: Sandbox):
        folder = str(worker.stage.folder(program.bundle)) if program.bundle else None
        self.argv, self.folder = program.command(settings.python, folder), folder
        self.settings, self.worker, self.sandbox = settings, worker, sandbox
        self.interpreter = program.interpreter(settings.python)
        self.session: Session | None = None
        self.client: GtpClient | None = None
        self.tests = 0  # tests this process has answered
        self.answers = 0  # commands this process has answered: none, and it ended at start-up

    def start(self) -> str | None:
        """Start the program; None, or what went wrong."""
        self.session = Session(
            self.argv, self.settings.limits, self.sandbox, self.worker.stop, self.folder, self.folder
        )
        self.client, self.tests, self.answers = None, 0, 0
        error = self.session.start()
        if error:
            self.session.close()
            self.session = None
            return f"the program {error}"
        self.client = GtpClient(self.session)
        return None

    def failed(self, e: Exception) -> tuple[str, RunResult | None]:
        """Why a command got no answer, and how the program ended (it is closed)."""
        if self.worker.stop.is_set():
            raise Stopped(self.worker.stop.reason) from None
        answers, ended = self.answers, self.close()
        if not isinstance(e, Ended) or ended is None:
            return (str(e) if not isinstance(e, Ended) else "the program ended"), None
        said = stderr_lines(ended.stderr_tail, 3)
        why = f"the program {ended.describe() or 'ended'}" + (f"{STDERR_ENDS}{' | '.join(said)}" if said else "")
        if not answers:  # it never answered: it could not start (a missing package of its interpreter, say)
            run_by = f" under Python {self.interpreter.describe()}" if self.interpreter is not None else ""
            why = f"the program could not start{run_by}: {why[len('the program ') :]}"
        return why, ended

    def close(self) -> RunResult | None:
        session, self.session, self.client = self.session, None, None
        return session.close() if session is not None else None


def run_commands(program: ProtocolEngine, commands: list[Command], game: Game, settings: RegressSettings,
                 worker: Worker, result: RegressResult, on_test: Callable[[RegressTest], None] | None,
                 solutions: Solutions | None = None) -> RegressResult:  # fmt: skip
    """Run ``commands`` against ``program`` on ``worker`` (a task of an executor), recording
    each judged test in ``result`` as it is answered; what ``run_regress`` and a class run do.
    ``solutions``: the run's, shared by its programs (by default this file's own)."""
    result.host, result.count = worker.host, settings.count
    solutions = solutions if solutions is not None else Solutions(settings.solve_seconds)
    settings = replace(settings, python=worker.here(settings).python)  # a cluster worker's own Python
    sandbox, uid = worker.sandbox(settings), None
    if sandbox.uid is not None:
        uid = claim_uid()
        sandbox = Sandbox(sandbox.mechanism, uid)
    proc = _Program(program, settings, worker, sandbox)
    shadow, timelimit, told, ended_at = Shadow(game), DEFAULT_TIMELIMIT, False, ""
    commands = [cap_timelimit(c, settings.max_timelimit) for c in commands]  # capped_timelimits warned of them
    try:
        for i, c in enumerate(commands):
            words = c.text.split()
            if words[:1] == ["timelimit"] and len(words) == 2 and whole(words[1]):
                timelimit, told = int(words[1]), True
            if words[:1] == ["quit"] and proc.client is None:
                break
            asked_on = f"{shadow.board} {shadow.token}"
            if proc.client is not None and c.number is not None and settings.per_test and proc.tests:
                proc.close()  # a fresh program for this test
            if proc.client is None:
                why = proc.start() if i == 0 else _restart(proc, shadow, timelimit if told else None, settings)
                if why is not None:
                    result.stopped = f"at line {c.line} ({c.text}): {why}"
                    _not_run(result, on_test, commands[i:], asked_on, why)
                    return result
            thinks = words[:1] in (["solve"], ["genmove"])
            seconds = (timelimit if thinks else settings.limits.wall_seconds) + settings.margin
            assert proc.client is not None
            try:
                reply = proc.client.send(f"{c.number} {c.text}" if c.number is not None else c.text, seconds)
            except (GtpError, Ended) as e:
                where = f"at line {c.line}" if proc.answers else f"at start-up, before line {c.line}"
                why, ended = proc.failed(e)
                if c.number is not None:  # (per_test: where the last program ended, before this test)
                    _record(result, on_test, RegressTest(c.number, c.text, asked_on, c.expected, None, "t", 0.0,
                                                         why + ended_at, seconds, c.expect_failure))  # fmt: skip
                    ended_at, shadow.refused = "", None  # told of this test, never of a later one
                if settings.per_test and words[:1] != ["quit"]:
                    if c.number is None:  # a setup command: the game goes on as the file sets it up
                        shadow.command(c.text, "")
                        ended_at = ended_at or f" (the program ended at '{c.text}' before this test: {why})"
                    continue  # the next test gets a fresh program
                result.stopped = f"{where} ({c.text}): {why}"
                result.ended = ended.describe() if ended is not None else None
                _not_run(result, on_test, commands[i + 1 :], asked_on, f"{ENDED}{why}")
                return result
            proc.answers += 1
            answer = reply.text if reply.ok else None
            if c.number is None and answer is None:  # named in the next test's note
                shadow.refused = shadow.refused or c.text
            if c.number is not None:
                proc.tests += 1
                pos, problem = shadow.position()
                test = judge(c, answer, reply.text, pos, problem, shadow.side(), settings, worker, solutions)
                if shadow.refused:
                    test.note += f" (the program refused '{shadow.refused}' before this test)"
                    shadow.refused = None
                test.note, ended_at = test.note + ended_at, ""
                test.board, test.seconds = asked_on, round(reply.seconds, 4)
                _record(result, on_test, test)
            shadow.command(c.text, answer)
            if words[:1] == ["quit"]:
                break
        return result
    finally:
        proc.close()
        if uid is not None:
            release_uid(uid)


def _restart(proc: _Program, shadow: Shadow, timelimit: int | None, settings: RegressSettings) -> str | None:
    """A fresh program told the game so far (and the file's timelimit); None, or what went
    wrong. A command of the game it refuses is noted for the next test, as in one program."""
    why = proc.start()
    if why is not None:
        return why
    assert proc.client is not None
    for command in [*([f"timelimit {timelimit}"] if timelimit is not None else []), *shadow.setup()]:
        try:
            reply = proc.client.send(command, settings.limits.wall_seconds + settings.margin)
        except (GtpError, Ended) as e:
            return f"while the game so far was replayed to a fresh program, '{command}': {proc.failed(e)[0]}"
        proc.answers += 1
        if not reply.ok and not command.startswith("timelimit"):
            shadow.refused = shadow.refused or command
    return None


def _not_run(result: RegressResult, on_test: Callable[[RegressTest], None] | None, rest: list[Command],
             board: str, why: str) -> None:  # fmt: skip
    """The tests the program never answered: each counts 0 ('t')."""
    for c in rest:
        if c.number is not None and all(t.number != c.number for t in result.tests):
            _record(result, on_test, RegressTest(c.number, c.text, board, c.expected, None, "t", 0.0,
                                                 f"not run: {why}", 0.0, c.expect_failure))  # fmt: skip


def _record(result: RegressResult, on_test: Callable[[RegressTest], None] | None, test: RegressTest) -> None:
    result.tests.append(test)
    if on_test:
        on_test(test)
