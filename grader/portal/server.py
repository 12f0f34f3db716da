"""Starting the portal: the course loaded, the database upgraded to the newest revision, the
roster and instructors synced, then the workers and the web server (uvicorn) in this process.
Or workers alone (``grader worker``), on any machine that has the course folder, grading from
the same database. Nothing is requeued at a start: a job a killed process held is claimed
again once its lease expires, by whichever worker is free."""

from __future__ import annotations

import errno
import logging
import os
import socket
import threading
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import uvicorn
from sqlalchemy import select
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from ..errors import ConfigError, GraderError, GraderWarning
from .accounts.roster import ensure_user
from .accounts.signin import new_signin_token, set_portal_url
from .app import create_app
from .course.course import COURSE_FILE, DEMO_FOLDER, Course, load_course, make_demo_course
from .course.sync import apply, last_good, synced_digest, synced_since
from .database.db import (
    DB_FILE,
    check_current,
    connect,
    default_url,
    hide_password,
    secret_key,
    serving,
    sessions,
    upgrade,
)
from .database.leases import LEASE_SECONDS, MAX_ATTEMPTS
from .database.models import INSTRUCTOR, Meta
from .jobs.workers import GRADING_NICE, Workers
from .lti.grades import GradeSync
from .lti.keys import rotate, signing_key
from .lti.roster import RosterSync
from .mail.sender import MailSender
from .web.live import Watch
from .web.portal import Portal

log = logging.getLogger("grader.portal")

COURSE_KEY = "course"  # the Meta row naming the course a database serves


@dataclass(frozen=True)
class Started:
    """What a started portal tells its user: where it is, and a one-time link for the instructor."""

    course: Course
    url: str
    instructor: str
    instructor_link: str
    database: str
    workers: int
    cluster: str | None  # the Dask scheduler its workers grade on; None: this machine
    lti_kid: str | None = None  # the LTI tool's signing key, when the course is a tool of platforms
    public_url: str | None = None  # the address people reach it at, through a proxy (the link's)


@dataclass(frozen=True)
class WorkersStarted:
    """What ``grader worker`` tells its user once its threads grade."""

    course: Course
    database: str
    workers: int
    name: str
    cluster: str | None


def prepare(folder: str | Path | None, database: str | None) -> tuple[Course, Portal, str, str]:
    """The course (the demo course, made in ./grader-demo-course, without ``folder``), its
    database ready, roster synced: (course, portal, database URL, secret key). A course.yaml
    that does not load, where the database keeps the last one that did, is served as that one,
    saying so (a warning, and ``Portal.problem`` for the staff's pages), not refused."""
    root = make_demo_course(Path.cwd() / DEMO_FOLDER) if folder is None else folder
    try:
        course, problem = load_course(root), None
    except ConfigError as e:
        course, problem = _last_good(Path(root), database, e), str(e)
    url = database or default_url(course.folder)
    engine = connect(url)
    upgrade(engine)
    make = sessions(engine)
    if problem is None:
        digest: str | None = apply(course, make, by="grader serve (its start)").digest
    else:
        with make() as session:
            digest = synced_digest(session)
    with make.begin() as session:
        session.merge(Meta(key=COURSE_KEY, value=course.title))
    portal = Portal(course, make, digest=digest)
    portal.problem = problem
    return course, portal, url, secret_key(make)


def _last_good(folder: Path, database: str | None, error: ConfigError) -> Course:
    """The course as the course.yaml last applied to its database gave it (``error`` raised
    again when there is none, or it does not load either), with a warning saying so."""
    if not (folder / COURSE_FILE).is_file() or (database is None and not (folder / ".portal" / DB_FILE).is_file()):
        raise error
    engine = connect(database or f"sqlite:///{(folder / '.portal' / DB_FILE).resolve()}")
    try:
        with sessions(engine)() as session:
            text = last_good(session)
    except SQLAlchemyError:
        text = None
    finally:
        engine.dispose()
    if text is None:
        raise error
    try:
        course = load_course(folder, text)
    except ConfigError:
        raise error from None
    warnings.warn(f"{error}: serving the course.yaml last applied until it is fixed (grader portal check "
                  f"{folder}, then grader portal sync {folder})", GraderWarning, stacklevel=2)  # fmt: skip
    return course


