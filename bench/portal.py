"""Portal benchmark: a deadline rush of simulated students over real HTTP against a real
``grader serve`` process, then ``grader grade`` on the same scripts on the same cores.

Run: python bench/portal.py [--students 30] [--per-student 2] [--window 60] [--workers 1]

The demo course's Othello lab (10 tests, 4 public) in a temporary folder, each student with
its one-time sign-in link; each student uploads ``--per-student`` scripts (negamax.py and
wrong_score.py in turn) at random moments over ``--window`` seconds, and polls its
submission's page until it is graded, while a reader asks the pages that do not grade (the
assignment page, the class table) as fast as it can. Printed: per submission, the time from
upload to public feedback (median, p95); the pages' response times (median, p95); the
portal's throughput (submissions graded per minute from the first upload to the last
feedback) against ``grade_class`` of the same scripts (one student a script) on the same
cores (with --window 0, every upload at once, the two compare; over a window the portal
waits for the uploads); and the server's peak memory (its VmHWM). The issue's full rush is
--students 300 --per-student 3 --window 300.
"""

from __future__ import annotations

import argparse
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

from grader.grading.run import grade_class
from grader.portal.course import load_course, make_demo_course

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = [ROOT / "submissions" / "negamax.py", ROOT / "submissions" / "wrong_score.py"]


def p95(values: list[float]) -> float:
    return sorted(values)[max(0, round(0.95 * len(values)) - 1)]


def start_server(course: Path, cwd: Path, workers: int) -> tuple[subprocess.Popen, str, str]:
    proc = subprocess.Popen([sys.executable, "-m", "grader", "serve", str(course), "--port", "0", "--workers", str(workers)],
                            cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)  # fmt: skip
    lines = []
    for line in proc.stdout:
        lines.append(line)
        m = re.match(r"One-time sign-in link for \S+: (http://\S+)", line)
        if m:
            url = re.search(r"Portal at (http://\S+)/", "".join(lines)).group(1)
            threading.Thread(target=lambda: [None for _ in proc.stdout], daemon=True).start()
            return proc, url, m.group(1)
    raise SystemExit("the server did not start:\n" + "".join(lines))


def sign_in(url: str, link: str) -> httpx.Client:
    c = httpx.Client(base_url=url, headers={"Accept": "application/json"}, timeout=120)
    path = link[len(url) :]
    csrf = c.get(path).json()["csrf"]
    c.post(path, data={"csrf": csrf}).raise_for_status()
    c.headers["X-CSRF-Token"] = c.get("/").json()["csrf"]
    return c


def peak_memory_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--students", type=int, default=30)
    ap.add_argument("--per-student", type=int, default=2)
    ap.add_argument("--window", type=float, default=60.0, help="Seconds over which the uploads are spread.")
    ap.add_argument("--workers", type=int, default=1, help="The server's --workers.")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="grader-bench-portal-"))
    try:
        course = make_demo_course(tmp / "course")
        emails = [f"s{i}@example.edu" for i in range(args.students)]
        (course / "roster.csv").write_text("Email,Name\n" + "".join(f"{e},{e}\n" for e in emails))
        text = (course / "course.yaml").read_text().replace("per_day: 10", f"per_day: {args.per_student + 1}")
        (course / "course.yaml").write_text(text)
        server, url, link = start_server(course, tmp, args.workers)
        try:
            instructor = sign_in(url, link)
            links = instructor.post("/class/links").json()["links"]
            clients = [sign_in(url, entry["link"]) for entry in links]
            feedback: list[float] = []
            pages: list[float] = []
            lock = threading.Lock()
            done = threading.Event()
            rand = random.Random(1)
            plan = [(rand.uniform(0, args.window), c, SCRIPTS[k % 2]) for c in clients for k in range(args.per_student)]

            def student(at: float, c: httpx.Client, script: Path, t0: float) -> None:
                time.sleep(max(0.0, t0 + at - time.monotonic()))
                start = time.monotonic()
                r = c.post("/a/othello", files={"script": (script.name, script.read_bytes())})
                r.raise_for_status()
                sid = r.json()["id"]
                while c.get(f"/s/{sid}").json()["status"] not in ("graded", "failed"):
                    time.sleep(0.2)
                with lock:
                    feedback.append(time.monotonic() - start)

            def reader() -> None:
                c = clients[0]
                while not done.is_set():
                    for path in ("/a/othello", "/"):
                        start = time.monotonic()
                        c.get(path).raise_for_status()
                        with lock:
                            pages.append(time.monotonic() - start)
                    staff_start = time.monotonic()
                    instructor.get("/class").raise_for_status()
                    with lock:
                        pages.append(time.monotonic() - staff_start)
                    time.sleep(0.05)

            t0 = time.monotonic()
            threads = [threading.Thread(target=student, args=(at, c, s, t0)) for at, c, s in plan]
            watcher = threading.Thread(target=reader)
            watcher.start()
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            done.set()
            watcher.join()
            elapsed = time.monotonic() - t0
            memory = peak_memory_mb(server.pid)
        finally:
            server.terminate()
            server.wait(30)
        n = len(feedback)
        print(f"{args.students} students x {args.per_student} uploads over {args.window:g} s, "
              f"--workers {args.workers}: {n} graded in {elapsed:.1f} s")  # fmt: skip
        print(f"upload to feedback: median {statistics.median(feedback):.2f} s, p95 {p95(feedback):.2f} s")
        print(f"pages that do not grade ({len(pages)} requests): median {1000 * statistics.median(pages):.0f} ms, "
              f"p95 {1000 * p95(pages):.0f} ms")  # fmt: skip
        print(f"server's peak memory: {memory:.0f} MB")
        # The same scripts graded by grade_class on the same cores (one student a script).
        klass = tmp / "class"
        klass.mkdir()
        for i, (_, _, script) in enumerate(plan):
            shutil.copy(script, klass / f"s{i:04d}.py")
        loaded = load_course(course)
        lab = loaded.assignments["othello"]
        start = time.monotonic()
        grade_class([klass], lab.plan, loaded.settings(lab), out=tmp / "run", exports=False)
        alone = time.monotonic() - start
        busy = elapsed - min(at for at, _, _ in plan)  # from the first upload to the last feedback
        print(
            f"throughput: the portal {60 * n / busy:.0f} a minute, grade_class of the same {n} scripts "
            f"{60 * n / alone:.0f} a minute ({alone:.1f} s): {100 * alone / busy:.0f}%"
            + ("" if args.window == 0 else " (uploads spread over the window: --window 0 compares throughputs)")
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
