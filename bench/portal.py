"""Portal benchmark: the deadline rush of issue 36 over real HTTP, with a server and a worker
killed (SIGKILL) in its middle and restarted, then ``grader grade`` of the same scripts.

Run: python bench/portal.py                     (the issue's rush: 300 students x 3 over 300 s)
     python bench/portal.py --students 20 --per-student 2 --window 30   (a quick run)
     python bench/portal.py --slow 0.1 --kill-at 0  (the rush twice: 10% of its uploads
         submissions/slow.py, timing out on every test, then the same rush without them)

The demo course's Othello lab (10 tests, 4 public) in a temporary folder; a ``grader serve
--workers 0`` process serves the pages and ``--worker-processes`` ``grader worker``
processes (one by default, of ``--worker-threads`` grading threads sharing its job slots)
grade from the same SQLite database. Each simulated student signs in with its
one-time link (real HTTP, real sign-in) and uploads the lab
``--per-student`` times (negamax.py and wrong_score.py in turn) at random moments over
``--window`` seconds; as a browser does, it opens the receipt's page, listens to its
submission's events (``/s/ID/events``, the live update) until graded, and reloads the page;
a reader asks the pages that do not grade (the assignment page, the home page, the class table
as JSON and HTML) meanwhile, a round every ``--read-every`` seconds. At ``--kill-at``
of the window the server and one worker are killed with SIGKILL and started again (the
server on the same port: the students' session cookies still hold); a student whose upload
got no answer uploads again, as a person would.

Printed: per submission, the time from upload to public feedback (median, p95: to the graded
page reloaded); the pages' response times (median, p95; the target is p95 < 200 ms), and
p50 and p95 of each kind (the students' submission pages among them), and
how many were refused while the server was down; the portal's throughput (graded a minute,
from the first upload to the last feedback) against ``grader grade`` (``grade_class``) of
the same scripts on the same cores (with --window 0, every upload at once, the two compare;
over a window the portal waits for the uploads); the CPU time of the rush (the server's, the
simulated clients', the rest); the peak memory of the server and of the
workers (VmHWM, with their scripts'); and the exactly-once check against the database and
the upload receipts: every receipt graded, each submission's result written once (its
``gradings``), no job left, no upload counted twice.

With ``--slow F``: the rush is run twice, each on a course and database of its own: once with
a fraction F of its uploads (the same ones, chosen at random) replaced by submissions/slow.py,
which runs to the time limit on every test (10 tests of 10 s), and once without those uploads;
printed: the other uploads' median (and p95) upload-to-feedback time in each and their ratio
(the target: within 1.5x), and the slow ones' own. The ``grader grade`` comparison is skipped.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from grader.grading.run import grade_class
from grader.portal.course.course import load_course, make_demo_course

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = [ROOT / "submissions" / "negamax.py", ROOT / "submissions" / "wrong_score.py"]
SLOW = ROOT / "submissions" / "slow.py"  # prints its move, then runs to the time limit: every test a T
NORMAL, SLOWED, LEFT_OUT = "normal", "slow", "left out"  # what an upload of the rush sends


def p95(values: list[float]) -> float:
    return sorted(values)[max(0, round(0.95 * len(values)) - 1)] if values else float("nan")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pid: int) -> float:
    """The process's own CPU time so far (user and system, its children's left out)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def machine_cpu_seconds() -> float:
    """CPU time the machine spent busy so far, on all its cores (/proc/stat: all but idle and iowait)."""
    ticks = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
    return (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")


def peak_memory_mb(pid: int) -> float:
    """The process's peak resident memory (VmHWM) with its children's (ps: their RSS now)."""
    try:
        own = next(int(line.split()[1]) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
                   if line.startswith("VmHWM:"))  # fmt: skip
    except (OSError, StopIteration):
        return float("nan")
    found = subprocess.run(["ps", "-o", "rss=", "--ppid", str(pid)], capture_output=True, text=True).stdout.split()
    return (own + sum(int(x) for x in found)) / 1024


@dataclass
class Processes:
    """The server and the workers: started, killed, started again."""

    course: Path
    cwd: Path
    database: str
    port: int
    lease: float
    nice: int = 10
    threads: int = 2  # each worker's grading threads (its --workers)
    server: subprocess.Popen | None = None
    workers: list[subprocess.Popen] = field(default_factory=list)
    peaks: dict[str, float] = field(default_factory=dict)
    server_cpu: float = 0.0  # CPU seconds of the servers stopped or killed so far
    link: str = ""

    def start_server(self) -> None:
        self.server = subprocess.Popen(
            [sys.executable, "-m", "grader", "serve", str(self.course), "--port", str(self.port), "--workers", "0",
             "--database", self.database], cwd=self.cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )  # fmt: skip
        lines = []
        assert self.server.stdout is not None
        for line in self.server.stdout:
            lines.append(line)
            m = re.match(r"One-time sign-in link for \S+: (http://\S+)", line)
            if m:
                self.link = m.group(1)
                threading.Thread(target=lambda out=self.server.stdout: [None for _ in out], daemon=True).start()
                return
        raise SystemExit("the server did not start:\n" + "".join(lines))

    def start_worker(self) -> subprocess.Popen:
        proc = subprocess.Popen(
            [sys.executable, "-m", "grader", "worker", str(self.course), "--database", self.database,
             "--lease", str(self.lease), "--nice", str(self.nice), "--workers", str(self.threads)], cwd=self.cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )  # fmt: skip
        assert proc.stdout is not None
        lines = []
        for line in proc.stdout:
            lines.append(line)
            if line.startswith("Worker "):
                threading.Thread(target=lambda out=proc.stdout: [None for _ in out], daemon=True).start()
                self.workers.append(proc)
                return proc
        raise SystemExit("a worker did not start:\n" + "".join(lines))

    def note_memory(self) -> None:
        if self.server is not None:
            self.peaks["server"] = max(self.peaks.get("server", 0.0), peak_memory_mb(self.server.pid))
        for w in self.workers:
            self.peaks["worker"] = max(self.peaks.get("worker", 0.0), peak_memory_mb(w.pid))

    def kill_and_restart(self) -> None:
        """SIGKILL the server and the first worker, then start both again."""
        self.note_memory()
        assert self.server is not None
        self.server_cpu += cpu_seconds(self.server.pid)
        self.server.kill()
        self.server.wait()
        doomed = self.workers.pop(0)
        doomed.kill()
        doomed.wait()
        self.start_server()
        self.start_worker()

    def stop(self) -> None:
        self.note_memory()
        if self.server is not None and self.server.poll() is None:
            self.server_cpu += cpu_seconds(self.server.pid)
        for proc in [self.server, *self.workers]:
            if proc is not None and proc.poll() is None:
                proc.terminate()
                proc.wait(60)


def sign_in(url: str, link: str) -> httpx.Client:
    c = httpx.Client(base_url=url, headers={"Accept": "application/json"}, timeout=120)
    path = link[len(url) :]
    csrf = c.get(path).json()["csrf"]
    c.post(path, data={"csrf": csrf}).raise_for_status()
    c.headers["X-CSRF-Token"] = c.get("/").json()["csrf"]
    return c


@dataclass
class Tally:
    """What the simulated clients saw."""

    feedback: list[float] = field(default_factory=list)
    slow_feedback: list[float] = field(default_factory=list)  # the slow script's uploads' (--slow)
    pages: dict[str, list[float]] = field(default_factory=dict)  # path -> response times
    receipts: list[str] = field(default_factory=list)
    unanswered: int = 0  # uploads whose answer the killed server never sent (uploaded again)
    refused_pages: int = 0  # page requests that failed while the server was down
    last_feedback: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)


