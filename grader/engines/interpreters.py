"""Python interpreters as the user's shell finds them, and the folders a sandbox must show
for one to start with its packages.

A command's ``python3`` is looked for on the user's PATH (their virtual environment first, as
their shell would), never inside the sandbox, whose PATH sees only the system's folders: there
``python3`` is /usr/bin/python3, usually without the course's packages (numpy). The interpreter
is asked once where it lives (a pyenv shim, a venv's symlink and its base install all resolve
to the real one) and which folders its packages come from.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..errors import GraderError

_PROBE = (
    "import json, sys; print(json.dumps({'executable': sys.executable, 'version': sys.version.split()[0], "
    "'prefix': sys.prefix, 'base_prefix': sys.base_prefix, 'path': [p for p in sys.path if p]}))"
)
PROBE_SECONDS = 20.0  # the most an interpreter may take to say where it lives


@dataclass(frozen=True)
class Interpreter:
    """A Python interpreter: the path a command names (``path``), the real program
    (``executable``), its version, and the folders its standard library and packages are in."""

    path: str
    executable: str
    version: str
    prefix: str
    base_prefix: str
    folders: tuple[str, ...]  # what a sandbox must show, read-only, for it to start with its packages

    def describe(self) -> str:
        """'3.11.7 (/work/venv/bin/python3)': the version, and the program that runs."""
        return f"{self.version} ({self.executable})"


def is_python(program: str) -> bool:
    """Whether ``program`` names a Python interpreter (python, python3, python3.11, /x/bin/python3)."""
    name = os.path.basename(program)
    return name.startswith("python") and all(ch.isdigit() or ch == "." for ch in name[len("python") :])


def which(program: str) -> str | None:
    """``program`` as the user's shell finds it: a path as given (made absolute), a bare name
    on the user's PATH; None when there is none."""
    if "/" in program:
        return os.path.abspath(program) if os.path.isfile(program) and os.access(program, os.X_OK) else None
    found = shutil.which(program)
    return os.path.abspath(found) if found else None


def course_python(setting: str) -> str:
    """The interpreter config.yaml's ``python:`` names, as a program to run: a bare name on
    the user's PATH, or a virtual environment's folder, as its real program; else as given
    (checked before any run: ``RunSettings.check``)."""
    found = find_interpreter(setting)
    return found.executable if found is not None else setting


def check_python(setting: str) -> Interpreter:
    """The interpreter config.yaml's ``python:`` names: GraderError, in one line, when it names
    no program, or a program that is no Python (it did not answer a line of Python)."""
    fix = "fix 'python:' in config.yaml (or remove it to use the grader's own)"
    if not os.path.isdir(setting) and shutil.which(setting) is None:
        raise GraderError(f"the Python for .py scripts, {setting!r}, is not an executable program: {fix}")
    found = find_interpreter(setting)
    if found is None:
        raise GraderError(f"the Python for .py scripts, {setting!r}, is not a Python interpreter (asked to run a "
                          f"line of Python, it gave no answer): {fix}")  # fmt: skip
    return found


def find_interpreter(program: str) -> Interpreter | None:
    """The interpreter ``program`` names (a bare name is looked for on the user's PATH, a
    folder is a virtual environment's); None when there is none or it does not run."""
    if os.path.isdir(program):
        found = [p for p in ("bin/python3", "bin/python", "Scripts/python.exe") if os.path.isfile(Path(program, p))]
        if not found:
            return None
        program = str(Path(program, found[0]))
    path = which(program)
    return _probe(path) if path is not None else None


@functools.lru_cache(maxsize=64)
def _probe(path: str) -> Interpreter | None:
    """Ask the interpreter at ``path`` where it lives (once per path and process), isolated
    (-I: no PYTHONPATH, no user site) as a sandboxed program is in that respect."""
    try:
        done = subprocess.run([path, "-I", "-c", _PROBE], capture_output=True, text=True, timeout=PROBE_SECONDS,
                              stdin=subprocess.DEVNULL)  # fmt: skip
        data = json.loads(done.stdout)
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    if not isinstance(data, dict) or not all(isinstance(data.get(k), str) for k in ("executable", "prefix")):
        return None
    return Interpreter(path, data["executable"], str(data.get("version", "?")), data["prefix"],
                       str(data.get("base_prefix", data["prefix"])), _folders(path, data))  # fmt: skip


def _folders(path: str, data: dict) -> tuple[str, ...]:
    """The folders the interpreter needs: its program's (as named and as resolved), each
    prefix's bin, lib and pyvenv.cfg, and the folders of sys.path inside a prefix (its
    packages). A sys.path folder elsewhere (a legacy editable install's project folder, which
    may hold a course's private files) is never shown."""
    prefixes = {data["prefix"], str(data.get("base_prefix", data["prefix"]))}
    wanted = {os.path.dirname(path), os.path.dirname(os.path.realpath(path)), os.path.dirname(data["executable"])}
    for prefix in prefixes:
        wanted |= {os.path.join(prefix, p) for p in ("bin", "lib", "lib64", "pyvenv.cfg")}
    paths = data.get("path")
    if isinstance(paths, list):
        inside = tuple(p.rstrip("/") + "/" for p in prefixes)
        wanted |= {p for p in paths if isinstance(p, str) and os.path.isabs(p) and p.startswith(inside)}
    return tuple(sorted(w for w in wanted if os.path.exists(w)))


__all__ = ["Interpreter", "check_python", "course_python", "find_interpreter", "is_python", "which"]
