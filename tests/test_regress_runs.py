"""A class on GTP regression files: run folders, resume, rejudge, exports, the command."""

import csv
import io
import json
import os
import shutil
import xml.etree.ElementTree as ET

import pytest
from click.testing import CliRunner

from grader.cli import main
from grader.errors import GraderWarning
from grader.games.gomoku import GOMOKU
from grader.regression.format import parse_regress, public_tests
from grader.regression.regress import run_regress
from grader.regression.runs import RegressFolder, regress_class, rejudge_regress
from grader.runs import folders
from grader.stop import Stop

from test_gomoku import EXAMPLES, course_file, program, settings

SYSTEM_PYTHON = "/usr/bin/python3"  # the 'uid' mechanism needs a Python every user can run

UNKNOWN = """import sys
for line in sys.stdin:
    w = line.split()
    n = w.pop(0) if w and w[0].isdigit() else ''
    print(f"={n} {'unknown' if w[:1] == ['solve'] else ''}".rstrip() + "\\n", flush=True)
"""


def make_class(tmp_path):
    """alice (the correct solver), bob ('unknown' to every solve), carol (two programs: none
    chosen), dave (crashes at once); two regression files of the course's positions."""
    cls = tmp_path / "class"
    for name, text in (("alice", (EXAMPLES / "solver.py").read_text()), ("bob", UNKNOWN)):
        (cls / name).mkdir(parents=True)
        (cls / name / "Gomoku.py").write_text(text)
    (cls / "carol").mkdir()
    (cls / "carol" / "a.py").write_text(UNKNOWN)
    (cls / "carol" / "b.py").write_text(UNKNOWN)
    (cls / "dave.py").write_text("import sys\nsys.exit('boom')\n")
    files = [course_file(tmp_path), tmp_path / "again.gtp"]
    files[1].write_text(files[0].read_text())
    return cls, files


def test_a_class_gets_what_each_student_gets_alone_and_its_exports_say_so(tmp_path):
    """Each student's totals are those of a run of its program alone; a folder with two
    programs and a crashing program say why in one line; the exports hold the same."""
    cls, files = make_class(tmp_path)
    seen: list[str] = []
    run = regress_class([cls], files, GOMOKU, settings(unknown_credit=0.5), out=tmp_path / "run",
                        on_student=lambda s: seen.append(s.name))  # fmt: skip
    got = {s.name: s for s in run.students}
    assert sorted(seen) == ["alice", "bob", "dave"] and sorted(got) == ["alice", "bob", "carol", "dave"]
    for name in ("alice", "bob"):
        alone = run_regress(program(cls / name / "Gomoku.py"), files[0], GOMOKU, settings(unknown_credit=0.5))
        assert [r.symbols for r in got[name].results] == [alone.symbols] * 2
        assert got[name].total == pytest.approx(alone.total)
    assert got["alice"].total == 100 and got["bob"].total == pytest.approx(100 * 0.5 * 2 / 3)
    assert "2 scripts" in got["carol"].note and got["carol"].total == 0
    assert got["dave"].total == 0 and "stderr ends: boom" in got["dave"].note
    assert run.interrupted is None and all(s.complete for s in run.students)

    rows = {r["name"]: r for r in csv.DictReader(io.StringIO((tmp_path / "run" / "grades.csv").read_text()))}
    assert {n: float(r["total"]) for n, r in rows.items()} == pytest.approx(
        {n: s.total for n, s in got.items()}, abs=0.01
    )
    symbols = {n: "".join(r.symbols for r in s.results) for n, s in got.items()}
    assert symbols["bob"] == "u-u-" * 2 and symbols["alice"].count("+") >= 6
    assert all(rows[n][sym] == str(symbols[n].count(sym)) for n in got for sym in "+Wu-t")
    assert rows["carol"]["complete"] == "yes" and rows["dave"]["t"] == "8"
    suites = ET.parse(tmp_path / "run" / "junit.xml").getroot()
    failures = {s.get("name"): int(s.get("failures")) for s in suites}
    assert (
        failures[f"alice: {files[0]}"] == 0 and failures[f"bob: {files[0]}"] == 3 and failures["carol: submission"] == 1
    )
    data = json.loads((tmp_path / "run" / "results.json").read_text())
    assert [s["name"] for s in data["students"]] == ["alice", "bob", "carol", "dave"]


