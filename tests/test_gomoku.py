"""Gomoku: rules and solver against brute force; GTP regression files run and judged."""

import json
import random
import shlex
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.cli import main
from grader.engines.programs import PYTHON, ProtocolEngine
from grader.errors import BoardError, GraderError
from grader.games import get_game
from grader.games.gomoku import GOMOKU, Gomoku
from grader.limits import Limits
from grader.regression.format import Command, parse_regress, write_regress
from grader.regression.plans import make_regress
from grader.regression.regress import run_regress
from grader.regression.results import RegressSettings

from reference_gomoku import value as brute_value
from reference_gomoku import winner as brute_winner

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "submissions" / "gomoku"
MISBEHAVING = Path(__file__).parent / "gtp" / "engine.py"


def endgames(rules: Gomoku, empties: int, count: int, seed: int) -> list:
    """Positions not over with ``empties`` empty points, by random legal play."""
    r, out = random.Random(seed), []
    while len(out) < count:
        pos = rules.start()
        while pos.empties > empties and not pos.is_game_over():
            pos = pos.play(r.choice(pos.moves()))
        if pos.empties == empties and not pos.is_game_over():
            out.append(pos)
    return out


@pytest.mark.parametrize(
    "size, k, overline, empties, count",
    [(4, 4, True, 8, 20), (5, 4, True, 8, 20), (5, 4, False, 8, 20), (5, 5, True, 8, 10), (6, 4, True, 7, 15)],
)
@pytest.mark.parametrize("backend", GOMOKU.backends())  # the Python solver, and the C core where it is built
def test_values_and_optimal_moves_agree_with_brute_force(size, k, overline, empties, count, backend):
    rules = Gomoku(size, k, overline)
    for pos in endgames(rules, empties, count, seed=size * 100 + k * 10 + overline):
        truth = brute_value(pos.board, pos.token, size, k, overline)
        solver = rules.solver("outcome", backend=backend)
        assert solver.value(pos) == truth, pos.board
        best = {
            m for m in pos.moves() if -brute_value(pos.play(m).board, pos.play(m).token, size, k, overline) == truth
        }
        assert set(solver.optimal_moves(pos)) == best, pos.board


def test_a_solver_added_to_gomoku_serves_every_variant_and_says_how_to_get_it_when_missing(monkeypatch):
    """The solvers are the class's: the solver modules add theirs once, and a variant (its own
    object) finds them; a backend whose ``missing()`` says why is not offered."""
    from grader.games.gomoku_solver import GomokuSolver

    monkeypatch.setattr(Gomoku, "_solvers", dict(Gomoku._solvers))
    nine = get_game("gomoku:size=9,overline=false")
    assert "python" in nine.backends() and isinstance(nine.solver("outcome", backend="python"), GomokuSolver)
    made = []

    def make(game, scoring, should_stop):
        made.append(game)
        return GomokuSolver(game, scoring, should_stop)

    Gomoku.add_solver("native", make)
    assert nine.backend("auto") == "native" and nine.solver("outcome").rules is nine and made == [nine]
    Gomoku.add_solver("native", make, lambda: "build it")
    assert GOMOKU.backends() == ("python",) and nine.backend("auto") == "python"
    with pytest.raises(GraderError, match="^the native solver is not built on this machine: build it, or use"):
        nine.solver("outcome", backend="native")
    assert "build it" in (nine.backend_note() or "")


def test_the_winner_agrees_with_brute_force_and_overlines_count_only_when_allowed():
    r = random.Random(3)
    for _ in range(300):
        size = r.choice([5, 6, 7])
        board = "".join(r.choice(".xxo") for _ in range(size * size))
        for overline in (True, False):
            assert Gomoku(size, 4, overline).winner(board) == brute_winner(board, size, 4, overline), board
    six = "xxxxxx." + "." * 42  # six in a row on 7x7
    assert Gomoku(7, 5, True).winner(six) == "x" and Gomoku(7, 5, False).winner(six) is None


def test_gtp_point_names_skip_i():
    nine = GOMOKU.sized(9)
    assert [GOMOKU.square_name(i) for i in (0, 16, 48)] == ["A1", "C3", "G7"]
    assert nine.square_name(8) == "J1" and nine.parse_square("j1") == 8 and nine.parse_square("J9") == 80
    for bad in ("I1", "H8", "Z1", "A0"):
        with pytest.raises(BoardError):
            GOMOKU.parse_square(bad)
    assert GOMOKU.parse_transcript(GOMOKU.transcript([16, 24, 0])) == [16, 24, 0]


@pytest.mark.parametrize(
    "board, token, message",
    [
        ("." * 48, "x", "N x N with N from 5 to 19"),
        ("." * 48 + "z", "x", "bad character 'z'"),
        ("xx" + "." * 47, "o", "2 black and 0 white"),
        ("x" + "." * 48, "x", "wrong token 'x'"),
        ("xxxxx.." + "o.o.o.o" + "o......" + "." * 28, "x", "the side to move already has 5 in a row"),
        ("xxxxx.." + "ooooo.." + "." * 35, "x", "both sides have 5 in a row"),
    ],
)
def test_boards_that_cannot_arise_are_one_line_errors(board, token, message):
    with pytest.raises(BoardError, match=message):
        GOMOKU.parse(board, token)


def test_a_game_over_solves_to_its_result_and_boardsize_resizes():
    won = GOMOKU.sized(5).parse("xxxxx" + "oooo." + "." * 15, "o")
    assert won.is_game_over() and GOMOKU.solver("outcome").value(won) == -1 and won.game.size == 5
    with pytest.raises(GraderError):
        get_game("othello").sized(9)


# --- regression files --------------------------------------------------------------------------

