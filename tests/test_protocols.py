"""Engine protocols as plugins: a third protocol, defined here and registered through the
'grader.protocols' entry point as an installed package would register it, plays games by
the same code as NBoard and GTP (no line above the engines names it), from a tournament's
'NAME:COMMAND', from config.yaml's engines: and on --resume."""

import json
import shlex
import shutil
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

import grader.engines
from grader.cli import main
from grader.engines import available_protocols, get_protocol
from grader.engines.programs import PYTHON, ProtocolEngine
from grader.engines.protocol import Answer, ProtocolError, Silent
from grader.engines.sessions import SessionProtocol
from grader.errors import GraderError
from grader.games import PASS, Game, Position, get_game
from grader.limits import Limits
from grader.tournaments.settings import TournamentSettings
from grader.tournaments.tournament import run_tournament

NEAR_END = "f5f6e6f4g6d7c3c5d3g4c6c4e8g7f3c7h4b2g5h3"  # a legal Othello opening of 20 moves: short games

# The engine's side of the protocol: 'hello' -> 'ready'; 'position BOARD TOKEN' -> 'move N', N the
# first empty square of BOARD (in tic-tac-toe always a legal move).
ENGINE = """\
import sys
for line in sys.stdin:
    words = line.split()
    if words == ["hello"]:
        print("ready", flush=True)
    elif words[:1] == ["position"]:
        print("move", words[1].index("."), flush=True)
"""


class LineProtocol(SessionProtocol):
    """A protocol of one line each way: 'position BOARD TOKEN', answered 'move SQUARE'."""

    name, title = "line", "Line"

    def hello(self, seconds: float) -> list[str]:
        self.session.send("hello\n")
        line = self.session.read_line(time.monotonic() + seconds)
        if line is None:
            raise Silent("no 'ready' in time")
        if line.strip() != "ready":
            raise ProtocolError(f"'{line[:40]}' is not 'ready'")
        return []

    def new_game(self) -> None:
        pass

    def ask(self, start: Position, plies: list[int], seconds: float) -> Answer:
        pos = start
        for move in plies:
            pos = pos.pass_turn() if move == PASS else pos.play(move)
        self.session.send(f"position {pos.board_string()} {pos.token}\n")
        line = self.session.read_line(time.monotonic() + seconds)
        if line is None:
            raise Silent(f"no move within {seconds:.2f} s")
        words = line.split()
        if words[:1] != ["move"] or len(words) != 2 or not words[1].isdigit():
            raise ProtocolError(f"'{line[:40]}' is not 'move N'")
        return Answer(int(words[1]), words[1], None, None)

    @classmethod
    def plays(cls, game: Game) -> bool:
        return True


class NotAProtocol:
    name = "broken"


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    """This module's LineProtocol installed under the entry point 'line' (a dist-info on the
    path, as pip leaves one), and a registry that has loaded nothing yet."""
    dist = tmp_path / "site" / "lineproto-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: lineproto\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        f"[grader.protocols]\nline = {__name__}:LineProtocol\nbroken = {__name__}:NotAProtocol\n"
    )
    monkeypatch.syspath_prepend(str(dist.parent))
    monkeypatch.setattr(grader.engines, "_loaded", {})
    engine = tmp_path / "line_engine.py"
    engine.write_text(ENGINE)
    return engine


def first_empty_moves(game: Game, record: dict, engine: str) -> list[bool]:
    """For each move ``engine`` made in a game record after its opening: whether it was the
    first empty square."""
    pos, out = game.start(), []
    opening = len(game.parse_transcript(record["opening"]))
    for i, move in enumerate(game.parse_transcript(record["moves"])):
        mover = record["black"] if pos.token == game.sides[0] else record["white"]
        if mover == engine and i >= opening:
            out.append(move == pos.board_string().index("."))
        pos = pos.play(move)
    return out


def test_the_entry_point_gives_the_class_by_name(plugin):
    assert available_protocols()["line"] == f"{__name__}:LineProtocol"
    assert list(available_protocols())[:2] == ["nboard", "gtp"]
    assert get_protocol("line") is LineProtocol
    assert get_protocol("nboard").title == "NBoard" and get_protocol("gtp").title == "GTP"


def test_a_protocol_defined_here_plays_a_tournament_and_resumes(plugin, tmp_path):
    game = get_game("tictactoe")
    settings = TournamentSettings(limits=Limits(wall_seconds=5), jobs=1, game="tictactoe")
    command = "line:" + shlex.join([PYTHON, str(plugin)])
    result = run_tournament([command, "builtin:minimax"], settings=settings, out=tmp_path / "t", seed=1)
    games = [json.loads(line) for line in (tmp_path / "t" / "games.jsonl").read_text().splitlines()]
    assert len(games) == 2 and [g["reason"] for g in games] == ["normal", "normal"], games
    moves = [ok for g in games for ok in first_empty_moves(game, g, "line_engine")]
    assert len(moves) >= 2 and all(moves), games
    meta = json.loads((tmp_path / "t" / "tournament.json").read_text())
    assert meta["engines"]["line_engine"]["protocol"] == "line"
    again = run_tournament(resume=tmp_path / "t")  # the engine is read again, by its protocol's name
    assert [g.summary() for g in again.games] == [g.summary() for g in result.games]


