"""``grader check``, the presubmission check: in a module of its own, with only what it runs,
so that a student's script starts a fraction of a second after the command."""

from __future__ import annotations

import click

from ..config import load_config
from ..labs import check_program
from .options import config_option, echo, fail_cleanly, game_option


@click.command()
@click.argument("script")
@click.option(
    "--plan",
    "plan_name",
    default=None,
    metavar="FILE",
    help="The public plan your course gave you (its easiest tests are used).",
)
@game_option
@config_option
@fail_cleanly
def check(script: str, plan_name: str | None, game_name: str | None, config_path: str | None) -> None:
    """Run SCRIPT on a few easy public positions and say, in a few seconds, whether its output
    can be read: a score line, a line that replays, a last integer that is a legal move; how
    long each took against the limit; and what to fix (a date printed last, output lost in a
    buffer, a score from the wrong side's view, a line printed forward, passes written as
    squares). Exit status 1 when every position would fail for such a reason. A GTP lab
    (Gomoku): SCRIPT is your GTP program, run on the first tests of the public regression
    file given as --plan (else on a few easy positions and 'list_commands').

    \b
    Examples:
      grader check my_negamax.py
      grader check my_player.py --game tictactoe --plan lab1.public.plan
      grader check Gomoku.py --game gomoku --plan lab2.public.gtp
    """
    found = check_program(script, load_config(config_path), game_name, plan_name)
    echo(found.text())
    if found.all_fail:
        raise SystemExit(1)
