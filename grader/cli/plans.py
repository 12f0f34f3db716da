"""Making tests: ``grader plan`` (plan files, GTP regression files), ``grader regress`` and ``grader boards``."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import click
from tabulate import tabulate

from ..config import load_config
from ..engines.isolation import choose
from ..engines.players import PYTHON, ProtocolEngine
from ..errors import GraderError, PlanError
from ..files import parse_range
from ..games import Game
from ..grading import report
from ..grading.exports import check_output_file
from ..grading.plans import PUBLIC, SPEED_PER_LEVEL, new_plan, read_plan_file, write_plan_file
from ..grading.regress import (
    EMPTIES,
    PER_LEVEL,
    REGRESS_GAME,
    REGRESS_SYMBOLS,
    TIMELIMIT,
    RegressSettings,
    RegressTest,
    StudentRegress,
    regress_class,
    regress_game,
    regress_plan,
    run_regress,
    write_regress,
)
from ..stop import Stop
from .options import (
    SECONDS,
    LibraryDefault,
    chosen_game,
    chosen_seed,
    config_option,
    fail_cleanly,
    game_option,
    scoring_option,
    seed_option,
    stoppable,
)

# --- plans ---------------------------------------------------------------------------------


@click.group("plan", short_help="Make plan files: a test set, and its public half for students.")
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
@click.option("--time-limit", type=SECONDS, default=None, help="Seconds per test the plan fixes (default: config).")
@scoring_option
@game_option
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="The plan file to write (lab5.plan).")
@config_option
@fail_cleanly
def plan_new(seed: int | None, boards_file: str | None, plan_name: str | None, empties: str | None, public_count: int,
             time_limit: float | None, scoring: str | None, game_name: str | None, out: str, config_path: str | None) -> None:  # fmt: skip
    """Write a plan file: the boards (drawn from the seed, or read from --boards FILE), the
    game, the scoring rule, the limits and which tests are public (--public K).

    \b
    Example:
      grader plan new --public 10 --out lab5.plan
      grader plan new --empties 11-18 --out speed.plan
    """
    config = load_config(config_path)
    game = chosen_game(game_name, config)
    check_output_file(out)
    if empties and (boards_file or plan_name):
        raise click.UsageError("give --empties, --plan or --boards, not two of them")
    if boards_file and plan_name:
        raise click.UsageError("give --plan or --boards, not both")
    made = new_plan(config, game, seed=seed, name=plan_name or None, boards=boards_file or None, empties=empties or None,
                    public=public_count, time_limit=time_limit, scoring=scoring)  # fmt: skip
    plan, always, public = made.plan, made.shipped, made.plan.public or frozenset()
    write_plan_file(plan, out)
    shipped = (f": {len(public) - len(always)} random and the {report.plural(len(always), 'fixed board', 'fixed boards')} "
               "that ship with the grader") if always else ""  # fmt: skip
    click.echo(f"{out}: {len(plan.positions)} tests of {game.name} ({plan.source}), {len(public)} public{shipped}; "
               f"scoring {plan.scoring}, {(plan.limits or config.limits).wall_seconds:g} s per test")  # fmt: skip
    if made.warning:
        click.echo(f"Warning: {made.warning}", err=True)
    click.echo(f"Give students its public half: grader plan public {out} --out {Path(out).with_suffix('')}.public.plan")


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
    Path(out).write_text(write_regress(plan.commands()))
    click.echo(f"{out}: {len(plan.positions)} solve tests of {plan.game.title} {plan.size}x{plan.size}, "
               f"{len(plan.levels)} levels of empty points, timelimit {plan.timelimit}")  # fmt: skip
    if plan.public:
        public = Path(out).with_suffix(".public" + (Path(out).suffix or ".gtp"))
        public.write_text(write_regress(plan.commands(public=True)))
        click.echo(f"{public}: its {len(plan.public)} public tests, for students")
    if plan.warning:
        click.echo(f"Warning: {plan.warning}", err=True)


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
    click.echo(f"{out}: the {len(plan.public or ())} public tests of {plan_file}")


# --- check -------------------------------------------------------------------------------


@click.command(short_help="Run GTP regression test files against a GTP program, judged by the solver.")
@click.argument("program")
@click.argument("files", nargs=-1, required=True, metavar="FILE...")
@click.option("--unknown-credit", type=click.FloatRange(0, 1), cls=LibraryDefault, library_default=RegressSettings.unknown_credit,
              help="Credit of a 'solve' answered 'unknown' (the course decides).")  # fmt: skip
@click.option("--margin", type=click.FloatRange(0, 60), cls=LibraryDefault, library_default=RegressSettings.margin,
              help="Seconds beyond the program's timelimit (or limits.wall_seconds) each command may take.")  # fmt: skip
@click.option("--per-test", is_flag=True, default=None,
              help="A fresh program for every test, told the game so far: a crash or hang costs one test "
                   "(default: one program per file; the tests after it ended count 0).")  # fmt: skip
@click.option("--json", "json_file", type=click.Path(dir_okay=False), help="Write every test's result as JSON to FILE.")
@click.option("--game", "game_name", metavar="NAME", cls=LibraryDefault, library_default=REGRESS_GAME,
              help="The game the files play (config's game instead, if its positions can be set up by play).")  # fmt: skip
@config_option
@fail_cleanly
@stoppable
def regress(program: str, files: tuple[str, ...], unknown_credit: float | None, margin: float | None,
            per_test: bool | None, json_file: str | None, game_name: str | None, config_path: str | None,
            stop: Stop) -> None:  # fmt: skip
    """Run each GoGui regression FILE (numbered GTP commands, each followed by '#? [REGEX]')
    against PROGRAM, a GTP program (a .py file is run with the configured Python; a folder is
    a class, each student's program as 'grader grade' finds them; anything else is a command
    line, as 'python3 my_player.py'), started once per file (or per test:
    --per-test) in the same isolation and limits as scripts. A test the program never
    answered (it had ended) counts 0. 'solve' and 'genmove' are judged by the grader's own
    solver (any move that achieves the result counts); other tests by their regex.

    \b
    Examples:
      grader regress submissions/gomoku/solver.py tests.gtp
      grader regress "python3 Gomoku.py" public.gtp private.gtp --unknown-credit 0.5
      grader regress students/ lab2.gtp --json class.json
    """
    config = load_config(config_path)
    game = regress_game(game_name, config)
    if json_file:
        check_output_file(json_file)
    settings = RegressSettings.resolve(config, unknown_credit, margin, per_test=per_test)
    if Path(program).is_dir():
        _regress_class(program, files, game, settings, config.entry, json_file, stop)
        return
    command = shlex.join([PYTHON, program]) if program.endswith(".py") and Path(program).is_file() else program
    engine = ProtocolEngine.from_command(command, "gtp")
    results = []
    for f in files:
        click.echo(f"{f}: {program} ({game.title}, isolation {choose(settings.isolation, settings.python)})")

        def show(t: RegressTest) -> None:
            mark = " (expected to fail)" if t.expect_failure else ""
            click.echo(f"  {t.symbol} {t.number:>4} {t.command:<14} -> {t.answer or '(none)':<18} {t.note}{mark}")

        result = run_regress(engine, f, game, settings, stop=stop, on_test=show)
        results.append(result)
        if result.stopped:
            click.echo(f"  stopped {result.stopped}")
        counts = " ".join(f"{s}:{result.symbols.count(s)}" for s in REGRESS_SYMBOLS if s in result.symbols)
        click.echo(f"  {len(result.counted)} tests counted, {result.total:.1f}/100 ({counts})")
    if json_file:
        Path(json_file).write_text(json.dumps([r.to_json() for r in results], indent=1))
    if stop.is_set():
        raise SystemExit(130)


def _regress_class(folder: str, files: tuple[str, ...], game: Game, settings: RegressSettings, entry: str | None,
                   json_file: str | None, stop: Stop) -> None:  # fmt: skip
    """A class: every student's GTP program on every file, a line each as it ends, then the table."""
    click.echo(f"{folder}: a class on {', '.join(files)} ({game.title}, {settings.jobs} at once, "
               f"isolation {choose(settings.isolation, settings.python)})")  # fmt: skip

    def show(student: StudentRegress) -> None:
        symbols = " ".join(r.symbols for r in student.results)
        click.echo(f"  {student.name}: {student.total:.1f}/100  {symbols}")

    students = regress_class([folder], list(files), game, settings, entry, stop=stop, on_student=show)
    rows = []
    for st in students:
        cells = [f"{r.total:.1f}" for r in st.results] or ["-"] * len(files)
        rows.append(
            [
                st.name,
                *cells,
                f"{st.total:.1f}",
                st.problem or next((r.stopped for r in st.results if r.stopped), "") or "",
            ]
        )
    click.echo()
    click.echo(tabulate(rows, headers=["student", *files, "total", "note"], disable_numparse=True))
    if json_file:
        Path(json_file).write_text(json.dumps([st.to_json() for st in students], indent=1))
    if stop.is_set():
        raise SystemExit(130)


# --- boards -----------------------------------------------------------------------------


@click.command(short_help="Write random test boards reached by legal play.")
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
    chosen = chosen_seed(seed, config)
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
        click.echo(f"{len(lines) - 1} boards written to {out} (seed {chosen})")
    else:
        click.echo(text, nl=False)