def test_an_interrupted_class_resumes_to_the_uninterrupted_result(tmp_path):
    """Stopped after the first student (one program at a time), the run keeps what ended;
    resume runs only the rest and ends with the grades of an uninterrupted run. A program
    changed since reruns its files; a record changed by hand fails its seal and runs again."""
    cls, files = make_class(tmp_path)
    stop = Stop()
    first = regress_class([cls], files, GOMOKU, settings(unknown_credit=0.5, jobs=1), out=tmp_path / "run",
                          stop=stop, on_student=lambda s: stop.set("stopped by the test"))  # fmt: skip
    assert first.interrupted == "stopped by the test"
    done = [s for s in first.students if s.complete and s.results]
    assert len(done) == 1 and any(not s.complete for s in first.students)
    assert "incomplete" in (tmp_path / "run" / "grades.csv").read_text()

    counts: list[tuple[int, int]] = []
    resumed = regress_class(resume=tmp_path / "run", on_start=lambda f, todo, before: counts.append((todo, before)))
    assert counts == [(4, 2)] and resumed.interrupted is None
    totals = {s.name: round(s.total, 2) for s in resumed.students}
    assert totals == {"alice": 100.0, "bob": round(100 / 3, 2), "carol": 0.0, "dave": 0.0}

    (cls / "bob" / "Gomoku.py").write_text((EXAMPLES / "solver.py").read_text())  # bob fixes his program
    lines = (tmp_path / "run" / "results.jsonl").read_text().splitlines()
    forged = next(i for i, line in enumerate(lines) if '"student":"alice"' in line)
    lines[forged] = lines[forged].replace('"total":100.0', '"total":99.0')
    (tmp_path / "run" / "results.jsonl").write_text("\n".join(lines) + "\n")
    assert len(RegressFolder.open(tmp_path / "run").recorded()) == 5  # alice's forged line is left out
    counts.clear()
    with pytest.warns(GraderWarning, match=r"1 record\(s\) of .*results.jsonl fail their seal"):
        again = regress_class(resume=tmp_path / "run", on_start=lambda f, todo, before: counts.append((todo, before)))
    assert counts == [(3, 3)]  # bob's two files, alice's forged one
    assert {s.name: round(s.total, 2) for s in again.students}["bob"] == 100.0


def test_rejudge_applies_a_new_unknown_credit_without_running_a_program(tmp_path):
    cls, files = make_class(tmp_path)
    regress_class([cls], files[:1], GOMOKU, settings(unknown_credit=0.0), out=tmp_path / "run")
    (cls / "bob" / "Gomoku.py").write_text("raise SystemExit('not run again')\n")  # a rejudge runs nothing
    assert {s.name: s.total for s in RegressFolder.open(tmp_path / "run").results()}["bob"] == 0
    again = rejudge_regress(tmp_path / "run", unknown_credit=0.5)
    after = {s.name: s for s in again.run.students}
    assert [(c.student, c.before, c.after) for c in again.changes] == [("bob", 0, 33.33)]
    assert [(t.index, t.before, t.after) for t in again.changes[0].tests] == [(40, "u", "u"), (120, "u", "u")]
    assert after["bob"].total == pytest.approx(100 / 3) and after["alice"].total == 100
    assert [r.symbols for r in after["bob"].results] == ["u-u-"]
    assert RegressFolder.open(tmp_path / "run").settings().unknown_credit == 0.5
    assert "33.33" in (tmp_path / "run" / "grades.csv").read_text()


