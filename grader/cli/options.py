"""What the commands share: turning library errors into one line, options defined once, option types, and the steps every command takes (its game, plan, seed, cluster)."""

from __future__ import annotations

import contextlib
import functools
import re
import warnings
from pathlib import Path
from typing import Any, Callable, Iterator

import click

from ..config import Config, parse_clock
from ..engines.isolation import choose
from ..engines.scripts import RunSettings
from ..errors import GraderError, GraderWarning, OptionError
from ..games import BACKENDS, Game, available
from ..grading.plans import Plan, plan_for
from ..limits import JOBS_PER_CORE, cap_jobs
from ..runs.text import plural
from ..stop import Stop, answering_signals, on_signals, signal_point

_UNPRINTABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """``text`` with its control characters (escape sequences, carriage returns, bidi
    overrides) written as escapes: what a script printed, quoted in a report, is shown on
    the terminal, never obeyed (it cannot move the cursor to write a grade over the real one)."""
    return _UNPRINTABLE.sub(lambda m: repr(m.group())[1:-1], text)


def echo(message: Any = "", **kwargs: Any) -> None:
    """click.echo through printable(): every command's output but its progress line."""
    click.echo(printable(message) if isinstance(message, str) else message, **kwargs)


def fail_cleanly(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Library errors become click's one-line 'Error: ...' (exit 1); library warnings one
    'Warning: ...' line on stderr; SIGINT and SIGTERM are a KeyboardInterrupt outside a run
    (``answering_signals``; the group makes it one line) and stop a run inside one."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            with answering_signals(), warnings.catch_warnings():
                signal_point("command")
                warnings.simplefilter("always", GraderWarning)
                warnings.showwarning = _show_warning
                return fn(*args, **kwargs)
        except OptionError as e:  # as click's own: the usage, then the error, exit 2
            raise click.UsageError(printable(str(e)), click.get_current_context(silent=True)) from None
        except GraderError as e:
            raise click.ClickException(printable(str(e))) from None

    return wrapper


def stoppable(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A run command: Ctrl-C and SIGTERM set its ``stop`` (passed as a keyword) at any moment,
    so the run always ends with what finished, its exports and how to resume."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with on_signals(Stop()) as stop:
            return fn(*args, stop=stop, **kwargs)

    return wrapper


def _show_warning(message: Any, category: type, *args: Any, **kwargs: Any) -> None:
    echo(f"Warning: {message}", err=True)


def config_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--config", "config_path", type=click.Path(dir_okay=False), default=None,
        help="Settings file (default: ./config.yaml if present, else built-in defaults).",
    )(fn)  # fmt: skip


def scoring_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--scoring", default=None, metavar="RULE",
        help="Final-score rule (default: config, else the lab's: plain for othello, outcome for tictactoe).",
    )(fn)  # fmt: skip


def backend_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--backend", type=click.Choice(BACKENDS), default=None,
                        help="The exact solver: auto (native if built, else python), native (the C core) or python "
                             "(default: config, auto).")(fn)  # fmt: skip


class _GameOption(click.Option):
    """--game, whose help names the installed games when the help is shown (asking the
    installed packages for their games costs a tenth of the start of every command)."""

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        self.help = f"The game (default: config, else othello). Installed: {', '.join(sorted(available()))}."
        return super().get_help_record(ctx)


def game_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--game", "game_name", default=None, metavar="NAME", cls=_GameOption)(fn)


def cluster_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--cluster", default=None, metavar="ADDRESS",
        help="Run on the Dask cluster at tcp://HOST:8786 or tls://HOST:8786, or local:N worker processes "
             "here (default: config cluster.address, else this machine).",
    )(fn)  # fmt: skip


@contextlib.contextmanager
def on_cluster(address: str | None, config: Config, stop: Stop) -> Iterator[Any]:
    """The cluster executor asked for (--cluster, else config), stopped by ``stop`` and closed
    at the end; None: this machine."""
    ex = _cluster(address, config, stop)
    try:
        yield ex
    finally:
        if ex is not None:
            ex.close()


def _cluster(address: str | None, config: Config, stop: Stop) -> Any:
    """The cluster executor asked for, with a line saying where; None: this machine."""
    address = address or config.cluster.address
    if not address:
        return None
    from ..config import check_address
    from ..execution.cluster import DaskExecutor, quiet

    check_address(address)
    echo(f"Connecting to the cluster at {address}...")
    ex = DaskExecutor.connect(address, config.cluster, stop)
    try:
        quiet()
        info = ex.check_workers()
        hosts = sorted({w["host"] for w in info.values()})
        echo(f"Cluster: {plural(len(info), 'worker', 'workers')}, {plural(ex.workers(), 'thread', 'threads')}, "
                   f"on {', '.join(hosts) or 'no machine yet (tasks wait for workers)'}")  # fmt: skip
    except BaseException:
        ex.close()
        raise
    return ex


def chosen_game(name: str | None, config: Config) -> Game:
    """The game --game names (a name or variant spec), else config's, with config's settings of it."""
    return config.get_game(name)


def chosen_plan(game: Game, plan_name: str | None, boards_file: str | None, seed: int | None, config: Config,
                graded: bool = False) -> Plan:  # fmt: skip
    """The plan a grading command asked for (``grader.grading.plans.plan_for``)."""
    return plan_for(game, config, plan_name, boards_file, seed, graded)


class _Wanted(click.ParamType):
    """An option's value, refused with one line saying what is wanted ('--seed must be a
    whole number, 0 or more, like 42; got 'abc''), not click's 'not a valid integer range'."""

    wanted = ""

    def read(self, value: Any) -> Any:
        """The value, or ValueError."""
        raise NotImplementedError

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        try:
            return self.read(value)
        except (TypeError, ValueError):
            name = param.opts[0] if param is not None and param.opts else "the value"
            raise click.UsageError(f"{name} must be {self.wanted}; got {str(value)!r}", ctx) from None


