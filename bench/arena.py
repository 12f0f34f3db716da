"""Arena benchmark: an SPRT test's games per hour on the portal's workers against ``grader
tournament --sprt`` of the same engines on the same cores, and the harness's cost per move in each.

Run: python bench/arena.py [--games 60] [--workers 2] [--tc 10+0.1] [--isolation auto] [--repeat 7]
     python bench/arena.py --part live [--watchers 20] [--browsers 20] [--watch browsers|http|both]
                           [--move-seconds 0.2]
Two versions of an NBoard engine (the bundled greedy and random_mover behind the bundled
NBoard adapter, uploaded as an author uploads them: an archive and its COMMAND) play an SPRT
test whose bounds nothing decides early, to --games games, on a temporary course's SQLite
database, by ``--workers`` worker threads as ``grader serve`` starts them (their checks played
first, not timed). Then ``run_tournament`` plays the same engines from the same folders, with the
same openings, format sprt, the same bounds and game limit, at --jobs = --workers. Games per
hour: games / wall seconds from the test's start to its end (the tournament's: the call).
Harness cost per move: (wall seconds x slots - the engines' own move times) / engine moves,
i.e. the slots' time not spent waiting for an engine's answer (claiming, writing moves and
results, starting processes); the line after it is the arena's minus the command line's.

The live game page (--part live, or all): ``grader serve --workers 0`` as its own process on
a SQLite database; a game of a test marked running as a worker's claim marks it, its moves
written by the worker's own writer (``arena_play.live``, which writes at most every
LIVE_SECONDS) one every --move-seconds. --watchers pages of headless Chromium (/usr/bin/chromium
through Playwright) watch the game's page with JavaScript on (static/live.js polls it every
second and puts the changed section in place): --browsers Chromium processes, the pages
dealt out among them, each page in a context of its own (its own cookies and cache, as a
browser of its own), signed in as the instructor, with Chromium's throttling of background
pages off (each page is one a person looks at). A MutationObserver in each page notes when its
DOM first holds each ply (``performance.timeOrigin + performance.now()``, milliseconds of the
Unix epoch on the page's clock); the page's clock is set against this process's
``time.time()`` by the round trip of Playwright's evaluate (the shortest of ten: its half is
the error). A move's delay: when a page's DOM shows it minus when it was handed to the writer
(``time.time()``: the engine played it then). The median and 95th percentile over every page
and move are printed (target: median within 1 s), with the load average before and after.
--watch http (or both) adds the older figure: as many HTTP clients (httpx threads, no
browser) asking for the page's HTML every second from a random start, as live.js does.
"""

from __future__ import annotations

import argparse
import io
import json
import math
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import select

from grader import TournamentSettings, run_tournament
from grader.config import Config, parse_tc
from grader.files import bundled
from grader.games import get_game
from grader.portal.accounts.roster import RosterEntry, import_roster
from grader.portal.arena import arena
from grader.portal.arena import leases as game_leases
from grader.portal.arena import play as arena_play
from grader.portal.course.course import load_course, make_demo_course
from grader.portal.database.arena import ArenaGame, ArenaTest, EngineVersion
from grader.portal.database.db import connect, sessions, upgrade
from grader.portal.database.models import User
from grader.portal.jobs.workers import Workers
from grader.portal.uploads import command_program, unpack_files
from grader.tournaments.engines import Engine
from grader.tournaments.formats import Format, SprtSettings
from grader.tournaments.games import GameRecord

ENGINES = ("greedy", "random_mover")
BOUNDS = (-1.0, 1.0)  # a test this narrow between these two does not decide within a few hundred games
WIDE = (0.0, 5.0)


def archive(script: str) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tf:
        for member, data in (("engine.py", bundled("nboard", "engine.py").read_bytes()),
                             (f"{script}.py", bundled("submissions", f"{script}.py").read_bytes()),
                             ("COMMAND", f"python3 engine.py {script}.py\n".encode())):  # fmt: skip
            info = tarfile.TarInfo(member)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return out.getvalue()