def serve(folder: str | Path | None = None, database: str | None = None, host: str = "127.0.0.1", port: int = 8000,
          workers: int = 2, on_ready: Callable[[Started], None] | None = None,
          lease: float = LEASE_SECONDS, cluster: str | None = None, rotate_lti_key: bool = False,
          attempts: int = MAX_ATTEMPTS, public_url: str | None = None,
          forwarded_allow_ips: str | None = None, nice: int = GRADING_NICE) -> None:  # fmt: skip
    """Run the portal until interrupted (Ctrl-C, SIGTERM), with ``workers`` grading threads (0:
    pages only, ``grader worker`` grades), their tests on the Dask cluster at ``cluster`` (else
    course config's cluster.address, else this machine). ``on_ready`` hears where it listens
    and the instructor's one-time sign-in link once the port is open. A course with ``lti:``
    is an LTI 1.3 tool too (its key made at the first start, or anew with ``rotate_lti_key``).
    ``public_url`` is the address people reach it at through a proxy (https: the session
    cookie is Secure); ``forwarded_allow_ips`` the proxies whose X-Forwarded-Proto and -For
    it trusts (comma-separated, as uvicorn's setting; default $FORWARDED_ALLOW_IPS, else
    course.yaml's ``trusted_proxies``, by default this machine). The grading threads run at
    ``nice`` (``Workers``)."""
    if public_url is not None and not public_url.lower().startswith(("http://", "https://")):
        raise GraderError(f"--public-url {public_url!r} is no http(s) address: give https://HOST[/PATH]")
    course, portal, url, key = prepare(folder, database)
    portal.public_url = public_url.rstrip("/") if public_url else None
    if not course.instructors:
        raise GraderError(f"{course.folder / 'course.yaml'}: no instructors: add 'instructors: [you@example.edu]'")
    kid, grades, on_graded = None, None, None
    if course.lti is not None:
        with portal.make.begin() as session:
            kid = (rotate(session) if rotate_lti_key else signing_key(session)).kid
        grades = GradeSync(course, portal.make)
        portal.grades, on_graded = grades, grades.graded
        portal.roster = RosterSync(course, portal.make, grades, course.lti.roster_minutes)  # started with the app
        grades.kick()  # the scores a stopped server left to send
    elif rotate_lti_key:
        raise GraderError(f"{course.folder / 'course.yaml'}: no 'lti:' key: the course is no LTI tool, it has no key")
    if workers:
        portal.workers = Workers(course, portal.make, workers, lease=lease, attempts=attempts, nice=nice,
                                 cluster=cluster or course.config.cluster.address, on_graded=on_graded)  # fmt: skip
    sock = listening_socket(host, port)
    shown = "localhost" if host in ("0.0.0.0", "::") else (f"[{host}]" if ":" in host else host)
    base = f"http://{shown}:{sock.getsockname()[1]}"
    _check_mail(course)
    portal.mail = MailSender(course, portal.make)
    with portal.make.begin() as session:
        instructor = ensure_user(session, course.instructors[0].lower(), course.instructors[0].split("@")[0],
                                          INSTRUCTOR)  # fmt: skip
        token = new_signin_token(session, instructor)
        set_portal_url(session, portal.public_url or base)  # the links in mail and grader portal link's
    portal.address = portal.public_url or base  # the links its pages make (never a request's Host)
    started = Started(course, base + "/", instructor.email, f"{portal.public_url or base}/link/{token}",
                      hide_password(url), workers, portal.workers.cluster if portal.workers else None, kid,
                      portal.public_url)  # fmt: skip
    app = create_app(portal, key, grades, forwarded_allow_ips or os.environ.get("FORWARDED_ALLOW_IPS") or None)
    server = _Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on",
                                           proxy_headers=False),  # the app's ClientAddress: the course names them
                    portal.watch)  # fmt: skip
    with serving(url) as other:
        if other is not None:  # allowed (several servers may share a database), never unsaid
            warnings.warn(f"another grader serve{f' (process {other})' if other else ''} is running on this SQLite "
                          "database: both serve the course now (stop it if this one was to replace it)", GraderWarning, stacklevel=2)  # fmt: skip
        if on_ready:
            on_ready(started)
        server.run(sockets=[sock])


