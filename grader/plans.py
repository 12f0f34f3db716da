"""Test plans: the positions a grading run asks about, in test order."""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

from .board import Position
from .boards import bundled, random_boards, read_boards
from .errors import BoardFileError

STANDARD_FIXED = bundled("fixtures", "standard.txt")


@dataclass(frozen=True)
class Plan:
    """The positions of a grading run, in test order."""

    positions: tuple[Position, ...]
    seed: int | None  # None for a plan read from a file
    source: str  # in words, for the user


def new_seed() -> int:
    """A fresh seed for a plan nobody asked to reproduce (it is printed and recorded)."""
    return random.SystemRandom().randrange(1, 1_000_000)


def standard_plan(seed: int | None = None) -> Plan:
    """The lab's 100 tests: the 10 fixed boards (test k has k empties), then 10 random boards
    each with 1..9 empties reached by legal play; ``None`` draws a new seed."""
    seed = new_seed() if seed is None else seed
    positions = [e.position for e in read_boards(STANDARD_FIXED)] + random_boards(seed, range(1, 10), 10)
    return Plan(tuple(positions), seed, f"standard plan, seed {seed}")


def load_plan(path: str | Path) -> Plan:
    """A plan of every position in a board file; each must have a legal move for its token."""
    entries = read_boards(path)
    for e in entries:
        if not e.position.moves():
            raise BoardFileError(
                f"{e.label}: {e.position.token} has no legal move on this board; "
                "a test board needs a legal move for the side to move"
            )
    return Plan(tuple(e.position for e in entries), None, f"boards from {path}")
