"""``grader serve``, ``grader worker`` and ``grader portal sync``: the course portal (grader/portal/, the ``portal`` extra)."""

from __future__ import annotations

import click

from ..portal import check_extra
from .options import cluster_option, echo, fail_cleanly

LEASE = 60.0  # as grader.portal.database.leases.LEASE_SECONDS, which the CLI does not import before check_extra

NICE = 10  # as grader.portal.jobs.workers.GRADING_NICE
nice_option = click.option(
    "--nice", default=NICE, show_default=True, type=click.IntRange(0, 19), metavar="N",
    help="The grading threads' nice value (Linux): their CPU weight below the pages' so that pages "
         "answer first in a rush (0: the same weight; 10: a tenth).",
)  # fmt: skip
lease_option = click.option(
    "--lease", default=LEASE, show_default=True, type=click.FloatRange(1, 3600), metavar="SECONDS",
    help="How long a job stays a killed worker's before another claims it (renewed every third while grading).",
)  # fmt: skip


ATTEMPTS = 3  # as grader.portal.database.leases.MAX_ATTEMPTS

attempts_option = click.option(
    "--attempts", default=ATTEMPTS, show_default=True, type=click.IntRange(1, 100), metavar="N",
    help="A job whose worker died on it (killed, lost) N times is failed, saying so, not claimed again.",
)  # fmt: skip


LOOPBACK = ("127.0.0.1", "localhost", "::1")  # a server only this machine reaches: its own address is the links'


@click.command(
    help="""Start the course portal: students upload scripts (a GTP program for the Gomoku lab; a
    file, or a .zip or .tar.gz of its folder) in a browser and see their public tests'
    feedback as soon as they are graded; the instructor sees the class table.

    COURSE is a folder with a course.yaml (its assignments: game, plan, limits, submissions
    per day, deadlines) and the plan files, regression files and roster it names. Without
    COURSE, a demo course (the Othello endgame, tic-tac-toe and Gomoku over GTP labs, three
    students) is made in ./grader-demo-course.
    The database is SQLite in the course's .portal/ folder unless --database names another.
    Prints the address and a one-time sign-in link for the course's first instructor.
    With --workers 0 it serves pages only: grader worker grades, on this machine or others.
    Needs the portal extra: pip install "grader[portal]".

    \b
    Examples:
      grader serve
      grader serve course/ --port 8080
      grader serve course/ --database postgresql://grader@/portal --host 0.0.0.0
      grader serve course/ --database postgresql://grader@db/portal --workers 0
      grader serve course/ --cluster tcp://scheduler:8786 --workers 8
      grader serve course/ --public-url https://portal.example.edu
    """,
)
@click.argument("course", required=False, type=click.Path(file_okay=False))
@click.option("--database", default=None, metavar="URL",
              help="sqlite:///FILE or postgresql://USER@HOST/NAME (default: SQLite in COURSE/.portal/).")  # fmt: skip
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on (0.0.0.0: every interface).")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535), help="Port (0: any free one).")
@click.option("--workers", default=2, show_default=True, type=click.IntRange(0, 64),
              help="Submissions graded at once, their tests sharing config.yaml's jobs job slots (with two, the "
                   "next one's tests fill the slots the last tests of one leave idle); 0: pages only.")  # fmt: skip
@lease_option
@attempts_option
@nice_option
@cluster_option
@click.option("--public-url", default=None, metavar="URL",
              help="The address people reach the portal at, through a proxy (https://...: the session cookie is "
                   "Secure); links it prints and hands out use it.")  # fmt: skip
@click.option("--forwarded-allow-ips", default=None, metavar="IPS",
              help="Proxies whose X-Forwarded-Proto (https: Secure cookies) and X-Forwarded-For (the client's "
                   "address, for the sign-in limits) are trusted, comma-separated, * for any (default: "
                   "$FORWARDED_ALLOW_IPS, else course.yaml's trusted_proxies, else 127.0.0.1,::1).")  # fmt: skip
@click.option("--rotate-lti-key", is_flag=True,
              help="Retire the LTI tool's signing key and make a new one (the old stays in its JWKS for 7 days).")  # fmt: skip
