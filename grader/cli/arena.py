"""``grader arena``: the arena of a running portal from the command line (an API token's)."""

from __future__ import annotations

import time
from pathlib import Path

import click

from .options import echo, fail_cleanly

POLL_SECONDS = 2.0


@click.group("arena", help="The arena of a running course portal: SPRT tests of your engines' versions.")
def arena_group() -> None:
    pass


@arena_group.command(
    "test",
    help="""Start an SPRT test of ENGINE's version NEW against its version BASE on a running
    portal (its workers play the games), and print where to watch it; with --wait, follow it
    until it decides. The versions are numbers (2 for v2) of versions that passed their check.
    The token is one made on the portal's /arena page.

    \b
    Examples:
      grader arena test --portal http://localhost:8000 --token grader_... mine 2 1
      GRADER_TOKEN=grader_... grader arena test --portal URL mine 3 2 --tc 10+0.1 --sprt 0 5 --wait
    """,
)
@click.argument("engine")
@click.argument("new", type=click.IntRange(min=1))
@click.argument("base", type=click.IntRange(min=1))
@click.option("--portal", "url", required=True, envvar="GRADER_PORTAL", metavar="URL",
              help="The portal's address (or GRADER_PORTAL), like http://localhost:8000.")  # fmt: skip
@click.option("--token", required=True, envvar="GRADER_TOKEN", metavar="TOKEN",
              help="Your API token (or GRADER_TOKEN), made on the portal's /arena page.")  # fmt: skip
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
    from ..portal.arena_client import ArenaClient

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