COURSE_40 = ("A7 B7 C7 D7 E7 F7 G7 G6 F6 E6 D6 C6 B6 A6 A5 B5 C5 D5 E5 F5 G5 G4 F4 E4 D4 C4 B4 A4 A2 B2 C2 D2 E2 F2 G2 "
             "G1 F1 E1 D1 C1 B1 A1 F3 G3 D3 E3 B3 C3").split()  # fmt: skip


def course_file(tmp_path: Path) -> Path:
    """Two positions of the course's public tests (solved here a second way: brute force)."""
    lines = ["timelimit 5", "clear_board"]
    lines += [f"play {'BW'[i % 2]} {p}" for i, p in enumerate(COURSE_40)]
    lines += ["40 solve", "#?[b A3]", "50 genmove b", "#?[A3]", "", "clear_board"]
    lines += [f"play {'BW'[i % 2]} {p}" for i, p in enumerate("C4 C3 D4 D3 E4 E3 F4 F3 A1".split())]
    lines += ["120 solve", "#?[w B3|w G3]", "130 list_commands", "#?[.*solve.*]*"]
    path = tmp_path / "course.gtp"
    path.write_text("\n".join(lines) + "\n")
    return path


def program(path: Path, *args: str) -> ProtocolEngine:
    return ProtocolEngine.from_command(shlex.join([PYTHON, str(path), *args]), "gtp")


def settings(**kw) -> RegressSettings:
    return RegressSettings(limits=Limits(wall_seconds=5), **kw)


def test_the_course_positions_are_what_brute_force_says():
    pos = GOMOKU.start()
    for i, p in enumerate(COURSE_40):
        pos = pos.play(GOMOKU.parse_square(p))
    assert brute_value(pos.board, pos.token, 7, 5, True) == 1
    assert {GOMOKU.square_name(m) for m in pos.moves()
            if brute_value(pos.play(m).board, pos.play(m).token, 7, 5, True) == -1} == {"A3"}  # fmt: skip


@pytest.mark.parametrize(
    "name, symbols",
    [
        ("solver.py", "+++"),
        ("random_player.py", "u+u"),  # one empty point at test 50: even a random move is right
        ("wrong_winner.py", "-+-"),  # its genmove plays the solved move
        ("bad_move.py", "++W"),
    ],
)
def test_the_examples_get_their_verdicts(tmp_path, name, symbols):
    """solve and genmove are judged by the solver; list_commands, marked as an expected failure
    ('*'), by its regex, and it does not count."""
    result = run_regress(program(EXAMPLES / name), course_file(tmp_path), GOMOKU, settings(unknown_credit=0.5))
    got = "".join(t.symbol for t in result.tests[:3])
    assert got == symbols, [(t.symbol, t.answer, t.note) for t in result.tests]
    assert [t.judged_by for t in result.tests] == ["solver", "solver", "solver", "regex"]
    assert result.tests[3].expect_failure and len(result.counted) == 3
    credits = {"+": 1.0, "W": 0.5, "u": 0.5, "-": 0.0}
    assert result.total == pytest.approx(100 * sum(credits[s] for s in got) / 3)


@pytest.mark.parametrize(
    "mode, symbol, note",
    [
        ("silent", "t", "no complete answer to '120 solve' within 1.5 s"),
        ("crash", "t", "the program crashed: it exited with code 4"),
        ("garbage", "-", "an answer is 'b', 'w', 'draw' or 'unknown'"),
        ("error", "-", "expected [w B3|w G3]"),
    ],
)
def test_misbehaving_programs(tmp_path, mode, symbol, note):
    path = tmp_path / f"gtp_{mode}.py"
    path.write_text(MISBEHAVING.read_text())
    commands = parse_regress(course_file(tmp_path).read_text(), "course")
    only = tmp_path / "one.gtp"
    kept = [Command(c.line, "timelimit 1") if c.text.startswith("timelimit") else c for c in commands]
    only.write_text(write_regress([c for c in kept if c.number in (None, 120)]))
    result = run_regress(program(path, mode), only, GOMOKU, settings())
    assert [t.symbol for t in result.tests] == [symbol], result.tests
    assert note in result.tests[0].note
    assert (result.stopped is not None) == (symbol == "t")


def test_make_regress_writes_the_solver_answers_and_reads_back(tmp_path):
    positions = GOMOKU.random_positions(5, range(6, 9), 2)
    commands = make_regress(GOMOKU, positions, timelimit=3)
    text = write_regress(commands)
    assert parse_regress(text, "x") == parse_regress(write_regress(parse_regress(text, "x")), "x")
    tests = [c for c in commands if c.number is not None]
    assert len(tests) == 6 and all(c.text == "solve" for c in tests)
    for c, pos in zip(tests, positions):
        truth = brute_value(pos.board, pos.token, 7, 5, True) if pos.empties <= 8 else None
        winner = c.expected.split("|")[0].split()[0]
        side = "b" if pos.token == "x" else "w"
        assert winner == (side if truth == 1 else "draw" if truth == 0 else "bw"[side == "b"])
    (tmp_path / "t.gtp").write_text(text)
    result = run_regress(program(EXAMPLES / "solver.py"), tmp_path / "t.gtp", GOMOKU, settings())
    assert result.symbols == "++++++" and result.total == 100


@pytest.mark.parametrize(
    "text, message",
    [
        ("#? [b]\n", "must follow a numbered command"),
        ("10 solve\n#? b\n", "is '#? [REGEX]'"),
        ("10 solve\n#? [b(]\n", "not a regular expression"),
    ],
)
def test_bad_regression_files_are_one_line_errors(tmp_path, text, message):
    (tmp_path / "bad.gtp").write_text(text)
    out = CliRunner().invoke(main, ["regress", str(EXAMPLES / "solver.py"), str(tmp_path / "bad.gtp")])
    assert out.exit_code != 0 and message in out.output and "Traceback" not in out.output, out.output


