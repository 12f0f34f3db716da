"""One resolver of settings (grader.settings): what was given, then the plan, then config.yaml,
then the default, for grading, regression and tournaments alike. "Given" means given: an
option equal to its default still beats the plan and config.yaml."""

import json

import pytest
from click.testing import CliRunner

from grader import Config, Limits, Settings, TournamentSettings, get_game, grade, load_config
from grader.cli import main
from grader.grading.plans import load_any_plan, plan_rules
from grader.regression.results import RegressSettings

from conftest import HANDOUT_BOARD

OTHELLO = get_game("othello")
# Prints the handout board's optimal move after 6 s: inside a 10 s limit, past a 5 s one.
LATE = """import sys, time
time.sleep(6)
print("score 0 moves 51")
"""


@pytest.fixture
def five_second_plan(tmp_path, monkeypatch):
    """A plan of one test that sets 5 s a test (and winner-takes-empties), in tmp_path."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "b.txt").write_text(f"{HANDOUT_BOARD} x\n")
    made = CliRunner().invoke(main, ["plan", "new", "--boards", "b.txt", "--time-limit", "5",
                                     "--scoring", "winner-takes-empties", "--out", "p.plan"])  # fmt: skip
    assert made.exit_code == 0, made.output
    return load_any_plan("p.plan")


@pytest.mark.slow
def test_a_time_limit_given_equal_to_the_default_beats_the_plan_from_the_cli(five_second_plan, tmp_path):
    """The plan says 5 s, --time-limit 10 (the default's value) is given: the run is at 10 s,
    so a script answering after 6 s is not stopped (it was, when the plan was applied twice)."""
    (tmp_path / "late.py").write_text(LATE)
    done = CliRunner().invoke(main, ["grade", "late.py", "--plan", "p.plan", "--time-limit", "10", "--out", "run"])
    assert done.exit_code == 0, done.output
    assert json.loads((tmp_path / "run" / "run.json").read_text())["settings"]["limits"]["wall_seconds"] == 10
    (record,) = [json.loads(line) for line in (tmp_path / "run" / "tests.jsonl").read_text().splitlines()]
    assert record["run"]["timed_out"] is False and record["claim"]["move"] == 51, record
    without = CliRunner().invoke(main, ["grade", "late.py", "--plan", "p.plan", "--out", "run5"])
    (record,) = [json.loads(line) for line in (tmp_path / "run5" / "tests.jsonl").read_text().splitlines()]
    assert record["run"]["timed_out"] is True, without.output  # the plan's 5 s, when nothing is given


def test_a_time_limit_given_equal_to_the_default_beats_the_plan_from_python(five_second_plan):
    plan = five_second_plan
    resolved = Settings.resolve(Config(), OTHELLO, plan, time_limit=10)
    assert resolved.on(plan).limits.wall_seconds == 10
    assert (
        Settings(limits=Limits(wall_seconds=10)).on(plan).limits.wall_seconds == 10
    )  # given, though equal to the default
    assert Settings(jobs=2).on(plan).limits.wall_seconds == 5  # limits not given: the plan's
    assert Settings.resolve(Config(), OTHELLO, plan).limits.wall_seconds == 5
    assert Settings.resolve(Config(), OTHELLO, plan, scoring="plain").scoring == "plain"  # the default rule, given
    assert Settings.resolve(Config(), OTHELLO, plan).scoring == "winner-takes-empties"


@pytest.mark.parametrize(
    "config_text, time_limit, with_plan, wanted",
    [
        ("", None, False, 10.0),  # the built-in default
        ("limits:\n  wall_seconds: 3\n", None, False, 3.0),  # config.yaml over the default
        ("limits:\n  wall_seconds: 3\n", None, True, 5.0),  # the plan over config.yaml
        ("limits:\n  wall_seconds: 3\n", 10.0, True, 10.0),  # given (the default's value) over the plan
        ("limits:\n  wall_seconds: 3\n", 7.0, False, 7.0),  # given over config.yaml
    ],
)
def test_grading_settings_take_each_level_in_order(five_second_plan, tmp_path, config_text, time_limit, with_plan,
                                                   wanted):  # fmt: skip
    (tmp_path / "config.yaml").write_text(config_text)
    config = load_config(None)
    plan = five_second_plan if with_plan else None
    assert Settings.resolve(config, OTHELLO, plan, time_limit=time_limit).limits.wall_seconds == wanted
    rule, limits = plan_rules(config, OTHELLO, plan, time_limit)  # what 'grader plan new' writes
    assert limits.wall_seconds == wanted


def test_a_plans_limits_do_not_take_what_config_yaml_leaves_out_of_the_given(five_second_plan, tmp_path):
    """Given one limit (wall seconds), the others come from the plan, not from the defaults."""
    (tmp_path / "config.yaml").write_text("limits:\n  memory_mb: 512\n")
    got = Settings.resolve(load_config(None), OTHELLO, five_second_plan, time_limit=2)
    assert (got.limits.wall_seconds, got.limits.memory_mb) == (2, five_second_plan.limits.memory_mb)
    got = Settings.resolve(load_config(None), OTHELLO, None, time_limit=2)
    assert (got.limits.wall_seconds, got.limits.memory_mb) == (2, 512)


@pytest.mark.slow
def test_the_library_grades_at_the_given_limit_over_the_plans(five_second_plan, tmp_path):
    """grade() from Python with settings resolved on a plan of 5 s and 10 s given: not stopped at 5 s."""
    (tmp_path / "late.py").write_text(LATE)
    result = grade(tmp_path / "late.py", five_second_plan, Settings.resolve(Config(), OTHELLO, five_second_plan,
                                                                             time_limit=10))  # fmt: skip
    assert not result.tests[0].run.timed_out and result.tests[0].claim.move == 51


@pytest.mark.parametrize(
    "config_text, time_limit, wanted",
    [
        ("", None, 5.0),  # the default move_seconds
        ("tournament:\n  move_seconds: 2\n", None, 2.0),  # config.yaml
        ("tournament:\n  move_seconds: 2\n", 5.0, 5.0),  # given, equal to the default, over config.yaml
    ],
)
def test_tournament_settings_take_each_level_in_order(tmp_path, monkeypatch, config_text, time_limit, wanted):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "config.yaml").write_text(config_text)
    got = TournamentSettings.resolve(load_config(None), OTHELLO, time_limit)
    assert got.limits.wall_seconds == wanted


def test_tournament_options_given_as_the_default_beat_config_yaml(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "config.yaml").write_text("tournament:\n  on_illegal: random\n  time_margin: 2\n")
    config = load_config(None)
    assert TournamentSettings.resolve(config, OTHELLO).on_illegal == "random"
    assert TournamentSettings.resolve(config, OTHELLO, on_illegal="forfeit").on_illegal == "forfeit"
    assert TournamentSettings.resolve(config, OTHELLO, time_margin=0.1).time_margin == 0.1


def test_regress_settings_take_each_level_in_order(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert RegressSettings.resolve(load_config(None)).margin == 0.5  # the default
    (tmp_path / "config.yaml").write_text("regress:\n  margin: 2\n  per_test: true\n")
    config = load_config(None)
    assert RegressSettings.resolve(config).margin == 2  # config.yaml
    assert RegressSettings.resolve(config, margin=0.5).margin == 0.5  # given, equal to the default
    assert RegressSettings.resolve(config, per_test=False).per_test is False
