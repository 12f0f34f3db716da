"""The arena on the portal: engines uploaded with versions, each checked by a real game against
a bundled engine; SPRT tests queued as pairs, counted once each and stopped by the SPRT; games
shown live and downloaded as GGF; an author's engines out of another's reach; a worker process
killed mid-game whose pair another worker plays and counts once (SQLite and PostgreSQL)."""

from __future__ import annotations

import datetime
import io
import json
import secrets
import signal
import tarfile
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("sqlalchemy", reason='the portal needs its extra: pip install -e ".[portal]"')

from click.testing import CliRunner  # noqa: E402
from sqlalchemy import func, select, text  # noqa: E402

from grader.cli import main  # noqa: E402
from grader.files import bundled  # noqa: E402
from grader.games import get_game, ggf  # noqa: E402
from grader.portal.accounts.roster import RosterEntry, import_roster  # noqa: E402
from grader.portal.accounts.tokens import API_TOKEN_DAYS, api_tokens, api_user, new_api_token  # noqa: E402
from grader.portal.arena import arena  # noqa: E402
from grader.portal.arena import leases as game_leases  # noqa: E402
from grader.portal.arena import play as arena_play  # noqa: E402
from grader.portal.database.arena import (  # noqa: E402
    DONE,
    H1,
    LIMIT,
    OK,
    ArenaEngine,
    ArenaGame,
    ArenaTest,
    EngineVersion,
    GameJob,
)
from grader.portal.database.db import connect, sessions, upgrade  # noqa: E402
from grader.portal.database.models import User  # noqa: E402
from grader.portal.pages import arena as arena_pages  # noqa: E402
from grader.tournaments.games import GameRecord  # noqa: E402

from portal_server import ROOT, Client, Server, make_course  # noqa: E402
from test_portal_workers import Worker, _until  # noqa: E402


def nboard_archive(script: str | bytes, name: str = "player.py") -> bytes:
    """A .tar.gz of an NBoard engine as an author packs it: the bundled NBoard adapter, a move
    script (a bundled one by name, or its text), and the COMMAND that starts them."""
    text = bundled("submissions", script + ".py").read_bytes() if isinstance(script, str) else script
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tf:
        for member, data in (("engine/engine.py", bundled("nboard", "engine.py").read_bytes()),
                             (f"engine/{name}", text), ("engine/COMMAND", f"python3 engine.py {name}\n".encode())):  # fmt: skip
            info = tarfile.TarInfo(member)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return out.getvalue()


# --- the library, on SQLite ----------------------------------------------------------------


@pytest.fixture
def db(tmp_path):
    """(sessionmaker, an author, two checked versions of their engine) on a migrated SQLite database."""
    engine = connect(f"sqlite:///{tmp_path / 'portal.sqlite3'}")
    upgrade(engine)
    make = sessions(engine)
    yield (make, *_author_and_versions(make))
    engine.dispose()


def _author_and_versions(make) -> tuple[User, list[int]]:
    """An author (of users a@ and b@) and two checked versions of their engine 'mine'."""
    with make.begin() as s:
        import_roster(s, [RosterEntry("a@example.edu", "A"), RosterEntry("b@example.edu", "B")])
        author = s.scalar(select(User).where(User.email == "a@example.edu"))
        versions = checked_versions(s, author, "mine", 2)
    return author, versions


def checked_versions(s, owner: User, name: str, count: int, open_: bool = False) -> list[int]:
    """A new NBoard engine of ``owner``'s with ``count`` versions that passed their check: their ids."""
    engine = arena.new_engine(s, owner, name, "nboard", "othello", open_)
    ids = []
    for n in range(1, count + 1):
        v = EngineVersion(engine_id=engine.id, number=n, filename="e.tar.gz", size=1, sha256="0" * 64, content=b"x",
                          status=OK)  # fmt: skip
        s.add(v)
        s.flush()
        ids.append(v.id)
    return ids


def _play_pair(make, lease, new_id: int, new_scores: tuple[float, float]) -> None:
    """Write a claimed pair's results as a worker does: the new version scoring ``new_scores``."""
    with make.begin() as s:
        _count_pair(s, lease, new_id, new_scores)


def _count_pair(s, lease, new_id: int, new_scores: tuple[float, float]) -> None:
    """``_play_pair``'s writes in the session ``s``, not committed."""
    assert game_leases.finish_game(s, lease)
    games = list(s.scalars(select(ArenaGame).where(ArenaGame.job_id == lease.job_id).order_by(ArenaGame.id)))
    for g, score in zip(games, new_scores):
        black = score if g.black_id == new_id else 1 - score
        result = {1.0: "1-0", 0.0: "0-1"}.get(black, "1/2-1/2")
        arena.write_record(g, GameRecord(f"g{g.id}", "p", 1, "b", "w", g.opening, result=result, reason="normal"))
    arena.count_pair(s, s.get(ArenaTest, games[0].test_id), games)


def test_a_tests_pairs_are_counted_once_each_and_the_sprt_ends_it(db):
    make, author, (v1, v2) = db
    with make.begin() as s:
        test = arena.new_test(s, s.get(User, author.id), arena.TestRequest(new=v2, base=v1, elo1=200, max_games=400))
        tid = test.id
        assert game_leases.waiting_games(s) == arena.PAIRS_AHEAD  # a window of pairs, not the whole test
        colours = s.execute(select(ArenaGame.black_id, ArenaGame.white_id).where(ArenaGame.pair == 1)).all()
        assert sorted(colours) == sorted([(v2, v1), (v1, v2)])  # each opening with both colours
    with make.begin() as s:
        stale = game_leases.claim_game(s, "dead")
    played = 0
    while True:
        with make.begin() as s:
            lease = game_leases.claim_game(s, "w")
        _play_pair(make, lease, v2, (1.0, 1.0))
        played += 1
        with make() as s:
            test = s.get(ArenaTest, tid)
            if test.status != "running":
                break
    assert test.status == H1 and test.ww == played and test.wins == 2 * played and played < 10
    with make() as s:
        assert game_leases.waiting_games(s) == 0  # the pairs not begun are cancelled
        assert arena.CANCELLED in set(s.scalars(select(ArenaGame.status).where(ArenaGame.test_id == tid)))
    _play_pair(make, stale, v2, (0.0, 0.0))  # a pair under way at the decision ends: played, not counted
    with make() as s:
        test = s.get(ArenaTest, tid)
        assert (test.ww, test.losses, test.ll) == (played, 0, 0)


