"""Plan files, public and private tests: what students may see, and the misuses refused.

The boards are small endgames whose answers come from the brute-force reference solver."""

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_grading import ref_boards

from grader.cli import main
from grader.errors import PlanError
from grader.games import get_game
from grader.grading.plans import PUBLIC, read_plan_file, standard_plan, write_plan_file
from grader.runs.seeds import spread_public

import reference as ref
from conftest import ROOT, one_line_error

CANNED = Path(__file__).parent / "scripts" / "canned.py"
BOARDS = ref_boards(8)
OTHELLO = get_game("othello")


def run_cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def student(folder: Path, name: str, kind: str) -> Path:
    """A student's folder with a canned script: 'perfect', 'negated' (score from the wrong
    side) or 'slow' (prints a first line, then runs past the limit)."""
    d = folder / name
    d.mkdir(parents=True)
    shutil.copy(CANNED, d / f"{name}.py")
    spec = {}
    for board, tok in BOARDS:
        v, line = ref.value(board, tok, "plain"), ref.optimal_line(board, tok)
        text = f"Min score: {v}; move sequence: {list(reversed(line))}\n"
        spec[f"{board} {tok}"] = {
            "perfect": {"out": text},
            "negated": {"out": f"Min score: {-v - 1}; move sequence: {list(reversed(line))}\n"},
            "slow": {"out": f"thinking about {line[0]} first\n", "sleep": 5},
        }[kind]
    (d / "canned.json").write_text(json.dumps(spec))
    return d


@pytest.fixture
def course(tmp_path, monkeypatch):
    """A plan of 8 boards with 3 public, its public half, and a class of three."""
    monkeypatch.chdir(tmp_path)
    Path("b.txt").write_text("".join(f"{b} {t}\n" for b, t in BOARDS))
    made = run_cli("plan", "new", "--boards", "b.txt", "--public", 3, "--time-limit", 1, "--out", "lab.plan")
    assert made.exit_code == 0, made.output
    assert run_cli("plan", "public", "lab.plan", "--out", "lab.public.plan").exit_code == 0
    for name, kind in (("alice", "perfect"), ("bob", "negated"), ("carol", "slow")):
        student(tmp_path / "class", name, kind)
    return tmp_path


# --- plan files ----------------------------------------------------------------------------


def test_plan_file_round_trip_keeps_everything(tmp_path):
    plan = standard_plan(1234)
    public = spread_public(plan.positions, 10, 1234)
    full = plan.__class__(plan.positions, 1234, plan.source, public, "full", "plain", None)
    write_plan_file(full, tmp_path / "lab.plan")
    back = read_plan_file(tmp_path / "lab.plan")
    assert back.positions == plan.positions and back.seed == 1234 and back.public == public
    assert back.scoring == "plain" and back.kind == "full" and back.game.name == "othello"
    assert sorted(pos.empties for i, pos in enumerate(plan.positions, 1) if i in public) == list(range(1, 11))


def test_plan_new_from_a_seed_is_the_standard_plan_with_limits(tmp_path):
    out = tmp_path / "lab5.plan"
    done = run_cli("plan", "new", "--seed", 77, "--public", 4, "--time-limit", 2.5, "--scoring", "winner-takes-empties",
                   "--out", out)  # fmt: skip
    assert done.exit_code == 0, done.output
    plan = read_plan_file(out)
    assert plan.positions == standard_plan(77).positions
    # the 10 fixed boards ship with the grader (answers and all): public in any plan, and 4 more
    assert set(range(1, 11)) < plan.public and len(plan.public) == 14
    assert plan.limits.wall_seconds == 2.5 and plan.scoring == "winner-takes-empties"
    assert (
        "grader plan public" in done.output
        and "14 public: 4 random and the 10 fixed boards that ship with the grader;" in done.output
    )
    assert "Warning: the private boards come from seed 77, which anyone can find by trying seeds" in done.output


def test_a_plans_shipped_boards_are_counted_in_words_that_agree():
    from grader.cli.plans import shipped_text

    assert shipped_text(14, 10) == ": 4 random and the 10 fixed boards that ship with the grader"
    assert shipped_text(5, 1) == ": 4 random and the 1 fixed board that ships with the grader"
    assert shipped_text(4, 0) == ""


def test_plan_new_draws_its_boards_from_a_secret_seed(tmp_path):
    """Without --seed the seed is 64 random bits: the public boards cannot lead to it."""
    seeds = []
    for name in ("a", "b"):
        done = run_cli("plan", "new", "--public", 10, "--out", tmp_path / f"{name}.plan")
        assert done.exit_code == 0 and "Warning" not in done.output, done.output
        plan = read_plan_file(tmp_path / f"{name}.plan")
        assert plan.positions == standard_plan(plan.seed).positions
        seeds.append(plan.seed)
    assert seeds[0] != seeds[1] and all(s >= 2**40 for s in seeds)  # (1 in 2**24 to fail by chance)


