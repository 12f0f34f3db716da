"""Making tests: ``grader plan`` (plan files, GTP regression files) and ``grader boards``."""

from __future__ import annotations

from pathlib import Path

import click

from ..config import load_config
from ..errors import GraderError, PlanError
from ..files import check_output_file, parse_range
from ..grading.plans import PUBLIC, SPEED_PER_LEVEL, read_plan_file, write_plan_file
from ..labs import new_tests
from ..regression.plans import EMPTIES, PER_LEVEL, REGRESS_GAME, TIMELIMIT, RegressPlan, regress_plan
from ..runs.seeds import choose_seed
from ..runs.text import plural
from .options import (
    LibraryDefault,
    chosen_game,
    config_option,
    echo,
    fail_cleanly,
    game_option,
    scoring_option,
    seed_option,
    time_limit_option,
)

# --- plans ---------------------------------------------------------------------------------


@click.group("plan")
def plan_group() -> None:
    """Plan files: one small text file that fully defines a test set (game, scoring, limits,
    the boards, which tests are public), and its public half to give students.

    \b
    Examples:
      grader plan new --seed 1234 --public 10 --out lab5.plan
      grader plan public lab5.plan --out lab5.public.plan
      grader grade class/ --plan lab5.plan
    """


@plan_group.command("new", short_help="Write a new plan file.")
@seed_option("plan's random boards")
@click.option(
    "--boards",
    "boards_file",
    type=click.Path(dir_okay=False),
    help="The tests are the positions in FILE (instead of a named plan).",
)
@click.option(
    "--plan", "plan_name", default=None, metavar="NAME", help="The game's named plan to draw (default: standard)."
)
@click.option(
    "--empties",
    default=None,
    metavar="LOW-HIGH",
    help=f"A speed plan: {SPEED_PER_LEVEL} random boards for each number of empties from LOW to HIGH (11-16, say).",
)
@click.option(
    "--public",
    "public_count",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    metavar="K",
    help="K random tests students may see, spread over the numbers of empties, besides the fixed boards "
    "that ship with the grader (public in every plan: the plan has K + their number public tests).",
)
@time_limit_option("Seconds per test the plan fixes (default: config).")
@scoring_option
@game_option
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="The plan file to write (lab5.plan).")
@config_option
@fail_cleanly
def plan_new(seed: int | None, boards_file: str | None, plan_name: str | None, empties: str | None, public_count: int,
             time_limit: float | None, scoring: str | None, game_name: str | None, out: str, config_path: str | None) -> None:  # fmt: skip
    """Write a plan file: the boards (drawn from the seed, or read from --boards FILE), the
    game, the scoring rule, the limits and which tests are public (--public K).

    A GTP lab's tests (Gomoku) are a regression file instead, as 'grader plan regress'
    writes it (--empties, --public and --seed as there).

    \b
    Example:
      grader plan new --public 10 --out lab5.plan
      grader plan new --empties 11-18 --out speed.plan
      grader plan new --game gomoku --public 4 --out lab2.gtp
    """
    config = load_config(config_path)
    check_output_file(out)
    made = new_tests(config, game_name, seed=seed, boards=boards_file or None, plan_name=plan_name or None,
                     empties=empties or None, public=public_count, time_limit=time_limit, scoring=scoring)  # fmt: skip
    if isinstance(made, RegressPlan):  # a GTP lab's tests: a regression file, as 'plan regress' writes it
        _write_regress(made, out)
        return
    game = made.plan.game
    plan, always, public = made.plan, made.shipped, made.plan.public or frozenset()
    write_plan_file(plan, out)
    shipped = (f": {len(public) - len(always)} random and the {plural(len(always), 'fixed board', 'fixed boards')} "
               "that ship with the grader") if always else ""  # fmt: skip
    echo(f"{out}: {len(plan.positions)} tests of {game.name} ({plan.source}), {len(public)} public{shipped}; "
               f"scoring {plan.scoring}, {(plan.limits or config.limits).wall_seconds:g} s per test")  # fmt: skip
    if made.warning:
        echo(f"Warning: {made.warning}", err=True)
    echo(f"Give students its public half: grader plan public {out} --out {Path(out).with_suffix('')}.public.plan")


@plan_group.command("regress", short_help="Write GTP regression test files (solve tests) from the solver.")
@click.option("--game", "game_name", metavar="NAME", cls=LibraryDefault, library_default=REGRESS_GAME,
              help="The game (config's game instead, if its positions can be set up by play).")  # fmt: skip
@click.option(
    "--size", type=click.IntRange(5, 19), default=None, help="Board size (default: config gomoku.size, else 7)."
)
@click.option("--empties", metavar="A-B", cls=LibraryDefault, library_default=EMPTIES,
              help="Empty points of the positions.")  # fmt: skip
@click.option("--per-level", type=click.IntRange(1, 1000), cls=LibraryDefault, library_default=PER_LEVEL,
              help="Positions per number of empties.")  # fmt: skip
