"""Every failure says why (issue 35): each test makes a user's mistake for real, with real
engines and scripts made in its tmp_path, and checks the message, the refusal or the fix."""

import json
import shutil
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.cli import main

from conftest import ROOT

ENGINE = Path(__file__).parent / "scripts" / "engine.py"
NBOARD_ENGINE = ROOT / "grader" / "share" / "nboard" / "engine.py"
NEAR_END = "f5f6e6f4g6d7c3c5d3g4c6c4e8g7f3c7h4b2g5h3"  # a legal opening of 20 moves: short games


def tournament(tmp_path: Path, *args: str):
    return CliRunner().invoke(main, ["tournament", *args, "--out", str(tmp_path / "t"), "--jobs", "1"])


def game_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.strip().startswith(("1/2", "2/2"))]


# --- tournaments --------------------------------------------------------------------------


def test_timemargin_without_a_clock_is_refused(tmp_path):
    shutil.copy(ENGINE, tmp_path / "first.py")
    result = tournament(tmp_path, str(tmp_path / "first.py"), "builtin:greedy", "--timemargin", "50")
    assert result.exit_code == 2 and not (tmp_path / "t").exists(), result.output
    assert result.output.splitlines()[-1] == (
        "Error: --timemargin is how far an engine may overstep its clock: give --tc too"
    )


def test_a_forfeit_by_an_engine_that_is_not_executable_says_why_and_the_fix(tmp_path):
    engine = tmp_path / "nb.py"
    shutil.copy(NBOARD_ENGINE, engine)
    engine.chmod(stat.S_IRUSR | stat.S_IWUSR)  # exit 126, 'Permission denied'
    result = tournament(tmp_path, f"nboard:{engine}", "builtin:nboard:greedy")
    assert result.exit_code == 0, result.output
    lines = game_lines(result.output)
    assert len(lines) == 2 and all(
        "forfeit (nb forfeits: the engine crashed: it exited with code 126 (its program could not be executed" in ln
        for ln in lines
    ), result.output
    fix = f"nb forfeited: '{engine}' is not executable: make it executable (chmod +x '{engine}')"
    assert fix in result.output
    page = (tmp_path / "t" / "report.html").read_text()
    assert "it exited with code 126" in page and f"chmod +x &#x27;{engine}&#x27;" in page


def test_a_lab_script_given_as_an_nboard_engine_is_told_to_drop_the_prefix(tmp_path):
    shutil.copy(ROOT / "submissions" / "negamax.py", tmp_path / "lab.py")
    result = tournament(tmp_path, f"nboard:python3 {tmp_path / 'lab.py'}", "builtin:nboard:greedy")
    assert result.exit_code == 0, result.output
    said = "(lab forfeits: the engine crashed: it exited with code 1; the last line it wrote to stderr: "
    assert all(said in ln for ln in game_lines(result.output)), result.output
    fix = ("lab forfeited: it plays as a script ('SCRIPT BOARD TOKEN', a run per move), not as an NBoard engine: "
           "give it without 'nboard:'")  # fmt: skip
    assert fix in result.output
    assert "give it without &#x27;nboard:&#x27;" in (tmp_path / "t" / "report.html").read_text()


@pytest.mark.slow
def test_an_othello_script_in_a_gomoku_tournament_is_told_its_game(tmp_path):
    shutil.copy(ROOT / "submissions" / "negamax.py", tmp_path / "lab.py")
    result = tournament(
        tmp_path, str(tmp_path / "lab.py"), "builtin:gtp:random_player", "--game", "gomoku"
    )  # a real opponent, which plays Gomoku
    assert result.exit_code == 0, result.output
    assert "lab forfeits: " in result.output
    fix = "lab forfeited: it plays Othello, not Gomoku: is it written for Othello? Give it to a tournament with --game othello"
    assert fix in result.output


def test_an_illegal_move_and_a_broken_engine_say_why_but_suggest_no_setup_fix(tmp_path):
    """A real engine that plays legal moves in other positions is not a setup mistake: the
    cause is on the line, and no fix is made up."""
    shutil.copy(ENGINE, tmp_path / "illegal.py")
    result = tournament(tmp_path, str(tmp_path / "illegal.py"), "builtin:greedy")
    assert all("(illegal forfeits: 99 is not a legal move)" in ln for ln in game_lines(result.output)), result.output
    assert "forfeited:" not in result.output
    records = [json.loads(ln) for ln in (tmp_path / "t" / "games.jsonl").read_text().splitlines()]
    assert all("fix" not in e for r in records for e in r["events"])


