"""Portal soak: a week of a course compressed into an hour, over real HTTP, with a worker killed
(SIGKILL) every few minutes and the database restarted once; is anything lost, does anything grow?

Run: python bench/portal_soak.py                 (300 students over an hour, on PostgreSQL)
     python bench/portal_soak.py --students 20 --duration 90 --uploads 1 --lab tictactoe \\
         --kill-every 40 --db-down 5 --sample 10 --browse-every 10   (a short run: the slow test's)

The demo course in a temporary folder; a ``grader serve --workers 0`` process serves the pages
and ``--worker-processes`` ``grader worker`` processes grade, on a PostgreSQL server of the
bench's own (initdb in the temporary folder; ``--sqlite`` uses SQLite instead, and then the
"restart" holds an exclusive lock on the file for ``--db-down`` seconds). Each of
``--students`` signs in with its one-time link and, at random moments over ``--duration``
seconds, uploads the lab ``--uploads`` times (negamax.py and wrong_score.py in turn for the
Othello lab, can_lose.py for tic-tac-toe) and browses: its home page, the assignment's page,
a submission's page, about once every ``--browse-every`` seconds. Every ``--kill-every``
seconds a worker is killed with SIGKILL and another started; at ``--db-restart-at`` of the
run the database is stopped for ``--db-down`` seconds (pg_ctl stop -m fast) and started
again: an upload answered 503 then is sent again after its Retry-After, as a person would.

Printed every ``--sample`` seconds: the resident memory of the server and of the workers
(VmRSS, MB; a worker started since is a new process), the pages' p95 in that interval, the
uploads taken so far and the database's size against their bytes. Then: the memory growth
after the first tenth of the run (the last sample against the sample at a tenth: the
issue's "flat after ten minutes" for the hour run), the first and last intervals' page p95,
the refusals during the database's stop, and the exactly-once check (every receipt graded,
each result written once, no job left, no upload counted twice). Exit status 1 if that
check fails.
"""

from __future__ import annotations

import argparse
import glob
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from portal import ROOT, Processes, free_port, p95, sign_in
from sqlalchemy import func, select, text

from grader.portal.course.course import make_demo_course
from grader.portal.database.db import connect, sessions
from grader.portal.database.models import DailyCount, Job, Submission

LABS = {"othello": [ROOT / "submissions" / "negamax.py", ROOT / "submissions" / "wrong_score.py"],
        "tictactoe": [ROOT / "submissions" / "tictactoe" / "can_lose.py"]}  # fmt: skip


STALLED = 600.0  # seconds without a grade after which the bench stops waiting for the queue


def rss_mb(pid: int) -> float:
    """The process's resident memory now (its children's left out: the scripts it grades)."""
    try:
        found = next(line for line in Path(f"/proc/{pid}/status").read_text().splitlines() if line.startswith("VmRSS:"))
    except (OSError, StopIteration):
        return float("nan")
    return int(found.split()[1]) / 1024


