"""Portal pages benchmark: each page's response time, the server's CPU time per request and
each HTML page's weight, on a class of --students students with --per-student graded
submissions each of the Othello lab and one of the tic-tac-toe lab's 100-test plan, an arena
with a finished SPRT test and a ladder, no grading under way.

Run: python bench/portal_pages.py                        (300 students x 3, 40 requests a page)
     python bench/portal_pages.py --students 60 --requests 20

The demo course's Othello lab, one submission graded for real (negamax.py) and its result
written for every student (as a worker writes it), the same for the tic-tac-toe lab
(can_lose.py, 100 tests); the first student's engine tested against its older version until
the SPRT accepts H1 (its pairs' results written as a worker writes them), four students'
engines in the Othello ladder with finished games. Then ``grader serve --workers 0`` asked
each page in turn by a student and the instructor over real HTTP. Printed per page: median
and p95 response time, the server process's CPU time per request (utime + stime from /proc,
so that a shared machine's load changes the times but hardly the CPU per request), and an HTML
page's weight: its bytes with the stylesheets and scripts it loads, before compression
(target: 100 KB at most; a heavier page is marked ``OVER``).
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

from grader.files import SHARE
from grader.portal.course.course import load_course, make_demo_course
from grader.portal.course.sync import sync
from grader.portal.jobs.workers import grade_upload

LADDER = "    limits: {wall_seconds: 10}\n    ladder: {anonymous: true, top: 3, deadline_games: 4}\n"
TTT = SHARE / "submissions" / "tictactoe" / "can_lose.py"  # fails some of the 100-test plan's tests
SPRT_PAIRS = [(1.0, 0.5), (1.0, 1.0), (0.0, 1.0), (1.0, 1.0), (0.5, 0.5)] * 20  # the new version's, until H1
MAX_KB = 100  # no page heavier, before compression


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / 100  # utime + stime, in clock ticks of 1/100 s


def fill(course: Path, database: Path, students: int, per_student: int) -> dict[str, str]:
    """The class's roster synced and its graded submissions written; the id of the first
    student's submission of each lab."""
    emails = [f"s{i}@example.edu" for i in range(students)]
    (course / "roster.csv").write_text("Email,Name\n" + "".join(f"{e},{e}\n" for e in emails))
    sync(course, f"sqlite:///{database}")
    loaded = load_course(course)
    first = {}
    for lab, path, count in (("othello", ROOT / "submissions" / "negamax.py", per_student), ("tictactoe", TTT, 1)):
        script = path.read_bytes()
        fb = grade_upload(loaded, loaded.assignments[lab], "lab.py", script)
        with sqlite3.connect(database) as db:
            ids = dict(db.execute("SELECT email, id FROM users"))
            rows = [(secrets.token_urlsafe(16), ids[e], lab, f"2026-11-27 {k:02d}:00:00.000000", len(script), script,
                     fb.total, fb.max_total, fb.symbols, fb.public_symbols, fb.public_total, fb.student_text,
                     fb.full_text, fb.records)
                    for e in emails for k in range(count)]  # fmt: skip
            db.executemany(
                "INSERT INTO submissions (id, user_id, assignment, received_at, late, filename, size, sha256, "
                "content, status, total, max_total, symbols, public_symbols, public_total, student_text, full_text, "
                "records, gradings) VALUES (?, ?, ?, ?, 0, 'lab.py', ?, '', ?, 'graded', ?, ?, ?, ?, ?, ?, ?, ?, 1)",
                rows,
            )
        first[lab] = rows[0][0]
    return first