def test_a_flag_fall_says_what_the_engine_had_and_used(tmp_path):
    (tmp_path / "openings.txt").write_text(NEAR_END + "\n")
    shutil.copy(Path(__file__).parent / "nboard" / "engine.py", tmp_path / "slow.py")
    result = tournament(tmp_path, f"nboard:python3 {tmp_path / 'slow.py'} silent", "builtin:nboard:greedy",
                        "--tc", "0.5+0", "--timemargin", "50", "--openings", str(tmp_path / "openings.txt"))  # fmt: skip
    assert result.exit_code == 0, result.output
    lines = game_lines(result.output)
    assert len(lines) == 2 and all(
        "lost on time: it had 0.50 s on its clock (and a margin of 50 ms) and was stopped after 0.5" in ln
        for ln in lines
    ), result.output


@pytest.mark.slow
def test_resume_after_an_engine_changed_says_its_games_were_set_aside(tmp_path):
    for name in ("first", "second"):
        shutil.copy(ENGINE, tmp_path / f"{name}.py")
    (tmp_path / "openings.txt").write_text(NEAR_END + "\n")
    first = tournament(tmp_path, str(tmp_path / "first.py"), str(tmp_path / "second.py"),
                       "--openings", str(tmp_path / "openings.txt"))  # fmt: skip
    assert first.exit_code == 0, first.output
    (tmp_path / "second.py").write_text((tmp_path / "second.py").read_text() + "\n# changed\n")
    resumed = CliRunner().invoke(main, ["tournament", "--resume", str(tmp_path / "t")])
    assert resumed.exit_code == 0, resumed.output
    assert (
        "Warning: 2 recorded games of engine 'second' set aside because the engine changed since they were played "
        f"(its command, depth or files): they stay in {tmp_path / 't' / 'games.jsonl'}, not counted, and are "
        "played again"
    ) in resumed.output
    again = CliRunner().invoke(main, ["tournament", "--resume", str(tmp_path / "t")])
    assert "set aside" not in again.output and "(2 games already played)" in again.output


@pytest.mark.slow  # end to end, tens of seconds: python -m pytest -m slow
def test_report_html_spells_an_elo_without_enough_games_one_way(tmp_path):
    """Two copies of one engine split a pair: Elo 0 (it was '-0'), and no interval from one
    pair ('n/a', as the table on screen says, where the page had an empty cell or '± n/a')."""
    for name in ("first", "first_b"):
        shutil.copy(ENGINE, tmp_path / f"{name}.py")
    (tmp_path / "openings.txt").write_text(NEAR_END + "\n")
    result = tournament(tmp_path, str(tmp_path / "first.py"), str(tmp_path / "first_b.py"),
                        "--openings", str(tmp_path / "openings.txt"))  # fmt: skip
    assert result.exit_code == 0, result.output
    page = (tmp_path / "t" / "report.html").read_text()
    rows = [
        row for row in page.split("<tr>") if row.startswith(("<td>1</td><td class=name>", "<td>2</td><td class=name>"))
    ]
    assert len(rows) == 2
    for row in rows:
        cells = row.replace("<td class=name>", "<td>").split("<td>")
        assert cells[10:12] == ["+0</td>", "n/a</td>"], row
    assert "-0<" not in page and "± n/a" not in page
    screen = [ln.split() for ln in result.output.splitlines() if ln.startswith(("first ", "first_b "))][:2]
    assert [s[7:9] for s in screen] == [["+0", "n/a"], ["+0", "n/a"]]


@pytest.mark.slow
def test_a_swiss_that_runs_out_of_pairings_says_so_once(tmp_path):
    """Two engines, two rounds: the second would be a rematch; the sentence names the round once."""
    for name in ("first", "first_b"):
        shutil.copy(ENGINE, tmp_path / f"{name}.py")
    (tmp_path / "openings.txt").write_text(NEAR_END + "\n")
    result = tournament(tmp_path, str(tmp_path / "first.py"), str(tmp_path / "first_b.py"), "--format", "swiss",
                        "--rounds", "2", "--openings", str(tmp_path / "openings.txt"))  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "\nStopped early: round 2 cannot be paired without a rematch: 2 engines allow at most 1 rounds\n" in (
        result.output
    )
    assert result.output.count("cannot be paired") == 1


