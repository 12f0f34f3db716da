"""Random numbers from a run's seed: one generator per purpose, named by its keys, so that a
seed gives the same boards, public tests and openings on any machine, in any order asked."""

from __future__ import annotations

import random


def rng(*keys: object) -> random.Random:
    """The generator of one purpose: ``rng("grader", seed, empties)`` is seeded with the text
    'grader:SEED:EMPTIES' (Python seeds a string the same way everywhere)."""
    return random.Random(":".join(map(str, keys)))