class _Seconds(_Wanted):
    """A time limit: a number of seconds above 0, at most a day."""

    name, wanted = "seconds", "a number of seconds above 0 and at most 86400, like 10"

    def read(self, value: Any) -> float:
        seconds = float(value)
        if not 0 < seconds <= 86400:  # also refuses nan
            raise ValueError(value)
        return seconds


class _TimeControl(_Wanted):
    name, wanted = "tc", "[cpu:]SECONDS[+INCREMENT], like 60+0.5 or cpu:60+0.5"

    def read(self, value: Any) -> tuple[tuple[float, float], str | None]:
        return parse_clock(str(value))


class _Seed(_Wanted):
    name, wanted = "n", "a whole number, 0 or more, like 42"

    def read(self, value: Any) -> int:
        if isinstance(value, bool) or (
            not isinstance(value, int) and not (str(value).strip().isascii() and str(value).strip().isdigit())
        ):
            raise ValueError(value)
        return int(value)


SECONDS, SEED, TIME_CONTROL = _Seconds(), _Seed(), _TimeControl()


class SideChoice(click.Choice):
    """--as: a side of the game, or 'both'. Its help lists ``Game.sides`` (every built-in
    game's); the chosen game's own sides are checked once it is known (``sides_of``)."""

    def __init__(self) -> None:
        super().__init__([*Game.sides, "both"])

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        return value


def sides_of(game: Game, choice: str) -> list[str]:
    """The sides ``choice`` names: 'both' (every side of ``game``) or one of them; otherwise
    click's usage error, as for any choice."""
    if choice == "both":
        return list(game.sides)
    if choice not in game.sides:
        names = ", ".join(repr(s) for s in (*game.sides, "both"))
        raise click.BadParameter(f"{choice!r} is not one of {names}.", click.get_current_context(), param_hint="'--as'")
    return [choice]


class LibraryDefault(click.Option):
    """An option left None when not given, so that the library decides, whose help shows the
    library's default as click shows its own ('[default: 0.5]'): ``library_default=VALUE``."""

    def __init__(self, *args: Any, library_default: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.library_default = library_default

    def get_help_extra(self, ctx: click.Context) -> Any:
        extra = super().get_help_extra(ctx)
        extra["default"] = str(self.library_default)
        return extra


def seed_option(what: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        return click.option("--seed", type=SEED, default=None,
                            help=f"Seed for the {what} (default: config, else a new one, printed).")(fn)  # fmt: skip

    return decorate


def capped_jobs(ctx: click.Context, param: click.Parameter, value: int | None) -> int | None:
    """--jobs at most what this machine can run at once (``max_jobs``), a line saying so when more."""
    if value is None:
        return None
    capped, said = cap_jobs(value, "--jobs")
    if said:
        echo(f"Warning: {said}", err=True)
    return capped


def jobs_option(
    what: str, default: str = "config, else the number of cores"
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """--jobs: ``what`` runs at once ('Games at once'), ``default`` when not given, capped (``capped_jobs``)."""
    return click.option("--jobs", type=click.IntRange(min=1), default=None, callback=capped_jobs,
                        help=f"{what} (default: {default}; at most {JOBS_PER_CORE} per core).")  # fmt: skip


def fmt_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    """--fmt: the format of a printed table (tabulate's)."""
    return click.option("--fmt", default="simple", show_default=True,
                        help="The table's format (tabulate's: github, grid...).")(fn)  # fmt: skip


def time_limit_option(help: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """--time-limit: seconds of each run (a test, a move, a position)."""
    return click.option("--time-limit", type=SECONDS, default=None, help=help)


def json_option(what: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """--json FILE, as ``json_file``: ``what`` is written there as JSON."""
    return click.option("--json", "json_file", type=click.Path(dir_okay=False), help=f"Write {what} as JSON to FILE.")


def folder_options(out_help: str, resume_help: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """--out DIR (a new folder for the records) and --resume DIR (continue one)."""

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        fn = click.option("--resume", type=click.Path(file_okay=False), default=None, help=resume_help)(fn)
        return click.option("--out", type=click.Path(file_okay=False), default=None, help=out_help)(fn)

    return decorate


def plan_options(plan_help: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """--boards FILE and --plan NAME|FILE, the two ways to choose what a grading run tests."""

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        fn = click.option("--plan", "plan_name", default=None, metavar="NAME|FILE", help=plan_help)(fn)
        return click.option("--boards", "boards_file", type=click.Path(dir_okay=False),
                            help="Grade on the positions in FILE instead of the standard plan.")(fn)  # fmt: skip

    return decorate


def sentence(text: str) -> str:
    """'interrupted (Ctrl-C)' -> 'Interrupted (Ctrl-C)'."""
    return text[:1].upper() + text[1:]


def isolation_text(settings: RunSettings) -> str:
    """'isolation bwrap (auto)': what the scripts will run under on this machine."""
    used = choose(settings.isolation, settings.python)
    return f"isolation {used}" + (" (auto)" if settings.isolation == "auto" else "")


def private_files(config: Config, *files: str | None) -> list[str]:
    """The user's files scripts must not read: the config file, plan and board files (and the
    solutions kept beside a regression file, which hold its answers)."""
    from ..regression.solutions import SUFFIX as SOLVED  # here: 'grader check' loads no regression

    caches = [str(Path(f + SOLVED)) for f in files if f and Path(f + SOLVED).exists()]
    return [f for f in (None if config.source == "built-in defaults" else config.source, *files, *caches) if f]