def test_plan_regress_and_regress_from_the_command_line(tmp_path):
    out = CliRunner().invoke(main, ["plan", "regress", "--empties", "6-7", "--per-level", "2", "--public", "2",
                                    "--seed", "4", "--out", str(tmp_path / "lab.gtp")])  # fmt: skip
    assert out.exit_code == 0, out.output
    public = tmp_path / "lab.public.gtp"
    assert len([c for c in parse_regress(public.read_text(), "p") if c.number]) == 2
    out = CliRunner().invoke(main, ["regress", str(EXAMPLES / "solver.py"), str(tmp_path / "lab.gtp"),
                                    "--json", str(tmp_path / "r.json")])  # fmt: skip
    assert out.exit_code == 0 and "4 tests counted (every test), 100.0/100" in out.output, out.output
    data = json.loads((tmp_path / "r.json").read_text())
    assert data[0]["total"] == 100 and all(t["board"].endswith((" x", " o")) for t in data[0]["tests"])


@pytest.mark.slow  # the example solver thinks up to a second a move
def test_a_gomoku_tournament_between_gtp_engines(tmp_path):
    out = CliRunner().invoke(main, ["tournament", "builtin:gtp:solver", "builtin:gtp:random_player", "--game", "gomoku",
                                    "--rounds", "2", "--out", str(tmp_path / "t"), "--jobs", "2"])  # fmt: skip
    assert out.exit_code == 0, out.output
    games = [json.loads(line) for line in (tmp_path / "t" / "games.jsonl").read_text().splitlines()]
    assert len(games) == 4 and all(g["reason"] == "normal" and not g["events"] for g in games)
    for g in games:  # every record replays by the rules, and its result is the board's
        pos = GOMOKU.replay(GOMOKU.parse_transcript(g["moves"]))
        assert pos.is_game_over()
        assert g["result"] == {"x": "1-0", "o": "0-1", None: "1/2-1/2"}[pos.winner()]


def test_command_round_trip_keeps_expected_failures():
    c = [Command(0, "timelimit 2"), Command(0, "solve", 10, "b A3", True)]
    assert "10 solve\n#? [b A3]*" in write_regress(c)
    assert parse_regress(write_regress(c), "x")[1].expect_failure


def test_python_used_for_examples_is_the_graders():
    assert program(EXAMPLES / "solver.py").command(sys.executable, "/x")[0] == sys.executable


def misbehaving(tmp_path: Path, mode: str) -> ProtocolEngine:
    path = tmp_path / f"gtp_{mode}.py"  # a name only this test knows
    path.write_text(MISBEHAVING.read_text())
    return program(path, mode)


def test_tests_after_a_crash_count_zero_or_run_on_a_fresh_program(tmp_path):
    """A program that dies at test 50: the tests it never reached count 0 (the total is over
    the whole file, not over what it answered), with its stderr in the note; with per_test,
    each test gets a fresh program told the game so far, so the crash costs one test."""
    engine = misbehaving(tmp_path, "crash50")
    once = run_regress(engine, course_file(tmp_path), GOMOKU, settings(unknown_credit=0.5))
    assert [(t.number, t.symbol) for t in once.tests] == [(40, "u"), (50, "t"), (120, "t"), (130, "t")]
    assert "stderr ends: boom" in once.tests[1].note and once.tests[2].note.startswith("not run: the program had ended")
    assert once.total == pytest.approx(100 * 0.5 / 3) and once.stopped is not None
    fresh = run_regress(engine, course_file(tmp_path), GOMOKU, settings(unknown_credit=0.5, per_test=True))
    assert [t.symbol for t in fresh.tests] == ["u", "t", "u", "-"] and fresh.stopped is None
    assert fresh.total == pytest.approx(100 * 1.0 / 3)
    right = run_regress(program(EXAMPLES / "solver.py"), course_file(tmp_path), GOMOKU, settings(per_test=True))
    assert right.symbols[:3] == "+++"  # the replayed game is the game: the solver is right on each


def test_with_per_test_where_a_program_ended_is_told_to_the_next_test_only(tmp_path):
    """A program that dies at a setup move of test 120 (never when the game so far is replayed
    to a fresh one) and at every solve: test 120's note says where it ended before it, test
    130's says nothing of it (test 120 may be private, its setup with it)."""
    path = tmp_path / "p.py"
    path.write_text(
        "import sys\nn = 0\nfor line in sys.stdin:\n    n += 1\n    w = line.split()\n"
        "    num = w.pop(0) if w and w[0].isdigit() else ''\n"
        "    if w[:1] == ['solve'] or (w[:1] == ['play'] and n > 58):\n        sys.exit('boom')\n"
        "    print(f\"={num} {'A3' if w[:1] == ['genmove'] else ''}\".rstrip() + '\\n', flush=True)\n"
    )
    result = run_regress(program(path), course_file(tmp_path), GOMOKU, settings(per_test=True))
    assert [t.symbol for t in result.tests] == ["t", "+", "t", "-"] and result.stopped is None
    assert "(the program ended at 'play B F4' before this test" in result.tests[2].note
    assert "play" not in result.tests[3].note


