"""Times as people read them on the pages: 'Fri 18 Dec 23:59 UTC' (the exact time in the
element's title), and how long until or since ('in 2 days 3 hours', '5 minutes ago'). A
deadline keeps the zone course.yaml gave it; a stored time (naive) is UTC."""

from __future__ import annotations

import datetime as dt
from typing import Any


def _parsed(value: Any) -> dt.datetime | None:
    if value is None or value == "":
        return None
    when = value if isinstance(value, dt.datetime) else dt.datetime.fromisoformat(str(value))
    return when if when.tzinfo else when.replace(tzinfo=dt.timezone.utc)


def human_time(value: Any, now: dt.datetime | None = None) -> str:
    """'Fri 18 Dec 23:59 UTC' in the time's own zone; the year too when it is not this one."""
    when = _parsed(value)
    if when is None:
        return ""
    year = (now or dt.datetime.now(dt.timezone.utc)).year
    zone = when.tzname() or "UTC"
    text = when.strftime("%a %d %b %H:%M" if when.year == year else "%a %d %b %Y %H:%M")
    return f"{text} {zone}"


def exact_time(value: Any) -> str:
    """The exact time, to the second, with its offset (an element's title)."""
    when = _parsed(value)
    return when.isoformat(sep=" ", timespec="seconds") if when else ""


def _span(seconds: float) -> str:
    units = (("day", 86400), ("hour", 3600), ("minute", 60))
    parts = []
    left = int(seconds)
    for name, size in units:
        n, left = divmod(left, size)
        if n:
            parts.append(f"{n} {name}{'s' if n != 1 else ''}")
        if len(parts) == 2:
            break
    return " ".join(parts) if parts else "less than a minute"


def time_left(value: Any, now: dt.datetime | None = None) -> str:
    """'in 2 days 3 hours' before the time, '5 hours ago' after it."""
    when = _parsed(value)
    if when is None:
        return ""
    seconds = (when - (now or dt.datetime.now(dt.timezone.utc))).total_seconds()
    return f"in {_span(seconds)}" if seconds >= 0 else f"{_span(-seconds)} ago"


def is_past(value: Any) -> bool:
    when = _parsed(value)
    return when is not None and when < dt.datetime.now(dt.timezone.utc)
