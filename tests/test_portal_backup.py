"""A term of a course's work kept: ``grader portal backup`` taken while the portal serves and
grades, restored by ``grader portal restore`` into a new SQLite and a real PostgreSQL database,
and every page, for each role, the same after as before; SQLite to PostgreSQL and back with
every row the same; and what a restore refuses, in one line. Upgrades with data: a database
made at each earlier revision with the term's rows, upgraded, keeps every row and serves every
page; a database of a newer grader is refused."""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import secrets
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("sqlalchemy", reason='the portal needs its extra: pip install -e ".[portal]"')

from click.testing import CliRunner  # noqa: E402
from sqlalchemy import MetaData, func, select, text  # noqa: E402
from test_portal_ladder import seed  # noqa: E402

from grader.cli import main  # noqa: E402
from grader.portal.arena import arena  # noqa: E402
from grader.portal.arena import leases as game_leases  # noqa: E402
from grader.portal.course.course import load_course  # noqa: E402
from grader.portal.database import backup as backups  # noqa: E402
from grader.portal.database.arena import DONE, ArenaEngine, ArenaGame, ArenaTest  # noqa: E402
from grader.portal.database.db import connect, head_revision, sessions, upgrade  # noqa: E402
from grader.portal.database.ladders import LadderEntry  # noqa: E402
from grader.portal.database.lti import SENT, LtiIdentity, LtiLink, LtiLogin, LtiScore  # noqa: E402
from grader.portal.database.mail import LinkRequest, MailMessage, MailOptOut  # noqa: E402
from grader.portal.database.models import (  # noqa: E402
    FAILED,
    GRADED,
    QUEUED,
    RUNNING,
    STUDENT,
    DailyCount,
    Job,
    Submission,
    Team,
    TeamInvite,
    TeamMember,
    User,
    now,
)
from grader.portal.database.resets import PasswordReset  # noqa: E402

from conftest import one_line_error  # noqa: E402
from portal_server import NEGAMAX, ROOT, WRONG, Client, Server, make_course  # noqa: E402
from test_portal_arena import _count_pair, checked_versions  # noqa: E402

TICTACTOE = ROOT / "submissions" / "tictactoe" / "can_lose.py"
LADDER = "    ladder: {anonymous: true, top: 2, deadline_games: 4, tc: 5+0.05}\n"
LTI = """\
lti:
  platforms:
    - issuer: https://lms.example.edu
      client_id: grader-tool
      deployment_ids: ['d1']
      auth_login_url: https://lms.example.edu/auth
      token_url: https://lms.example.edu/token
      jwks_url: https://lms.example.edu/jwks
"""
GRADED_WITHIN = 600.0  # a loaded machine of two cores grades a tic-tac-toe upload in 30 s
RUSH = 2  # uploads of each student in the rush (of three)


def pg_database(base: str) -> str:
    """A new, empty database on the tests' PostgreSQL server: its URL."""
    name = "t_" + secrets.token_hex(6)
    admin = connect(base.format(db="postgres")).execution_options(isolation_level="AUTOCOMMIT")
    with admin.connect() as c:
        c.execute(text(f"CREATE DATABASE {name}"))
    admin.dispose()
    return base.format(db=name)


def term_course(folder: Path) -> Path:
    """test_portal's course (six students, the demo's three labs), its Othello lab with a
    ladder, its tic-tac-toe lab in teams of 2, the course an LTI tool of a platform, and ten
    uploads a day."""
    make_course(folder, per_day=10)
    yaml = (folder / "course.yaml").read_text()
    yaml = yaml.replace("    limits: {wall_seconds: 10}\n", "    limits: {wall_seconds: 10}\n" + LADDER, 1)
    yaml = yaml.replace("    plan: tictactoe.plan\n", "    plan: tictactoe.plan\n    teams: {size: 2}\n", 1)
    (folder / "course.yaml").write_text(yaml + LTI)
    return folder


def moved(client: Client, url: str) -> Client:
    """The same browser (its cookies) at another server's address."""
    other = Client(url)
    other.http.cookies.update(client.http.cookies)
    other.csrf = client.csrf
    return other


def until_graded(make, seconds: float = GRADED_WITHIN) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with make() as s:
            if not s.scalar(select(func.count()).select_from(Job)):
                return
        time.sleep(0.3)
    raise AssertionError("the uploads were not graded in time")


