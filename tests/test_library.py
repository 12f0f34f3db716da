"""grader as a library: everything the CLI does is a call, and runs in one process do not
touch each other (no process-wide state)."""

import json
import os
import threading
import time
from pathlib import Path

import pytest

import grader
from grader import (
    LocalExecutor,
    Plan,
    RunSettings,
    Settings,
    TournamentSettings,
    grade,
    grade_class,
    load_plan,
    run_tournament,
    solve,
)
from grader.engines import sandbox
from grader.execution.executor import SLOTS_CLOSED
from grader.settings import run_layer

from conftest import HANDOUT_BOARD, ROOT

NEGAMAX = ROOT / "submissions" / "negamax.py"
PLAN = load_plan(ROOT / "fixtures" / "standard.txt")  # the 10 fixed boards


def comparable(result):
    return [(t.index, t.symbol, t.claim, t.value, t.optimal_moves) for t in result.tests]


def test_a_run_after_an_interrupted_one_is_unaffected():
    fresh = grade(NEGAMAX, PLAN, Settings(jobs=2))
    stopped = LocalExecutor(2)
    stopped.stop.set("interrupted (Ctrl-C)")
    interrupted = grade(NEGAMAX, PLAN, Settings(jobs=2), executor=stopped)
    assert interrupted.tests == [] and interrupted.interrupted and not interrupted.complete
    assert interrupted.stopped == "interrupted (Ctrl-C)"
    after = grade(NEGAMAX, PLAN, Settings(jobs=2))
    assert comparable(after) == comparable(fresh) and after.total == 10 and after.complete


def test_an_executor_given_serves_one_run_after_another():
    with LocalExecutor(2) as ex:
        first, second = (grade(NEGAMAX, PLAN, Settings(jobs=2), executor=ex) for _ in range(2))
        assert comparable(first) == comparable(second) and second.total == 10 and second.complete


def test_runs_on_lanes_of_one_executor_at_once_get_their_own_results_and_stops():
    """A portal worker's grading threads share one executor's job slots, a lane each: two runs
    at once each get all their own tests and nothing of the other's; a lane stopped stops its
    run only; closing a lane leaves the slots to the next."""
    fresh = grade(NEGAMAX, PLAN, Settings(jobs=2))
    wrong = grade(ROOT / "submissions" / "wrong_score.py", PLAN, Settings(jobs=2))
    with LocalExecutor(2) as ex:
        stopped = ex.lane()
        stopped.stop.set("interrupted (Ctrl-C)")
        found: dict = {}

        def run(name, script, lane):
            with lane:
                found[name] = grade(script, PLAN, Settings(jobs=2), executor=lane)

        threads = [threading.Thread(target=run, args=args) for args in
                   [("negamax", NEGAMAX, ex.lane()), ("wrong", ROOT / "submissions" / "wrong_score.py", ex.lane()),
                    ("stopped", NEGAMAX, stopped)]]  # fmt: skip
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        with ex.lane() as lane:
            after = grade(NEGAMAX, PLAN, Settings(jobs=2), executor=lane)
    assert comparable(found["negamax"]) == comparable(fresh) == comparable(after) and after.total == 10
    assert comparable(found["wrong"]) == comparable(wrong) and found["wrong"].total < 10
    assert found["stopped"].tests == [] and found["stopped"].stopped == "interrupted (Ctrl-C)"


def test_a_run_whose_job_slots_close_under_it_is_stopped_not_complete():
    """Slots closed (a portal worker stopping) while a lane's task runs and another is queued:
    the queued one is dropped and the lane's run is stopped, never taken as complete."""
    ex = LocalExecutor(1)
    lane, probe = ex.lane(), ex.lane()
    gate, started = threading.Event(), threading.Event()
    lane.submit("running", lambda worker: started.set() or (gate.wait(60) and "finished"))
    lane.submit("queued", lambda worker: "ran")
    assert started.wait(60)  # the first task runs before the slots close (on a loaded machine it may take a while)
    closer = threading.Thread(target=ex.close)
    closer.start()
    while True:  # the slots take tasks until they begin to close (the queued ones dropped then)
        try:
            probe.submit("probe", lambda worker: None)
        except RuntimeError:
            break
        time.sleep(0.01)
    gate.set()
    closer.join()
    assert list(lane.results()) == [("running", "finished")]
    assert lane.stop.is_set() and lane.stop.reason == SLOTS_CLOSED
    lane.close()