@pytest.mark.slow  # end to end, tens of seconds: python -m pytest -m slow
def test_stones_played_out_of_turn_are_all_on_the_judged_board(tmp_path):
    """GTP's play sets a position up in any order: b A1 B1 C1 D1, then w A7 B7 C7 D7 puts all
    eight stones on the board, black to move (it wins at E1: five in a row)."""
    lines = ["boardsize 7", "clear_board", *(f"play b {p}1" for p in "ABCD"), *(f"play w {p}7" for p in "ABCD")]
    (tmp_path / "o.gtp").write_text("\n".join([*lines, "10 solve", "#?[b E1]"]) + "\n")
    result = run_regress(program(EXAMPLES / "solver.py"), tmp_path / "o.gtp", GOMOKU, settings())
    test = result.tests[0]
    board, token = test.board.split()
    assert board.count("x") == board.count("o") == 4 and token == "x", test
    won = GOMOKU.parse(board, token).play(GOMOKU.parse_square("E1"))  # five in a row: checked by the rules alone
    assert won.is_game_over() and won.score() == -1  # lost for white, now to move
    assert (test.symbol, test.judged_by) == ("+", "solver"), test
    # three black stones and no white: no game reaches it; the file's expected answer decides
    (tmp_path / "x.gtp").write_text("clear_board\nplay b A1\nplay b B1\nplay b C1\n10 solve\n#?[b.*]\n")
    odd = run_regress(program(EXAMPLES / "solver.py"), tmp_path / "x.gtp", GOMOKU, settings()).tests[0]
    assert odd.judged_by == "regex" and "cannot arise in play" in odd.note, odd


def test_a_refused_setup_is_said_in_the_next_tests_note(tmp_path):
    result = run_regress(misbehaving(tmp_path, "refuse"), course_file(tmp_path), GOMOKU, settings(solve_seconds=0.5))
    assert "the program refused 'play B A7' before this test" in result.tests[0].note, result.tests[0]


def test_a_refused_setup_move_does_not_change_the_position_judged(tmp_path):
    """A program refusing the last stone of test 40's setup (white's C3) would be judged, were
    its refusal followed, on a position it chose: white to move and lost, where 'b' alone is
    right. The file's position is black to move and won by A3 (both checked by brute force),
    so 'b' without the move is W, with the refusal in the note, in one program or per test."""
    path = tmp_path / "gtp_refuses_c3.py"
    path.write_text(
        "import sys\nfor line in sys.stdin:\n    w = line.split()\n"
        "    n = w.pop(0) if w and w[0].isdigit() else ''\n"
        "    status, text = ('?', 'illegal move') if w == ['play', 'W', 'C3'] else ('=', 'b' if w[:1] == ['solve'] else '')\n"
        "    print(f'{status}{n} {text}'.rstrip() + '\\n', flush=True)\n"
    )
    course = course_file(tmp_path)
    board = GOMOKU.start().board_string()
    for i, point in enumerate(COURSE_40[:-1]):
        sq = GOMOKU.parse_square(point)
        board = board[:sq] + "xo"[i % 2] + board[sq + 1 :]
    assert brute_value(board, "o", 7, 5, True) == -1  # the program's position: lost for white, to move
    for per_test in (False, True):
        test = run_regress(program(path), course, GOMOKU, settings(per_test=per_test)).tests[0]
        assert test.symbol == "W" and test.board.split()[1] == "x", test
        assert "the program refused 'play W C3' before this test" in test.note, test


@pytest.mark.slow
def test_a_win_in_one_on_an_open_board_is_judged_by_the_solver_at_once(tmp_path):
    """41 empty points and a win in one: the grader searches only what the verdict needs (the
    value, the answer's move), not every move's value, so its small budget is enough."""
    stones = ["play b A1", "play w A7", "play b B1", "play w B7", "play b C1", "play w C7", "play b D1", "play w D7"]
    text = "\n".join(["boardsize 7", "clear_board", *stones, "10 solve", "#?[b E1]", "20 solve", "#?[b E1]"])
    (tmp_path / "w.gtp").write_text(text + "\n")
    (tmp_path / "fixed.py").write_text(
        "import sys\nanswers = iter(['b E1', 'b G7'])\n"
        "for line in sys.stdin:\n"
        "    w = line.split()\n"
        "    n = w.pop(0) if w and w[0].isdigit() else ''\n"
        "    text = next(answers) if w[:1] == ['solve'] else ''\n"
        "    print(f'={n} {text}'.rstrip() + '\\n', flush=True)\n"
    )
    engine = ProtocolEngine.from_command(shlex.join([PYTHON, str(tmp_path / "fixed.py")]), "gtp")
    result = run_regress(engine, tmp_path / "w.gtp", GOMOKU, settings(solve_seconds=3.0))
    assert [(t.symbol, t.judged_by) for t in result.tests] == [("+", "solver"), ("W", "solver")], result.tests
    assert "G7 gives a loss" in result.tests[1].note or "G7 gives a draw" in result.tests[1].note


def test_per_test_from_the_command_line(tmp_path):
    path = tmp_path / "gtp_crash50.py"
    path.write_text(MISBEHAVING.read_text())
    command = shlex.join([sys.executable, str(path), "crash50"])
    out = CliRunner().invoke(main, ["regress", command, str(course_file(tmp_path)), "--per-test", "--json",
                                    str(tmp_path / "r.json")])  # fmt: skip
    assert out.exit_code == 0, out.output
    assert [t["symbol"] for t in json.loads((tmp_path / "r.json").read_text())[0]["tests"]] == ["u", "t", "u", "-"]


def test_random_positions_that_random_play_never_reaches_are_a_one_line_error():
    """Three in a row on 5x5 ends nearly every random game long before one empty point: the
    plan is refused with what to change, instead of drawing games for ever."""
    with pytest.raises(
        BoardError, match="ends before 1 empty points in almost every game .* ask for more empty points"
    ):
        Gomoku(size=5, k=3).random_positions(1, range(1, 2), 1)


# --- every verdict of solve and genmove, on positions whose answers the rules prove ------------

