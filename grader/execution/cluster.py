"""Tests, games and proof positions on a Dask cluster: ``DaskExecutor``, one more executor.

The client (this process) sends tasks in batches, several tasks to a Dask task, so that
short tests are not dominated by scheduling; it judges, records and reports exactly as a
local run does. A worker runs a batch's tasks one after another with a ``Worker`` kept for
its thread (staged scripts, solvers and the sandbox's uid are reused across batches), and
with a ``Stop`` per run that the client sets on every worker when the run stops.

Dask runs a batch lost with a dead worker again elsewhere; the client takes each key's result
once. A scheduler that goes away stops the run like Ctrl-C: what finished is kept.

``distributed`` is imported only here, and only when a cluster is used:
``pip install "grader[cluster]"``.
"""

from __future__ import annotations

import collections
import contextlib
import itertools
import logging
import math
import pickle
import queue
import secrets
import shutil
import signal
import socket
import sys
import threading
import time
import warnings
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Iterable, Iterator

from ..config import ADDRESS, LOCAL, ClusterConfig, check_address
from ..engines.runner import dedicate_this_thread
from ..engines.scripts import RunSettings, Stage
from ..errors import GraderError
from ..stop import Stop, Stopped
from ..version import __version__
from .executor import Executor, Task, Worker

INSTALL = 'pip install "grader[cluster]"'
MAX_BATCH = 10  # tasks in one Dask task at most
DRAIN_SECONDS = 15.0  # after a stop, how long the batches still out may take to come back
SCHEDULER_PORT, DASHBOARD_PORT = 8786, 8787
CONNECT_SECONDS = 10.0  # the default deadline for reaching a scheduler (config cluster: connect_seconds)
MAX_GREETING = 65536  # bytes: a scheduler's handshake is a few dozen


def check_peer(address: str, seconds: float) -> None:
    """GraderError in one line unless what answers at the tcp:// ``address`` greets like a
    Dask scheduler within ``seconds``: a scheduler speaks first, a handshake of a few dozen
    bytes (a length, then msgpack naming 'compression' and 'pickle-protocol'). A web server,
    the dashboard's port or anything else would otherwise hang or crash Dask's client."""
    m = ADDRESS.match(address)
    assert m is not None, address
    host, port = m.group(2).strip("[]"), int(m.group(3))
    usual = (
        f"a Dask scheduler listens on port {SCHEDULER_PORT} unless told otherwise ({DASHBOARD_PORT} is its dashboard)"
    )
    deadline = time.monotonic() + seconds
    got = b""
    while True:
        try:
            with socket.create_connection((host, port), timeout=max(0.1, deadline - time.monotonic())) as sock:
                while len(got) < 8 or (len(got) < 8 + _frame_size(got) and _frame_size(got) <= MAX_GREETING):
                    left = deadline - time.monotonic()
                    if left <= 0:
                        break
                    sock.settimeout(left)
                    chunk = sock.recv(4096)
                    if not chunk:
                        break
                    got += chunk
            break
        except TimeoutError:
            break
        except ConnectionRefusedError as e:  # a scheduler still starting: try again until the deadline, as Dask does
            if time.monotonic() + 0.2 >= deadline:
                raise GraderError(f"cannot reach the Dask scheduler at {address} within {seconds:g} s ({_short(e)}): "
                                  "is 'dask scheduler' running there, and the port open to this machine?") from None  # fmt: skip
            time.sleep(0.2)
        except OSError as e:
            raise GraderError(f"cannot reach the Dask scheduler at {address} ({_short(e)}): is 'dask scheduler' running "
                              "there, and the port open to this machine?") from None  # fmt: skip
    if len(got) >= 8 and _frame_size(got) <= MAX_GREETING and b"compression" in got and b"pickle-protocol" in got:
        return
    if not got:
        raise GraderError(f"nothing at {address} greeted like a Dask scheduler within {seconds:g} s (a scheduler "
                          "speaks first; a web server, or a scheduler that speaks only TLS (use tls://), waits): "
                          f"{usual}; cluster: connect_seconds sets the wait")  # fmt: skip
    shown = got[:40].decode("ascii", "replace").replace("\r", "").replace("\n", " ").strip()
    raise GraderError(f"what answers at {address} is not a Dask scheduler (it sent {shown!r}): {usual}")


