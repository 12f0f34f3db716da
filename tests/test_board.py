"""Othello rules: parsing, squares, moves, flips, passes, game end and final scores."""

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grader.errors import BoardError
from grader.games.drawing import grid_text
from grader.games.othello import (
    FILES,
    PLAIN,
    SCORINGS,
    START_BOARD,
    WINNER_TAKES_EMPTIES,
    Position,
    flips,
    parse_square,
    square_name,
)

import reference as ref
from conftest import HANDOUT_BOARD


def test_start_position():
    pos = Position.start()
    assert pos.token == "x" and pos.empties == 60
    assert pos.moves() == [19, 26, 37, 44]  # d3, c4, f5, e6
    assert [square_name(s) for s in pos.moves()] == ["d3", "c4", "f5", "e6"]


def test_parse_accepts_any_case_and_keeps_sides():
    pos = Position.from_string(HANDOUT_BOARD.upper(), "X")
    assert pos.token == "x"
    assert pos.board_string() == HANDOUT_BOARD
    o = Position.from_string(HANDOUT_BOARD, "o")
    assert o.token == "o" and o.player == pos.opponent and o.opponent == pos.player


@pytest.mark.parametrize(
    "board, token, message",
    [
        (HANDOUT_BOARD + "x", "x", "board has 65 characters, expected 64"),
        (HANDOUT_BOARD[:63], "x", "board has 63 characters, expected 64"),
        ("", "x", "board has 0 characters, expected 64"),
        (HANDOUT_BOARD[:10] + "0" + HANDOUT_BOARD[11:], "x", "bad character '0' at position 10 (c2)"),
        ("-" + HANDOUT_BOARD[1:], "x", "bad character '-' at position 0 (a1)"),
        (HANDOUT_BOARD, "b", "bad token 'b': the side to move must be 'x' or 'o'"),
        (HANDOUT_BOARD, "", "bad token ''"),
        (HANDOUT_BOARD, "xo", "bad token 'xo'"),
    ],
)
def test_parse_errors_say_what_is_wrong(board, token, message):
    with pytest.raises(BoardError, match=message.replace("(", r"\(").replace(")", r"\)")):
        Position.from_string(board, token)


@pytest.mark.parametrize(
    "text, sq", [("a1", 0), ("h1", 7), ("a2", 8), ("h8", 63), ("D7", 51), ("0", 0), ("63", 63), ("51", 51)]
)
def test_squares_by_index_or_name(text, sq):
    assert parse_square(text) == sq


@pytest.mark.parametrize("text", ["i1", "a9", "a0", "64", "-1", "", "pass", "a11"])
def test_bad_squares(text):
    with pytest.raises(BoardError, match="bad square"):
        parse_square(text)


def test_square_names_round_trip():
    assert [parse_square(square_name(s)) for s in range(64)] == list(range(64))
    assert square_name(-1) == "pass"


def test_handout_moves_and_play():
    pos = Position.from_string(HANDOUT_BOARD, "x")
    assert pos.moves() == [7, 14, 51]
    after = pos.play(51)
    assert after.token == "o" and after.must_pass()
    assert after.board_string() == ref.play(HANDOUT_BOARD, "x", 51)
    with pytest.raises(BoardError, match="not a legal move for x"):
        pos.play(15)
    with pytest.raises(BoardError, match="x cannot pass"):
        pos.pass_turn()


def _random_games(seed, games):
    rng = random.Random(seed)
    for _ in range(games):
        board, tok = START_BOARD, "x"
        while True:
            yield board, tok
            ms = ref.moves(board, tok)
            if not ms:
                if not ref.moves(board, ref.other(tok)):
                    break
                tok = ref.other(tok)
                continue
            board, tok = ref.play(board, tok, rng.choice(ms)), ref.other(tok)


def test_rules_match_reference_over_random_games():
    """Moves, flips, passes, game end and both scores against the naive implementation."""
    seen_pass = 0
    for board, tok in _random_games(seed=11, games=60):
        pos = Position.from_string(board, tok)
        assert pos.moves() == ref.moves(board, tok)
        for sq in pos.moves():
            assert sorted_bits(flips(sq, pos.player, pos.opponent)) == sorted(ref.flipped(board, tok, sq))
            assert pos.play(sq).board_string() == ref.play(board, tok, sq)
        game_over = not ref.moves(board, tok) and not ref.moves(board, ref.other(tok))
        assert pos.is_game_over() == game_over
        assert pos.must_pass() == (not ref.moves(board, tok) and not game_over)
        seen_pass += pos.must_pass()
        if game_over:
            for rule in SCORINGS:
                assert pos.score(rule) == ref.score(board, tok, rule)
    assert seen_pass > 0


def sorted_bits(bb):
    return [i for i in range(64) if bb >> i & 1]


@pytest.mark.parametrize(
    "board, token, plain, wte",
    [
        ("x" * 40 + "o" * 20 + "." * 4, "x", 20, 24),  # winner x takes the 4 empties
        ("x" * 40 + "o" * 20 + "." * 4, "o", -20, -24),
        ("x" * 30 + "o" * 30 + "." * 4, "x", 0, 0),  # a draw: empties go to no one
        ("x" * 64, "o", -64, -64),
        ("x" * 10 + "o" * 11 + "." * 43, "x", -1, -44),
    ],
)
def test_final_score_both_rules(board, token, plain, wte):
    pos = Position.from_string(board, token)
    assert pos.score(PLAIN) == plain
    assert pos.score(WINNER_TAKES_EMPTIES) == wte


def test_render_grid_and_marks():
    text = grid_text(START_BOARD, 8, FILES, {19: "*", 26: "*"})
    assert text.splitlines() == [
        "  a b c d e f g h",
        "1 . . . . . . . .",
        "2 . . . . . . . .",
        "3 . . . * . . . .",
        "4 . . * o x . . .",
        "5 . . . x o . . .",
        "6 . . . . . . . .",
        "7 . . . . . . . .",
        "8 . . . . . . . .",
    ]
    # marks only ever cover empty squares
    assert grid_text(START_BOARD, 8, FILES, {27: "*"}) == grid_text(START_BOARD, 8, FILES)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="xo.XO", min_size=64, max_size=64), st.sampled_from("xoXO"))
def test_board_string_round_trip(board, token):
    pos = Position.from_string(board, token)
    assert pos.board_string() == board.lower()
    assert pos.token == token.lower()
    assert Position.from_string(pos.board_string(), pos.token) == pos
