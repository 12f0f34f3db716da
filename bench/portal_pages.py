"""Portal pages benchmark: each page's response time and the server's CPU time per request on a
class of --students students with --per-student graded submissions each, no grading under way.

Run: python bench/portal_pages.py                        (300 students x 3, 40 requests a page)
     python bench/portal_pages.py --students 60 --requests 20

The demo course's Othello lab, one submission graded for real (negamax.py) and its result
written for every student (as a worker writes it), then ``grader serve --workers 0`` asked
each page in turn by a student and the instructor over real HTTP. Printed per page: median
and p95 response time, the server process's CPU time per request (utime + stime from /proc,
so that a shared machine's load changes the times but hardly the CPU per request), and an HTML
page's weight: its bytes with the stylesheets and scripts it loads, before compression.
"""

from __future__ import annotations

import argparse
import os
import re
import secrets
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
from portal import ROOT, free_port, p95, sign_in

from grader.portal.course.course import load_course, make_demo_course
from grader.portal.course.sync import sync
from grader.portal.jobs.workers import grade_upload


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / 100  # utime + stime, in clock ticks of 1/100 s


def fill(course: Path, database: Path, students: int, per_student: int) -> str:
    """The class's roster synced and its graded submissions written; the id of one."""
    emails = [f"s{i}@example.edu" for i in range(students)]
    (course / "roster.csv").write_text("Email,Name\n" + "".join(f"{e},{e}\n" for e in emails))
    sync(course, f"sqlite:///{database}")
    loaded = load_course(course)
    script = (ROOT / "submissions" / "negamax.py").read_bytes()
    fb = grade_upload(loaded, loaded.assignments["othello"], "lab.py", script)
    with sqlite3.connect(database) as db:
        ids = dict(db.execute("SELECT email, id FROM users"))
        rows = [(secrets.token_urlsafe(16), ids[e], f"2026-11-27 {k:02d}:00:00.000000", len(script), script, fb.total,
                 fb.max_total, fb.symbols, fb.public_symbols, fb.public_total, fb.student_text, fb.full_text, fb.records)
                for e in emails for k in range(per_student)]  # fmt: skip
        db.executemany(
            "INSERT INTO submissions (id, user_id, assignment, received_at, late, filename, size, sha256, content, "
            "status, total, max_total, symbols, public_symbols, public_total, student_text, full_text, records, "
            "gradings) VALUES (?, ?, 'othello', ?, 0, 'lab.py', ?, '', ?, 'graded', ?, ?, ?, ?, ?, ?, ?, ?, 1)",
            rows,
        )
    return rows[0][0]


def weight(client, body: str) -> int:
    """An HTML page's bytes with the stylesheets and scripts it loads (each once), before compression."""
    linked = set(re.findall(r'<(?:link rel="stylesheet" href|script src)="(/static/[^"]+)"', body))
    return len(body.encode()) + sum(len(client.get(path).content) for path in linked)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--students", type=int, default=300)
    ap.add_argument("--per-student", type=int, default=3)
    ap.add_argument("--requests", type=int, default=40, help="Requests of each page.")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="grader-bench-pages-"))
    server = None
    try:
        course = make_demo_course(tmp / "course")
        database = tmp / "portal.sqlite3"
        sid = fill(course, database, args.students, args.per_student)
        port = free_port()
        server = subprocess.Popen(
            [sys.executable, "-m", "grader", "serve", str(course), "--port", str(port), "--workers", "0",
             "--database", f"sqlite:///{database}"], cwd=tmp, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )  # fmt: skip
        assert server.stdout is not None
        link = next(m.group(1) for line in server.stdout
                    if (m := re.match(r"One-time sign-in link for \S+: (http://\S+)", line)))  # fmt: skip
        threading.Thread(target=lambda out=server.stdout: [None for _ in out], daemon=True).start()
        url = f"http://127.0.0.1:{port}"
        staff = sign_in(url, link)
        student = sign_in(url, staff.post("/class/links", data={"email": "s0@example.edu"}).json()["links"][0]["link"])
        html = {"Accept": "text/html"}
        pages = [("GET / (JSON)", student, "/", {}), ("GET /a/othello (JSON)", student, "/a/othello", {}),
                 ("GET /a/othello (HTML)", student, "/a/othello", html), ("GET /s/ID (JSON)", student, f"/s/{sid}", {}),
                 ("GET /class (JSON)", staff, "/class", {}), ("GET /class (HTML)", staff, "/class", html),
                 ("GET /s/ID (HTML)", student, f"/s/{sid}", html), ("GET /s/ID (HTML, staff)", staff, f"/s/{sid}", html),
                 ("GET / (HTML)", student, "/", html), ("GET /class/queue (HTML)", staff, "/class/queue", html),
                 ("GET /class/othello/students/s0@example.edu (HTML)", staff, "/class/othello/students/s0@example.edu", html),
                 ("GET /arena (HTML)", student, "/arena", html), ("GET /signin (HTML)", None, "/signin", html),
                 ("GET /class.csv", staff, "/class.csv", {}), ("GET /class/queue (JSON)", staff, "/class/queue", {})]  # fmt: skip
        anonymous = httpx.Client(base_url=url)
        print(f"{args.students} students x {args.per_student} graded submissions, {args.requests} requests a page "
              f"(load average before: {os.getloadavg()[0]:.1f})")  # fmt: skip
        for name, client, path, headers in pages:
            client = client or anonymous
            first = client.get(path, headers=headers)  # warm
            first.raise_for_status()
            kb = f", {weight(client, first.text) / 1024:6.1f} KB" if "HTML" in name else ""
            times = []
            before = cpu_seconds(server.pid)
            for _ in range(args.requests):
                start = time.perf_counter()
                client.get(path, headers=headers).raise_for_status()
                times.append(time.perf_counter() - start)
            cpu = (cpu_seconds(server.pid) - before) / args.requests
            print(f"  {name:50} median {1000 * statistics.median(times):6.1f} ms, p95 {1000 * p95(times):6.1f} ms, "
                  f"server CPU {1000 * cpu:5.1f} ms a request{kb}")  # fmt: skip
    finally:
        if server is not None:
            server.terminate()
            server.wait(60)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
