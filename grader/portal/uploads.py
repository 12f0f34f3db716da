"""What a student may upload, and how it becomes a submission folder: one program file (a .py
script, a file of a suffix config.yaml's ``commands:`` runs, or a ``#!`` script), or an archive
(.zip, .tar.gz) of a program folder, whose program is found as ``grader grade`` finds a
student's (its one script, or config.yaml's ``entry``), or, for a GTP lab, started by the
command its COMMAND file names (as config.yaml's ``engines:`` name one). An archive is checked whole before a
byte of it is written: no member outside the folder, no links, devices or FIFOs, not too many
members, nor too many bytes unpacked. An uploaded name never becomes a path outside the
submission's folder; each refusal is an UploadError, one line naming the problem and the fix."""

from __future__ import annotations

import io
import stat
import tarfile
import tempfile
import zipfile
import zlib
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ..engines.programs import ProtocolEngine
from ..errors import GraderError
from ..names import visible
from ..runs.submissions import Submission, find_submission_folder, is_script

PROGRAM = "submission"  # a single file is written as submission.py (submission.SUFFIX; 'submission' for '#!')
COMMAND_FILE = "COMMAND"  # an archive's one line naming how its GTP program starts: python3 Gomoku.py, ./engine
ARCHIVES = (".zip", ".tar.gz", ".tgz")


class UploadError(GraderError):
    """An upload the portal refuses (the student's to fix: the message says how)."""


@dataclass(frozen=True)
class ArchiveLimits:
    """What an archive may hold once unpacked."""

    members: int = 200  # files and folders
    member_bytes: int = 8 * 2**20  # one file, unpacked
    total_bytes: int = 32 * 2**20  # every file together, unpacked
    ratio: int = 100  # unpacked bytes per byte uploaded, past the first MiB (a zip bomb's is thousands)

    def check_total(self, unpacked: int, uploaded: int) -> None:
        """Refuse ``unpacked`` bytes from ``uploaded``: more than the total, or a bomb's ratio."""
        if unpacked > self.total_bytes:
            raise UploadError(f"the archive unpacks to more than {_mib(self.total_bytes)}: "
                              "leave out data files and build products, and upload it again")  # fmt: skip
        self.check_ratio(unpacked, uploaded)

    def check_ratio(self, unpacked: int, uploaded: int) -> None:
        if unpacked > 2**20 and unpacked > self.ratio * max(uploaded, 1):
            raise UploadError(f"the archive unpacks to over {unpacked // max(uploaded, 1)} times its size (a zip "
                              f"bomb's ratio; at most {self.ratio}): upload the program's own files")  # fmt: skip


LIMITS = ArchiveLimits()


def _mib(n: int) -> str:
    return f"{n / 2**20:g} MiB"


@dataclass(frozen=True)
class Member:
    """A file or folder of an archive, checked: its path inside the submission's folder."""

    path: PurePosixPath
    is_dir: bool
    executable: bool
    data: bytes


def is_archive(filename: str) -> bool:
    return filename.lower().endswith(ARCHIVES)


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