def fill_term(tmp: Path) -> dict:
    """A term's worth of a course's rows: uploads graded by a real server's workers (Othello,
    tic-tac-toe; one rerun by the instructor), an extension, a release, a password, an API
    token, two regrade requests (one answered); then, as the arena's and the ladders' tests write them, an arena engine with two
    checked versions and a test with a pair played, a ladder of four entries with its games,
    and an LTI identity, link, login and a score sent; a team with an invitation out; a mail whose
    link expired and a reset link used. The course folder, its database's URL, and the signed-in
    clients (by email) for the next server."""

    course = term_course(tmp / "course")
    server = Server(course, tmp)
    try:
        prof = Client(server.url)
        prof.sign_in(server.link)
        people = {"instructor@example.edu": prof}
        for entry in prof.post("/class/links").json()["links"]:
            people[entry["email"]] = Client(server.url)
            people[entry["email"]].sign_in(entry["link"])
        s1, s2, s3 = (people[f"s{i}@example.edu"] for i in (1, 2, 3))
        for who, script, lab in ((s1, NEGAMAX, "othello"), (s1, WRONG, "othello"), (s2, WRONG, "othello"),
                                 (s3, TICTACTOE, "tictactoe"), (s2, TICTACTOE, "tictactoe")):  # fmt: skip
            r = who.upload(script, name=script.name, assignment=lab)
            assert r.status_code == 201, r.text
        url = f"sqlite:///{course / '.portal' / 'portal.sqlite3'}"
        engine = connect(url)
        make = sessions(engine)
        until_graded(make)
        assert prof.post("/class/rerun", {"assignment": "othello", "email": "s1@example.edu"}).status_code == 200
        until_graded(make)
        assert prof.post("/class/extension", {"assignment": "othello", "email": "s2@example.edu",
                                              "days": "2"}).status_code == 200  # fmt: skip
        assert prof.post("/class/release", {"assignment": "othello"}).status_code == 200
        for who, lab, reply in ((s2, "othello", "Looked again: no change."), (s3, "tictactoe", None)):
            sid = who.get(f"/a/{lab}").json()["submissions"][0]["id"]
            asked = who.post(f"/s/{sid}/regrade", {"reason": "Test 3, please: my move is optimal too."})
            assert asked.status_code == 201, asked.text
            if reply:  # one answered, one left open
                assert prof.post(f"/class/regrades/{asked.json()['id']}", {"reply": reply}).status_code == 200
        assert s2.post("/password", {"password": "correct horse battery"}).status_code in (200, 303)
        assert s1.post("/arena/token", {"label": "laptop"}).status_code in (200, 201)
    finally:
        server.stop()
    loaded = load_course(course)
    with make.begin() as s:
        author = s.scalar(select(User).where(User.email == "s1@example.edu"))
        v1, v2 = checked_versions(s, author, "mine", 2)
        test = arena.new_test(s, author, arena.TestRequest(new=v2, base=v1, elo1=200, max_games=400))
        lease = game_leases.claim_game(s, "w")
        _count_pair(s, lease, v2, (1.0, 0.5))
        assert test.id
    seed(make, loaded, "othello", [f"s{i}@example.edu" for i in range(1, 5)])
    with make.begin() as s:
        s3_id = s.scalar(select(User.id).where(User.email == "s3@example.edu"))
        sub = s.scalar(select(Submission).where(Submission.user_id == s3_id))
        issuer = "https://lms.example.edu"
        s.add(LtiIdentity(issuer=issuer, sub="lms-s3", user_id=s3_id))
        s.add(LtiLink(issuer=issuer, client_id="grader-tool", resource_link_id="rl-1", assignment=sub.assignment,
                      lineitem=f"{issuer}/lineitems/1"))  # fmt: skip
        s.add(LtiLogin(state=secrets.token_hex(8), nonce=secrets.token_hex(8), issuer=issuer, client_id="grader-tool",
                       used_at=now()))  # fmt: skip
        s.add(LtiScore(submission_id=sub.id, user_id=s3_id, assignment=sub.assignment, issuer=issuer,
                       client_id="grader-tool", lineitem=f"{issuer}/lineitems/1", user_sub="lms-s3",
                       score_given=sub.total, score_maximum=sub.max_total, reason="graded", status=SENT,
                       attempts=1, sent_at=now()))  # fmt: skip
        for state, error in (("sent", None), ("waiting", "cannot reach the mail server smtp.example.edu:587")):
            s.add(MailMessage(kind="receipt", user_id=s3_id, to_address="s3@example.edu", subject="Received: lab",
                              body="SHA-256: ...", state=state, created_at=now(), next_at=now(), attempts=1,
                              last_error=error, sent_at=now() if state == "sent" else None))  # fmt: skip
        s.add(MailOptOut(user_id=s3_id, kind="graded"))
        s.add(MailMessage(kind="reset", user_id=s3_id, to_address="s3@example.edu", subject="Set a new password",
                          body="(a one-time link that expired before it could be sent: never sent)", state="expired",
                          created_at=now(), next_at=now(), attempts=0, expires_at=now()))  # fmt: skip
        s.add(PasswordReset(digest=hashlib.sha256(b"reset").hexdigest(), user_id=s3_id, created_at=now(),
                            expires_at=now(), used_at=now()))  # fmt: skip
        s.add(LinkRequest(email="s3@example.edu", client="127.0.0.1", at=now()))
        pair = Team(assignment="tictactoe", name="pair")
        s.add(pair)
        s.flush()
        s.add(TeamMember(team_id=pair.id, user_id=s3_id, assignment="tictactoe"))
        s4_id = s.scalar(select(User.id).where(User.email == "s4@example.edu"))
        s.add(TeamInvite(assignment="tictactoe", from_user=s3_id, to_user=s4_id))
    engine.dispose()
    return {"course": course, "url": url, "people": people}


