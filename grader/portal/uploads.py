"""What a student may upload, and how it becomes a submission folder: one program file (a .py
script, a file of a suffix config.yaml's ``commands:`` runs, or a ``#!`` script), or an archive
(.zip, .tar.gz) of a program folder, whose program is found as ``grader grade`` finds a
student's (its one script, or config.yaml's ``entry``), or, for a GTP lab, started by the
command its COMMAND file names (as config.yaml's ``engines:`` name one). An archive is checked whole before a
byte of it is written (``runs.archives``, which ``grader grade sub.zip`` unpacks with too): no
member outside the folder, no links, devices or FIFOs, not too many members, nor too many bytes
unpacked. An uploaded name never becomes a path outside the submission's folder; each refusal
is an UploadError, one line naming the problem and the fix."""

from __future__ import annotations

import tempfile
from collections.abc import Collection
from pathlib import Path, PurePosixPath

from ..engines.programs import ProtocolEngine
from ..errors import GraderError
from ..runs.archives import ARCHIVES, LIMITS, ArchiveError, ArchiveLimits, is_archive, unpack_files
from ..runs.submissions import Submission, find_submission_folder, is_script

PROGRAM = "submission"  # a single file is written as submission.py (submission.SUFFIX; 'submission' for '#!')
COMMAND_FILE = "COMMAND"  # an archive's one line naming how its GTP program starts: python3 Gomoku.py, ./engine
UploadError = ArchiveError  # an upload the portal refuses (the student's to fix: the message says how)

__all__ = ["ARCHIVES", "LIMITS", "ArchiveLimits", "UploadError", "check_upload", "command_program", "is_archive",
           "program_suffixes", "unpack", "unpack_files", "upload_files"]  # fmt: skip


def program_suffixes(commands: Collection[str]) -> set[str]:
    """The suffixes of program files: .py, and those config.yaml's ``commands:`` runs."""
    return {".py"} | {s.lower() for s in commands}


def check_upload(filename: str, content: bytes, commands: Collection[str] = (), entry: str | None = None,
                 limits: ArchiveLimits = LIMITS, gtp: bool = False) -> None:  # fmt: skip
    """Refuse (UploadError) what could not be graded: a file that is no program, an archive
    that breaks a rule or holds no one program to run (``gtp``: a GTP lab's, which may name
    its command). Nothing is written outside a temporary folder."""
    with tempfile.TemporaryDirectory(prefix="grader-upload-") as tmp:
        sub = unpack(filename, content, Path(tmp), commands, entry, limits)
        if sub.folder is not None and (sub.folder / COMMAND_FILE).is_file() and not gtp:
            raise UploadError(f"a {COMMAND_FILE} file names a GTP program's command, and this lab runs a script as "
                              "grader grade does: leave it out of the archive")  # fmt: skip
        if sub.path is not None:
            return
        found = sorted(p.name for p in Path(tmp).iterdir() if is_script(p, program_suffixes(commands)))
    if not found:
        raise UploadError("the archive holds no program at its top (a .py file, or an executable): "
                          "put your program's folder in it, the program at its top")  # fmt: skip
    raise UploadError(f"the archive holds {len(found)} programs at its top ({', '.join(found)}) and the course names "
                      "none of them to run: leave in only yours, or ask your instructor which name it runs")  # fmt: skip


def unpack(filename: str, content: bytes, folder: Path, commands: Collection[str] = (), entry: str | None = None,
           limits: ArchiveLimits = LIMITS) -> Submission:  # fmt: skip
    """Write the upload into the empty ``folder`` and return its submission, found as ``grader
    grade`` finds a student's: a single file as ``submission.SUFFIX``, an archive's files under
    their own names (its one top folder, if it has nothing else, taken away)."""
    suffixes = program_suffixes(commands)
    if not is_archive(filename):
        path = folder / (PROGRAM + _program_suffix(filename, content, suffixes))
        path.write_bytes(content)
        path.chmod(0o755 if path.suffix == "" else 0o644)
        return Submission(PROGRAM, path, single=True)
    root = unpack_files(filename, content, folder, limits)
    program = command_program(root)
    if program is not None and program.bundle is not None:
        return Submission(PROGRAM, root / program.bundle.entry, folder=root)
    return find_submission_folder(root, set(commands), entry)


def command_program(folder: Path, protocol: str = "gtp", command: str | None = None) -> ProtocolEngine | None:
    """The program of ``protocol`` (GTP, NBoard) that ``command``, else the COMMAND file of an
    unpacked archive, starts in its folder, as ``grader regress "COMMAND" FILE`` would (None:
    no command given and no COMMAND file)."""
    path = folder / COMMAND_FILE
    example = _example(folder)
    where = "the command" if command is not None else COMMAND_FILE
    if command is None:
        if not path.is_file():
            return None
        try:
            lines = path.read_text(encoding="utf-8").strip().splitlines()
        except (OSError, UnicodeDecodeError):
            raise UploadError(
                f"{COMMAND_FILE} is not text: write in it the command that starts your program, {example}"
            ) from None
        if len(lines) != 1:
            raise UploadError(
                f"{COMMAND_FILE} must be one line, the command that starts your program in its folder, {example}"
            )
        command = lines[0]
    try:
        program = ProtocolEngine.from_command(command, protocol, cwd=folder)
    except GraderError as e:
        raise UploadError(f"{where}: {str(e).replace(str(folder), 'the archive')}") from None
    if program.bundle is None:
        raise UploadError(f"{where} names none of the archive's files ({_listing(folder)}): name your program's, "
                          f"{example}")  # fmt: skip
    return program


LISTED = 8  # files a refusal names at most


def _files(folder: Path) -> list[str]:
    """The archive's files (not its COMMAND file), by their paths in it, sorted."""
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and p.name != COMMAND_FILE)


def _listing(folder: Path) -> str:
    """'it holds engine.py, book.bin' (the first LISTED files, and how many more)."""
    found = _files(folder)
    if not found:
        return "it holds no file but its COMMAND"
    more = f" and {len(found) - LISTED} more" if len(found) > LISTED else ""
    return f"it holds {', '.join(found[:LISTED])}{more}"


def _example(folder: Path) -> str:
    """A command for the refusals, of the archive's own program where one shows: 'like python3 engine.py'."""
    found = _files(folder)
    python = [f for f in found if f.endswith(".py")]
    if len(python) == 1:
        return f"like python3 {python[0]}"
    return f"like ./{found[0]}" if len(found) == 1 else "like ./engine, or python3 engine.py"


def _program_suffix(filename: str, content: bytes, suffixes: set[str]) -> str:
    suffix = PurePosixPath(filename).suffix.lower()
    if suffix in suffixes:
        return suffix
    if content.startswith(b"#!"):
        return ""
    known = ", ".join(sorted(suffixes))
    raise UploadError(f"{filename!r} is not a program the lab runs: upload a {known} file, a script starting "
                      "with #!, or a .zip or .tar.gz of your program's folder")  # fmt: skip


def upload_files(filename: str, content: bytes, limits: ArchiveLimits = LIMITS) -> list[tuple[str, bytes]]:
    """The files of an upload by their path in it, in path order: a single file under its
    uploaded name, an archive's members as ``unpack_files`` writes them (in a temporary folder)."""
    if not is_archive(filename):
        return [(filename, content)]
    with tempfile.TemporaryDirectory(prefix="grader-code-") as tmp:
        root = unpack_files(filename, content, Path(tmp), limits)
        return sorted((p.relative_to(root).as_posix(), p.read_bytes()) for p in root.rglob("*")
                      if p.is_file() and not p.is_symlink())  # fmt: skip