def engine_time(records: list[GameRecord]) -> tuple[float, int]:
    """The engines' own seconds (question to answer, as the harness timed them) and their moves."""
    times = [t[0] for r in records for t in r.move_times if t and t[0] is not None]
    return sum(times), len(times)


def arena_run(work: Path, games: int, workers: int, tc: tuple[float, float], isolation: str) -> dict:
    course_dir = make_demo_course(work / "course")
    (course_dir / "config.yaml").write_text(f"isolation: {isolation}\n")
    course = load_course(course_dir)
    db = connect(f"sqlite:///{work / 'portal.sqlite3'}")
    upgrade(db)
    make = sessions(db)
    with make.begin() as s:
        import_roster(s, [RosterEntry("author@example.edu", "Author")])
        author = s.scalar(select(User))
        engine = arena.new_engine(s, author, "bench", "nboard", "othello")
        ids = [arena.new_version(s, course, engine, f"{name}.tar.gz", archive(name)).id for name in ENGINES]
    pool = Workers(course, make, workers)
    pool.start()
    try:
        while True:
            with make() as s:
                statuses = [s.get(EngineVersion, v).status for v in ids]
            if "checking" not in statuses:
                break
            time.sleep(0.2)
        if statuses != ["ok", "ok"]:
            raise SystemExit(f"the versions' checks failed: {statuses}")
        with make.begin() as s:
            ask = arena.TestRequest(new=ids[0], base=ids[1], tc=tc, elo0=BOUNDS[0], elo1=BOUNDS[1], max_games=games,
                                    seed=1)  # fmt: skip
            tid = arena.new_test(s, s.get(User, author.id), ask).id
        start = time.perf_counter()
        pool.wake.set()
        while True:
            with make() as s:
                test = s.get(ArenaTest, tid)
                if test.status != "running":
                    break
            time.sleep(0.05)
        wall = time.perf_counter() - start
    finally:
        pool.stop()
    with make() as s:
        rows = s.scalars(select(ArenaGame).where(ArenaGame.test_id == tid, ArenaGame.status == "done")).all()
        records = [GameRecord.from_json(json.loads(g.record)) for g in rows]
        openings = json.loads(s.get(ArenaTest, tid).openings)
        counted = test.wins + test.draws + test.losses
    return {"wall": wall, "games": len(records), "counted": counted, "status": test.status, "records": records,
            "openings": openings, "course": course}  # fmt: skip


def tournament_run(work: Path, games: int, jobs: int, tc: tuple[float, float], isolation: str,
                   openings: list[str]) -> dict:  # fmt: skip
    engines = []
    for name in ENGINES:
        folder = work / name
        folder.mkdir()
        root = unpack_files(f"{name}.tar.gz", archive(name), folder)
        program = command_program(root, "nboard")
        assert program is not None
        engines.append(Engine(name, protocol=program))
    settings = TournamentSettings.resolve(Config(isolation=isolation), get_game("othello"), tc=tc, jobs=jobs)
    fmt = Format("sprt", sprt=SprtSettings(BOUNDS[0], BOUNDS[1], games))
    start = time.perf_counter()
    result = run_tournament(engines, settings=settings, format=fmt, openings=openings, out=work / "tournament")
    wall = time.perf_counter() - start
    return {"wall": wall, "games": len(result.games), "records": result.games}


def figures(run: dict, slots: int) -> tuple[float, float, int, float]:
    """Games per hour, the harness's ms per move, the engine moves, the engines' own seconds."""
    engine_s, moves = engine_time(run["records"])
    cost = (run["wall"] * slots - engine_s) / moves * 1000 if moves else float("nan")
    return run["games"] / run["wall"] * 3600, cost, moves, engine_s


