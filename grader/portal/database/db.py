"""The database: SQLite in the course folder by default (WAL, so pages read while a worker
writes), PostgreSQL through psycopg 3 with ``--database postgresql://...``; its tables made
by the Alembic migrations (``upgrade``, run at every start)."""

from __future__ import annotations

import contextlib
import fcntl
import os
import secrets
from pathlib import Path
from typing import Any, Iterator

from alembic import command
from alembic.config import Config as AlembicConfig
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from alembic.util import CommandError
from sqlalchemy import Connection, Engine, create_engine, event, select
from sqlalchemy.exc import ArgumentError, DatabaseError
from sqlalchemy.orm import Session, sessionmaker

from ...errors import GraderError
from .models import Meta

DB_FILE = "portal.sqlite3"
MIGRATIONS = Path(__file__).resolve().parent / "migrations"


def default_url(course_folder: Path) -> str:
    """SQLite in the course folder's .portal/ (left out of git by the .gitignore written there)."""
    state = course_folder / ".portal"
    state.mkdir(exist_ok=True)
    (state / ".gitignore").write_text("*\n", encoding="utf-8")
    return f"sqlite:///{state / DB_FILE}"


def connect(url: str) -> Engine:
    """An engine for ``url`` (sqlite:///FILE or postgresql://...): GraderError, in one line, for
    a URL that cannot be used."""
    if url.startswith(("postgresql://", "postgres://")):
        url = "postgresql+psycopg://" + url.split("://", 1)[1]  # psycopg 3, not SQLAlchemy's default psycopg2
    try:
        if url.startswith("sqlite"):
            engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})
            event.listen(engine, "connect", _sqlite_pragmas)
            event.listen(engine, "begin", _begin)
        else:
            engine = create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=20)
        with engine.connect():
            pass
    except (ArgumentError, DatabaseError, ImportError) as e:  # DatabaseError: 'file is not a database' too
        cause = str(getattr(e, "orig", None) or e).strip().splitlines()[0]
        fix = ("give the portal's database file, or a new file's name to make one" if "not a database" in cause
               else "give sqlite:///FILE or postgresql://USER@HOST/NAME")  # fmt: skip
        raise GraderError(f"cannot open the database {hide_password(url)}: {cause} ({fix})") from None
    return engine


@contextlib.contextmanager
def serving(url: str) -> Iterator[int | None]:
    """While inside, this process is marked as serving the SQLite file of ``url`` (a lock on
    FILE.serving, let go however the process ends); yields the process id of another server
    already marked so (0: one whose id is unknown), else None. PostgreSQL: None."""
    if not url.startswith("sqlite:///"):
        yield None
        return
    try:
        fd = os.open(url[len("sqlite:///") :] + ".serving", os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:  # a folder this user may not write: nothing to tell by
        yield None
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            said = os.pread(fd, 20, 0).decode(errors="replace").strip()
            yield int(said) if said.isdigit() else 0
            return
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        yield None
    finally:
        os.close(fd)


def _sqlite_pragmas(connection: Any, _record: Any) -> None:
    connection.isolation_level = None  # transactions begun by _begin_immediate, not by the driver
    cursor = connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.close()


READS = "grader_reads"  # the execution option of ``reading``'s sessions


def _begin(connection: Any) -> None:
    """Each SQLite transaction takes the write lock when it begins: one that read and then
    writes (a daily count, a claim) never fails because another wrote in between; others wait
    (busy_timeout) instead. A session for reading only (``reading``) begins deferred: in WAL it
    reads a snapshot and waits for no writer, so a page is never held up behind a grader's
    write (nor sleeps in SQLite's busy handler, 1 to 100 ms a try)."""
    connection.exec_driver_sql("BEGIN" if connection.get_execution_options().get(READS) else "BEGIN IMMEDIATE")


def hide_password(url: str) -> str:
    head, sep, tail = url.rpartition("@")
    if not sep or ":" not in head.split("://", 1)[-1]:
        return url
    scheme, _, user = head.partition("://")
    return f"{scheme}://{user.split(':')[0]}:***@{tail}"


def _alembic() -> AlembicConfig:
    config = AlembicConfig()
    config.set_main_option("script_location", str(MIGRATIONS))
    return config


def head_revision() -> str:
    """The newest revision of this grader's tables."""
    head = ScriptDirectory.from_config(_alembic()).get_current_head()
    assert head is not None
    return head


def known_revision(revision: str) -> bool:
    """Whether ``revision`` is one of this grader's migrations (not a newer grader's)."""
    try:
        return ScriptDirectory.from_config(_alembic()).get_revision(revision) is not None
    except CommandError:
        return False


def current_revision(connection: Connection) -> str | None:
    """The revision of the database's tables (None: it has none); GraderError, in one line, for a
    revision this grader does not know: a newer grader's, which an older one must not touch."""
    current = MigrationContext.configure(connection).get_current_revision()
    if current is not None and not known_revision(current):
        raise GraderError(f"the database's tables are at revision {current}, newer than this grader's "
                          f"({head_revision()}): a newer grader upgraded them, and going back is not supported: "
                          "run that grader (pip install --upgrade grader), or restore a backup taken before "
                          "the upgrade into a new database")  # fmt: skip
    return current


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Bring the tables to the newest revision (Alembic's ``upgrade head``), or to ``revision``;
    GraderError for the tables of a newer grader (``current_revision``)."""
    config = _alembic()
    with engine.begin() as connection:
        current_revision(connection)
        config.attributes["connection"] = connection
        command.upgrade(config, revision)


def check_current(engine: Engine) -> None:
    """GraderError, in one line, unless the tables are at the newest revision (a worker never
    upgrades them: the server does, at its start)."""
    head = head_revision()
    with engine.connect() as connection:
        current = current_revision(connection)
    if current is None:
        raise GraderError("the database has no portal tables: start grader serve on it first (it makes them)")
    if current != head:
        raise GraderError(f"the database is at revision {current}, this grader needs {head}: "
                          "start this grader's grader serve on it once (it upgrades the tables)")  # fmt: skip


def sessions(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(engine, expire_on_commit=False)


def reading(make: sessionmaker[Session]) -> sessionmaker[Session]:
    """Sessions on ``make``'s database for reading only (a page's): on SQLite they begin
    deferred (``_begin``); elsewhere they are ``make``'s."""
    return sessionmaker(make.kw["bind"].execution_options(**{READS: True}), expire_on_commit=False)


def secret_key(make: sessionmaker[Session]) -> str:
    """The key that signs session cookies: made once, kept in the database (so every server
    process of a course shares it, and a restart keeps people signed in)."""
    with make.begin() as session:
        found = session.scalar(select(Meta.value).where(Meta.key == "secret_key"))
        if found is None:
            found = secrets.token_urlsafe(48)
            session.add(Meta(key="secret_key", value=found))
        return found
