"""The tic-tac-toe lab: rules, values, plans, verdicts, real scripts, proofs and tournaments,
each checked against a brute-force second route (tests/reference_ttt.py) over all 4,520
positions that are not over."""

import json
import random

import pytest
from click.testing import CliRunner

from grader import LocalExecutor, Settings, grade, prove, standard_plan
from grader.cli import main
from grader.engines.parse import parse_output
from grader.games import get_game
from grader.games.tictactoe import open_positions, reachable
from grader.grading.judge import SYMBOL_TABLE, Answer, judge

import reference_ttt as ref
from conftest import ROOT

pytestmark = pytest.mark.xdist_group(__name__)  # one worker: the module's fixture runs once

GAME = get_game("tictactoe")
EXAMPLES = ROOT / "submissions" / "tictactoe"
OPEN = ref.all_open_positions()
MEMO = {True: {}, False: {}}


def ref_values(board, tok, fastest):
    return ref.move_values(board, tok, fastest, MEMO[fastest])


def ref_line(board, tok, fastest, rng=None):
    """An optimal line to the end (lowest optimal move, or a random one with ``rng``)."""
    line = []
    while not ref.over(board):
        values = ref_values(board, tok, fastest)
        best = [m for m, v in values.items() if v == max(values.values())]
        move = rng.choice(best) if rng else min(best)
        line.append(move)
        board, tok = board[:move] + tok + board[move + 1 :], "o" if tok == "x" else "x"
    return line


def ref_line_ok(board, tok, line, fastest):
    """Every move optimal for its mover, ending exactly at the end of the game."""
    for move in line:
        if ref.over(board) or board[move] != ".":
            return False
        values = ref_values(board, tok, fastest)
        if values[move] < max(values.values()):
            return False
        board, tok = board[:move] + tok + board[move + 1 :], "o" if tok == "x" else "x"
    return ref.over(board)


def ref_symbol(has_score, move_ok, score_ok, line_ok):
    """The spec's table, written out again: + M Q m s - T t."""
    if not has_score:
        return "T" if move_ok else "t"
    table = {
        (True, True, True): "+",
        (True, True, False): "M",
        (False, False, True): "Q",
        (True, False, True): "Q",
        (True, False, False): "m",
        (False, True, True): "s",
        (False, True, False): "s",
        (False, False, False): "-",
    }
    return table[(move_ok, score_ok, line_ok)]


# --- rules and values -----------------------------------------------------------------


def test_the_positions_are_those_of_the_brute_force():
    assert len(reachable()) == 5478
    assert sorted((p.board, p.token) for p in open_positions()) == OPEN and len(OPEN) == 4520


@pytest.mark.parametrize("scoring", ["outcome", "fastest-win"])
def test_values_and_optimal_moves_of_every_position(scoring):
    solver = GAME.solver(scoring)
    fastest = scoring == "fastest-win"
    for board, tok in OPEN:
        pos = GAME.parse(board, tok)
        expected = ref_values(board, tok, fastest)
        assert solver.move_values(pos) == expected, (board, tok)
        best = max(expected.values())
        assert solver.value(pos) == best
        assert solver.optimal_moves(pos) == sorted(m for m, v in expected.items() if v == best)
    assert solver.value(GAME.start()) == 0


@pytest.mark.parametrize("scoring", ["outcome", "fastest-win"])
def test_every_verdict_over_all_4520_positions(scoring):
    """Claims of four kinds on every position: the judge's symbol is the one the spec's table
    gives from the brute force's facts."""
    solver, fastest, rng = GAME.solver(scoring), scoring == "fastest-win", random.Random(scoring)
    seen = set()
    for board, tok in OPEN:
        pos = GAME.parse(board, tok)
        answer = Answer.solve(solver, pos)
        values = ref_values(board, tok, fastest)
        value = max(values.values())
        random_line = []
        b, t = board, tok
        while not ref.over(b):
            m = rng.choice([i for i in range(9) if b[i] == "."])
            random_line.append(m)
            b, t = b[:m] + t + b[m + 1 :], "o" if t == "x" else "x"
        claims = [
            (value, ref_line(board, tok, fastest, rng)),  # perfect
            (value + rng.choice([-1, 1]), ref_line(board, tok, fastest)),  # a wrong score
            (rng.choice([value, value - 1]), random_line),  # a random line
            (None, [rng.choice(list(values))]),  # a move only
        ]
        for score, line in claims:
            text = (
                f"score {score} line {' '.join(map(str, reversed(line)))}\n"
                if score is not None
                else f"move {line[0]}\n"
            )
            verdict = judge(pos, parse_output(text), answer, solver)
            move_ok = values[line[0]] == value
            expected = ref_symbol(score is not None, move_ok, score == value, ref_line_ok(board, tok, line, fastest))
            assert verdict.symbol == expected, (board, tok, text, verdict.diagnosis)
            assert verdict.credit == SYMBOL_TABLE[expected].credit
            seen.add(expected)
    assert seen == set("+MQmsTt-")


