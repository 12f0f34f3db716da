"""A program kept running for a whole game (``Session``), and the protocols spoken to it
(NBoard, GTP, a plugin's).

The program starts in the same isolation and limits as a script (CPU seconds aside: the clock
is its limit), once for a game, and after a clean game waits in the ``EnginePool`` for its
engine's next game; one that misbehaved is killed with all it started at once. Where the system
can freeze a cgroup, its processes are frozen whenever it is not on move: while its opponent
thinks and while it waits for its next game.
"""

from __future__ import annotations

import os
import select
import selectors
import shutil
import subprocess
import threading
import time
from abc import abstractmethod
from dataclasses import replace
from pathlib import Path
from typing import Sequence, cast

from ..errors import GraderError
from ..games import Game, Position
from ..limits import Limits
from ..stop import Stop
from . import fairness
from .cgroups import Cgroup, dedicate_this_thread
from .leftovers import work_folder
from .programs import ProtocolEngine
from .protocol import Answer, EnginePool, EngineSpec, Player, Protocol, ProtocolError, Silent, Turn
from .runner import READ_BYTES, Run, RunResult, keep_tail, limit_note, tree_cpu_seconds
from .sandbox import Sandbox, claim_uid, release_uid, wrap
from .scripts import Runs, RunSettings
from .spawn import (
    adopt_orphans,
    end_uid,
    kill_group,
    nproc,
    rlimits,
    start,
)

HELLO_SECONDS = 10.0  # the most a protocol engine may take to start and answer its first ping
LINE_BYTES = 1 << 16  # the most of one protocol line a Session keeps: the rest of a longer line is dropped
ENDING_SECONDS = 2.0  # how long a program whose input pipe broke is given to be seen ending


class Ended(Exception):
    """The program ended, or closed its output, while the grader waited for a line."""