def test_the_command_runs_a_class_into_a_folder_resumes_and_rejudges_it(tmp_path):
    cls, files = make_class(tmp_path)
    runner = CliRunner()
    out = runner.invoke(main, ["regress", str(cls), str(files[0]), "--out", str(tmp_path / "run"),
                               "--json", str(tmp_path / "c.json"), "--jobs", "2"])  # fmt: skip
    assert out.exit_code == 0, out.output
    assert f"Run folder: {tmp_path / 'run'}" in out.output and "grades.csv, results.json, junit.xml" in out.output
    totals = {s["name"]: s["total"] for s in json.loads((tmp_path / "c.json").read_text())}
    assert totals == {"alice": 100.0, "bob": 0.0, "carol": 0.0, "dave": 0.0}
    out = runner.invoke(main, ["regress", "--resume", str(tmp_path / "run")])
    assert out.exit_code == 0 and "(3 files already recorded)" in out.output
    out = runner.invoke(main, ["rejudge", str(tmp_path / "run"), "--unknown-credit", "0.5"])
    assert out.exit_code == 0, out.output
    assert "bob: 0 -> 33.3" in out.output
    out = runner.invoke(main, ["report", str(tmp_path / "run")])
    assert out.exit_code == 0 and "33.3" in out.output
    for args, message in [
        (["regress", str(cls), str(files[0]), "--out", str(tmp_path / "run")], "already holds a regression run"),
        (["regress", "--resume", str(tmp_path / "run"), "--per-test"], "--resume continues a run"),
        (["regress", str(EXAMPLES / "solver.py"), str(files[0]), "--out", str(tmp_path / "x")], "are for a class"),
        (["regress", str(cls)], "give PROGRAM and at least one regression FILE"),
    ]:
        out = runner.invoke(main, args)
        assert out.exit_code != 0 and message in out.output, out.output


def test_a_plans_public_tests_keep_their_numbers_and_the_full_file_names_them(tmp_path):
    out = CliRunner().invoke(main, ["plan", "regress", "--empties", "5-6", "--per-level", "2", "--public", "2",
                                    "--seed", "3", "--out", str(tmp_path / "lab.gtp")])  # fmt: skip
    assert out.exit_code == 0, out.output
    full, public = (tmp_path / "lab.gtp").read_text(), (tmp_path / "lab.public.gtp").read_text()
    shown = public_tests(full)
    numbers = {c.number: c for c in parse_regress(full, "full") if c.number}
    public_numbers = {c.number: c for c in parse_regress(public, "public") if c.number}
    assert len(numbers) == 4 and shown == set(public_numbers) and len(shown) == 2
    assert all(public_numbers[n].expected == numbers[n].expected for n in shown)
    assert public_tests(public) == shown  # the public half marks every test of its own as public
    (tmp_path / "hand.gtp").write_text("10 solve\n#? [b]\n")
    assert public_tests((tmp_path / "hand.gtp").read_text()) is None  # a file by hand says nothing


def gradescope(tmp_path, program_text: str | None, full: str, *options: str) -> dict:
    sub = tmp_path / "submission"
    sub.mkdir()
    if program_text is not None:
        (sub / "Gomoku.py").write_text(program_text)
    (tmp_path / "c.yaml").write_text("regress:\n  unknown_credit: 0.5\n")
    out = CliRunner().invoke(main, ["gradescope", "--game", "gomoku", "--plan", full, "--submission", str(sub),
                                    "--results", str(tmp_path / "results.json"), "--config", str(tmp_path / "c.yaml"), *options])  # fmt: skip
    assert out.exit_code == 0, out.output
    return json.loads((tmp_path / "results.json").read_text())


def test_gradescope_shows_the_public_tests_and_only_the_verdicts_of_the_private_ones(tmp_path):
    """The course file, its test 120 marked public: test 40 (the private one) says only its
    verdict; the score is the run's total; a missing program gets 0 and the reason."""
    full = course_file(tmp_path)
    full.write_text("# grader: public tests 120\n" + full.read_text())
    data = gradescope(tmp_path, UNKNOWN, str(full))
    alone = run_regress(program(tmp_path / "submission" / "Gomoku.py"), full, GOMOKU, settings(unknown_credit=0.5))
    assert data["score"] == pytest.approx(alone.total, abs=0.01) == 100 / 3 and data["max_score"] == 100
    tests = {t["number"]: t for t in data["tests"]}
    assert set(tests) == {"40", "50", "120", "130"}
    private = tests["40"]
    assert private["visibility"] == "after_published" and private["output"] == "u (1/2)"
    assert "position" in tests["120"]["output"] and "the winner is w" in tests["120"]["output"]
    assert data["output"].startswith("Total 33.3/100") and "and 3 private tests: u 1, - 2" in data["output"]
    assert tests["130"]["max_score"] == 0  # expected to fail: does not count
    board = alone.tests[0].board.split()[0]
    assert board not in json.dumps(private) and board not in data["output"]
    missing = gradescope(tmp_path / "m", None, str(full)) if (tmp_path / "m").mkdir() is None else None
    assert missing["score"] == 0 and "no script" in missing["output"].lower()