def test_public_plan_tells_nothing_of_the_private_tests(course):
    full, public = read_plan_file("lab.plan"), read_plan_file("lab.public.plan")
    assert public.kind == PUBLIC and public.seed is None
    assert list(public.positions) == [p for i, p in enumerate(full.positions, 1) if i in full.public]
    text = Path("lab.public.plan").read_text()
    for i, pos in enumerate(full.positions, 1):
        assert (pos.board_string() in text) == (i in full.public)
    assert "seed" not in text.replace("# A grader plan", "") and "b.txt" not in text  # nor where the boards came from
    one_line_error(run_cli("plan", "public", "lab.public.plan", "--out", "again.plan"), "already a public plan")


@pytest.mark.parametrize(
    "edit, words",
    [
        (lambda t: t.replace("format: grader-plan 1", "format: something"), ["not a plan file"]),
        (lambda t: t.replace("plan: full", "plan: secret"), ["'plan' must be full or public"]),
        (lambda t: t.replace("game: othello", "game: chess"), ["chess"]),
        (lambda t: t + "colour: blue\n", ["unknown key 'colour'"]),
        (lambda t: t.replace(" public\n", " publik\n", 1), ["test", "line", "BOARD TOKEN public"]),
        (lambda t: t.replace(" ".join(BOARDS[0]), f"{BOARDS[0][0]} z", 1), ["test 1 (line"]),
        (lambda t: t.replace(BOARDS[0][0], BOARDS[0][0][:-1], 1), ["test 1 (line"]),
        (lambda t: t.replace("tests:", "tests: [", 1), ["not a plan file"]),
        (lambda t: t.split("tests:")[0] + "tests:\n", ["no tests"]),
        (lambda t: t.replace("seed: null", "seed: twelve"), ["'seed' must be a whole number"]),
        (lambda t: t.replace("scoring: plain", "scoring: most-discs"), ["most-discs"]),
    ],
)
def test_hand_edited_plan_is_one_line_error(course, edit, words):
    Path("bad.plan").write_text(edit(Path("lab.plan").read_text()))
    with pytest.raises(PlanError):
        read_plan_file("bad.plan")
    one_line_error(run_cli("grade", "class/alice/alice.py", "--plan", "bad.plan"), "bad.plan", *words)


def test_a_plan_whose_test_has_no_move(course):
    lines = Path("lab.plan").read_text().splitlines()
    full_board = "x" * 63 + "o"  # game over: no legal move
    Path("bad.plan").write_text("\n".join(lines + [f"  - {full_board} x"]) + "\n")
    one_line_error(run_cli("grade", "class/alice/alice.py", "--plan", "bad.plan"), "test 9", "no legal move")


def test_plan_of_another_game(course):
    one_line_error(run_cli("grade", "class/alice/alice.py", "--plan", "lab.plan", "--game", "tictactoe"),
                   "plan for othello", "--game othello")  # fmt: skip


def test_public_plan_where_the_full_one_is_needed(course):
    one_line_error(run_cli("grade", "class", "--plan", "lab.public.plan", "--out", "run"), "public plan", "full plan")
    Path("sub").mkdir()
    shutil.copytree("class/alice", "sub/alice")
    one_line_error(run_cli("gradescope", "--submission", "sub/alice", "--plan", "lab.public.plan", "--results", "r.json"),
                   "public plan")  # fmt: skip
    assert not Path("run").exists() and not Path("r.json").exists()


def test_full_plan_where_the_public_one_is_needed(course):
    one_line_error(
        run_cli("check", "class/alice/alice.py", "--plan", "lab.plan"), "private tests", "grader plan public"
    )


def test_student_self_grades_on_the_public_plan(course):
    done = run_cli("grade", "class/alice/alice.py", "--plan", "lab.public.plan")
    assert done.exit_code == 0, done.output
    assert "3/3" in done.output


# --- what students see -------------------------------------------------------------------


def private_strings(plan):
    """Every text that would give away a private test: its board, its grid, its answer."""
    out = []
    for i, pos in enumerate(plan.positions, 1):
        if plan.is_public(i):
            continue
        value, line = ref.value(pos.board_string(), pos.token, "plain"), ref.optimal_line(pos.board_string(), pos.token)
        out += [pos.board_string(), pos.board_string().upper(), OTHELLO.render(pos),
                f"exact value {value:+d}", " ".join(map(str, line))]  # fmt: skip
    return out