def running_game(make: Any, email: str) -> tuple[int, str, list[str]]:
    """A game of a new test between two checked versions of ``email``'s engine, marked running
    as a worker's claim marks it: its id, its lease token, and growing transcripts of it."""
    with make.begin() as s:
        me = s.scalar(select(User).where(User.email == email))
        engine = arena.new_engine(s, me, "live", "nboard", "othello")
        ids = []
        for n in (1, 2):
            v = EngineVersion(engine_id=engine.id, number=n, filename="e.tar.gz", size=1, sha256="0" * 64,
                              content=b"x", status="ok")  # fmt: skip
            s.add(v)
            s.flush()
            ids.append(v.id)
        arena.new_test(s, me, arena.TestRequest(new=ids[1], base=ids[0], seed=1))
        lease = game_leases.claim_game(s, "bench")
        assert lease is not None
        game = s.scalars(select(ArenaGame).where(ArenaGame.job_id == lease.job_id).order_by(ArenaGame.id)).first()
        assert game is not None
        game.status, game.lease_token = "running", lease.token
        rules = get_game("othello")
        pos, moves = rules.opening_start(game.opening)
        opening = len(moves)
        pos = rules.replay(moves, pos)
        while pos.moves():
            moves.append(pos.moves()[0])
            pos = pos.play(moves[-1])
        return game.id, lease.token, [rules.transcript(moves[:k]) for k in range(opening + 1, len(moves) + 1)]


PLY = re.compile(r'<td><a href="\?ply=(\d+)">')
# the plies each page's DOM shows, the moment it first shows each (ms since the Unix epoch, the page's clock)
OBSERVER = """
window.__seen = {};
document.addEventListener("DOMContentLoaded", () => {
  const note = () => {
    const at = performance.timeOrigin + performance.now();
    for (const a of document.querySelectorAll('#moves td > a[href^="?ply="]')) {
      const ply = a.getAttribute("href").slice(5);
      if (!(ply in window.__seen)) window.__seen[ply] = at;
    }
  };
  note();
  new MutationObserver(note).observe(document.body, { childList: true, subtree: true });
});
"""
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-timer-throttling",
                  "--disable-renderer-backgrounding", "--disable-backgrounding-occluded-windows"]  # fmt: skip