# --- grader check of a GTP program ---------------------------------------------------------

ANSWERS = """import sys
for line in sys.stdin:
    w = line.split()
    n = w.pop(0) if w and w[0].isdigit() else ''
    if w[:1] == ['solve']:
        print(f'{ANSWER}\\n', flush=True)
    else:
        print(f'={n} list_commands solve play' if w[:1] == ['list_commands'] else f'={n}', end='\\n\\n', flush=True)
"""


@pytest.mark.parametrize(
    "answer, fix",  # the program's answer to 'solve'
    [
        ("={n} black", "a 'solve' answer starts with the winner, 'b', 'w' or 'draw'"),
        ("?{n} unknown command", "your program answered '? unknown command': it must know 'solve'"),
    ],
)
def test_check_names_what_keeps_a_gtp_answer_from_being_read(tmp_path, answer, fix):
    path = tmp_path / "Gomoku.py"
    path.write_text(ANSWERS.replace("{ANSWER}", answer))
    out = CliRunner().invoke(main, ["check", str(path), "--game", "gomoku"])
    assert out.exit_code == 1, out.output
    assert "on 3 easy positions of Gomoku and list_commands" in out.output
    assert f"fix: {fix}" in out.output and "None of these answers can be graded" in out.output
    out = CliRunner().invoke(main, ["check", str(EXAMPLES / "random_player.py"), "--game", "gomoku"])
    assert out.exit_code == 0 and "fix:" not in out.output, out.output  # 'unknown' and random moves: all readable
    assert "The answers can be read on every test checked." in out.output


@pytest.mark.slow
def test_check_runs_the_first_tests_of_a_public_file_and_refuses_the_full_one(tmp_path):
    CliRunner().invoke(main, ["plan", "regress", "--empties", "4-9", "--per-level", "1", "--public", "5",
                              "--seed", "5", "--out", str(tmp_path / "lab.gtp")])  # fmt: skip
    out = CliRunner().invoke(main, ["check", str(EXAMPLES / "solver.py"), "--game", "gomoku",
                                    "--plan", str(tmp_path / "lab.public.gtp")])  # fmt: skip
    assert out.exit_code == 0, out.output
    assert "on the first 5 tests of" in out.output and out.output.count("  + ") == 5
    out = CliRunner().invoke(main, ["check", str(EXAMPLES / "crash.py"), "--game", "gomoku"])
    assert out.exit_code == 1 and "fix: your program crashed" in out.output
    out = CliRunner().invoke(main, ["check", str(EXAMPLES / "slow.py"), "--game", "gomoku"])
    assert out.exit_code == 1 and "fix: no answer in time" in out.output
    out = CliRunner().invoke(main, ["check", str(EXAMPLES / "solver.py"), "--game", "gomoku",
                                    "--plan", str(tmp_path / "lab.gtp")])  # fmt: skip
    assert out.exit_code == 1 and "holds private tests: check with its public half" in out.output


def test_a_wrong_answer_shows_its_board_with_the_move_marked(tmp_path):
    """bad_move.py answers test 120 (white wins at B3 or G3, brute force: test_gomoku) with B1."""
    out = CliRunner().invoke(main, ["regress", str(EXAMPLES / "bad_move.py"), str(course_file(tmp_path))])
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("  W  120 solve"))
    assert "B1 gives a loss; one of B3, G3 achieves it" in lines[at]
    assert lines[at + 1].split() == list("ABCDEFG") and lines[at + 2].split() == [
        "1",
        "x",
        "?",
        ".",
        ".",
        ".",
        ".",
        ".",
    ]
    assert lines[at + 4].split() == ["3", ".", ".", "o", "o", "o", "o", "."]
    assert not any(line.startswith("      1 ") for line in lines[:at])  # right answers get no board