def test_job_slot_uids_are_given_back():
    """As root each job slot runs scripts as a uid of its own: a long-lived process gives them
    back after each run (there are 1000)."""
    if os.geteuid() != 0:
        pytest.skip("uids per job slot are for a grader running as root")
    before = sandbox.claimed_uids()
    for _ in range(3):
        assert grade(NEGAMAX, PLAN, Settings(jobs=2)).total == 10
    assert sandbox.claimed_uids() == before


def test_two_runs_at_once_in_one_process():
    results = {}

    def one(name, script):
        results[name] = grade(script, PLAN, Settings(jobs=1))

    threads = [
        threading.Thread(target=one, args=(n, ROOT / "submissions" / f"{n}.py")) for n in ("negamax", "wrong_score")
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results["negamax"].symbols == "+" * 10
    assert set(results["wrong_score"].symbols) <= {"Q", "s", "-"} and results["wrong_score"].total < 10


@pytest.mark.slow
def test_library_calls_match_the_cli(tmp_path):
    analysis = solve(HANDOUT_BOARD, "x", all_values=True)
    assert (analysis.value, analysis.optimal_moves, analysis.move_values) == (18, [51], {7: -1, 14: -1, 51: 18})
    run = grade_class([ROOT / "submissions" / "negamax.py", ROOT / "submissions" / "illegal.py"],
                      Plan(PLAN.positions[:3], None, "three boards"), Settings(jobs=2), out=tmp_path / "run")  # fmt: skip
    assert {r.name: r.total for r in run.results} == {"negamax": 3, "illegal": 0}
    assert run.files == ["grades.csv", "results.json", "junit.xml", "report.html"]
    assert all((tmp_path / "run" / f).exists() for f in run.files)
    again = grade_class(resume=tmp_path / "run")  # nothing left to run
    assert [r.symbols for r in again.results] == [r.symbols for r in run.results]
    tour = run_tournament(["builtin:greedy", "builtin:random_mover"], rounds=1, seed=3, out=tmp_path / "t")
    assert len(tour.games) == 2 and sum(s.points for s in tour.standings) == 2


def test_a_plans_scoring_and_limits_hold_alike_from_the_library_and_the_cli(tmp_path, monkeypatch):
    """A plan file that sets winner-takes-empties and 1.5 s a test: the library with plain
    Settings() runs it as the command does (options, then the plan, then config.yaml)."""

    from click.testing import CliRunner

    from grader.cli import main
    from grader.grading.plans import load_any_plan

    monkeypatch.chdir(tmp_path)
    (tmp_path / "b.txt").write_text(f"{HANDOUT_BOARD} x\n")
    made = CliRunner().invoke(main, ["plan", "new", "--boards", "b.txt", "--scoring", "winner-takes-empties",
                                     "--time-limit", "1.5", "--out", "p.plan"])  # fmt: skip
    assert made.exit_code == 0, made.output
    cli = CliRunner().invoke(main, ["grade", str(NEGAMAX), "--plan", "p.plan", "--out", "cli", "--jobs", "2"])
    assert cli.exit_code == 0, cli.output
    grade(NEGAMAX, load_any_plan("p.plan"), Settings(jobs=2), out="lib")
    ran = {w: json.loads((tmp_path / w / "run.json").read_text())["settings"] for w in ("cli", "lib")}
    assert ran["lib"]["scoring"] == ran["cli"]["scoring"] == "winner-takes-empties"
    assert ran["lib"]["limits"]["wall_seconds"] == ran["cli"]["limits"]["wall_seconds"] == 1.5


def test_check_takes_a_plans_limits_as_the_command_does(tmp_path, monkeypatch):
    """The presubmission check with a public plan of 1.5 s a test: the library's check()
    and 'grader check --plan' both speak of 1.5 s (the library used to say 10)."""
    from click.testing import CliRunner

    from grader.cli import main
    from grader.grading.check import check
    from grader.grading.plans import load_any_plan

    monkeypatch.chdir(tmp_path)
    (tmp_path / "b.txt").write_text(f"{HANDOUT_BOARD} x\n")
    made = CliRunner().invoke(main, ["plan", "new", "--boards", "b.txt", "--public", "1", "--time-limit", "1.5",
                                     "--out", "p.plan"])  # fmt: skip
    assert made.exit_code == 0, made.output
    assert CliRunner().invoke(main, ["plan", "public", "p.plan", "--out", "p.public.plan"]).exit_code == 0
    report = check(NEGAMAX, "othello", load_any_plan("p.public.plan"))
    assert {c.limit for c in report.checked} == {1.5}
    cli = CliRunner().invoke(main, ["check", str(NEGAMAX), "--plan", "p.public.plan"])
    assert cli.exit_code == 0 and "of 1.5 s" in cli.output, cli.output


def test_public_names():
    for name in ("grade", "grade_class", "run_tournament", "solve", "standard_plan", "load_plan", "write_exports",
                 "Settings", "ScriptResult", "TestResult", "ClassRun", "TournamentResult", "Position", "ExactSolver", "prove", "get_game"):  # fmt: skip
        assert name in grader.__all__ and hasattr(grader, name)
    assert grader.get_game("othello").parse(HANDOUT_BOARD, "x").empties == 4
    assert Path(grader.__file__).parent.joinpath("share", "fixtures", "standard.txt").is_file()


def test_a_tournament_from_python_is_set_up_as_the_command_sets_it_up(tmp_path):
    """TournamentSettings.resolve: config.yaml's tournament section and the game's rule, as the
    command uses them; an SPRT from Python gets the same default error rates (0.05)."""
    from grader.config import Config, load_config
    from grader.games import get_game
    from grader.tournaments.formats import SprtSettings

    (tmp_path / "c.yaml").write_text("tournament:\n  move_seconds: 2.5\n  on_illegal: random\n")
    config = load_config(str(tmp_path / "c.yaml"))
    settings = TournamentSettings.resolve(config, get_game("othello"), jobs=1)
    assert (settings.limits.wall_seconds, settings.on_illegal, settings.rule) == (2.5, "random", "winner-takes-empties")
    assert TournamentSettings.resolve(config, get_game("tictactoe")).rule == get_game("tictactoe").tournament_scoring
    assert (
        TournamentSettings.resolve(config, get_game("othello"), time_limit=1.0, scoring="plain").limits.wall_seconds
        == 1.0
    )
    sprt = SprtSettings(0, 10, 100)
    assert (sprt.alpha, sprt.beta) == (0.05, 0.05)
    assert TournamentSettings.resolve(Config(), get_game("othello"), on_illegal="random").on_illegal == "random"


def test_a_tournament_without_settings_plays_as_the_command_without_options(tmp_path, monkeypatch):
    """run_tournament() with no settings takes the command's defaults (5 s a move), not the
    shared RunSettings' 10 s for a test."""
    from click.testing import CliRunner

    from grader.cli import main
    from grader.games import get_game
    from grader.seeding import rng

    monkeypatch.chdir(tmp_path)
    othello = get_game("othello")  # an opening of 50 moves: short games, the settings are what is compared
    opening = "".join(othello.square_name(m) for m in othello.random_opening(rng("test", 1), 50) or [])
    engines = ["builtin:greedy", "builtin:random_mover"]
    (tmp_path / "o.txt").write_text(opening + "\n")
    cli = CliRunner().invoke(main, ["tournament", *engines, "--openings", "o.txt", "--out", "cli"])
    assert cli.exit_code == 0, cli.output
    run_tournament(engines, openings=[opening], out="lib")
    ran = {w: json.loads((tmp_path / w / "tournament.json").read_text())["settings"] for w in ("cli", "lib")}
    assert ran["lib"] == ran["cli"] and ran["lib"]["limits"]["wall_seconds"] == 5.0


def test_grading_and_tournaments_share_one_run_settings_object():
    """Both kinds of work extend RunSettings with their own fields only, with the same
    defaults; a tournament.json written when the run's settings were nested still reads."""
    from dataclasses import fields

    from grader import RunSettings

    shared = {f.name for f in fields(RunSettings)}
    grading = {f.name for f in fields(Settings)} - shared
    tournament = {f.name for f in fields(TournamentSettings)} - shared
    assert grading == {"scoring", "stop_on_error", "max_solve_seconds"}
    assert tournament == {"scoring", "on_illegal", "adjudicate", "game", "tc", "time_margin", "restart", "clock"}
    assert {f: getattr(Settings(), f) for f in shared} == {f: getattr(TournamentSettings(), f) for f in shared}
    assert TournamentSettings.from_json(TournamentSettings(jobs=3, adjudicate=8).to_json()) == TournamentSettings(
        jobs=3, adjudicate=8, scoring="winner-takes-empties"
    )
    old = {"game": "othello", "scoring": "plain", "on_illegal": "random", "adjudicate": None,
           "run": dict(Settings(jobs=3).to_json(), scoring=None)}  # fmt: skip
    assert TournamentSettings.from_json(old, jobs=1) == TournamentSettings(jobs=1, scoring="plain", on_illegal="random")


def test_a_regress_run_is_set_up_alike_from_the_library_and_the_cli(tmp_path, monkeypatch):
    """RegressSettings.resolve: without --unknown-credit and --margin the command runs with the
    library's defaults and config.yaml's limits; given, both take the same value."""
    import dataclasses
    import json
    import shlex

    from click.testing import CliRunner

    from grader.cli import main
    from grader.config import load_config
    from grader.engines.programs import PYTHON, ProtocolEngine
    from grader.games import get_game
    from grader.regression.format import write_regress
    from grader.regression.plans import make_regress
    from grader.regression.regress import run_regress
    from grader.regression.results import RegressSettings

    monkeypatch.chdir(tmp_path)
    (tmp_path / "config.yaml").write_text("limits:\n  wall_seconds: 3\n")
    gomoku = get_game("gomoku")
    (tmp_path / "t.gtp").write_text(write_regress(make_regress(gomoku, gomoku.random_positions(4, range(6, 7), 2), 2)))
    player = ROOT / "submissions" / "gomoku" / "random_player.py"  # answers every 'solve' with 'unknown'
    engine = ProtocolEngine.from_command(shlex.join([PYTHON, str(player)]), "gtp")
    config = load_config(None)
    assert RegressSettings.resolve(config) == RegressSettings(**run_layer(config))
    shared = {f.name for f in dataclasses.fields(RunSettings)}
    assert {f.name for f in dataclasses.fields(RegressSettings)} - shared == {
        "unknown_credit",
        "margin",
        "solve_seconds",
        "per_test",
        "unverified_credit",
        "count",
        "max_timelimit",
    }
    assert {f: getattr(RegressSettings(), f) for f in shared} == {f: getattr(Settings(), f) for f in shared}
    assert RegressSettings.resolve(config).limits.wall_seconds == 3
    for options, credit in (([], None), (["--unknown-credit", "0.5", "--margin", "1"], 0.5)):
        cli = CliRunner().invoke(main, ["regress", str(player), "t.gtp", "--json", "r.json", *options])
        assert cli.exit_code == 0, cli.output
        ran = json.loads((tmp_path / "r.json").read_text())[0]
        lib = run_regress(engine, "t.gtp", gomoku, RegressSettings.resolve(config, credit, 1.0 if credit else None))
        assert [t["symbol"] for t in ran["tests"]] == [t.symbol for t in lib.tests] == ["u", "u"]
        assert [t["credit"] for t in ran["tests"]] == [t.credit for t in lib.tests] == [credit or 0.0] * 2
        assert ran["total"] == lib.total


@pytest.mark.slow  # two tournaments of whole games, a process per move
def test_random_openings_are_alike_from_the_library_and_the_cli(tmp_path, monkeypatch):
    """Without --random-openings the command leaves the openings' length to run_tournament."""
    import json

    from click.testing import CliRunner

    from grader.cli import main

    monkeypatch.chdir(tmp_path)
    engines = ["builtin:greedy", "builtin:random_mover"]
    cli = CliRunner().invoke(main, ["tournament", *engines, "--seed", "3", "--out", "cli", "--jobs", "2"])
    assert cli.exit_code == 0, cli.output
    run_tournament(engines, seed=3, out=tmp_path / "lib", jobs=2)
    openings = {
        w: [json.loads(line)["opening"] for line in (tmp_path / w / "games.jsonl").read_text().splitlines()]
        for w in ("cli", "lib")
    }
    assert openings["cli"] == openings["lib"] and all(len(o) == 2 * 4 for o in openings["lib"])


def test_a_new_plan_is_the_same_from_the_library_and_the_cli(tmp_path, monkeypatch):
    """new_plan: the public tests (the shipped boards and K more) and the seed (--seed, else
    config.yaml's, else a secret one) as 'grader plan new' chooses them, warning alike."""
    from click.testing import CliRunner

    from grader.cli import main
    from grader.config import Config, load_config
    from grader.grading.plans import new_plan, read_plan_file

    monkeypatch.chdir(tmp_path)
    (tmp_path / "config.yaml").write_text("seed: 5\n")
    (tmp_path / "b.txt").write_text((ROOT / "fixtures" / "standard.txt").read_text())
    config = load_config(None)
    for options, kwargs in (
        (["--public", "4"], {"public": 4}),
        (["--seed", "8", "--empties", "11-12", "--public", "3", "--time-limit", "2"],
         {"seed": 8, "empties": "11-12", "public": 3, "time_limit": 2.0}),
        (["--boards", "b.txt", "--public", "2", "--scoring", "winner-takes-empties"],
         {"boards": "b.txt", "public": 2, "scoring": "winner-takes-empties"}),
    ):  # fmt: skip
        cli = CliRunner().invoke(main, ["plan", "new", *options, "--out", "cli.plan"])
        assert cli.exit_code == 0, cli.output
        made, written = new_plan(config, "othello", **kwargs), read_plan_file("cli.plan")
        for field in ("positions", "seed", "public", "scoring", "limits", "empties"):
            assert getattr(made.plan, field) == getattr(written, field), field
        assert (made.warning is not None) == ("Warning: " in cli.output)
        assert made.warning is None or f"Warning: {made.warning}" in cli.output
    assert new_plan(config).plan.seed == 5 and len(new_plan(config, public=4).shipped) == 10
    secret = new_plan(Config(), public=4)
    assert secret.plan.seed >= 2**40 and secret.warning is None


def test_a_regression_plan_is_the_same_from_the_library_and_the_cli(tmp_path, monkeypatch):
    """regress_plan: the game (config's only if a file can set up its positions), the seed
    (the plan rule: --seed, else config.yaml's, else a secret one), the defaults, the public tests."""
    from click.testing import CliRunner

    from grader.cli import main
    from grader.config import Config, load_config
    from grader.regression.plans import regress_plan

    monkeypatch.chdir(tmp_path)
    (tmp_path / "config.yaml").write_text("seed: 5\ngame: othello\n")
    config = load_config(None)
    cli = CliRunner().invoke(main, ["plan", "regress", "--empties", "6-7", "--public", "2", "--out", "cli.gtp"])
    assert cli.exit_code == 0, cli.output
    plan = regress_plan(config, empties="6-7", public=2)
    assert (plan.game.name, plan.seed, plan.size, plan.timelimit, len(plan.positions)) == ("gomoku", 5, 7, 5, 4)
    assert (tmp_path / "cli.gtp").read_text() == plan.text()
    assert (tmp_path / "cli.public.gtp").read_text() == plan.text(public=True)
    assert f"Warning: {plan.warning}" in cli.output and "seed 5" in plan.warning
    assert regress_plan(Config(), empties="6-7").seed >= 2**40 and regress_plan(Config(), empties="6-7").warning is None


def test_the_sides_to_prove_come_from_the_game(tmp_path, monkeypatch):
    """prove --as takes the game's sides (Game.sides), as prove() does: --as both proves the
    sides prove(sides=None) proves, and a side of another game is refused."""
    import json

    from click.testing import CliRunner

    from grader import prove
    from grader.cli import main
    from grader.games import get_game

    ttt, script = get_game("tictactoe"), ROOT / "submissions" / "tictactoe" / "minimax.py"
    start = ("....o.xxo", "x")  # 5 empty squares, a draw: a short proof
    cli = CliRunner().invoke(main, ["prove", str(script), "--game", "tictactoe", "--from", *start, "--no-repeat",
                                    "--jobs", "2", "--json", str(tmp_path / "p.json")])  # fmt: skip
    assert cli.exit_code == 0, cli.output
    lib = prove(script, ttt, start=ttt.parse(*start), determinism=False, settings=Settings(jobs=2))
    assert [s["side"] for s in json.loads((tmp_path / "p.json").read_text())["sides"]] == [s.side for s in lib.sides]
    assert [s.side for s in lib.sides] == list(ttt.sides)
    monkeypatch.setattr(type(ttt), "sides", ("a", "b"))
    refused = CliRunner().invoke(main, ["prove", str(script), "--game", "tictactoe", "--as", "x"])
    assert refused.exit_code == 2 and "Invalid value for '--as': 'x' is not one of 'a', 'b', 'both'." in refused.output


def test_the_speed_plan_is_grading_s_alike_from_the_library_and_the_cli(tmp_path, monkeypatch):
    """The speed plan's boards a level (SPEED_PER_LEVEL) are grading's: the named plan 'speed'
    of Othello's ladder, --empties and speed_plan() draw the same boards."""
    from click.testing import CliRunner

    from grader.cli import main
    from grader.games import get_game
    from grader.grading.plans import SPEED_PER_LEVEL, read_plan_file, speed_plan, standard_plan

    monkeypatch.chdir(tmp_path)
    for options in (["--plan", "speed"], ["--empties", "11-16"]):
        cli = CliRunner().invoke(main, ["plan", "new", "--seed", "9", *options, "--out", "s.plan"])
        assert cli.exit_code == 0, cli.output
        assert read_plan_file("s.plan").positions == speed_plan((11, 16), 9).positions
    assert (
        standard_plan(9, "othello", "speed").positions == speed_plan(get_game("othello").ladders["speed"], 9).positions
    )
    assert len(speed_plan((11, 16), 9).positions) == 6 * SPEED_PER_LEVEL
    assert "SPEED_PER_LEVEL" not in (ROOT / "grader" / "games" / "othello.py").read_text()


def test_solve_refuses_and_chooses_its_solver_alike_from_the_library_and_the_cli(monkeypatch, tmp_path):
    """solve(): the --max-seconds refusal (one line, before any search) and the backend, as
    'grader solve' applies them."""
    import json
    import random

    from click.testing import CliRunner

    from grader.cli import main
    from grader.errors import GraderError
    from grader.games.othello import random_position

    monkeypatch.chdir(tmp_path)  # no config.yaml
    deep = random_position(random.Random(4), 40)
    cli = CliRunner().invoke(main, ["solve", deep.board_string(), deep.token, "--max-seconds", "5"])
    with pytest.raises(GraderError) as refused:
        solve(deep.board_string(), deep.token, max_seconds=5)
    assert cli.exit_code == 1 and cli.output.strip() == f"Error: {refused.value}"
    assert "over --max-seconds 5" in str(refused.value)
    for backend in grader.get_game("othello").backends():
        cli = CliRunner().invoke(main, ["solve", HANDOUT_BOARD, "x", "--all", "--json", "--backend", backend])
        assert cli.exit_code == 0, cli.output
        lib = solve(HANDOUT_BOARD, "x", all_values=True, backend=backend).to_json()
        assert {**json.loads(cli.output), "seconds": 0} == {**lib, "seconds": 0} and lib["backend"] == backend


def test_config_yaml_sets_regress_defaults_that_options_override(tmp_path):
    from grader.config import load_config
    from grader.errors import GraderError
    from grader.regression.results import RegressSettings

    (tmp_path / "c.yaml").write_text("regress:\n  unknown_credit: 0.5\n  per_test: true\n")
    config = load_config(str(tmp_path / "c.yaml"))
    got = RegressSettings.resolve(config)
    assert (got.unknown_credit, got.margin, got.per_test) == (0.5, 0.5, True)
    assert RegressSettings.resolve(config, unknown_credit=0.0, per_test=False).unknown_credit == 0.0
    (tmp_path / "bad.yaml").write_text("regress:\n  unknown_credit: 2\n")
    with pytest.raises(GraderError, match="regress.unknown_credit"):
        load_config(str(tmp_path / "bad.yaml"))