def page_paths(url: str, course: Path) -> list[str]:
    """Every page of the course's portal its database's rows make, whoever may see it."""
    engine = connect(url)
    labs = list(load_course(course).assignments)
    with sessions(engine)() as s:
        subs = s.scalars(select(Submission.id).order_by(Submission.id)).all()
        emails = s.scalars(select(User.email).where(User.role == STUDENT).order_by(User.email)).all()
        engines = s.scalars(select(ArenaEngine.id).order_by(ArenaEngine.id)).all()
        tests = s.scalars(select(ArenaTest.id).order_by(ArenaTest.id)).all()
        games = s.scalars(select(ArenaGame.id).where(ArenaGame.status == DONE).order_by(ArenaGame.id)).all()
        entries = s.scalars(select(LadderEntry.id).order_by(LadderEntry.id)).all()
    engine.dispose()
    paths = ["/", "/class", "/class/audit", "/class/queue", "/class/lti", "/class/mail", "/class/regrades", "/preferences", "/class.csv", "/arena", "/ladders",
             "/ladder/othello", "/ladder/othello/crosstable", "/ladder/othello/grades.csv", "/ladder/othello/games.ggf"]  # fmt: skip
    paths += [f"/a/{a}" for a in labs] + [f"/class/{a}/gradescope.json" for a in labs]
    paths += [f"/class/{a}/students/{e}" for a in labs for e in emails] + [f"/s/{sid}" for sid in subs]
    paths += [f"/arena/e/{e}" for e in engines] + [f"/arena/t/{t}" for t in tests]
    paths += [f"/arena/t/{t}/games.ggf" for t in tests] + [f"/arena/g/{g}" for g in games]
    paths += [f"/ladder/othello/entry/{e}" for e in entries]
    return paths


UTC = re.compile(r"(\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:\.\d+)?)(?:\+00:00)?")


def pages(people: dict[str, Client], paths: list[str]) -> dict[tuple[str, str], tuple[int, object]]:
    """What each person is answered at each path: its status and its JSON (but the session's
    CSRF token), or its text. Times are written alike, in UTC with its zone: the pages write
    SQLite's without it, PostgreSQL's with it."""
    seen = {}
    for email, client in people.items():
        for path in paths:
            r = client.get(path)
            if r.headers.get("content-type", "").startswith("application/json"):
                body: object = json.loads(UTC.sub(r"\1+00:00", json.dumps({k: v for k, v in r.json().items()
                                                                              if k != "csrf"})))  # fmt: skip
            else:
                body = r.text
            seen[(email, path)] = (r.status_code, body)
    return seen


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "grader", "portal", *args], capture_output=True, text=True,
                          timeout=300)  # fmt: skip


def rows(url: str) -> dict[str, list[dict]]:
    """Every row of every table but Alembic's, by table, as a backup writes them."""
    engine = connect(url)
    meta = MetaData()
    out = {}
    with engine.connect() as c:
        meta.reflect(c)
        for table in meta.sorted_tables:
            if table.name != "alembic_version":
                order = list(table.primary_key.columns) or list(table.columns)
                out[table.name] = [{k: backups._encode(v) for k, v in row._mapping.items()}
                                   for row in c.execute(select(table).order_by(*order))]  # fmt: skip
    engine.dispose()
    return out