@pytest.mark.slow  # a PostgreSQL server of its own: 3-6 s
def test_two_workers_counting_two_pairs_of_a_test_at_once_count_both(postgres):  # noqa: F811
    """Worker B reads the test while worker A's count of another pair is not committed: B
    waits for A's (the test's row locked) rather than writing its count over A's."""
    name = "t_" + secrets.token_hex(6)
    admin = connect(postgres.format(db="postgres")).execution_options(isolation_level="AUTOCOMMIT")
    with admin.connect() as c:
        c.execute(text(f"CREATE DATABASE {name}"))
    engine = connect(postgres.format(db=name))
    try:
        upgrade(engine)
        make = sessions(engine)
        author, (v1, v2) = _author_and_versions(make)
        with make.begin() as s:
            tid = arena.new_test(s, s.get(User, author.id), arena.TestRequest(new=v2, base=v1)).id
        leases = []
        for worker in ("a", "b"):
            with make.begin() as s:
                leases.append(game_leases.claim_game(s, worker))
        first = make()
        first.begin()
        _count_pair(first, leases[0], v2, (1.0, 1.0))  # A's count, not committed yet
        second = threading.Thread(target=lambda: _play_pair(make, leases[1], v2, (1.0, 1.0)))
        second.start()
        with admin.connect() as c:  # B reaches the row A holds, and waits
            waiting = "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
            for _ in range(600):
                if c.execute(text(waiting)).scalar():
                    break
                time.sleep(0.1)
        first.commit()
        first.close()
        second.join(60)
        with make() as s:
            test = s.get(ArenaTest, tid)
            assert (test.ww, test.wins, test.losses) == (2, 4, 0)
            assert test.pairs_queued == arena.PAIRS_AHEAD + 2  # each count queued a pair of its own
    finally:
        engine.dispose()
        admin.dispose()


def test_a_test_of_an_open_engine_names_its_authors_private_one_to_nobody_else(db):
    """A test of an open engine's version against a version of its author's private engine:
    everyone sees the test and its games, only the author and the staff the private one's name."""
    make, author, (v1, _) = db
    with make.begin() as s:
        me = s.get(User, author.id)
        (shown,) = checked_versions(s, me, "shown", 1, open_=True)
        test = arena.new_test(s, me, arena.TestRequest(new=shown, base=v1, max_games=4))
        tid, eid = test.id, s.get(EngineVersion, shown).engine_id
    with make() as s:
        test, engine = s.get(ArenaTest, tid), s.get(ArenaEngine, eid)
        game = s.scalars(select(ArenaGame).where(ArenaGame.test_id == tid)).first()
        for email, base in (("a@example.edu", "mine v1"), ("b@example.edu", arena_pages.PRIVATE)):
            reader = s.scalar(select(User).where(User.email == email))
            data = arena_pages.test_data(s, test, engine, reader)
            assert (data["new"], data["base"]) == ("shown v1", base)
            assert {row["black"] for row in data["list"]} == {"shown v1", base}
            seen = arena_pages.game_data(s, game, "othello", None, reader)
            assert {seen["black"], seen["white"]} == {"shown v1", base}


def test_a_game_job_its_workers_died_on_three_times_is_ended_not_claimed_again(db):
    """A hostile engine that kills its worker each time (a check's game, a test's pair) is not
    handed to the next worker for ever: the claim after the third ends the job, fails the check
    or ends the test (error), and the other jobs go on."""
    make, author, (v1, v2) = db
    with make.begin() as s:
        tid = arena.new_test(s, s.get(User, author.id), arena.TestRequest(new=v2, base=v1)).id
        s.get(EngineVersion, v2).status = "checking"
        s.add(GameJob(kind=arena.CHECK, version_id=v2, priority=arena.CHECK_PRIORITY, state="queued", attempts=0))
    for kind in ("check", "games"):
        claimed = set()
        for _ in range(game_leases.MAX_ATTEMPTS):  # each worker dies: its lease expires at once
            with make.begin() as s:
                lease = game_leases.claim_game(s, "dies", seconds=-1)
                assert lease.kind == kind
                claimed.add(lease.job_id)
        assert len(claimed) == 1
        with make.begin() as s:
            nxt = game_leases.claim_game(s, "next", seconds=60)
            assert nxt is None or nxt.job_id not in claimed
    with make() as s:
        version, test = s.get(EngineVersion, v2), s.get(ArenaTest, tid)
        assert version.status == "failed" and version.message.startswith("the arena stopped 3 times on this job")
        assert test.status == "error" and (test.wins, test.losses, test.draws) == (0, 0, 0)
        games = s.scalars(select(ArenaGame).where(ArenaGame.test_id == tid)).all()
        assert {g.status for g in games} - {arena.CANCELLED} <= {"running"}  # the pair "next" holds plays on
        assert s.scalar(select(func.count()).select_from(GameJob).where(GameJob.state == "queued")) == 0


def test_a_test_with_an_odd_game_limit_ends_at_its_last_pair(db):
    """max_games 5: two pairs fit, the fifth game never (games are played in pairs); the test
    ends at its limit once they are counted, rather than run on with nothing queued."""
    make, author, (v1, v2) = db
    with make.begin() as s:
        tid = arena.new_test(s, s.get(User, author.id), arena.TestRequest(new=v2, base=v1, max_games=5)).id
        assert game_leases.waiting_games(s) == 2
    for _ in range(2):
        with make.begin() as s:
            lease = game_leases.claim_game(s, "w")
        _play_pair(make, lease, v2, (1.0, 0.0))  # even: the SPRT decides nothing
    with make() as s:
        test = s.get(ArenaTest, tid)
        assert (test.status, test.wins, test.losses, game_leases.waiting_games(s)) == (LIMIT, 2, 2, 0)