@fail_cleanly
def serve(course: str | None, database: str | None, host: str, port: int, workers: int, lease: float,
          attempts: int, nice: int, cluster: str | None, public_url: str | None, forwarded_allow_ips: str | None,
          rotate_lti_key: bool) -> None:  # fmt: skip
    check_extra()
    from ..portal.course.mail import KINDS
    from ..portal.server import Started
    from ..portal.server import serve as run  # the extra's packages: loaded once known to be installed

    def ready(started: Started) -> None:
        echo(f"Course: {started.course.title} ({started.course.folder}), database {started.database}")
        if not started.workers:
            echo("No workers here: grader worker --database URL COURSE grades the uploads")
        elif started.cluster:
            echo(f"Grading on the Dask cluster at {started.cluster}")
        public = f", reached at {started.public_url}/" if started.public_url else ""
        echo(f"Portal at {started.url}{public} (Ctrl-C stops it)")
        echo(f"One-time sign-in link for {started.instructor}: {started.instructor_link}")
        if started.lti_kid:
            echo(f"LTI 1.3 tool: login {started.url}lti/login, launch {started.url}lti/launch, "
                 f"JWKS {started.url}lti/jwks (key {started.lti_kid})")  # fmt: skip
        mail = started.course.mail
        if mail is not None:
            echo(f"Mail through {mail.host}:{mail.port} ({mail.security}) from {mail.from_address}: "
                 f"{', '.join(k for k in KINDS if mail.sends(k)) or 'no kind sent'}")  # fmt: skip
        if started.public_url is None and (mail is not None or host not in LOOPBACK):
            echo(f"Warning: the links in mail and on the class page point at {started.url.rstrip('/')}, as this "
                 "machine calls itself: give --public-url https://HOST, the address students reach")  # fmt: skip

    try:
        run(course, database, host, port, workers, on_ready=ready, lease=lease, cluster=cluster,
            rotate_lti_key=rotate_lti_key, attempts=attempts, public_url=public_url,
            forwarded_allow_ips=forwarded_allow_ips, nice=nice)  # fmt: skip
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM, passed on by uvicorn once it has stopped
        pass
    echo("Portal stopped.")


@click.command(
    help="""Grade a portal's uploads from its database: workers on this machine or another,
    claiming jobs from the same queue as the server's. A job a killed worker held is claimed
    again once its lease expires, and only the holder of a job's lease writes its result, so
    every submission is graded exactly once.

    COURSE is the course folder the server serves (kept in git, so each machine has it;
    default: the current folder). The database must be one a server of this grader made.
    Needs the portal extra: pip install "grader[portal]".

    \b
    Examples:
      grader worker --database postgresql://grader@db/portal course/
      grader worker --database postgresql://grader@db/portal course/ --workers 4
      grader worker --database postgresql://grader@db/portal course/ --cluster tcp://scheduler:8786
    """,
)
@click.argument("course", required=False, default=".", type=click.Path(file_okay=False))
@click.option("--database", required=True, metavar="URL",
              help="The server's database: postgresql://USER@HOST/NAME, or sqlite:///FILE on the same machine.")  # fmt: skip
@click.option("--workers", default=2, show_default=True, type=click.IntRange(1, 64),
              help="Submissions graded at once, their tests sharing config.yaml's jobs job slots (with two, the "
                   "next one's tests fill the slots the last tests of one leave idle).")  # fmt: skip
@lease_option
@attempts_option
@nice_option
@cluster_option
@fail_cleanly
def worker(course: str, database: str, workers: int, lease: float, attempts: int, nice: int,
           cluster: str | None) -> None:  # fmt: skip
    check_extra()
    from ..portal.server import WorkersStarted, work

    def ready(started: WorkersStarted) -> None:
        echo(f"Course: {started.course.title} ({started.course.folder}), database {started.database}")
        where = f"on the Dask cluster at {started.cluster}" if started.cluster else "here"
        echo(f"Worker {started.name}: {started.workers} grading at once, {where} (Ctrl-C stops it)")

    work(course, database, workers, lease, on_ready=ready, cluster=cluster, attempts=attempts, nice=nice)


@click.group("portal", help="""The course portal's course, applied without a restart.

    \b
    Examples:
      grader portal check course/
      grader portal sync course/
      grader portal link instructor@example.edu course/
    """)  # fmt: skip
def portal_group() -> None:
    pass


@portal_group.command(
    help="""Apply COURSE's course.yaml (its roster, instructors, assignments, plans, late policy)
    to its portal's database: every server running on that database loads it again within a
    second, without a restart. A bad value gives one line and changes nothing. A changed plan
    makes the reruns of the class page say so, as after a restart. Without COURSE, the demo
    course in ./grader-demo-course.

    \b
    Examples:
      grader portal sync course/
      grader portal sync course/ --database postgresql://grader@/portal
    """,
)
@click.argument("course", required=False, type=click.Path(file_okay=False))
@click.option("--database", default=None, metavar="URL",
              help="The database its servers use (default: SQLite in COURSE/.portal/).")  # fmt: skip