def unpack_files(filename: str, content: bytes, folder: Path, limits: ArchiveLimits = LIMITS) -> Path:
    """Write the archive's files into the empty ``folder`` under their own names (its one top
    folder, if it has nothing else, taken away); the folder, resolved."""
    members = _checked(filename, content, limits)
    top = {m.path.parts[0] for m in members}
    strip = len(top) == 1 and all(m.is_dir or len(m.path.parts) > 1 for m in members)  # 'zip -r lab.zip lab'
    root = folder.resolve()
    for m in members:
        parts = m.path.parts[1:] if strip else m.path.parts
        if not parts:
            continue
        target = root.joinpath(*parts)
        if root not in target.parents:  # _checked refused such names: never written all the same
            raise UploadError(f"the archive's member '{m.path}' points outside its folder: upload the folder alone")
        if m.is_dir:
            target.mkdir(parents=True, exist_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(target, "xb") as out:  # x: never through a file already there
            out.write(m.data)
        target.chmod(0o755 if m.executable else 0o644)
    for d in [root, *(p for p in root.rglob("*") if p.is_dir())]:
        d.chmod(0o755)
    return root


def command_program(folder: Path, protocol: str = "gtp", command: str | None = None) -> ProtocolEngine | None:
    """The program of ``protocol`` (GTP, NBoard) that ``command``, else the COMMAND file of an
    unpacked archive, starts in its folder, as ``grader regress "COMMAND" FILE`` would (None:
    no command given and no COMMAND file)."""
    path = folder / COMMAND_FILE
    example = "like python3 Gomoku.py"
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
        raise UploadError(f"{where} names none of the archive's files: name your program's, {example}")
    return program


def _program_suffix(filename: str, content: bytes, suffixes: set[str]) -> str:
    suffix = PurePosixPath(filename).suffix.lower()
    if suffix in suffixes:
        return suffix
    if content.startswith(b"#!"):
        return ""
    known = ", ".join(sorted(suffixes))
    raise UploadError(f"{filename!r} is not a program the lab runs: upload a {known} file, a script starting "
                      "with #!, or a .zip or .tar.gz of your program's folder")  # fmt: skip


def _checked(filename: str, content: bytes, limits: ArchiveLimits) -> list[Member]:
    """Every member of the archive, refused whole at the first rule it breaks."""
    if filename.lower().endswith(".zip"):
        return _zip_members(content, limits)
    return _tar_members(content, limits)


def _member_path(name: str) -> PurePosixPath:
    """An archive member's name as a relative path; UploadError for one that could leave the folder."""
    if "\\" in name or visible(name) != name:
        raise UploadError(f"the archive's member {name!r} has a backslash, a control or an invisible character (a "
                          "right-to-left override...) in its name: rename the file and pack the folder again with "
                          "a zip or tar tool that writes / between folders")  # fmt: skip
    path = PurePosixPath(name)
    if path.is_absolute() or (path.parts and path.parts[0].endswith(":")):
        raise UploadError(f"the archive's member {name!r} has an absolute path: pack the folder by relative paths "
                          "(zip -r lab.zip lab, from the folder above it)")  # fmt: skip
    parts = [p for p in path.parts if p not in ("", ".")]
    if ".." in parts:
        raise UploadError(f"the archive's member {name!r} climbs out of the folder with '..': "
                          "pack only the program's folder, by relative paths")  # fmt: skip
    if not parts:
        raise UploadError(f"the archive has a member named {name!r}: pack the program's folder again")
    return PurePosixPath(*parts)


class _Names:
    """The member names seen so far: each once, and never both a file and a folder."""

    def __init__(self, limits: ArchiveLimits):
        self.limits = limits
        self.seen: set[PurePosixPath] = set()
        self.files: set[PurePosixPath] = set()
        self.dirs: set[PurePosixPath] = set()  # named, or holding a member

    def add(self, path: PurePosixPath, is_dir: bool) -> None:
        if len(self.seen) >= self.limits.members:
            raise UploadError(f"the archive has more than {self.limits.members} members: "
                              "upload only the program's own files")  # fmt: skip
        if path in self.seen:
            raise UploadError(f"the archive holds '{path}' twice: pack the folder again, each file once")
        parents = set(path.parents) - {PurePosixPath(".")}
        if parents & self.files or (not is_dir and path in self.dirs) or (is_dir and path in self.files):
            raise UploadError(f"the archive's '{path}' is both a file and a folder: pack the folder again")
        self.seen.add(path)
        (self.dirs if is_dir else self.files).add(path)
        self.dirs |= parents


def _zip_members(content: bytes, limits: ArchiveLimits) -> list[Member]:
    try:
        zf = zipfile.ZipFile(io.BytesIO(content))
        infos = zf.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError) as e:
        raise UploadError(f"the upload is not a readable .zip ({e}): make it again with zip -r") from None
    names = _Names(limits)
    declared = 0
    checked: list[tuple[zipfile.ZipInfo, PurePosixPath]] = []
    for info in infos:
        path = _member_path(info.filename)
        mode = info.external_attr >> 16
        kind = stat.S_IFMT(mode)
        if kind == stat.S_IFLNK:
            raise UploadError(f"the archive's '{path}' is a symbolic link: put the file itself in the archive")
        if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
            raise UploadError(f"the archive's '{path}' is a device or a FIFO, not a file: leave it out")
        is_dir = info.is_dir()
        names.add(path, is_dir)
        _check_member(path, info.file_size, limits)
        declared += info.file_size
        limits.check_total(declared, len(content))
        checked.append((info, path))
    members, unpacked = [], 0
    for info, path in checked:
        if info.is_dir():
            members.append(Member(path, True, False, b""))
            continue
        try:
            with zf.open(info) as f:
                data = f.read(min(info.file_size, limits.member_bytes) + 1)
        except (zipfile.BadZipFile, NotImplementedError, RuntimeError, OSError, zlib.error, EOFError) as e:
            raise UploadError(f"the archive's '{path}' cannot be unpacked ({e}): make the .zip again") from None
        if len(data) != info.file_size:  # a size in the header that lies: a bomb's trick
            raise UploadError(f"the archive's '{path}' does not hold the size its header says: make the .zip again")
        unpacked += len(data)
        limits.check_total(unpacked, len(content))
        members.append(Member(path, False, bool((info.external_attr >> 16) & 0o111), data))
    return members