CHEAT = """import re, sys
def expected(number):
    try:
        text = open(FILE).read()
    except OSError:
        return None
    found = re.search(r"^" + number + r" solve\\n#\\? ?\\[([^|\\]]*)", text, re.M)
    return found and found.group(1)
for line in sys.stdin:
    w = line.split()
    n = w.pop(0) if w and w[0].isdigit() else ''
    text = (expected(n) or 'unknown') if w[:1] == ['solve'] else ''
    print(f'={n} {text}'.rstrip() + '\\n', flush=True)
"""


def test_a_program_cannot_read_the_regression_file_it_is_graded_on(tmp_path):
    """A student's program that opens the (private) regression file to copy its expected
    answers: in a class run it finds nothing (the file is outside what it may see), so it
    answers 'unknown'; run outside any isolation the same program would copy them ('+')."""
    cls, files = make_class(tmp_path)
    cheat = CHEAT.replace("FILE", repr(str(files[0])))
    (cls / "mallory").mkdir()
    (cls / "mallory" / "Gomoku.py").write_text(cheat)
    run = regress_class([cls / "mallory"], files[:1], GOMOKU, settings(), out=tmp_path / "run")
    assert [t.symbol for t in run.students[0].results[0].tests[:3:2]] == ["u", "u"]
    bare = run_regress(program(cls / "mallory" / "Gomoku.py"), files[0], GOMOKU, settings(isolation="none"))
    assert [t.symbol for t in bare.tests[:3:2]] == ["+", "+"]  # the attack works where nothing stops it


def test_a_regression_file_names_its_game_and_is_played_by_those_rules(tmp_path):
    """A file written for exact five says so; run without --game it is judged by those rules,
    whatever config.yaml says; files of different games are refused in one line."""
    from grader.errors import GraderError
    from grader.regression.format import file_game
    from grader.regression.plans import regress_game, regress_plan

    plan = regress_plan(None, "gomoku:overline=false", empties="5-5", per_level=1, seed=2)
    (tmp_path / "exact.gtp").write_text(plan.text())
    (tmp_path / "free.gtp").write_text(regress_plan(None, "gomoku", empties="5-5", per_level=1, seed=2).text())
    assert file_game((tmp_path / "exact.gtp").read_text()) == "gomoku:overline=false"
    assert file_game((tmp_path / "free.gtp").read_text()) == "gomoku"
    assert regress_game(None, None, [tmp_path / "exact.gtp"]).overline is False
    assert regress_game("gomoku", None, [tmp_path / "exact.gtp"]).overline is False  # the family: the file's rules
    assert regress_game("gomoku:overline=true", None, [tmp_path / "exact.gtp"]).overline is True  # in full: it wins
    with pytest.raises(GraderError, match="of gomoku:overline=false, not tictactoe"):
        regress_game("tictactoe", None, [tmp_path / "exact.gtp"])
    with pytest.raises(GraderError, match="of different games"):
        regress_game(None, None, [tmp_path / "exact.gtp", tmp_path / "free.gtp"])
    out = CliRunner().invoke(main, ["regress", str(EXAMPLES / "solver.py"), str(tmp_path / "exact.gtp"),
                                    str(tmp_path / "free.gtp")])  # fmt: skip
    assert out.exit_code == 1 and "of different games" in out.output and "Traceback" not in out.output


@pytest.mark.skipif(os.geteuid() != 0 or not os.path.exists(SYSTEM_PYTHON), reason="'uid' is for a grader run as root")
def test_a_class_runs_under_the_uid_mechanism(tmp_path):
    """As root without namespaces (a Gradescope container, say): each program runs as a slot's
    uid from a copy of its folder, and answers as it does anywhere."""
    cls, files = make_class(tmp_path)
    run = regress_class([cls], files[:1], GOMOKU,
                        settings(isolation="uid", python=SYSTEM_PYTHON, unknown_credit=0.5), out=tmp_path / "run")  # fmt: skip
    totals = {s.name: round(s.total, 2) for s in run.students}
    assert totals == {"alice": 100.0, "bob": round(100 / 3, 2), "carol": 0.0, "dave": 0.0}


