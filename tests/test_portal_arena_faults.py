"""The arena's faults, for real: a portal killed (SIGKILL) while a test's games are played and
started again on the same database and port, whose test goes on to its end with every pair
counted once; and a hostile NBoard engine uploaded as a version, which in a real game on a
worker tries to read its opponent's files, process and moves, the database and the course,
and to kill its opponent, and gets none of it."""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import sqlite3
import time
from collections import Counter
from pathlib import Path

import pytest

pytest.importorskip("sqlalchemy", reason='the portal needs its extra: pip install -e ".[portal]"')

from sqlalchemy import func, select  # noqa: E402

from grader.portal.database.arena import DONE, LIMIT, OK, ArenaGame, ArenaTest, EngineVersion, GameJob  # noqa: E402
from grader.portal.database.db import connect, sessions  # noqa: E402

from portal_server import Client, Server, make_course  # noqa: E402
from test_portal_arena import nboard_archive  # noqa: E402
from test_portal_workers import _until  # noqa: E402


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _processes(marker: str) -> list[str]:
    """The command lines of the live processes that hold ``marker`` (a zombie's is empty)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            line = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in line:
            found.append(line)
    return found


def _versions(me: Client, make, uploads: list[tuple[str, bytes]], engine: str = "mine") -> list[int]:
    """A new engine of ``me``'s with a version of each upload (name, bytes), once all passed their checks."""
    r = me.post("/arena", {"name": engine, "protocol": "nboard", "game": "othello"})
    assert r.status_code == 201, r.text
    eid = r.json()["id"]
    ids = []
    for name, content in uploads:
        r = me.post(f"/arena/e/{eid}/versions", files={"file": (name, content)})
        assert r.status_code == 201, r.text
        ids.append(r.json()["id"])
    checked = _until(make, lambda s: all(s.get(EngineVersion, i).status != "checking" for i in ids)
                     and [(s.get(EngineVersion, i).status, s.get(EngineVersion, i).message) for i in ids])  # fmt: skip
    assert all(status == OK for status, _ in checked), checked
    return ids


# --- a test survives a restart of the portal ------------------------------------------------


