"""Starting the portal: the course loaded, the database upgraded to the newest revision, the
roster and instructors synced, jobs a stopped server left running queued again, then the
workers and the web server (uvicorn) in this process."""

from __future__ import annotations

import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import uvicorn

from ..errors import GraderError
from . import accounts, lti_pages
from .course import DEMO_FOLDER, Course, load_course, make_demo_course
from .db import connect, default_url, hide_password, secret_key, sessions, upgrade
from .lti_grades import GradeSync
from .lti_keys import rotate, signing_key
from .models import INSTRUCTOR
from .queue import requeue_running
from .web import Portal, create_app
from .worker import Workers


@dataclass(frozen=True)
class Started:
    """What a started portal tells its user: where it is, and a one-time link for the instructor."""

    course: Course
    url: str
    instructor: str
    instructor_link: str
    database: str
    requeued: int
    lti_kid: str | None = None  # the LTI tool's signing key, when the course is a tool of platforms


def prepare(folder: str | Path | None, database: str | None) -> tuple[Course, Portal, str, str, int]:
    """The course (the demo course, made in ./grader-demo-course, without ``folder``), its
    database ready, roster synced: (course, portal, database URL, secret key, jobs requeued)."""
    course = load_course(make_demo_course(Path.cwd() / DEMO_FOLDER) if folder is None else folder)
    url = database or default_url(course.folder)
    engine = connect(url)
    upgrade(engine)
    make = sessions(engine)
    with make.begin() as session:
        if course.roster is not None:
            accounts.import_roster(session, accounts.roster_file(course.roster))
        for email in course.instructors:
            accounts.ensure_user(session, email.lower(), email.split("@")[0], INSTRUCTOR)
        requeued = requeue_running(session)
    return course, Portal(course, make), url, secret_key(make), requeued


def serve(folder: str | Path | None = None, database: str | None = None, host: str = "127.0.0.1", port: int = 8000,
          workers: int = 1, on_ready: Callable[[Started], None] | None = None,
          rotate_lti_key: bool = False) -> None:  # fmt: skip
    """Run the portal until interrupted (Ctrl-C, SIGTERM). ``on_ready`` hears where it listens
    and the instructor's one-time sign-in link once the port is open. A course with ``lti:``
    is an LTI 1.3 tool too (its key made at the first start, or anew with ``rotate_lti_key``)."""
    course, portal, url, key, requeued = prepare(folder, database)
    if not course.instructors:
        raise GraderError(f"{course.folder / 'course.yaml'}: no instructors: add 'instructors: [you@example.edu]'")
    extra, kid, on_graded = [], None, None
    if course.lti is not None:
        with portal.make.begin() as session:
            kid = (rotate(session) if rotate_lti_key else signing_key(session)).kid
        grades = GradeSync(course, portal.make)
        portal.on_release, on_graded = grades.released, grades.graded
        extra = lti_pages.routes(portal, grades)
        grades.kick()  # the scores a stopped server left to send
    elif rotate_lti_key:
        raise GraderError(f"{course.folder / 'course.yaml'}: no 'lti:' key: the course is no LTI tool, it has no key")
    portal.workers = Workers(course, portal.make, workers, on_graded=on_graded)
    try:
        sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except OSError as e:
        raise GraderError(f"cannot listen on {host}:{port}: {e.strerror}: give another --port") from None
    shown = "localhost" if host in ("0.0.0.0", "::") else (f"[{host}]" if ":" in host else host)
    base = f"http://{shown}:{sock.getsockname()[1]}"
    with portal.make.begin() as session:
        instructor = accounts.ensure_user(session, course.instructors[0].lower(), course.instructors[0].split("@")[0],
                                          INSTRUCTOR)  # fmt: skip
        token = accounts.new_signin_token(session, instructor)
    started = Started(course, base + "/", instructor.email, f"{base}/link/{token}", hide_password(url), requeued, kid)
    app = create_app(portal, key, extra)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on"))
    if on_ready:
        on_ready(started)
    server.run(sockets=[sock])
