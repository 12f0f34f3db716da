"""Ladders: maximum likelihood ratings with error bars, the planner of pairs, what a viewer
sees, and the deadline tournament's grades.

Second routes: two engines' ratings against the closed-form Elo of their score and its
binomial error; the fit against its own defining equations (every engine's expected points
equal its points); games simulated from known Elos recovered within their error bars; the
deadline's grades against the share thresholds applied by hand.
"""

import csv
import dataclasses
import io
import math
import random
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grader.errors import GraderError
from grader.limits import Limits
from grader.tournaments import ladder
from grader.tournaments.elofit import C, fit_ratings
from grader.tournaments.grades import grade_by_share
from grader.tournaments.ladder import Entry, Viewer, Visibility, plan_pairs
from grader.tournaments.ratings import Z95, elo
from grader.tournaments.settings import TournamentSettings


@dataclasses.dataclass
class G:
    black: str
    white: str
    black_score: float


def games(a, b, wins, draws, losses):
    """a's results against b, colours alternating."""
    out = []
    for score, n in ((1.0, wins), (0.5, draws), (0.0, losses)):
        for i in range(n):
            out.append(G(a, b, score) if i % 2 == 0 else G(b, a, 1 - score))
    return out


def by_name(rows):
    return {r.engine: r for r in rows}


# --- ratings ------------------------------------------------------------------------------------


@pytest.mark.parametrize("wins,draws,losses", [(7, 2, 3), (1, 0, 1), (30, 50, 5), (2, 1, 9)])
def test_two_engines_rate_as_the_closed_form_elo_of_their_score(wins, draws, losses):
    n = wins + draws + losses
    score = (wins + draws / 2) / n
    r = by_name(fit_ratings(games("a", "b", wins, draws, losses), prior=0))
    assert r["a"].elo - r["b"].elo == pytest.approx(elo(score), abs=1e-6)
    assert r["a"].elo + r["b"].elo == pytest.approx(0, abs=1e-6)  # the mean is the anchor
    # the error: the binomial one of a score p over n games, through the slope of the Elo curve
    difference = 1 / (C * math.sqrt(n * score * (1 - score)))
    assert r["a"].error == pytest.approx(difference / 2) and r["b"].error == pytest.approx(difference / 2)
    assert r["a"].margin95 == pytest.approx(Z95 * difference / 2)
    assert (r["a"].games, r["a"].points, r["b"].points) == (n, wins + draws / 2, losses + draws / 2)


def test_a_named_anchor_is_rated_zero_and_the_differences_stay():
    played = games("a", "b", 5, 3, 2) + games("b", "c", 4, 4, 4) + games("a", "c", 6, 1, 1)
    mean, anchored = by_name(fit_ratings(played)), by_name(fit_ratings(played, anchor="b"))
    assert anchored["b"].elo == 0 and anchored["b"].error == 0
    for e in "ac":
        assert anchored[e].elo == pytest.approx(mean[e].elo - mean["b"].elo, abs=1e-6)
        assert anchored[e].error > mean[e].error  # relative to one engine, not to the mean of three
    assert sum(r.elo for r in mean.values()) == pytest.approx(0, abs=1e-6)


def test_two_engines_anchored_on_one_carry_the_whole_error():
    r = by_name(fit_ratings(games("a", "b", 6, 0, 4), prior=0, anchor="b"))
    assert r["a"].elo == pytest.approx(elo(0.6)) and r["a"].error == pytest.approx(1 / (C * math.sqrt(10 * 0.24)))


def test_all_wins_rate_with_the_prior_of_virtual_draws():
    played = games("a", "b", 10, 0, 0)
    r = by_name(fit_ratings(played))  # 2 virtual draws: 11 points of 12
    assert r["a"].elo - r["b"].elo == pytest.approx(elo(11 / 12), abs=1e-6)
    assert math.isfinite(r["a"].error) and r["a"].points == 10 and r["a"].games == 10
    with pytest.raises(ValueError, match="'b' has no finite rating without a prior"):
        fit_ratings(played, prior=0)


