"""Seeds of plans and of the public tests in them."""

from __future__ import annotations

import random
import secrets
from typing import Sequence

from ..config import Config
from ..errors import GraderError
from ..games import Position
from ..seeding import rng


def new_seed() -> int:
    """A fresh seed for a plan nobody asked to reproduce (it is printed and recorded)."""
    return random.SystemRandom().randrange(1, 1_000_000)


def choose_seed(seed: int | None, config: Config | None = None) -> int:
    """The seed of a run that may be reproduced (a public plan, a tournament's openings):
    ``seed``, else config.yaml's, else a new one."""
    if seed is not None:
        return seed
    return config.seed if config is not None and config.seed is not None else new_seed()


def secret_seed() -> int:
    """A seed for a plan with private tests: 64 random bits, so that nobody can find it by
    trying seeds until one makes the public boards (a six-digit one falls in minutes)."""
    return secrets.randbits(64)


def plan_seed(seed: int | None, config: Config | None = None) -> tuple[int, bool]:
    """The seed a plan with private tests draws its boards from, and whether it was chosen:
    ``seed``, else config.yaml's seed, else a secret one (``secret_seed``), chosen False."""
    chosen = seed if seed is not None else config.seed if config is not None else None
    return (secret_seed(), False) if chosen is None else (chosen, True)


def seed_warning(seed: int, chosen: bool, has_private: bool) -> str | None:
    """The warning due when private tests come from a chosen seed (see ``plan_seed``)."""
    if not (chosen and has_private):
        return None
    return (f"the private boards come from seed {seed}, which anyone can find by trying seeds until one makes "
            "the public boards: leave out --seed (and config seed) for a secret one")  # fmt: skip


def spread_public(
    positions: Sequence[Position], count: int, seed: int | str, always: frozenset[int] = frozenset()
) -> frozenset[int]:
    """The test numbers (1-based) in ``always``, and ``count`` more spread over the numbers of
    empties, chosen with ``seed``: one from each count of empties in turn, fewest empties first."""
    others = len(positions) - len(always)
    if not 0 <= count <= others:
        raise GraderError(f"cannot make {count} of the {others} other tests public: give --public 0 to {others}")
    rand = rng("grader", "public", seed)
    groups: dict[int, list[int]] = {}
    for i, pos in enumerate(positions, 1):
        if i not in always:
            groups.setdefault(pos.empties, []).append(i)
    for members in groups.values():
        rand.shuffle(members)
    chosen: list[int] = []
    while len(chosen) < count:
        for e in sorted(groups):
            if groups[e] and len(chosen) < count:
                chosen.append(groups[e].pop())
    return frozenset(chosen) | always
