"""A script under test: its files, how it is started, and one run of it on one position.

A ``Script`` carries its own bytes (the file to run and the files it may read next to it),
so it runs the same on this machine or on a cluster worker: before its first run, a worker
copies it into a private folder of its own (``Stage``), and the script never sees where it
came from, nor any other student's files.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import sys
import threading
import warnings
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Mapping, Protocol, Sequence

from ..errors import GraderError, GraderWarning
from ..games import Position
from ..limits import NOT_GIVEN, Limits
from ..stop import Stop
from . import fairness, runner
from .interpreters import check_python
from .isolation import guard
from .parse import Claim, OutputScanner
from .runner import RunResult
from .sandbox import Sandbox

if TYPE_CHECKING:  # Self is typing's from Python 3.11: typing_extensions (a dependency of mypy) for 3.10
    from typing_extensions import Self

MAX_FILES = 1000  # files a submission folder may hold
MAX_BYTES = 64 * 2**20  # bytes a submission may hold, all files together
_SKIP = ("__pycache__", ".git", ".hg", ".svn", ".ipynb_checkpoints")


@dataclass(frozen=True)
class RunSettings:
    """What every kind of work shares (grading, tournaments, proofs): how untrusted programs
    are started and how many at once, and which exact solver judges them. Grading's
    ``Settings`` and a tournament's ``TournamentSettings`` add only their own fields.

    - ``limits``: each run of a program (a test, a move): wall and CPU seconds, memory, processes, output.
    - ``isolation``: auto | bwrap | unshare | uid | none (``isolation.choose`` says what auto picks).
    - ``python``: the interpreter for .py scripts.
    - ``commands``: file suffix -> command template for other languages, as in config.yaml.
    - ``jobs``: programs run at once (default: the number of cores, as config.yaml's default).
    - ``backend``: the exact solver: auto | native | python (``Game.backend``).
    - ``fair_cpu``: auto (each program gets the fair CPU share the machine can enforce) |
      required (a class or a tournament is refused where it cannot: ``fairness.check``).
    """

    limits: Limits = NOT_GIVEN
    isolation: str = "auto"
    python: str = sys.executable
    commands: Mapping[str, str] = field(default_factory=dict)
    jobs: int = field(default_factory=lambda: os.cpu_count() or 1)
    backend: str = "auto"
    fair_cpu: str = "auto"

    def check(self) -> None:
        """Raise GraderError when the interpreter or a command template's program is missing,
        before any test runs (else every test would fail the same way)."""
        check_python(self.python)
        for suffix, template in self.commands.items():
            program = shlex.split(template)[0]
            if "{" not in program and shutil.which(program) is None:
                raise GraderError(
                    f"the command for '{suffix}' files starts with {program!r}, which is not an installed "
                    f"program: install it or fix 'commands: {suffix}' in config.yaml"
                )

    def sandbox_mechanism(self, private: Sequence[Path] = (), strict: bool = True) -> str:
        """The isolation mechanism programs will run under here (see ``isolation.guard``).
        Where ``strict`` (a class, a tournament), fair CPU is checked too: what the machine
        cannot enforce is said once (GraderWarning), or refused (``fair_cpu: required``)."""
        mechanism = guard(self.isolation, self.python, private, strict)
        if strict:
            missing = fairness.check(self.fair_cpu)
            if missing:
                warnings.warn(missing, GraderWarning, stacklevel=2)
        return mechanism

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["commands"] = dict(self.commands)
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any], jobs: int | None = None) -> Self:
        """Settings written by ``to_json``; ``jobs`` (when given) replaces the stored one."""
        known = {f.name for f in fields(cls)}
        values = dict({k: v for k, v in data.items() if k in known}, limits=Limits(**data["limits"]))
        if jobs:
            values["jobs"] = jobs
        return cls(**values)


@dataclass(frozen=True)
class Script:
    """A script and the files next to it that it may read, as bytes."""

    protocol: ClassVar[str] = "script"  # how a game plays it (grader.engines.get_protocol)
    entry: str  # the file to run, a path relative to the bundle
    files: Mapping[str, bytes]  # relative path -> content, the entry included
    executables: frozenset[str]  # relative paths with an execute bit
    origin: str  # the path it was read from, for messages
    digest: str  # SHA-256 over every file: a changed helper file is a changed script

    @classmethod
    def from_path(cls, path: str | Path, folder: str | Path | None = None) -> Script:
        """The script at ``path`` with the files of ``folder`` (its student's folder), or alone.

        Raises GraderError naming the problem: a missing file, a folder too large to copy, a
        link pointing out of the folder.
        """
        p = Path(path)
        if not p.is_file():
            if p.is_symlink():
                raise GraderError(f"'{path}' is a symbolic link to '{os.readlink(p)}', which does not exist")
            raise GraderError(f"script '{path}' not found: give the path of a script file")
        if folder is None:
            return cls._build(p.name, {p.name: p}, str(path))
        root = Path(folder)
        files = _folder_files(root)
        entry = (
            p.resolve().relative_to(root.resolve()).as_posix() if not p.is_symlink() else p.relative_to(root).as_posix()
        )
        if entry not in files:
            raise GraderError(f"'{path}' is not inside '{folder}'")
        return cls._build(entry, files, str(path))

    @classmethod
    def of_files(cls, entry: str, paths: dict[str, Path], origin: str) -> Script:
        """A bundle of the files ``paths`` (relative path in the bundle -> file), run from ``entry``."""
        return cls._build(entry, paths, origin)

    @classmethod
    def _build(cls, entry: str, paths: dict[str, Path], origin: str) -> Script:
        files: dict[str, bytes] = {}
        executables = set()
        digest = hashlib.sha256()
        for rel in sorted(paths):
            try:
                data = paths[rel].read_bytes()
            except OSError as e:
                raise GraderError(f"cannot read '{paths[rel]}': {e.strerror}") from None
            files[rel] = data
            if os.access(paths[rel], os.X_OK):
                executables.add(rel)
            digest.update(f"{len(rel)}:{rel}:{len(data)}:".encode("utf-8", "surrogateescape"))
            digest.update(data)
        return cls(entry, files, frozenset(executables), origin, digest.hexdigest())

    @property
    def name(self) -> str:
        return Path(self.entry).name

    @property
    def suffix(self) -> str:
        return Path(self.entry).suffix.lower()

    def command(self, settings: RunSettings) -> list[str]:
        """How the script is started, with '{dir}' for its staged folder and '{board}', '{token}'
        to fill in. Raises GraderError when the grader does not know how to run it."""
        template = settings.commands.get(self.suffix)
        entry = "{dir}/" + self.entry
        if template:
            stem = Path(self.entry).stem
            return [part.format(board="{board}", token="{token}", script=entry, dir="{dir}", stem=stem)
                    for part in shlex.split(template)]  # fmt: skip
        if self.suffix == ".py":
            return [settings.python, entry, "{board}", "{token}"]
        if self.entry in self.executables:
            return [entry, "{board}", "{token}"]
        raise GraderError(
            f"cannot run '{self.origin}': make it executable (chmod +x) or add a command template for "
            f"'{self.suffix or 'files without a suffix'}' under 'commands' in config.yaml"
        )


def _grader_output(folder: Path) -> bool:
    """A run or tournament folder the grader wrote (an engine run from its own folder writes
    its tournaments there by default): not the program's files, and it changes as games end."""
    return (folder / "run.json").is_file() or (folder / "tournament.json").is_file()


def _folder_files(root: Path) -> dict[str, Path]:
    """Every regular file under ``root`` (hidden files, caches and the grader's run folders
    skipped), by relative path.

    A symbolic link is followed only when it stays inside ``root``: a link to another
    student's script or to a system file is an error, not a way to read it.
    """
    real_root = root.resolve()
    out: dict[str, Path] = {}
    total = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(
            d for d in dirnames if not d.startswith(".") and d not in _SKIP and not _grader_output(Path(dirpath) / d)
        )
        for name in sorted(filenames):
            if name.startswith("."):
                continue
            path = Path(dirpath) / name
            rel = path.relative_to(root).as_posix()
            real = path.resolve()
            if not real.is_relative_to(real_root):
                raise GraderError(
                    f"'{path}' is a symbolic link to '{real}', outside the submission: replace it by the file"
                )
            if not real.is_file():
                continue
            total += real.stat().st_size
            out[rel] = path
            if len(out) > MAX_FILES or total > MAX_BYTES:
                raise GraderError(
                    f"'{root}' holds more than {MAX_FILES} files or {MAX_BYTES // 2**20} MB: "
                    "remove data files the script does not need"
                )
    return out


class Stage:
    """Private copies of scripts on one machine, one folder per script content, made once;
    and the work folders of the runs (``folders``), each emptied for the next run."""

    def __init__(self) -> None:
        self._root: Path | None = None
        self._lock = threading.Lock()
        self._made: dict[str, Path] = {}
        self.folders = runner.WorkFolders()

    def folder(self, script: Script) -> Path:
        """The folder holding ``script``'s files (read-only to scripts under isolation)."""
        with self._lock:
            if script.digest not in self._made:
                if self._root is None:
                    self._root = Path(runner.work_folder("grader-scripts-"))
                folder = self._root / script.digest[:20]
                for rel, data in script.files.items():
                    path = folder / rel
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_bytes(data)
                    mode = 0o755 if rel in script.executables else 0o644
                    os.chmod(path, mode)
                self._made[script.digest] = folder
            return self._made[script.digest]

    def close(self) -> None:
        """Remove every copy and every work folder kept."""
        self.folders.close()
        with self._lock:
            if self._root is not None:
                shutil.rmtree(self._root, ignore_errors=True)
            self._root, self._made = None, {}


class Runs(Protocol):
    """Where a script runs (an executor's Worker): its staged copies, its stop, its sandbox."""

    stage: Stage
    stop: Stop
    host: str | None  # the machine's name on a cluster worker; None on this machine

    def sandbox(self, settings: RunSettings) -> Sandbox: ...

    def here(self, settings: RunSettings) -> RunSettings: ...


def run_script(script: Script, pos: Position, settings: RunSettings, where: Runs) -> tuple[RunResult, Claim]:
    """Run the script on one position; return how it ran and what it claimed."""
    settings = where.here(settings)
    folder = str(where.stage.folder(script))
    fields = {"board": pos.board_string(), "token": pos.token, "dir": folder}
    argv = [part.replace("{dir}", fields["dir"]).replace("{board}", fields["board"]).replace("{token}", fields["token"])
            for part in script.command(settings)]  # fmt: skip
    scanner = OutputScanner()
    result = runner.run(argv, settings.limits, scanner.feed, where.sandbox(settings), where.stop, folder,
                        where.stage.folders)  # fmt: skip
    # Tracebacks name the staged copy (/tmp/grader-scripts-.../alice.py): show the student's own file names.
    result = replace(result, stderr_tail=result.stderr_tail.replace(folder + os.sep, ""))
    if where.host is not None:
        result = replace(result, host=where.host)
    return result, scanner.claim()