class LiveGame:
    """``grader serve --workers 0`` on a fresh SQLite database in ``work``, signed in as its
    instructor, with a game marked running whose moves ``play`` writes as a worker does."""

    def __init__(self, work: Path):
        course = make_demo_course(work / "course")
        database = f"sqlite:///{work / 'portal.sqlite3'}"
        self.server = subprocess.Popen([sys.executable, "-m", "grader", "serve", str(course), "--port", "0",
                                        "--workers", "0", "--database", database],
                                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)  # fmt: skip
        said = ""
        while (m := re.search(r"One-time sign-in link for \S+: (\S+)", said)) is None:
            line = self.server.stdout.readline() if self.server.stdout else ""
            if not line:
                self.server.wait()
                raise SystemExit("grader serve did not start:\n" + said)
            said += line
        link = m.group(1)
        self.url = re.sub(r"^(https?://[^/]+).*", r"\1", link)
        threading.Thread(target=lambda: [None for _ in self.server.stdout or ()], daemon=True).start()
        self.make = sessions(connect(database))
        with self.make() as s:
            email = s.scalar(select(User.email).where(User.role == "instructor"))
        self.gid, self.token, self.lines = running_game(self.make, email)
        self.page = f"{self.url}/arena/g/{self.gid}"
        with httpx.Client(headers={"Accept": "application/json"}, timeout=30) as first:
            csrf = first.get(link).json()["csrf"]  # the link's page: its form's token; its POST signs in
            first.post(link, data={"csrf": csrf}).raise_for_status()
            self.cookies = dict(first.cookies)

    def play(self, move_seconds: float) -> dict[int, float]:
        """Each move handed to the worker's writer, one every ``move_seconds``, then the game's
        end; when each ply was played (``time.time()``)."""
        played: dict[int, float] = {}
        write = arena_play.live(self.make, self.gid, self.token)
        for line in self.lines:
            played[len(line) // 2] = time.time()
            write(GameRecord(f"g{self.gid}", "p1", 1, "b", "w", "", moves=line))
            time.sleep(move_seconds)
        with self.make.begin() as s:
            game = s.get(ArenaGame, self.gid)
            arena.write_record(game, GameRecord(f"g{self.gid}", "p1", 1, "b", "w", "", moves=self.lines[-1],
                                                result="1-0", reason="normal"))  # fmt: skip
        return played

    def stop(self) -> None:
        self.server.terminate()
        self.server.wait()


def watched_over_http(game: LiveGame, watchers: int, move_seconds: float) -> list[float]:
    """Each HTTP client's delay, in seconds, for each move: clients asking for the page's HTML every second."""
    seen: list[dict[int, float]] = [{} for _ in range(watchers)]
    over = threading.Event()

    def watch(k: int) -> None:
        with httpx.Client(cookies=game.cookies, headers={"Accept": "text/html"}, timeout=30) as c:
            time.sleep(random.random())
            while not over.is_set():
                asked = time.time()
                text = c.get(game.page).text
                at = time.time()
                for ply in map(int, PLY.findall(text)):
                    seen[k].setdefault(ply, at)
                time.sleep(max(0.0, 1.0 - (at - asked)))

    threads = [threading.Thread(target=watch, args=(k,)) for k in range(watchers)]
    for t in threads:
        t.start()
    time.sleep(1.5)
    played = game.play(move_seconds)
    time.sleep(2.5)
    over.set()
    for t in threads:
        t.join()
    return [w[ply] - at for w in seen for ply, at in played.items() if ply in w]


def clock_offset(page: Any) -> tuple[float, float]:
    """The page's clock (performance.timeOrigin + performance.now()) minus ``time.time()``, in
    seconds, from the shortest of ten round trips of an evaluate; and that round trip (the
    offset is right within half of it)."""
    best = (0.0, float("inf"))
    for _ in range(10):
        before = time.time()
        at = page.evaluate("performance.timeOrigin + performance.now()") / 1000
        after = time.time()
        if after - before < best[1]:
            best = (at - (before + after) / 2, after - before)
    return best


def watched_in_browsers(game: LiveGame, watchers: int, browsers: int, move_seconds: float) -> tuple[list[float], float]:
    """Each page's delay, in seconds, for each move, and the largest clock error (half a round
    trip): ``watchers`` pages of ``browsers`` headless Chromium processes, JavaScript on."""
    from playwright.sync_api import sync_playwright

    binary = next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)
    if binary is None:
        raise SystemExit("no Chromium: apt-get install chromium")
    with sync_playwright() as pw:
        launched = [pw.chromium.launch(executable_path=binary, args=CHROMIUM_FLAGS) for _ in range(browsers)]
        pages = []
        for k in range(watchers):
            context = launched[k % browsers].new_context()
            context.add_cookies([{"name": n, "value": v, "url": game.url} for n, v in game.cookies.items()])
            context.add_init_script(OBSERVER)
            page = context.new_page()
            page.goto(game.page)
            pages.append(page)
        hidden = sum(page.evaluate("document.visibilityState") != "visible" for page in pages)
        if hidden:
            print(f"({hidden} of the {watchers} pages are not visible: Chromium may throttle their timers)")
        offsets = [clock_offset(page) for page in pages]
        time.sleep(1.5)
        played = game.play(move_seconds)
        time.sleep(2.5)
        seen = [page.evaluate("window.__seen") for page in pages]
        for browser in launched:
            browser.close()
    delays = [w[str(ply)] / 1000 - offset - at for w, (offset, _) in zip(seen, offsets)
              for ply, at in played.items() if str(ply) in w]  # fmt: skip
    return delays, max(trip for _, trip in offsets) / 2