def test_ctrl_c_in_a_library_call_ends_with_what_finished_and_its_exports(tmp_path):
    """A KeyboardInterrupt while a class runs (here from the first student's callback): the
    call returns, marked interrupted, with the exports of what finished; resume completes it."""
    cls, files = make_class(tmp_path)
    raised: list[str] = []

    def interrupt(student) -> None:
        if not raised:
            raised.append(student.name)
            raise KeyboardInterrupt

    run = regress_class([cls], files, GOMOKU, settings(jobs=1), out=tmp_path / "run", on_student=interrupt)
    assert run.interrupted == "interrupted (Ctrl-C)" and run.files and (tmp_path / "run" / "report.html").exists()
    assert any(not s.complete for s in run.students)
    assert all(s.complete for s in regress_class(resume=tmp_path / "run").students)


WEIRD = """import sys
for line in sys.stdin:
    w = line.split()
    n = w.pop(0) if w and w[0].isdigit() else ''
    print(f'={n} ? sneaky' if w[:1] == ['name'] else f'?{n} no such command', end='\\n\\n', flush=True)
"""


def test_rejudge_keeps_a_success_that_reads_like_an_error(tmp_path):
    """'= ? sneaky' is a success (any success passes '#? [.*]'); '? no such command' an
    error: judged again, each keeps its verdict."""
    (tmp_path / "class" / "w").mkdir(parents=True)
    (tmp_path / "class" / "w" / "p.py").write_text(WEIRD)
    (tmp_path / "w.gtp").write_text("10 name\n#? [.*]\n20 version\n#? [.*]\n")
    run = regress_class([tmp_path / "class"], [tmp_path / "w.gtp"], GOMOKU, settings(), out=tmp_path / "run")
    assert run.students[0].results[0].symbols == "+-"
    again = rejudge_regress(tmp_path / "run")
    assert again.run.students[0].results[0].symbols == "+-" and again.changes == []


def test_gradescope_tells_nothing_of_a_private_test_the_program_ended_in(tmp_path):
    """crash.py dies at its first command: private test 40 says only its verdict, and the
    public test 120, run by a program of its own that was told no private test, says why
    that program ended (its stderr), never where the private tests' program did."""
    full = course_file(tmp_path)
    full.write_text("# grader: public tests 120\n" + full.read_text())
    data = gradescope(tmp_path, (EXAMPLES / "crash.py").read_text(), str(full))
    tests = {t["number"]: t for t in data["tests"]}
    assert tests["40"]["output"] == "t (0)" and tests["40"]["visibility"] == "after_published"
    assert "No module named 'solver'" in tests["120"]["output"]
    assert "private" not in tests["120"]["output"] and "(in a private test)" not in data["output"]
    shown = json.dumps([data["output"], *(t["output"] for t in data["tests"])])
    assert "line" not in shown and "play" not in shown