# --- config.yaml ---------------------------------------------------------------------------


def test_a_null_wall_time_is_refused_in_the_files_words(tmp_path):
    (tmp_path / "config.yaml").write_text("limits:\n  wall_seconds: null\n  memory_mb: yes\n")
    shutil.copy(ENGINE, tmp_path / "first.py")
    result = CliRunner().invoke(main, ["grade", str(tmp_path / "first.py"), "--config", str(tmp_path / "config.yaml")])
    assert result.exit_code == 1
    assert result.output == (
        f"Error: {tmp_path / 'config.yaml'}: 'limits.wall_seconds' must be a number; got null, but it cannot be "
        "turned off\n"
    )
    (tmp_path / "config.yaml").write_text("limits:\n  memory_mb: yes\n")
    result = CliRunner().invoke(main, ["grade", str(tmp_path / "first.py"), "--config", str(tmp_path / "config.yaml")])
    assert result.output == (
        f"Error: {tmp_path / 'config.yaml'}: 'limits.memory_mb' must be a whole number or null; got true\n"
    )


# --- GTP engines and the clock -------------------------------------------------------------

GTP_ENGINE = """
import sys
MODE = sys.argv[1]  # told: knows time_left and plays only once told; deaf: knows no time_left
size, stones, told = 7, set(), False
for line in sys.stdin:
    words = line.split()
    if not words:
        continue
    cmd, args, answer = words[0], words[1:], ""
    if cmd == "known_command":
        answer = "true" if args[0] != "time_left" or MODE == "told" else "false"
    elif cmd == "boardsize":
        size = int(args[0])
    elif cmd == "clear_board":
        stones = set()
    elif cmd == "play":
        stones.add(args[1].upper())
    elif cmd == "time_left" and MODE == "told":
        told = int(args[1]) >= 0
    elif cmd == "genmove":
        if MODE == "told" and not told:
            sys.stdout.write("? genmove before time_left\\n\\n")
            sys.stdout.flush()
            continue
        told = False
        answer = next(c + str(r) for r in range(1, size + 1) for c in "ABCDEFGHJ"[:size] if c + str(r) not in stones)
        stones.add(answer)
    elif cmd not in ("protocol_version", "name", "version", "quit"):
        sys.stdout.write("? unknown command\\n\\n")
        sys.stdout.flush()
        continue
    sys.stdout.write("= " + answer + "\\n\\n")
    sys.stdout.flush()
"""


def test_gtp_engines_that_know_time_left_are_told_their_clock_and_others_are_not(tmp_path):
    (tmp_path / "gtp.py").write_text(GTP_ENGINE)
    for mode in ("told", "deaf"):
        engine = f"gtp:python3 {tmp_path / 'gtp.py'} {mode}"
        result = CliRunner().invoke(main, ["tournament", engine, "builtin:gtp:random_player", "--game", "gomoku",
                                           "--tc", "30+1", "--out", str(tmp_path / mode), "--jobs", "1"])  # fmt: skip
        assert result.exit_code == 0, result.output
        lines = game_lines(result.output)
        assert len(lines) == 2 and all(ln.endswith("  normal") for ln in lines), result.output


# --- grader check ----------------------------------------------------------------------------


def test_check_says_when_the_scores_are_wrong(tmp_path):
    shutil.copy(ROOT / "submissions" / "wrong_score.py", tmp_path / "mine.py")
    result = CliRunner().invoke(main, ["check", str(tmp_path / "mine.py")])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    tests = [ln for ln in lines if ln[:2] in ("1.", "2.", "3.", "4.", "5.")]
    assert len(tests) == 5 and all(": Q " in ln and " WRONG (exact " in ln for ln in tests), result.output
    assert lines[-1] == (
        "But not every answer is right: the score on 5 of 5 positions differ from the exact solver's (see above); "
        "check your search before you submit"
    )