@pytest.mark.slow
def test_student_facing_outputs_show_no_private_board_or_answer(course):
    plan = read_plan_file("lab.plan")
    graded = run_cli("grade", "class", "--plan", "lab.plan", "--out", "run")
    assert graded.exit_code == 0, graded.output
    secrets = private_strings(plan)
    seen = {}
    for name in ("alice", "bob", "carol"):
        shown = run_cli("report", "run", "--student", name)
        assert shown.exit_code == 0, shown.output
        seen[f"report {name}"] = shown.output
        Path(f"sub-{name}").mkdir()
        shutil.copytree(f"class/{name}", f"sub-{name}/{name}")
        done = run_cli(
            "gradescope", "--submission", f"sub-{name}/{name}", "--plan", "lab.plan", "--results", f"{name}.json"
        )
        assert done.exit_code == 0, done.output
        data = json.loads(Path(f"{name}.json").read_text())
        seen[f"gradescope stdout {name}"] = done.output
        seen[f"results.json output {name}"] = data["output"]
        hidden = [t for t in data["tests"] if t["visibility"] == "after_published"]
        assert sorted(int(t["number"]) for t in hidden) == sorted(set(range(1, 9)) - plan.public)
        for t in data["tests"]:
            seen[f"results.json test name {name} {t['number']}"] = t["name"]
            if t["visibility"] != "after_published":
                seen[f"results.json test {name} {t['number']}"] = t["output"]
    for where, text in seen.items():
        for secret in secrets:
            assert secret not in text, f"{secret!r} shown in {where}"
    # what they do see: the public tests in full, the private ones counted
    assert "private: 5/5, 0 timeouts, 0 crashes" in seen["report alice"]
    assert "private: 2.5/5, 5 timeouts" in seen["report carol"]  # each a T: the last integer printed is optimal
    public_boards = [p.board_string() for i, p in enumerate(plan.positions, 1) if i in plan.public]
    assert all(b in seen[f"results.json test bob {i}"] for i, b in zip(sorted(plan.public), public_boards))


def test_a_stop_at_a_private_test_tells_nothing_of_it(course):
    """--stop-on-error stops at the first failed test; if it is private, the student report
    says only that (the judge's reason would name its legal moves, the answer of a 1-empty board)."""
    plan = read_plan_file("lab.plan")
    for name in ("dave", "erin"):
        Path(f"class2/{name}").mkdir(parents=True)
    shutil.copy(ROOT / "submissions" / "illegal.py", "class2/dave/dave.py")  # fails every test: stops at test 1
    shutil.copytree("class/alice", "class2/erin", dirs_exist_ok=True)
    graded = run_cli("grade", "class2", "--plan", "lab.plan", "--out", "run", "--stop-on-error")
    assert graded.exit_code == 0, graded.output
    dave = run_cli("report", "run", "--student", "dave").output
    if 1 in plan.public:
        assert "stopped at test 1: move" in dave
    else:
        assert "stopped at a private test (--stop-on-error)" in dave and "legal:" not in dave
        assert "No public test was run." in dave
    for secret in private_strings(plan):
        assert secret not in dave
    erin = run_cli("report", "run", "--student", "erin").output
    assert "No public test below full credit." in erin and "All tests perfect" not in erin


def test_timeout_shows_partial_output_of_public_tests_only(course):
    plan = read_plan_file("lab.plan")
    Path("sub").mkdir()
    shutil.copytree("class/carol", "sub/carol")
    assert (
        run_cli("gradescope", "--submission", "sub/carol", "--plan", "lab.plan", "--results", "r.json").exit_code == 0
    )
    tests = {int(t["number"]): t for t in json.loads(Path("r.json").read_text())["tests"]}
    for i in plan.public:
        assert "printed before the time limit:\nthinking about" in tests[i]["output"]
    for i in set(tests) - plan.public:
        assert "thinking" not in tests[i]["output"]


@pytest.mark.slow
def test_instructor_may_ask_for_full_detail(course):
    graded = run_cli("grade", "class", "--plan", "lab.plan", "--out", "run")
    assert graded.exit_code == 0, graded.output
    full = run_cli("report", "run", "--student", "alice", "--full")
    plan = read_plan_file("lab.plan")
    hidden = [p.board_string() for i, p in enumerate(plan.positions, 1) if i not in plan.public]
    assert "8/8" in full.output and "private:" not in full.output
    # bob's tests all fail: his full report shows private boards, the student report none
    bob = run_cli("report", "run", "--student", "bob", "--full").output
    assert any(b in bob for b in hidden)
    assert not any(b in run_cli("report", "run", "--student", "bob").output for b in hidden)


@pytest.mark.slow
def test_student_not_in_the_run(course):
    assert run_cli("grade", "class", "--plan", "lab.plan", "--out", "run").exit_code == 0
    one_line_error(run_cli("report", "run", "--student", "zed"), "no student 'zed'", "alice, bob, carol")