def test_a_students_report_of_a_regression_run_counts_the_private_tests_only(tmp_path):
    """'grader report RUN --student NAME' shows what the student may see: the public tests in
    full, the private ones (every test of a file that names none public, as Gradescope does)
    as counts; where and why a program ended in a private test stays unsaid, one that ended
    in or before a public test is told why (with its stderr only before any private test).
    --full shows every test, and --sort total puts the best first."""
    cls, files = make_class(tmp_path)  # files[1] names no public test
    files[0].write_text("# grader: public tests 40 120\n" + files[0].read_text())  # 50 and 130 private
    crash_at_genmove = "if w[:1] == ['genmove']: sys.exit('aaron-token')\n    print(f"
    (cls / "aaron.py").write_text(UNKNOWN.replace("print(f", crash_at_genmove))  # ends in private test 50
    crash_at_second_solve = "solves += w[:1] == ['solve']\n    if solves == 2: sys.exit('erin-token')\n    print(f"
    (cls / "erin.py").write_text(
        UNKNOWN.replace("for line", "solves = 0\nfor line").replace("print(f", crash_at_second_solve)
    )
    regress_class([cls], files, GOMOKU, settings(), out=tmp_path / "run")
    runner, run = CliRunner(), str(tmp_path / "run")
    alice = runner.invoke(main, ["report", run, "--student", "alice"]).output
    assert "  +   40 solve" in alice and "  +  120 solve" in alice and "and 2 private tests: + 1, - 1" in alice
    assert "genmove" not in alice and "list_commands" not in alice and "and 4 private tests: + 3, - 1" in alice
    aaron = runner.invoke(main, ["report", run, "--student", "aaron"])
    assert aaron.exit_code == 0 and "stopped early (in a private test)" in aaron.output
    assert "not run: the program had ended in a private test" in aaron.output
    assert "aaron-token" not in aaron.output and "line" not in aaron.output and "genmove" not in aaron.output
    dave = runner.invoke(main, ["report", run, "--student", "dave"]).output  # crashed before test 40
    assert (
        "stopped at start-up, before 'timelimit 5': the program could not start under Python" in dave
        and "boom" in dave
        and "line" not in dave
    )
    erin = runner.invoke(main, ["report", run, "--student", "erin"]).output  # crashed in public test 120
    assert f"{files[0].name}: 0.0/100, stopped at 'solve': the program crashed" in erin
    assert "erin-token" not in erin  # its stderr, written after private test 50, could carry that test's position
    assert f"{files[1].name}: 0.0/100, stopped early (in a private test)" in erin and "line" not in erin
    full = runner.invoke(main, ["report", run, "--student", "aaron", "--full"]).output
    assert "aaron-token" in full and "  t   50 genmove b" in full
    table = runner.invoke(main, ["report", run, "--sort", "total"]).output.splitlines()
    assert [line.split()[0] for line in table[2:8]] == ["alice", "aaron", "bob", "carol", "dave", "erin"]
    table = runner.invoke(main, ["report", run]).output.splitlines()
    assert [line.split()[0] for line in table[2:8]] == ["aaron", "alice", "bob", "carol", "dave", "erin"]


SMUGGLER = """import sys
seen = []
for line in sys.stdin:
    w = line.split()
    n = w.pop(0) if w and w[0].isdigit() else ''
    seen += [w[1] + w[2]] if w[:1] == ['play'] else []
    text = ('b A3' if n == '10' else ANSWER) if w[:1] == ['solve'] else ''
    print(f'={n} {text}'.rstrip() + '\\n', flush=True)
    if n == '20':
        sys.exit('stones: ' + '/'.join(seen))
"""


@pytest.mark.parametrize(
    "answer, shown_answer, verdict, shown_verdict",
    [
        ("'w B3 ' + '/'.join(seen)", "w B3 ~", "an answer is a winner and at most a move, not 3 words",
         "an answer is a winner and at most a move, not more;"),
        ("'w ' + '/'.join(seen)[:11]", "w ?", "w is right, but its move is not a point",
         "w is right, but its move is not a point"),
    ],
)  # fmt: skip
def test_a_program_cannot_show_a_private_position_in_a_later_public_test(tmp_path, answer, shown_answer, verdict,
                                                                         shown_verdict):  # fmt: skip
    """A program puts the stones of private test 10 in its answer to public test 20 (as more
    words, or as a move of 11 characters) and in its stderr as it crashes there: the student
    sees of the answer only a winner and a point, no stderr, and not how many words it wrote
    (all came after the private test); the instructor sees everything."""
    (tmp_path / "class").mkdir()
    (tmp_path / "class" / "mallory.py").write_text(SMUGGLER.replace("ANSWER", answer))
    course = course_file(tmp_path).read_text().replace("40 solve", "10 solve").replace("120 solve", "20 solve")
    lines = [ln for ln in course.splitlines() if not ln.startswith(("50 ", "130 ", "#?[A3]", "#?[.*solve"))]
    (tmp_path / "smuggle.gtp").write_text("# grader: public tests 20\n" + "\n".join(lines) + "\n")
    regress_class([tmp_path / "class"], [tmp_path / "smuggle.gtp"], GOMOKU, settings(), out=tmp_path / "run")
    shown = CliRunner().invoke(main, ["report", str(tmp_path / "run"), "--student", "mallory"]).output
    full = CliRunner().invoke(main, ["report", str(tmp_path / "run"), "--student", "mallory", "--full"]).output
    private_stones = "BA7/WB7"  # the first stones of test 10's position
    assert private_stones in full and verdict in full, full
    assert f"20 solve          -> {shown_answer} " in shown and shown_verdict in shown, shown
    assert "3 words" not in shown
    assert private_stones not in shown and "stones:" not in shown, shown
    assert "and 1 private tests: + 1" in shown


