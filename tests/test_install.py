"""A normal install (the built wheel in a fresh virtual environment) runs the main jobs from
any folder: nothing may depend on the repository being there."""

import json
import shutil
import subprocess
import sys
import venv

import pytest

from conftest import HANDOUT_BOARD, ROOT

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """The grader command of a fresh venv holding only the built wheel and its dependencies."""
    where = tmp_path_factory.mktemp("install")
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(where / "dist"), str(ROOT)],
                           capture_output=True, text=True)  # fmt: skip
    assert build.returncode == 0, build.stderr
    (wheel,) = (where / "dist").glob("grader-*.whl")
    venv.EnvBuilder(with_pip=True).create(where / "venv")
    pip = subprocess.run(
        [str(where / "venv" / "bin" / "pip"), "install", "-q", str(wheel)], capture_output=True, text=True
    )
    assert pip.returncode == 0, pip.stderr
    return where / "venv" / "bin" / "grader"


def run(grader, *args, cwd):
    return subprocess.run([str(grader), *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=600)


def test_version_and_solve(installed, tmp_path):
    assert run(installed, "--version", cwd=tmp_path).stdout.startswith("grader, version ")
    solved = run(installed, "solve", HANDOUT_BOARD, "x", "--json", cwd=tmp_path)
    assert json.loads(solved.stdout)["value"] == 18


def test_grade_the_example_from_an_empty_folder(installed, tmp_path):
    shutil.copy(ROOT / "submissions" / "negamax.py", tmp_path / "negamax.py")
    done = run(installed, "grade", "negamax.py", "--seed", "1", "--jobs", "2", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "negamax.py: 100/100" in done.stdout


def test_gradescope_and_a_tournament_of_bundled_engines(installed, tmp_path):
    (tmp_path / "submission").mkdir()
    shutil.copy(ROOT / "submissions" / "negamax.py", tmp_path / "submission" / "negamax.py")
    done = run(installed, "gradescope", "--submission", "submission", "--results", "out/results.json", "--seed", "2",
               cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "out" / "results.json").read_text())["score"] == 100
    played = run(installed, "tournament", "builtin:greedy", "builtin:random_mover", "--out", "t", "--seed", "1",
                 cwd=tmp_path)  # fmt: skip
    assert played.returncode == 0, played.stderr
    assert len((tmp_path / "t" / "games.txt").read_text().splitlines()) == 2
