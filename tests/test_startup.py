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