def test_records_from_before_a_rejudge_cannot_be_put_back(tmp_path):
    """bob answers 'unknown': a rejudge at credit 0.5 gives him 50, the instructor's second
    at 0 takes it back. His line of the first (kept, sealed, in results.jsonl.*.old) put back
    into the records fails its seal as one of an older generation; the whole folder put back
    as it was after the first rejudge is refused."""
    cls = tmp_path / "class"
    cls.mkdir()
    (cls / "bob.py").write_text(UNKNOWN)
    run = tmp_path / "run"
    regress_class([cls], [course_file(tmp_path)], GOMOKU, settings(), out=run)
    cli = CliRunner()
    assert cli.invoke(main, ["rejudge", str(run), "--unknown-credit", "0.5"]).exit_code == 0
    shutil.copytree(run, tmp_path / "kept")  # a copy of the folder as it is now, bob at 50
    assert cli.invoke(main, ["rejudge", str(run), "--unknown-credit", "0"]).exit_code == 0
    newest_old = max(run.glob("results.jsonl.*.old"))
    bob_at_50 = [line for line in newest_old.read_text().splitlines() if '"student":"bob"' in line]
    with open(run / "results.jsonl", "a") as f:
        f.write(bob_at_50[0] + "\n")
    report = cli.invoke(main, ["report", str(run)]).output
    assert "1 record(s) of" in report and "fail their seal" in report, report
    assert [line.split()[:2] for line in report.splitlines() if line.startswith("bob")] == [["bob", "0.0"]], report
    shutil.rmtree(run)
    shutil.copytree(tmp_path / "kept", run)
    back = cli.invoke(main, ["report", str(run)])
    assert back.exit_code == 1 and "was put back as it was before its records were last rewritten" in back.output


@pytest.mark.parametrize("killed_at", ["sealing the description", "keeping the generation"])
def test_a_rewrite_killed_before_it_recorded_its_generation_leaves_the_records_readable(tmp_path, monkeypatch,
                                                                                          killed_at):  # fmt: skip
    """Killed after putting the new records in place, before sealing regress.json with their
    generation or keeping it beside the key, a rejudge leaves records that are still read as
    they are, not as changed."""
    cls = tmp_path / "class"
    cls.mkdir()
    (cls / "bob.py").write_text(UNKNOWN)
    regress_class([cls], [course_file(tmp_path)], GOMOKU, settings(), out=tmp_path / "run")
    folder = RegressFolder.open(tmp_path / "run")
    records = folder._records()

    def killed():
        raise KeyboardInterrupt

    if killed_at == "sealing the description":
        monkeypatch.setattr(folder, "_write_meta", killed)
    else:
        monkeypatch.setattr(folders, "keep_generation", lambda *args: killed())
    with pytest.raises(KeyboardInterrupt):
        folder._rewrite(records)
    again = RegressFolder.open(tmp_path / "run")
    assert again._records() == records and again.tampering() is None


def test_gradescope_keeps_every_test_of_an_unmarked_file_private(tmp_path):
    """A file written by hand says nothing of which tests are public: none are shown, and
    with --visibility hidden the private tests are hidden too."""
    full = course_file(tmp_path)
    data = gradescope(tmp_path, UNKNOWN, str(full), "--visibility", "hidden")
    assert {t["visibility"] for t in data["tests"]} == {"hidden"}
    assert all(t["name"].startswith(f"{full}: private test") for t in data["tests"])
    assert "position" not in data["output"] and "and 4 private tests" in data["output"]