def test_config_engines_take_an_installed_protocol(plugin, tmp_path):
    (tmp_path / "c.yaml").write_text(
        f"engines:\n  - {{name: liner, command: '{{python}} {plugin.name}', protocol: line}}\n"
    )
    out = CliRunner().invoke(main, ["tournament", "liner", "builtin:first_empty", "--game", "tictactoe",
                                    "--config", str(tmp_path / "c.yaml"), "--out", str(tmp_path / "t"), "--jobs", "1"])  # fmt: skip
    assert out.exit_code == 0, out.output
    games = [json.loads(line) for line in (tmp_path / "t" / "games.jsonl").read_text().splitlines()]
    assert len(games) == 2 and all(g["reason"] == "normal" for g in games), games


def test_config_refuses_a_protocol_not_installed(tmp_path):
    (tmp_path / "c.yaml").write_text("engines:\n  - {name: liner, command: 'python3 x.py', protocol: line}\n")
    out = CliRunner().invoke(main, ["tournament", "liner", "builtin:greedy", "--config", str(tmp_path / "c.yaml")])
    assert out.exit_code != 0
    assert (
        out.output.strip()
        .splitlines()[-1]
        .endswith("'engines[1].protocol' must be one of nboard, gtp, script; got 'line'")
    ), out.output


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("uci", "unknown engine protocol 'uci': use one of nboard, gtp, script, line, broken"),
        ("broken", f"the engine protocol 'broken' ({__name__}:NotAProtocol) is not a grader.engines.protocol."
                   "Protocol named 'broken': fix the entry point or the class"),
    ],
)  # fmt: skip
def test_unknown_and_broken_protocols_are_one_line_errors(plugin, name, message):
    with pytest.raises(GraderError) as e:
        ProtocolEngine.from_command(shlex.join([PYTHON, str(plugin)]), name)
    assert str(e.value) == message


def test_a_depth_is_refused_where_the_protocol_has_none(plugin):
    with pytest.raises(
        GraderError, match="^a depth is NBoard's 'set depth': give a Line engine its level in its command$"
    ):
        ProtocolEngine.from_command(shlex.join([PYTHON, str(plugin)]), "line", depth=3)


def test_nothing_above_the_engines_names_a_protocol():
    """Outside grader/engines, no code line names NBoard's or GTP's classes: what a protocol
    is and does is asked of the registry."""
    root = Path(__file__).resolve().parents[1] / "grader"
    offenders = [f"{path.relative_to(root)}: {line.strip()}" for path in root.rglob("*.py")
                 if "engines" not in path.parts and "share" not in path.parts
                 for line in path.read_text().splitlines()
                 if any(w in line for w in ("NBoardProtocol", "GtpProtocol", "PROTOCOLS", '== "gtp"', "== 'gtp'"))
                 and "lab_protocol" not in line]  # fmt: skip
    assert offenders == []


def test_a_protocol_that_does_not_play_the_game_is_refused_naming_those_that_do(plugin, tmp_path):
    """The installed protocols that play Gomoku are named (a broken plugin is left out)."""
    nboard = "nboard:" + shlex.join([PYTHON, str(plugin)])
    out = CliRunner().invoke(
        main, ["tournament", nboard, "builtin:gtp:solver", "--game", "gomoku", "--out", str(tmp_path / "t")]
    )
    assert out.exit_code == 1
    assert out.output.strip() == (f"Error: engine '{nboard}' speaks nboard, which does not play Gomoku: its engines "
                                  "speak gtp or line, or are scripts")  # fmt: skip


@pytest.mark.slow
def test_scripts_are_the_script_protocol_of_the_registry(tmp_path):
    """'script:PATH' and config.yaml's 'protocol: script' name a lab script, played by the
    registry's script protocol as a bare path is; a depth is refused for it as for GTP."""
    assert get_protocol("script").title == "script" and "script" in available_protocols()
    lab = tmp_path / "labs" / "mine.py"
    lab.parent.mkdir()
    shutil.copy(Path(__file__).parents[1] / "submissions" / "negamax.py", lab)
    shutil.copy(lab, tmp_path / "other.py")
    (tmp_path / "openings.txt").write_text(NEAR_END + "\n")
    args = ["tournament", "mine", f"script:{tmp_path / 'other.py'}", "--config", str(tmp_path / "c.yaml"),
            "--out", str(tmp_path / "t"), "--jobs", "1", "--openings", str(tmp_path / "openings.txt")]  # fmt: skip
    (tmp_path / "c.yaml").write_text("engines:\n  - {name: mine, command: labs/mine.py, protocol: script, depth: 2}\n")
    out = CliRunner().invoke(main, args)
    assert out.exit_code != 0 and not (tmp_path / "t").exists()
    assert (
        out.output.strip()
        .splitlines()[-1]
        .endswith("engine 'mine': a depth is NBoard's 'set depth': give a script engine its level in its command")
    ), out.output
    (tmp_path / "c.yaml").write_text("engines:\n  - {name: mine, command: labs/mine.py, protocol: script}\n")
    out = CliRunner().invoke(main, args)
    assert out.exit_code == 0, out.output
    meta = json.loads((tmp_path / "t" / "tournament.json").read_text())
    assert {name: e.get("path") for name, e in meta["engines"].items()} == {
        "mine": str(lab), "other": str(tmp_path / "other.py")
    }  # fmt: skip
    games = [json.loads(line) for line in (tmp_path / "t" / "games.jsonl").read_text().splitlines()]
    assert len(games) == 2 and all(g["reason"] == "normal" for g in games), games