class Session(Run):
    """One untrusted program kept running for many exchanges (a protocol engine's game).

    It starts as a run does (a fresh directory, the minimal environment, the limits but CPU
    seconds, the sandbox, a session and, where there is one, a pids cgroup of its own) with
    stdin a pipe; the grader writes lines to it and reads its lines with a deadline each.
    ``close`` kills it and everything it started, and says how it ended. Its stdout counts
    against ``limits.output_bytes`` over its whole life; stderr keeps a tail. A line longer
    than LINE_BYTES is cut there (the grader's memory stays flat whatever the program prints).

    Its processes are born in CPU cgroups of their own (``fairness``) where the system offers
    them: ``pause`` freezes them all (the engine is not on move), ``resume`` lets them run.
    """

    def __init__(self, command: Sequence[str], limits: Limits, sandbox: Sandbox, stop: Stop,
                 script_dir: str | None = None, cwd: str | None = None):  # fmt: skip
        super().__init__(list(command), replace(limits, cpu_seconds=None), None, "", stop, sandbox, None)
        self.script_dir, self.cwd = script_dir, cwd
        self.proc: subprocess.Popen | None = None
        self.started = 0.0
        self._buf = bytearray()
        self._skipping = False  # dropping the rest of a line longer than LINE_BYTES
        self._eof = False
        self._sel = selectors.DefaultSelector()
        self._pidfd = -1
        self.start_error: str | None = None
        self._closed = threading.Event()
        self._launcher: threading.Thread | None = None

    def start(self) -> str | None:
        """Start the program; the reason it could not be started, or None."""
        self.workdir = work_folder()
        if self.sandbox.mechanism in ("none", "uid"):
            adopt_orphans(True)
        if self.sandbox.mechanism == "unshare":
            os.mkdir(self.workdir + ".root")
        if self.sandbox.mechanism == "uid" and self.script_dir:  # no mounts: the program reads a copy of its folder
            copy = os.path.join(self.workdir, "submission")
            shutil.copytree(self.script_dir, copy)
            self.argv = [part.replace(self.script_dir, copy) for part in self.argv]
            self.cwd = copy if self.cwd == self.script_dir else self.cwd
            self.script_dir = copy
        if self.sandbox.uid is not None:
            for path in [self.workdir, *(str(p) for p in Path(self.workdir).rglob("*"))]:
                os.lchown(path, self.sandbox.uid, self.sandbox.uid)
        resource_limits = rlimits(self.limits, nproc(self.limits, self.sandbox))
        error: list[BaseException] = []
        ready = threading.Event()
        self.fair = fairness.take(self.sandbox.uid)  # this thread's job slot's cores

        # The program is born in a thread of its own, in a cgroup of its own, and that thread
        # waits until the program is closed: bwrap's --die-with-parent (PR_SET_PDEATHSIG)
        # follows the thread that started it, not the grader.
        def launch() -> None:
            dedicate_this_thread()
            self.cgroup = Cgroup.for_this_thread(self.limits.processes, self.limits.memory_mb)
            try:
                argv = wrap(self.sandbox, self.argv, self.workdir, self.script_dir,
                            None if self.cgroup else self.limits.processes, self.cwd, self.limits.output_bytes)  # fmt: skip
                self.proc = start(argv, self.workdir, resource_limits, self.sandbox, stdin=True, cwd=self.cwd,
                                  cgroup=self.cgroup, join=self.fair.folders if self.fair else ())  # fmt: skip
            except (OSError, subprocess.SubprocessError, GraderError) as e:
                error.append(e)
            ready.set()
            self._closed.wait()

        self._launcher = threading.Thread(target=launch, name="grader-engine", daemon=True)
        self._launcher.start()
        ready.wait()
        self.started = time.monotonic()
        if error or self.proc is None:
            reason = getattr(error[0], "strerror", None) or str(error[0]) if error else "unknown"
            self.start_error = f"could not be started: {self.argv[0]!r}: {reason}"
            return self.start_error
        proc, cgroup, fair = self.proc, self.cgroup, self.fair
        self.stop.watch(proc.pid, lambda: kill_group(proc.pid, cgroup, fair))
        if self.stop.is_set():
            kill_group(proc.pid, cgroup, fair)
        os.set_blocking(proc.stdin.fileno(), False)  # type: ignore[union-attr]
        self._pidfd = os.pidfd_open(proc.pid)
        self._sel.register(proc.stdout, selectors.EVENT_READ, "out")  # type: ignore[arg-type]
        self._sel.register(proc.stderr, selectors.EVENT_READ, "err")  # type: ignore[arg-type]
        return None

    def send(self, text: str) -> bool:
        """Write ``text`` (whole lines) to the program; False when it cannot take it: it
        closed its input, or left it unread until the pipe filled up. Raises Ended when the
        program has ended (its input closed with it: how it ended says more than the pipe)."""
        assert self.proc is not None and self.proc.stdin is not None
        data = text.encode()
        try:
            while data:
                data = data[os.write(self.proc.stdin.fileno(), data) :]
        except BrokenPipeError:
            if self._pidfd >= 0 and select.select([self._pidfd], [], [], ENDING_SECONDS)[0]:
                raise Ended() from None
            return False
        except (BlockingIOError, OSError):
            return False
        return True

    def read_line(self, until: float) -> str | None:
        """The next line the program prints (without its line end), or None at ``until``
        (monotonic seconds). Raises Ended once it has ended (or closed its output, or printed
        more than the output limit) and every line it printed before was read."""
        while True:
            end = self._buf.find(b"\n")
            if end >= 0:
                line = bytes(self._buf[:end])
                del self._buf[: end + 1]
                return line.decode("utf-8", "replace").rstrip("\r")
            if self._eof:
                raise Ended()
            remaining = until - time.monotonic()
            if remaining <= 0:
                return None
            for key, _ in self._sel.select(remaining):
                data = os.read(key.fd, READ_BYTES)
                if key.data == "err":
                    if data:
                        keep_tail(self.err_tail, data)
                    else:
                        self._sel.unregister(key.fileobj)
                    continue
                limit = self.limits.output_bytes
                if limit is not None and self.stdout_bytes + len(data) > limit:
                    data, self.output_limited = data[: limit - self.stdout_bytes], True
                self.stdout_bytes += len(data)
                keep_tail(self.out_tail, data)
                self._take(data)
                if not data or self.output_limited:
                    self._eof = True
                    self._sel.unregister(key.fileobj)
                    if self._buf and not self._buf.endswith(b"\n"):
                        self._buf += b"\n"  # a last line without its end still counts

    def _take(self, data: bytes) -> None:
        """Add what the program printed to the lines not yet read, the first line cut at
        LINE_BYTES (read while no whole line waits, so that the buffer stays within
        LINE_BYTES and one read)."""
        if self._skipping:
            end = data.find(b"\n")
            if end < 0:
                return
            self._skipping, data = False, data[end:]
        self._buf += data
        end = self._buf.find(b"\n")
        if end < 0 and len(self._buf) > LINE_BYTES:
            del self._buf[LINE_BYTES:]
            self._skipping = True
        elif end > LINE_BYTES:
            del self._buf[LINE_BYTES:end]

    def pause(self) -> None:
        """Freeze all the program's processes (it is not on move), where the system can."""
        if self.fair is not None and self.proc is not None:
            self.fair.freeze()

    def resume(self) -> None:
        """Let the program's processes run again (its turn)."""
        if self.fair is not None:
            self.fair.thaw()

    def place(self) -> None:
        """Pin the program to the calling thread's job slot (it played its last game on another)."""
        if self.fair is not None:
            self.fair.place()

    def cpu_seconds(self) -> float:
        """CPU seconds all the program's processes have used so far."""
        counted = self.fair.cpu_seconds() if self.fair is not None else None
        if counted is not None:
            return counted
        return tree_cpu_seconds(self.proc.pid) if self.proc is not None else 0.0

    def alive(self) -> bool:
        """True while the program runs (checked without reaping it: its pid stays ours)."""
        if self.proc is None:
            return False
        try:
            return os.waitid(os.P_PID, self.proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None
        except ChildProcessError:
            return False

    def close(self) -> RunResult:
        """Kill the program and all it started, clean up, and say how it ended: a crash only
        when it ended by itself with a failure (at the end of a game the grader kills it)."""
        try:
            if self.proc is None:
                return RunResult(None, False, 0.0, 0.0, start_error=self.start_error)
            proc = self.proc
            self.resume()  # a frozen process would neither end nor die
            if self._eof and not self.output_limited:  # its output closed: it is ending, give it a moment
                settle = time.monotonic() + 0.5
                while self.alive() and time.monotonic() < settle:
                    time.sleep(0.005)
            on_its_own = not self.alive() and not self.output_limited
            self.ended = time.monotonic()
            self.cpu_at_kill = tree_cpu_seconds(proc.pid)
            self._sel.close()
            try:
                proc.stdin.close()  # type: ignore[union-attr]
            except OSError:
                pass
            status, cpu = self._clean_up(proc, self.cgroup)
            if self._pidfd >= 0:
                os.close(self._pidfd)
            exit_code = os.waitstatus_to_exitcode(status)
            if self.sandbox.mechanism in ("bwrap", "unshare") and 128 < exit_code < 128 + 65:
                exit_code = 128 - exit_code
            if not on_its_own:
                exit_code = 0  # killed by the grader at the end: not a verdict on the program
            stderr = self.err_tail.decode("utf-8", "replace")
            return RunResult(
                exit_code=exit_code,
                timed_out=False,
                wall_seconds=self.ended - self.started,
                cpu_seconds=max(cpu, self.cpu_at_kill),
                stdout_tail=self.out_tail.decode("utf-8", "replace"),
                stderr_tail=stderr,
                output_limited=self.output_limited,
                stdout_bytes=self.stdout_bytes,
                interrupted=self.stop.is_set(),
                limit_note=limit_note(exit_code, stderr, self.limits) if exit_code else None,
            )
        finally:
            self._closed.set()
            if self._launcher is not None:
                self._launcher.join()
            if self.fair is not None:
                self.fair.release()
                self.fair = None
            if self.sandbox.mechanism == "uid" and self.sandbox.uid is not None:
                end_uid(self.sandbox.uid)
            if self.workdir:
                shutil.rmtree(self.workdir, ignore_errors=True)
                if self.sandbox.mechanism == "unshare":
                    shutil.rmtree(self.workdir + ".root", ignore_errors=True)
                if self.sandbox.mechanism in ("none", "uid"):
                    adopt_orphans(False)
                self.workdir = ""


class SessionProtocol(Protocol):
    """One engine's side of games over a protocol spoken to a program kept running: made for
    one program (its ``Session``) and one game; ``hello`` once, then ``ask`` for each move,
    ``new_game`` before the next game. ``ask`` raises Silent when no move comes in time,
    ProtocolError for an answer that is not a move, runner.Ended when the program ends."""

    def __init__(self, session: Session, game: Game, depth: int | None = None) -> None:
        self.session, self.game, self.depth = session, game, depth

    @abstractmethod
    def hello(self, seconds: float) -> list[str]:
        """Start the protocol within ``seconds``; what the engine printed meanwhile."""

    @abstractmethod
    def new_game(self) -> None:
        """The next question starts a new game."""

    @abstractmethod
    def ask(self, start: Position, plies: list[int], seconds: float) -> Answer:
        """The engine's move in the game from ``start`` after ``plies`` (passes included),
        within ``seconds``."""

    @classmethod
    def player(cls, engine: EngineSpec, settings: RunSettings, where: Runs, game: Game,
               pool: EnginePool | None = None) -> Player:  # fmt: skip
        if not isinstance(engine, ProtocolEngine):
            raise GraderError(f"engine '{engine.origin}' is a script: give it without '{cls.name}:'")
        return ProtocolPlayer(engine, settings, where, game, pool, cls)


class Running:
    """A protocol engine's process: its session, its protocol client, and the uid it runs as."""

    def __init__(self, session: Session, client: SessionProtocol, uid: int | None):
        self.session, self.client, self.uid = session, client, uid
        self.ended: RunResult | None = None

    def stderr(self) -> str:
        return self.session.err_tail.decode("utf-8", "replace")

    def close(self) -> RunResult:
        """Kill it and all it started; how it ended."""
        if self.ended is None:
            self.ended = self.session.close()
        if self.uid is not None:
            release_uid(self.uid)
            self.uid = None
        return self.ended


class ProtocolPlayer(Player):
    """An engine of a ``SessionProtocol``: a process of its own in a sandbox (and, as root, a
    uid) of its own, started for the game or taken from ``pool``, where it goes back after a
    clean game."""

    def __init__(self, engine: ProtocolEngine, settings: RunSettings, where: Runs, game: Game,
                 pool: EnginePool | None, protocol: type[SessionProtocol]):  # fmt: skip
        self.engine, self.settings, self.where, self.game, self.pool = engine, settings, where, game, pool
        self.protocol = protocol
        self.running: Running | None = None
        self.failed = False
        self._said: list[str] = []  # what it printed while starting: kept with its first move

    def begin(self) -> Turn | None:
        self.running = cast(Running | None, self.pool.take(self.engine.digest)) if self.pool else None
        if self.running is not None:
            self.running.session.place()  # its last game may have been another job slot's
            self.running.client.new_game()
            return None
        sandbox, uid = self.where.sandbox(self.settings), None
        if sandbox.uid is not None:  # not the worker's: a script's end would kill all of its uid
            uid = claim_uid()
            sandbox = Sandbox(sandbox.mechanism, uid)
        folder = str(self.where.stage.folder(self.engine.bundle)) if self.engine.bundle else None
        argv = self.engine.command(self.settings.python, folder)
        session = Session(argv, self.settings.limits, sandbox, self.where.stop, folder, folder)
        client = self.protocol(session, self.game, self.engine.depth)
        self.running = Running(session, client, uid)
        error = session.start()
        if error:
            self.failed = True
            return Turn(None, f"the engine {error}", fatal=True)
        try:
            self._said = self.running.client.hello(max(HELLO_SECONDS, self.settings.limits.wall_seconds))
        except ProtocolError as e:
            return self._fail(Turn(None, str(e), timed_out=isinstance(e, Silent)))
        except Ended:
            return self._fail(Turn(None, self._gone(), interrupted=self.where.stop.is_set()))
        self.running.session.pause()  # until its turn
        return None

    def turn(self, pos: Position, start: Position, plies: list[int], seconds: float) -> Turn:
        assert self.running is not None
        session = self.running.session
        session.resume()
        asked, used = time.monotonic(), session.cpu_seconds()
        try:
            answer = self.running.client.ask(start, plies, seconds)
        except ProtocolError as e:
            return self._fail(Turn(None, str(e), time.monotonic() - asked, timed_out=isinstance(e, Silent)))
        except Ended:
            problem = self._gone()
            return self._fail(Turn(None, problem, time.monotonic() - asked, interrupted=self.where.stop.is_set()))
        wall = time.monotonic() - asked
        session.pause()
        lines, self._said = self._said + answer.lines, []
        return Turn(answer.move, None, wall, session.cpu_seconds() - used, eval=answer.eval, lines=lines)

    def _fail(self, turn: Turn) -> Turn:
        """A turn the engine cannot go on from: it will be stopped at the end of the game."""
        self.failed = turn.fatal = True
        turn.stderr_tail = self.running.stderr() if self.running else ""
        return turn

    def _gone(self) -> str:
        """The engine ended by itself (or printed past the output limit): how, in words."""
        assert self.running is not None
        ended = self.running.close()
        if ended.output_limited:
            return "the engine printed more than limits.output_bytes and was stopped"
        said = ended.describe()
        return f"the engine {said}" if said else "the engine ended in the middle of the game"

    def end(self, clean: bool = False) -> RunResult | None:
        """After a ``clean`` game (no problem of its own), the engine waits in the pool for its
        next game; else it is stopped."""
        if self.running is None:
            return None
        if clean and self.pool is not None and not self.failed and self.running.ended is None:
            self.pool.give(self.engine.digest, self.running)
            return None
        return self.running.close()
