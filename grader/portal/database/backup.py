"""A portal's backup: every table of its database (each upload's bytes, grade, audit row, arena
version, ladder game and LTI key) and its Alembic revision, in one file that restores into an
empty database of either kind.

Why a dump of the portal's own tables, not SQLite's online backup API and ``pg_dump``: a course
that outgrows one machine moves from SQLite to PostgreSQL (or back) by its backup, which
neither tool's copy does (each restores only into its own kind); ``pg_dump`` must be installed
where the backup is taken and be as new as the server; and one format is one restore to test.
The copy is consistent, taken while the portal serves and grades: every table is read in one
transaction, a snapshot (PostgreSQL's REPEATABLE READ; a read transaction of SQLite in WAL
mode), which holds up no writer. The tables are the database's own, found by reflection and
read in the order of their foreign keys: a table a later migration adds is copied with no
change here.

The file is gzip'd JSON lines: a header (the format and its version, the grader's version, the
revision), then for each table a line naming it and its columns and a line per row, and last
the row counts (a file cut short is refused). A value JSON has no type for is tagged: bytes as
``{"b": BASE64}``, a time as ``{"t": ISO 8601 in UTC}``, a decimal as ``{"n": TEXT}``. The file
is its owner's alone (mode 600): it holds what the database holds, the cookies' secret key,
the LTI tool's private key and the password hashes.

A restore makes the tables of the backup's revision in an empty database, writes the rows, and
upgrades the tables to this grader's newest revision, all in one transaction: all done, or
nothing. It refuses a database that has tables, and a backup of a newer grader (a revision or
a format this one does not know)."""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import gzip
import json
import os
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from alembic import command
from alembic.config import Config as AlembicConfig
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Connection, DateTime, Integer, MetaData, Table, func, inspect, make_url, select, text
from sqlalchemy.exc import ArgumentError, SQLAlchemyError

from ...errors import GraderError
from ...version import __version__
from .db import MIGRATIONS, READS, connect, current_revision, hide_password, known_revision

FORMAT = "grader-portal-backup"
VERSION = 1  # the file's layout; a grader reads its own and older ones
BATCH = 500  # rows read or written at a time
VERSIONS_TABLE = "alembic_version"  # the revision: the header's, not copied as a table


@dataclass(frozen=True)
class Backup:
    """A backup written: where, the revision of its tables, and the rows of each table."""

    path: Path
    revision: str
    rows: dict[str, int]
    size: int  # the file's bytes


@dataclass(frozen=True)
class Restored:
    """A backup restored: the revision it was taken at, the one its tables are at now, the rows of each table."""

    database: str
    revision: str
    head: str
    rows: dict[str, int]


