"""Start-up: ``grader --help`` and ``--version`` load no command's module, and ``import
grader`` loads its names when first used (bench/startup.py prints the times)."""

import subprocess
import sys

import pytest

import grader

# What a quick answer must not load: the commands' modules, the library below them, yaml, tabulate.
HEAVY = ("grader.cli.grading", "grader.cli.options", "grader.config", "grader.games", "grader.engines.runner",
         "grader.grading", "grader.tournaments", "yaml", "tabulate")  # fmt: skip


def loaded_by(code: str) -> set[str]:
    """The modules a fresh Python has loaded after running ``code``."""
    done = subprocess.run([sys.executable, "-c", f"{code}\nimport sys\nprint(' '.join(sys.modules))"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    return set(done.stdout.split())


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["-h"]])
def test_help_and_version_load_no_command(argv):
    code = (f"import sys\nsys.argv = ['grader', *{argv!r}]\nfrom grader.__main__ import main\n"
            "try:\n    main()\nexcept SystemExit:\n    pass")  # fmt: skip
    loaded = loaded_by(code)
    assert "grader.cli" in loaded
    assert not {m for m in loaded if m.startswith(HEAVY)}


def test_the_library_loads_each_name_when_first_used():
    assert not {m for m in loaded_by("import grader") if m.startswith(HEAVY)}
    assert "grader.grading.run" in loaded_by("from grader import grade")
    for name in grader.__all__:  # every name the library offers is there
        assert getattr(grader, name) is not None, name
    proving = "import grader.cli.solving\nimport grader\nassert callable(grader.prove), grader.prove"
    assert "grader.prove" in loaded_by(proving)  # the module grader.prove loaded first hides no name
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        grader.nothing


def test_the_commands_are_listed_and_run_as_before():
    from click.testing import CliRunner

    from grader.cli import COMMANDS, main

    listed = CliRunner().invoke(main, ["--help"])
    assert listed.exit_code == 0
    for name, (_, _, short_help) in COMMANDS.items():
        assert name in listed.output and short_help.split()[0] in listed.output
    assert CliRunner().invoke(main, ["solve", "--help"]).output.startswith("Usage: main solve [OPTIONS]")
    assert "No such command 'nothing'" in CliRunner().invoke(main, ["nothing"]).output


# What grader check on an Othello script must not have loaded when its first script starts:
# the other modes, the report's tables, the other games, the protocols, the installed packages'
# entry points (each is imported when a command needs it; bench/startup.py times the start).
NOT_BEFORE_CHECK_RUNS = ("grader.regression", "grader.tournaments", "grader.grading.gradescope", "grader.grading.report",
                         "grader.grading.rejudge", "grader.grading.exports", "grader.engines.protocol",
                         "grader.engines.registry", "grader.games.gomoku", "grader.games.tictactoe", "tabulate",
                         "importlib.metadata")  # fmt: skip


def test_check_loads_only_what_it_runs_before_its_script_starts(tmp_path):
    (tmp_path / "probe.py").write_text("print('score 1 51')\n")
    seen = tmp_path / "modules"
    # The moment the first script would start, the modules loaded are written down and the run ends.
    code = ("import os, sys\nimport grader.engines.runner as runner\n"
            "def start(*args, **kwargs):\n"
            f"    open({str(seen)!r}, 'w').write(' '.join(sys.modules))\n    os._exit(0)\n"
            "runner.start = start\nsys.argv = ['grader', 'check', 'probe.py']\n"
            "from grader.__main__ import main\nmain()\n")  # fmt: skip
    subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, check=False, timeout=120)
    loaded = set(seen.read_text().split())
    assert "grader.grading.check" in loaded and "grader.games.othello" in loaded
    assert not {m for m in loaded if m.startswith(NOT_BEFORE_CHECK_RUNS)}


def test_games_and_protocols_are_imported_when_asked_for_by_name():
    listing = (
        "from grader.games import available, get_game\nassert {'othello', 'tictactoe', 'gomoku'} <= set(available())"
    )
    assert not {m for m in loaded_by(listing) if m.startswith(("grader.games.tictactoe", "grader.games.gomoku"))}
    assert "grader.games.gomoku" in loaded_by(f"{listing}\nget_game('gomoku')")
    config = loaded_by("import grader.config\ngrader.config.Config()")
    assert not {m for m in config if m.startswith(("grader.engines.protocol", "grader.engines.registry"))}
    assert "grader.engines.nboard" in loaded_by("from grader.engines import get_protocol\nget_protocol('nboard')")


def test_check_without_a_plan_runs_the_standard_plans_easiest_boards():
    from grader.games import get_game
    from grader.grading.check import COUNT, easy_positions
    from grader.grading.plans import standard_plan

    for name in ("othello", "tictactoe"):
        game = get_game(name)
        plan = standard_plan(0, game)  # one per count of empties, the fewest first, from the whole plan
        chosen: list = []
        for pos in sorted(plan.positions, key=lambda p: p.empties):
            if len(chosen) < COUNT and all(c.empties != pos.empties for c in chosen):
                chosen.append(pos)
        for pos in sorted(plan.positions, key=lambda p: p.empties):
            if len(chosen) < COUNT and pos not in chosen:
                chosen.append(pos)
        assert list(easy_positions(game, None).positions) == chosen, name
