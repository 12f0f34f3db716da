"""``grader serve``: the course portal (grader/portal/, the ``portal`` extra)."""

from __future__ import annotations

import click

from ..portal import check_extra
from .options import echo, fail_cleanly


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
    Needs the portal extra: pip install "grader[portal]".

    \b
    Examples:
      grader serve
      grader serve course/ --port 8080
      grader serve course/ --database postgresql://grader@/portal --host 0.0.0.0
    """,
)
@click.argument("course", required=False, type=click.Path(file_okay=False))
@click.option("--database", default=None, metavar="URL",
              help="sqlite:///FILE or postgresql://USER@HOST/NAME (default: SQLite in COURSE/.portal/).")  # fmt: skip
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on (0.0.0.0: every interface).")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535), help="Port (0: any free one).")
@click.option("--workers", default=1, show_default=True, type=click.IntRange(1, 64),
              help="Submissions graded at once (each with config.yaml's jobs).")  # fmt: skip
@click.option("--rotate-lti-key", is_flag=True,
              help="Retire the LTI tool's signing key and make a new one (the old stays in its JWKS for 7 days).")  # fmt: skip
@fail_cleanly
def serve(course: str | None, database: str | None, host: str, port: int, workers: int, rotate_lti_key: bool) -> None:
    check_extra()
    from ..portal.server import Started
    from ..portal.server import serve as run  # the extra's packages: loaded once known to be installed

    def ready(started: Started) -> None:
        echo(f"Course: {started.course.title} ({started.course.folder}), database {started.database}")
        if started.requeued:
            echo(f"{started.requeued} submissions left running by the last server are queued again")
        echo(f"Portal at {started.url} (Ctrl-C stops it)")
        echo(f"One-time sign-in link for {started.instructor}: {started.instructor_link}")
        if started.lti_kid:
            echo(f"LTI 1.3 tool: login {started.url}lti/login, launch {started.url}lti/launch, "
                 f"JWKS {started.url}lti/jwks (key {started.lti_kid})")  # fmt: skip

    run(course, database, host, port, workers, on_ready=ready, rotate_lti_key=rotate_lti_key)