def retrying(call, tally: Tally | None = None):  # type: ignore[no-untyped-def]
    """``call()`` again until the server answers (it may be down between its kill and restart)."""
    while True:
        try:
            return call()
        except httpx.TransportError:
            if tally is not None:
                with tally.lock:
                    tally.refused_pages += 1
            time.sleep(0.2)


HTML = {"Accept": "text/html"}


def look(c: httpx.Client, path: str, kind: str, tally: Tally) -> None:
    """A page as a browser asks for it (HTML), its response time kept under ``kind``."""
    asked = time.monotonic()
    retrying(lambda: c.get(path, headers=HTML).raise_for_status(), tally)
    with tally.lock:
        tally.pages.setdefault(kind, []).append(time.monotonic() - asked)


def final_status(c: httpx.Client, sid: str) -> str | None:
    """Listen to the submission's events, as its page does, until its status is final (None:
    the stream ended first: the server stopped)."""
    with c.stream("GET", f"/s/{sid}/events", headers={"Accept": "text/event-stream"}) as r:
        r.raise_for_status()
        for line in r.iter_lines():
            if line in ("data: graded", "data: failed"):
                return line.removeprefix("data: ")
    return None


def student(c: httpx.Client, moments: list[float], t0: float, tally: Tally, kinds: list[str]) -> None:
    for k, at in enumerate(moments):
        if kinds[k] == LEFT_OUT:
            continue
        time.sleep(max(0.0, t0 + at - time.monotonic()))
        script = SLOW if kinds[k] == SLOWED else SCRIPTS[k % 2]
        start = time.monotonic()
        while True:
            try:
                r = c.post("/a/othello", files={"script": (script.name, script.read_bytes())})
                break
            except httpx.ConnectError:  # the server is down: not sent, try again once it is back
                time.sleep(0.5)
            except httpx.TransportError:  # the server was killed with the upload in flight: upload again
                with tally.lock:
                    tally.unanswered += 1
                time.sleep(0.5)
        r.raise_for_status()
        sid = r.json()["id"]
        with tally.lock:
            tally.receipts.append(sid)
        look(c, f"/s/{sid}", "GET /s/ID (the receipt's page)", tally)
        while retrying(lambda: final_status(c, sid)) is None:  # its event stream broke: the server restarting
            time.sleep(0.2)
        look(c, f"/s/{sid}", "GET /s/ID (the page reloaded, graded)", tally)
        with tally.lock:
            (tally.slow_feedback if kinds[k] == SLOWED else tally.feedback).append(time.monotonic() - start)
            tally.last_feedback = time.monotonic()


