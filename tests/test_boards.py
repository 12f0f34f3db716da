"""Board files (BOARD TOKEN, FFO, OBF) and random positions reached by legal play."""

import random
import signal
import subprocess
import sys
import threading

import pytest

from grader.games.othello import OTHELLO, Position, random_position
from grader.grading.plans import read_boards

import reference as ref
from conftest import FFO20, FFO_FILE, HANDOUT_BOARD


def parse_board_line(line, label=""):
    try:
        return OTHELLO.parse_board_line(line, label)
    except BoardError as e:
        raise BoardFileError(f"{label}: {e}") from None


from grader.errors import BoardError, BoardFileError


def test_board_token_lines_comments_and_blanks(tmp_path):
    f = tmp_path / "b.txt"
    f.write_text(f"# a comment\n\n{HANDOUT_BOARD} x\n  {HANDOUT_BOARD.upper()}   O  # trailing comment\n")
    entries = read_boards(f)
    assert [e.position for e in entries] == [
        Position.from_string(HANDOUT_BOARD, "x"),
        Position.from_string(HANDOUT_BOARD, "o"),
    ]
    assert entries[0].label == f"{f}:3" and entries[0].score is None


def test_ffo_line():
    entry = parse_board_line(f"20|{FFO20}|X|6|h5|+6|edax-reversi/problem/fforum-20-39.obf")
    assert entry.label == "FFO #20"
    assert entry.position == Position.from_string(FFO20.replace("-", "."), "x")
    assert entry.best_moves == (39,) and entry.score == 6


def test_ffo_line_with_several_best_moves_and_white_to_move():
    line = "9|--XOXX--O-OOXXXX-OOOXXXX-XOXXXOXXXOXOOOXOXXOXOXX--OXOO----OOOO--|O|15|g7,a4|-8|src"
    entry = parse_board_line(line)
    assert entry.position.token == "o" and entry.best_moves == (54, 24) and entry.score == -8


def test_obf_line():
    entry = parse_board_line(f"{FFO20} X; H5:+6; G6:+4;")
    assert entry.position == Position.from_string(FFO20.replace("-", "."), "x")
    assert parse_board_line(f"{FFO20} O % comment").position.token == "o"


def test_the_whole_ffo_file_reads():
    entries = read_boards(FFO_FILE)
    assert len(entries) == 79
    assert all(e.best_moves and e.score is not None for e in entries)
    assert [e.position.empties for e in entries[:20]] == [14] * 7 + [15] * 5 + [16] * 7 + [6]


@pytest.mark.parametrize(
    "content, message",
    [
        (f"{HANDOUT_BOARD}\n", r"b.txt:1: expected 'BOARD TOKEN' \(64-character board, then x or o\), got 1 field"),
        (f"# ok\n{HANDOUT_BOARD[:60]} x\n", "b.txt:2: board has 60 characters, expected 64"),
        (f"{HANDOUT_BOARD} z\n", "b.txt:1: bad token 'z'"),
        (f"{HANDOUT_BOARD[:-1]}? x\n", r"b.txt:1: bad character '\?' at position 63 \(h8\)"),
        ("# nothing here\n\n", "holds no boards"),
        (f"{HANDOUT_BOARD} x extra\n", "got 3 field"),
    ],
)
def test_bad_board_files_name_file_and_line(tmp_path, content, message):
    f = tmp_path / "b.txt"
    f.write_text(content)
    with pytest.raises(BoardFileError, match=message):
        read_boards(f)


def test_missing_board_file(tmp_path):
    with pytest.raises(BoardFileError, match="not found: give the path of an existing file"):
        read_boards(tmp_path / "nope.txt")


@pytest.mark.parametrize("empties", [1, 2, 5, 9, 14])
def test_random_positions_are_reached_by_legal_play_and_playable(empties):
    rng = random.Random(empties)
    for _ in range(20):
        pos = random_position(rng, empties)
        assert pos.empties == empties
        assert ref.moves(pos.board_string(), pos.token)  # the side to move can move


def test_random_positions_depend_only_on_the_seed():
    """The same seed gives the same board on any machine (a recorded value: a change here
    changes every test plan made from a seed)."""
    boards = {random_position(random.Random(42), 6).board_string() for _ in range(3)}
    assert boards == {"xxxx.oooxxooooooxxooooxox.oooxxoxxoooxo.xxxxoxxxxxxxoxxxx.xxo..o"}


@pytest.mark.parametrize(
    "line, message",
    [
        (f"20|{FFO20}|X|6|h5|+6.5|src", "FFO score '\\+6.5' is not a whole number of discs"),
        (f"20|{FFO20}|X|6|\u00b2|+6|src", "bad square '\u00b2'"),
    ],
)
def test_bad_ffo_fields_are_board_file_errors(line, message):
    with pytest.raises(BoardFileError, match=message):
        parse_board_line(line, "f.txt:1")


# --- grader boards: what cannot be drawn, and a long draw (issue 51) -------------------------


def grader(where, *args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "grader", *args], cwd=where, capture_output=True, text=True,
                          timeout=60, **kwargs)  # fmt: skip


@pytest.mark.parametrize("args, said", [
    (["--count", "999999999", "--empties", "1-1"],
     "--count 999,999,999 is more than the 1,000,000 boards drawn at once: draw more in several files, each with "
     "its own --seed"),
    (["--count", "600000", "--empties", "1-2"],
     "--count 600,000 for each of 2 numbers of empties (1,200,000 boards) is more than the 1,000,000 boards drawn "
     "at once: draw more in several files, each with its own --seed"),
    (["--count", "1000", "--empties", "1-1", "--game", "tictactoe"],
     "--count 1,000: there are only 222 Tic-tac-toe boards with 1 empty and a move to make: ask for at most 222"),
])  # fmt: skip
def test_boards_that_cannot_be_drawn_are_refused_at_once(tmp_path, args, said):
    """A count without bound had drawn for ever (nothing written, no progress); tic-tac-toe's
    had silently given fewer boards than asked."""
    done = grader(tmp_path, "boards", *args, "--out", "big.txt")
    assert (done.returncode, done.stdout, done.stderr) == (1, "", f"Error: {said}\n")
    assert not (tmp_path / "big.txt").exists()


def test_a_long_draw_shows_its_progress_and_an_interrupted_one_says_what_it_wrote(tmp_path):
    proc = subprocess.Popen([sys.executable, "-m", "grader", "boards", "--count", "1000000", "--empties", "1-1",
                             "--seed", "3", "--out", "big.txt"], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    guard = threading.Timer(60, proc.kill)  # a draw that never says a word fails, not hangs
    guard.start()
    announced = proc.stderr.readline()  # after a second of drawing
    guard.cancel()
    assert announced.startswith("Drawing 1,000,000 boards will take about "), announced + proc.communicate()[1]
    assert announced.endswith("; Ctrl-C stops it, keeping those written\n")
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    last = err.splitlines()[-1]
    written = int(last.split(" of ")[0].rsplit(" ", 1)[1].replace(",", ""))
    assert last == f"Interrupted (Ctrl-C): {written:,} of 1,000,000 boards written to big.txt (seed 3)."
    lines = (tmp_path / "big.txt").read_text().splitlines()
    assert lines[0] == "# grader boards --game othello --seed 3 --empties 1-1 --count 1000000"
    assert len(lines) == written + 1 and written > 0
    assert [ln.split() for ln in lines[1:4]] == [
        [p.board_string(), p.token] for p in OTHELLO.random_positions(3, range(1, 2), 3)
    ]