FIXED = """import json, sys
answers = iter(json.loads(sys.argv[1]))
for line in sys.stdin:
    w = line.split()
    n = w.pop(0) if w and w[0].isdigit() else ''
    text = next(answers) if w[:1] in (['solve'], ['genmove']) else ''
    print(f'={n} {text}'.rstrip() + '\\n', flush=True)
"""
OPEN_FOUR = "b C4,w A7,b D4,w C7,b E4,w E7,b F4"  # white to move; black's C4-F4 is open at both ends
WHITE_FOUR = "b C4,w C3,b D4,w D3,b E4,w E3,b F4,w F3,b A1"  # white to move wins at B3 or G3
BLACK_FIVE = "b A1,w A7,b B1,w B7,b C1,w C7,b D1,w D7,b E1"  # the game is over: black won


def played(stones: str):
    pos = GOMOKU.start()
    for play in stones.split(","):
        pos = pos.play(GOMOKU.parse_square(play.split()[1]))
    return pos


def wins_at_once(pos) -> set[str]:
    """The points where the side to move makes five: the rules alone, no search."""
    return {GOMOKU.square_name(m) for m in pos.moves() if pos.play(m).is_game_over() and pos.play(m).score() == -1}


def test_the_verdict_positions_are_what_the_rules_say():
    loss = played(OPEN_FOUR)
    assert not wins_at_once(loss) and all(wins_at_once(loss.play(m)) for m in loss.moves())  # white loses
    win = played(WHITE_FOUR)
    assert wins_at_once(win) == {"B3", "G3"}
    assert wins_at_once(win.play(GOMOKU.parse_square("A2"))) == {"B4", "G4"}  # A2 lets black win
    assert played(BLACK_FIVE).is_game_over()


@pytest.mark.parametrize(
    "stones, verb, answer, symbol, note",
    [
        (WHITE_FOUR, "solve", "w", "W", "w is right, but no move: one of B3, G3 achieves it"),
        (WHITE_FOUR, "solve", "w Z9", "W", "w is right, but its move is not a point"),
        (WHITE_FOUR, "solve", "w G3 B3", "-", "a winner and at most a move, not 3 words; the winner is w"),
        (WHITE_FOUR, "solve", "w C4", "W", "C4 is not a legal move; one of B3, G3"),
        (WHITE_FOUR, "solve", "w A2", "W", "A2 gives a loss; one of B3, G3 achieves it"),
        (WHITE_FOUR, "solve", "w G3", "+", "w G3 is right (any of B3, G3)"),
        (WHITE_FOUR, "solve", "b", "-", "said b; the winner is w (B3, G3)"),
        (WHITE_FOUR, "solve", "unknown", "u", "unknown; the winner is w (B3, G3)"),
        (WHITE_FOUR, "solve", "maybe", "-", "an answer is 'b', 'w', 'draw' or 'unknown'"),
        (OPEN_FOUR, "solve", "b", "+", "b is right: w loses whatever it plays"),
        (OPEN_FOUR, "solve", "b B4", "W", "a move is written only when the side to move wins or draws"),
        (OPEN_FOUR, "solve", "draw", "-", "said draw; the winner is b"),
        (BLACK_FIVE, "solve", "b", "+", "b is right: the game is over"),
        (BLACK_FIVE, "solve", "w", "-", "said w; the winner is b"),
        (WHITE_FOUR, "genmove w", "B3", "+", "B3 is optimal (+1)"),
        (WHITE_FOUR, "genmove w", "A2", "-", "A2 gives -1, best is +1 (B3, G3)"),
        (WHITE_FOUR, "genmove w", "C4", "-", "the answer is not a legal move; best: B3, G3"),
        (WHITE_FOUR, "genmove w", "zz", "-", "the answer is not a legal move; best: B3, G3"),
        (WHITE_FOUR, "genmove w", "B3 G3", "-", "an answer is one move, not 2 words"),
        (OPEN_FOUR, "genmove w", "B4", "+", "B4 is optimal (-1)"),
    ],
)
def test_every_solve_and_genmove_verdict(tmp_path, stones, verb, answer, symbol, note):
    lines = ["boardsize 7", "clear_board", *(f"play {s}" for s in stones.split(",")), f"10 {verb}", "#?[.*]"]
    (tmp_path / "v.gtp").write_text("\n".join(lines) + "\n")
    (tmp_path / "fixed.py").write_text(FIXED)
    engine = ProtocolEngine.from_command(shlex.join([PYTHON, str(tmp_path / "fixed.py"), json.dumps([answer])]), "gtp")
    test = run_regress(engine, tmp_path / "v.gtp", GOMOKU, settings()).tests[0]
    assert (test.symbol, test.judged_by) == (symbol, "solver"), test
    assert note in test.note, test.note


def test_beyond_the_graders_budget_the_regex_decides_and_says_so(tmp_path):
    (tmp_path / "e.gtp").write_text(
        "boardsize 7\nclear_board\n10 solve\n#?[b.*]\n20 solve\n#?[b.*]\n30 solve\n#?[b.*]\n"
    )
    (tmp_path / "fixed.py").write_text(FIXED)
    engine = ProtocolEngine.from_command(
        shlex.join([PYTHON, str(tmp_path / "fixed.py"), json.dumps(["b D4", "w D4", "unknown"])]), "gtp"
    )
    tests = run_regress(engine, tmp_path / "e.gtp", GOMOKU, settings(solve_seconds=0.2, unknown_credit=0.5)).tests
    assert [(t.symbol, t.judged_by) for t in tests] == [("+", "regex"), ("-", "regex"), ("u", "regex")]
    assert tests[2].credit == 0.5  # 'unknown' is the course's credit, whatever the regex says
    assert all("the grader's solver could not settle this position within 0.2 s" in t.note for t in tests)
    assert ["the file's answer decides" in t.note for t in tests] == [True, True, False]  # not for 'unknown'
    assert (tmp_path / "e.gtp.solved.json").is_file()  # the position was tried once, for every later run too