@pytest.fixture(scope="module")
def term(tmp_path_factory):
    return fill_term(tmp_path_factory.mktemp("term"))


@pytest.mark.slow  # a course graded by a real server, three more servers: 1-2 minutes
def test_a_backup_taken_while_serving_restores_every_page_on_sqlite_and_postgresql(term, postgres, tmp_path):
    course, url = term["course"], term["url"]
    paths = page_paths(url, course)
    server = Server(course, tmp_path, url, "--workers", "0")
    try:
        people = {e: moved(c, server.url) for e, c in term["people"].items()}
        before = pages(people, paths)
        assert pages(people, paths) == before  # nothing on these pages changes by itself
        assert (
            before[("s1@example.edu", "/arena")][0] == 200
            and before[("instructor@example.edu", "/class/lti")][0] == 200
        )
        busy, stop = [], threading.Event()

        def browse() -> None:  # the server keeps serving pages while the backup is taken
            reader = moved(term["people"]["s1@example.edu"], server.url)
            while not stop.is_set():
                busy.append(reader.get("/a/othello").status_code)

        browsing = threading.Thread(target=browse)
        browsing.start()
        try:
            made = cli("backup", str(course), "--out", str(tmp_path / "term.jsonl.gz"))
        finally:
            stop.set()
            browsing.join()
        assert made.returncode == 0, made.stderr
        assert made.stdout.startswith("Backed up 5 uploads, 7 people and ") and busy and set(busy) == {200}
    finally:
        server.stop()
    original = rows(url)
    copies = {"sqlite": f"sqlite:///{tmp_path / 'restored.sqlite3'}", "postgresql": pg_database(postgres)}
    for kind, copy in copies.items():
        done = cli("restore", str(tmp_path / "term.jsonl.gz"), "--database", copy)
        assert done.returncode == 0 and done.stdout.startswith("Restored 5 uploads and "), done.stderr
        assert rows(copy) == original, kind
        restored = Server(course, tmp_path, copy, "--workers", "0")
        try:
            after = pages({e: moved(c, restored.url) for e, c in term["people"].items()}, paths)
        finally:
            restored.stop()
        differ = [k for k in before if before[k] != after[k]]
        assert differ == [], (kind, differ[:5])
        assert after == before, kind


@pytest.mark.slow  # a PostgreSQL server; the term's course graded (shared with the test above)
def test_sqlite_to_postgresql_and_back_keeps_every_row_and_upload(term, postgres, tmp_path):
    original = rows(term["url"])
    pg, back = pg_database(postgres), f"sqlite:///{tmp_path / 'back.sqlite3'}"
    for source, target, name in ((term["url"], pg, "one"), (pg, back, "two")):
        assert cli("backup", "--database", source, "--out", str(tmp_path / f"{name}.gz")).returncode == 0
        assert cli("restore", str(tmp_path / f"{name}.gz"), "--database", target).returncode == 0
        assert rows(target) == original
    uploads = {r["id"]: r for r in original["submissions"]}
    engine = connect(back)
    with sessions(engine)() as s:
        for sub in s.scalars(select(Submission)):
            assert hashlib.sha256(sub.content).hexdigest() == sub.sha256 == uploads[sub.id]["sha256"]
    engine.dispose()
    with gzip.open(tmp_path / "two.gz", "rt") as f:
        header = json.loads(f.readline())
    assert header["from"] == "postgresql" and header["revision"] == head_revision()


# --- refusals, in one line ------------------------------------------------------------------


@pytest.fixture
def small(tmp_path):
    """A backup of a migrated SQLite database with a user in it: (its path, the database's URL)."""
    url = f"sqlite:///{tmp_path / 'small.sqlite3'}"
    engine = connect(url)
    upgrade(engine)
    with engine.begin() as c:
        c.execute(text("INSERT INTO users (email, name, role, created_at) VALUES ('a@x.org', 'A', 'student', "
                       "'2026-01-01 00:00:00')"))  # fmt: skip
    engine.dispose()
    backups.backup(url, tmp_path / "small.gz")
    return tmp_path / "small.gz", url


