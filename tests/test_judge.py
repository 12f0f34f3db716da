"""Symbols, credits and diagnoses, on a board whose answers come from brute force."""

import itertools

import pytest

from grader.engines.parse import parse_output
from grader.games.othello import Position, square_name
from grader.games.othello_solver import OthelloSolver as Solver
from grader.grading.judge import SYMBOL_TABLE, SYMBOLS, Answer, symbol_for
from grader.grading.judge import judge as judge_answer

import reference as ref

BOARD, TOKEN = ref.teaching_board()
MOVES = ref.move_values(BOARD, TOKEN, "plain")
VALUE = max(MOVES.values())
BEST = min(s for s, v in MOVES.items() if v == VALUE)
WORSE = min(MOVES, key=MOVES.get)  # a legal move that loses discs
LINE = ref.optimal_line(BOARD, TOKEN)
OCCUPIED = next(i for i, c in enumerate(BOARD) if c != ".")


def judge(pos, claim, solver, crash=None):
    return judge_answer(pos, claim, Answer.solve(solver, pos), solver, crash)


def bad_line() -> list[int]:
    """The best first move, then the opponent's worst reply, then best play."""
    after = ref.play(BOARD, TOKEN, BEST)
    replies = ref.move_values(after, ref.other(TOKEN), "plain")
    worst = min(replies, key=replies.get)
    return [BEST, worst] + ref.optimal_line(ref.play(after, ref.other(TOKEN), worst), TOKEN)


def lab(score: int, line: list[int]) -> str:
    return f"Min score: {score}; move sequence: {list(reversed(line))}\n"


@pytest.mark.parametrize(
    "output, symbol",
    [
        (lab(VALUE, LINE), "+"),
        (lab(VALUE, bad_line()), "M"),
        (lab(VALUE + 2, LINE), "Q"),
        (lab(VALUE - 2, bad_line()), "m"),
        (lab(VALUE, LINE) + f"My move is {WORSE}\n", "s"),
        (lab(VALUE, [WORSE]), "s"),
        (lab(VALUE + 2, [WORSE]), "-"),
        (f"My move is {BEST}\n", "T"),
        (f"My move is {WORSE}\n", "t"),
        (lab(VALUE, LINE) + f"{OCCUPIED}\n", "-"),  # illegal move: the test fails
        (f"{OCCUPIED}\n", "t"),
        ("no move at all\n", "t"),
        ("", "t"),
    ],
)
def test_every_symbol(output, symbol):
    verdict = judge(Position.from_string(BOARD, TOKEN), parse_output(output), Solver("plain"))
    assert verdict.symbol == symbol, verdict.diagnosis
    assert verdict.credit == SYMBOL_TABLE[symbol].credit


@pytest.mark.parametrize("output, symbol", [(lab(VALUE, LINE), "-"), (f"My move is {BEST}\n", "t"), ("", "t")])
def test_a_crash_fails_the_test(output, symbol):
    verdict = judge(
        Position.from_string(BOARD, TOKEN),
        parse_output(output),
        Solver("plain"),
        crash="crashed: it exited with code 3",
    )
    assert (verdict.symbol, verdict.credit) == (symbol, 0)
    assert verdict.failure == "the script crashed: it exited with code 3"
    assert verdict.diagnosis.startswith("the script crashed: it exited with code 3, so the test fails")


def test_credits_are_the_labs():
    assert {s: SYMBOL_TABLE[s].credit for s in SYMBOLS} == {
        "+": 1, "M": 0.75, "Q": 0.75, "m": 0.5, "s": 0.25, "-": 0, "T": 0.5, "t": 0,
    }  # fmt: skip
    assert SYMBOLS == "+MQTms-t"


@pytest.mark.parametrize("has_score, move_ok, score_ok, line_ok", list(itertools.product([True, False], repeat=4)))
def test_symbol_truth_table(has_score, move_ok, score_ok, line_ok):
    symbol = symbol_for(has_score, move_ok, score_ok, line_ok)
    if not has_score:
        assert symbol == ("T" if move_ok else "t")
    elif move_ok and score_ok and line_ok:
        assert symbol == "+"
    elif move_ok and score_ok:
        assert symbol == "M"
    elif line_ok and not score_ok:
        assert symbol == "Q"
    elif move_ok:
        assert symbol == "m"
    else:
        assert symbol == ("s" if score_ok else "-")


def test_diagnoses_in_plain_words():
    pos = Position.from_string(BOARD, TOKEN)
    solver = Solver("plain")
    loss = VALUE - MOVES[WORSE]
    v = judge(pos, parse_output(f"My move is {WORSE}\n"), solver)
    assert f"move {WORSE} (" in v.diagnosis
    assert f"is legal but loses {loss} disc" in v.diagnosis and f"({VALUE:+d})" in v.diagnosis
    assert v.move_value == MOVES[WORSE]
    v = judge(pos, parse_output(lab(VALUE + 2, LINE)), solver)
    assert f"claimed score {VALUE + 2:+d} but perfect play gives {VALUE:+d}" in v.diagnosis
    v = judge(pos, parse_output(lab(VALUE, bad_line())), solver)
    assert "line goes wrong at ply 2:" in v.diagnosis and v.line_check.mover == ref.other(TOKEN)
    v = judge(pos, parse_output(f"{OCCUPIED}\n"), solver)
    assert v.failure.startswith(f"move {OCCUPIED} ({square_name(OCCUPIED)}) is not a legal move for {TOKEN} (legal: ")
    assert judge(pos, parse_output(""), solver).failure == "no integer in the output, so no move"


def test_handout_line_is_plus_and_the_s_phenomenon():
    """The handout's example line is fully correct; a right score reached through a
    suboptimal reply is a wrong line."""
    from conftest import HANDOUT_BOARD

    pos = Position.from_string(HANDOUT_BOARD, "x")
    solver = Solver("plain")
    assert judge(pos, parse_output("Min score: 18; move sequence: [15, -1, 7, -1, 14, -1, 51]"), solver).symbol == "+"
    # x's 15 after 51, 14 reaches +12, not +18 (reference: {7: 18, 15: 12})
    v = judge(pos, parse_output("Min score: 18; move sequence: [7, 15, 14, 51]"), solver)
    assert v.symbol == "M"
    assert "line goes wrong at ply 5" in v.diagnosis
