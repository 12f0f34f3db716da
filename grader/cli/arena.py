"""``grader arena``: the arena of a running portal from the command line (an API token's)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable

import click

from .options import echo, fail_cleanly, fmt_option

POLL_SECONDS = 2.0


@click.group("arena", help="The arena of a running course portal: SPRT tests of your engines' versions, and the "
             "course's ladders.")  # fmt: skip
def arena_group() -> None:
    pass


def portal_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """--portal and --token (or GRADER_PORTAL and GRADER_TOKEN): every command's."""
    fn = click.option("--token", required=True, envvar="GRADER_TOKEN", metavar="TOKEN",
                      help="Your API token (or GRADER_TOKEN), made on the portal's /arena page.")(fn)  # fmt: skip
    return click.option("--portal", "url", required=True, envvar="GRADER_PORTAL", metavar="URL",
                        help="The portal's address (or GRADER_PORTAL), like http://localhost:8000.")(fn)  # fmt: skip


@arena_group.command(
    "test",
    help="""Start an SPRT test of ENGINE's version NEW against its version BASE on a running
    portal (its workers play the games), and print where to watch it; with --wait, follow it
    until it ends. The versions are numbers (2 for v2) of versions that passed their check.
    The token is one made on the portal's /arena page.

    \b
    With --wait, the exit status says how the test ended (1 is an error, as everywhere):
      0  H1 accepted: NEW is stronger than BASE by ELO1 or more
      3  H0 accepted: NEW is not stronger than BASE by more than ELO0
      4  limit: --max-games played with no decision
      5  stopped by hand, or ended by an error of the portal's workers

    \b
    Examples:
      grader arena test --portal http://localhost:8000 --token grader_... mine 2 1
      GRADER_TOKEN=grader_... grader arena test --portal URL mine 3 2 --tc 10+0.1 --sprt 0 5 --wait
    """,
)
@click.argument("engine")
@click.argument("new", type=click.IntRange(min=1))
@click.argument("base", type=click.IntRange(min=1))
@portal_options
@click.option("--tc", default="10+0.1", show_default=True, metavar="SECONDS+INC", help="The game clock.")
@click.option("--sprt", nargs=2, type=float, default=(0.0, 10.0), show_default=True, metavar="ELO0 ELO1",
              help="The SPRT's hypotheses (normalized Elo), as grader tournament --sprt.")  # fmt: skip
@click.option("--alpha", type=float, default=0.05, show_default=True, help="The false positive rate.")
@click.option("--beta", type=float, default=0.05, show_default=True, help="The false negative rate.")
@click.option("--max-games", type=click.IntRange(min=2), default=400, show_default=True,
              help="Stop undecided after this many games.")  # fmt: skip
@click.option("--openings", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="An openings file (move sequences, positions or GGF); default: random openings.")  # fmt: skip
@click.option("--wait", is_flag=True, help="Follow the test until it ends, a line each time it changes.")
@fail_cleanly
def test(engine: str, new: int, base: int, url: str, token: str, tc: str, sprt: tuple[float, float], alpha: float,
         beta: float, max_games: int, openings: Path | None, wait: bool) -> None:  # fmt: skip
    from ..portal.arena.client import EXIT_STATUS, ArenaClient

    client = ArenaClient(url, token)
    fields = {"tc": tc, "elo0": f"{sprt[0]:g}", "elo1": f"{sprt[1]:g}", "alpha": f"{alpha:g}", "beta": f"{beta:g}",
              "max_games": str(max_games)}  # fmt: skip
    state = client.start_test(engine, new, base, fields, openings)
    echo(f"Test of {engine} v{new} against v{base} started: {state.url}")
    shown = ""
    while wait:
        line = state.line()
        if line != shown:
            echo(line)
            shown = line
        if state.finished:
            break
        time.sleep(POLL_SECONDS)
        state = client.state(state.id)
    if wait and EXIT_STATUS[state.status]:
        raise SystemExit(EXIT_STATUS[state.status])


