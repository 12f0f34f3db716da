"""Archives of a program's folder (.zip, .tar.gz), unpacked as safely for ``grader grade
sub.zip`` as for the portal's uploads (the same code): the archive is checked whole before a
byte of it is written: no member outside the folder, no links, devices or FIFOs, not too many
members, nor too many bytes unpacked; each refusal is an ArchiveError, one line naming the
problem and the fix."""

from __future__ import annotations

import contextlib
import io
import shutil
import stat
import tarfile
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Iterator

from ..engines.leftovers import work_folder
from ..errors import GraderError
from ..names import visible

ARCHIVES = (".zip", ".tar.gz", ".tgz")


class ArchiveError(GraderError):
    """An archive that cannot be unpacked safely (the message says how to make one that can)."""


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
            raise ArchiveError(f"the archive unpacks to more than {_mib(self.total_bytes)}: "
                              "leave out data files and build products, and upload it again")  # fmt: skip
        self.check_ratio(unpacked, uploaded)

    def check_ratio(self, unpacked: int, uploaded: int) -> None:
        if unpacked > 2**20 and unpacked > self.ratio * max(uploaded, 1):
            raise ArchiveError(f"the archive unpacks to over {unpacked // max(uploaded, 1)} times its size (a zip "
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
            raise ArchiveError(f"the archive's member '{m.path}' points outside its folder: upload the folder alone")
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


def _checked(filename: str, content: bytes, limits: ArchiveLimits) -> list[Member]:
    """Every member of the archive, refused whole at the first rule it breaks."""
    if filename.lower().endswith(".zip"):
        return _zip_members(content, limits)
    return _tar_members(content, limits)


def _member_path(name: str) -> PurePosixPath:
    """An archive member's name as a relative path; ArchiveError for one that could leave the folder."""
    if "\\" in name or visible(name) != name:
        raise ArchiveError(f"the archive's member {name!r} has a backslash, a control or an invisible character (a "
                           "right-to-left override...) in its name: rename the file and pack the folder again with "
                           "a zip or tar tool that writes / between folders")  # fmt: skip
    path = PurePosixPath(name)
    if path.is_absolute() or (path.parts and path.parts[0].endswith(":")):
        raise ArchiveError(f"the archive's member {name!r} has an absolute path: pack the folder by relative paths "
                          "(zip -r lab.zip lab, from the folder above it)")  # fmt: skip
    parts = [p for p in path.parts if p not in ("", ".")]
    if ".." in parts:
        raise ArchiveError(f"the archive's member {name!r} climbs out of the folder with '..': "
                          "pack only the program's folder, by relative paths")  # fmt: skip
    if not parts:
        raise ArchiveError(f"the archive has a member named {name!r}: pack the program's folder again")
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
            raise ArchiveError(f"the archive has more than {self.limits.members} members: "
                              "upload only the program's own files")  # fmt: skip
        if path in self.seen:
            raise ArchiveError(f"the archive holds '{path}' twice: pack the folder again, each file once")
        parents = set(path.parents) - {PurePosixPath(".")}
        if parents & self.files or (not is_dir and path in self.dirs) or (is_dir and path in self.files):
            raise ArchiveError(f"the archive's '{path}' is both a file and a folder: pack the folder again")
        self.seen.add(path)
        (self.dirs if is_dir else self.files).add(path)
        self.dirs |= parents


def _zip_members(content: bytes, limits: ArchiveLimits) -> list[Member]:
    try:
        zf = zipfile.ZipFile(io.BytesIO(content))
        infos = zf.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError) as e:
        raise ArchiveError(f"the upload is not a readable .zip ({e}): make it again with zip -r") from None
    names = _Names(limits)
    declared = 0
    checked: list[tuple[zipfile.ZipInfo, PurePosixPath]] = []
    for info in infos:
        path = _member_path(info.filename)
        mode = info.external_attr >> 16
        kind = stat.S_IFMT(mode)
        if kind == stat.S_IFLNK:
            raise ArchiveError(f"the archive's '{path}' is a symbolic link: put the file itself in the archive")
        if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
            raise ArchiveError(f"the archive's '{path}' is a device or a FIFO, not a file: leave it out")
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
            raise ArchiveError(f"the archive's '{path}' cannot be unpacked ({e}): make the .zip again") from None
        if len(data) != info.file_size:  # a size in the header that lies: a bomb's trick
            raise ArchiveError(f"the archive's '{path}' does not hold the size its header says: make the .zip again")
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
        raise ArchiveError(f"the upload is not a readable .tar.gz ({e}): make it again with tar czf") from None
    names = _Names(limits)
    members, unpacked = [], 0
    for info in infos:
        path = _member_path(info.name)
        if info.issym() or info.islnk():
            kind = "symbolic" if info.issym() else "hard"
            raise ArchiveError(f"the archive's '{path}' is a {kind} link: put the file itself in the archive")
        if not (info.isfile() or info.isdir()):
            raise ArchiveError(f"the archive's '{path}' is a device or a FIFO, not a file: leave it out")
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
        raise ArchiveError(f"the upload is not a readable .tar.gz ({e}): make it again with tar czf") from None
    if not d.eof:
        raise ArchiveError("the upload is not a whole .tar.gz (it ends too soon): make it again with tar czf")
    return bytes(out)


def _check_member(path: PurePosixPath, size: int, limits: ArchiveLimits) -> None:
    if size > limits.member_bytes:
        raise ArchiveError(f"the archive's '{path}' unpacks to more than {_mib(limits.member_bytes)}: "
                          "leave it out of the archive")  # fmt: skip


def archive_name(path: Path) -> str:
    """The archive's name without its suffix ('lab5' of lab5.tar.gz): the student's folder."""
    suffix = next((s for s in ARCHIVES if path.name.lower().endswith(s)), "")
    return path.name[: len(path.name) - len(suffix)] or "submission"


def read_archive(path: str | Path, limits: ArchiveLimits = LIMITS) -> bytes:
    """The bytes of the archive file at ``path``: ArchiveError for one that cannot be read, or
    is larger than everything it may unpack to."""
    p = Path(path)
    try:
        if p.stat().st_size > limits.total_bytes:
            raise ArchiveError(f"'{p}' is larger than the {_mib(limits.total_bytes)} a program's folder may unpack "
                               "to: leave out data files and build products, and pack it again")  # fmt: skip
        return p.read_bytes()
    except OSError as e:
        raise ArchiveError(f"cannot read '{p}': {e.strerror}") from None


@contextlib.contextmanager
def unpacked(path: str | Path, limits: ArchiveLimits = LIMITS) -> Iterator[Path]:
    """While inside, the archive at ``path`` unpacked (``unpack_files``) into a private work
    folder named as the archive without its suffix (the student's folder); removed at the end."""
    p = Path(path)
    content = read_archive(p, limits)
    work = Path(work_folder("grader-archive-"))
    try:
        folder = work / archive_name(p)
        folder.mkdir()
        yield unpack_files(p.name, content, folder, limits)
    finally:
        shutil.rmtree(work, ignore_errors=True)
