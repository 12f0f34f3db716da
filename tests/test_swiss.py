"""Swiss pairing: no rematches, one bye at most, score groups, NoPairing and its reasons;
Buchholz and Sonneborn-Berger computed by hand."""

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grader.errors import GraderError
from grader.tournaments.swiss import (
    BYE_POINTS,
    NoPairing,
    Round,
    SwissStanding,
    max_rounds,
    pair_round,
    pairing_state,
    swiss_standings,
    tiebreaks,
)

PAIR_RESULTS = [(0.0, 2.0), (0.5, 1.5), (1.0, 1.0), (1.5, 0.5), (2.0, 0.0)]


def seeds(n: int) -> list[str]:
    return [f"e{i}" for i in range(1, n + 1)]


def pairable(engines: list[str], played: set, had_bye: set) -> bool:
    """Whether any round avoids rematches and second byes, by trying every pairing."""
    if len(engines) % 2:
        return any(pairable([x for x in engines if x != e], played, had_bye) for e in engines if e not in had_bye)
    if not engines:
        return True
    first, rest = engines[0], engines[1:]
    return any(
        frozenset((first, o)) not in played and pairable([x for x in rest if x != o], played, had_bye) for o in rest
    )


def check_round(rd: Round, engines: list[str], played: set, had_bye: set) -> None:
    met = [e for pair in rd.pairs for e in pair]
    assert sorted(met + ([rd.bye] if rd.bye else [])) == sorted(engines)  # everyone once
    assert not {frozenset(p) for p in rd.pairs} & played  # no rematch
    assert (rd.bye is not None) == (len(engines) % 2 == 1)  # a bye exactly in odd rounds
    assert rd.bye not in had_bye  # never a second bye


def play(rd: Round, rng: random.Random) -> list:
    results = [(a, b, *rng.choice(PAIR_RESULTS)) for a, b in rd.pairs]
    return results + ([(rd.bye, None, BYE_POINTS, 0.0)] if rd.bye else [])


@settings(max_examples=80, deadline=None)
@given(st.integers(2, 20), st.randoms(use_true_random=False))
def test_rounds_until_no_pairing(n, rng):
    """Rounds follow the rules until NoPairing; for small fields, NoPairing only when no
    pairing exists (checked by brute force); never past the round limit."""
    engines, results = seeds(n), []
    for round_no in range(1, max_rounds(n) + 2):
        standings, played, had_bye = pairing_state(results, engines)
        try:
            rd = pair_round(standings, played, had_bye)
        except NoPairing as e:
            assert str(e).startswith(f"round {round_no} cannot be paired")
            if n <= 10:
                assert not pairable(engines, played, had_bye)
            return
        assert round_no <= max_rounds(n)
        check_round(rd, engines, played, had_bye)
        results += play(rd, rng)
    pytest.fail("a round past the limit was paired")


@pytest.mark.parametrize("n", range(2, 21))
def test_round_one_pairs_top_half_against_bottom_half(n):
    engines = seeds(n)
    rd = pair_round(dict.fromkeys(engines, 0.0), set(), set())
    paired = engines[: n - n % 2]
    half = len(paired) // 2
    assert rd.pairs == list(zip(paired[:half], paired[half:]))
    assert rd.bye == (engines[-1] if n % 2 else None)  # the lowest seed


def test_score_groups_and_floats():
    # After round 1 (e1 2-0 e5, e2 2-0 e6, e3 1-1 e7, e8 2-0 e4) the groups are
    # 2 points: e1 e2 e8 | 1 point: e3 e7 | 0 points: e4 e5 e6.
    # The 2-point group is odd: e1 (top half) meets e2 (bottom half), e8 floats down to the
    # best of the 1-point group, e3; e7 is left alone and floats to e4; e5 meets e6.
    results = [("e1", "e5", 2, 0), ("e2", "e6", 2, 0), ("e3", "e7", 1, 1), ("e8", "e4", 2, 0)]
    rd = pair_round(*pairing_state(results, seeds(8)))
    assert rd == Round([("e1", "e2"), ("e8", "e3"), ("e7", "e4"), ("e5", "e6")], None)


