"""Files the user gives (read as UTF-8 text, with clear errors) and files shipped with the package."""

from __future__ import annotations

from pathlib import Path

from .errors import BoardFileError

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