def _rewrite(path: Path, change) -> Path:
    with gzip.open(path, "rt") as f:
        lines = f.read().splitlines()
    lines = change(lines)
    out = path.with_name("changed.gz")
    with gzip.open(out, "wt") as f:
        f.write("".join(line + "\n" for line in lines))
    return out


def _header(lines: list[str], **values) -> list[str]:
    return [json.dumps({**json.loads(lines[0]), **values}), *lines[1:]]


def test_a_backup_is_its_owners_alone(small):
    """It holds the cookies' secret key, the LTI tool's private key and the password hashes."""
    path, _ = small
    assert path.stat().st_mode & 0o777 == 0o600


def test_a_restore_onto_a_database_with_tables_is_refused_and_changes_nothing(small, tmp_path):
    path, url = small
    result = CliRunner().invoke(main, ["portal", "restore", str(path), "--database", url])
    one_line_error(result, "is not empty", "restore into a new, empty database")
    assert rows(url)["users"][0]["email"] == "a@x.org" and len(rows(url)["users"]) == 1


@pytest.mark.parametrize(
    "change, says",
    [
        (lambda lines: _header(lines, revision="9999"), "taken by a newer grader"),
        (lambda lines: _header(lines, version=backups.VERSION + 1), "written by a newer grader"),
        (lambda lines: lines[:-1], "cut short"),
        (lambda lines: ['{"not": "a backup"}', *lines[1:]], "is no backup"),
    ],
    ids=["newer-revision", "newer-format", "cut-short", "no-backup"],
)
def test_a_backup_of_a_newer_grader_or_cut_short_is_refused_and_writes_nothing(small, tmp_path, change, says):
    path, _ = small
    target = tmp_path / "new.sqlite3"
    result = CliRunner().invoke(main, ["portal", "restore", str(_rewrite(path, change)), "--database",
                                       f"sqlite:///{target}"])  # fmt: skip
    one_line_error(result, says)
    assert not target.exists()  # refused before the database is touched


def test_a_gzip_file_cut_short_is_refused(small, tmp_path):
    path, _ = small
    cut = tmp_path / "cut.gz"
    cut.write_bytes(path.read_bytes()[:-20])
    result = CliRunner().invoke(main, ["portal", "restore", str(cut), "--database", f"sqlite:///{tmp_path / 'n.db'}"])
    one_line_error(result, "cut short")


def test_backing_up_what_is_no_portal_database_is_one_line(tmp_path):
    runner = CliRunner()
    one_line_error(runner.invoke(main, ["portal", "backup", str(tmp_path), "--out", str(tmp_path / "b.gz")]),
                   "no portal database")  # fmt: skip
    one_line_error(runner.invoke(main, ["portal", "backup", "--database", f"sqlite:///{tmp_path / 'none.db'}",
                                        "--out", str(tmp_path / "b.gz")]), "no database at")  # fmt: skip
    empty = f"sqlite:///{tmp_path / 'empty.db'}"
    connect(empty).dispose()
    one_line_error(runner.invoke(main, ["portal", "backup", "--database", empty, "--out", str(tmp_path / "b.gz")]),
                   "no portal tables")  # fmt: skip
    assert not (tmp_path / "b.gz").exists()


def test_a_backup_cut_by_a_failing_write_leaves_no_file(small, tmp_path):
    _, url = small
    out = tmp_path / "missing" / "b.gz"
    one_line_error(CliRunner().invoke(main, ["portal", "backup", "--database", url, "--out", str(out)]), "no folder")


def test_a_restore_that_fails_half_way_writes_nothing(small, tmp_path):
    """A row the target refuses (here a user whose e-mail repeats another's): the transaction rolls back."""
    path, _ = small

    def twice(lines: list[str]) -> list[str]:
        at = next(i for i, line in enumerate(lines) if line.startswith('{"table": "users"'))
        user = json.loads(lines[at + 1])
        extra = json.dumps([user[0] + 1, *user[1:]])
        end = json.loads(lines[-1])
        end["end"]["users"] += 1
        return [*lines[: at + 2], extra, *lines[at + 2 : -1], json.dumps(end)]

    target = f"sqlite:///{tmp_path / 'half.sqlite3'}"
    result = CliRunner().invoke(main, ["portal", "restore", str(_rewrite(path, twice)), "--database", target])
    one_line_error(result, "failed, and wrote nothing")
    engine = connect(target)
    with engine.connect() as c:
        assert c.execute(text("SELECT name FROM sqlite_master WHERE type = 'table'")).all() == []
    engine.dispose()