def test_transposition_avoids_a_rematch():
    # e1 and e2 lead on 2 points but met; e1 takes the best of the next group instead.
    results = [("e1", "e3", 2, 0), ("e2", "e4", 2, 0), ("e1", "e2", 1, 1), ("e3", "e4", 1, 1)]
    rd = pair_round(*pairing_state(results, seeds(4)))
    assert rd.pairs == [("e1", "e4"), ("e2", "e3")]


def test_a_choice_that_would_strand_an_engine_is_skipped():
    # All on 0 points: a plays d by preference (top half against bottom half), but b may only
    # play d, so a must take e; then b-d and c-f.
    standings = dict.fromkeys("abcdef", 0.0)
    played = {frozenset(p) for p in ("ba", "bc", "be", "bf")}
    assert pair_round(standings, played, set()).pairs == [("a", "e"), ("b", "d"), ("c", "f")]


def test_the_bye_goes_to_the_lowest_ranked_without_one():
    standings = {"a": 2.0, "b": 2.0, "c": 0.0, "d": 0.0, "e": 0.0}
    assert pair_round(standings, set(), set()).bye == "e"
    assert pair_round(standings, set(), {"e"}).bye == "d"
    assert pair_round(standings, set(), {"c", "d", "e"}).bye == "b"


def test_the_bye_skips_an_engine_whose_bye_would_force_a_rematch():
    # c is lowest, but with c on a bye a and b would have to meet again.
    assert pair_round({"a": 2.0, "b": 0.0, "c": 0.0}, {frozenset("ab")}, set()) == Round([("a", "c")], "b")


@pytest.mark.parametrize("n, rounds", [(2, 1), (3, 3), (4, 3), (5, 5), (8, 7), (9, 9)])
def test_no_pairing_past_the_last_possible_round(n, rounds):
    engines = seeds(n)
    results = [(a, b, 1.0, 1.0) for i, a in enumerate(engines) for b in engines[i + 1 :]]  # all met all
    results += [(e, None, BYE_POINTS, 0.0) for e in engines if n % 2]  # and each had its bye
    with pytest.raises(NoPairing) as e:
        pair_round(*pairing_state(results, engines))
    assert str(e.value) == (
        f"round {rounds + 1} cannot be paired without a rematch: {n} engines allow at most {rounds} rounds"
    )


def test_four_engines_round_four():
    results = [
        ("e1", "e3", 2, 0), ("e2", "e4", 2, 0),
        ("e1", "e2", 2, 0), ("e3", "e4", 2, 0),
    ]  # fmt: skip
    rd = pair_round(*pairing_state(results, seeds(4)))
    assert rd.pairs == [("e1", "e4"), ("e2", "e3")]  # e1 alone on 4 points floats down to e4
    results += [("e1", "e4", 1, 1), ("e2", "e3", 1, 1)]
    with pytest.raises(NoPairing) as e:
        pair_round(*pairing_state(results, seeds(4)))
    assert str(e.value) == "round 4 cannot be paired without a rematch: 4 engines allow at most 3 rounds"


def test_a_swiss_can_run_out_before_the_last_round():
    # Everyone met the other triangle: only two triangles are left, which cannot be paired.
    played = {frozenset((a, b)) for a in "abc" for b in "def"}
    with pytest.raises(NoPairing) as e:
        pair_round(dict.fromkeys("abcdef", 3.0), played, set())
    assert str(e.value) == (
        "round 4 cannot be paired without a rematch or a second bye: no way to pair all 6 engines is left "
        "(a Swiss can run out of pairings before round 5)"
    )


def test_no_pairing_when_every_engine_had_its_bye():
    with pytest.raises(NoPairing) as e:
        pair_round(dict.fromkeys("abc", 2.0), set(), {"a", "b", "c"})
    assert str(e.value) == (
        "round 2 cannot be paired: an odd number of engines (3) needs a bye, and every engine has had one"
    )


