"""Engines as a game sees them: players asked for one move at a time.

A script engine is started afresh for each move (``SCRIPT BOARD TOKEN``, the labs' own
interface; its move is the last integer it printed). A protocol engine (NBoard, GTP) is
started in the same isolation and limits (CPU seconds aside: the clock is its limit), kept
running between its moves and, after a clean game, for its engine's next game (``EnginePool``);
one that misbehaved is killed with all it started at once. Where the system can freeze a
cgroup, a protocol engine's processes are frozen whenever it is not on move: while its
opponent thinks and while it waits for its next game. Either way a move comes back as a
``Turn``: the move, or the problem that loses the game, and what it cost.
"""

from __future__ import annotations

import hashlib
import shlex
import shutil
import sys
import threading
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..errors import GraderError
from ..games import Game, Position
from . import get_protocol
from .interpreters import Interpreter, find_interpreter, is_python, which
from .protocol import Protocol, ProtocolError, Silent
from .runner import Ended, RunResult, Session
from .sandbox import Sandbox, claim_uid, release_uid
from .scripts import Runs, RunSettings, Script, run_script

PYTHON = "{python}"  # in a protocol engine's command: the Python of the run's settings
HELLO_SECONDS = 10.0  # the most a protocol engine may take to start and answer its first ping


@dataclass(frozen=True)
class ProtocolEngine:
    """A program that speaks a protocol: its command, its files, its options.

    Its files (``bundle``: the working folder's, read as a script's folder is) are copied for
    each worker, readable by the sandbox, as a script's are: the program runs from that copy,
    which is its working folder, read-only. A program found on PATH has no files.
    """

    argv: tuple[str, ...]  # '{dir}': the staged copy of its files; '{python}': the run's Python
    protocol: str = "nboard"
    bundle: Script | None = None
    depth: int | None = None  # 'set depth N' (NBoard): the engine's level
    digest: str = ""  # of its command, depth and files: a changed engine's games are played again
    origin: str = ""  # the command, its files' paths absolute: read again, it makes the same engine
    workdir: str | None = None  # the working folder given (absolute), if one was
    folder: str | None = None  # the folder its files were read from (absolute)

    @classmethod
    def from_command(cls, command: str, protocol: str = "nboard", cwd: str | Path | None = None,
                     depth: int | None = None, here: Path | None = None) -> ProtocolEngine:  # fmt: skip
        """The engine ``command`` starts ('./edax -nboard'), with the files of ``cwd`` (by
        default the folder of the first file the command names). Paths in the command are
        relative to ``cwd``, else to ``here`` (default: the current folder); a program named
        without a path is looked for on PATH. GraderError names what is missing."""
        get_protocol(protocol).check(depth)
        try:
            argv = shlex.split(command)
        except ValueError as e:
            raise GraderError(f"engine command {command!r}: {e}: fix its quotes") from None
        if not argv:
            raise GraderError("an engine command is empty: give the program to run, as in nboard:'./edax -nboard'")
        base = Path(cwd).expanduser() if cwd else here or Path.cwd()
        if cwd and not base.is_dir():
            raise GraderError(f"engine working folder '{cwd}' not found: fix it or leave it out")
        if argv[0] != PYTHON and "/" in argv[0] and not (base / argv[0]).is_file():
            raise GraderError(
                f"engine program '{argv[0]}' not found in {base.absolute()}: fix the command or its folder"
            )
        if argv[0] != PYTHON and "/" not in argv[0] and shutil.which(argv[0]) is None:
            raise GraderError(f"engine program '{argv[0]}' is not an installed program: install it or give its path")
        named = [base / a for i, a in enumerate(argv) if (base / a).is_file() and (i > 0 or _own_program(base / a))]
        workdir = str(base.absolute()) if cwd else None
        origin = shlex.join(str((base / a).absolute()) if base / a in named else a for a in argv)
        if not named:
            return cls.made(tuple(argv), protocol, None, depth, origin, workdir, None)
        folder = base if cwd else named[0].parent
        bundle = Script.from_path(named[0], folder)
        inside = {f: f.resolve().relative_to(folder.resolve()).as_posix() for f in named if _under(f, folder)}
        # a file outside the program's folder (a regression file named as an argument) stays where it is
        argv = ["{dir}/" + inside[base / a] if base / a in inside else str((base / a).absolute()) if base / a in named
                else a for a in argv]  # fmt: skip
        return cls.made(tuple(argv), protocol, bundle, depth, origin, workdir, str(folder.absolute()))

    @classmethod
    def made(cls, argv: tuple[str, ...], protocol: str, bundle: Script | None, depth: int | None, origin: str,
             workdir: str | None = None, folder: str | None = None) -> ProtocolEngine:  # fmt: skip
        """The engine with its digest."""
        digest = hashlib.sha256(f"{protocol}\0{shlex.join(argv)}\0{depth}\0{bundle.digest if bundle else ''}".encode())
        return cls(argv, protocol, bundle, depth, digest.hexdigest(), origin, workdir, folder)

    @property
    def stem(self) -> str:
        """A default name: the last file the command names, or its program, without suffix."""
        named = [a for a in self.argv if a.startswith("{dir}/")]
        return Path(named[-1] if named else self.argv[0]).stem

    def program(self) -> str | None:
        """The program the command starts, in the folder its files were read from (None: the
        run's Python)."""
        return None if self.argv[0] == PYTHON else self.command("", self.folder)[0]

    def command(self, python: str, folder: str | None) -> list[str]:
        """The command line, its files in ``folder`` (the staged copy); a program named
        without a path as the user's shell finds it (``resolve``)."""
        argv = [python if a == PYTHON else a.replace("{dir}", folder or "") for a in self.argv]
        return [resolve(argv[0]) if self.argv[0] != PYTHON else argv[0], *argv[1:]]

    def interpreter(self, python: str) -> Interpreter | None:
        """The Python interpreter the command starts, if it starts one (``python``: the run's)."""
        first = python if self.argv[0] == PYTHON else self.argv[0]
        return find_interpreter(first) if is_python(first) else None