# --- a backup in a rush ---------------------------------------------------------------------


@pytest.mark.slow  # a server grading a rush of uploads, then another grading what the backup had queued
def test_a_backup_taken_in_a_rush_is_one_moment_of_the_portal_and_its_queue_is_graded_once(tmp_path):
    course = make_course(tmp_path / "course", per_day=50)
    server = Server(course, tmp_path, None, "--workers", "2")
    url = f"sqlite:///{course / '.portal' / 'portal.sqlite3'}"
    threads: list[threading.Thread] = []
    codes: list[int] = []
    try:
        prof = Client(server.url)
        prof.sign_in(server.link)
        students = []
        for entry in prof.post("/class/links").json()["links"]:
            students.append(Client(server.url))
            students[-1].sign_in(entry["link"])

        def rush(me: Client) -> None:
            for _ in range(RUSH):
                codes.append(
                    me.upload(TICTACTOE, name=f"t{secrets.token_hex(2)}.py", assignment="tictactoe").status_code
                )

        students = students[:3]
        threads = [threading.Thread(target=rush, args=(me,)) for me in students]
        for t in threads:
            t.start()
        engine = connect(url)
        deadline = time.monotonic() + GRADED_WITHIN
        while time.monotonic() < deadline:  # a backup once some are graded, others waiting
            with sessions(engine)() as s:
                if s.scalar(select(func.count()).select_from(Submission).where(Submission.status == GRADED)):
                    break
            time.sleep(0.2)
        engine.dispose()
        made = cli("backup", str(course), "--out", str(tmp_path / "rush.gz"))
    finally:
        for t in threads:
            t.join()
        server.stop()
    assert made.returncode == 0, made.stderr
    assert codes == [201] * RUSH * len(students)
    copy = f"sqlite:///{tmp_path / 'rush.sqlite3'}"
    assert cli("restore", str(tmp_path / "rush.gz"), "--database", copy).returncode == 0
    engine = connect(copy)
    make = sessions(engine)
    with make() as s:
        subs = s.scalars(select(Submission)).all()
        jobs = {j.submission_id for j in s.scalars(select(Job))}
        counts = {(c.user_id, c.assignment, c.day): c.count for c in s.scalars(select(DailyCount))}
        assert subs and all(hashlib.sha256(x.content).hexdigest() == x.sha256 for x in subs)
        for x in subs:  # each upload with its job until its result is written, in one moment of the portal
            assert (x.id in jobs) == (x.status in (QUEUED, RUNNING)), x.status
            assert x.gradings == (1 if x.status in (GRADED, FAILED) else 0)
        taken: dict = {}
        for x in subs:
            key = (x.user_id, x.assignment, x.received_at.date().isoformat())
            taken[key] = taken.get(key, 0) + (x.status != FAILED)
        assert counts == taken
        waiting = [x.id for x in subs if x.status in (QUEUED, RUNNING)]
    engine.dispose()
    assert waiting, "the backup caught no upload waiting: the rush was over"
    restored = Server(course, tmp_path, copy, "--workers", "2")  # the restored queue, graded
    try:
        engine = connect(copy)
        until_graded(sessions(engine))
        with sessions(engine)() as s:
            graded = s.scalars(select(Submission).where(Submission.id.in_(waiting))).all()
            assert all(x.status == GRADED and x.gradings == 1 for x in graded)
        engine.dispose()
    finally:
        restored.stop()


# --- upgrades with data ---------------------------------------------------------------------

# What a migration gives the rows it finds in a column it adds that is not NULL (any other added
# column is NULL in them): a new NOT NULL column needs its line here, or the test below fails.
ADDED = {("submissions", "gradings"): lambda row, at: 0, ("signin_failures", "client"): lambda row, at: "",
         ("users", "rostered"): lambda row, at: row["id"] not in at.get("linked", ())}  # fmt: skip
FEATURES = {"/arena": "0009", "/ladder": "0009", "/class/lti": "0006"}  # where pages' rows came in


def revisions() -> list[str]:
    """This grader's revisions, oldest first."""
    from alembic.script import ScriptDirectory

    from grader.portal.database.db import _alembic

    return [r.revision for r in reversed(list(ScriptDirectory.from_config(_alembic()).walk_revisions()))]