def test_a_finished_test_of_identical_versions_says_why_it_has_no_elo(db):
    """Every pair 1-1 (identical engines): the page and `grader arena test --wait`'s line give
    the reason there is no normalized Elo, name the model, and print an LLR of 0, never -0."""
    from grader.portal.arena.client import TestState

    make, author, (v1, v2) = db
    with make.begin() as s:
        tid = arena.new_test(s, s.get(User, author.id), arena.TestRequest(new=v2, base=v1, max_games=4)).id
    for _ in range(2):
        with make.begin() as s:
            lease = game_leases.claim_game(s, "w")
        _play_pair(make, lease, v2, (1.0, 0.0))
    with make() as s:
        test = s.get(ArenaTest, tid)
        data = arena_pages.test_data(s, test, s.get(ArenaEngine, test.engine_id), s.get(User, author.id))
    assert data["status"] == LIMIT and data["elo"] is None
    assert data["elo_note"].startswith("every pair ended alike (2 of 2 DD/WL, as between identical engines)")
    state = TestState(data["id"], "", data["status"], data["games"], data["wins"], data["draws"], data["losses"],
                      tuple(data["pentanomial"]), -0.0, data["lower"], data["upper"], None, None, data["model"],
                      data["elo_note"])  # fmt: skip
    assert "LLR 0 (" in state.line() and "Elo (normalized) none: every pair ended alike" in state.line()
    assert "not finite" not in state.line()


def test_an_archive_refusal_lists_its_files_and_a_single_files_command_names_it_as_uploaded(db, tmp_path):
    """An Othello NBoard archive whose COMMAND names none of its files: the refusal lists what it
    holds and gives an example of its own, never Gomoku; a single engine.py started by
    'python3 engine.py' is taken (it is kept under the grader's name)."""
    from grader.portal.course.course import load_course
    from grader.portal.uploads import UploadError

    make, author, _ = db
    course = load_course(make_course(tmp_path / "course"))
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tf:
        for member, data in (("bot/engine.py", b"print(1)\n"), ("bot/book.txt", b"f5\n"), ("bot/COMMAND", b"ls -l\n")):
            info = tarfile.TarInfo(member)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    with make.begin() as s:
        engine = arena.new_engine(s, s.get(User, author.id), "edge", "nboard", "othello")
        with pytest.raises(UploadError) as refused:
            arena.new_version(s, course, engine, "bot.tar.gz", out.getvalue())
        assert str(refused.value) == ("COMMAND names none of the archive's files (it holds book.txt, engine.py): "
                                      "name your program's, like python3 engine.py")  # fmt: skip
        assert "Gomoku" not in str(refused.value)
        taken = arena.new_version(s, course, engine, "engine.py", b"print(1)\n", "python3 engine.py")
        assert taken.status == "checking" and taken.command == "python3 engine.py"


def test_an_api_token_works_for_its_days_then_is_refused(db):
    make, author, _ = db
    with make.begin() as s:
        token = new_api_token(s, s.get(User, author.id), "laptop")
    for age, works in ((API_TOKEN_DAYS - 1, True), (API_TOKEN_DAYS, False)):
        with make.begin() as s:
            (made,) = api_tokens(s, s.get(User, author.id))
            made.created_at = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(days=age, seconds=1)
        with make.begin() as s:
            assert (api_user(s, token) is not None) == works, age


def test_what_the_arena_refuses_says_why_and_how_to_fix_it(db):
    make, author, (v1, v2) = db
    with make.begin() as s:
        me, other = s.get(User, author.id), s.scalar(select(User).where(User.email == "b@example.edu"))
        with pytest.raises(arena.ArenaError, match="use 1 to 40 letters"):
            arena.new_engine(s, me, "../x", "nboard", "othello")
        with pytest.raises(arena.ArenaError, match="you have an engine named 'mine' already"):
            arena.new_engine(s, me, "mine", "nboard", "othello")
        with pytest.raises(arena.ArenaError, match="unknown protocol 'uci'"):
            arena.new_engine(s, me, "x", "uci", "othello")
        with pytest.raises(arena.ArenaError, match="you can test only your own engines' versions"):
            arena.new_test(s, other, arena.TestRequest(new=v2, base=v1))
        s.get(EngineVersion, v1).status = "failed"
        with pytest.raises(arena.ArenaError, match=r"mine v1 has not passed its check \(failed\)"):
            arena.new_test(s, me, arena.TestRequest(new=v2, base=v1))
        s.get(EngineVersion, v1).status = OK
        with pytest.raises(Exception, match="SPRT needs ELO0 < ELO1"):
            arena.new_test(s, me, arena.TestRequest(new=v2, base=v1, elo0=5, elo1=5))
        # a game limit without bound drew max_games/2 random openings on the request's thread (Gomoku's:
        # 50,000 in 5 s) and made a test that never stops: refused at once
        with pytest.raises(arena.ArenaError, match=r"^a test plays at most 20000 games; got 100000000: give a "):
            arena.new_test(s, me, arena.TestRequest(new=v2, base=v1, max_games=10**8))
        assert s.scalar(select(func.count()).select_from(ArenaTest)) == 0


@pytest.mark.parametrize(
    "role, owner, open_, sees, controls",
    [("student", True, False, True, True), ("student", False, False, False, False),
     ("student", False, True, True, False), ("ta", False, False, True, False),
     ("instructor", False, False, True, True)],
)  # fmt: skip
def test_an_author_reaches_their_engines_and_the_staff_the_courses(role, owner, open_, sees, controls):
    user = User(id=1, email="u@example.edu", name="U", role=role)
    engine = ArenaEngine(owner_id=1 if owner else 2, name="e", protocol="nboard", game="othello", open=int(open_))
    assert (arena.can_see(user, engine), arena.can_control(user, engine)) == (sees, controls)


@pytest.mark.parametrize("command", [["test", "mine", "2", "1"], ["ladders"], ["ladder", "duel"],
                                     ["enter", "duel", "mine"], ["deadline", "duel", "--wait"]])  # fmt: skip
def test_grader_arena_says_when_the_portal_cannot_be_reached(command):
    args = ["arena", *command, "--portal", "http://127.0.0.1:9", "--token", "grader_x"]
    ran = CliRunner().invoke(main, args)
    assert ran.exit_code == 1
    assert ran.output.startswith("Error: cannot reach the portal at http://127.0.0.1:9: ")
    assert ran.output.endswith(": is grader serve running there?\n")


# --- end to end: a server, its workers, real engines ----------------------------------------

CRASHES = b"import sys\nsys.exit(3)\n"


