"""The standard test plan and `grader boards`."""

import re

import pytest
from click.testing import CliRunner

from grader.files import bundled, parse_range
from grader.games.othello import OTHELLO, Position
from grader.grading.plans import load_plan, read_boards, standard_plan

import reference as ref

STANDARD_FIXED = bundled("fixtures", "standard.txt")


def random_boards(seed, empties, count):
    return OTHELLO.random_positions(seed, empties, count)


def parse_empties(text):
    return parse_range(text, "empties", OTHELLO.empties_allowed)


from grader.cli import main
from grader.errors import BoardError, BoardFileError
from grader.games.othello_solver import OthelloSolver as Solver

FIXED = STANDARD_FIXED.read_text().splitlines()
FIXED_ROWS = [ln for ln in FIXED if ln and not ln.startswith("#")]


@pytest.mark.parametrize("k", range(1, 11))
def test_fixed_board_answers(k):
    """Test k has k empties; its recorded answer is the solver's (and brute force's up to 8)."""
    row = FIXED_ROWS[k - 1]
    board, token = row.split()[:2]
    pos = Position.from_string(board, token)
    assert pos.empties == k and pos.moves()
    solver = Solver("plain")
    value, best = solver.value(pos), solver.optimal_moves(pos)
    assert row.endswith(f"# test {k}: value {value:+d}, optimal {','.join(map(str, best))}")
    if k <= 8:
        mv = ref.move_values(board, token, "plain")
        assert max(mv.values()) == value and sorted(s for s, v in mv.items() if v == value) == best


def test_standard_plan_shape():
    plan = standard_plan(seed=123)
    empties = [p.empties for p in plan.positions]
    assert len(plan.positions) == 100
    assert empties[:10] == list(range(1, 11))
    assert empties[10:] == [e for e in range(1, 10) for _ in range(10)]
    assert all(p.moves() for p in plan.positions)
    assert plan.seed == 123 and plan.source == "standard plan, seed 123"
    assert [p for p in plan.positions[:10]] == [e.position for e in read_boards(STANDARD_FIXED)]


def test_same_seed_same_plan_other_seed_other_plan():
    assert standard_plan(5).positions == standard_plan(5).positions
    assert standard_plan(5).positions[10:] != standard_plan(6).positions[10:]


def test_boards_with_k_empties_do_not_depend_on_the_range_asked():
    assert random_boards(5, range(3, 5), 4)[4:] == random_boards(5, range(4, 5), 4)


def test_boards_command_matches_the_plan(tmp_path):
    out = tmp_path / "b.txt"
    result = CliRunner().invoke(main, ["boards", "--seed", "77", "--out", str(out)])
    assert result.exit_code == 0 and result.output == f"90 boards written to {out} (seed 77)\n"
    lines = out.read_text().splitlines()
    assert lines[0] == "# grader boards --game othello --seed 77 --empties 1-9 --count 10"
    assert [e.position for e in read_boards(out)] == list(standard_plan(77).positions[10:])


def test_boards_command_to_stdout_in_rising_order():
    result = CliRunner().invoke(main, ["boards", "--seed", "1", "--empties", "3-5", "--count", "2"])
    rows = result.output.splitlines()[1:]
    assert len(rows) == 6
    assert [r.split()[0].count(".") for r in rows] == [3, 3, 4, 4, 5, 5]
    assert all(re.fullmatch(r"[xo.]{64} [xo]", r) for r in rows)


def test_boards_command_prints_a_seed_it_chose():
    result = CliRunner().invoke(main, ["boards", "--count", "1", "--empties", "2"])
    seed = int(re.match(r"# grader boards --game othello --seed (\d+) ", result.output).group(1))
    again = CliRunner().invoke(main, ["boards", "--count", "1", "--empties", "2", "--seed", str(seed)])
    assert again.output == result.output


@pytest.mark.parametrize("text", ["0-3", "5-2", "a-b", "1-60", ""])
def test_bad_empties_range(text):
    with pytest.raises(BoardError, match="bad empties range"):
        parse_empties(text)


def test_file_plan_needs_a_legal_move(tmp_path):
    f = tmp_path / "b.txt"
    f.write_text("x" * 63 + ". o\n")  # o has no move
    with pytest.raises(
        BoardFileError, match="b.txt:1: the game is over on this board; a test board needs a legal move"
    ):
        load_plan(f)