def test_genmove_after_the_game_is_over_is_judged_by_the_regex(tmp_path):
    """No move is right or wrong once black has five: the file's answer decides ('pass' here)."""
    lines = ["boardsize 7", "clear_board", *(f"play {s}" for s in BLACK_FIVE.split(",")), "10 genmove w", "#?[pass]"]
    (tmp_path / "o.gtp").write_text("\n".join(lines) + "\n")
    (tmp_path / "fixed.py").write_text(FIXED)
    for answer, symbol in (("pass", "+"), ("A2", "-")):
        engine = ProtocolEngine.from_command(
            shlex.join([PYTHON, str(tmp_path / "fixed.py"), json.dumps([answer])]), "gtp"
        )
        test = run_regress(engine, tmp_path / "o.gtp", GOMOKU, settings()).tests[0]
        assert (test.symbol, test.judged_by) == (symbol, "regex"), test


@pytest.mark.parametrize(
    "mode, problem",
    [("crash50", "it answered '= ' to genmove, and '' is not a point (like "), ("resign", "the engine resigned")],
)
def test_a_gtp_engine_that_breaks_the_protocol_or_resigns_forfeits_its_tournament_games(tmp_path, mode, problem):
    path = tmp_path / f"gtp_{mode}.py"  # crash50's genmove answers '=' with no point
    path.write_text(MISBEHAVING.read_text())
    from grader.tournaments.engines import Engine
    from grader.tournaments.settings import TournamentSettings
    from grader.tournaments.tournament import run_tournament

    broken = Engine("broken", protocol=ProtocolEngine.from_command(shlex.join([PYTHON, str(path), mode]), "gtp"))
    result = run_tournament(["builtin:gtp:random_player", broken], settings=TournamentSettings(game="gomoku", jobs=1),
                            seed=1, out=tmp_path / "t")  # fmt: skip
    assert len(result.games) == 2 and all(g.forfeit == "broken" for g in result.games)
    assert all(problem in g.events[0]["problem"] for g in result.games), [g.events for g in result.games]


@pytest.mark.parametrize(
    "args, message",
    [
        (["grade", "SOLVER", "--game", "gomoku"], "Gomoku submissions speak GTP, not 'SCRIPT BOARD TOKEN'"),
        (["plan", "new", "--game", "gomoku", "--time-limit", "3", "--out", "p.gtp"], "a GTP regression file: drop"),
    ],
)
def test_the_script_workflow_sends_gomoku_to_regress(tmp_path, monkeypatch, args, message):
    """The Gomoku lab's programs speak GTP: the commands of the script interface say where to go
    in one line, instead of grading a GTP program as 'SCRIPT BOARD TOKEN' (all 't')."""
    monkeypatch.chdir(tmp_path)
    out = CliRunner().invoke(main, [str(EXAMPLES / "solver.py") if a == "SOLVER" else a for a in args])
    assert out.exit_code in (1, 2) and message in out.output and "Traceback" not in out.output, out.output