@pytest.mark.slow  # end to end, tens of seconds: python -m pytest -m slow
def test_check_shows_a_crash_that_repeats_once(tmp_path):
    shutil.copy(ROOT / "submissions" / "crash.py", tmp_path / "mine.py")
    result = CliRunner().invoke(main, ["check", str(tmp_path / "mine.py")])
    assert result.exit_code == 1
    assert result.output.count("ZeroDivisionError: division by zero") == 1, result.output
    assert result.output.count("fix: it crashed: it exited with code 1: the same error as on position 1") == 4


# --- floods of output ------------------------------------------------------------------------

BOARD = "xxxxxxo.xxxxxo..xxooooooxoxxooooxoxxooooxxxoxoooxxo.oxooxooooooo x\n"


def test_a_flood_stopped_at_the_output_cap_says_so(tmp_path):
    """240 MB of score lines against a cap of 4 MiB: the cap ends the test, and its diagnosis says so."""
    (tmp_path / "flood.py").write_text(
        "import sys\nline = ('score 12 34 56 78 90 ' * 10 + '\\n').encode()\n"
        "for _ in range(240_000_000 // (len(line) * 500)):\n    sys.stdout.buffer.write(line * 500)\n"
    )
    (tmp_path / "config.yaml").write_text("limits:\n  output_bytes: 4194304\n")
    (tmp_path / "one.txt").write_text(BOARD)
    json_file = tmp_path / "r.json"
    result = CliRunner().invoke(main, ["grade", str(tmp_path / "flood.py"), "--boards", str(tmp_path / "one.txt"),
                                       "--config", str(tmp_path / "config.yaml"), "--json", str(json_file)])  # fmt: skip
    (test,) = json.loads(json_file.read_text())["scripts"][0]["tests"]
    assert "the script was stopped after printing more than 4.0 MB (limits.output_bytes)" in test["diagnosis"]
    assert "limits.output_bytes" in result.output


@pytest.mark.slow  # end to end, tens of seconds: python -m pytest -m slow
def test_a_flood_that_ends_in_a_timeout_says_it_flooded(tmp_path):
    (tmp_path / "flood.py").write_text(
        "import sys, time\nsys.stdout.write('1 ' * (1 << 20))\nsys.stdout.flush()\ntime.sleep(60)\n"
    )
    (tmp_path / "one.txt").write_text(BOARD)
    json_file = tmp_path / "r.json"
    CliRunner().invoke(main, ["grade", str(tmp_path / "flood.py"), "--boards", str(tmp_path / "one.txt"),
                              "--time-limit", "1", "--json", str(json_file)])  # fmt: skip
    (test,) = json.loads(json_file.read_text())["scripts"][0]["tests"]
    assert test["timed_out"]
    assert "timed out after 1." in test["diagnosis"]
    assert "and was killed, having printed 2.0 MB: a flood of output, which took its time" in test["diagnosis"]


# --- the bundled examples as a class ----------------------------------------------------------


@pytest.mark.slow  # end to end, tens of seconds: python -m pytest -m slow
def test_the_examples_folder_as_a_class_is_refused_with_a_class_that_works(tmp_path, monkeypatch):
    """'grade submissions/' took minutes and showed misleading rows; the refusal's own command
    grades a class of examples on the 10 fixed boards, with the results the README shows."""
    monkeypatch.chdir(ROOT)
    refused = CliRunner().invoke(main, ["grade", "submissions/"])
    assert refused.exit_code == 1 and len(refused.output.splitlines()) == 1, refused.output
    assert refused.output.startswith("Error: 'submissions' is the grader's folder of examples, not a class")
    command = refused.output.split("as a class on the 10 fixed boards: grader ")[1].split()
    assert command[0] == "grade" and command[1:5] == [f"submissions/{n}.py" for n in ("negamax", "wrong_line",
                                                                                        "wrong_score", "crash")]  # fmt: skip
    result = CliRunner().invoke(main, [*command, "--out", str(tmp_path / "run"), "--jobs", "2"])
    assert result.exit_code == 0, result.output
    rows = {ln.split()[0]: ln.split() for ln in result.output.splitlines() if ln.split()[:1] and "/10" in ln}
    assert rows["negamax"][1] == "10/10" and rows["wrong_score"][1] == "7.5/10" and rows["crash"][1] == "0/10"
    assert rows["wrong_line"][1] != "0/10"


