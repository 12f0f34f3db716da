"""What a regression file or a GTP program gets wrong, said at once and on the line: a
malformed file is one line naming the file and line, a timelimit over the course's maximum
is capped with a warning, a setup command the program refused is named in the next test's
note, and a program that prints non-GTP text or leaves out the blank line after an answer
is told so by ``regress`` as by ``check``."""

import json
import time

import pytest
from click.testing import CliRunner

from grader.cli import main

from conftest import ROOT

SOLVER = ROOT / "submissions" / "gomoku" / "solver.py"

# A GTP program that answers every command, keeps the timelimit it is given ('get_timelimit'
# says it), and refuses what argv[1] names ('timelimit', say) with '? unknown command'.
KEEPER = """import sys
refuse = sys.argv[1:]
limit = 'none'
for line in sys.stdin:
    w = line.split()
    n = w.pop(0) if w and w[0].isdigit() else ''
    if not w:
        continue
    if w[0] in refuse:
        print(f'?{n} unknown command', end='\\n\\n', flush=True)
        continue
    if w[0] == 'timelimit':
        limit = w[1]
    answer = limit if w[0] == 'get_timelimit' else 'unknown' if w[0] == 'solve' else ''
    print(f'={n} {answer}'.rstrip(), end='\\n\\n', flush=True)
    if w[0] == 'quit':
        break
"""


@pytest.fixture
def run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)

    def invoke(*args):
        return CliRunner().invoke(main, [str(a) for a in args])

    return invoke


@pytest.mark.parametrize(
    "text, message",
    [
        ("boardsize 3\nclear_board\n10 solve\n#? [.*]\n", "f.gtp:1: 'boardsize 3': a Gomoku board is 5x5 to 19x19, not 3x3"),
        ("boardsize 20\n10 solve\n#? [.*]\n", "f.gtp:1: 'boardsize 20': a Gomoku board is 5x5 to 19x19, not 20x20"),
        ("boardsize seven\n10 solve\n#? [.*]\n", "f.gtp:1: 'boardsize seven': boardsize takes a whole number, like 'boardsize 7'"),
        ("timelimit abc\n10 solve\n#? [.*]\n",
         "f.gtp:1: 'timelimit abc': timelimit takes a whole number of seconds, like 'timelimit 5'"),
        ("timelimit 2.5\n10 solve\n#? [.*]\n",
         "f.gtp:1: 'timelimit 2.5': timelimit takes a whole number of seconds, like 'timelimit 5'"),
        ("10 solve\n20 solve\n#? [.*]\n",
         "f.gtp:1: test 10 has no expected answer: put '#? [REGEX]' on the line after it ('#? [.*]' takes any answer)"),
        ("10 solve\n#? [.*]\n# the last test, unanswered\n20 solve\n",
         "f.gtp:4: test 20 has no expected answer: put '#? [REGEX]' on the line after it ('#? [.*]' takes any answer)"),
        ("10 solve\n#? [.*]\nplay b C3\n10 solve\n#? [.*]\n",
         "f.gtp:4: test number 10 is used twice (line 1 too): give each test its own number"),
    ],
)  # fmt: skip
def test_a_malformed_regression_file_is_one_line_naming_file_and_line(run, tmp_path, text, message):
    (tmp_path / "f.gtp").write_text(text)
    started = time.monotonic()
    for args in (["regress", SOLVER, "f.gtp"], ["check", SOLVER, "--game", "gomoku", "--plan", "f.gtp"]):
        result = run(*args)
        assert result.exit_code == 1, result.output
        assert result.output.strip() == f"Error: {message}", args
    (tmp_path / "class" / "ann").mkdir(parents=True)
    (tmp_path / "class" / "ann" / "p.py").write_text(SOLVER.read_text())
    result = run("regress", "class", "f.gtp", "--out", "r")
    assert result.exit_code == 1 and result.output.strip() == f"Error: {message}"
    assert not (tmp_path / "r").exists()  # refused before the run folder is made
    assert time.monotonic() - started < 30  # at once: no program ran, no solver searched