def test_bad_boards_are_one_line_errors():
    for board, token, words in [
        ("xx.......", "o", "2 x and 0 o"), ("x........", "x", "on this board it is o's turn"),
        ("xxxooo...", "x", "both sides have three in a row"), ("xxx.oo.o.", "x", "did not move last"),
        ("x..", "o", "board has 3 characters, expected 9"), ("x...q....", "o", "bad character 'q'"),
    ]:  # fmt: skip
        with pytest.raises(Exception, match=words):
            GAME.parse(board, token)


# --- plans -------------------------------------------------------------------------------


def test_standard_and_exhaustive_plans():
    plan = standard_plan(7, "tictactoe")
    empties = [p.empties for p in plan.positions]
    assert len(plan.positions) == 100 == len(set(plan.positions))
    assert (
        plan.positions[0] == GAME.start()
        and empties[1:] == sorted(empties[1:])
        and set(empties[1:]) == set(range(1, 9))
    )
    counts = [empties.count(e) for e in range(1, 9)]
    sizes = [len(open_positions(e)) for e in range(1, 9)]
    spread = [c for c, n in zip(counts, sizes) if c < n]  # the groups with positions left over
    assert sum(counts) == 99 and max(spread) - min(spread) <= 1  # as even as the counts allow
    # a group that gave all it has got no more than the groups with positions left over
    assert all(c <= max(spread) for c, n in zip(counts, sizes) if c == n)
    assert all(not p.is_game_over() for p in plan.positions)
    assert standard_plan(7, "tictactoe").positions == plan.positions != standard_plan(8, "tictactoe").positions
    exhaustive = standard_plan(1, "tictactoe", "exhaustive")
    assert len(exhaustive.positions) == 4520 and sorted((p.board, p.token) for p in exhaustive.positions) == OPEN


# --- real scripts ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def graded():
    plan = standard_plan(3, "tictactoe")
    return plan, {s: grade(EXAMPLES / f"{s}.py", plan, Settings(jobs=2)) for s in ("first_empty", "wrong_values")}


@pytest.mark.slow
def test_the_perfect_example_gets_full_marks():
    result = grade(EXAMPLES / "minimax.py", standard_plan(3, "tictactoe"), Settings(jobs=2))
    assert result.symbols == "+" * 100


def test_first_empty_and_wrong_values_get_the_symbols_brute_force_predicts(graded):
    plan, results = graded
    for pos, first, wrong in zip(plan.positions, results["first_empty"].tests, results["wrong_values"].tests):
        values = ref_values(pos.board, pos.token, False)
        first_ok = values[pos.board.index(".")] == max(values.values())
        assert first.symbol == ("T" if first_ok else "t")
        value = max(values.values())
        shown = value if pos.token == "x" else -value  # its score is x's
        assert wrong.symbol == ("+" if shown == value else "Q"), wrong.diagnosis


def test_grade_command_with_feedback(tmp_path):
    (tmp_path / "b.txt").write_text("......xox o\n")  # only the centre holds the draw (brute force)
    result = CliRunner().invoke(main, ["grade", str(EXAMPLES / "first_empty.py"), "--game", "tictactoe", "--boards",
                                       str(tmp_path / "b.txt"), "--json", str(tmp_path / "r.json")])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "Grading " in result.output and "1 tests (boards from" in result.output
    assert "  a b c\n1 @ . .\n2 . * .\n3 x o x" in result.output  # the board, its move and the optimal one
    test = json.loads((tmp_path / "r.json").read_text())["scripts"][0]["tests"][0]
    assert (test["symbol"], test["move"], test["optimal_moves"]) == ("t", 0, [4])
    assert "is legal but loses 1 point" in test["diagnosis"]


def test_a_board_of_another_game_is_refused(tmp_path):
    (tmp_path / "b.txt").write_text("x...o.... x\n")
    result = CliRunner().invoke(main, ["grade", str(EXAMPLES / "minimax.py"), "--boards", str(tmp_path / "b.txt")])
    assert result.exit_code == 1
    assert result.output.strip().endswith("(it is a tictactoe board: use --game tictactoe)")


# --- proofs ---------------------------------------------------------------------------


def replay_loses(moves, side):
    """Replays a game by the reference rules; True when ``side`` lost it."""
    board, tok = "." * 9, "x"
    for m in moves:
        assert not ref.over(board) and board[m] == "."
        board, tok = board[:m] + tok + board[m + 1 :], "o" if tok == "x" else "x"
    return ref.over(board) and ref.won(board, "o" if side == "x" else "x")


class LastFirst(LocalExecutor):
    """A real local executor that hands back the results it has, the last finished first: a
    proof's report must not depend on the order answers come back in."""

    def __init__(self, jobs: int):
        super().__init__(jobs)
        self.held: list = []

    def results(self):
        while True:
            if not self.held:
                self.held = list(super().results())  # everything submitted so far
                if not self.held:
                    return
            yield self.held.pop()


