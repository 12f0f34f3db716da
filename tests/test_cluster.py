"""Grading and tournaments on a real Dask cluster (a scheduler and workers on 127.0.0.1,
started here): the same results as a local run, also when a worker is SIGKILLed, a clean stop
when the scheduler goes away, and the errors a user sees."""

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from grader import Limits, Settings, grade_class, run_tournament, standard_plan
from grader.cli import main
from grader.grading.plans import Plan
from grader.tournaments.settings import TournamentSettings
from grader.version import __version__

from conftest import ROOT

pytestmark = pytest.mark.xdist_group(__name__)  # one worker: the module's fixture runs once

NEGAMAX = (ROOT / "submissions" / "negamax.py").read_text()
PLAN = standard_plan(seed=11)
POSITIONS = PLAN.positions[:5] + PLAN.positions[10:100:15]  # 1-5 empties, then random boards of 1-9
SMALL = Plan(POSITIONS, 11, "a few tests of the standard plan, seed 11")
SETTINGS = Settings(limits=Limits(wall_seconds=8), jobs=2)
OTHER_ERROR = 'Error: a cluster needs Dask\'s distributed, which is not installed: pip install "grader[cluster]"\n'


def test_cluster_without_distributed_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # as if not installed
    got = CliRunner().invoke(
        main, ["grade", str(ROOT / "submissions" / "negamax.py"), "--cluster", "tcp://127.0.0.1:8786"]
    )
    assert got.exit_code == 1
    assert got.output.splitlines()[-1] + "\n" == OTHER_ERROR


def test_a_ctrl_c_while_local_workers_start_is_answered_not_lost():
    """Local workers start with SIGINT held back, which they inherit; a Ctrl-C meanwhile is
    answered all the same (it had been ignored, and lost)."""
    from grader.execution.cluster import _no_sigint

    with pytest.raises(KeyboardInterrupt):
        with _no_sigint():
            os.kill(os.getpid(), signal.SIGINT)
        for _ in range(1000):  # a few instructions: the handler runs at the next one
            pass


@pytest.mark.parametrize("address, message", [
    ("localhost:8786", "Error: bad cluster address 'localhost:8786': give tcp://HOST:8786, tls://HOST:8786 or local:N\n"),
    ("local:0", "Error: bad cluster address 'local:0': local:N needs a number of workers from 1 to 512, like local:2\n"),
])  # fmt: skip
def test_bad_address_is_one_line(address, message):
    got = CliRunner().invoke(main, ["grade", str(ROOT / "submissions" / "negamax.py"), "--cluster", address])
    assert got.exit_code == 1
    assert got.output == message


def test_bad_address_in_config(tmp_path):
    (tmp_path / "c.yaml").write_text("cluster:\n  address: tcp://nohost\n")
    got = CliRunner().invoke(
        main, ["grade", str(ROOT / "submissions" / "negamax.py"), "--config", str(tmp_path / "c.yaml")]
    )
    assert got.exit_code == 1
    assert "'cluster.address': bad cluster address 'tcp://nohost'" in got.output


distributed = pytest.importorskip(
    "distributed", reason='the cluster extra is not installed: pip install -e ".[cluster]"'
)