def _tar_members(content: bytes, limits: ArchiveLimits) -> list[Member]:
    raw = _gunzip(content, limits)
    try:
        tf = tarfile.open(fileobj=io.BytesIO(raw), mode="r:")
        infos = tf.getmembers()
    except (tarfile.TarError, OSError, ValueError) as e:
        raise UploadError(f"the upload is not a readable .tar.gz ({e}): make it again with tar czf") from None
    names = _Names(limits)
    members, unpacked = [], 0
    for info in infos:
        path = _member_path(info.name)
        if info.issym() or info.islnk():
            kind = "symbolic" if info.issym() else "hard"
            raise UploadError(f"the archive's '{path}' is a {kind} link: put the file itself in the archive")
        if not (info.isfile() or info.isdir()):
            raise UploadError(f"the archive's '{path}' is a device or a FIFO, not a file: leave it out")
        names.add(path, info.isdir())
        _check_member(path, info.size, limits)
        unpacked += info.size
        limits.check_total(unpacked, len(content))
        data = b""
        if info.isfile():
            f = tf.extractfile(info)
            data = f.read() if f is not None else b""
        members.append(Member(path, info.isdir(), bool(info.mode & 0o111), data))
    return members


def _gunzip(content: bytes, limits: ArchiveLimits) -> bytes:
    """The tar inside a .tar.gz, unpacked a piece at a time, refused as soon as it passes the limits."""
    room = limits.total_bytes + 1024 * (limits.members + 10)  # the files, a tar header for each, the padding
    out, d, data = bytearray(), zlib.decompressobj(16 + zlib.MAX_WBITS), content
    try:
        while data and not d.eof:
            out += d.decompress(data, 1 << 16)
            data = d.unconsumed_tail
            limits.check_ratio(len(out), len(content))
            if len(out) > room:
                limits.check_total(limits.total_bytes + 1, len(content))
    except zlib.error as e:
        raise UploadError(f"the upload is not a readable .tar.gz ({e}): make it again with tar czf") from None
    if not d.eof:
        raise UploadError("the upload is not a whole .tar.gz (it ends too soon): make it again with tar czf")
    return bytes(out)


def _check_member(path: PurePosixPath, size: int, limits: ArchiveLimits) -> None:
    if size > limits.member_bytes:
        raise UploadError(f"the archive's '{path}' unpacks to more than {_mib(limits.member_bytes)}: "
                          "leave it out of the archive")  # fmt: skip