@pytest.mark.slow  # a server of its own, three checks and a test of 10-20 games: 20-40 s
def test_an_author_uploads_versions_and_a_test_decides_live(tmp_path):
    course = make_course(tmp_path / "course")
    server = Server(course, tmp_path, None, "--workers", "2")
    try:
        me = Client(server.url)
        me.sign_in(server.link)
        r = me.post("/arena", {"name": "mine", "protocol": "nboard", "game": "othello"})
        assert r.status_code == 201, r.text
        eid = r.json()["id"]
        for label, content, name in (("random", nboard_archive("random_mover"), "v1.tar.gz"),
                                     ("negamax", nboard_archive("negamax"), "v2.tar.gz"),
                                     ("crashes", CRASHES, "crash.py")):  # fmt: skip
            r = me.post(f"/arena/e/{eid}/versions", {"label": label}, files={"file": (name, content)})
            assert r.status_code == 201, r.text
        versions = _until_json(me, f"/arena/e/{eid}", lambda d: all(v["status"] != "checking" for v in d["versions"]))
        by_label = {v["label"]: v for v in versions["versions"]}
        assert by_label["random"]["status"] == by_label["negamax"]["status"] == "ok"
        assert "played a whole legal game" in by_label["negamax"]["message"]
        assert by_label["crashes"]["status"] == "failed"
        assert by_label["crashes"]["message"].startswith("it lost its check game by forfeit: ")
        ask = {"new": by_label["negamax"]["id"], "base": by_label["random"]["id"]}
        assert me.post(f"/arena/e/{eid}/tests", ask, csrf=False).status_code == 403
        token = me.post("/arena/token", {"label": "cli"}).json()["token"]
        bad = CliRunner().invoke(
            main, ["arena", "test", "--portal", server.url, "--token", "grader_x", "mine", "2", "1"]
        )
        assert bad.exit_code == 1 and bad.output.startswith("Error: the portal refused: the API token is unknown")
        # the command line starts the test with the token (no cookie, no CSRF token) and follows it
        book = tmp_path / "book.txt"
        book.write_text("# two openings, each played with both colours\nf5d6c3\nf5f6e6\n")
        args = ["arena", "test", "--portal", server.url, "--token", token, "mine", "2", "1", "--tc", "10+0.1",
                "--sprt", "0", "200", "--max-games", "60", "--openings", str(book), "--wait"]  # fmt: skip
        ran = CliRunner().invoke(main, args)
        assert ran.exit_code == 0, ran.output
        lines = ran.output.splitlines()
        assert lines[0].startswith(f"Test of mine v2 against v1 started: {server.url}/arena/t/")
        tid = lines[0].rsplit("/", 1)[1]
        assert lines[-1].startswith("H1: ")
        done = me.get(f"/arena/t/{tid}").json()
        assert lines[-1].startswith(f"H1: {done['games']} games, W-D-L {done['wins']}-{done['draws']}-{done['losses']}, "
                                    f"LLR {done['llr']:g} ({done['lower']:g}, {done['upper']:g}), Elo ")  # fmt: skip
        assert done["status"] == "H1" and done["llr"] >= done["upper"] and done["games"] < 60
        assert done["wins"] + done["draws"] + done["losses"] == done["games"] == 2 * sum(done["pentanomial"])
        assert (done["elo"] is None) == (done["elo_error"] is None)  # None: not finite (every pair won)
        # --wait's exit status says how the test ended: H0 3, limit 4 (one pair cannot reach a bound)
        for games, status, code in (("40", "H0", 3), ("2", "limit", 4)):
            args = ["arena", "test", "--portal", server.url, "--token", token, "mine", "1", "2", "--tc", "10+0.1",
                    "--sprt", "0", "200", "--max-games", games, "--openings", str(book), "--wait"]  # fmt: skip
            ended = CliRunner().invoke(main, args)
            assert ended.exit_code == code and ended.output.splitlines()[-1].startswith(f"{status}: "), ended.output
        assert done["openings"] == "book.txt" and {g["opening"] for g in done["list"]} == {"f5d6c3", "f5f6e6"}
        tests = me.get(f"/arena/e/{eid}").json()["tests"]
        assert tid in [t["id"] for t in tests] and sorted(t["status"] for t in tests) == ["H0", "H1", "limit"]
        first = next(g for g in done["list"] if g["status"] == "done")
        game = me.get(f"/arena/g/{first['id']}").json()
        rules = get_game("othello")
        assert game["moves"] and game["result"] in ("1-0", "0-1", "1/2-1/2")
        engine_moves = [m for m in game["played"] if not m["opening"]]
        assert engine_moves and all(m["clock"] is not None for m in engine_moves)
        replay = me.get(f"/arena/g/{first['id']}", params={"ply": 1}).json()
        pos = rules.replay(rules.parse_transcript(game["moves"])[:1])
        assert "".join(replay["board"]) == pos.board_string()
        assert "board" in me.html(f"/arena/g/{first['id']}").text
        one = me.http.get(f"/arena/g/{first['id']}/game.ggf")
        records = ggf.parse_records(one.text)
        assert one.status_code == 200 and len(records) == 1 and records[0][1]["PB"] == first["black"]
        # a pair another worker was playing when the test decided ends after it (kept, not counted)
        settled = _until_json(me, f"/arena/t/{tid}", lambda d: all(g["status"] not in ("queued", "running")
                                                                  for g in d["list"]))  # fmt: skip
        assert settled["games"] == done["games"]
        every = ggf.parse_records(me.http.get(f"/arena/t/{tid}/games.ggf").text)
        assert len(every) == len([g for g in settled["list"] if g["status"] == "done"])
        # another student sees none of it, and controls none of it
        links = me.post("/class/links").json()["links"]
        other = Client(server.url)
        other.sign_in(links[0]["link"])
        assert other.get("/arena").json()["engines"] == []
        for path in (f"/arena/e/{eid}", f"/arena/t/{tid}", f"/arena/g/{first['id']}", f"/arena/t/{tid}/games.ggf"):
            assert other.get(path).status_code == 404, path
        r = other.post(f"/arena/e/{eid}/versions", files={"file": ("x.py", CRASHES)})
        assert r.status_code == 404
        assert other.post(f"/arena/t/{tid}/stop").status_code == 404
        missing = CliRunner().invoke(
            main, ["arena", "test", "--portal", server.url, "--token", token, "mine", "9", "1"]
        )
        assert missing.output == "Error: mine has no version 9 (it has v1, v2, v3): upload it on the portal first\n"
        # the author's tokens listed (one, used), revoked, and refused from then on
        (listed,) = me.get("/arena").json()["tokens"]
        assert listed["label"] == "cli" and listed["used_at"] is not None
        assert other.post(f"/arena/token/{listed['id']}/revoke").status_code == 404  # not theirs
        assert me.post(f"/arena/token/{listed['id']}/revoke").json() == {"revoked": listed["id"]}
        assert me.get("/arena").json()["tokens"] == []
        revoked = CliRunner().invoke(
            main, ["arena", "test", "--portal", server.url, "--token", token, "mine", "2", "1"]
        )
        assert revoked.exit_code == 1 and "the API token is unknown, revoked or expired" in revoked.output
    finally:
        server.stop()


