"""What a rejudge changed: the tests and the totals, for every mode that rejudges."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TestChange:
    """One test whose verdict changed."""

    index: int
    before: str  # symbol
    after: str
    why: str  # the new diagnosis


@dataclass(frozen=True)
class GradeChange:
    """One student whose total changed, with the tests behind it."""

    student: str
    before: float
    after: float
    max_total: int
    tests: list[TestChange]