@arena_group.command(
    "upload",
    help="""Upload FILE as a new version of your engine ENGINE on a running portal, as its engine
    page's form does (fishtest's and OpenBench's clients submit the same way): an archive
    (.zip, .tar.gz) of the engine's folder with its COMMAND file (or --command), or a single
    program file (--command optional: python3 engine.py names it as uploaded). A worker checks it with a whole game against a bundled engine; with --wait,
    follow the check and print what it found. The engine is one made on the portal's /arena page.

    \b
    With --wait, the exit status says how the check ended (1 is an error, as everywhere):
      0  the version passed its check: tests and ladders can play it
      3  it failed its check (the line says why)

    \b
    Examples:
      grader arena upload --portal http://localhost:8000 --token grader_... mine engine.tar.gz --label "deeper search"
      GRADER_TOKEN=grader_... grader arena upload --portal URL mine engine.py --command "python3 engine.py" --wait
    """,
)
@click.argument("engine")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@portal_options
@click.option("--label", default="", help="A few words on what changed in this version.")
@click.option("--command", default="", metavar="COMMAND",
              help="How to start the engine, for a single file or an archive without a COMMAND file.")  # fmt: skip
@click.option("--wait", is_flag=True, help="Follow the version's check until it ends, and print what it found.")
@fail_cleanly
def upload(engine: str, file: Path, url: str, token: str, label: str, command: str, wait: bool) -> None:
    from ..portal.arena.client import ArenaClient

    client = ArenaClient(url, token)
    uploaded = client.upload(engine, file, label, command)
    echo(uploaded.line())
    if wait:
        uploaded = client.checked(uploaded, POLL_SECONDS)
        echo(uploaded.line())
        if uploaded.status != "ok":
            raise SystemExit(3)


@arena_group.command(
    "ladders",
    help="""The course's ladders on a running portal, with the options the course set.

    \b
    Example:
      grader arena ladders --portal http://localhost:8000 --token grader_...
    """,
)
@portal_options
@fmt_option
@fail_cleanly
def ladders(url: str, token: str, fmt: str) -> None:
    from ..portal.arena.client import ArenaClient, ladders_table

    found = ArenaClient(url, token).ladders()
    echo(ladders_table(found, fmt) if found else "This course has no ladders.")


@arena_group.command(
    "ladder",
    help="""The ladder NAME's table as its page shows it to you: ratings with their 95% error bars;
    for a student, aliases and the top N and the entries around their own when the course says so;
    for the staff, the deadline tournament's state too.

    \b
    Example:
      grader arena ladder --portal http://localhost:8000 --token grader_... duel
    """,
)
@click.argument("name")
@portal_options
@fmt_option
@fail_cleanly
def ladder(name: str, url: str, token: str, fmt: str) -> None:
    from ..portal.arena.client import ArenaClient

    found = ArenaClient(url, token).ladder(name)
    echo(found.text(fmt))
    if found.deadline is not None:
        echo(f"Deadline tournament: {found.deadline.line()}")


@arena_group.command(
    "enter",
    help="""Enter your engine ENGINE in the ladder NAME (or play with it in place of the one you
    entered), as the ladder page's form does: its VERSION plays (a number: 3 for v3, a version
    that passed its check), or without one its latest version that passed its check.

    \b
    Examples:
      grader arena enter --portal http://localhost:8000 --token grader_... duel mine
      GRADER_TOKEN=grader_... grader arena enter --portal URL duel mine 3
    """,
)
@click.argument("name")
@click.argument("engine")
@click.argument("version", type=click.IntRange(min=1), required=False)
@portal_options
@fail_cleanly
def enter(name: str, engine: str, version: int | None, url: str, token: str) -> None:
    from ..portal.arena.client import ArenaClient

    echo(ArenaClient(url, token).enter(name, engine, version).line())


@arena_group.command(
    "deadline",
    help="""Start the deadline tournament of the ladder NAME (an instructor's token): each entry's
    latest checked version (uploaded by the deadline, once it passed) plays the others, and the
    ladder stops. With --wait, follow it (one started already too), a line each time its games
    played change, and print the grades as grader tournament --grade does.

    \b
    Example:
      grader arena deadline --portal http://localhost:8000 --token grader_... duel --wait
    """,
)
@click.argument("name")
@portal_options
@click.option("--wait", is_flag=True, help="Follow it until its games are played, then print the grades.")
@fmt_option
@fail_cleanly
def deadline(name: str, url: str, token: str, wait: bool, fmt: str) -> None:
    from ..portal.arena.client import ArenaClient
    from ..tournaments.tables import share_grades_table

    client = ArenaClient(url, token)
    found = client.ladder(name).deadline if wait else None  # None: not staff (refused at the start)
    if found is not None and found.started is not None:
        echo(f"Deadline tournament of {name} started already: following it")
    else:
        echo(f"Deadline tournament of {name} started: {client.start_deadline(name)} games queued")
    if not wait:
        return
    last = None
    for last in client.follow_deadline(name, POLL_SECONDS):
        echo(last.line())
    if last is not None:
        echo()
        echo(share_grades_table(last.grades, fmt))