def test_a_group_that_won_every_game_against_the_rest_has_no_finite_rating_without_a_prior():
    played = games("a", "b", 3, 1, 2) + games("c", "d", 2, 2, 2) + games("a", "c", 4, 0, 0)
    with pytest.raises(ValueError, match="no finite rating without a prior"):
        fit_ratings(played, prior=0)
    assert all(r.elo is not None for r in fit_ratings(played))


def test_engines_no_games_link_to_the_rest_have_no_rating_yet():
    played = games("a", "b", 3, 1, 2) + games("b", "c", 1, 1, 1) + games("d", "e", 2, 0, 0)
    r = by_name(fit_ratings(played, ["a", "b", "c", "d", "e", "f"]))
    assert [e for e, x in r.items() if x.elo is None] == ["d", "e", "f"]
    assert r["f"].games == 0 and r["d"].games == 2 and r["d"].error is None
    assert by_name(fit_ratings(played, anchor="d"))["a"].elo is None  # the anchor's group is rated
    with pytest.raises(ValueError, match="the anchor 'z' is not among the engines"):
        fit_ratings(played, anchor="z")


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4), st.sampled_from([0.0, 0.5, 1.0])), min_size=1, max_size=60),
       st.sampled_from([0.5, 2.0]))  # fmt: skip
def test_the_fit_meets_its_likelihood_equations(results, prior):
    # At the maximum every engine's expected points (games and virtual draws) equal its points;
    # two engines that met draw prior/2 (1/k + 1/m) virtual games, k and m their opponents.
    played = [G(f"e{a}", f"e{b}", s) for a, b, s in results if a != b]
    fitted = by_name(fit_ratings(played, prior=prior))
    rated = {e: r.elo for e, r in fitted.items() if r.elo is not None}
    met = {frozenset((g.black, g.white)) for g in played}
    opponents = {e: sum(e in pair for pair in met) for e in fitted}
    for e in rated:
        expected = actual = 0.0
        for g in played:
            if e in (g.black, g.white) and g.black in rated and g.white in rated:
                mine, theirs = (g.black, g.white) if g.black == e else (g.white, g.black)
                expected += 1 / (1 + 10 ** ((rated[theirs] - rated[mine]) / 400))
                actual += g.black_score if g.black == e else 1 - g.black_score
        for pair in met:
            if e in pair and all(x in rated for x in pair):
                (other,) = pair - {e}
                draws = prior / 2 * (1 / opponents[e] + 1 / opponents[other])
                expected += draws / (1 + 10 ** ((rated[other] - rated[e]) / 400))
                actual += draws / 2
        assert expected == pytest.approx(actual, abs=1e-6)


def simulated(true, per_pair, seed):
    """``per_pair`` games between every two engines, drawn from their ``true`` Elos: a quarter
    of them drawn where the score allows, the mean score the model's."""
    rand, played = random.Random(seed), []
    for x in true:
        for y in true:
            for _ in range(per_pair if x != y else 0):
                p = 1 / (1 + 10 ** ((true[y] - true[x]) / 400))
                draw = min(0.25, 2 * p, 2 * (1 - p))
                u = rand.random()
                played.append(G(x, y, 1.0 if u < p - draw / 2 else 0.5 if u < p + draw / 2 else 0.0))
    return played


def test_simulated_games_recover_known_elos_within_their_error_bars():
    true = {"a": -300, "b": -120, "c": 0, "d": 40, "e": 250}
    fitted = by_name(fit_ratings(simulated(true, 40, 7), prior=0))
    centre = sum(true.values()) / len(true)
    for e, t in true.items():
        assert abs(fitted[e].elo - (t - centre)) < 3 * fitted[e].error, e
    assert [r.engine for r in sorted(fitted.values(), key=lambda r: r.elo)] == list(true)


def test_the_prior_fades_however_many_opponents_an_engine_meets():
    # 30 engines, one game each way between every two: virtual draws on every pair would
    # outweigh the games; shared out over an engine's opponents they are two games of its 58.
    true = {f"e{i}": -435 + 30 * i for i in range(30)}
    fitted = by_name(fit_ratings(simulated(true, 1, 3)))
    z = [abs(fitted[e].elo - t) / fitted[e].error for e, t in true.items()]
    assert max(z) < 3.5 and sum(z) / len(z) < 1.2