@pytest.mark.slow  # two starts of a server and a test of 16 games at 2+0.05: 10-30 s per database
def test_a_test_survives_a_restart_of_the_portal(database, tmp_path):  # noqa: F811
    """SIGKILL ``grader serve`` (its worker threads with it) while a test has pairs counted and
    pairs being played; started again on the same database and port, its workers play the held
    pairs again once their leases expire, and the test ends at its limit with every pair counted
    once: the counts are the games' rows. The killed portal's engines, frozen off move (they
    outlive it), are ended by the new one."""
    course = make_course(tmp_path / "course")
    options = ("--workers", "2", "--lease", "3", "--port", str(_free_port()))
    server = Server(course, tmp_path, database, *options)
    engine = connect(database)
    make = sessions(engine)
    try:
        me = Client(server.url)
        me.sign_in(server.link)
        base, new = _versions(me, make, [("v1.tar.gz", nboard_archive("random_mover")),
                                         ("v2.tar.gz", nboard_archive("greedy"))])  # fmt: skip
        # elo1 10 cannot be decided in 8 pairs: the test ends at its limit, every pair played counted
        ask = {"new": new, "base": base, "tc": "2+0.05", "max_games": "16"}
        r = me.post(f"/arena/e/{_engine_of(make, new)}/tests", ask)
        assert r.status_code in (200, 201), r.text
        tid = r.json()["id"]

        def mid_test(s) -> int | None:
            """The games counted, once some are and some are being played."""
            test = s.get(ArenaTest, tid)
            counted = test.wins + test.draws + test.losses
            running = s.scalar(select(func.count()).select_from(ArenaGame)
                               .where(ArenaGame.test_id == tid, ArenaGame.status == "running"))  # fmt: skip
            return counted if counted >= 2 and running else None

        counted_before = _until(make, mid_test, seconds=240)
        # its engines' folders are named after it (leftovers.grader_id: NAMESPACE-PID-STARTTIME)
        killed = f"-{os.stat('/proc/self/ns/pid').st_ino}-{server.proc.pid}-"
        assert _processes(killed), "the portal's engines are not named after it"
        server.stop(signal.SIGKILL)
        with make() as s:
            held = s.scalars(select(GameJob).where(GameJob.kind == "games", GameJob.state == "running")).all()
            assert held, "no pair was under way when the portal was killed"
        server = Server(course, tmp_path, database, *options)  # the same database and port
        assert server.url.endswith(":" + options[-1])
        me = Client(server.url)
        me.sign_in(server.link)
        _until(make, lambda s: s.get(ArenaTest, tid).status != "running", seconds=300)
        shown = me.get(f"/arena/t/{tid}").json()
        # the killed portal's engines were ended by the new one (its sweep of dead graders' cgroups)
        for _ in range(600):
            if not _processes(killed):
                break
            time.sleep(0.1)
        assert _processes(killed) == []
        with make() as s:
            test = s.get(ArenaTest, tid)
            games = s.scalars(
                select(ArenaGame).where(ArenaGame.test_id == tid).order_by(ArenaGame.pair, ArenaGame.id)
            ).all()
            jobs = s.scalars(select(GameJob).where(GameJob.kind == "games")).all()
    finally:
        server.stop()
        engine.dispose()
    assert test.status == LIMIT and test.pairs_queued == 8
    assert 2 <= counted_before < 16
    # every game played once to its end; no job left queued or running
    assert len(games) == 16 and all(g.status == DONE for g in games), Counter(g.status for g in games)
    assert {j.state for j in jobs} == {DONE} and len(jobs) == 8
    assert any(j.attempts == 2 for j in jobs)  # a pair the killed portal held, played again
    assert all(json.loads(g.record)["moves"] == g.moves and g.result for g in games)
    # W/D/L and the pentanomial are the games' rows, each pair counted once
    scores: dict[int, list[float]] = {}
    for g in games:
        black = {"1-0": 1.0, "0-1": 0.0}.get(g.result, 0.5)
        scores.setdefault(g.pair, []).append(black if g.black_id == new else 1 - black)
    assert sorted(scores) == list(range(1, 9)) and all(len(v) == 2 for v in scores.values())
    flat = [x for v in scores.values() for x in v]
    assert (test.wins, test.draws, test.losses) == (flat.count(1.0), flat.count(0.5), flat.count(0.0))
    penta = Counter(sum(v) for v in scores.values())
    assert [test.ll, test.ld, test.dd, test.wd, test.ww] == [penta[k] for k in (0.0, 0.5, 1.0, 1.5, 2.0)]
    assert shown["status"] == LIMIT and shown["games"] == 16 and shown["pentanomial"] == [test.ll, test.ld, test.dd,
                                                                                         test.wd, test.ww]  # fmt: skip


def _engine_of(make, version: int) -> int:
    with make() as s:
        return s.get(EngineVersion, version).engine_id


# --- a malicious engine gets nothing more than a graded script ---------------------------------

# The opponent: random legal moves, a secret in its files, and (started again by itself, once)
# in its command line and environment too, where a process that can see it would read it.
VICTIM = """import os, random, sys
SECRET = "{secret}"
if os.environ.get("VICTIM_SECRET") != SECRET:
    os.execve(sys.executable, [sys.executable, *sys.argv, "arena-victim", SECRET],
              dict(os.environ, VICTIM_SECRET=SECRET))


def choose(board, token):
    flips = sys.modules["__main__"].flips
    moves = [sq for sq in range(64) if board[sq] == "." and flips(board, sq, token)]
    return random.choice(moves) if moves else None
"""
PROBES = ["stage", "inherited", "tmp", "database", "course", "portal", "opponent", "cmdline", "environ", "fd", "stdout", "stdin",
          "memory", "kill", "watch"]  # fmt: skip