@click.option("--public", "public_count", type=click.IntRange(min=0), default=0, metavar="K",
              help="Also write the first K tests, spread over the levels, to OUT with '.public' before its suffix.")  # fmt: skip
@click.option("--timelimit", type=click.IntRange(1, 100), cls=LibraryDefault, library_default=TIMELIMIT,
              help="The file's 'timelimit'.")  # fmt: skip
@seed_option("positions")
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="The regression file to write.")
@config_option
@fail_cleanly
def plan_regress(game_name: str | None, size: int | None, empties: str | None, per_level: int | None,
                 public_count: int, timelimit: int | None, seed: int | None, out: str, config_path: str | None) -> None:  # fmt: skip
    """Write a GoGui regression file of 'solve' tests on random positions reached by legal
    play, each expected answer from the grader's solver (every move that achieves the result:
    '#? [b C3|b D4]'). With --public K, its public part goes to a second file.

    \b
    Example:
      grader plan regress --empties 6-12 --per-level 3 --public 6 --out lab2.gtp
    """
    config = load_config(config_path)
    check_output_file(out)
    plan = regress_plan(config, game_name, size=size, empties=empties, per_level=per_level, timelimit=timelimit,
                        public=public_count, seed=seed)  # fmt: skip
    _write_regress(plan, out)


def _write_regress(plan: RegressPlan, out: str) -> None:
    """Write a regression plan's file, and its public half where it has public tests."""
    Path(out).write_text(plan.text())
    cache = plan.save_solutions(out)
    echo(f"{out}: {len(plan.positions)} solve tests of {plan.game.title} {plan.size}x{plan.size}, "
               f"{len(plan.levels)} levels of empty points, timelimit {plan.timelimit}"
               + (f"; solutions kept in {cache}" if cache else ""))  # fmt: skip
    if plan.unsolved_text:
        echo(f"Warning: {plan.unsolved_text}", err=True)
    if plan.public:
        public = Path(out).with_suffix(".public" + (Path(out).suffix or ".gtp"))
        public.write_text(plan.text(public=True))
        plan.save_solutions(public, public=True)
        echo(f"{public}: its {len(plan.public)} public tests, for students")
    if plan.warning:
        echo(f"Warning: {plan.warning}", err=True)


@plan_group.command("public", short_help="Write a plan's public half, for students.")
@click.argument("plan_file", type=click.Path(dir_okay=False))
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="The public plan file to write.")
@fail_cleanly
def plan_public(plan_file: str, out: str) -> None:
    """Write the public tests of PLAN_FILE as a plan of their own: nothing in it tells the
    private boards, their number or the seed that made them.

    \b
    Example:
      grader plan public lab5.plan --out lab5.public.plan
    """
    check_output_file(out)
    plan = read_plan_file(plan_file)
    if plan.kind == PUBLIC:
        raise PlanError(f"{plan_file} is already a public plan: give the full plan it came from")
    write_plan_file(plan, out, PUBLIC)
    echo(f"{out}: the {len(plan.public or ())} public tests of {plan_file}")


# --- boards -----------------------------------------------------------------------------


@click.command()
@seed_option("random boards")
@click.option("--empties", default="1-9", show_default=True, help="Numbers of empty squares, low-high.")
@click.option(
    "--count", type=click.IntRange(min=1), default=10, show_default=True, help="Boards for each number of empties."
)
@click.option("--out", type=click.Path(dir_okay=False), default=None, help="Write to FILE instead of standard output.")
@game_option
@config_option
@fail_cleanly
def boards(
    seed: int | None, empties: str, count: int, out: str | None, game_name: str | None, config_path: str | None
) -> None:
    """Write random test boards: COUNT for each number of empties, reached by legal play.

    Lines are 'BOARD TOKEN' in rising order of empties; the token always has a legal move.
    The same seed gives the same boards on any machine, and the same boards as the random
    part of Othello's standard plan ('--empties 1-9 --count 10').

    \b
    Example:
      grader boards --seed 7 --empties 5-8 --count 3 --out my-boards.txt
    """
    config = load_config(config_path)
    game = chosen_game(game_name, config)
    span = parse_range(empties, "empties", game.empties_allowed)
    chosen = choose_seed(seed, config)
    if out:
        check_output_file(out)
    lines = [
        f"# grader boards --game {game.name} --seed {chosen} --empties {span.start}-{span.stop - 1} --count {count}"
    ]
    lines += [f"{p.board_string()} {p.token}" for p in game.random_positions(chosen, span, count)]
    text = "\n".join(lines) + "\n"
    if out:
        try:
            Path(out).write_text(text, encoding="utf-8")
        except OSError as e:
            raise GraderError(f"cannot write {out!r}: {e.strerror}") from None
        echo(f"{len(lines) - 1} boards written to {out} (seed {chosen})")
    else:
        echo(text, nl=False)