@pytest.mark.slow  # a server of its own and two checks: 15-30 s
def test_grader_arena_upload_sends_a_version_and_waits_for_its_check(tmp_path):
    """As fishtest's and OpenBench's clients submit: `grader arena upload ENGINE FILE` with the
    author's token; --wait follows the check and exits 0 when it passed, 3 when it failed."""
    course = make_course(tmp_path / "course")
    server = Server(course, tmp_path, None, "--workers", "1")
    try:
        me = Client(server.url)
        me.sign_in(server.link)
        eid = me.post("/arena", {"name": "mine", "protocol": "nboard", "game": "othello"}).json()["id"]
        token = me.post("/arena/token", {"label": "cli"}).json()["token"]
        (tmp_path / "engine.tar.gz").write_bytes(nboard_archive("greedy"))
        (tmp_path / "crash.py").write_bytes(CRASHES)

        def upload(*args: str):
            return CliRunner().invoke(main, ["arena", "upload", "--portal", server.url, "--token", token, *args])

        ran = upload("mine", str(tmp_path / "engine.tar.gz"), "--label", "greedy first", "--wait")
        assert ran.exit_code == 0, ran.output
        first, last = ran.output.splitlines()
        assert first == f"Uploaded mine v1: a worker checks it now ({server.url}/arena/e/{eid})"
        assert last.startswith("mine v1 passed its check: it played a whole legal game")
        ran = upload("mine", str(tmp_path / "crash.py"), "--command", "python3 crash.py", "--wait")
        assert ran.exit_code == 3 and ran.output.splitlines()[-1].startswith(
            "mine v2 failed its check: it lost its check game by forfeit: "
        ), ran.output
        versions = {v["number"]: v for v in me.get(f"/arena/e/{eid}").json()["versions"]}
        assert versions[1]["label"] == "greedy first" and versions[2]["command"] == "python3 crash.py"
        ran = upload("nope", str(tmp_path / "crash.py"))
        assert ran.exit_code == 1 and ran.output == (
            "Error: no engine 'nope' of yours on the portal: create it on its /arena page first\n"
        )
    finally:
        server.stop()


def _until_json(client: Client, path: str, done, seconds: float = 240) -> dict:
    import time

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        data = client.get(path).json()
        if done(data):
            return data
        time.sleep(0.3)
    raise AssertionError(f"{path} never got there: {data}")


WAITS = """import os, time, random
exec(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "moves.py")).read())
_choose = choose


def choose(board, token):
    while os.path.exists({armed!r}) and not os.path.exists({go!r}):  # armed by the test, until it says go
        time.sleep(0.05)
    return _choose(board, token)
"""


@pytest.mark.slow
@pytest.mark.parametrize("attempts", [3, 1])
def test_a_worker_killed_mid_game_leaves_its_pair_to_another_counted_once(database, tmp_path, attempts):  # noqa: F811
    """SIGKILL a worker process while its engine waits mid-game: once the lease expires another
    worker plays the pair again from the start and counts it; the test counts two games. With
    ``--attempts 1`` the next worker fails the job instead, and the test ends saying why."""
    course = make_course(tmp_path / "course")
    (course / "config.yaml").write_text("isolation: none\n")  # the engine must see the test's files
    armed, go = tmp_path / "armed", tmp_path / "go"
    waits = nboard_archive(WAITS.format(armed=str(armed), go=str(go)).encode(), "waits.py")
    with tarfile.open(fileobj=io.BytesIO(waits)) as tf:  # the waiting script plays random_mover's moves
        members = {m.name: tf.extractfile(m).read() for m in tf.getmembers()}
    members["engine/moves.py"] = bundled("submissions", "random_mover.py").read_bytes()
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tf:
        for member, data in members.items():
            info = tarfile.TarInfo(member)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    server = Server(course, tmp_path, database, "--workers", "0")
    make = sessions(connect(database))
    first = second = None
    try:
        me = Client(server.url)
        me.sign_in(server.link)
        eid = me.post("/arena", {"name": "mine", "protocol": "nboard", "game": "othello"}).json()["id"]
        ids = [me.post(f"/arena/e/{eid}/versions", files={"file": (n, c)}).json()["id"]
               for n, c in (("v1.tar.gz", nboard_archive("random_mover")), ("v2.tar.gz", out.getvalue()))]  # fmt: skip
        options = ("--lease", "2", "--attempts", str(attempts))
        first = Worker(course, database, *options)
        _until(make, lambda s: s.scalar(select(func.count()).select_from(EngineVersion)
                                        .where(EngineVersion.status == OK)) == 2)  # fmt: skip
        armed.write_text("")
        tid = me.post(f"/arena/e/{eid}/tests", {"new": ids[1], "base": ids[0], "max_games": "2"}).json()["id"]
        held = _until(make, lambda s: s.scalar(select(ArenaGame).where(ArenaGame.status == "running")))
        assert held.played_by.startswith(first.name + "-")
        first.stop(signal.SIGKILL)
        go.write_text("")
        second = Worker(course, database, *options)
        test = _until(
            make, lambda s: s.scalar(select(ArenaTest).where(ArenaTest.id == tid, ArenaTest.status != "running"))
        )
        shown = me.get(f"/arena/t/{tid}").json()
    finally:
        server.stop()
        for w in (first, second):
            if w:
                w.stop()
    if attempts == 1:  # the job its worker died on once: failed, its test told, nothing counted
        assert test.status == arena.ERROR and test.wins + test.draws + test.losses == 0
        assert shown["status"] == "error" and shown["why"].startswith("the arena stopped 1 times on this job")
        return
    assert test.status == LIMIT and test.wins + test.draws + test.losses == 2  # the pair, counted once
    with make() as s:
        games = s.scalars(select(ArenaGame).where(ArenaGame.test_id == tid)).all()
        assert len(games) == 2 and all(g.status == DONE and g.played_by.startswith(second.name + "-") for g in games)
        assert [j.attempts for j in s.scalars(select(GameJob).where(GameJob.kind == "games"))] == [2]
        assert all(json.loads(g.record)["moves"] == g.moves for g in games)


