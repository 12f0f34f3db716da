import glob
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
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


# The portal's databases, for the tests that run on SQLite and PostgreSQL alike.


def _postgres_bin() -> str | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return str(Path(found[-1]).parent) if found else shutil.which("initdb") and str(Path(shutil.which("initdb")).parent)


@pytest.fixture(scope="module")
def postgres():
    """A PostgreSQL server of the test module's own, on a Unix socket in its own temporary folder
    (run as the postgres user when the tests run as root: initdb refuses root); its base URL."""
    pytest.importorskip("psycopg", reason='PostgreSQL is reached through psycopg 3: pip install -e ".[portal]"')
    where = _postgres_bin()
    if where is None:
        pytest.skip("PostgreSQL is not installed (apt-get install postgresql): its half of these tests cannot run")
    folder = tempfile.mkdtemp(prefix="grader-test-pg-")
    as_user: list[str] = []
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres", "postgres")
        as_user = ["runuser", "-u", "postgres", "--"]
    data = os.path.join(folder, "data")
    run = lambda *args: subprocess.run([*as_user, *args], capture_output=True, text=True, timeout=120)  # noqa: E731
    made = run(f"{where}/initdb", "-D", data, "-A", "trust", "-U", "grader", "-N")
    if made.returncode != 0:
        shutil.rmtree(folder, ignore_errors=True)
        pytest.fail(f"initdb failed: {made.stderr[-2000:]}")
    started = run(f"{where}/pg_ctl", "-D", data, "-l", os.path.join(folder, "log"), "-w", "-o",
                  f"-k {folder} -c listen_addresses='' -c fsync=off -c max_connections=100", "start")  # fmt: skip
    if started.returncode != 0:
        log = Path(folder, "log").read_text() if Path(folder, "log").exists() else ""
        shutil.rmtree(folder, ignore_errors=True)
        pytest.fail(f"PostgreSQL did not start: {started.stderr[-1000:]} {log[-2000:]}")
    try:
        yield f"postgresql://grader@/{{db}}?host={folder}"
    finally:
        run(f"{where}/pg_ctl", "-D", data, "-m", "immediate", "stop")
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request, tmp_path):
    """The URL of a new, empty database of each kind (the portal's: SQLite, and PostgreSQL by ``postgres``)."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'shared.sqlite3'}"
    from sqlalchemy import text

    from grader.portal.database.db import connect

    base = request.getfixturevalue("postgres")
    name = "t_" + secrets.token_hex(6)
    admin = connect(base.format(db="postgres")).execution_options(isolation_level="AUTOCOMMIT")
    with admin.connect() as c:
        c.execute(text(f"CREATE DATABASE {name}"))
    admin.dispose()
    return base.format(db=name)


@pytest.fixture
def chromium():
    """A headless Chromium driven by Playwright (the system's Chromium, found as ``cdp`` finds it);
    the test is skipped where either is missing."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="needs playwright (pip install -e '.[test]')")
    from cdp import find_chromium

    binary = find_chromium()
    if binary is None:
        pytest.skip("no Chromium installed (apt-get install chromium)")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=binary, args=["--no-sandbox", "--disable-gpu"])
        yield browser
        browser.close()


# The course portal served for a test module's tests (tests/portal_server.py).


@pytest.fixture(scope="module")
def portal(tmp_path_factory):
    """One server for the module's tests: the course, the server, the instructor and each student's client."""
    from portal_server import make_course, open_portal

    tmp = tmp_path_factory.mktemp("portal")
    opened = open_portal(make_course(tmp / "course"), tmp)
    yield opened
    opened["server"].stop()


@pytest.fixture(scope="module")
def graded_pair(portal):
    """negamax.py and wrong_score.py, each uploaded by student 1 and graded by the portal."""
    from portal_server import NEGAMAX, WRONG

    me = portal["students"]["s1@example.edu"]
    out = {}
    for script in (NEGAMAX, WRONG):
        r = me.upload(script, name=script.name)
        assert r.status_code == 201, r.text
        out[script.name] = me.graded(r.json()["id"])
    return out


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
