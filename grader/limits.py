"""What one run of an untrusted program may use: the limits every kind of work shares (a
test, a move in a tournament, a position of a proof), as python-chess's ``engine.Limit``."""

from __future__ import annotations

import os
from dataclasses import dataclass

JOBS_PER_CORE = 4  # programs at once per core, at most: beyond, they only wait for a core and time out unfairly


def max_jobs() -> int:
    """The most job slots (programs at once) this machine can run: ``JOBS_PER_CORE`` per core."""
    return JOBS_PER_CORE * (os.cpu_count() or 1)


def cap_jobs(jobs: int, given_as: str) -> tuple[int, str | None]:
    """``jobs`` at most ``max_jobs()``, and the line that says so when it was more (``given_as``:
    '--jobs', say)."""
    most = max_jobs()
    if jobs <= most:
        return jobs, None
    return most, (f"{given_as} {jobs:,} is more than this machine can run at once ({os.cpu_count() or 1} cores, "
                  f"{JOBS_PER_CORE} programs each): {most} jobs run at once")  # fmt: skip


@dataclass(frozen=True)
class Limits:
    """What one run of a script may use. None: no limit of that kind."""

    wall_seconds: float = 10.0
    cpu_seconds: float | None = 60.0
    memory_mb: int | None = 2048  # address space, so allocations fail beyond it
    processes: int | None = 64  # processes and threads at once
    output_bytes: int | None = (
        64 * 2**20
    )  # stdout read before the script is stopped; also the largest file it may write


# The limits of settings made without any (``RunSettings()``): the defaults, told apart from
# limits given equal to them by identity, so that a plan's limits apply to the one, never the other.
NOT_GIVEN = Limits()