def _encode(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {"b": base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, dt.datetime):
        utc = value.replace(tzinfo=dt.timezone.utc) if value.tzinfo is None else value.astimezone(dt.timezone.utc)
        return {"t": utc.isoformat()}  # SQLite's times are UTC without their zone: the portal writes them so
    if isinstance(value, dt.date):
        return {"d": value.isoformat()}
    if isinstance(value, decimal.Decimal):
        return {"n": str(value)}
    if isinstance(value, (dict, list)):
        return {"j": value}  # a JSON column's value, kept apart from the tags
    return value


def _decoder(table: Table, columns: list[str]) -> Any:
    """A row of the file to the values ``table`` takes: times naive in UTC for a column without a zone."""
    types = {c: table.c[c].type for c in columns}
    naive = {c for c, t in types.items() if isinstance(t, DateTime) and not t.timezone}

    def decode(row: list[Any]) -> dict[str, Any]:
        out = {}
        for name, value in zip(columns, row):
            if isinstance(value, dict):
                (tag, raw), *_ = value.items()
                if tag == "b":
                    value = base64.b64decode(raw)
                elif tag == "t":
                    value = dt.datetime.fromisoformat(raw)
                    value = value.replace(tzinfo=None) if name in naive else value
                elif tag == "d":
                    value = dt.date.fromisoformat(raw)
                elif tag == "n":
                    value = decimal.Decimal(raw)
                else:
                    value = raw
            out[name] = value
        return out

    return decode


def _revision(connection: Connection) -> str:
    found = current_revision(connection)  # a newer grader's tables: refused
    if found is None:
        raise GraderError("the database has no portal tables: there is nothing to back up (give the --database "
                          "its server uses)")  # fmt: skip
    return found


def _tables(connection: Connection) -> list[Table]:
    """The database's tables but Alembic's, parents before the tables that refer to them."""
    meta = MetaData()
    meta.reflect(connection)
    return [t for t in meta.sorted_tables if t.name != VERSIONS_TABLE]


def _snapshot(connection: Connection) -> None:
    """Make ``connection``'s next transaction one snapshot of every table, that waits for no writer."""
    if connection.dialect.name == "postgresql":
        connection.execution_options(isolation_level="REPEATABLE READ", postgresql_readonly=True)
    else:  # SQLite: a deferred BEGIN, a snapshot in WAL mode
        connection.execution_options(**{READS: True})


def _existing_sqlite(url: str) -> None:
    try:
        parsed = make_url(url)
    except ArgumentError:
        return  # connect() says what is wrong with it
    if parsed.drivername.startswith("sqlite") and parsed.database and not Path(parsed.database).is_file():
        raise GraderError(f"no database at {parsed.database}: give the --database its server uses")


def backup(url: str, out: str | Path) -> Backup:
    """Write a backup of the portal database at ``url`` to ``out`` (replaced only once the
    backup is whole: a backup that fails leaves no file named ``out``)."""
    out = Path(out)
    if not out.parent.is_dir():
        raise GraderError(f"no folder {str(out.parent)!r} for the backup {out.name}: make it first")
    _existing_sqlite(url)
    engine = connect(url)
    partial = out.with_name(f".{out.name}.{os.getpid()}.partial")
    try:
        with engine.connect() as connection:
            _snapshot(connection)
            with connection.begin(), gzip.open(_private(partial), "wt", encoding="utf-8") as f:
                revision = _revision(connection)
                rows = _dump(connection, revision, f)
            with open(partial, "rb") as written:
                os.fsync(written.fileno())
        os.replace(partial, out)
    except OSError as e:
        raise GraderError(f"cannot write the backup {out}: {e.strerror or e}: free some room or give another --out") \
            from None  # fmt: skip
    except SQLAlchemyError as e:
        cause = str(getattr(e, "orig", None) or e).strip().splitlines()[0]
        raise GraderError(f"the backup of {hide_password(url)} stopped: {cause}: take it again") from None
    finally:
        partial.unlink(missing_ok=True)
        engine.dispose()
    return Backup(out, revision, rows, out.stat().st_size)


def _private(path: Path) -> Path:
    """``path`` made empty, readable by its owner only: a backup holds the keys the database does
    (the cookies' secret, the LTI tool's private key, password hashes)."""
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600))
    os.chmod(path, 0o600)
    return path


def _dump(connection: Connection, revision: str, f: TextIO) -> dict[str, int]:
    tables = _tables(connection)
    header = {"format": FORMAT, "version": VERSION, "grader": __version__, "revision": revision,
              "made_at": dt.datetime.now(dt.timezone.utc).isoformat(), "from": connection.dialect.name,
              "tables": [t.name for t in tables]}  # fmt: skip
    f.write(json.dumps(header) + "\n")
    rows: dict[str, int] = {}
    for table in tables:
        columns = [c.name for c in table.columns]
        f.write(json.dumps({"table": table.name, "columns": columns}) + "\n")
        order = list(table.primary_key.columns) or list(table.columns)
        found = connection.execution_options(yield_per=BATCH).execute(select(table).order_by(*order))
        count = 0
        for row in found:
            f.write(json.dumps([_encode(v) for v in row]) + "\n")
            count += 1
        rows[table.name] = count
    f.write(json.dumps({"end": rows}) + "\n")
    return rows


# --- restoring ------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Header:
    revision: str
    grader: str
    tables: list[str]


def _lines(path: Path) -> Iterator[Any]:
    """The file's lines as JSON, GraderError for one that is not (a file that is no backup, or cut short)."""
    try:
        with gzip.open(path, "rt", encoding="utf-8") as f:
            for line in f:
                yield json.loads(line)
    except FileNotFoundError:
        raise GraderError(f"no backup file {str(path)!r}: give the FILE grader portal backup wrote") from None
    except (EOFError, zlib.error) as e:
        raise GraderError(f"the backup {path} is cut short or damaged ({e}): restore another backup") from None
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise GraderError(f"{path} is no backup of grader portal backup ({e}): give the FILE it wrote") from None


