"""The ``grader`` command: a thin layer turning flags into library calls and errors into one line.

One module per command group; ``options`` holds what they share. A command's module is
imported when the command runs (or its help is asked for), so that ``grader --help`` and
``grader --version`` load none of them."""

from __future__ import annotations

import importlib
from typing import Any, NoReturn

import click

from ..stop import STARTING, exit_status, interrupt_reason, take_swallowed
from ..version import __version__

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}

# Each command: its module in grader/cli/, the command there, and the line 'grader --help' shows.
COMMANDS: dict[str, tuple[str, str, str]] = {
    "arena": ("arena", "arena_group", "Start SPRT tests of your engines on a running course portal."),
    "boards": ("plans", "boards", "Write random test boards reached by legal play."),
    "check": ("check", "check", "The presubmission check: can the grader read this script's output?"),
    "doctor": ("doctor", "doctor", "What isolation this machine offers, with a real attack to prove it."),
    "export": ("export", "export_group", "Write a run's grades as the CSV Canvas or Moodle imports."),
    "grade": ("grading", "grade", "Grade scripts, or a class, on the lab's 100 tests (+ M Q T m s - t)."),
    "gradescope": ("grading", "gradescope_command", "Grade the submission in a Gradescope autograder."),
    "plan": ("plans", "plan_group", "Make plan files: a test set, and its public half for students."),
    "prove": ("solving", "prove_command", "Prove a player never loses: every position against every reply."),
    "regress": ("regress", "regress",
                "Run GTP regression test files against a GTP program, or a class, judged by the solver."),
    "similar": ("similar", "similar_command", "Rank the pairs of a class's submissions by how similar their code is."),
    "serve": ("portal", "serve", "Start the course portal: students submit in a browser, graded at once."),
    "portal": ("portal", "portal_group", "The course portal's course: apply course.yaml to a running portal."),
    "rejudge": ("grading", "rejudge_command", "Judge a run's recorded answers again with today's rules."),
    "report": ("grading", "report_command", "Write a run folder's exports again, or one student's report."),
    "solve": ("solving", "solve", "Solve positions exactly: value, optimal moves, an optimal line."),
    "worker": ("portal", "worker", "Grade a course portal's uploads from its database, on any machine."),
    "tournament": ("tournaments", "tournament",
                   "Tournaments between engine scripts: round-robin, gauntlet, Swiss, SPRT."),
}  # fmt: skip


class _Commands(click.Group):
    """A group whose commands are imported from their modules when first asked for; its help
    lists them from ``COMMANDS`` without importing any."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        module, attribute, short_help = COMMANDS[name]
        try:
            command: click.Command = getattr(importlib.import_module(f".{module}", __name__), attribute)
        except KeyboardInterrupt:  # before the command can answer Ctrl-C itself
            click.echo(STARTING, err=True)
            raise SystemExit(130) from None
        command.short_help = short_help
        return command

    def invoke(self, ctx: click.Context) -> Any:
        """The command; a KeyboardInterrupt it left (a signal before its run began or after it
        ended, or in a command that is no run) is one line and exit status 130 or 143, never
        click's bare 'Aborted!'."""
        try:
            done = super().invoke(ctx)
        except KeyboardInterrupt as e:
            _interrupted(e)
        swallowed = take_swallowed()  # a signal whose KeyboardInterrupt Python dropped (in a finalizer, say)
        if swallowed is not None:
            _interrupted(swallowed)
        return done

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, COMMANDS[name][2]) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


def _interrupted(e: KeyboardInterrupt) -> NoReturn:
    """One line, 'Interrupted (Ctrl-C).', and exit status 130 (143 for SIGTERM)."""
    reason = interrupt_reason(e)
    click.echo(f"I{reason[1:]}.", err=True)
    raise SystemExit(exit_status(reason)) from None


@click.group(cls=_Commands, context_settings=CONTEXT)
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
    from ..engines.leftovers import sweep_work_folders  # here: 'grader --help' and '--version' need none of it

    sweep_work_folders()  # of graders killed with SIGKILL, whatever command runs next


__all__ = ["COMMANDS", "main"]
