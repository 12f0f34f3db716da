import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FFO_FILE = ROOT / "fixtures" / "ffo-endgames.txt"  # the public FFO suite, as in shared/data/
sys.path.insert(0, str(Path(__file__).parent))

# The handout's first board, as corrected in shared/spec/endgame-lab.md.
HANDOUT_BOARD = "xxxxxxo.xxxxxo..xxooooooxoxxooooxoxxooooxxxoxoooxxo.oxooxooooooo"
# FFO position 20 (6 empties), from fixtures/ffo-endgames.txt.
FFO20 = "XXXOXXXXOXXXXXXXOOXXXXXXOOOXXXXXOOOXXOO-OOOOO---OOOOOOO-OOOOOOO-"
GIT_STATUS = pytest.StashKey["str | None"]()  # the checkout's git status when the suite began


@pytest.fixture(autouse=True, scope="session")
def private_keys(tmp_path_factory):
    """Run folders' keys go to a folder of the test session, not the user's home."""
    import os

    os.environ["GRADER_KEYS"] = str(tmp_path_factory.mktemp("keys"))


@pytest.fixture(autouse=True, scope="session")
def private_tmp():
    """The graders, scripts and workers the tests start make their folders in a temporary
    directory of the session's own (TMPDIR), removed at its end: a grader killed by a test
    leaves nothing in the system's, and none of the user's folders is ever swept."""
    import os
    import tempfile

    folder = tempfile.mkdtemp(prefix="pytest-grader-tmp-")
    os.chmod(folder, 0o1777)  # as /tmp: a script run under another uid makes its files there
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TMPDIR", folder)
        patch.setattr(tempfile, "tempdir", folder)
        yield
    shutil.rmtree(folder, ignore_errors=True)


def one_line_error(result, *words: str, exact: bool = False) -> None:
    """A user's mistake, as a command shows it: a non-zero exit, one line naming the problem
    (holding each of ``words``; with ``exact``, exit status 1 and the line 'Error: WORDS[0]'),
    no traceback."""
    if exact:
        assert result.exit_code == 1, result.output
        assert result.output.strip() == f"Error: {words[0]}"
        return
    assert result.exit_code != 0, result.output
    assert "Traceback" not in result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    for word in words:
        assert word in result.output, result.output


@pytest.fixture
def slot_folder():
    """A folder whose parents let a job slot's uid through (unlike pytest's), removed afterwards."""
    import os
    import tempfile

    folder = Path(tempfile.mkdtemp(dir="/tmp"))
    os.chmod(folder, 0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def handout_board() -> str:
    return HANDOUT_BOARD


def _git_status() -> str | None:
    """The checkout's ``git status`` (None outside a git checkout or without git)."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        return None
    done = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=ROOT,
                          capture_output=True, text=True)  # fmt: skip
    return done.stdout if done.returncode == 0 else None


def pytest_sessionstart(session):
    if not hasattr(session.config, "workerinput"):  # the controller only, under pytest-xdist
        session.config.stash[GIT_STATUS] = _git_status()


def pytest_sessionfinish(session, exitstatus):
    """Tests touch nothing outside their own folders: the suite fails if it left the checkout
    different from how it found it (a test that changes a fixture must work on a copy)."""
    if hasattr(session.config, "workerinput"):
        return
    before, after = session.config.stash.get(GIT_STATUS, None), _git_status()
    if before is None or after is None or before == after:
        return
    changed = sorted(set(after.splitlines()) ^ set(before.splitlines()))
    writer = session.config.get_terminal_writer()
    writer.line()
    writer.line(f"The tests changed the checkout (git status): {'; '.join(changed)}. A test must work on a copy "
                "in its tmp_path.", red=True)  # fmt: skip
    session.exitstatus = pytest.ExitCode.TESTS_FAILED
