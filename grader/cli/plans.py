"""Making tests: ``grader plan`` (plan files, GTP regression files) and ``grader boards``."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import IO, Callable

import click

from ..config import load_config
from ..errors import GraderError, PlanError
from ..files import check_output_file, parse_range
from ..games.cost import duration
from ..grading.plans import PUBLIC, SPEED_PER_LEVEL, read_plan_file, write_plan_file
from ..labs import new_tests
from ..regression.plans import EMPTIES, PER_LEVEL, REGRESS_GAME, TIMELIMIT, RegressPlan, regress_plan
from ..runs.seeds import choose_seed
from ..runs.text import plural
from ..stop import Stop, exit_status
from .options import (
    LibraryDefault,
    chosen_game,
    config_option,
    echo,
    fail_cleanly,
    game_option,
    scoring_option,
    seed_option,
    sentence,
    stoppable,
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
    shipped = shipped_text(len(public), len(always))
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
@stoppable
def boards(
    seed: int | None, empties: str, count: int, out: str | None, game_name: str | None, config_path: str | None,
    stop: Stop,
) -> None:  # fmt: skip
    """Write random test boards: COUNT for each number of empties, reached by legal play.

    Lines are 'BOARD TOKEN' in rising order of empties; the token always has a legal move.
    The same seed gives the same boards on any machine, and the same boards as the random
    part of Othello's standard plan ('--empties 1-9 --count 10').

    At most 1,000,000 boards are drawn at once, and never more of one number of empties
    than there are (tic-tac-toe's are few). A long draw shows its progress on stderr;
    Ctrl-C stops it, keeping the boards written so far (exit status 130).

    \b
    Example:
      grader boards --seed 7 --empties 5-8 --count 3 --out my-boards.txt
    """
    config = load_config(config_path)
    game = chosen_game(game_name, config)
    span = parse_range(empties, "empties", game.empties_allowed)
    game.check_draw(span, count)
    chosen = choose_seed(seed, config)
    if out:
        check_output_file(out)
    total, written = count * len(span), 0
    header = (
        f"# grader boards --game {game.name} --seed {chosen} --empties {span.start}-{span.stop - 1} --count {count}"
    )
    progress = _DrawProgress(total)
    try:
        with _Output(out) as write:
            write(header)
            for pos in game.random_boards(chosen, span, count):
                if stop.is_set():
                    break
                write(f"{pos.board_string()} {pos.token}")
                written += 1
                progress(written)
    finally:
        progress.done()
    where = f" to {out}" if out else ""
    if stop.is_set():
        reason = stop.reason or "interrupted"
        echo(f"{sentence(reason)}: {written:,} of {total:,} boards written{where} (seed {chosen}).", err=True)
        raise SystemExit(exit_status(reason))
    if out:
        echo(f"{written} boards written to {out} (seed {chosen})")


class _Output:
    """Lines written as they come, to FILE or to standard output; a write error is one line."""

    def __init__(self, out: str | None) -> None:
        self.out = out
        self.file: IO[str] | None = None

    def __enter__(self) -> Callable[[str], None]:
        if self.out:
            try:
                self.file = open(self.out, "w", encoding="utf-8")  # noqa: SIM115  (closed by __exit__)
            except OSError as e:
                raise GraderError(f"cannot write {self.out!r}: {e.strerror}") from None
        return self.write

    def write(self, line: str) -> None:
        if self.file is None:
            echo(line)
            return
        try:
            self.file.write(line + "\n")
        except OSError as e:
            raise GraderError(f"cannot write {self.out!r}: {e.strerror}") from None

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        if self.file is None:
            return
        try:
            self.file.close()
        except OSError as e:
            raise GraderError(f"cannot write {self.out!r}: {e.strerror}") from None
        if kind is not None and issubclass(kind, GraderError) and self.out:  # boards that cannot be drawn: no file
            Path(self.out).unlink(missing_ok=True)


class _DrawProgress:
    """Called with the boards drawn so far: once a draw has gone a second and is expected to
    take longer than ``ANNOUNCE``, says how long on stderr, then how far (a line every 10 s
    when stderr is not a terminal)."""

    ANNOUNCE = 3.0  # seconds

    def __init__(self, total: int) -> None:
        self.total = total
        self.began = self.last = time.monotonic()
        self.shown = False
        self.tty = sys.stderr.isatty()

    def __call__(self, drawn: int) -> None:
        if drawn % 256:
            return
        now = time.monotonic()
        took = now - self.began
        left = took / drawn * (self.total - drawn)
        if not self.shown:
            if took < 1.0 or took + left < self.ANNOUNCE:
                return
            self.shown = True
            echo(f"Drawing {self.total:,} boards will take about {duration(took + left)}; Ctrl-C stops it, "
                 "keeping those written", err=True)  # fmt: skip
        if now - self.last >= (0.5 if self.tty else 10):
            self.last = now
            text = f"  {drawn:,} of {self.total:,} boards, {duration(took)} of about {duration(took + left)}"
            click.echo(f"\r\033[K{text}" if self.tty else text, nl=not self.tty, err=True)

    def done(self) -> None:
        if self.shown and self.tty:
            click.echo("\r\033[K", nl=False, err=True)


def shipped_text(public: int, shipped: int) -> str:
    """What of a plan's ``public`` tests are the ``shipped`` fixed boards: ': 4 random and the
    10 fixed boards that ship with the grader' ('the 1 fixed board that ships'); '' for none."""
    if not shipped:
        return ""
    boards = plural(shipped, "fixed board that ships", "fixed boards that ship")
    return f": {public - shipped} random and the {boards} with the grader"
