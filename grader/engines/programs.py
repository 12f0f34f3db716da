"""Protocol engines: a program, its command and its files, as a tournament or a regression
names it ('./edax -nboard' in its folder). How a game plays it is its protocol's
(``protocol``, ``sessions``)."""

from __future__ import annotations

import hashlib
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from ..errors import GraderError
from .interpreters import Interpreter, find_interpreter, is_python, which
from .registry import get_protocol
from .scripts import Script

PYTHON = "{python}"  # in a protocol engine's command: the Python of the run's settings


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