def _frame_size(got: bytes) -> int:
    """The size a Dask message announces in its first 8 bytes (little-endian)."""
    return int.from_bytes(got[:8], "little")


def _import_distributed() -> Any:
    try:
        import distributed
    except ImportError:
        raise GraderError(f"a cluster needs Dask's distributed, which is not installed: {INSTALL}") from None
    return distributed


# --- on the workers ----------------------------------------------------------------------

_local = threading.local()
_lock = threading.Lock()
_slots = itertools.count()
_stage: Stage | None = None
_stops: dict[str, Stop] = {}  # run id -> its Stop, on this worker process


class ClusterWorker(Worker):
    """A ``Worker`` on a cluster worker's thread: records its machine's name, and runs .py
    scripts with this machine's Python when the client's is not installed here."""

    host = socket.gethostname()

    def here(self, settings: RunSettings) -> RunSettings:
        if shutil.which(settings.python) is None:
            return replace(settings, python=sys.executable)
        return settings


def _run_stop(run: str) -> Stop:
    with _lock:
        if run not in _stops:
            _stops[run] = Stop()
        return _stops[run]


def _worker(run: str) -> ClusterWorker:
    """This thread's Worker, given the Stop of ``run``."""
    global _stage
    worker = getattr(_local, "worker", None)
    if worker is None:
        with _lock:
            if _stage is None:
                _stage = Stage()
        worker = _local.worker = ClusterWorker(next(_slots), Stop(), _stage)
        dedicate_this_thread()
    worker.stop = _run_stop(run)
    return worker


@dataclass(frozen=True)
class Failure:
    """A task's own error on a worker, as the client re-raises it."""

    error: BaseException
    host: str


def run_batch(run: str, tasks: list[tuple[Any, Task]], version: str) -> list[tuple[Any, Any]]:
    """Run ``tasks`` in order on this worker; ``(key, value)`` of each that finished (a task's
    error as a ``Failure``). Stops at the run's Stop: the rest are left out. ``version``: the
    client's grader; a worker with another one (say, one that joined after the start) refuses."""
    if version != __version__:
        raise GraderError(f"the Dask worker on {socket.gethostname()} runs grader {__version__}, this machine {version}: "
                          "install the same version everywhere")  # fmt: skip
    worker = _worker(run)
    out: list[tuple[Any, Any]] = []
    for key, task in tasks:
        if worker.stop.is_set():
            break
        try:
            out.append((key, task(worker)))
        except Stopped:
            break
        except Exception as e:  # the client raises it, as a local run does
            try:
                pickle.dumps(e)
            except Exception:
                e = RuntimeError(f"{type(e).__name__}: {e}")
            out.append((key, Failure(e, worker.host)))
    return out


def stop_run(run: str, reason: str) -> None:
    """Set ``run``'s Stop on this worker: its scripts are killed, its batches end."""
    _run_stop(run).set(reason)


def forget_run(run: str) -> None:
    with _lock:
        _stops.pop(run, None)


def about() -> dict[str, str]:
    """What the client checks of a worker: grader's version and the machine."""
    return {"grader": __version__, "host": socket.gethostname(), "python": sys.version.split()[0]}


# --- on the client -------------------------------------------------------------------------


@dataclass
class _Batch:
    keys: list[Any]
    tasks: list[tuple[Any, Task]]
    future: Any = None


