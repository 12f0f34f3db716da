"""Text for reports of every mode: numbers, table cells, XML text, the tail of stderr."""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Protocol, TypeVar


def fmt_credit(credit: float) -> str:
    """1, 3/4, 1/2, 1/4, 0 as the lab writes them; totals as decimals."""
    f = Fraction(credit).limit_denominator(4)
    return str(f)


def fmt_total(total: float) -> str:
    return f"{total:g}"


def plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def safe_cell(text: str) -> str:
    """A name a spreadsheet will not read as a formula."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


# Compiled at first use (re caches it): compiling these ranges took a tenth of grader check's start.
_NOT_XML = "[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]"


def xml_text(text: str) -> str:
    """Text XML 1.0 can hold: other characters (control characters, say) become '?'."""
    return re.sub(_NOT_XML, "?", text)


class Ranked(Protocol):
    """A row of a class table: a student's name and total."""

    @property
    def name(self) -> str: ...
    @property
    def total(self) -> float: ...


R = TypeVar("R", bound=Ranked)


def sort_results(results: list[R], by: str = "name") -> list[R]:
    """By name, or by total (highest first, then by name)."""
    if by == "total":
        return sorted(results, key=lambda r: (-r.total, r.name))
    return sorted(results, key=lambda r: r.name)


def stderr_lines(text: str, n: int) -> list[str]:
    """The last ``n`` lines of stderr worth showing: of a Python traceback, its first line
    always (then '...' where lines are left out), so that it reads as one."""
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    starts = [i for i, ln in enumerate(lines) if ln.startswith("Traceback (most recent call last)")]
    if not starts or len(lines) - starts[-1] <= n or n < 3:
        return lines[-n:]
    return [lines[starts[-1]], "...", *lines[-(n - 2) :]]