@pytest.mark.slow  # a browser, a server, two checks and a test of 10-20 games: 20-40 s
def test_an_author_submits_a_version_in_the_browser_and_watches_the_test_decide(tmp_path, chromium):
    for name in ("random_mover", "negamax"):
        (tmp_path / f"{name}.tar.gz").write_bytes(nboard_archive(name))
    course = make_course(tmp_path / "course")
    server = Server(course, tmp_path, None, "--workers", "2")
    try:
        page = chromium.new_page()
        problems: list[str] = []
        page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)  # a CSP violation too
        page.on("pageerror", lambda e: problems.append(str(e)))
        page.goto(server.link)
        with page.expect_navigation():  # signed in before the next page is asked for
            page.click("#signin")
        page.goto(server.url + "/arena")
        page.fill("input[name=name]", "mine")
        page.click("#new-engine button")
        page.wait_for_url(f"{server.url}/arena/e/*")
        for name in ("random_mover", "negamax"):
            page.set_input_files("#upload input[name=file]", str(tmp_path / f"{name}.tar.gz"))
            page.fill("#upload input[name=label]", name)
            with page.expect_navigation():  # the engine's page again, whole, before the next upload
                page.click("#upload button")
        page.locator("#new-test").wait_for(timeout=120_000)  # both checked: the page put the form in place itself
        assert page.locator("#versions .check-ok").count() == 2
        page.select_option("#new-test select[name=new]", label="v2")
        page.select_option("#new-test select[name=base]", label="v1")
        page.fill("#new-test input[name=elo1]", "200")
        page.fill("#new-test input[name=max_games]", "60")
        page.click("#new-test button")
        page.wait_for_url(f"{server.url}/arena/t/*")
        page.locator("#status:text-is('H1')").wait_for(timeout=240_000)  # the page updates itself until then
        assert int(page.inner_text("#games")) >= 2
        page.click("#test-games a >> nth=0")
        page.wait_for_url(f"{server.url}/arena/g/*")
        assert page.locator("#board td.cell-x").count() > 0 and page.locator("#moves tr").count() > 1
        assert problems == []
    finally:
        server.stop()


@pytest.mark.slow  # three check games over GTP on the portal's worker threads: 3-6 s
def test_gtp_gomoku_versions_are_checked_and_a_failing_one_says_why(db, tmp_path):
    from grader.portal.course.course import load_course, make_demo_course
    from grader.portal.jobs.workers import Workers

    make, author, _ = db
    course = load_course(make_demo_course(tmp_path / "course"))
    gomoku = ROOT / "submissions" / "gomoku"
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tf:
        for name in ("random_player.py", "solver.py"):
            tf.add(gomoku / name, f"player/{name}")
    with make.begin() as s:
        engine = arena.new_engine(s, s.get(User, author.id), "five", "gtp", "gomoku")
        uploads = [("solver.py", (gomoku / "solver.py").read_bytes(), None),
                   ("random_player.py", (gomoku / "random_player.py").read_bytes(), None),  # needs solver.py
                   ("player.tar.gz", out.getvalue(), "python3 random_player.py")]  # fmt: skip
        ids = [arena.new_version(s, course, engine, name, data, command).id for name, data, command in uploads]
    pool = Workers(course, make, 2)
    pool.start()
    try:
        checked = _until(make, lambda s: all(s.get(EngineVersion, i).status != "checking" for i in ids) and
                         [(v.status, v.message) for v in (s.get(EngineVersion, i) for i in ids)])  # fmt: skip
    finally:
        pool.stop()
    assert [status for status, _ in checked] == ["ok", "failed", "ok"]
    assert checked[0][1].startswith("it played a whole legal game as black against the bundled engine: ")
    assert checked[1][1].endswith("the last line it wrote to stderr: ModuleNotFoundError: No module named 'solver'")


def test_an_author_uploads_at_most_the_days_versions(db, tmp_path, monkeypatch):
    """Each version is kept and checked by a game: past VERSIONS_PER_DAY in 24 hours over all an
    author's engines, an upload is refused (one line); a version older than a day no longer counts."""
    import datetime as dt

    from grader.portal.course.course import load_course, make_demo_course
    from grader.portal.uploads import UploadError

    make, author, (v1, _v2) = db
    course = load_course(make_demo_course(tmp_path / "course"))
    script = (ROOT / "grader" / "share" / "submissions" / "tictactoe" / "minimax.py").read_bytes()
    monkeypatch.setattr(arena, "VERSIONS_PER_DAY", 2)
    with make.begin() as s:
        bot = arena.new_engine(s, s.get(User, author.id), "ttt", "script", "tictactoe")
        with pytest.raises(
            UploadError, match=r"^you have uploaded 2 versions in the last 24 hours: upload this one la"
        ):
            arena.new_version(s, course, bot, "minimax.py", script)
        s.get(EngineVersion, v1).uploaded_at = arena.now() - dt.timedelta(days=1, minutes=1)
    with make.begin() as s:
        bot = s.scalar(select(ArenaEngine).where(ArenaEngine.name == "ttt"))
        assert arena.new_version(s, course, bot, "minimax.py", script).number == 1
        with pytest.raises(UploadError, match="you have uploaded 2 versions"):
            arena.new_version(s, course, bot, "minimax.py", script)


def running_game(make, email: str) -> tuple[int, str, list[str]]:
    """A game of a new test between two checked versions of ``email``'s engine, marked running
    as a worker's claim marks it: (its id, its lease token, its opening's moves then legal ones)."""
    with make.begin() as s:
        me = s.scalar(select(User).where(User.email == email))
        ids = checked_versions(s, me, "mine", 2)
        arena.new_test(s, me, arena.TestRequest(new=ids[1], base=ids[0]))
        lease = game_leases.claim_game(s, "w")
        game = s.scalars(select(ArenaGame).where(ArenaGame.job_id == lease.job_id).order_by(ArenaGame.id)).first()
        game.status, game.lease_token = "running", lease.token
        rules = get_game("othello")
        pos, moves = rules.opening_start(game.opening)
        pos = rules.replay(moves, pos)
        for _ in range(8):
            moves.append(pos.moves()[0])
            pos = pos.play(moves[-1])
        return game.id, lease.token, [rules.transcript(moves[: k + 1]) for k in range(len(moves))]