def fill_arena(course: Path, database: Path) -> dict[str, int | str]:
    """s0's SPRT test of two versions of an engine, its pairs' results written as a worker writes
    them until the test ends, and s0 to s3's engines in the Othello ladder, each beating the next
    over four finished games; the ids of the test, the engine, one of its games and s0's entry."""
    from sqlalchemy import select

    from grader.portal.arena import arena, leases
    from grader.portal.database.arena import DONE, OK, ArenaGame, ArenaTest, EngineVersion
    from grader.portal.database.db import connect, sessions
    from grader.portal.database.ladders import LadderEntry, LadderGame
    from grader.portal.database.models import User
    from grader.portal.ladders import ladders
    from grader.tournaments.games import GameRecord

    loaded = load_course(course)
    make = sessions(connect(f"sqlite:///{database}"))

    def engine(s, owner: User, name: str, versions: int) -> list[int]:
        made = arena.new_engine(s, owner, name, "nboard", "othello", False)
        ids = []
        for n in range(1, versions + 1):
            v = EngineVersion(engine_id=made.id, number=n, filename="e.tar.gz", size=1, sha256="0" * 64, content=b"x",
                              status=OK)  # fmt: skip
            s.add(v)
            s.flush()
            ids.append(v.id)
        return ids

    def record(game: ArenaGame, result: str) -> None:
        arena.write_record(game, GameRecord(f"g{game.id}", f"p{game.pair}", 1, f"b{game.black_id}",
                                            f"w{game.white_id}", game.opening, result=result, reason="normal",
                                            black_pieces=40, white_pieces=24))  # fmt: skip

    with make.begin() as s:
        owner = s.scalar(select(User).where(User.email == "s0@example.edu"))
        old, new = engine(s, owner, "mine", 2)
        tid = arena.new_test(s, owner, arena.TestRequest(new=new, base=old, elo1=100, max_games=400)).id
    for scores in SPRT_PAIRS:
        with make.begin() as s:
            lease = leases.claim_game(s, "w")
            assert lease is not None and leases.finish_game(s, lease)
            games = list(s.scalars(select(ArenaGame).where(ArenaGame.job_id == lease.job_id).order_by(ArenaGame.id)))
            for g, score in zip(games, scores):
                black = score if g.black_id == new else 1 - score
                record(g, {1.0: "1-0", 0.0: "0-1"}.get(black, "1/2-1/2"))
            arena.count_pair(s, s.get(ArenaTest, games[0].test_id), games)
        with make() as s:
            if s.get(ArenaTest, tid).status != "running":
                break
    ladder = loaded.ladders["othello"]
    with make.begin() as s:
        versions = []
        for i in range(4):
            person = s.scalar(select(User).where(User.email == f"s{i}@example.edu"))
            (version,) = engine(s, person, "laddered", 1)
            ladders.enter(s, loaded, ladder, person, s.get(EngineVersion, version).engine_id)
            versions.append(version)
        for a, b in zip(versions, versions[1:]):
            for black, white, result in ((a, b, "1-0"), (b, a, "1/2-1/2"), (a, b, "1/2-1/2"), (b, a, "0-1")):
                game = ArenaGame(black_id=black, white_id=white, opening="f5", status=DONE)
                s.add(game)
                s.flush()
                record(game, result)
                s.add(LadderGame(game_id=game.id, ladder=ladder.name))
    with make() as s:
        game_id = s.scalar(select(ArenaGame.id).where(ArenaGame.test_id == tid).order_by(ArenaGame.id))
        entry = s.scalar(select(LadderEntry.id).join(User, User.id == LadderEntry.user_id)
                         .where(User.email == "s0@example.edu"))  # fmt: skip
        return {"test": tid, "engine": s.get(ArenaTest, tid).engine_id, "game": game_id, "entry": entry}


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
        yaml = (course / "course.yaml").read_text()
        (course / "course.yaml").write_text(yaml.replace("    limits: {wall_seconds: 10}\n", LADDER, 1))
        database = tmp / "portal.sqlite3"
        subs = fill(course, database, args.students, args.per_student)
        sid, ttt = subs["othello"], subs["tictactoe"]
        ids = fill_arena(course, database)
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
        s0 = "/class/othello/students/s0@example.edu"
        pages = [("GET / (JSON)", student, "/", {}), ("GET /a/othello (JSON)", student, "/a/othello", {}),
                 ("GET /s/ID (JSON)", student, f"/s/{sid}", {}), ("GET /class (JSON)", staff, "/class", {}),
                 ("GET /class.csv", staff, "/class.csv", {}), ("GET /class/queue (JSON)", staff, "/class/queue", {})]  # fmt: skip
        student_pages = ["/", "/a/othello", "/a/tictactoe", "/a/gomoku", f"/s/{sid}", f"/s/{ttt}", "/sessions"]
        arena_pages = ["/arena", f"/arena/e/{ids['engine']}", f"/arena/t/{ids['test']}", f"/arena/g/{ids['game']}",
                       "/ladders", "/ladder/othello", "/ladder/othello/crosstable",
                       f"/ladder/othello/entry/{ids['entry']}"]  # fmt: skip
        staff_pages = ["/class", "/class?sort=othello", "/class/exports", "/class/queue", "/class/audit", s0,
                       f"/s/{sid}", f"/s/{ttt}"]  # fmt: skip
        named = {f"/s/{sid}": "/s/ID (othello)", f"/s/{ttt}": "/s/ID (tictactoe, 100 tests)",
                 f"/arena/t/{ids['test']}": "/arena/t/ID"}  # fmt: skip
        pages += [(f"GET {p} (HTML)", None, p, html) for p in ("/signin", "/no/such/page")]
        pages += [(f"GET {named.get(p, p)} (HTML)", student, p, html) for p in student_pages + arena_pages]
        pages += [(f"GET {named.get(p, p)} (HTML, staff)", staff, p, html) for p in staff_pages]
        anonymous = httpx.Client(base_url=url)
        print(f"{args.students} students x {args.per_student} graded submissions, {args.requests} requests a page "
              f"(load average before: {os.getloadavg()[0]:.1f})")  # fmt: skip
        heavy: list[str] = []
        for name, client, path, headers in pages:
            client = client or anonymous
            first = client.get(path, headers=headers)  # warm
            if not (first.status_code == 404 and "no/such" in path):
                first.raise_for_status()
            kb = ""
            if "HTML" in name:
                size = weight(client, first.text) / 1000
                heavy.extend([name] if size > MAX_KB else [])
                kb = f", {size:6.1f} KB{' OVER' if size > MAX_KB else ''}"
            times = []
            before = cpu_seconds(server.pid)
            for _ in range(args.requests):
                start = time.perf_counter()
                client.get(path, headers=headers)
                times.append(time.perf_counter() - start)
            cpu = (cpu_seconds(server.pid) - before) / args.requests
            print(f"  {name:58} median {1000 * statistics.median(times):6.1f} ms, p95 {1000 * p95(times):6.1f} ms, "
                  f"server CPU {1000 * cpu:5.1f} ms a request{kb}")  # fmt: skip
        print(f"HTML pages over {MAX_KB} KB (HTML + CSS + JS, before compression): {', '.join(heavy) or 'none'}")
    finally:
        if server is not None:
            server.terminate()
            server.wait(60)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
