"""``grader doctor``: what isolation this machine offers, with a real attack to prove it."""

from __future__ import annotations

import sys

import click

from ..config import load_config
from ..doctor import describe as describe_diagnosis
from ..doctor import diagnose as diagnose_machine
from ..engines.interpreters import check_python, course_python
from ..engines.isolation import ISOLATIONS
from ..games import BUILTIN, get_game
from .options import config_option, echo, fail_cleanly

# --- doctor -------------------------------------------------------------------------------


@click.command()
@click.option(
    "--isolation", type=click.Choice(ISOLATIONS), default=None, help="Check this isolation (default: config, auto)."
)
@click.option("--no-attacks", is_flag=True, help="Only list the mechanisms and limits.")
@config_option
@fail_cleanly
def doctor(isolation: str | None, no_attacks: bool, config_path: str | None) -> None:
    """Show which isolation this machine offers (and which 'auto' picks), the Python scripts
    run with and the limits the system enforces; then run a real attacking script under that
    isolation and report each attack as blocked or not. Exit status 1 if any got through.

    \b
    Example:
      grader doctor
    """
    config = load_config(config_path)
    if config.python:
        check_python(config.python)  # one line, as grade's, for a Python that is missing or no Python
    found = diagnose_machine(isolation or config.isolation, course_python(config.python) if config.python else sys.executable,
                             not no_attacks)  # fmt: skip
    echo(describe_diagnosis(found))
    for name in dict.fromkeys([config.game, *BUILTIN]):  # the configured game, and each with a C core
        game = get_game(name)
        note = game.backend_note()
        if note:
            echo(f"solver ({game.name}): {note}")
        elif name == config.game or "native" in game.backends():
            echo(f"solver ({game.name}): {', '.join(game.backends())} built ({game.backend(config.backend)} used)")
    if found.attacks and not found.safe:
        raise SystemExit(1)