class DaskExecutor(Executor):
    """Tasks run in batches on the workers of a Dask cluster; results come back by batch.

    Give a connected ``distributed.Client`` (left open at the end), or use ``connect``.
    ``batch``: tasks in one Dask task at most (fewer when there are few tasks per worker
    thread); ``retries``: times Dask runs a batch again after an error on the worker.
    """

    def __init__(self, client: Any, stop: Stop | None = None, *, batch: int = MAX_BATCH, retries: int = 1,
                 cluster: Any = None, own_client: bool = False):  # fmt: skip
        super().__init__(stop)
        self.client, self.batch, self.retries = client, max(1, batch), retries
        self.address = str(getattr(client.scheduler, "address", "") or "")
        self._cluster, self._own_client = cluster, own_client
        self._run = "grader-" + secrets.token_hex(8)
        self._count = itertools.count()
        self._buffer: list[tuple[Any, Task]] = []
        self._live: dict[Any, _Batch] = {}  # key -> its batch, until its result is yielded or dropped
        self._batches: dict[str, _Batch] = {}  # Dask key -> batch, while its future is wanted
        self._cancelled: set[str] = set()  # Dask keys we cancelled ourselves
        self._done: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._ready: collections.deque[tuple[Any, Any]] = collections.deque()  # taken, not yet yielded
        self._threads: tuple[float, int] = (0.0, 1)  # (when asked, worker threads)
        self.lost: str | None = None  # set when the scheduler went away
        self._stopped_at: float | None = None  # when results() first waited after a stop
        self._closed = False
        self.stop.watch(("dask", self._run), self._stop_workers)

    @classmethod
    def connect(cls, address: str, config: ClusterConfig | None = None, stop: Stop | None = None,
                timeout: float | None = None, **options: Any) -> DaskExecutor:  # fmt: skip
        """Connect to the scheduler at ``address`` (tcp://, tls:// with ``config``'s certificates),
        or start a local cluster of N one-thread worker processes for 'local:N'. Raises
        GraderError with the reason when it cannot (not installed, unreachable, certificates)."""
        address = check_address(address)
        distributed = _import_distributed()
        security = _security(address, config)
        if timeout is None:
            timeout = config.connect_seconds if config is not None else CONNECT_SECONDS
        if address.startswith("tcp://"):
            check_peer(address, timeout)
        cluster = None
        try:
            if address.startswith(LOCAL):
                # The local scheduler's HTTP port moves when 8787 is taken: nothing to warn about here.
                warnings.filterwarnings("ignore", message="Port 8787 is already in use", category=UserWarning)
                with _no_sigint():  # Ctrl-C in a terminal reaches the whole process group: the client handles it
                    cluster = distributed.LocalCluster(
                        n_workers=int(address[len(LOCAL) :]), threads_per_worker=1, processes=True,
                        dashboard_address=None, worker_dashboard_address=None, host="127.0.0.1", scheduler_port=0,
                        silence_logs=logging.CRITICAL,
                    )  # fmt: skip
                client = distributed.Client(cluster, set_as_default=False, timeout=timeout)
            else:
                client = distributed.Client(address, security=security, set_as_default=False, timeout=timeout)
        except (
            OSError,
            TimeoutError,
            MemoryError,
            ValueError,
        ) as e:  # MemoryError: a peer's reply read as a frame size
            if cluster is not None:
                cluster.close()
            hint = (
                "is 'dask scheduler' running there with certificates signed by the authority in cluster: ca_file?"
                if address.startswith("tls://")
                else "is 'dask scheduler' running there (without TLS: else use tls://), and the port open to this machine?"
            )
            raise GraderError(f"cannot reach the Dask scheduler at {address} within {timeout:g} s ({_short(e)}): {hint}") from None  # fmt: skip
        ex = cls(client, stop, cluster=cluster, own_client=True, **options)
        try:
            ex.check_workers()
        except BaseException:
            ex.close()
            raise
        return ex

    def check_workers(self) -> dict[str, dict[str, str]]:
        """Each worker's grader version and machine; GraderError when a worker cannot run
        grader tasks (grader missing, or another version)."""
        try:
            found = self.client.run(about)
        except (ImportError, AttributeError) as e:
            raise GraderError(f"the Dask workers cannot run grader ({_short(e)}): install grader {__version__} "
                              f"with '{INSTALL}' on every worker machine") from None  # fmt: skip
        other = {info["grader"] for info in found.values()} - {__version__}
        if other:
            raise GraderError(f"the Dask workers run grader {', '.join(sorted(other))}, this machine {__version__}: "
                              "install the same version everywhere")  # fmt: skip
        return found

    def workers(self) -> int:
        """Worker threads in the cluster now."""
        return sum(self.client.nthreads().values())

    # --- the executor interface ---

    def submit(self, key: Any, task: Task) -> None:
        self._buffer.append((key, task))

    def pending(self) -> int:
        if self.lost:
            return len(self._ready)  # what is still out there will never come back
        return len(self._buffer) + len(self._live) + len(self._ready)

    def _keys(self) -> list[Any]:
        return [k for k, _ in self._buffer] + list(self._live)

    def results(self) -> Iterator[tuple[Any, Any]]:
        while True:
            while self._ready:  # a batch's results, one at a time: a caller may stop after any of them
                yield self._ready.popleft()
            self._flush()
            if not self._live or self.lost:
                return
            future = self._next()
            if future is None:
                continue
            batch = self._batches.pop(future.key, None)
            if batch is None:
                continue  # dropped by cancel(), or taken already
            if future.status == "cancelled" and future.key not in self._cancelled:
                self._lose(f"the Dask scheduler at {self.address} went away")
                return
            self._ready.extend(self._take(batch, future))

    def _next(self) -> Any:
        """The next finished batch future; None now and then, to look at the client's state."""
        try:
            return self._done.get(timeout=1.0)
        except queue.Empty:
            if self.client.status in ("closing", "closed"):
                self._lose(f"the Dask scheduler at {self.address} went away")
            elif self.stop.is_set():  # a frozen scheduler or worker must not hold the stop forever
                self._stopped_at = self._stopped_at or time.monotonic()
                if time.monotonic() - self._stopped_at > DRAIN_SECONDS:
                    self.lost = f"the Dask cluster at {self.address} did not end its batches within {DRAIN_SECONDS:g} s"
            return None

    def _take(self, batch: _Batch, future: Any) -> Iterator[tuple[Any, Any]]:
        try:
            results = future.result()
        except Exception as e:
            if type(e).__name__ == "KilledWorker":
                results = self._killed(batch, e)
            elif isinstance(e, GraderError):
                raise
            else:
                raise GraderError(f"a batch of tasks failed on the cluster: {_short(e)}") from None
        finished = set()
        for key, value in results:
            if self._live.get(key) is not batch:
                continue  # dropped, or taken from another run of the batch
            del self._live[key]
            finished.add(key)
            if isinstance(value, Failure):
                error = value.error
                if isinstance(error, GraderError):
                    raise error
                raise GraderError(f"a task failed on the cluster worker {value.host}: {_short(error)}") from error
            yield key, value
        left_out = [k for k in batch.keys if k not in finished and self._live.get(k) is batch]
        for key in left_out:  # left out by a stop on the worker: they yield nothing
            del self._live[key]
        if left_out and not self.stop.is_set():
            raise GraderError(f"a batch came back from the cluster without {len(left_out)} of its results, "
                              "though the run was not stopped: run again with --resume")  # fmt: skip

    def _killed(self, batch: _Batch, error: Exception) -> list[tuple[Any, Any]]:
        """A batch that took workers down with it: its tasks again one by one, to find which;
        a single test that does is a crashed test."""
        if len(batch.tasks) > 1:
            for key, task in batch.tasks:
                if self._live.get(key) is batch:
                    self._send(_Batch([key], [(key, task)]))
            return []
        ((key, task),) = batch.tasks
        lost = getattr(task, "lost", None)
        if lost is None:
            raise GraderError(f"a task killed {_short(error)}") from None
        return [(key, lost("it took down the Dask worker running it, every time it was run"))]

    def _flush(self) -> None:
        """Send what was submitted, in batches: about 4 per worker thread, at most ``batch`` tasks each."""
        if not self._buffer:
            return
        tasks, self._buffer = self._buffer, []
        size = max(1, min(self.batch, math.ceil(len(tasks) / (4 * self._worker_threads()))))
        for i in range(0, len(tasks), size):
            part = tasks[i : i + size]
            self._send(_Batch([k for k, _ in part], part))

    def _send(self, batch: _Batch) -> None:
        name = f"{self._run}-{next(self._count)}"
        for key in batch.keys:
            self._live[key] = batch
        self._batches[name] = batch
        batch.future = self.client.submit(
            run_batch, self._run, batch.tasks, __version__, key=name, pure=False, retries=self.retries
        )
        batch.future.add_done_callback(self._done.put)

    def _worker_threads(self) -> int:
        asked, n = self._threads
        if time.monotonic() - asked > 5:
            n = max(1, _in_time(self.workers, 5.0) or 1)
            self._threads = (time.monotonic(), n)
        return n

    def cancel(self, keys: Iterable[Any]) -> set[Any]:
        keys = set(keys)
        dropped = {k for k, _ in self._buffer if k in keys}
        self._buffer = [(k, t) for k, t in self._buffer if k not in keys]
        hit = {self._live[k].future.key: self._live[k] for k in keys if k in self._live}
        if not hit or self.lost:
            return dropped
        processing = _in_time(
            self.client.processing, 5.0
        )  # batches a worker has started finish; the others are taken back
        if processing is None:
            return dropped
        started = {key for keys_ in processing.values() for key in keys_}
        for name, batch in hit.items():
            if name in started or name not in self._batches:
                continue
            self._cancelled.add(name)
            del self._batches[name]
            batch.future.cancel()
            rest = [(k, t) for k, t in batch.tasks if k not in keys and self._live.get(k) is batch]
            for k in batch.keys:
                if self._live.get(k) is batch:
                    del self._live[k]
                    if k in keys:
                        dropped.add(k)
            if rest:
                self._send(_Batch([k for k, _ in rest], rest))
        return dropped

    def _lose(self, reason: str) -> None:
        self.lost = reason
        self.stop.set(reason)

    def _stop_workers(self) -> None:
        """The run stopped: every worker kills its scripts and ends its batches of this run."""
        if self.lost or self.client.status != "running":
            return
        _in_time(lambda: self.client.run(stop_run, self._run, self.stop.reason or "interrupted"), 5.0)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self.stop.unwatch(("dask", self._run))
        for batch in list(self._batches.values()):
            batch.future.cancel()
        self._batches.clear()
        if self.client.status == "running":
            _in_time(lambda: self.client.run(forget_run, self._run), 5.0)
        if self._own_client:
            _in_time(lambda: self.client.close(timeout=5), 6.0)
            if self._cluster is not None:
                _in_time(self._cluster.close, 10.0)