def test_no_pairing_is_a_user_error_and_a_value_error():
    with pytest.raises(NoPairing, match="^a Swiss round needs at least 2 engines; got 1$") as e:
        pair_round({"a": 0.0}, set(), set())
    assert isinstance(e.value, ValueError) and isinstance(e.value, GraderError)


# A hand-computed tournament of five engines, a bye each round.
TOURNAMENT = [
    ("A", "C", 1.5, 0.5), ("B", "D", 1.0, 1.0), ("E", None, BYE_POINTS, 0.0),
    ("A", "B", 2.0, 0.0), ("E", "C", 0.5, 1.5), ("D", None, BYE_POINTS, 0.0),
    ("A", "E", 1.0, 1.0), ("C", "D", 2.0, 0.0), ("B", None, BYE_POINTS, 0.0),
]  # fmt: skip
# Final scores: A 1.5+2+1 = 4.5, B 1+0+2 = 3, C 0.5+1.5+2 = 4, D 1+2+0 = 3, E 2+0.5+1 = 3.5.
# Buchholz (the byes count for nothing):
#   A: C+B+E = 4+3+3.5 = 10.5     B: D+A = 3+4.5 = 7.5     C: A+E+D = 4.5+3.5+3 = 11
#   D: B+C = 3+4 = 7              E: C+A = 4+4.5 = 8.5
# Sonneborn-Berger (points / 2 x opponent's score):
#   A: 1.5/2*4 + 2/2*3 + 1/2*3.5 = 3 + 3 + 1.75 = 7.75
#   B: 1/2*3 + 0/2*4.5 = 1.5
#   C: 0.5/2*4.5 + 1.5/2*3.5 + 2/2*3 = 1.125 + 2.625 + 3 = 6.75
#   D: 1/2*3 + 0/2*4 = 1.5
#   E: 0.5/2*4 + 1/2*4.5 = 1 + 2.25 = 3.25


def test_tiebreaks_by_hand():
    assert tiebreaks(TOURNAMENT) == {
        "A": (10.5, 7.75), "B": (7.5, 1.5), "C": (11.0, 6.75), "D": (7.0, 1.5), "E": (8.5, 3.25),
    }  # fmt: skip


def test_standings_by_points_then_buchholz():
    # B and D both have 3 points; B's Buchholz is higher.
    assert swiss_standings(TOURNAMENT) == [
        SwissStanding("A", 4.5, 10.5, 7.75), SwissStanding("C", 4.0, 11.0, 6.75), SwissStanding("E", 3.5, 8.5, 3.25),
        SwissStanding("B", 3.0, 7.5, 1.5), SwissStanding("D", 3.0, 7.0, 1.5),
    ]  # fmt: skip


def test_standings_by_sonneborn_berger_then_name():
    # Scores A 0.5+1.5 = 2, B 1.5+1 = 2.5, C 2+0.5 = 2.5, D 0+1 = 1; Buchholz B: A+D = 3,
    # C: D+A = 3; Sonneborn-Berger B: 1.5/2*2 + 1/2*1 = 2, C: 2/2*1 + 0.5/2*2 = 1.5.
    results = [("A", "B", 0.5, 1.5), ("C", "D", 2.0, 0.0), ("A", "C", 1.5, 0.5), ("B", "D", 1.0, 1.0)]
    assert [r.engine for r in swiss_standings(results)] == ["B", "C", "A", "D"]
    drawn = [("z", "y", 1.0, 1.0), ("x", "w", 1.0, 1.0)]  # all tied: by name
    assert [r.engine for r in swiss_standings(drawn, engines=["v"])] == ["w", "x", "y", "z", "v"]


def test_pairing_state():
    standings, played, had_bye = pairing_state(TOURNAMENT, ["E", "D", "C", "B", "A"])
    assert standings == {"E": 3.5, "D": 3.0, "C": 4.0, "B": 3.0, "A": 4.5}
    assert list(standings) == ["E", "D", "C", "B", "A"]  # seeding order kept
    assert played == {frozenset(p) for p in ("AC", "BD", "AB", "EC", "AE", "CD")}
    assert had_bye == {"E", "D", "B"}