@fail_cleanly
def sync(course: str | None, database: str | None) -> None:
    check_extra()
    from pathlib import Path

    from ..errors import ConfigError
    from ..portal.course.course import DEMO_FOLDER, load_course
    from ..portal.course.sync import sync as apply_course
    from ..portal.database.db import default_url
    from ..runs.text import plural

    folder = Path(course) if course is not None else Path.cwd() / DEMO_FOLDER
    if course is None and not folder.is_dir():
        raise ConfigError(f"no demo course in ./{DEMO_FOLDER}: give COURSE, or make it with 'grader serve' first")
    loaded = load_course(folder)  # checked before anything is made or written
    done = apply_course(folder, database or default_url(loaded.folder))
    change = "changed: running servers load it within a second" if done.changed else "unchanged"
    echo(f"Synced {loaded.title} ({loaded.folder}): {plural(len(loaded.assignments), 'assignment', 'assignments')}, "
         f"{plural(done.people, 'person', 'people')} on the roster ({done.added} new); {change}")  # fmt: skip
    if done.changes:
        echo(f"In the audit log: {done.changes}")


@portal_group.command(
    help="""Check COURSE's course.yaml, config.yaml, plans and roster as ``grader portal sync``
    and ``grader serve`` load them, without applying anything: exit status 0 when they load,
    1 with the first mistake in one line (its line in course.yaml, and the key meant, for an
    unknown key). Each assignment's deadline is printed as read, in its zone.

    \b
    Examples:
      grader portal check course/
    """,
)
@click.argument("course", type=click.Path(file_okay=False))
@fail_cleanly
def check(course: str) -> None:
    check_extra()
    from ..portal.accounts.roster import roster_file
    from ..portal.course.course import load_course
    from ..runs.text import plural

    loaded = load_course(course)
    people = roster_file(loaded.roster) if loaded.roster is not None else []
    echo(f"{loaded.folder / 'course.yaml'} is valid: {loaded.title}, "
         f"{plural(len(loaded.assignments), 'assignment', 'assignments')}, "
         f"{plural(len(people), 'person', 'people')} on the roster; nothing applied (grader portal sync applies it)")  # fmt: skip
    for a in loaded.assignments.values():
        due = f"due {a.deadline:%Y-%m-%d %H:%M} {a.deadline.tzname()}" if a.deadline else "no deadline"
        teams = f", in teams of up to {a.team_size}" if a.team_size else ""
        echo(f"  {a.name}: {a.title}, {due}{teams}")


@portal_group.command(
    help="""Print a new one-time sign-in link for the person of EMAIL (an instructor, a TA or a
    student of COURSE's portal), without a restart: for an instructor who lost the link the
    start printed, or a student whose link was used. It works once, within 72 hours, at the
    address the server last started gave its links (--url to give another); audited.

    \b
    Examples:
      grader portal link instructor@example.edu course/
      grader portal link ta@example.edu course/ --url https://portal.example.edu
    """,
)
@click.argument("email")
@click.argument("course", required=False, type=click.Path(file_okay=False))
@click.option("--database", default=None, metavar="URL",
              help="The database its servers use (default: SQLite in COURSE/.portal/).")  # fmt: skip
@click.option("--url", default=None, metavar="URL",
              help="The portal's address for the link (default: the one its server last started with).")  # fmt: skip
@fail_cleanly
def link(email: str, course: str | None, database: str | None, url: str | None) -> None:
    check_extra()
    from ..portal.accounts.signin import link_for
    from ..portal.database.db import check_current, connect, sessions

    engine = connect(_database_of(course, database))
    try:
        check_current(engine)
        made = link_for(sessions(engine), email, url)
    finally:
        engine.dispose()
    echo(f"One-time sign-in link for {made.email} ({made.role}): {made.link}")
    echo(f"It works once, until {made.expires_at:%Y-%m-%d %H:%M} UTC.")


@portal_group.command(
    help="""Form the teams FILE gives (a CSV: a line each of assignment, student's e-mail, team
    name or number; a first line 'assignment,email,team' is skipped) in COURSE's portal, for
    assignments whose course.yaml says 'teams: {size: N}'. All lines or none: a bad line
    gives one error naming it and the fix. A student already in the team a line names is left
    there; in another team, refused. Audited.

    \b
    Examples:
      grader portal teams teams.csv course/
      grader portal teams teams.csv course/ --database postgresql://grader@/portal
    """,
)
@click.argument("file", type=click.Path(dir_okay=False))
@click.argument("course", required=False, type=click.Path(file_okay=False))
@click.option("--database", default=None, metavar="URL",
              help="The database its servers use (default: SQLite in COURSE/.portal/).")  # fmt: skip