def _check_mail(course: Course) -> None:
    """GraderError, in one line, for a mail password that is not there to read."""
    mail = course.mail
    if mail is not None and mail.username and mail.password() is None:
        raise GraderError(f"{course.folder / 'course.yaml'}: mail.password_env names {mail.password_env}, which is "
                          f"not set: export {mail.password_env}=... (the mail password) before starting")  # fmt: skip


def listening_socket(host: str, port: int) -> socket.socket:
    """The server's socket, bound and listening: a connection made as soon as the address is
    printed waits in its queue until the server (still starting) accepts it, where it was refused.
    Made as TCP's by name (IPPROTO_TCP), so that asyncio sets TCP_NODELAY on each connection it
    accepts: with Nagle's algorithm on, a keep-alive request answered right after another waited
    some 40 ms for the client's delayed ACK."""
    try:
        sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(2048)  # uvicorn's backlog
    except OSError as e:  # a name that resolves to nothing, or an address of no interface here: the host's fault
        by_host = isinstance(e, socket.gaierror) or e.errno == errno.EADDRNOTAVAIL
        option = "--host (an address of this machine: 127.0.0.1, 0.0.0.0)" if by_host else "--port"
        raise GraderError(f"cannot listen on {host}:{port}: {e.strerror}: give another {option}") from None
    return sock


class _Server(uvicorn.Server):
    """uvicorn's server, ending the pages' event streams as it stops (it waits for open responses)."""

    def __init__(self, config: uvicorn.Config, watch: Watch):
        super().__init__(config)
        self.watch = watch

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        self.watch.stop()
        await super().shutdown(sockets)


def worker_sessions(folder: str | Path, database: str) -> tuple[Course, sessionmaker[Session]]:
    """The course and the sessions of a database a server made for it: GraderError, in one
    line, when the tables are not this grader's newest or the database serves another course."""
    if not (Path(folder) / "course.yaml").is_file():
        raise GraderError(f"no course.yaml in {str(folder)!r}: give the folder of the course the server serves")
    course = load_course(folder)
    engine = connect(database)
    check_current(engine)
    make = sessions(engine)
    with make() as session:
        served = session.scalar(select(Meta.value).where(Meta.key == COURSE_KEY))
    if served is not None and served != course.title:
        raise GraderError(f"the database serves the course {served!r}, not {course.title!r} of {course.folder}: "
                          "give the folder of the course its server serves")  # fmt: skip
    return course, make


def work(folder: str | Path, database: str, workers: int = 2, lease: float = LEASE_SECONDS,
         on_ready: Callable[[WorkersStarted], None] | None = None, stop: threading.Event | None = None,
         cluster: str | None = None, attempts: int = MAX_ATTEMPTS, nice: int = GRADING_NICE) -> None:  # fmt: skip
    """Grade from the queue of a portal's database with ``workers`` threads at ``nice`` (their
    tests on the Dask cluster at ``cluster``, as ``serve``'s) until ``stop`` is set or Ctrl-C; a
    grading under way then is stopped and its job queued again at once (``Workers.close``)."""
    course, make = worker_sessions(folder, database)
    _check_mail(course)
    mail = MailSender(course, make)  # the outbox drained from here too, as a server's
    grades = GradeSync(course, make) if course.lti is not None else None  # scores sent from here, as a server's
    with make() as session:
        digest = synced_digest(session)
    following = threading.Lock()

    def follow() -> None:
        """The course loaded again when it was synced since: a job claimed after a sync is graded,
        mailed and scored as synced (as a server's, which looks once a second)."""
        nonlocal course, digest
        with following, make() as session:
            synced = synced_since(session, digest)
            if synced is None:
                return
            digest = synced
            try:
                course = load_course(course.folder)
            except GraderError as e:
                log.warning("%s: grading with the course as it was until it is fixed (then grader portal sync)", e)
                return
            pool.course = mail.course = course
            if grades is not None:
                grades.course = course

    pool = Workers(course, make, workers, lease=lease, cluster=cluster or course.config.cluster.address,
                   attempts=attempts, nice=nice, on_graded=grades.graded if grades else None,
                   before_claim=follow)  # fmt: skip
    stop = stop or threading.Event()
    pool.start()
    mail.start()
    if on_ready:
        on_ready(WorkersStarted(course, hide_password(database), workers, pool.name, pool.cluster))
    try:
        while not stop.wait(1.0):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        pool.close()
        mail.stop()
        if grades is not None:
            grades.stop()
