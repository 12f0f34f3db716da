"""Times as course.yaml writes them: a date and time with an IANA zone name or an offset, UTC
when it names none; an abbreviation (EST, PST) refused, as it names no one zone."""

from __future__ import annotations

import datetime as dt
import re
import zoneinfo
from typing import Any

ZONES = ("an IANA zone name, like 2026-12-18 23:59 America/New_York; an offset, like 2026-12-18 23:59 -05:00; "
         "or none (UTC)")  # fmt: skip


def read_when(value: Any, key: str) -> dt.datetime | None:
    """A deadline: a YAML date-time, or a date and time followed by an IANA zone name (the
    standard library's zoneinfo) or an offset; UTC when it names no zone. An abbreviation
    (EST, PST, CET) names no one zone and no daylight saving time: refused."""
    if value is None:
        return None
    if isinstance(value, dt.datetime):
        when = value
    elif isinstance(value, dt.date):
        when = dt.datetime.combine(value, dt.time(23, 59, 59))
    else:
        text = str(value).strip()
        zone: dt.tzinfo | None = None
        head, _, last = text.rpartition(" ")
        offset = re.fullmatch(r"([+-]\d\d):?(\d\d)", last)
        if head and offset:  # written against the time, as Python 3.10's fromisoformat reads it
            text = f"{head}{offset[1]}:{offset[2]}"
        elif head and re.fullmatch(r"[A-Za-z][A-Za-z0-9_+\-/]*", last):
            zone = zone_of(last, key, value)
            text = head
        try:
            when = dt.datetime.fromisoformat(text.strip())
        except ValueError:
            raise ValueError(f"'{key}' must be a date and time with {ZONES}; got {value!r}") from None
        if zone is not None:
            if when.tzinfo is not None:
                raise ValueError(f"'{key}' gives both an offset and a zone: give one, as {ZONES}; got {value!r}")
            when = when.replace(tzinfo=zone)
    return when if when.tzinfo else when.replace(tzinfo=dt.timezone.utc)


def zone_of(name: str, key: str, value: Any) -> dt.tzinfo:
    """The zone an IANA name gives (``America/New_York``, ``UTC``)."""
    if name.upper() in ("UTC", "Z"):
        return dt.timezone.utc
    if "/" not in name:
        raise ValueError(f"'{key}': {name!r} is an abbreviation, which names no one zone (nor its daylight saving "
                         f"time): give {ZONES}; got {value!r}")  # fmt: skip
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"'{key}': no time zone {name!r}: give {ZONES}; got {value!r}") from None
