"""A seed gives the same boards, public tests and openings as it always did: plan files, run
folders and resumed runs name their boards by seed. The digests were taken before the seeding
moved into one helper (grader.seeding.rng); a change here changes every course's plans."""

import hashlib

from grader import standard_plan
from grader.games import get_game
from grader.runs.seeds import spread_public
from grader.seeding import rng
from grader.tournaments.openings import random_openings


def digest(value) -> str:
    return hashlib.sha256(repr(value).encode()).hexdigest()[:16]


def boards(plan) -> list[str]:
    return [p.board_string() + p.token for p in plan.positions]


def test_a_seed_gives_the_boards_it_always_gave():
    othello = standard_plan(7)
    assert digest(boards(othello)) == "3cf7106813aed7ff"
    assert digest(boards(standard_plan(7, "othello", "speed"))) == "58b4aac9fe6bced1"
    assert digest(boards(standard_plan(7, "tictactoe"))) == "559f5cb2f4b6fb6e"
    assert digest(sorted(spread_public(othello.positions, 10, 7, frozenset(range(1, 11))))) == "b396874c814fff2a"
    assert digest(random_openings(get_game("othello"), 7, 4, 6)) == "d420c7d81d3532f0"


def test_each_purpose_has_its_own_generator():
    assert rng("grader", 7, 5).random() == rng("grader:7:5").random() != rng("grader", 7, 6).random()
