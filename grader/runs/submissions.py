"""Students' submissions: each student's script and folder, and finding them among script
files, folders of scripts and folders of student folders."""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass
from pathlib import Path

from ..engines.scripts import Script
from ..errors import GraderError, GraderWarning
from ..files import bundled
from .archives import is_archive, unpacked


@dataclass(frozen=True)
class Submission:
    """One student's script. ``path`` is None when no single script could be chosen."""

    name: str
    path: Path | None
    problem: str | None = None  # why there is no script to grade
    folder: Path | None = None  # the student's own folder: its files come along with the script
    single: bool = False  # a script given on its own: the files of its folder come along if there are few

    def script(self) -> Script:
        """The script with its files, read now (raises GraderError naming what is wrong)."""
        if self.path is None:
            raise GraderError(self.problem or f"'{self.name}' has no script")
        if is_archive(self.path.name):
            return archive_script(self.path, set())
        if not self.single:
            return Script.from_path(self.path, self.folder)
        try:
            return Script.from_path(self.path, self.path.parent)
        except GraderError as e:
            script = Script.from_path(self.path)
            warnings.warn(f"{e}; running '{self.path.name}' without the files next to it", GraderWarning, stacklevel=2)
            return script


def archive_script(path: Path, suffixes: set[str], entry: str | None = None) -> Script:
    """The script of the student's folder packed in the archive at ``path``, with its files:
    unpacked as the portal unpacks an upload (``archives.unpacked``), the script found as a
    class's student's is (its one script, or ``entry``)."""
    with unpacked(path) as folder:
        found = find_submission_folder(folder, suffixes, entry)
        if found.path is None:
            raise GraderError(f"{path}: {(found.problem or 'no script').replace(str(folder), 'the archive')}")
        return Script.from_path(found.path, folder)


def is_script(path: Path, suffixes: set[str]) -> bool:
    """A file the grader can run: .py, a suffix with a command template, or an executable.
    Judged by its own name, so a link is a script when its name says so."""
    if path.name.startswith((".", "_")) or not (path.is_file() or path.is_symlink()):
        return False
    return path.suffix.lower() in suffixes or os.access(path, os.X_OK)


def _name(text: str) -> str:
    """A student's name as text: bytes of a file name that are not UTF-8 become U+FFFD."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _file_student(path: Path) -> Submission:
    """A student who is one file; a symbolic link is not graded (it could point at anyone's file)."""
    name = _name(path.stem)
    if path.is_symlink():
        return Submission(
            name, None, f"'{path}' is a symbolic link to '{os.readlink(path)}', not a script file: copy the file in"
        )
    return Submission(name, path)


def find_submissions(paths: list[str | Path], suffixes: set[str], entry: str | None = None) -> list[Submission]:
    """Every submission under ``paths``, sorted by student name.

    A file is one student (named by the file). A folder's script files are one student each;
    each of its sub-folders is one student (named by the folder) holding one script, or
    several of which ``entry`` names the one to run.
    """
    suffixes = {".py"} | {s.lower() for s in suffixes}
    found: list[Submission] = []
    for arg in paths:
        p = Path(arg)
        if p.is_file() and is_archive(p.name):
            raise GraderError(f"'{p}' is an archive: grader grade unpacks one alone (grader grade {p}, as the portal "
                              "does an upload); in a class, unpack it into the class's folder")  # fmt: skip
        if p.is_file():
            found.append(Submission(_name(p.stem), p))
        elif p.is_dir():
            _not_the_examples(p)
            for child in sorted(p.iterdir()):
                if child.is_dir() and not child.is_symlink() and not child.name.startswith((".", "_")):
                    found.append(_from_folder(child, suffixes, entry))
                elif is_script(child, suffixes):
                    found.append(_file_student(child))
        else:
            raise GraderError(f"'{arg}' not found: give script files or folders of submissions")
    names: dict[str, Submission] = {}
    for sub in found:
        if sub.name in names:
            raise GraderError(
                f"two submissions are named '{sub.name}' ({names[sub.name].path or sub.name} and {sub.path or sub.name}): "
                "rename one, or grade them in separate runs"
            )
        names[sub.name] = sub
    if not found:
        raise GraderError(f"no scripts found in {', '.join(map(str, paths))}: give .py files or folders holding them")
    return sorted(found, key=lambda s: s.name)


def _not_the_examples(folder: Path) -> None:
    """Refuse the grader's own folder of example scripts as a class, saying what to grade
    instead: its scripts are three labs' examples, one times out on every test, and one
    needs another beside it, so a class run of it takes minutes and shows misleading rows."""
    try:
        same = folder.resolve() == bundled("submissions").resolve()
    except OSError:
        return
    if same:
        raise GraderError(
            f"'{folder}' is the grader's folder of examples, not a class (tictactoe/ and gomoku/ hold other labs', "
            "slow.py times out on every test, deep_negamax.py needs negamax.py beside it): grade one at a time "
            f"(grader grade {folder / 'negamax.py'}), or several as a class on the 10 fixed boards: grader grade "
            + " ".join(str(folder / f"{n}.py") for n in ("negamax", "wrong_line", "wrong_score", "crash"))
            + f" --boards {bundled('fixtures', 'standard.txt')}"
        )


def find_submission_folder(folder: Path, suffixes: set[str], entry: str | None = None) -> Submission:
    """One student's folder (a Gradescope submission, say): its one script, or ``entry``."""
    return _from_folder(folder, {".py"} | {s.lower() for s in suffixes}, entry, name="submission")


def _from_folder(folder: Path, suffixes: set[str], entry: str | None, name: str | None = None) -> Submission:
    name = name or _name(folder.name)
    scripts = [f for f in sorted(folder.iterdir()) if is_script(f, suffixes)]
    if entry and (folder / entry).is_file():
        return Submission(name, folder / entry, folder=folder)
    if len(scripts) == 1:
        return Submission(name, scripts[0], folder=folder)
    if not scripts:
        return Submission(name, None, f"no script found in {folder}", folder)
    names = ", ".join(f.name for f in scripts)
    return Submission(
        name,
        None,
        f"{len(scripts)} scripts in {folder} ({names}): set 'entry' in config.yaml to the one to run",
        folder,
    )
