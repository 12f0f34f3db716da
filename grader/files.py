"""Files the user gives (read as UTF-8 text, with clear errors), files shipped with the package,
and the files a run writes for the user (exports, JSON)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from .errors import BoardFileError, GraderError

SHARE = Path(__file__).resolve().parent / "share"  # data that ships with the package


def bundled(*parts: str) -> Path:
    """A file shipped with the package: ``bundled('fixtures', 'standard.txt')``."""
    return SHARE.joinpath(*parts)


def read_lines(path: str | Path, what: str) -> list[str]:
    """The lines of a text file the user gave (``what``: 'board file', say), as UTF-8 with or
    without a byte-order mark. Anything else is a BoardFileError naming the real cause."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise BoardFileError(f"{what} {str(p)!r} not found: give the path of an existing file") from None
    except IsADirectoryError:
        raise BoardFileError(f"{what} {str(p)!r} is a folder: give the path of a file") from None
    except OSError as e:
        raise BoardFileError(f"cannot read {what} {str(p)!r}: {e.strerror}") from None
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise BoardFileError(f"{what} {str(p)!r} is UTF-16 text: save it as UTF-8 (plain text)")
    if b"\0" in data:
        line = data.count(b"\n", 0, data.index(b"\0")) + 1
        raise BoardFileError(
            f"{what} {str(p)!r} is not a text file (a NUL byte on line {line}): give a plain text file"
        )
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        start = 3 if data.startswith(b"\xef\xbb\xbf") else 0
        line = data.count(b"\n", 0, e.start + start) + 1
        raise BoardFileError(
            f"{what} {str(p)!r}: line {line} is not UTF-8 text (byte {data[e.start + start]:#04x}): save the file as UTF-8"
        ) from None
    return text.splitlines()


def parse_range(text: str, what: str, allowed: range) -> range:
    """'1-9' or '5' -> a range, within ``allowed`` (BoardError naming the fix)."""
    from .errors import BoardError

    lo, _, hi = text.partition("-")
    try:
        r = range(int(lo), int(hi or lo) + 1)
    except ValueError:
        raise BoardError(f"bad {what} range {text!r}: write it like 1-9 or 5") from None
    if not r or r.start < allowed.start or r.stop > allowed.stop:
        raise BoardError(f"bad {what} range {text!r}: use numbers from {allowed.start} to {allowed.stop - 1}, low-high")
    return r


def write_files(folder: str | Path, texts: dict[str, str]) -> list[str]:
    """Write each text into ``folder`` under its name; returns the names. A write error is
    a one-line GraderError."""
    for name, text in texts.items():
        try:
            (Path(folder) / name).write_text(text, encoding="utf-8")
        except OSError as e:
            raise GraderError(f"cannot write {Path(folder) / name}: {e.strerror}") from None
    return list(texts)


def check_output_file(path: str | Path, make_parent: bool = False) -> None:
    """Raise now, before any work, if ``path`` cannot be written later (a results file): it is
    opened for appending, as the write will open it (whoever runs it: root passes every
    permission check but a read-only or special file system's), and a file made so is
    removed again. A device or a pipe is left unopened."""
    p = Path(path)
    try:
        if p.is_dir():
            raise GraderError(f"'{p}' is a folder: give a file name to write the results to")
        parent = p.parent
        if make_parent:
            try:
                parent.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise GraderError(f"cannot create the folder '{parent}' for '{p}': {e.strerror}") from None
        if not parent.is_dir():
            if parent.exists():
                raise GraderError(f"cannot write '{p}': '{parent}' is a file, not a folder")
            raise GraderError(f"cannot write '{p}': the folder '{parent}' does not exist")
        existed = p.exists()
        if existed and not p.is_file():  # /dev/null, a named pipe: opened when written
            if not os.access(p, os.W_OK):
                raise GraderError(f"cannot write '{p}': permission denied")
            return
        with open(p, "ab"):
            pass
        if not existed:
            p.unlink()
    except OSError as e:
        raise GraderError(f"cannot write '{p}': {e.strerror}") from None


def write_text(path: str | Path, text: str) -> None:
    """Write ``text`` (UTF-8); a write error is a one-line GraderError."""
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as e:
        raise GraderError(f"cannot write '{path}': {e.strerror}") from None


def write_json(path: str | Path, data: object) -> None:
    """Write ``data`` as indented JSON; a write error is a one-line GraderError."""
    write_text(path, json.dumps(data, indent=1))
