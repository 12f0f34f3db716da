"""Protocol engines: NBoard engines kept running for a game, clocks, records, misbehaviour."""

import json
import re
import secrets
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.cli import main
from grader.engines.programs import PYTHON, ProtocolEngine
from grader.errors import GraderError
from grader.limits import Limits
from grader.tournaments.engines import Engine, engine_list
from grader.tournaments.settings import TournamentSettings
from grader.tournaments.tournament import run_tournament

HERE = Path(__file__).parent
ENGINE = HERE / "nboard" / "engine.py"
NEAR_END = "f5f6e6f4g6d7c3c5d3g4c6c4e8g7f3c7h4b2g5h3"  # a legal opening of 20 moves: short games


def engine_copy(tmp_path: Path) -> Path:
    """A copy of the test engine under a name only this test knows (its processes carry it)."""
    path = tmp_path / f"nboard_{secrets.token_hex(6)}.py"
    path.write_text(ENGINE.read_text())
    return path


def nboard(path: Path, mode: str, name: str | None = None, depth: int | None = None) -> Engine:
    proto = ProtocolEngine.from_command(shlex.join([PYTHON, str(path), mode]), depth=depth)
    return Engine(name or mode, protocol=proto)


def running(path: Path) -> list[int]:
    """Live processes whose command line names the file of ``path`` (the engine copy, run
    from a staged copy of its folder, or its children)."""
    found = []
    for pid in (p for p in Path("/proc").iterdir() if p.name.isdigit()):
        try:
            cmdline = (pid / "cmdline").read_bytes()
            state = (pid / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if f"/{path.name}".encode() in cmdline and state not in ("Z", "X"):
            found.append(int(pid.name))
    return found


def handshakes(games, engine: str) -> int:
    """How many times ``engine`` (the test engine, with a depth) was started in ``games``."""
    return sum(a["lines"][:1] == ["status depth 3"] for g in games for a in g.analysis if a["engine"] == engine)


def settings(**kw) -> TournamentSettings:
    return TournamentSettings(**{"limits": Limits(wall_seconds=5), "jobs": 2, **kw})


def games_of(result) -> list[dict]:
    return [json.loads(line) for line in (result.folder.path / "games.jsonl").read_text().splitlines()]


def test_a_round_robin_of_nboard_engines_plays_to_the_end_with_clocks_and_evaluations(tmp_path):
    """Two bundled engines behind the NBoard adapter and the test engine: every game ends
    normally; each engine move has its time, its clock after the increment and its evaluation
    (the test engine's -2.50, negamax's exact values where it solves); its status and search lines are kept; games.ggf carries both."""
    copy = engine_copy(tmp_path)
    engines = ["builtin:nboard:negamax", "builtin:nboard:greedy", nboard(copy, "good", depth=3)]
    result = run_tournament(engines, settings=settings(tc=(30.0, 0.5)), openings=[NEAR_END], out=tmp_path / "t")
    assert len(result.games) == 6 and all(g.reason == "normal" and not g.events for g in result.games)
    for g in result.games:
        assert len(g.clocks) == len(g.move_times) == len(g.evals) > 0
        assert all(0 < c <= 30 + 0.5 * (i + 1) for i, c in enumerate(g.clocks))  # each move adds 0.5
        evals = [e for e in g.evals if e is not None]
        assert all(e == -2.5 or e == int(e) for e in evals)  # the test engine's, or negamax's exact values
        if "good" in (g.black, g.white):
            assert -2.5 in evals and any("search" in line for a in g.analysis for line in a["lines"])
        if "negamax" in (g.black, g.white):  # it solves the last 10 empties: their values
            assert any(e != -2.5 for e in evals)
    # said at the handshake, kept with the first move: once per process, and a process plays its
    # engine's next games on its worker (2 jobs: at most 2 processes for its 4 games)
    assert 1 <= handshakes(result.games, "good") <= 2
    ggf = (result.folder.path / "games.ggf").read_text()
    assert "/-2.50/" in ggf and ggf.count("(;GM[Othello]") == 6
    assert re.search(r"\(-2\.50, \d+\.\d s left\)", (result.folder.path / "report.html").read_text())
    assert running(copy) == []


def test_restart_starts_a_protocol_engine_for_every_game(tmp_path):
    copy = engine_copy(tmp_path)
    engines = ["builtin:nboard:greedy", nboard(copy, "good", depth=3)]
    result = run_tournament(engines, settings=settings(restart=True), rounds=2, openings=[NEAR_END, NEAR_END],
                            out=tmp_path / "t")  # fmt: skip
    assert len(result.games) == 4 and handshakes(result.games, "good") == 4
    assert running(copy) == []


@pytest.mark.parametrize(
    "mode, problem",
    [
        pytest.param("mute", "no pong to ping 1 before the NBoard handshake", marks=pytest.mark.slow),  # waits 10 s
        ("silent", "no move within 1.00 s"),
        ("illegal", "is not a legal move"),
        ("garbage", "'zz' in '=== zz/-2.50/0.01' is not a square (a1-h8) nor PA"),
        ("crash", "the engine crashed: it exited with code 3"),
        ("flood", "the engine printed more than limits.output_bytes and was stopped"),
        ("bare", "; an NBoard answer starts with '=== ' ('=== "),
    ],
)
def test_a_misbehaving_engine_forfeits_with_its_cause_and_leaves_nothing_running(tmp_path, mode, problem):
    copy = engine_copy(tmp_path)
    limits = Limits(wall_seconds=1, output_bytes=64 * 1024)
    result = run_tournament(["builtin:nboard:greedy", nboard(copy, mode)], settings=settings(limits=limits),
                            openings=[NEAR_END], out=tmp_path / "t")  # fmt: skip
    assert len(result.games) == 2
    for g in result.games:
        assert g.forfeit == mode and g.reason == "forfeit", g
        assert len(g.events) == 1 and problem in g.events[0]["problem"], g.events
        assert g.events[0]["timed_out"] == (mode in ("mute", "silent"))
    assert running(copy) == []


def test_a_crash_is_explained_with_its_last_stderr_line_on_the_command_line_and_in_the_report(tmp_path):
    """As the portal says it: the cause, then the last line the engine wrote to stderr."""
    copy = engine_copy(tmp_path)
    out = CliRunner().invoke(main, ["tournament", "builtin:nboard:greedy", f"nboard:{PYTHON} {copy} raise",
                                    "--openings", str(_opening(tmp_path)), "--out", str(tmp_path / "t")])  # fmt: skip
    said = "the last line it wrote to stderr: RuntimeError: the opening book is missing"
    assert out.output.count(said) == 2, out.output
    assert (tmp_path / "t" / "report.html").read_text().count(said) == 2
    assert running(copy) == []


def _opening(tmp_path: Path) -> Path:
    path = tmp_path / "openings.txt"
    path.write_text(NEAR_END + "\n")
    return path


def test_engines_named_on_the_command_line_let_two_files_of_one_name_meet(tmp_path):
    """'nboard:name=v1:COMMAND' as cutechess's name=: two versions, both engine.py, meet under
    their names; without names the refusal says how to give them."""
    commands = []
    for version in ("v1", "v2"):
        (tmp_path / version).mkdir()
        (tmp_path / version / "engine.py").write_text(ENGINE.read_text())
        commands.append(f"{PYTHON} {tmp_path / version / 'engine.py'} good")
    out = CliRunner().invoke(main, ["tournament", *(f"nboard:name={v}:{c}" for v, c in zip(("v1", "v2"), commands)),
                                    "--openings", str(_opening(tmp_path)), "--out", str(tmp_path / "t")])  # fmt: skip
    assert out.exit_code == 0, out.output
    names = {
        (g["black"], g["white"]) for g in map(json.loads, (tmp_path / "t" / "games.jsonl").read_text().splitlines())
    }
    assert names == {("v1", "v2"), ("v2", "v1")}
    out = CliRunner().invoke(main, ["tournament", *(f"nboard:{c}" for c in commands), "--out", str(tmp_path / "u")])
    assert out.exit_code != 0 and "nboard:name=v1:COMMAND" in out.output and "Traceback" not in out.output
    out = CliRunner().invoke(main, ["tournament", "nboard:name=:x", "builtin:greedy", "--out", str(tmp_path / "w")])
    assert out.exit_code != 0 and "as nboard:name=NAME:COMMAND" in out.output, out.output


@pytest.mark.parametrize("mode, evaluations", [("early", {-2.5}), ("edax", {1.0}), ("linger", {-2.5}), ("nan", set())])
def test_engines_that_answer_early_in_edax_style_or_leave_a_child_play_normally(tmp_path, mode, evaluations):
    """An answer printed before the pong (an illegal a1) is not taken for the move; Edax's
    '=== F5 1.00 0.0' is read; a child left running is killed at the game's end; an
    evaluation 'nan' (or 'inf') is no evaluation, so the records stay valid JSON."""
    copy = engine_copy(tmp_path)
    result = run_tournament(["builtin:nboard:greedy", nboard(copy, mode)], settings=settings(),
                            openings=[NEAR_END], out=tmp_path / "t")  # fmt: skip
    assert all(g.reason == "normal" and not g.events for g in result.games), [g.events for g in result.games]
    assert {e for g in result.games for e in g.evals if e is not None} == evaluations
    for line in (tmp_path / "t" / "games.jsonl").read_text().splitlines():
        json.loads(line, parse_constant=lambda name: pytest.fail(f"{name} in games.jsonl"))
    assert running(copy) == []


def test_a_flag_falls_when_the_clock_runs_out(tmp_path):
    """A silent engine on a 1-second clock loses on time, the record says so (GGF ':t')."""
    copy = engine_copy(tmp_path)
    result = run_tournament(["builtin:nboard:greedy", nboard(copy, "silent")],
                            settings=settings(tc=(1.0, 0.0), time_margin=0.05), openings=[NEAR_END],
                            out=tmp_path / "t")  # fmt: skip
    for g in result.games:
        assert g.forfeit == "silent" and "lost on time" in g.events[0]["problem"] and g.events[0]["timed_out"]
        assert g.timeouts["black" if g.black == "silent" else "white"] == 1
    assert (
        "-64.000:t" in (result.folder.path / "games.ggf").read_text()
        or "+64.000:t" in (result.folder.path / "games.ggf").read_text()
    )


@pytest.mark.slow
def test_resume_plays_only_the_missing_games_of_protocol_engines(tmp_path):
    copy = engine_copy(tmp_path)
    engines = ["builtin:nboard:greedy", nboard(copy, "good"), "builtin:random_mover"]
    first = run_tournament(engines, settings=settings(), openings=[NEAR_END], out=tmp_path / "t")
    records = (tmp_path / "t" / "games.jsonl").read_text().splitlines()
    (tmp_path / "t" / "games.jsonl").write_text("\n".join(records[:2]) + "\n")
    again = run_tournament(resume=tmp_path / "t")
    assert len(again.games) == len(first.games) == 6
    kept = {json.loads(r)["id"]: json.loads(r)["moves"] for r in records[:2]}
    assert all(g.moves == kept[g.id] for g in again.games if g.id in kept)
    assert {e.name: e.protocol is not None for e in again.engines} == {
        "greedy": True,
        "good": True,
        "random_mover": False,
    }


def test_config_engines_with_depths_grade_a_gauntlet(tmp_path):
    """config.yaml's engines: names an NBoard engine at two depths; a gauntlet grades a
    script against both, as a course grades students against Edax at levels 1 and 2."""
    copy = engine_copy(tmp_path)
    (tmp_path / "c.yaml").write_text(
        "engines:\n"
        f"  - {{name: level1, command: '{{python}} {copy.name} good', depth: 1}}\n"
        f"  - {{name: level2, command: '{{python}} {copy.name} good', depth: 2}}\n"
    )
    (tmp_path / "o.txt").write_text(NEAR_END + "\n")
    out = CliRunner().invoke(main, ["tournament", "builtin:greedy", "--format", "gauntlet", "--opponents", "level1,level2",
                                    "--grade", "--openings", str(tmp_path / "o.txt"), "--config", str(tmp_path / "c.yaml"),
                                    "--out", str(tmp_path / "t"), "--jobs", "2"])  # fmt: skip
    assert out.exit_code == 0, out.output
    games = [json.loads(line) for line in (tmp_path / "t" / "games.jsonl").read_text().splitlines()]
    assert len(games) == 4 and all(g["reason"] == "normal" for g in games)
    depths = {
        a["engine"]: a["lines"][0] for g in games for a in g["analysis"] if a["lines"][0].startswith("status depth")
    }
    assert depths == {"level1": "status depth 1", "level2": "status depth 2"}
    assert (tmp_path / "t" / "grades.csv").read_text().splitlines()[1].startswith("greedy,")


@pytest.mark.parametrize(
    "args, message",
    [
        (["nboard:", "builtin:greedy"], "an engine command is empty"),
        (["nboard:./no_such_engine -nboard", "builtin:greedy"], "engine program './no_such_engine' not found"),
        (["nboard:no-such-program-here", "builtin:greedy"], "'no-such-program-here' is not an installed program"),
        (["builtin:nboard:nothing", "builtin:greedy"], "no bundled engine 'builtin:nboard:nothing'"),
        (
            ["builtin:nboard:greedy", "builtin:random_mover", "--game", "tictactoe"],
            "speaks nboard, which does not play Tic-tac-toe",
        ),
        (["builtin:nboard:greedy", "builtin:greedy", "--tc", "abc"], "SECONDS[+INCREMENT]"),
        (["builtin:nboard:greedy", "builtin:greedy", "--tc", "10", "--time-limit", "1"], "not both"),
    ],
)
def test_bad_engines_and_clocks_are_one_line_errors(tmp_path, args, message):
    out = CliRunner().invoke(main, ["tournament", *args, "--out", str(tmp_path / "t")])
    assert out.exit_code != 0 and message in out.output, out.output
    assert "Traceback" not in out.output


def test_engine_names_and_digests():
    a = engine_list(["builtin:nboard:negamax", "builtin:negamax"])
    assert [e.name for e in a] == ["nboard:negamax", "negamax"]
    one = ProtocolEngine.from_command(shlex.join([PYTHON, str(ENGINE), "good"]))
    two = ProtocolEngine.from_command(shlex.join([PYTHON, str(ENGINE), "good"]), depth=2)
    assert one.folder == str(ENGINE.parent) and one.argv[1] == "{dir}/engine.py" and one.digest != two.digest
    with pytest.raises(GraderError, match="working folder"):
        ProtocolEngine.from_command("true", cwd="/no/such/folder")


def test_ctrl_c_during_protocol_games_leaves_nothing_running(tmp_path):
    """SIGINT while two silent engines wait on long clocks: the run ends with the resume
    hint within seconds, and no engine process is left."""
    copy, other = engine_copy(tmp_path), engine_copy(tmp_path)
    other.write_text(
        copy.read_text().replace('"linger"', '"not this one"')
    )  # no child: only the copy's processes count
    proc = subprocess.Popen(
        [sys.executable, "-m", "grader", "tournament", f"nboard:{sys.executable} {other.name} silent",
         f"nboard:{sys.executable} {copy.name} linger", "--tc", "600", "--jobs", "2", "--out", "t"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 20
    while len(running(copy)) < 4 and time.monotonic() < deadline:  # two games: an engine and its child each
        time.sleep(0.05)
    assert len(running(copy)) >= 4 and running(other), "the engines never started"
    proc.send_signal(2)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode != 0 and "--resume" in out + err, out + err
    assert running(copy) == running(other) == []