@contextlib.contextmanager
def _no_sigint() -> Iterator[None]:
    """SIGINT held back from this thread while local worker processes start: they inherit it
    blocked, so Ctrl-C stops the run through the client (which stops the workers' scripts)
    instead of killing the workers. Held back, not ignored: a Ctrl-C meanwhile is answered
    (by the thread it reaches, or here once it is let through), never lost."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def quiet() -> None:
    """Keep distributed's log lines (lost workers, reconnections) off the terminal: the
    command says what matters in its own words."""
    logger = logging.getLogger("distributed")
    for handler in logger.handlers:
        handler.setLevel(logging.CRITICAL + 1)
    for name in list(logging.root.manager.loggerDict):
        if name.startswith("distributed"):
            logging.getLogger(name).setLevel(logging.CRITICAL + 1)


def _in_time(call: Any, seconds: float) -> Any:
    """``call()`` on a thread, waiting at most ``seconds`` (a cluster that went away or froze
    must not hang the client); None when it errs or takes longer."""
    out: list[Any] = []

    def run() -> None:
        try:
            out.append(call())
        except Exception:
            pass

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    return out[0] if out else None


def _security(address: str, config: ClusterConfig | None) -> Any:
    """Dask's Security for a tls:// address from the certificate settings; None for tcp://."""
    files = {k: getattr(config, k, None) for k in ("ca_file", "cert", "key")}
    given = {k: v for k, v in files.items() if v}
    if not address.startswith("tls://"):
        if given and not address.startswith(LOCAL):
            raise GraderError(f"TLS certificates are set (cluster: {', '.join(given)}) but the address {address} "
                              "is not tls://: use tls://HOST:PORT")  # fmt: skip
        return None
    missing = [k for k in files if not files[k]]
    if missing:
        raise GraderError(
            f"a tls:// address needs cluster: ca_file, cert and key in config.yaml; missing: {', '.join(missing)}"
        )
    for k, path in files.items():
        if not Path(str(path)).is_file():
            raise GraderError(f"TLS file '{path}' (cluster: {k}) not found")
    from distributed.security import Security

    return Security(tls_ca_file=files["ca_file"], tls_client_cert=files["cert"], tls_client_key=files["key"],
                    require_encryption=True)  # fmt: skip


def _short(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0]}" if text else type(error).__name__


def connect(address: str, config: ClusterConfig | None = None, stop: Stop | None = None,
            timeout: float | None = None) -> DaskExecutor:  # fmt: skip
    """A ``DaskExecutor`` on the cluster at ``address`` (see ``DaskExecutor.connect``)."""
    return DaskExecutor.connect(address, config, stop, timeout)
