"""isolation: unshare and bwrap cut the network and hide the file system (skipped where the
tool is missing or not permitted), and a missing tool is a clear error unless fallback is allowed."""

import json
import shutil
import socket
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import HANDOUT_BOARD, ROOT
from grader import isolation as isolation_module
from grader.board import Position
from grader.plans import Plan
from grader.cli import main
from grader.errors import GraderError
from grader.grading import Settings, grade
from grader.isolation import check_isolation
from grader.runner import Limits
from test_hostile import HOSTILE, processes_of

PLAN = Plan((Position.from_string(HANDOUT_BOARD, "x"),), None, "handout board")


def usable(isolation: str) -> str | None:
    """Why ``isolation`` cannot be tested here, or None."""
    try:
        check_isolation(isolation)
    except GraderError as e:
        return str(e)
    return None


@pytest.fixture(params=["unshare", "bwrap"])
def isolation(request):
    reason = usable(request.param)
    if reason:
        pytest.skip(reason)
    return request.param


@pytest.fixture
def listener():
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen()
    yield srv.getsockname()[1]
    srv.close()


def probe(tmp_path, port: int, isolation: str):
    for name in ("probe_isolation.py", "canned.py"):
        shutil.copy(Path(__file__).parent / "scripts" / name, tmp_path / name)
    secret = tmp_path.parent / f"{tmp_path.name}-answers.txt"  # beside the script's folder, not in it
    secret.write_text("51")
    (tmp_path / "probe_port.txt").write_text(f"{port} {secret}")
    settings = Settings(limits=Limits(wall_seconds=10), isolation=isolation, jobs=1)
    test = grade(tmp_path / "probe_isolation.py", PLAN, settings).tests[0]
    return test, json.loads(test.run.stdout_tail.splitlines()[0])


def test_without_isolation_everything_is_reachable(tmp_path, listener):
    test, seen = probe(tmp_path, listener, "none")
    assert test.symbol == "+"
    assert seen["network"] == "connected" and seen["secret_visible"] and seen["own_folder"]


def test_isolation_cuts_network_and_hides_the_file_system(tmp_path, listener, isolation):
    test, seen = probe(tmp_path, listener, isolation)
    assert test.symbol == "+", test.diagnosis
    assert seen["network"] != "connected"
    assert not seen["secret_visible"]
    assert seen["own_folder"] and seen["can_write_cwd"]
    assert seen["pid"] <= 3  # its own process namespace


def test_isolated_script_imports_from_its_folder(isolation):
    settings = Settings(isolation=isolation, jobs=1)
    result = grade(ROOT / "submissions" / "wrong_score.py", PLAN, settings)
    assert result.symbols == "Q", result.tests[0].diagnosis


@pytest.mark.parametrize("stem", ["double_fork", "fork_bomb", "child_holds_pipe"])
def test_isolated_hostile_scripts_leave_nothing(isolation, stem):
    limits = Limits(wall_seconds=1.5, processes=30)
    result = grade(HOSTILE / f"{stem}.py", PLAN, Settings(limits=limits, isolation=isolation, jobs=1))
    assert result.tests[0].run.wall_seconds < 2.5
    assert processes_of(stem) == []


def test_missing_tool_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(isolation_module, "_tool", lambda name: None)
    monkeypatch.setattr(isolation_module, "_checked", {})
    with pytest.raises(GraderError) as e:
        check_isolation("bwrap")
    assert str(e.value) == (
        "isolation 'bwrap' needs the 'bwrap' command, which is not installed: install it "
        "(Debian: apt-get install bubblewrap), set 'isolation: none', or allow 'isolation_fallback: true'"
    )


def test_cli_refuses_or_falls_back_when_the_tool_is_missing(tmp_path, monkeypatch):
    monkeypatch.setattr(isolation_module, "_tool", lambda name: None)
    monkeypatch.setattr(isolation_module, "_checked", {})
    monkeypatch.chdir(tmp_path)
    (tmp_path / "b.txt").write_text(f"{HANDOUT_BOARD} x\n")
    script = str(ROOT / "submissions" / "negamax.py")
    (tmp_path / "config.yaml").write_text("isolation: bwrap\n")
    refused = CliRunner().invoke(main, ["grade", script, "--boards", "b.txt"])
    assert refused.exit_code == 1
    assert refused.output.startswith("Error: isolation 'bwrap' needs the 'bwrap' command, which is not installed")
    assert len(refused.output.splitlines()) == 1
    (tmp_path / "config.yaml").write_text("isolation: bwrap\nisolation_fallback: true\n")
    allowed = CliRunner().invoke(main, ["grade", script, "--boards", "b.txt"])
    assert allowed.exit_code == 0
    warning = allowed.output.splitlines()[0]
    assert warning.startswith("Warning: isolation 'bwrap' needs the 'bwrap' command")
    assert warning.endswith("; running without isolation (isolation_fallback: true)")
    assert "1/1" in allowed.output


def test_unknown_isolation():
    with pytest.raises(GraderError, match="unknown isolation 'docker': use one of none, unshare, bwrap"):
        check_isolation("docker")