def resolve(program: str) -> str:
    """``program`` as the user's shell runs it, before any sandbox (whose PATH sees only the
    system's folders): a bare name found on the user's PATH (a Python interpreter there, its
    virtual environment's or behind a pyenv shim, as the real program); else as given."""
    if "/" in program:
        return program
    if is_python(program):
        found = find_interpreter(program)
        if found is not None:
            return found.executable
    return which(program) or program


def _under(path: Path, folder: Path) -> bool:
    """Whether ``path`` is inside ``folder`` (both resolved)."""
    return path.resolve().is_relative_to(folder.resolve())


def _own_program(path: Path) -> bool:
    """Whether a command's program is the engine's own (./edax), not an interpreter or a
    system program (python3, /usr/bin/java), whose folder is not the engine's."""
    real = path.resolve()
    system = ("/usr/", "/bin/", "/sbin/", "/lib", "/opt/", "/etc/", "/snap/")
    return not (real.name.startswith("python") or str(real).startswith(system)
                or real == Path(sys.executable).resolve())  # fmt: skip


@dataclass
class Turn:
    """One move asked of an engine, and how it went."""

    move: int | None  # None: no move (``problem`` says why)
    problem: str | None = None  # why the engine gave no move it can play: a crash, a protocol error
    wall: float = 0.0  # seconds from the question to the answer
    cpu: float | None = None  # CPU seconds of all its processes (None: not counted)
    timed_out: bool = False
    eval: float | None = None  # the engine's evaluation, from its own view, when it gives one
    lines: list[str] = field(default_factory=list)  # what else it printed (status, analysis)
    output_tail: str = ""
    stderr_tail: str = ""
    interrupted: bool = False  # the run was stopped (Ctrl-C)
    fatal: bool = False  # the engine cannot go on with the game (it ended, broke the protocol, lost on time)


class Player(ABC):
    """One engine in one game."""

    @abstractmethod
    def begin(self) -> Turn | None:
        """Get ready for the game; None, or what went wrong (the game is forfeited)."""

    @abstractmethod
    def turn(self, pos: Position, start: Position, plies: list[int], seconds: float) -> Turn:
        """Its move at ``pos``, reached from ``start`` by ``plies`` (passes included), within ``seconds``."""

    def end(self, clean: bool = False) -> RunResult | None:
        """The game is over (``clean``: without a problem of this engine's): stop or keep
        the engine; how it ended, if it was stopped."""
        return None


class ScriptPlayer(Player):
    """A script, run afresh for each move."""

    def __init__(self, script: Script, settings: RunSettings, where: Runs):
        self.script, self.settings, self.where = script, settings, where

    def begin(self) -> Turn | None:
        return None

    def turn(self, pos: Position, start: Position, plies: list[int], seconds: float) -> Turn:
        settings = replace(self.settings, limits=replace(self.settings.limits, wall_seconds=seconds))
        result, claim = run_script(self.script, pos, settings, self.where)
        problem = f"the engine {result.describe()}" if result.crashed else None
        return Turn(claim.move, problem, result.wall_seconds, result.cpu_seconds, result.timed_out,
                    output_tail=result.stdout_tail, stderr_tail=result.stderr_tail,
                    interrupted=result.interrupted)  # fmt: skip


class Running:
    """A protocol engine's process: its session, its protocol client, and the uid it runs as."""

    def __init__(self, session: Session, client: Protocol, uid: int | None):
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


class EnginePool:
    """Protocol engines between games: a process that played a game cleanly waits here for
    its engine's next game (cutechess keeps engines up between games the same way), and
    ``close`` ends them all. Thread-safe."""

    def __init__(self) -> None:
        self._idle: dict[str, list[Running]] = {}
        self._lock = threading.Lock()
        self._closed = False

    def take(self, digest: str) -> Running | None:
        with self._lock:
            idle = self._idle.get(digest)
            return idle.pop() if idle else None

    def give(self, digest: str, running: Running) -> None:
        with self._lock:
            if not self._closed:
                self._idle.setdefault(digest, []).append(running)
                return
        running.close()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle, self._idle = [r for rs in self._idle.values() for r in rs], {}
        for running in idle:
            running.close()


class ProtocolPlayer(Player):
    """A protocol engine (NBoard, GTP, any ``Protocol`` of the registry): a process of its own in a sandbox (and, as root, a
    uid) of its own, started for the game or taken from ``pool``, where it goes back after a
    clean game."""

    def __init__(self, engine: ProtocolEngine, settings: RunSettings, where: Runs, game: Game,
                 pool: EnginePool | None = None):  # fmt: skip
        self.engine, self.settings, self.where, self.game, self.pool = engine, settings, where, game, pool
        self.running: Running | None = None
        self.failed = False
        self._said: list[str] = []  # what it printed while starting: kept with its first move

    def begin(self) -> Turn | None:
        self.running = self.pool.take(self.engine.digest) if self.pool else None
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
        client = get_protocol(self.engine.protocol)(session, self.game, self.engine.depth)
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


def player_for(engine: Script | ProtocolEngine, settings: RunSettings, where: Runs, game: Game,
               pool: EnginePool | None = None) -> Player:  # fmt: skip
    """The player of ``engine`` in a game of ``game`` (a protocol engine from ``pool`` if one waits there)."""
    if isinstance(engine, Script):
        return ScriptPlayer(engine, settings, where)
    return ProtocolPlayer(engine, settings, where, game, pool)