def _header(path: Path, first: Any) -> _Header:
    if not isinstance(first, dict) or first.get("format") != FORMAT:
        raise GraderError(f"{path} is no backup of grader portal backup: give the FILE it wrote")
    version, revision = first.get("version"), first.get("revision")
    if not isinstance(version, int) or version > VERSION:
        raise GraderError(f"the backup {path} was written by a newer grader ({first.get('grader')}: its format "
                          f"{version}, this grader reads {VERSION}): restore it with that grader or a newer one")  # fmt: skip
    if not isinstance(revision, str) or not known_revision(revision):
        raise GraderError(f"the backup {path} was taken by a newer grader ({first.get('grader')}: its tables at "
                          f"revision {revision}, which this grader ({__version__}) does not know): restore it with "
                          "that grader or a newer one")  # fmt: skip
    return _Header(revision, str(first.get("grader")), list(first.get("tables") or []))


def check_backup(path: str | Path) -> dict[str, int]:
    """Read the whole backup at ``path`` (before a database is touched): its rows of each table;
    GraderError for a file that is no backup, one cut short, or one of a newer grader."""
    path = Path(path)
    lines = _lines(path)
    _header(path, next(lines, None))
    counts: dict[str, int] = {}
    table = None
    for line in lines:
        if isinstance(line, dict) and "end" in line:
            if line["end"] != counts:
                break
            return counts
        if isinstance(line, dict) and "table" in line:
            table = line["table"]
            counts[table] = 0
        elif isinstance(line, list) and table is not None:
            counts[table] += 1
        else:
            break
    raise GraderError(f"the backup {path} is cut short or damaged (its end is missing or does not match its "
                      "rows): restore another backup")  # fmt: skip


def restore(path: str | Path, url: str) -> Restored:
    """Restore the backup at ``path`` into the empty database at ``url``: its tables made at the
    backup's revision, its rows written, the tables upgraded to the newest revision, in one
    transaction. GraderError (nothing written) for a database that has tables, or a backup that
    is damaged or of a newer grader."""
    path = Path(path)
    rows = check_backup(path)
    lines = _lines(path)
    header = _header(path, next(lines))
    engine = connect(url)
    shown = hide_password(url)
    config = AlembicConfig()
    config.set_main_option("script_location", str(MIGRATIONS))
    try:
        with engine.begin() as connection:
            there = [name for name in inspect(connection).get_table_names()]
            if there:
                raise GraderError(f"the database {shown} is not empty (it has {len(there)} tables: "
                                  f"{', '.join(sorted(there)[:4])}{', ...' if len(there) > 4 else ''}): restore into "
                                  "a new, empty database")  # fmt: skip
            config.attributes["connection"] = connection
            command.upgrade(config, header.revision)
            _load(connection, lines, path)
            _follow_sequences(connection)
            command.upgrade(config, "head")
            head = MigrationContext.configure(connection).get_current_revision() or header.revision
    except SQLAlchemyError as e:
        cause = str(getattr(e, "orig", None) or e).strip().splitlines()[0]
        raise GraderError(f"the restore into {shown} failed, and wrote nothing: {cause}") from None
    finally:
        engine.dispose()
    return Restored(shown, header.revision, head, rows)


def _load(connection: Connection, lines: Iterator[Any], path: Path) -> None:
    meta = MetaData()
    meta.reflect(connection)
    table: Table | None = None
    decode: Any = None
    batch: list[dict[str, Any]] = []

    def flush() -> None:
        if batch and table is not None:
            connection.execute(table.insert(), batch)
            batch.clear()

    for line in lines:
        if isinstance(line, list):
            batch.append(decode(line))
            if len(batch) >= BATCH:
                flush()
            continue
        flush()
        if "end" in line:
            return
        name, columns = line["table"], line["columns"]
        table = meta.tables.get(name)
        unknown = [c for c in columns if table is None or c not in table.c]
        if table is None or unknown:
            where = name if table is None else f"{name}.{unknown[0]}"
            raise GraderError(f"the backup {path} does not match the tables of its revision ({where} is not "
                              "among them): restore another backup")  # fmt: skip
        decode = _decoder(table, columns)


def _follow_sequences(connection: Connection) -> None:
    """PostgreSQL: each table's id sequence past the ids restored (SQLite's follow their rows)."""
    if connection.dialect.name != "postgresql":
        return
    meta = MetaData()
    meta.reflect(connection)
    for table in meta.sorted_tables:
        keys = list(table.primary_key.columns)
        if len(keys) != 1 or not isinstance(keys[0].type, Integer):
            continue
        sequence = connection.scalar(select(func.pg_get_serial_sequence(table.name, keys[0].name)))
        if sequence is None:
            continue
        top = connection.scalar(select(func.max(keys[0])))
        connection.execute(text("SELECT setval(CAST(:s AS regclass), :v, :called)"),
                           {"s": sequence, "v": top or 1, "called": top is not None})  # fmt: skip
