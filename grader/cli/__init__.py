"""The ``grader`` command: a thin layer turning flags into library calls and errors into one line.

One module per command group; ``options`` holds what they share."""

from __future__ import annotations

import click

from ..version import __version__
from . import doctor, grading, plans, regress, solving, tournaments
from .options import CONTEXT


@click.group(context_settings=CONTEXT)
@click.version_option(__version__, prog_name="grader")
def main() -> None:
    """Grade game-search lab scripts (the Othello endgame, tic-tac-toe, Gomoku over GTP)
    against exact solvers, prove a player never loses, and run tournaments between engines:
    scripts, and programs speaking NBoard or GTP.

    \b
    Examples:
      grader grade submissions/negamax.py            grade one script on the lab's 100 tests
      grader grade class/ --seed 7 --out runs/lab5   grade a class into a run folder
      grader solve BOARD x --all                     the exact value of every move
      grader prove minimax.py --game tictactoe       does this player ever lose?
      grader tournament a.py b.py builtin:greedy     a round-robin with Elo ratings
    """


for _command in (solving.solve, solving.prove_command, grading.grade, grading.report_command, grading.rejudge_command,
                 grading.gradescope_command, grading.check, tournaments.tournament, plans.plan_group, regress.regress,
                 plans.boards, doctor.doctor):  # fmt: skip
    main.add_command(_command)

__all__ = ["main"]