class Postgres:
    """A PostgreSQL server of the bench's own, on a Unix socket in ``folder`` (run as the postgres
    user when the bench runs as root: initdb refuses root)."""

    def __init__(self) -> None:
        found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb")) or [shutil.which("initdb") or ""]
        if not found[-1]:
            raise SystemExit("PostgreSQL is not installed (apt-get install postgresql), or use --sqlite")
        self.bin, self.folder = str(Path(found[-1]).parent), Path(tempfile.mkdtemp(prefix="grader-soak-pg-"))
        folder = self.folder
        self.as_user: list[str] = []
        if os.geteuid() == 0:
            shutil.chown(folder, "postgres", "postgres")
            self.as_user = ["runuser", "-u", "postgres", "--"]
        self._run("initdb", "-D", str(folder / "data"), "-A", "trust", "-U", "grader", "-N")
        self.start()
        admin = connect(self.url("postgres")).execution_options(isolation_level="AUTOCOMMIT")
        with admin.connect() as c:
            c.execute(text("CREATE DATABASE soak"))
        admin.dispose()

    def url(self, name: str = "soak") -> str:
        return f"postgresql://grader@/{name}?host={self.folder}"

    def _run(self, program: str, *args: str) -> None:
        done = subprocess.run([*self.as_user, f"{self.bin}/{program}", *args], capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"{program} failed: {done.stderr[-2000:]}")

    def start(self) -> None:
        self._run("pg_ctl", "-D", str(self.folder / "data"), "-l", str(self.folder / "log"), "-w", "-o",
                  f"-k {self.folder} -c listen_addresses='' -c fsync=off -c max_connections=200", "start")  # fmt: skip

    def stop(self, mode: str = "fast") -> None:
        self._run("pg_ctl", "-D", str(self.folder / "data"), "-m", mode, "-w", "stop")

    def remove(self) -> None:
        subprocess.run([*self.as_user, f"{self.bin}/pg_ctl", "-D", str(self.folder / "data"), "-m", "immediate",
                        "stop"], capture_output=True)  # fmt: skip
        shutil.rmtree(self.folder, ignore_errors=True)

    def size_mb(self) -> float:
        engine = connect(self.url())
        with engine.connect() as c:
            found = c.execute(text("SELECT pg_database_size('soak')")).scalar() or 0
        engine.dispose()
        return found / 1e6


@dataclass
class Tally:
    receipts: list[str] = field(default_factory=list)
    pages: list[tuple[float, float]] = field(default_factory=list)  # (when, seconds) of each page
    refused: int = 0  # answers 503 (the database stopped): sent again after Retry-After
    failed_pages: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


def upload(c: httpx.Client, lab: str, script: Path, tally: Tally, stop: threading.Event) -> None:
    while not stop.is_set():
        try:
            r = c.post(f"/a/{lab}", files={"script": (script.name, script.read_bytes())})
        except httpx.TransportError:
            time.sleep(1)
            continue
        if r.status_code == 503:
            with tally.lock:
                tally.refused += 1
            time.sleep(float(r.headers.get("retry-after", "5")))
            continue
        r.raise_for_status()
        with tally.lock:
            tally.receipts.append(r.json()["id"])
        return


def browse(c: httpx.Client, lab: str, mine: list[str], tally: Tally) -> None:
    for path in ("/", f"/a/{lab}", *([f"/s/{random.choice(mine)}"] if mine else [])):
        asked = time.monotonic()
        try:
            ok = c.get(path, headers={"Accept": "text/html"}).status_code == 200
        except httpx.TransportError:
            ok = False
        with tally.lock:
            if ok:
                tally.pages.append((time.monotonic(), time.monotonic() - asked))
            else:
                tally.failed_pages += 1