def shortest_loss(side: str) -> int:
    """By brute force: the fewest moves in which first_empty.py (first empty square) loses as ``side``."""
    best, frontier = None, [("." * 9, "x", 0)]
    while frontier and best is None:
        nxt = []
        for board, tok, n in frontier:
            if ref.over(board):
                if ref.won(board, "o" if side == "x" else "x"):
                    best = n
                continue
            squares = [board.index(".")] if tok == side else [i for i, c in enumerate(board) if c == "."]
            nxt += [(board[:m] + tok + board[m + 1 :], "o" if tok == "x" else "x", n + 1) for m in squares]
        frontier = nxt
    return best


@pytest.mark.slow
def test_a_proof_does_not_depend_on_the_order_answers_come_back_in():
    script = EXAMPLES / "first_empty.py"
    proofs = []
    for make in (LocalExecutor, LastFirst):
        with make(2) as ex:  # an executor given is the caller's to close
            proofs.append(prove(script, "tictactoe", ("x",), determinism=False, executor=ex))
    a, b = ({k: v for k, v in p.to_json().items() if k != "seconds"} for p in proofs)
    assert a == b
    side = a["sides"][0]
    assert len(side["lost_game"]) == shortest_loss("x") and replay_loses(side["lost_game"], "x")
    assert side["slipped_wins"][0]["board"] == "xo......." and side["first_loss"]["board"] == "xox.o...."


@pytest.mark.slow
def test_the_perfect_example_never_loses():
    proof = prove(EXAMPLES / "minimax.py", "tictactoe", determinism=False, settings=Settings(jobs=2))
    assert [(s.side, s.never_loses, s.failures, s.slipped_wins) for s in proof.sides] == [
        ("x", True, [], []),
        ("o", True, [], []),
    ]
    assert 50 < proof.sides[0].asked < 300 and 100 < proof.sides[1].asked < 600


@pytest.mark.slow
def test_the_perfect_example_never_loses_from_a_midgame():
    """The quick suite's version of the proof above (the slow set proves the whole tree)."""
    start = GAME.parse("x...o....", "x")
    proof = prove(EXAMPLES / "minimax.py", "tictactoe", start=start, determinism=False, settings=Settings(jobs=2))
    assert [(s.side, s.never_loses, s.failures) for s in proof.sides] == [("x", True, []), ("o", True, [])]
    assert all(s.asked > 5 for s in proof.sides)


@pytest.mark.parametrize("script, side", [("first_empty", "x"), pytest.param("can_lose", "o", marks=pytest.mark.slow)])
def test_a_losing_script_gets_a_replayable_lost_game(script, side, tmp_path):
    json_file = tmp_path / "p.json"
    result = CliRunner().invoke(main, ["prove", str(EXAMPLES / f"{script}.py"), "--game", "tictactoe", "--as", side,
                                       "--json", str(json_file)])  # fmt: skip
    assert result.exit_code == 1 and f"as {side}: CAN LOSE" in result.output
    data = json.loads(json_file.read_text())["sides"][0]
    assert replay_loses(data["lost_game"], side)
    first = data["first_loss"]  # where it turned a draw or a win into a loss, by the brute force
    values = ref_values(first["board"], first["token"], False)
    assert max(values.values()) >= 0 > values[first["move"]] and first["token"] == side
    assert sorted(first["best_moves"]) == sorted(m for m, v in values.items() if v == max(values.values()))


@pytest.mark.slow
def test_a_script_that_answers_differently_is_not_deterministic(tmp_path):
    script = tmp_path / "moody.py"
    script.write_text("import os, sys\nb = sys.argv[1]\nfree = [i for i, c in enumerate(b) if c == '.']\n"
                      "print(free[os.urandom(1)[0] % len(free)])\n")  # fmt: skip
    start = GAME.parse("x...o....", "x")  # a smaller tree than from the start
    proof = prove(script, "tictactoe", sides=["x"], start=start, settings=Settings(jobs=2))
    side = proof.sides[0]
    assert side.not_deterministic and not side.never_loses


# --- tournaments --------------------------------------------------------------------------


def test_a_tictactoe_tournament_of_bundled_engines(tmp_path):
    result = CliRunner().invoke(main, ["tournament", "builtin:minimax", "builtin:first_empty", "--game", "tictactoe",
                                       "--rounds", "2", "--random-openings", "1", "--seed", "3", "--out",
                                       str(tmp_path / "t"), "--json", str(tmp_path / "r.json")])  # fmt: skip
    assert result.exit_code == 0, result.output
    data = json.loads((tmp_path / "r.json").read_text())
    cross = data["crosstable"]
    assert cross["first_empty"]["minimax"] == 0 and cross["minimax"]["first_empty"] == 4  # minimax wins every game
    for game in data["games"]:
        moves = GAME.parse_transcript(game["moves"])
        winner = "black" if game["result"] == "1-0" else "white"
        assert replay_loses(moves, "o" if winner == "black" else "x")