READS = [  # (kind, whose, path, headers): what the reader asks in turn
    ("GET /a/othello (JSON)", "student", "/a/othello", {}),
    ("GET / (JSON)", "student", "/", {}),
    ("GET /class (JSON)", "instructor", "/class", {}),
    ("GET /class (HTML)", "instructor", "/class", HTML),
]


def reader(student_c: httpx.Client, instructor: httpx.Client, every: float, done: threading.Event,
           tally: Tally) -> None:  # fmt: skip
    """The pages that do not grade, each asked once every ``every`` seconds (a student and the
    instructor clicking through them), until ``done``."""
    while not done.is_set():
        started = time.monotonic()
        for kind, whose, path, headers in READS:
            c = student_c if whose == "student" else instructor
            start = time.monotonic()
            try:
                c.get(path, headers=headers).raise_for_status()
            except httpx.TransportError:
                with tally.lock:
                    tally.refused_pages += 1
                time.sleep(0.2)
                continue
            with tally.lock:
                tally.pages.setdefault(kind, []).append(time.monotonic() - start)
        done.wait(max(0.0, started + every - time.monotonic()))


def exactly_once(database: Path, receipts: list[str]) -> list[str]:
    """What the database says against the receipts: problems found (none: exactly once)."""
    problems = []
    with sqlite3.connect(database) as db:
        rows = {sid: (status, n) for sid, status, n in db.execute("SELECT id, status, gradings FROM submissions")}
        jobs = db.execute("SELECT count(*) FROM jobs").fetchone()[0]
        counted = db.execute("SELECT coalesce(sum(count), 0) FROM daily_counts").fetchone()[0]
    if len(set(receipts)) != len(receipts):
        problems.append("a receipt was given twice")
    for sid in receipts:
        if sid not in rows:
            problems.append(f"receipt {sid}: no such submission (lost)")
        elif rows[sid] != ("graded", 1):
            problems.append(f"receipt {sid}: {rows[sid][0]}, its result written {rows[sid][1]} times")
    extra = set(rows) - set(receipts)
    for sid in extra:  # an upload the killed server took without answering: still graded once
        if rows[sid] != ("graded", 1):
            problems.append(f"upload {sid} (no receipt): {rows[sid][0]}, its result written {rows[sid][1]} times")
    if jobs:
        problems.append(f"{jobs} jobs left in the queue")
    if counted != len(rows):
        problems.append(f"{counted} uploads counted for {len(rows)} submissions")
    return problems


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--students", type=int, default=300)
    ap.add_argument("--per-student", type=int, default=3)
    ap.add_argument("--window", type=float, default=300.0, help="Seconds over which the uploads are spread.")
    ap.add_argument("--worker-processes", type=int, default=1, help="grader worker processes.")
    ap.add_argument("--worker-threads", type=int, default=2,
                    help="Each worker's grading threads (its --workers), sharing its job slots.")  # fmt: skip
    ap.add_argument("--kill-at", type=float, default=0.5,
                    help="When to SIGKILL the server and a worker, as a fraction of the window (0: never).")  # fmt: skip
    ap.add_argument("--lease", type=float, default=10.0, help="The workers' --lease (seconds).")
    ap.add_argument("--read-every", type=float, default=1.0,
                    help="Seconds between the reader's rounds of the pages that do not grade (0: back to back).")  # fmt: skip
    ap.add_argument(
        "--nice", type=int, default=10, help="The workers' --nice (their grading's CPU weight below the pages')."
    )
    ap.add_argument("--no-grade", action="store_true", help="Skip the grader grade comparison.")
    ap.add_argument("--slow", type=float, default=0.0,
                    help="The fraction of the uploads that time out on every test: the rush with them, "
                         "then without them, the others' feedback times compared.")  # fmt: skip
    args = ap.parse_args()
    rand = random.Random(1)
    plans = [sorted(rand.uniform(0, args.window) for _ in range(args.per_student)) for _ in range(args.students)]
    if not args.slow:
        rush(args, plans, [[NORMAL] * len(m) for m in plans], args.no_grade)
        return
    uploads = [(i, k) for i, m in enumerate(plans) for k in range(len(m))]
    slowed = set(random.Random(2).sample(uploads, max(1, round(args.slow * len(uploads)))))
    print(f"--- the rush with {len(slowed)} of its {len(uploads)} uploads timing out on every test ({SLOW.name})")
    with_slow = rush(args, plans, [[SLOWED if (i, k) in slowed else NORMAL for k in range(len(m))]
                                   for i, m in enumerate(plans)], True)  # fmt: skip
    print(f"--- the same rush without those {len(slowed)} uploads")
    without = rush(args, plans, [[LEFT_OUT if (i, k) in slowed else NORMAL for k in range(len(m))]
                                 for i, m in enumerate(plans)], True)  # fmt: skip
    ratio = statistics.median(with_slow.feedback) / statistics.median(without.feedback)
    print(f"slow scripts: the other {len(with_slow.feedback)} uploads' feedback median "
          f"{statistics.median(with_slow.feedback):.2f} s (p95 {p95(with_slow.feedback):.2f} s) with "
          f"{len(slowed)} slow uploads ({100 * args.slow:g}%) against {statistics.median(without.feedback):.2f} s "
          f"(p95 {p95(without.feedback):.2f} s) without them: {ratio:.2f}x (target: within 1.5x); "
          f"the slow ones' own median {statistics.median(with_slow.slow_feedback):.1f} s")  # fmt: skip
    if ratio > 1.5:
        raise SystemExit(1)


