"""What one run of an untrusted program may use: the limits every kind of work shares (a
test, a move in a tournament, a position of a proof), as python-chess's ``engine.Limit``."""

from __future__ import annotations

from dataclasses import dataclass


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