# --- the planner ----------------------------------------------------------------------------------


def test_the_plan_is_the_same_for_a_seed_and_depends_on_it():
    names = [f"e{i}" for i in range(8)]
    plan = [plan_pairs(names, [], {}, ["f5", "d3", "c4"], 3, seed) for seed in range(12)]
    assert plan[0] == plan_pairs(names, [], {}, ["f5", "d3", "c4"], 3, 0)
    assert len({tuple(p) for p in plan}) > 1


def test_the_planner_prefers_pairs_that_met_least():
    played = games("a", "b", 4, 0, 0) + games("a", "c", 2, 0, 2) + games("b", "c", 1, 2, 1)  # two pairs each
    plan = plan_pairs(["a", "b", "c", "d"], played, {}, ["f5"], 3, 1)
    assert {frozenset((p.first, p.second)) for p in plan} == {frozenset(("a", "d")), frozenset(("b", "d")),
                                                             frozenset(("c", "d"))}  # fmt: skip


def test_the_planner_prefers_close_ratings_and_spreads_the_work():
    ratings = {"a": 0.0, "b": 10.0, "c": 900.0, "d": 905.0}
    plan = plan_pairs(["a", "b", "c", "d"], [], ratings, ["f5"], 2, 3)
    assert {frozenset((p.first, p.second)) for p in plan} == {frozenset("ab"), frozenset("cd")}


def test_pairs_running_count_as_met_and_as_work():
    plan = plan_pairs(["a", "b", "c"], [], {}, ["f5"], 1, 0, running=[("a", "b")])
    assert {plan[0].first, plan[0].second} != {"a", "b"}


def test_a_ladder_keeps_pairs_colours_and_openings_balanced():
    names, openings = ["a", "b", "c", "d", "e"], ["o1", "o2", "o3"]
    played, used = [], {}
    for step in range(30):
        for pair in plan_pairs(names, played, {}, openings, 2, 5):
            (b1, w1), (b2, w2) = pair.games
            assert (b1, w1) == (w2, b2)  # one opening, each engine black once
            used.setdefault(frozenset((b1, w1)), []).append(pair.opening)
            played += [G(b1, w1, 1.0), G(b2, w2, 0.5)]
    per_pair = [len(v) for v in used.values()]
    assert len(used) == 10 and max(per_pair) - min(per_pair) <= 1
    blacks = {e: sum(g.black == e for g in played) for e in names}
    whites = {e: sum(g.white == e for g in played) for e in names}
    assert all(blacks[e] == whites[e] for e in names)
    assert all(sorted(v[:3]) == openings for v in used.values())  # a pair's next pair takes the next opening


def test_the_engine_that_had_black_less_often_starts_with_black():
    played = [G("a", "x", 1.0), G("a", "y", 1.0), G("b", "a", 0.0)]  # a: black twice, b: once
    (pair,) = plan_pairs(["a", "b"], played, {}, ["f5"], 1, 0)
    assert pair.first == "b"


def test_the_planner_needs_two_engines_and_an_opening():
    assert plan_pairs(["a"], [], {}, ["f5"], 3, 0) == []
    with pytest.raises(GraderError, match="a ladder needs openings"):
        plan_pairs(["a", "b"], [], {}, [], 1, 0)


# --- aliases and what a viewer sees -------------------------------------------------------------------


def test_aliases_are_unique_stable_as_others_join_and_the_ladders_own():
    people = [f"student{i}@example.edu" for i in range(300)]
    many = ladder.aliases("ladder-1", people)
    assert len(set(many.values())) == 300
    assert ladder.aliases("ladder-1", people[:40]) == {p: many[p] for p in people[:40]}
    other = ladder.aliases("ladder-2", people[:40])
    assert sum(other[p] != many[p] for p in people[:40]) > 30


def entries(n):
    return [Entry(f"p{i}", f"Student {i}", f"v{i}") for i in range(n)]


def ratings_falling(n):
    """v0 best, then v1, ..."""
    played = []
    for i in range(n - 1):
        played += games(f"v{i}", f"v{i + 1}", 3, 0, 1)
    return fit_ratings(played)