def test_plan_new_of_gomoku_writes_what_plan_regress_writes(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for command in (["plan", "new"], ["plan", "regress"]):
        out = CliRunner().invoke(main, [*command, "--game", "gomoku", "--empties", "5-6", "--public", "1", "--seed", "9",
                                        "--out", f"{command[1]}.gtp"])  # fmt: skip
        assert out.exit_code == 0, out.output
    assert (tmp_path / "new.gtp").read_text() == (tmp_path / "regress.gtp").read_text()
    assert (tmp_path / "new.public.gtp").read_text() == (tmp_path / "regress.public.gtp").read_text()
    assert len([c for c in parse_regress((tmp_path / "new.gtp").read_text(), "x") if c.number]) == 4


@pytest.mark.parametrize(
    "name, first, note",
    [
        ("crash.py", "t", "IndexError: list index out of range"),
        ("slow.py", "t", "no complete answer to '40 solve' within 1.5 s"),
    ],
)
def test_the_broken_examples_that_crash_or_hang(tmp_path, name, first, note):
    """The bundled crash and hang: the first solve is 't' with the cause (the traceback's last
    line, the time limit), and the tests after it are not run and count 0."""
    commands = parse_regress(course_file(tmp_path).read_text(), "course")
    quick = tmp_path / "quick.gtp"
    quick.write_text(write_regress([Command(c.line, "timelimit 1") if c.text.startswith("timelimit") else c
                                    for c in commands]))  # fmt: skip
    result = run_regress(program(EXAMPLES / name), quick, GOMOKU, settings())
    assert [t.symbol for t in result.tests] == [first, "t", "t", "t"], result.tests
    assert note in result.tests[0].note and result.tests[1].note.startswith("not run"), result.tests[0].note
    assert result.total == 0


# --- variants: the overline rule and the default board, by name and in config.yaml ---------

SIX = "x..ooxooooox.xo.xxooooo.xxxooxoxoxxxoxxxoxxx.oxo."  # x to move: C4 makes a line of six


def test_six_in_a_row_wins_only_under_the_overline_rule_as_brute_force_says(tmp_path):
    free, exact = get_game("gomoku"), get_game("gomoku:overline=false")
    truth = {True: brute_value(SIX, "x", 7, 5, True), False: brute_value(SIX, "x", 7, 5, False)}
    assert truth == {True: 1, False: 0}
    for rules in (free, exact):
        pos = rules.parse(SIX, "x")
        assert rules.solver("outcome").value(pos) == truth[rules.overline]
        after = pos.play(rules.parse_square("C4"))
        assert after.winner() == brute_winner(after.board, 7, 5, rules.overline) == ("x" if rules.overline else None)
    (tmp_path / "exact.yaml").write_text("gomoku:\n  overline: false\n")
    for args, value in [(["--game", "gomoku"], "+1"), (["--game", "gomoku:overline=false"], "+0"),
                        (["--game", "gomoku", "--config", str(tmp_path / "exact.yaml")], "+0"),
                        (["--game", "gomoku:overline=true", "--config", str(tmp_path / "exact.yaml")], "+1")]:  # fmt: skip
        out = CliRunner().invoke(main, ["solve", SIX, "x", *args])
        assert out.exit_code == 0 and f"value:         {value}\n" in out.output, (args, out.output)


def test_a_variant_is_named_by_its_spec_and_read_back_from_it():
    nine = get_game("gomoku:overline=false,size=9")
    assert nine.name == "gomoku:size=9,overline=false" and get_game(nine.name) is nine
    assert nine is GOMOKU.sized(9).variant(overline=False) and nine.sized(7) is get_game("gomoku:overline=false")
    assert (nine.size, nine.overline, nine.start().size) == (9, False, 9)
    assert get_game("gomoku:size=7,overline=true") is GOMOKU and GOMOKU.name == "gomoku"
    assert nine.parse("." * 25, "x").game.name == "gomoku:size=5,overline=false"  # any size parses, rules kept


@pytest.mark.parametrize(
    "spec, message",
    [
        ("gomoku:size=4", "bad game 'gomoku:size=4': a Gomoku board is 5x5 to 19x19, not 4x4"),
        ("gomoku:size=20", "bad game 'gomoku:size=20': a Gomoku board is 5x5 to 19x19, not 20x20"),
        ("gomoku:size=nine", "bad game 'gomoku:size=nine': size must be a whole number, not 'nine'"),
        ("gomoku:overline=maybe", "bad game 'gomoku:overline=maybe': overline must be true or false, not 'maybe'"),
        ("gomoku:k=4", "bad game 'gomoku:k=4': 'k=4' is not KEY=VALUE with a key of gomoku (its keys: size, overline)"),
        ("othello:size=9", "bad game 'othello:size=9': othello is played one way only; give --game othello"),
    ],
)
def test_bad_variants_are_one_line_errors(spec, message):
    with pytest.raises(GraderError) as e:
        get_game(spec)
    assert str(e.value) == message
    out = CliRunner().invoke(main, ["solve", "." * 49, "x", "--game", spec])
    assert out.exit_code == 1 and out.output == f"Error: {message}\n"


def test_config_gomoku_size_and_overline_reach_plan_regress_and_regress(tmp_path):
    (tmp_path / "c.yaml").write_text("gomoku:\n  size: 9\n  overline: false\n")
    config = str(tmp_path / "c.yaml")
    out = CliRunner().invoke(main, ["plan", "regress", "--empties", "4", "--per-level", "2", "--seed", "3",
                                    "--out", str(tmp_path / "n.gtp"), "--config", config])  # fmt: skip
    assert out.exit_code == 0 and "2 solve tests of Gomoku 9x9" in out.output, out.output
    assert "boardsize 9" in (tmp_path / "n.gtp").read_text()
    from grader.config import load_config
    from grader.regression.plans import regress_game

    assert regress_game(None, load_config(config)).name == "gomoku:size=9,overline=false"
    assert regress_game("gomoku:size=11", load_config(config)).name == "gomoku:size=11,overline=false"
    assert regress_game().name == "gomoku"  # no config: the course's rules


# --- tournaments on any board, with PSQ records --------------------------------------------


@pytest.mark.slow
def test_the_gomoku_examples_are_gtp_programs_by_their_builtin_name(tmp_path):
    """'builtin:solver' in a Gomoku tournament is the bundled GTP program (the lab's examples
    speak GTP and import their solver.py): it plays, where run as a script it crashed."""
    out = CliRunner().invoke(main, ["tournament", "builtin:random_player", "builtin:solver", "--game", "gomoku:size=5",
                                    "--out", str(tmp_path / "t"), "--jobs", "1"])  # fmt: skip
    assert out.exit_code == 0, out.output
    meta = json.loads((tmp_path / "t" / "tournament.json").read_text())
    assert {e["protocol"] for e in meta["engines"].values()} == {"gtp"}
    games = [json.loads(line) for line in (tmp_path / "t" / "games.jsonl").read_text().splitlines()]
    assert len(games) == 2 and all(g["reason"] == "normal" for g in games), games


@pytest.mark.slow
def test_a_gtp_tournament_on_9x9_writes_psq_records_that_replay_to_its_results(tmp_path):
    from grader.config import Config
    from grader.games import psq
    from grader.tournaments.engines import Engine
    from grader.tournaments.settings import TournamentSettings
    from grader.tournaments.tournament import run_tournament

    player = shlex.join([PYTHON, str(EXAMPLES / "random_player.py")])
    engines = [Engine(name, protocol=ProtocolEngine.from_command(player, "gtp")) for name in ("alpha", "beta")]
    rules = get_game("gomoku:size=9,overline=false")
    settings = TournamentSettings.resolve(Config(), rules, time_limit=5, jobs=2)
    result = run_tournament(engines, settings=settings, rounds=2, seed=4, out=tmp_path / "t")
    assert len(result.games) == 4 and "psq/" in result.files
    assert json.loads((tmp_path / "t" / "tournament.json").read_text())["settings"]["game"] == rules.name
    far, times = set(), []
    for g in result.games:
        text = (tmp_path / "t" / "psq" / psq.file_name(g)).read_text()
        assert text.startswith("Piskvorky 9x9, 7:7, 0\n")  # 5 s a move: Piskvork's level 7
        game = psq.parse(text, psq.file_name(g))
        pos, moves, outcome = game.replay(rules)
        assert (game.size, game.players) == (9, (g.black, g.white))
        assert moves == rules.parse_transcript(g.moves) and outcome == g.result
        if g.reason == "normal":
            assert game.code == psq.NORMAL and pos.is_game_over()
            assert outcome == {"x": "1-0", "o": "0-1", None: "1/2-1/2"}[brute_winner(pos.board, 9, 5, False)]
        else:  # the example plays free-style: it resigns a game its six won, which goes on here
            assert (g.reason, game.code, g.forfeit) == ("forfeit", psq.ERROR, g.black if pos.token == "x" else g.white)
            assert "resigned" in g.events[0]["problem"] and brute_winner(pos.board, 9, 5, True) is not None
        times += game.times
        far |= {m for m in moves if m % 9 >= 7 or m // 9 >= 7}
    assert far  # the engines were told 'boardsize 9': they played beyond a 7x7 corner
    assert all(t >= 0 for t in times) and any(times)
    again = run_tournament(resume=tmp_path / "t")  # the folder keeps the variant: nothing to replay
    assert again.games == result.games and (tmp_path / "t" / "psq" / psq.file_name(result.games[0])).is_file()


def test_psq_points_forfeits_and_positions(tmp_path):
    from types import SimpleNamespace

    from grader.games import psq

    nine = GOMOKU.sized(9)
    assert [psq.point(nine.parse_square(p), 9) for p in ("A1", "J9", "E4")] == [(1, 9), (9, 1), (5, 6)]
    assert all(psq.square(*psq.point(sq, 9), 9) == sq for sq in range(81))
    assert [psq.level(s) for s in (0.05, 0.1, 1, 5, 59, 600)] == [1, 1, 4, 7, 10, 11]
    events = [{"engine": "slow", "timed_out": True}]
    record = SimpleNamespace(id="r1:0-1:2", opening="E5D5", moves="E5D5E6", black="quick one", white="slow",
                             forfeit="slow", events=events, move_times=[[0.25, None]])  # fmt: skip
    text = psq.game_record(record, nine, 1)
    assert text == "Piskvorky 9x9, 4:4, 0\n5,5,0\n4,5,0\n5,4,250\nquick one\nslow\n15\n"
    game = psq.parse(text)
    assert game.replay(nine)[2] == "1-0" and psq.file_name(record) == "r1_0-1_2.psq"  # white, to move, forfeited
    board = nine.replay(nine.parse_transcript("E5D5E6")).board
    from_position = SimpleNamespace(**{**vars(record), "opening": f"{board} o", "moves": "D6", "forfeit": None})
    game = psq.parse(psq.game_record(from_position, nine, 1))
    assert game.replay(nine)[0].board == nine.replay(nine.parse_transcript("E5D5E6D6")).board
    assert game.replay(nine)[2] == "*"  # not over, ended normally: no result
    swapped = psq.parse("Piskvorky 9x9, 4:4, 1\n5,5,7\nwhite one\nblack one\n-2\n")
    assert swapped.players == ("black one", "white one") and swapped.replay(nine)[2] == "1-0"


@pytest.mark.parametrize(
    "text, message",
    [
        ("Gomoku 9x9\n", "r.psq: line 1 is not a PSQ header like 'Piskvorky 15x15, 11:11, 0'"),
        ("Piskvorky 9x8, 1:1, 0\n", "r.psq: a 9x8 board: Gomoku here is played on square boards"),
        ("Piskvorky 9x9, 1:1, 0\n5,5,1\nE6\n0\n", "r.psq: line 3 is neither a move 'x,y,ms' nor one of the two"),
    ],
)
def test_bad_psq_files_are_one_line_errors(text, message):
    from grader.errors import BoardFileError
    from grader.games import psq

    with pytest.raises(BoardFileError, match=message):
        psq.parse(text, "r.psq")


def test_the_tournament_command_takes_a_board_size(tmp_path):
    out = CliRunner().invoke(main, ["tournament", "builtin:greedy", "builtin:random_mover", "--size", "9"])
    assert (
        out.exit_code == 1 and out.output == "Error: Othello is played on one board size: boardsize 9 is not for it\n"
    )
    out = CliRunner().invoke(main, ["tournament", "--resume", str(tmp_path), "--size", "9"])
    assert out.exit_code == 2 and "--resume continues a tournament with its own engines" in out.output
    out = CliRunner().invoke(main, ["tournament", "a", "b", "--game", "gomoku", "--size", "20"])
    assert out.exit_code == 2 and "'--size': 20 is not in the range 5<=x<=19" in out.output


def test_per_test_a_setup_command_the_program_died_at_still_sets_the_game_up(tmp_path):
    """The program dies at the file's first stone ('play B A7'; a fresh program is told it as
    'play b A7' and lives): with --per-test the next test is asked on the file's position,
    that stone included, and its note says where the program ended."""
    path = tmp_path / "dies.py"
    path.write_text("import sys\nfor line in sys.stdin:\n    if line.strip() == 'play B A7':\n        sys.exit(3)\n"
                    "    w = line.split()\n    n = w.pop(0) if w and w[0].isdigit() else ''\n"
                    "    print(f\"={n} {'unknown' if w[:1] == ['solve'] else ''}\".rstrip() + '\\n', flush=True)\n")  # fmt: skip
    result = run_regress(program(path), course_file(tmp_path), GOMOKU, settings(per_test=True))
    first = result.tests[0]
    assert first.number == 40 and first.symbol == "u", first
    assert first.board.split()[0][GOMOKU.parse_square("A7")] == "x"
    assert "the program ended at 'play B A7' before this test" in first.note
