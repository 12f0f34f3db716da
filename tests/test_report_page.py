"""A tournament's report.html in a real headless Chromium (driven over the DevTools protocol):
it loads without console errors, and a game steps forward and back move by move, each board
holding the discs the reference rules give. Skipped only where no Chromium is installed
(CI installs it: apt-get install -y chromium)."""

import random
import shutil
from pathlib import Path

import pytest

from grader.games.othello import OTHELLO
from grader.limits import Limits
from grader.tournaments.settings import TournamentSettings
from grader.tournaments.tournament import run_tournament

import reference as ref
from cdp import Browser, find_chromium

ENGINE = Path(__file__).parent / "scripts" / "engine.py"
CHROMIUM = find_chromium()
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no Chromium installed (apt-get install -y chromium)")


def near_end(seed: int, empties: int = 5) -> list[int]:
    rng = random.Random(seed)
    while True:
        board, tok, moves = ref.START, "x", []
        while board.count(".") > empties:
            ms = ref.moves(board, tok)
            if not ms:
                tok = ref.other(tok)
                if not ref.moves(board, tok):
                    break
                continue
            moves.append(rng.choice(ms))
            board, tok = ref.play(board, tok, moves[-1]), ref.other(tok)
        if board.count(".") == empties and (ref.moves(board, tok) or ref.moves(board, ref.other(tok))):
            return moves


def reference_plies(transcript: str) -> list[str]:
    """The board after each ply (passes are plies, as on the page), by the reference rules."""
    board, tok, boards = ref.START, "x", [ref.START]
    for sq in OTHELLO.parse_transcript(transcript):
        if not ref.moves(board, tok):
            tok = ref.other(tok)
            boards.append(board)
        board, tok = ref.play(board, tok, sq), ref.other(tok)
        boards.append(board)
    return boards


@pytest.fixture(scope="module")
def browser():
    b = Browser(CHROMIUM)
    b.send("Runtime.enable")
    b.send("Log.enable")
    b.send("Page.enable")
    yield b
    b.close()


def load(browser, path: Path) -> None:
    browser.events.clear()
    browser.send("Page.navigate", url=path.as_uri())
    browser.wait_for("Page.loadEventFired")
    browser.evaluate("0")  # let queued events arrive


def test_a_broken_page_is_caught(browser, tmp_path):
    page = tmp_path / "broken.html"
    page.write_text("<!doctype html><html><body><script>undefinedFunction();</script></body></html>")
    load(browser, page)
    assert any("undefinedFunction" in e for e in browser.errors())


def test_report_page_loads_clean_and_steps_through_a_game(browser, tmp_path):
    for name in ("first", "first_b"):
        shutil.copy(ENGINE, tmp_path / f"{name}.py")
    openings = [OTHELLO.transcript(near_end(s)) for s in (4, 5)]
    result = run_tournament([tmp_path / "first.py", tmp_path / "first_b.py"], openings=openings, rounds=2, seed=1,
                            settings=TournamentSettings(limits=Limits(wall_seconds=5), jobs=2), out=tmp_path / "t")  # fmt: skip
    page = tmp_path / "t" / "report.html"
    html = page.read_text()
    assert "http://" not in html and "https://" not in html and " src=" not in html  # nothing from the network
    load(browser, page)
    assert browser.errors() == []
    assert browser.evaluate("document.querySelectorAll('button.replay').length") == 4

    n = 2  # the third game
    boards = reference_plies(result.games[n].moves)
    browser.evaluate(f"document.querySelector('button.replay[data-game=\"{n}\"]').click()")

    def shown():
        return browser.evaluate(
            "[document.getElementById('viewer-ply').textContent,"
            " document.querySelectorAll('#viewer-board circle[fill=\"#111\"]').length,"
            " document.querySelectorAll('#viewer-board circle[fill=\"#f5f5f5\"]').length]"
        )

    assert shown() == [f"ply 0 of {len(boards) - 1}", 2, 2]
    for ply in range(1, len(boards)):
        browser.evaluate("document.getElementById('next').click()")
        assert shown() == [f"ply {ply} of {len(boards) - 1}", boards[ply].count("x"), boards[ply].count("o")]
    browser.evaluate("document.getElementById('next').click()")  # past the end: stays on the last ply
    assert shown()[0] == f"ply {len(boards) - 1} of {len(boards) - 1}"
    browser.evaluate("document.getElementById('prev').click()")
    assert shown() == [f"ply {len(boards) - 2} of {len(boards) - 1}", boards[-2].count("x"), boards[-2].count("o")]
    final = boards[-1]
    g = result.games[n]
    assert (final.count("x"), final.count("o")) == (g.black_pieces, g.white_pieces)
    assert browser.errors() == []


def test_a_regression_class_report_loads_clean_with_its_boards(browser, tmp_path):
    """A class on a regression file: the page loads without errors, nothing from the network,
    a row per student, and a board per test below full credit that the solver judged, the
    moves achieving the result marked (brute force: tests/test_gomoku.py's course positions)."""
    from grader.games.gomoku import GOMOKU
    from grader.regression.runs import regress_class

    from test_gomoku import EXAMPLES, course_file, settings

    cls = tmp_path / "class"
    for name in ("bad_move", "solver"):
        (cls / name).mkdir(parents=True)
        shutil.copy(EXAMPLES / f"{name}.py", cls / name / "Gomoku.py")
        shutil.copy(EXAMPLES / "solver.py", cls / name / "solver.py")  # bad_move.py imports it
    run = regress_class([cls], [course_file(tmp_path)], GOMOKU, settings(), out=tmp_path / "run", entry="Gomoku.py")
    assert "report.html" in run.files
    page = tmp_path / "run" / "report.html"
    html = page.read_text()
    assert "http://" not in html.replace("http://www.w3.org/2000/svg", "") and " src=" not in html
    load(browser, page)
    assert browser.errors() == []
    assert browser.evaluate("document.querySelectorAll('tbody tr').length") == 2
    assert browser.evaluate("document.querySelectorAll('section.student').length") == 2
    # bad_move: test 120 (W, white wins at B3 or G3) drawn; solver: every test right, no board
    assert browser.evaluate("document.querySelectorAll('#s1 svg').length") == 1
    assert browser.evaluate("document.querySelectorAll('#s2 svg').length") == 0
    text = browser.evaluate("document.querySelector('#s1 .test').textContent")
    assert "120 solve" in text and "w B1" in text and "B3, G3" in text
    dots = browser.evaluate("document.querySelectorAll('#s1 svg circle').length")
    assert dots >= 2 + 9  # the two best moves marked, beside the stones
