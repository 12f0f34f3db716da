"""The course's regrade requests (``regrades:`` in course.yaml): how many a student may make on
each assignment, and the date after which none is taken."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

KEYS = ("max", "until")
MAX_REQUESTS = 2  # a student's requests on an assignment, unless the course says otherwise
LIMIT = 20  # the most a course may allow
REASON_CHARS = 2000  # a request's reason, and a staff reply, at most


@dataclass(frozen=True)
class RegradeSettings:
    """``max``: requests a student may make on each assignment (0: none); ``until``: none taken after it."""

    max: int = MAX_REQUESTS
    until: dt.datetime | None = None

    def open_at(self, when: dt.datetime) -> bool:
        return self.max > 0 and (self.until is None or when <= self.until)


def parse_regrades(data: Any, when: Callable[[Any, str], dt.datetime | None]) -> RegradeSettings:
    """The ``regrades:`` key (its keys already checked against ``KEYS``); ``when`` reads a date as
    the deadlines are read. ValueError naming the key and the fix."""
    if not isinstance(data, dict):
        raise ValueError(f"'regrades' must be 'key: value' lines ({', '.join(KEYS)}), like regrades: {{max: 2}}; "
                         f"got {data!r}")  # fmt: skip
    most = data.get("max", MAX_REQUESTS)
    if not isinstance(most, int) or isinstance(most, bool) or not 0 <= most <= LIMIT:
        raise ValueError(f"'regrades.max' must be the requests a student may make on each assignment, a whole "
                         f"number from 0 (none) to {LIMIT}, like 2; got {most!r}")  # fmt: skip
    return RegradeSettings(most, when(data.get("until"), "regrades.until"))