@pytest.mark.slow  # a browser and a server: 5-10 s
def test_a_games_page_has_coordinates_and_marks_the_last_move_and_a_tests_page_labels_its_counts(tmp_path, chromium):
    """The board has its files and ranks; the last move's square is ringed and named in words;
    the test's pentanomial counts and its possible ends are said in words."""
    url = f"sqlite:///{tmp_path / 'portal.sqlite3'}"
    server = Server(make_course(tmp_path / "course"), tmp_path, url, "--workers", "0")
    engine = connect(url)
    make = sessions(engine)
    try:
        with make() as s:
            email = s.scalar(select(User.email).where(User.role == "instructor"))
        gid, token, lines = running_game(make, email)
        arena_play.live(make, gid, token)(GameRecord(f"g{gid}", "p1", 1, "b", "w", "", moves=lines[-1]))
        with make() as s:
            tid = s.get(ArenaGame, gid).test_id
        page = chromium.new_page()
        page.goto(server.link)
        with page.expect_navigation():  # signed in before the next page is asked for
            page.click("#signin")
        page.goto(f"{server.url}/arena/g/{gid}")
        last = lines[-1][-2:]
        assert page.locator("#board th[scope=col]").all_inner_texts() == list("abcdefgh")
        assert page.locator("#board th[scope=row]").all_inner_texts() == [str(n) for n in range(1, 9)]
        ringed = page.locator("#board td.last")
        assert ringed.count() == 1 and ringed.get_attribute("title") == f"the last move, {last}"
        assert page.inner_text("#last-move") == f"Last move: {last}"
        cell = page.locator(f"#board tr >> nth={int(last[1])} >> td >> nth={'abcdefgh'.index(last[0])}")
        assert cell.get_attribute("class").endswith(" last")  # the square the move names
        page.goto(f"{server.url}/arena/g/{gid}?ply=0")
        assert page.locator("#board td.last").count() == 0 and page.inner_text("#last-move") == "No move yet"
        page.goto(f"{server.url}/arena/t/{tid}")
        heads = page.locator("#penta th").all_inner_texts()
        assert [h.split()[0] for h in heads] == ["LL", "LD", "DD/WL", "WD", "WW"]
        assert "lost both games" in heads[0] and "won both games" in heads[4]
        ends = dict(zip(page.locator("#statuses dt").all_inner_texts(), page.locator("#statuses dd").all_inner_texts()))
        assert list(ends) == ["H1", "H0", "limit"]
        assert "stronger" in ends["H1"] and "no gain" in ends["H0"] and "no decision" in ends["limit"]
    finally:
        server.stop()
        engine.dispose()


@pytest.mark.slow  # a browser and a server: 5-10 s
def test_a_refused_upload_keeps_the_forms_values_and_says_why_and_every_page_links_to_the_arena(tmp_path, chromium):
    """A version refused (its command names none of the archive's files) is the engine page again,
    with the reason, the files the archive holds, and the label and command as they were typed;
    the navigation of every page links to the arena and the ladders."""
    server = Server(make_course(tmp_path / "course"), tmp_path, None, "--workers", "0")
    try:
        (tmp_path / "bot.tar.gz").write_bytes(nboard_archive("greedy"))
        page = chromium.new_page()
        page.goto(server.link)
        with page.expect_navigation():  # signed in before the next page is asked for
            page.click("#signin")
        for path in ("/", "/class", "/class/queue", "/ladders", "/sessions"):
            page.goto(server.url + path)
            assert page.locator("header nav a[href='/arena']").inner_text() == "Arena", path
            assert page.locator("header nav a[href='/ladders']").count() == 1, path
        page.goto(server.url + "/class/queue")  # in the portal's look: its counts as the other pages' summaries
        assert page.locator("#queue-summary .k").all_inner_texts() == ["Waiting", "Being graded"]
        page.goto(server.url + "/arena")
        page.fill("input[name=name]", "mine")
        page.click("#new-engine button")
        page.wait_for_url(f"{server.url}/arena/e/*")
        page.set_input_files("#upload input[name=file]", str(tmp_path / "bot.tar.gz"))
        page.fill("#upload input[name=label]", "deeper search")
        page.fill("#upload input[name=command]", "python3 missing.py")
        with page.expect_navigation():
            page.click("#upload button")
        said = page.inner_text("#upload-error")
        assert said.startswith("Not uploaded: the command names none of the archive's files (it holds "), said
        assert page.input_value("#upload input[name=label]") == "deeper search"
        assert page.input_value("#upload input[name=command]") == "python3 missing.py"
        assert "Gomoku" not in said
        page.fill("#upload input[name=command]", "ls -l")
        page.set_input_files("#upload input[name=file]", str(tmp_path / "bot.tar.gz"))
        with page.expect_navigation():
            page.click("#upload button")
        said = page.inner_text("#upload-error")
        assert "names none of the archive's files (it holds COMMAND" not in said
        assert "(it holds engine.py, player.py): name your program's" in said, said
        assert page.input_value("#upload input[name=command]") == "ls -l"
        assert page.input_value("#upload input[name=label]") == "deeper search"
    finally:
        server.stop()