def test_staff_see_every_entry_by_name_best_first():
    view = ladder.table(entries(6)[::-1], ratings_falling(6), Viewer(staff=True),
                        Visibility(anonymous=True, top=2), ladder.aliases("k", [f"p{i}" for i in range(6)]))  # fmt: skip
    assert [(r.rank, r.name) for r in view.rows] == [(i + 1, f"Student {i}") for i in range(6)] and view.hidden == 0


def test_a_student_sees_aliases_the_top_and_the_entries_around_their_own():
    alias = ladder.aliases("k", [f"p{i}" for i in range(10)])
    view = ladder.table(entries(10), ratings_falling(10), Viewer(staff=False, participant="p6"),
                        Visibility(anonymous=True, top=3), alias)  # fmt: skip
    assert [r.rank for r in view.rows] == [1, 2, 3, 5, 6, 7, 8, 9] and view.hidden == 2
    assert [r.name for r in view.rows] == [alias[f"p{r.rank - 1}"] for r in view.rows]
    assert [r.rank for r in view.rows if r.mine] == [7]
    assert "Student" not in str(view.to_json())
    outsider = ladder.table(entries(10), ratings_falling(10), Viewer(staff=False), Visibility(top=3), alias)
    assert [r.name for r in outsider.rows] == ["Student 0", "Student 1", "Student 2"] and outsider.hidden == 7


def test_unrated_entries_come_last():
    view = ladder.table([*entries(3), Entry("new", "Newcomer", "v9")], ratings_falling(3), Viewer(staff=True),
                        Visibility(), {})  # fmt: skip
    assert view.rows[-1].name == "Newcomer" and view.rows[-1].rating.elo is None


def test_crosstable_and_recent_games_of_the_engines_shown():
    played = games("a", "b", 2, 1, 0) + games("a", "c", 1, 0, 1) + games("b", "c", 0, 0, 2)
    assert ladder.crosstable(played, ["a", "b"]) == {"a": {"b": 2.5}, "b": {"a": 0.5}}
    assert [id(g) for g in ladder.recent_games(played, "c", 3)] == [id(played[i]) for i in (6, 5, 4)]


# --- the deadline tournament -----------------------------------------------------------------------


def test_the_deadline_tournament_plays_an_even_number_of_games_per_pair():
    assert ladder.deadline_format(6).rounds == 3 and ladder.deadline_format(6).kind == "round-robin"
    for bad in (0, 3):
        with pytest.raises(GraderError, match=f"an even number of games per pair .* got {bad}"):
            ladder.deadline_format(bad)


ENGINE = Path(__file__).parent / "scripts" / "engine.py"
NEAR_END = "c4c5f6c3b5g7e3e6c2f3g3a5h8b3f4f2b4f5f7h3a3d2e2e1a6e7d7c1c6g8f1g4d1b6b1d3g6b7f8a7c7h6a8b2g5g2a1d6h2h5a4d8"  # 8 empties left


@pytest.mark.slow
def test_the_deadline_tournament_grades_every_engine_by_its_share(tmp_path):
    names = ["first", "first_b", "illegal"]
    for name in names:
        shutil.copy(ENGINE, tmp_path / f"{name}.py")
    thresholds = [(10, 50), (60, 100)]
    done = ladder.run_deadline([tmp_path / f"{n}.py" for n in names], 2, thresholds, openings=[NEAR_END],
                               settings=TournamentSettings(limits=Limits(wall_seconds=5), jobs=2),
                               out=tmp_path / "deadline", seed=1)  # fmt: skip
    assert len(done.tournament.games) == 6 and [g.engine for g in done.grades] == names
    shares = {s.engine: s.share for s in done.tournament.standings}
    for g in done.grades:
        assert g.complete and g.games == 4 and g.grade == grade_by_share(shares[g.engine], thresholds)
    assert done.grades[2].grade == 0  # 'illegal' forfeits every game: no pieces
    rows = list(csv.DictReader(io.StringIO((tmp_path / "deadline" / "grades.csv").read_text())))
    assert [r["name"] for r in rows] == names and rows[0]["complete"] == "yes"
    with pytest.raises(GraderError, match="at least two engines"):
        ladder.run_deadline([tmp_path / "first.py"], 2, thresholds)