# --- a cluster of real processes --------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Processes:
    """A scheduler and workers on 127.0.0.1, each in its own process group, all killed at the end."""

    def __init__(self, tls: tuple[str, ...] = ()) -> None:
        """``tls``: dask's --tls-* options, for a scheduler and workers that speak only TLS."""
        self.port = free_port()
        self.tls = (*tls, "--protocol", "tls") if tls else ()
        self.address = f"{'tls' if tls else 'tcp'}://127.0.0.1:{self.port}"
        self.env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
        self.procs: list[subprocess.Popen] = []
        self.scheduler = self._start(
            "scheduler", "--host", "127.0.0.1", "--port", str(self.port), "--no-dashboard", *self.tls
        )

    def _start(self, *args: str) -> subprocess.Popen:
        proc = subprocess.Popen([sys.executable, "-m", "dask", *args], env=self.env, start_new_session=True,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        self.procs.append(proc)
        return proc

    def worker(self, port: int | None = None) -> subprocess.Popen:
        return self._start("worker", self.address, "--nthreads", "1", "--no-dashboard", "--host", "127.0.0.1",
                           "--death-timeout", "20", *(["--worker-port", str(port)] if port else []), *self.tls)  # fmt: skip

    def client(self, workers: int, security: Any = None) -> "distributed.Client":
        client = distributed.Client(self.address, timeout=30, set_as_default=False, security=security)
        client.wait_for_workers(workers, timeout=60)
        return client

    @staticmethod
    def kill(proc: subprocess.Popen) -> None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()

    def close(self) -> None:
        for proc in self.procs:
            self.kill(proc)


@pytest.fixture(scope="module")
def cluster():
    procs = Processes()
    try:
        procs.worker(), procs.worker()
        client = procs.client(2)
        yield procs, client
        client.close()
    finally:
        procs.close()


def executor(client, **kw):
    from grader.execution.cluster import DaskExecutor

    return DaskExecutor(client, **kw)


def make_class(folder: Path, sleep: float = 0.0, copies: int = 3, broken: bool = True) -> Path:
    """Copies of negamax.py (each sleeping ``sleep`` s first), and crash.py."""
    folder.mkdir()
    wait = f"import time\ntime.sleep({sleep})\n" if sleep else ""
    for i in range(copies):
        (folder / f"student{i}.py").write_text(wait + NEGAMAX)
    if broken:
        (folder / "broken.py").write_text((ROOT / "submissions" / "crash.py").read_text())
    return folder


def outcome(run) -> dict:
    """What must not change with where tests ran: per student, per test, the symbol, claim and verdict."""
    return {r.name: [(t.index, t.symbol, t.claim, t.verdict, t.run.crashed, t.run.timed_out) for t in r.tests]
            for r in run.results}  # fmt: skip


def records(folder: Path) -> list[dict]:
    """The complete lines of a run's tests.jsonl (one being written may be cut short)."""
    return [json.loads(line) for line in (folder / "tests.jsonl").read_text().split("\n")[:-1] if line.strip()]


@pytest.fixture(scope="module")
def local_class(tmp_path_factory):
    """The class of make_class graded locally: what every cluster run must equal."""
    base = tmp_path_factory.mktemp("local")
    klass = make_class(base / "class")
    return grade_class([klass], SMALL, SETTINGS, out=base / "run", exports=False)


@pytest.mark.slow
def test_class_on_cluster_equals_local(cluster, local_class, tmp_path):
    procs, client = cluster
    klass = make_class(tmp_path / "class")
    with executor(client) as ex:
        run = grade_class([klass], SMALL, SETTINGS, out=tmp_path / "run", executor=ex)
    assert run.interrupted is None
    assert outcome(run) == outcome(local_class)
    assert {r.name: r.total for r in run.results}["broken"] == 0  # crash.py's crashes are crashed tests
    assert all(t.run.crashed for r in run.results if r.name == "broken" for t in r.tests)
    lines = records(tmp_path / "run")
    assert len(lines) == 4 * len(POSITIONS)
    assert {line["host"] for line in lines} == {socket.gethostname()}  # each record names the worker's machine
    assert {line["host"] for line in records(local_class.folder.path)} == {None}
    assert (
        json.loads((tmp_path / "run" / "results.json").read_text())["scripts"][0]["tests"][0]["host"]
        == socket.gethostname()
    )


@pytest.mark.slow
def test_killed_worker_changes_no_grade(cluster, local_class, tmp_path):
    procs, client = cluster
    port = free_port()
    doomed = procs.worker(port)
    client.wait_for_workers(3, timeout=60)
    klass = make_class(tmp_path / "class", sleep=0.3)
    killed = []

    def on_test(name, test):
        busy = client.processing().get(f"tcp://127.0.0.1:{port}") if not killed else None
        if busy:  # the extra worker holds a batch: SIGKILL it now
            killed.append(busy)
            procs.kill(doomed)

    with executor(client, batch=3) as ex:
        run = grade_class([klass], SMALL, SETTINGS, out=tmp_path / "run", on_test=on_test, executor=ex)
    assert killed, "the extra worker never ran a batch"
    assert run.interrupted is None
    assert outcome(run) == outcome(local_class)
    keys = [(line["student"], line["index"]) for line in records(tmp_path / "run")]
    assert len(keys) == len(set(keys)) == 4 * len(POSITIONS)  # every test recorded exactly once


@pytest.mark.slow
def test_tournament_on_cluster_equals_local(cluster, tmp_path):
    procs, client = cluster
    engines = [ROOT / "submissions" / "tictactoe" / f"{n}.py" for n in ("minimax", "first_empty", "can_lose")]
    settings = TournamentSettings(limits=Limits(wall_seconds=5), jobs=2, game="tictactoe")
    kw = {"settings": settings, "rounds": 2, "seed": 5, "opening_plies": 1}
    local = run_tournament(engines, out=tmp_path / "local", **kw)
    with executor(client) as ex:
        remote = run_tournament(engines, out=tmp_path / "cluster", executor=ex, **kw)

    def games(result):
        return [(g.id, g.black, g.white, g.opening, g.moves, g.result, g.reason, g.margin) for g in result.games]

    assert games(remote) == games(local) and len(local.games) == 12
    assert {g.host for g in remote.games} == {socket.gethostname()} and {g.host for g in local.games} == {None}
    assert [s.to_json() for s in remote.standings] == [s.to_json() for s in local.standings]


@pytest.mark.slow
def test_scheduler_gone_stops_cleanly_and_resumes(local_class, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    procs = Processes()
    try:
        procs.worker()
        procs.client(1).close()
        make_class(tmp_path / "class", sleep=0.3)
        killed = []

        def kill_when_recording() -> None:
            while not (tmp_path / "run" / "tests.jsonl").is_file() or not records(tmp_path / "run"):
                time.sleep(0.05)
            killed.append(time.monotonic())
            procs.kill(procs.scheduler)

        threading.Thread(target=kill_when_recording, daemon=True).start()
        got = CliRunner().invoke(main, ["grade", "class", "--seed", "11", "--out", "run", "--time-limit", "8",
                                        "--boards", _boards(tmp_path), "--cluster", procs.address])  # fmt: skip
    finally:
        procs.close()
    assert got.exit_code == 130, got.output
    assert (
        got.output.splitlines()[-1]
        == f"The Dask scheduler at {procs.address} went away: continue with  grader grade --resume run"
    )
    assert time.monotonic() - killed[0] < 20
    first = [(line["student"], line["index"]) for line in records(tmp_path / "run")]
    assert 1 <= len(first) < 4 * len(POSITIONS) and len(first) == len(set(first))
    # Nothing recorded is lost: resuming here runs only the rest and ends as the local run did.
    again = grade_class(resume=tmp_path / "run", settings=Settings(jobs=2))
    assert again.interrupted is None
    assert outcome(again) == outcome(local_class)
    assert [(line["student"], line["index"]) for line in records(tmp_path / "run")][: len(first)] == first


def _boards(folder: Path) -> str:
    (folder / "b.txt").write_text("".join(f"{p.board_string()} {p.token}\n" for p in POSITIONS))
    return str(folder / "b.txt")


def test_unreachable_scheduler_is_one_line(tmp_path):
    """Nothing listens: tried again (a scheduler may be starting) until connect_seconds."""
    port = free_port()
    (tmp_path / "c.yaml").write_text("cluster:\n  connect_seconds: 2\n")
    start = time.monotonic()
    got = CliRunner().invoke(main, ["grade", str(ROOT / "submissions" / "negamax.py"), "--cluster", f"tcp://127.0.0.1:{port}",
                                    "--config", str(tmp_path / "c.yaml")])  # fmt: skip
    assert got.exit_code == 1
    assert got.output.splitlines()[-1].startswith(f"Error: cannot reach the Dask scheduler at tcp://127.0.0.1:{port} "
                                                  "within 2 s (ConnectionRefusedError")  # fmt: skip
    assert len(got.output.splitlines()) == 2  # 'Connecting...' and the error
    assert time.monotonic() - start < 20


class _Peer:
    """Something that is not a Dask scheduler, listening on a port of this test's own."""

    def __init__(self, kind: str):
        self.kind, self.sock = kind, socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.port = self.sock.getsockname()[1]
        self.held: list[socket.socket] = []
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.held.append(conn)
            if self.kind == "garbage":
                conn.sendall(b"\xff" * 64)
            elif self.kind == "http":  # answers a request, as a web server (or the dashboard) does
                conn.settimeout(5)
                with contextlib.suppress(OSError):
                    conn.recv(4096)
                    conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
            # "silent": accepts and says nothing

    def close(self) -> None:
        self.sock.close()
        for conn in self.held:
            conn.close()


@pytest.mark.parametrize("kind, words", [
    ("http", "nothing at {address} greeted like a Dask scheduler within 2 s"),
    ("silent", "nothing at {address} greeted like a Dask scheduler within 2 s"),
    ("garbage", "what answers at {address} is not a Dask scheduler (it sent "),
])  # fmt: skip
def test_a_peer_that_is_not_a_scheduler_is_one_line(tmp_path, monkeypatch, kind, words):
    """A web server, a port that says nothing, or one that sends garbage: one line naming the
    usual ports, within the deadline of cluster: connect_seconds (not a hang, not a MemoryError)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "config.yaml").write_text("cluster:\n  connect_seconds: 2\n")
    peer = _Peer(kind)
    address = f"tcp://127.0.0.1:{peer.port}"
    try:
        got = CliRunner().invoke(main, ["grade", str(ROOT / "submissions" / "negamax.py"), "--cluster", address])
    finally:
        peer.close()
    assert got.exit_code == 1, got.output
    assert got.output.splitlines() == [f"Connecting to the cluster at {address}...", got.output.splitlines()[-1]]
    last = got.output.splitlines()[-1]
    assert last.startswith("Error: " + words.format(address=address)), last
    assert "listens on port 8786" in last and "8787 is its dashboard" in last


@pytest.mark.slow
def test_cli_local_cluster(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    make_class(tmp_path / "class", copies=2, broken=False)
    (tmp_path / "b.txt").write_text("".join(f"{p.board_string()} {p.token}\n" for p in POSITIONS[:6]))
    got = CliRunner().invoke(main, ["grade", "class", "--boards", "b.txt", "--out", "run", "--time-limit", "8",
                                    "--cluster", "local:2"])  # fmt: skip
    assert got.exit_code == 0, got.output
    assert "Cluster: 2 workers, 2 threads, on " in got.output
    data = json.loads((tmp_path / "run" / "results.json").read_text())
    assert [s["symbols"] for s in data["scripts"]] == ["++++++", "++++++"]
    assert {t["host"] for s in data["scripts"] for t in s["tests"]} == {socket.gethostname()}


def _certificates(folder: Path, name: str) -> dict[str, str]:
    """An authority of our own (``name``) and one certificate it signed: the scheduler, the
    workers and the grader all use it here (on a real pool each machine has its own)."""

    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=folder, check=True, capture_output=True)

    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key", "-out", f"{name}.pem",
            "-days", "2", "-subj", f"/CN={name}")  # fmt: skip
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}-node.key", "-out", f"{name}-node.csr",
            "-subj", "/CN=127.0.0.1")  # fmt: skip
    openssl("x509", "-req", "-in", f"{name}-node.csr", "-CA", f"{name}.pem", "-CAkey", f"{name}.key",
            "-CAcreateserial", "-out", f"{name}-node.pem", "-days", "2")  # fmt: skip
    return {
        "ca_file": str(folder / f"{name}.pem"),
        "cert": str(folder / f"{name}-node.pem"),
        "key": str(folder / f"{name}-node.key"),
    }


def _cluster_config(folder: Path, address: str, files: dict[str, str]) -> str:
    lines = [f"  address: {address}"] + [f"  {k}: {v}" for k, v in files.items()]
    (folder / f"c-{Path(files['ca_file']).stem}.yaml").write_text("cluster:\n" + "\n".join(lines) + "\n")
    return str(folder / f"c-{Path(files['ca_file']).stem}.yaml")


@pytest.mark.slow
@pytest.mark.skipif(not shutil.which("openssl"), reason="openssl (to make test certificates) is not installed")
def test_tls_cluster_grades_and_refuses_strangers(tmp_path, monkeypatch):
    """A scheduler and worker that speak only TLS: the grader with certificates from their
    authority grades on them; with a certificate from another authority, or over tcp://, it is
    refused with one line and runs nothing."""
    from distributed.security import Security

    monkeypatch.chdir(tmp_path)
    ours, theirs = _certificates(tmp_path, "course-ca"), _certificates(tmp_path, "stranger-ca")
    procs = Processes(tls=("--tls-ca-file", ours["ca_file"], "--tls-cert", ours["cert"], "--tls-key", ours["key"]))
    make_class(tmp_path / "class", copies=1, broken=False)
    args = ["grade", "class", "--boards", _boards(tmp_path), "--time-limit", "8"]
    try:
        procs.worker()
        procs.client(
            1, Security(tls_ca_file=ours["ca_file"], tls_client_cert=ours["cert"], tls_client_key=ours["key"])
        ).close()
        got = CliRunner().invoke(
            main, [*args, "--out", "run", "--config", _cluster_config(tmp_path, procs.address, ours)]
        )
        stranger = CliRunner().invoke(
            main, [*args, "--out", "run2", "--config", _cluster_config(tmp_path, procs.address, theirs)]
        )
        (tmp_path / "short.yaml").write_text("cluster:\n  connect_seconds: 3\n")
        plain = CliRunner().invoke(main, [*args, "--out", "run3", "--cluster", f"tcp://127.0.0.1:{procs.port}",
                                          "--config", str(tmp_path / "short.yaml")])  # fmt: skip
    finally:
        procs.close()
    assert got.exit_code == 0, got.output
    assert "Cluster: 1 worker, 1 thread, on " in got.output
    data = json.loads((tmp_path / "run" / "results.json").read_text())
    assert [s["symbols"] for s in data["scripts"]] == ["+" * len(POSITIONS)]
    assert {t["host"] for s in data["scripts"] for t in s["tests"]} == {socket.gethostname()}
    for refused in (stranger, plain):
        assert refused.exit_code == 1, refused.output
        assert "Traceback" not in refused.output
    assert stranger.output.splitlines()[-1].startswith("Error: cannot reach the Dask scheduler at "), stranger.output
    assert "certificates signed by the authority in cluster: ca_file" in stranger.output
    assert plain.output.splitlines()[-1].startswith(f"Error: nothing at tcp://127.0.0.1:{procs.port} greeted like a "
                                                    "Dask scheduler within 3 s"), plain.output  # fmt: skip
    assert "speaks only TLS (use tls://)" in plain.output
    assert not (tmp_path / "run2" / "tests.jsonl").exists() and not (tmp_path / "run3" / "tests.jsonl").exists()


@pytest.mark.slow
def test_a_worker_of_another_version_joining_later_stops_the_run(tmp_path, monkeypatch):
    """Workers are checked at the start, and each batch checks its worker again: one that joins
    later with another grader stops the run with one line, and no test is graded by it."""
    monkeypatch.chdir(tmp_path)
    other = tmp_path / "other"
    shutil.copytree(ROOT / "grader", other / "grader", ignore=shutil.ignore_patterns("__pycache__"))
    version = other / "grader" / "version.py"
    version.write_text(version.read_text().replace('__version__ = "', '__version__ = "0.0.1+other-', 1))
    procs = Processes()
    make_class(tmp_path / "class", copies=1, broken=False)

    def join_later() -> None:
        time.sleep(2)
        procs.env["PYTHONPATH"] = str(other)
        procs.worker()

    try:
        threading.Thread(target=join_later, daemon=True).start()
        got = CliRunner().invoke(main, ["grade", "class", "--boards", _boards(tmp_path), "--out", "run", "--time-limit", "8",
                                        "--cluster", procs.address])  # fmt: skip
    finally:
        procs.close()
    assert got.exit_code == 1, got.output
    assert "Cluster: 0 workers, 0 threads, on no machine yet" in got.output
    assert got.output.splitlines()[-1] == (f"Error: the Dask worker on {socket.gethostname()} runs grader 0.0.1+other-"
                                           f"{__version__}, this machine {__version__}: install the same version everywhere")  # fmt: skip
    assert not (tmp_path / "run" / "tests.jsonl").exists() or not records(tmp_path / "run")


@pytest.mark.slow
def test_tournament_stops_cleanly_when_the_scheduler_goes_away(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    procs = Processes()
    engines = [str(ROOT / "submissions" / "tictactoe" / f"{n}.py") for n in ("minimax", "first_empty", "can_lose")]
    try:
        procs.worker()
        procs.client(1).close()
        killed = []

        def kill_after_a_game() -> None:
            games = tmp_path / "t" / "games.jsonl"
            while not games.is_file() or not games.read_text().strip():
                time.sleep(0.05)
            killed.append(time.monotonic())
            procs.kill(procs.scheduler)

        threading.Thread(target=kill_after_a_game, daemon=True).start()
        got = CliRunner().invoke(main, ["tournament", *engines, "--game", "tictactoe", "--rounds", "4", "--seed", "3",
                                        "--random-openings", "1", "--out", "t", "--cluster", procs.address])  # fmt: skip
    finally:
        procs.close()
    assert got.exit_code == 130, got.output
    assert (
        got.output.splitlines()[-1]
        == f"The Dask scheduler at {procs.address} went away: continue with  grader tournament --resume t"
    )
    assert time.monotonic() - killed[0] < 20
    first = (tmp_path / "t" / "games.jsonl").read_text().splitlines()
    assert 1 <= len(first) < 24
    again = run_tournament(resume=tmp_path / "t", jobs=2)  # nothing recorded is lost: the rest is played here
    assert again.interrupted is None and len(again.games) == 24
    assert (tmp_path / "t" / "games.jsonl").read_text().splitlines()[: len(first)] == first


def test_a_worker_thread_serves_a_new_run_after_a_stopped_one():
    """A cluster worker's thread keeps its Worker (and the adjudication solver cached on it)
    from run to run: a run stopped before must not stop the next one's games."""
    from grader.execution.cluster import forget_run, run_batch, stop_run
    from grader.tournaments.engines import engine_list
    from grader.tournaments.games import GameRecord, GameTask
    from grader.tournaments.openings import random_openings

    settings = TournamentSettings(limits=Limits(wall_seconds=5), jobs=1, backend="python", adjudicate=10)
    engines = engine_list(["builtin:random_mover", "builtin:greedy"], settings.rules)
    scripts = {e.name: e.spec() for e in engines}
    openings = random_openings(settings.rules, 3, 44, 4)  # 20 empties: short games, adjudicated at 10

    def task(i):
        return GameTask(GameRecord(f"g{i}", "p", 1, engines[0].name, engines[1].name, openings[i]), scripts, settings)

    outcome = {}

    def two_runs():
        outcome["first"] = run_batch("run-1", [("g0", task(0))], __version__)
        stop_run("run-1", "interrupted (Ctrl-C)")
        forget_run("run-1")
        outcome["second"] = run_batch("run-2", [(f"g{i}", task(i)) for i in (1, 2, 3)], __version__)

    thread = threading.Thread(target=two_runs)  # one thread: one Worker, as on a cluster worker
    thread.start()
    thread.join(120)
    assert [k for k, _ in outcome["first"]] == ["g0"] and outcome["first"][0][1].reason == "adjudicated"
    assert [k for k, g in outcome["second"]] == ["g1", "g2", "g3"] and all(g.result for _, g in outcome["second"])
    assert "adjudicated" in {g.reason for _, g in outcome["second"]}


@pytest.mark.slow
def test_a_regression_class_on_cluster_equals_local(cluster, tmp_path):
    """GTP programs on regression files, on the cluster's worker processes: the same verdicts
    and notes as here, each file's record naming the worker's machine."""
    from grader.games.gomoku import GOMOKU
    from grader.regression.runs import regress_class

    from test_gomoku import settings
    from test_regress_runs import make_class as make_regress_class

    procs, client = cluster
    klass, files = make_regress_class(tmp_path)
    local = regress_class([klass], files, GOMOKU, settings(unknown_credit=0.5), out=tmp_path / "local")
    with executor(client) as ex:
        remote = regress_class([klass], files, GOMOKU, settings(unknown_credit=0.5), out=tmp_path / "remote",
                               executor=ex)  # fmt: skip

    def verdicts(run):
        return {s.name: (s.note, [[(t.number, t.symbol, t.answer) for t in r.tests] for r in s.results])
                for s in run.students}  # fmt: skip

    assert remote.interrupted is None and verdicts(remote) == verdicts(local)
    assert {r.host for s in remote.students for r in s.results} == {socket.gethostname()}
    assert {r.host for s in local.students for r in s.results} == {None}


@pytest.mark.slow
def test_cli_regress_on_a_local_cluster(tmp_path):
    from test_regress_runs import make_class as make_regress_class

    klass, files = make_regress_class(tmp_path)
    got = CliRunner().invoke(main, ["regress", str(klass), str(files[0]), "--out", str(tmp_path / "run"),
                                    "--cluster", "local:2"])  # fmt: skip
    assert got.exit_code == 0, got.output
    assert "Cluster: 2 workers, 2 threads, on " in got.output
    totals = {s["name"]: s["total"] for s in json.loads((tmp_path / "run" / "results.json").read_text())["students"]}
    assert totals == {"alice": 100.0, "bob": 0.0, "carol": 0.0, "dave": 0.0}