@pytest.mark.slow  # a browser and a server: 5-10 s
def test_a_running_games_page_shows_new_moves_and_its_end_without_reloading(tmp_path, chromium):
    url = f"sqlite:///{tmp_path / 'portal.sqlite3'}"
    server = Server(make_course(tmp_path / "course"), tmp_path, url, "--workers", "0")
    engine = connect(url)
    make = sessions(engine)
    try:
        with make() as s:
            email = s.scalar(select(User.email).where(User.role == "instructor"))
        gid, token, lines = running_game(make, email)
        write = arena_play.live(make, gid, token)
        page = chromium.new_page()
        problems: list[str] = []
        page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: problems.append(str(e)))
        page.goto(server.link)
        with page.expect_navigation():  # signed in before the next page is asked for
            page.click("#signin")
        page.goto(f"{server.url}/arena/g/{gid}")
        shown = page.locator("#moves tr").count() - 1
        page.evaluate("window.notReloaded = true")
        for n, line in enumerate(lines[shown:], shown + 1):
            time.sleep(arena_play.LIVE_SECONDS)  # each move written, as a worker writes one this late
            write(GameRecord(f"g{gid}", "p1", 1, "b", "w", "", moves=line))
            page.locator(f"#moves tr >> nth={n}").wait_for(timeout=30_000)
        with make.begin() as s:
            game = s.get(ArenaGame, gid)
            arena.write_record(game, GameRecord(f"g{gid}", "p1", 1, "b", "w", "", moves=lines[-1], result="1-0",
                                                reason="normal"))  # fmt: skip
        page.locator("#game-status:has-text('done')").wait_for(timeout=30_000)
        assert page.evaluate("window.notReloaded") is True  # the same page all along
        assert page.locator("#moves tr").count() == len(lines) + 1
        assert page.get_attribute("#game", "data-settled") == "true"
        assert problems == []
    finally:
        server.stop()
        engine.dispose()


@pytest.mark.slow  # GRhino plays a whole check game over GTP on a worker thread: 2-10 s
@pytest.mark.skipif(
    not Path("/usr/games/gtp-rhino").is_file(), reason="GRhino is not installed: apt-get install grhino"
)
def test_grhino_over_gtp_is_an_othello_version_checked_by_a_whole_game(db, tmp_path):
    from grader.portal.course.course import load_course, make_demo_course
    from grader.portal.jobs.workers import Workers

    make, author, _ = db
    course = load_course(make_demo_course(tmp_path / "course"))
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tf:  # a real engine of a package, started by the archive's script
        for name, data in (("COMMAND", b"sh run.sh\n"), ("run.sh", b"exec /usr/games/gtp-rhino\n")):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    with make.begin() as s:
        engine = arena.new_engine(s, s.get(User, author.id), "rhino", "gtp", "othello")
        vid = arena.new_version(s, course, engine, "rhino.tar.gz", out.getvalue()).id
    pool = Workers(course, make, 1)
    pool.start()
    try:
        status, message = _until(make, lambda s: s.get(EngineVersion, vid).status != "checking" and
                                 (s.get(EngineVersion, vid).status, s.get(EngineVersion, vid).message))  # fmt: skip
    finally:
        pool.stop()
    assert status == "ok", message
    assert message.startswith("it played a whole legal game as black against the bundled engine: ")


def test_a_running_games_last_move_reaches_its_row_with_no_move_after_it(db, monkeypatch):
    """Moves faster than LIVE_SECONDS are written at most once per LIVE_SECONDS, and the last
    of them once LIVE_SECONDS have passed, though no other move comes to write it (an engine
    thinking long, or the game over while its pair's other game is played)."""
    from sqlalchemy import event

    make, _, _ = db
    monkeypatch.setattr(arena_play, "LIVE_SECONDS", 0.1)
    gid, token, lines = running_game(make, "b@example.edu")
    writes: list[str] = []
    event.listen(make.kw["bind"], "before_cursor_execute",
                 lambda conn, cursor, sql, *rest: writes.append(sql) if sql.startswith("UPDATE arena_games") else None)  # fmt: skip
    write = arena_play.live(make, gid, token)
    started = time.monotonic()
    for line in lines:  # a burst of moves, sooner than LIVE_SECONDS after the game's start
        write(GameRecord(f"g{gid}", "p1", 1, "b", "w", "", moves=line))
    burst = time.monotonic() - started
    for _ in range(200):
        with make() as s:
            if s.get(ArenaGame, gid).moves == lines[-1]:
                break
        time.sleep(0.05)
    with make() as s:
        assert s.get(ArenaGame, gid).moves == lines[-1]
    assert 1 <= len(writes) <= 2 + burst / arena_play.LIVE_SECONDS  # one write per LIVE_SECONDS at most


def test_a_tests_page_draws_its_llr_after_each_counted_pair_between_its_bounds_and_its_elo(db):
    """The LLR after each pair, from the stored games by the CLI's SPRT code, ends at the
    test's own; a pair played after the decision is not drawn; the chart names H0 and H1 at
    the bounds, the Elo chart its interval, and the status is a sentence."""
    from grader.tournaments.sprt import Pentanomial, llr

    make, author, (v1, v2) = db
    with make.begin() as s:
        tid = arena.new_test(s, s.get(User, author.id), arena.TestRequest(new=v2, base=v1, elo1=100, max_games=400)).id
    with make.begin() as s:
        stale = game_leases.claim_game(s, "dead")
    results = [(1.0, 0.5), (1.0, 1.0), (0.0, 1.0), (1.0, 1.0), (0.5, 0.5)] * 10
    counted = Pentanomial()
    expected = [(0, 0.0)]
    for scores in results:
        with make.begin() as s:
            lease = game_leases.claim_game(s, "w")
        _play_pair(make, lease, v2, scores)
        counted = counted.add(*scores)
        expected.append((counted.games, llr(counted, 0.0, 100.0)))
        with make() as s:
            if s.get(ArenaTest, tid).status != "running":
                break
    _play_pair(make, stale, v2, (0.0, 0.0))  # after the decision: played, not counted
    with make() as s:
        test = s.get(ArenaTest, tid)
        history = arena.llr_history(s, test)
        assert test.status == H1 and history == expected and history[-1][1] == pytest.approx(test.llr)
        data = arena_pages.test_data(s, test, s.get(ArenaEngine, test.engine_id), s.get(User, author.id))
    assert data["verdict"].startswith("H1 accepted: the LLR reached its upper bound")
    assert data["history"][-1] == [history[-1][0], round(history[-1][1], 4)]
    charts = arena_pages._charts(data)
    assert f">H1 {data['upper']:.2f}<" in charts["llr"] and f">H0 {data['lower']:.2f}<" in charts["llr"]
    points = charts["llr"].split('<polyline class="line" points="', 1)[1].split('"', 1)[0].split()
    assert len(points) == len(history)  # a point per counted pair, and the start
    assert f"LLR {history[-1][1]:.2f} after {history[-1][0]} games" in charts["llr"]
    assert 'class="err"' in charts["elo"] and ">elo1<" in charts["elo"] and "style" not in charts["llr"] + charts["elo"]