def exactly_once(url: str, receipts: list[str]) -> list[str]:
    engine = connect(url)
    with sessions(engine)() as s:
        rows = {sid: (status, n) for sid, status, n in s.execute(select(Submission.id, Submission.status,
                                                                        Submission.gradings))}  # fmt: skip
        jobs = s.scalar(select(func.count()).select_from(Job)) or 0
        counted = s.scalar(select(func.coalesce(func.sum(DailyCount.count), 0))) or 0
    engine.dispose()
    problems = ["a receipt was given twice"] if len(set(receipts)) != len(receipts) else []
    for sid in receipts:
        if rows.get(sid) != ("graded", 1):
            problems.append(f"receipt {sid}: {rows.get(sid, ('lost', 0))}")
    problems += [f"upload {sid} (no receipt): {rows[sid]}" for sid in set(rows) - set(receipts)
                 if rows[sid] != ("graded", 1)]  # fmt: skip
    if jobs:
        problems.append(f"{jobs} jobs left in the queue")
    if counted != len(rows):
        problems.append(f"{counted} uploads counted for {len(rows)} submissions")
    return problems


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--students", type=int, default=300)
    ap.add_argument("--duration", type=float, default=3600.0, help="Seconds of the run (uploads and browsing).")
    ap.add_argument("--uploads", type=int, default=3, help="Uploads of each student over the run.")
    ap.add_argument("--lab", choices=sorted(LABS), default="othello")
    ap.add_argument("--browse-every", type=float, default=120.0, help="Seconds between a student's page visits.")
    ap.add_argument("--worker-processes", type=int, default=2)
    ap.add_argument("--kill-every", type=float, default=300.0, help="Seconds between workers killed (0: none).")
    ap.add_argument("--db-restart-at", type=float, default=0.5, help="When the database restarts (share of the run).")
    ap.add_argument("--db-down", type=float, default=30.0, help="Seconds the database is stopped (0: no restart).")
    ap.add_argument("--lease", type=float, default=30.0, help="The workers' --lease (seconds).")
    ap.add_argument("--sample", type=float, default=60.0, help="Seconds between the printed samples.")
    ap.add_argument("--sqlite", action="store_true", help="SQLite instead of PostgreSQL (its restart: a lock).")
    ap.add_argument("--threads", type=int, default=32, help="Simulated browsers at once.")
    args = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="grader-soak-"))
    pg: Postgres | None = None
    procs: Processes | None = None
    try:
        course = make_demo_course(tmp / "course")
        (course / "roster.csv").write_text("Email,Name\n" + "".join(f"s{i}@example.edu,Student {i}\n"
                                                                      for i in range(args.students)))  # fmt: skip
        yaml = (course / "course.yaml").read_text().replace("per_day: 10", f"per_day: {args.uploads + 5}")
        (course / "course.yaml").write_text(yaml)
        if args.sqlite:
            (course / ".portal").mkdir()
            database_file = course / ".portal" / "portal.sqlite3"
            url = f"sqlite:///{database_file}"
        else:
            pg = Postgres()
            url = pg.url()
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        procs = Processes(course, tmp, url, port, args.lease)
        procs.start_server()
        for _ in range(args.worker_processes):
            procs.start_worker()
        prof = sign_in(base, procs.link)
        links = prof.post("/class/links").json()["links"]
        students = [sign_in(base, entry["link"]) for entry in links if entry["email"].startswith("s")]
        print(f"{len(students)} students signed in; {args.uploads} uploads each over {args.duration:.0f} s, "
              f"{args.worker_processes} worker processes, database {'SQLite' if args.sqlite else 'PostgreSQL'}")  # fmt: skip

        tally, stop = Tally(), threading.Event()
        t0 = time.monotonic()
        events = []  # (when, what, student index): the run's plan
        scripts = LABS[args.lab]
        for i in range(len(students)):
            events += [(random.uniform(0, args.duration * 0.9), "upload", i) for _ in range(args.uploads)]
            visits = int(args.duration / args.browse_every)
            events += [(random.uniform(0, args.duration), "browse", i) for _ in range(max(1, visits))]
        events.sort()
        mine: dict[int, list[str]] = {}
        cursor = threading.Lock()
        done = [0]

        def browser() -> None:
            while not stop.is_set():
                with cursor:
                    if done[0] >= len(events):
                        return
                    when, what, i = events[done[0]]
                    done[0] += 1
                time.sleep(max(0.0, t0 + when - time.monotonic()))
                if what == "upload":
                    before = len(tally.receipts)
                    upload(students[i], args.lab, scripts[len(mine.get(i, [])) % len(scripts)], tally, stop)
                    with tally.lock:
                        if len(tally.receipts) > before:
                            mine.setdefault(i, []).append(tally.receipts[-1])
                else:
                    browse(students[i], args.lab, mine.get(i, []), tally)

        browsers = [threading.Thread(target=browser, daemon=True) for _ in range(args.threads)]
        for b in browsers:
            b.start()

        samples: list[tuple[float, float, float, float, int, float]] = []
        restarted = args.db_down <= 0
        next_kill = args.kill_every or float("inf")
        kills = 0
        print(f"{'t (s)':>7} {'server MB':>10} {'workers MB':>11} {'page p95 ms':>12} {'uploads':>8} {'DB MB':>7} "
              f"{'upload MB':>10}")  # fmt: skip
        last_sample = 0.0
        while any(b.is_alive() for b in browsers) or time.monotonic() - t0 < args.duration:
            time.sleep(1)
            now = time.monotonic() - t0
            if now >= next_kill and procs.workers:
                doomed = procs.workers.pop(random.randrange(len(procs.workers)))
                doomed.kill()
                doomed.wait()
                procs.start_worker()
                kills += 1
                next_kill += args.kill_every
            if not restarted and now >= args.duration * args.db_restart_at:
                restarted = True
                print(f"{now:7.0f}  the database stops for {args.db_down:.0f} s")
                if pg is not None:
                    pg.stop()
                    time.sleep(args.db_down)
                    pg.start()
                else:
                    holder = sqlite3.connect(database_file, isolation_level=None)
                    holder.execute("BEGIN EXCLUSIVE")
                    time.sleep(args.db_down)
                    holder.execute("COMMIT")
                    holder.close()
            if now - last_sample >= args.sample:
                last_sample = now
                with tally.lock:
                    recent = [s for when, s in tally.pages if when - t0 >= now - args.sample]
                    taken = len(tally.receipts)
                server_mb = rss_mb(procs.server.pid) if procs.server else float("nan")
                workers_mb = sum(rss_mb(w.pid) for w in procs.workers)
                engine = connect(url)
                with sessions(engine)() as s:
                    upload_mb = (s.scalar(select(func.coalesce(func.sum(Submission.size), 0))) or 0) / 1e6
                engine.dispose()
                db_mb = pg.size_mb() if pg is not None else sum(f.stat().st_size for f in database_file.parent.glob(
                    "portal.sqlite3*")) / 1e6  # fmt: skip
                samples.append((now, server_mb, workers_mb, p95(recent) * 1000, taken, db_mb))
                print(f"{now:7.0f} {server_mb:10.1f} {workers_mb:11.1f} {p95(recent) * 1000:12.1f} {taken:8d} "
                      f"{db_mb:7.1f} {upload_mb:10.2f}", flush=True)  # fmt: skip
        for b in browsers:
            b.join()
        engine = connect(url)
        left, moved = -1, time.monotonic()
        while time.monotonic() - moved < STALLED:  # the last uploads graded, however long a backlog takes
            with sessions(engine)() as s:
                now_left = s.scalar(select(func.count()).select_from(Job)) or 0
            if not now_left:
                break
            if now_left != left:
                left, moved = now_left, time.monotonic()
            time.sleep(2)
        print(f"the queue emptied {time.monotonic() - t0 - args.duration:.0f} s after the run's end"
              if not now_left else f"{now_left} jobs still queued after {STALLED:.0f} s without a grade")  # fmt: skip
        engine.dispose()
        problems = exactly_once(url, tally.receipts)
        tenth = next((s for s in samples if s[0] >= args.duration / 10), samples[0]) if samples else None
        print()
        if tenth and samples:
            last = samples[-1]
            print(f"memory after a tenth of the run ({tenth[0]:.0f} s) to its end: server {tenth[1]:.1f} -> "
                  f"{last[1]:.1f} MB ({(last[1] - tenth[1]) / tenth[1]:+.0%}), workers {tenth[2]:.1f} -> "
                  f"{last[2]:.1f} MB ({(last[2] - tenth[2]) / tenth[2]:+.0%})")  # fmt: skip
            print(f"page p95: first interval {samples[0][3]:.1f} ms, last {last[3]:.1f} ms; pages answered "
                  f"{len(tally.pages)}, not (503 while the database was down, or no answer) {tally.failed_pages}")  # fmt: skip
            print(f"database {last[5]:.1f} MB for {len(tally.receipts)} uploads")
        print(f"workers killed: {kills}; uploads answered 503 while the database was down (sent again): "
              f"{tally.refused}")  # fmt: skip
        print("exactly once: " + ("yes: every receipt graded once, no job left, no upload counted twice"
                                  if not problems else "NO: " + "; ".join(problems[:10])))  # fmt: skip
        return 1 if problems else 0
    finally:
        if procs is not None:
            procs.stop()
        if pg is not None:
            pg.remove()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
