"""A game from another installed package, found through the 'grader.games' entry point: the
toy game Strip (tests/toygame) is graded, solved and played by the same commands as Othello."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.cli import main
from grader.games import available, get_game

TOY = Path(__file__).parent / "toygame"


@pytest.fixture
def toy(monkeypatch):
    """tests/toygame on the path: its dist-info declares the entry point, as pip would install it."""
    monkeypatch.syspath_prepend(str(TOY))
    yield get_game("strip")


def test_the_entry_point_is_found(toy):
    assert available()["strip"] == "toygame:Strip"
    assert toy.name == "strip" and toy.solver("pairs").value(toy.parse("xo.xo", "x")) == get_game("strip").solver(
        "pairs").value(toy.parse("xo.xo", "x"))  # fmt: skip


def test_a_script_is_graded_on_the_toy_game(toy, tmp_path):
    result = CliRunner().invoke(main, ["grade", str(TOY / "strip_player.py"), "--game", "strip", "--seed", "4",
                                       "--json", str(tmp_path / "r.json")])  # fmt: skip
    assert result.exit_code == 0, result.output
    data = json.loads((tmp_path / "r.json").read_text())["scripts"][0]
    assert data["symbols"] == "+" * 10 and data["total"] == 10
    solved = CliRunner().invoke(main, ["solve", "x.o.x", "o", "--game", "strip", "--json", "--all"])
    assert json.loads(solved.output)["value"] == max(json.loads(solved.output)["move_values"].values())


def test_unknown_game_lists_the_installed_ones(toy):
    result = CliRunner().invoke(main, ["grade", str(TOY / "strip_player.py"), "--game", "chess"])
    assert result.output.strip() == "Error: unknown game 'chess': installed games are gomoku, othello, strip, tictactoe"


def test_nothing_above_the_games_names_a_game():
    """Outside grader/games, no code line names Othello or tic-tac-toe (docstrings may)."""
    root = Path(__file__).resolve().parents[1] / "grader"
    offenders = []
    for path in root.glob("*.py"):
        inside_docstring = False
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if line.count('"""') % 2:
                inside_docstring = not inside_docstring
                continue
            code = line.split("#", 1)[0]
            if not inside_docstring and any(w in code.lower() for w in ("othello", "tictactoe", "tic-tac-toe")):
                if "help=" not in code and '"""' not in code:
                    offenders.append(f"{path.name}:{number}: {line.strip()}")
    assert offenders == []