def _probes(record: dict) -> list[list[str]]:
    """The attacker's status lines in a game's record, one list for each game it began."""
    spied: list[list[str]] = []
    for line in (line for a in record["analysis"] for line in a["lines"] if line.startswith("status ")):
        if line.startswith("status probe stage ") or not spied:
            spied.append([])
        spied[-1].append(line)
    return spied


@pytest.mark.slow  # a server, two checks and a pair at 10+0.1: 5-15 s
def test_a_hostile_engine_reaches_nothing_of_its_opponent_the_database_or_the_course(tmp_path):
    """tests/attacks/arena_spy.py, uploaded as a version and tested against a version holding a
    secret, under the isolation ``grader serve`` uses by default: on the worker, in its check
    game and in both games of the pair, it finds none of the opponent's files, process (nor its
    output, its input, its memory), the database, the course or the portal, and kills nothing:
    both games end by the rules, the secret is in nothing it wrote, the database is intact."""
    course = make_course(tmp_path / "course")
    path = tmp_path / "portal.sqlite3"
    url = f"sqlite:///{path}"
    server = Server(course, tmp_path, url, "--workers", "1")
    engine = connect(url)
    make = sessions(engine)
    secret = "s3cr3t-" + secrets.token_hex(16)
    victim_upload = nboard_archive(VICTIM.format(secret=secret).encode())
    spy = (Path(__file__).parent / "attacks" / "arena_spy.py").read_text()
    for placeholder, value in (
        ("DATABASE", str(path)),
        ("COURSE", str(course)),
        ("PORT", server.url.rsplit(":", 1)[1]),
    ):
        spy = spy.replace(f'"ARENA-SPY-{placeholder}"', repr(value))
    try:
        me = Client(server.url)
        me.sign_in(server.link)
        # the victim first: the worker has its files staged when it checks the spy
        (victim,) = _versions(me, make, [("victim.tar.gz", victim_upload)], "victim")
        (spy_id,) = _versions(me, make, [("spy.tar.gz", nboard_archive(spy.encode()))], "spy")
        ask = {"new": spy_id, "base": victim, "tc": "10+0.1", "max_games": "2"}
        r = me.post(f"/arena/e/{_engine_of(make, spy_id)}/tests", ask)
        assert r.status_code in (200, 201), r.text
        tid = r.json()["id"]
        _until(make, lambda s: s.get(ArenaTest, tid).status != "running", seconds=240)
        with make() as s:
            test = s.get(ArenaTest, tid)
            games = s.scalars(select(ArenaGame).where(ArenaGame.test_id == tid).order_by(ArenaGame.id)).all()
            versions = {v.id: v for v in s.scalars(select(EngineVersion))}
    finally:
        server.stop()
        engine.dispose()
    records = [json.loads(g.record) for g in games]
    check = json.loads(versions[spy_id].check_game)
    # the opponent survived: both games played to their end by the rules, nobody forfeited
    assert test.status == LIMIT and len(games) == 2 and all(g.status == DONE for g in games)
    assert [(r["reason"], r["forfeit"], r["events"]) for r in records] == [("normal", None, [])] * 2
    # every probe ran, in its check game and at the start of both games, and got nothing
    spied = [*_probes(check), *(p for r in records for p in _probes(r))]
    assert len(spied) == 3, spied
    for lines in spied:
        assert [line.split()[2] for line in lines if line.startswith("status probe ")] == PROBES, lines
        assert all(line.split()[3] == "none" for line in lines), lines
        assert int(lines[-1].split("(")[1].split()[0]) > 0  # its watching thread ran
    # the secret is in nothing it wrote nor in any record; the database is intact
    written = json.dumps([records, check, [g.moves for g in games], [v.message for v in versions.values()]])
    assert secret not in written and "status leak" not in written
    assert versions[victim].content == victim_upload
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