def test_a_timelimit_over_the_maximum_is_capped_with_a_warning(run, tmp_path):
    (tmp_path / "p.py").write_text(KEEPER)
    (tmp_path / "f.gtp").write_text("boardsize 7\ntimelimit 100000\n10 get_timelimit\n#? [.*]\n")
    result = run("regress", "p.py", "f.gtp", "--json", "out.json")
    assert result.exit_code == 0, result.output
    assert ("Warning: f.gtp:2: 'timelimit 100000' is over the most a test may take (regress.max_timelimit in "
            "config.yaml): each test gets 60 s") in result.output  # fmt: skip
    (test,) = json.loads((tmp_path / "out.json").read_text())[0]["tests"]
    assert test["answer"] == "60"  # what the program was told
    (tmp_path / "config.yaml").write_text("regress:\n  max_timelimit: 7\n")
    result = run("regress", "p.py", "f.gtp", "--json", "out.json")
    assert "each test gets 7 s" in result.output
    assert json.loads((tmp_path / "out.json").read_text())[0]["tests"][0]["answer"] == "7"
    (tmp_path / "config.yaml").write_text("regress:\n  max_timelimit: 0\n")
    result = run("regress", "p.py", "f.gtp")
    assert result.exit_code == 1 and "'regress.max_timelimit' must be at least 1; got 0" in result.output


def test_the_solvers_budget_per_test_is_a_setting(run, tmp_path):
    """A position the solver cannot finish within regress.solve_seconds is judged by the
    file's regex, and the note names the setting."""
    (tmp_path / "p.py").write_text(KEEPER)
    (tmp_path / "config.yaml").write_text("regress:\n  solve_seconds: 0.2\n")
    (tmp_path / "f.gtp").write_text("boardsize 9\nclear_board\nplay b E5\n10 solve\n#? [b .*]\n")
    started = time.monotonic()
    result = run("regress", "p.py", "f.gtp", "--json", "out.json")
    assert result.exit_code == 0, result.output
    assert time.monotonic() - started < 20  # not the default 30 s
    (test,) = json.loads((tmp_path / "out.json").read_text())[0]["tests"]
    assert test["judged_by"] == "regex"
    assert test["note"] == ("unknown; the grader's solver could not settle this position within 0.2 s "
                            "(regress.solve_seconds in config.yaml)")  # fmt: skip


def test_a_refused_setup_command_is_named_in_the_next_tests_note(run, tmp_path):
    (tmp_path / "p.py").write_text(KEEPER)
    (tmp_path / "f.gtp").write_text("timelimit 5\nboardsize 7\n10 get_timelimit\n#? [.*]\n20 get_timelimit\n#? [.*]\n")
    for extra in ([], ["--per-test"]):
        result = run("regress", "python3 p.py timelimit", "f.gtp", "--json", "out.json", *extra)
        assert result.exit_code == 0, result.output
        first, second = json.loads((tmp_path / "out.json").read_text())[0]["tests"]
        assert first["note"].endswith(" (the program refused 'timelimit 5' before this test)"), extra
        assert "refused" not in second["note"], extra


# GTP programs that break the protocol: the answer without '=' (non-GTP text), or without
# the empty line that ends it.
NOT_GTP = "import sys\nfor line in sys.stdin:\n    print('ok', end='\\n\\n', flush=True)\n"
NO_BLANK = "import sys\nfor line in sys.stdin:\n    print('=', flush=True)\n"


@pytest.mark.slow  # end to end, tens of seconds: python -m pytest -m slow
@pytest.mark.parametrize(
    "program, problem",
    [
        (NOT_GTP, "no complete answer to '{command}' within 3.5 s: it printed 'ok'; a GTP answer starts with "
                  "'=' or '?'"),
        (NO_BLANK, "no complete answer to '{command}' within 3.5 s: its answer '=' was not ended by an empty line "
                   "(GTP ends every answer with one)"),
    ],
)  # fmt: skip
def test_regress_and_check_name_a_program_that_breaks_the_protocol(run, tmp_path, program, problem):
    (tmp_path / "p.py").write_text(program)
    (tmp_path / "config.yaml").write_text("limits:\n  wall_seconds: 3\nregress:\n  margin: 0.5\n")
    (tmp_path / "f.gtp").write_text("timelimit 5\nboardsize 7\n10 solve\n#? [.*]\n")
    result = run("regress", "p.py", "f.gtp")
    assert result.exit_code == 1, result.output  # no answer it could read: exit status 1 (docs/commands)
    assert "line 1 (timelimit 5): " + problem.format(command="timelimit 5") in result.output
    result = run("check", "p.py", "--game", "gomoku")
    assert problem.format(command="1 list_commands") in result.output
