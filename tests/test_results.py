"""Typed results of tournaments: the SPRT's state, the Swiss ranking and rounds, and the tables
that print them are frozen dataclasses, stored in results.json and read back from it, also as
grader 0.3.0 wrote it (tests/data/results_0.3.0.json: its results.json parts and its CLI's text)."""

import json
from pathlib import Path

import pytest

from grader.limits import Limits
from grader.tournaments import tables
from grader.tournaments.formats import Format, SprtSettings
from grader.tournaments.settings import TournamentSettings
from grader.tournaments.sprt import Pentanomial, SprtState, sprt
from grader.tournaments.swiss import Round, SwissResult, SwissStanding
from grader.tournaments.tournament import run_tournament

OLD = json.loads((Path(__file__).parent / "data" / "results_0.3.0.json").read_text())
TTT = TournamentSettings(limits=Limits(wall_seconds=5), jobs=1, game="tictactoe")


def test_an_sprt_state_written_by_0_3_0_loads_typed_and_prints_as_it_did_its_elo_labelled():
    state = SprtState.from_json(OLD["sprt"])
    assert state.engines == ("minimax", "can_lose") and state.decision is None and state.max_games == 8
    assert state.penta == Pentanomial(0, 0, 3, 1, 0) and state.games == 8
    again = sprt(state.penta, state.elo0, state.elo1, state.alpha, state.beta, state.model)  # the test, a second way
    assert (state.llr, state.lower, state.upper, state.elo) == pytest.approx(
        (again.llr, again.lower, again.upper, again.elo)
    )
    assert state.to_json() == OLD["sprt"]
    labelled = OLD["sprt_text"].replace("\nElo +", "\nElo (logistic) +")  # the Elo's model named since
    assert labelled != OLD["sprt_text"] and tables.sprt_text(state) == labelled


def test_a_swiss_ranking_written_by_0_3_0_loads_typed_and_prints_as_it_did():
    result = SwissResult.from_json({"swiss": OLD["swiss"]})  # 0.3.0 kept no rounds
    assert result.rounds == ()
    assert result.standings[0] == SwissStanding("minimax", 4.0, 8.0, 5.0)
    assert result.to_json() == {"swiss": OLD["swiss"], "swiss_rounds": []}
    assert tables.swiss_table(result.standings) == OLD["swiss_table"]


def test_a_swiss_tournament_keeps_its_rounds_and_reads_them_back(tmp_path):
    names = ["builtin:minimax", "builtin:first_empty", "builtin:can_lose"]
    result = run_tournament(names, settings=TTT, format="swiss", rounds=2, out=tmp_path / "t", seed=5)
    assert result.swiss is not None and len(result.swiss.rounds) == 2
    for number, rnd in enumerate(result.swiss.rounds, 1):  # the rounds are the games played
        played = {frozenset((g.black, g.white)) for g in result.games if g.round == number}
        assert {frozenset(p) for p in rnd.pairs} == played and rnd.bye is not None
        assert rnd.bye not in {e for p in rnd.pairs for e in p}
    saved = json.loads((tmp_path / "t" / "results.json").read_text())
    assert SwissResult.from_json(saved) == result.swiss
    assert [s.engine for s in result.swiss.standings] == [s.engine for s in result.standings]
    assert Round.from_json(result.swiss.rounds[0].to_json()) == result.swiss.rounds[0]


def test_an_sprt_tournament_stores_its_state_and_reads_it_back(tmp_path):
    fmt = Format("sprt", sprt=SprtSettings(-100, 100, max_games=6, model="logistic"))
    result = run_tournament(
        ["builtin:minimax", "builtin:can_lose"], settings=TTT, format=fmt, out=tmp_path / "t", seed=5
    )
    assert isinstance(result.sprt, SprtState) and result.sprt.engines == ("minimax", "can_lose")
    assert result.sprt.games == 2 * result.sprt.penta.pairs <= 6 and result.sprt.max_games == 6
    saved = json.loads((tmp_path / "t" / "results.json").read_text())
    assert SprtState.from_json(saved["sprt"]) == result.sprt
    assert tables.sprt_text(SprtState.from_json(saved["sprt"])) == tables.sprt_text(result.sprt)