def test_the_first_prove_example_of_the_help_is_small(monkeypatch):
    """The help's first 'grader prove' example asks 23 positions (the whole proof from the
    start asks 546, half a minute to two on a loaded machine): counted, not timed."""
    monkeypatch.chdir(ROOT)
    usage = CliRunner().invoke(main, ["prove", "--help"]).output
    example = next(ln for ln in usage.splitlines() if ln.strip().startswith("grader prove")).split("#")[0].split()
    assert example[-3:] == ["--from", "xox.o....", "x"]
    result = CliRunner().invoke(main, [*example[1:], "--jobs", "2"])
    assert result.exit_code == 0, result.output
    assert "as x: never loses, and every move is optimal (10 positions asked, deterministic)" in result.output
    assert "as o: never loses, and every move is optimal (13 positions asked, deterministic)" in result.output


# --- issue 51 ----------------------------------------------------------------------------------

SOLVER = ROOT / "submissions" / "gomoku" / "solver.py"
ONE_SOLVE = "boardsize 7\n10 solve\n#? [unknown]\n"


@pytest.mark.parametrize("args, said", [
    (["f.gtp", SOLVER], f"the arguments look swapped: PROGRAM comes first, then the regression FILEs: "
                        f"grader regress {SOLVER} f.gtp"),
    ([SOLVER, SOLVER], f"{SOLVER} is a Python file, not a regression file: PROGRAM comes first, then the "
                       "regression FILEs (grader regress PROGRAM FILE...)"),
    (["f.gtp", "f.gtp"], "f.gtp is a regression file, not a GTP program: PROGRAM comes first, then the "
                         "regression FILEs (grader regress PROGRAM FILE...)"),
])  # fmt: skip
def test_regress_with_its_arguments_swapped_says_so(tmp_path, monkeypatch, args, said):
    """The Python file had been read as a regression file: a parse error on its line 8."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "f.gtp").write_text(ONE_SOLVE)
    got = CliRunner().invoke(main, ["regress", *map(str, args)])
    assert (got.exit_code, got.output) == (1, f"Error: {said}\n")


@pytest.mark.parametrize("program, status, last", [
    ("import sys\nsys.exit(3)\n", 1,
     "No test got an answer the grader could read (the program ended: crashed: it exited with code 3)."),
    ("import sys\nfor line in sys.stdin:\n    print('? no', end='\\n\\n', flush=True)\n", 1,
     "No test got an answer the grader could read."),
    (SOLVER.read_text(), 0, "  1 tests counted (every test), 100.0/100 (+:1)"),
    ("import sys\nfor line in sys.stdin:\n    print('= draw', end='\\n\\n', flush=True)\n", 0,
     "  1 tests counted (every test), 0.0/100 (v:1)"),
], ids=["crashes", "answers-errors", "right", "wrong"])  # fmt: skip
def test_regress_exits_as_grade_does(tmp_path, monkeypatch, program, status, last):
    """One rule for both (docs/commands/index.md): 0 for a program judged, whatever its score;
    1 when it could not be judged at all (grade: no test printed a legal move). A program that
    crashed on every test had exited 0 at 0/100."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "f.gtp").write_text(ONE_SOLVE)
    (tmp_path / "config.yaml").write_text("regress:\n  solve_seconds: 0.5\n")  # 'draw' unsettled at once: 'v'
    (tmp_path / "p.py").write_text(program)
    got = CliRunner().invoke(main, ["regress", "p.py", "f.gtp"])
    assert got.exit_code == status, got.output
    assert got.output.splitlines()[-1] == last
    (tmp_path / "dead.py").write_text("import sys\nsys.exit(3)\n")
    (tmp_path / "b.txt").write_text("xxxxxxo.xxxxxo..xxooooooxoxxooooxoxxooooxxxoxoooxxo.oxooxooooooo x\n")
    graded = CliRunner().invoke(main, ["grade", "dead.py", "--boards", "b.txt"])
    assert graded.exit_code == 1 and graded.output.splitlines()[-1].startswith("No test printed a legal Othello move")