def rush(args: argparse.Namespace, plans: list[list[float]], kinds: list[list[str]], no_grade: bool) -> Tally:
    """One rush on a course and database of its own: each student's uploads at the moments of
    ``plans``, of the kinds ``kinds`` says; what it saw printed; the clients' tally."""
    load = os.getloadavg()[0]  # the machine's load before the bench: it is shared
    tmp = Path(tempfile.mkdtemp(prefix="grader-bench-portal-"))
    procs: Processes | None = None
    try:
        course = make_demo_course(tmp / "course")
        emails = [f"s{i}@example.edu" for i in range(args.students)]
        (course / "roster.csv").write_text("Email,Name\n" + "".join(f"{e},{e}\n" for e in emails))
        per_day = 2 * args.per_student  # room for an upload sent again after the kill
        (course / "course.yaml").write_text((course / "course.yaml").read_text().replace("per_day: 10",
                                                                                         f"per_day: {per_day}"))  # fmt: skip
        database = tmp / "portal.sqlite3"
        procs = Processes(course, tmp, f"sqlite:///{database}", free_port(), args.lease, args.nice,
                          args.worker_threads)  # fmt: skip
        procs.start_server()
        url = f"http://127.0.0.1:{procs.port}"
        for _ in range(args.worker_processes):
            procs.start_worker()
        instructor = sign_in(url, procs.link)
        links = instructor.post("/class/links").json()["links"]
        clients = [sign_in(url, entry["link"]) for entry in links]
        tally, done = Tally(), threading.Event()
        t0, machine0, clients0 = time.monotonic(), machine_cpu_seconds(), time.process_time()
        threads = [threading.Thread(target=student, args=(c, m, t0, tally, kind))
                   for c, m, kind in zip(clients, plans, kinds)]  # fmt: skip
        watcher = threading.Thread(target=reader, args=(clients[0], instructor, args.read_every, done, tally))
        watcher.start()
        for t in threads:
            t.start()
        killed_at = None
        if args.kill_at > 0:
            time.sleep(max(0.0, t0 + args.kill_at * args.window - time.monotonic()))
            killed_at = time.monotonic() - t0
            procs.kill_and_restart()
        while any(t.is_alive() for t in threads):
            procs.note_memory()
            time.sleep(1.0)
        done.set()
        watcher.join()
        machine, clients = machine_cpu_seconds() - machine0, time.process_time() - clients0
        procs.stop()
        first = min(m[0] for m in plans)
        busy = tally.last_feedback - t0 - first
        n = len(tally.feedback) + len(tally.slow_feedback)
        print(f"{args.students} students x {args.per_student} uploads over {args.window:g} s, "
              f"{args.worker_processes} worker processes of {args.worker_threads} grading threads at nice {args.nice}, SQLite, {os.cpu_count()} cores "
              f"(load average before: {load:.1f}): {n} graded, the last {busy + first:.1f} s in")  # fmt: skip
        if killed_at is not None:
            print(f"SIGKILL of the server and a worker at {killed_at:.1f} s, both started again; "
                  f"{tally.unanswered} uploads unanswered by the killed server, sent again")  # fmt: skip
        print(f"upload to public feedback: median {statistics.median(tally.feedback):.2f} s, "
              f"p95 {p95(tally.feedback):.2f} s (told by its page's event stream, the page reloaded)"
              + (f"; the {len(tally.slow_feedback)} slow uploads' median {statistics.median(tally.slow_feedback):.1f} s"
                 if tally.slow_feedback else ""))  # fmt: skip
        pages = [t for times in tally.pages.values() for t in times]
        print(f"pages that do not grade ({len(pages)} answered): median {1000 * statistics.median(pages):.0f} ms, "
              f"p95 {1000 * p95(pages):.0f} ms (target < 200 ms); "
              f"{tally.refused_pages} requests refused while the server was down")  # fmt: skip
        for kind, times in sorted(tally.pages.items()):
            print(f"  {kind}: {len(times)} answered, p50 {1000 * statistics.median(times):.0f} ms, "
                  f"p95 {1000 * p95(times):.0f} ms")  # fmt: skip
        print(f"CPU over the rush: {machine:.0f} s on {os.cpu_count()} cores in {time.monotonic() - t0:.0f} s; "
              f"the server {procs.server_cpu:.0f} s, the simulated clients {clients:.0f} s, "
              f"the rest (the workers, their scripts, anything else) {machine - procs.server_cpu - clients:.0f} s")  # fmt: skip
        print(f"load average after the rush: {os.getloadavg()[0]:.1f} (the machine's, with whatever else ran on it)")
        print(f"peak memory: server {procs.peaks.get('server', float('nan')):.0f} MB, "
              f"a worker with its scripts {procs.peaks.get('worker', float('nan')):.0f} MB")  # fmt: skip
        problems = exactly_once(database, tally.receipts)
        print(
            f"exactly once: {len(tally.receipts)} receipts, "
            + ("every one graded once, nothing lost or doubled" if not problems else "; ".join(problems[:10]))
        )
        if not no_grade:
            klass = tmp / "class"
            klass.mkdir()
            for i, script in enumerate(SCRIPTS[k % 2] for m in plans for k in range(len(m))):  # no --slow here
                shutil.copy(script, klass / f"s{i:04d}.py")
            loaded = load_course(course)
            lab = loaded.assignments["othello"]
            start = time.monotonic()
            grade_class([klass], lab.plan, loaded.settings(lab), out=tmp / "run", exports=False)
            alone = time.monotonic() - start
            print(f"throughput: the portal {60 * n / busy:.1f} a minute (first upload to last feedback), "
                  f"grader grade of the same {n} scripts {60 * n / alone:.1f} a minute ({alone:.1f} s): "
                  f"{100 * alone / busy:.0f}%"
                  + ("" if args.window == 0 else " (uploads spread over the window: --window 0 compares throughputs)"))  # fmt: skip
        if problems:
            raise SystemExit(1)
        return tally
    finally:
        if procs is not None:
            procs.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