def summary(delays: list[float]) -> str:
    """'0.74 s median, 1.18 s 95th percentile (1120 sightings)'."""
    ranked = sorted(delays)
    p95 = ranked[max(0, math.ceil(0.95 * len(ranked)) - 1)]
    return f"{statistics.median(ranked):.2f} s median, {p95:.2f} s 95th percentile ({len(ranked)} sightings)"


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def live_part(watch: str, watchers: int, browsers: int, move_seconds: float) -> None:
    """The live game page's figures: in browsers, over HTTP, or both (a game each)."""
    for how in ("browsers", "http") if watch == "both" else (watch,):
        work = Path(tempfile.mkdtemp(prefix="grader-bench-live-"))
        before = load()
        game = LiveGame(work)
        try:
            if how == "browsers":
                delays, error = watched_in_browsers(game, watchers, browsers, move_seconds)
                who = (f"{watchers} Chromium pages (JavaScript on, static/live.js) in {browsers} browser "
                       f"process{'es' if browsers > 1 else ''}, clocks matched within {error * 1000:.1f} ms")  # fmt: skip
            else:
                delays = watched_over_http(game, watchers, move_seconds)
                who = f"{watchers} HTTP clients (no browser) asking for the page every second as static/live.js does"
        finally:
            game.stop()
            shutil.rmtree(work, ignore_errors=True)
        print(f"live game page, {who}, a move every {move_seconds:g} s: a move shown after {summary(delays)}; "
              f"target: median within 1 s (load average {before} before, {load()} after)")  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=60)
    ap.add_argument("--workers", type=int, default=2, help="the arena's worker threads; the tournament's --jobs")
    ap.add_argument("--tc", default="10+0.1")
    ap.add_argument("--isolation", default="auto")
    ap.add_argument("--repeat", type=int, default=7, help="rounds of both, one after the other (a shared machine's "
                    "load changes: the median round's figures are given)")  # fmt: skip
    ap.add_argument("--part", choices=("all", "speed", "live"), default="all",
                    help="speed: games per hour and harness cost; live: the live game page's delay")  # fmt: skip
    ap.add_argument("--watchers", type=int, default=20, help="pages (or HTTP clients) following the live game page")
    ap.add_argument("--browsers", type=int, default=20, help="Chromium processes the pages are dealt out among")
    ap.add_argument("--watch", choices=("browsers", "http", "both"), default="browsers",
                    help="who follows the live game page: headless Chromium pages, HTTP clients, or both")  # fmt: skip
    ap.add_argument("--move-seconds", type=float, default=0.2, help="seconds between the live game's moves")
    args = ap.parse_args()
    if args.part != "speed":
        live_part(args.watch, args.watchers, min(args.browsers, args.watchers), args.move_seconds)
        if args.part == "live":
            return 0
    tc = parse_tc(args.tc)
    print(f"{' vs '.join(ENGINES)} (NBoard adapter), {args.tc}, {args.workers} slots, isolation {args.isolation}, "
          f"{args.games} games a run")  # fmt: skip
    ratios, costs = [], []
    for r in range(args.repeat):
        work = Path(tempfile.mkdtemp(prefix="grader-bench-arena-"))
        try:
            a = arena_run(work / "arena", args.games, args.workers, tc, args.isolation)
            t = tournament_run(work, args.games, args.workers, tc, args.isolation, a["openings"])
        finally:
            shutil.rmtree(work, ignore_errors=True)
        fa, ft = figures(a, args.workers), figures(t, args.workers)
        for name, run, f in (("arena (portal workers)", a, fa), ("grader tournament --sprt", t, ft)):
            print(f"round {r + 1}: {name:26s} {run['games']:4d} games in {run['wall']:6.1f} s: {f[0]:8.0f} games/hour; "
                  f"harness {f[1]:6.2f} ms/move ({f[2]} engine moves, engines' own {f[3]:.1f} s)")  # fmt: skip
        if a["counted"] != a["games"]:
            print(f"round {r + 1}: the arena counted {a['counted']} of its {a['games']} games (test {a['status']})")
        ratios.append(fa[0] / ft[0] * 100)
        costs.append(fa[1] - ft[1])
    print(f"arena / tournament games per hour, median of {args.repeat}: {statistics.median(ratios):.1f}% "
          f"(rounds: {', '.join(f'{x:.1f}%' for x in ratios)}; target >= 90%)")  # fmt: skip
    print(f"harness per move, arena - tournament, median: {statistics.median(costs):+.2f} ms "
          f"(rounds: {', '.join(f'{x:+.2f}' for x in costs)}; target within 0.5 ms)")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