@fail_cleanly
def teams(file: str, course: str | None, database: str | None) -> None:
    check_extra()
    from pathlib import Path

    from ..errors import ConfigError
    from ..portal.course.course import DEMO_FOLDER, load_course
    from ..portal.course.teams import import_teams
    from ..portal.database.db import check_current, connect, sessions
    from ..runs.text import plural

    try:
        text = Path(file).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"cannot read the teams file '{file}': {e}: give a CSV file") from None
    loaded = load_course(Path(course) if course is not None else Path.cwd() / DEMO_FOLDER)
    engine = connect(_database_of(course, database))
    try:
        check_current(engine)
        with sessions(engine).begin() as session:
            done = import_teams(session, loaded, text, Path(file).name)
    finally:
        engine.dispose()
    echo(
        f"Teams from {file}: {plural(done.teams, 'team', 'teams')} made, "
        f"{plural(done.placed, 'student', 'students')} placed, {done.unchanged} already in their team"
    )


def _size(n: int) -> str:
    return f"{n / 1024:.0f} KiB" if n < 1024 * 1024 else f"{n / 1024 / 1024:.1f} MiB"


def _database_of(course: str | None, database: str | None) -> str:
    """--database, else the SQLite database of COURSE's .portal/ (the demo course's without COURSE)."""
    from pathlib import Path

    from ..errors import ConfigError
    from ..portal.course.course import DEMO_FOLDER
    from ..portal.database.db import DB_FILE

    if database is not None:
        return database
    folder = Path(course) if course is not None else Path.cwd() / DEMO_FOLDER
    found = folder / ".portal" / DB_FILE
    if not found.is_file():
        raise ConfigError(f"no portal database in {folder / '.portal'}: give the COURSE folder its server serves, "
                          "or --database URL")  # fmt: skip
    return f"sqlite:///{found}"


@portal_group.command(
    help="""Back up COURSE's portal database to FILE: every upload, grade, extension, release,
    audit row, arena version, ladder game and LTI key, with the revision of its tables. Taken
    while the portal serves and grades (one snapshot of every table, that holds nobody up).
    The file restores into an empty SQLite or PostgreSQL database alike (grader portal
    restore), so it also moves a course from one to the other. FILE is written whole or not
    at all.

    \b
    Examples:
      grader portal backup course/ --out portal-backup.jsonl.gz
      grader portal backup course/ --database postgresql://grader@db/portal --out /backups/portal-$(date +%F).jsonl.gz
    """,
)
@click.argument("course", required=False, type=click.Path(file_okay=False))
@click.option("--out", required=True, type=click.Path(dir_okay=False), metavar="FILE", help="The backup to write.")
@click.option("--database", default=None, metavar="URL",
              help="The database its servers use (default: SQLite in COURSE/.portal/).")  # fmt: skip
@fail_cleanly
def backup(course: str | None, out: str, database: str | None) -> None:
    check_extra()
    from ..portal.database.backup import backup as take
    from ..runs.text import plural

    done = take(_database_of(course, database), out)
    counts = done.rows
    echo(f"Backed up {plural(counts.get('submissions', 0), 'upload', 'uploads')}, {plural(counts.get('users', 0), 'person', 'people')} "
         f"and {plural(sum(counts.values()), 'row', 'rows')} in {plural(len(counts), 'table', 'tables')} (revision {done.revision}) "
         f"to {done.path} ({_size(done.size)})")  # fmt: skip


@portal_group.command(
    help="""Restore a backup of grader portal backup into the empty database URL: its tables
    made, every row written, and the tables upgraded to this grader's newest revision, all in
    one transaction (all done, or nothing). A database that has tables is refused, and so is a
    backup of a newer grader. Then start grader serve COURSE --database URL on it.

    \b
    Examples:
      grader portal restore portal-backup.jsonl.gz --database sqlite:///course/.portal/portal.sqlite3
      grader portal restore portal-backup.jsonl.gz --database postgresql://grader@db/portal
    """,
)
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--database", required=True, metavar="URL",
              help="An empty database: sqlite:///FILE (made if missing) or postgresql://USER@HOST/NAME (createdb NAME).")  # fmt: skip
@fail_cleanly
def restore(file: str, database: str) -> None:
    check_extra()
    from ..portal.database.backup import restore as put_back
    from ..runs.text import plural

    done = put_back(file, database)
    upgraded = f", upgraded to {done.head}" if done.head != done.revision else ""
    echo(f"Restored {plural(done.rows.get('submissions', 0), 'upload', 'uploads')} and {plural(sum(done.rows.values()), 'row', 'rows')} "
         f"into {done.database} (revision {done.revision}{upgraded})")  # fmt: skip