def at_revision(url: str, revision: str, term_rows: dict[str, list[dict]]) -> dict[str, list[dict]]:
    """A database at ``revision`` holding the term's rows as that revision's tables hold them (its
    tables and columns only); what its rows must be once upgraded to the newest revision."""
    engine = connect(url)
    upgrade(engine, revision)
    old = MetaData()
    old.reflect(engine)
    with engine.begin() as c:
        for table in old.sorted_tables:
            found = term_rows.get(table.name)
            if table.name == "alembic_version" or not found:
                continue
            columns = [col.name for col in table.columns]
            decode = backups._decoder(table, columns)
            c.execute(table.insert(), [decode([row[col] for col in columns]) for row in found])
    engine.dispose()
    linked = {r["user_id"] for r in term_rows.get("lti_identities", [])} if "lti_identities" in old.tables else set()
    expected = {}
    for name, found in term_rows.items():
        table = old.tables.get(name)
        if table is None:
            expected[name] = []
            continue
        fresh = [col for col in found[0] if col not in table.c] if found else []
        expected[name] = [{**row, **{col: ADDED.get((name, col), lambda row, at: None)(row, {"linked": linked})
                                     for col in fresh}} for row in found]  # fmt: skip
    return expected


def signed_in_anew(server: Server) -> dict[str, Client]:
    """The instructor and students s1 and s3, signed in with new links (sessions are the newest revision's)."""
    prof = Client(server.url)
    prof.sign_in(server.link)
    people = {"instructor@example.edu": prof}
    for entry in prof.post("/class/links").json()["links"]:
        if entry["email"] in ("s1@example.edu", "s3@example.edu"):
            people[entry["email"]] = Client(server.url)
            people[entry["email"]].sign_in(entry["link"])
    return people


@pytest.mark.slow  # a server for each earlier revision: 2-6 minutes
def test_a_database_of_each_earlier_revision_upgrades_keeping_every_row_and_serves_every_page(term, postgres, tmp_path):
    term_rows = rows(term["url"])
    course, paths = term["course"], page_paths(term["url"], course=term["course"])
    head = head_revision()
    server = Server(course, tmp_path, term["url"], "--workers", "0")
    try:
        now_seen = pages(signed_in_anew(server), paths)
    finally:
        server.stop()
    for revision in revisions()[:-1]:
        for kind in ("sqlite", "postgresql"):
            url = f"sqlite:///{tmp_path / f'at-{revision}.sqlite3'}" if kind == "sqlite" else pg_database(postgres)
            expected = at_revision(url, revision, term_rows)
            engine = connect(url)
            upgrade(engine)
            engine.dispose()
            assert rows(url) == expected, (revision, kind)
            if kind == "postgresql" and revision != revisions()[0]:
                continue  # the pages of every revision on SQLite, of the oldest on PostgreSQL
            server = Server(course, tmp_path, url, "--workers", "0")
            try:
                seen = pages(signed_in_anew(server), paths)
            finally:
                server.stop()
            for (who, path), (status, _) in seen.items():
                assert status < 500, (revision, kind, who, path)
                came = max((r for p, r in FEATURES.items() if path.startswith(p)), default=revisions()[0])
                if came <= revision:
                    assert status == now_seen[(who, path)][0], (revision, kind, who, path)
    assert head == revisions()[-1]


@pytest.mark.parametrize("command", ["serve", "worker", "sync", "backup"])
def test_a_database_of_a_newer_grader_is_refused_in_one_line(command, tmp_path):
    """An older grader (a downgrade) never touches the tables a newer one upgraded."""
    course = make_course(tmp_path / "course")
    url = f"sqlite:///{tmp_path / 'newer.sqlite3'}"
    engine = connect(url)
    upgrade(engine)
    with engine.begin() as c:
        c.execute(text("UPDATE alembic_version SET version_num = '9999'"))
    engine.dispose()
    args = {"serve": ["serve", str(course), "--port", "0", "--database", url],
            "worker": ["worker", str(course), "--database", url],
            "sync": ["portal", "sync", str(course), "--database", url],
            "backup": ["portal", "backup", "--database", url, "--out", str(tmp_path / "b.gz")]}[command]  # fmt: skip
    one_line_error(CliRunner().invoke(main, args), "revision 9999, newer than this grader's", "going back is not")
    engine = connect(url)
    with engine.connect() as c:
        assert c.execute(text("SELECT version_num FROM alembic_version")).scalar() == "9999"
    engine.dispose()
