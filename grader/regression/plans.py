"""A regression plan: a file of ``solve`` tests on positions the grader has solved (``grader
plan regress``), for the game its regression files are of (``regress_game``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from ..config import Config, RegressDefaults
from ..errors import GraderError
from ..files import parse_range, read_lines
from ..games import Game, Position, get_game
from ..runs.seeds import plan_seed, seed_warning, spread_public
from ..stop import Stop
from .format import COLOURS, Command, board_size, file_game, write_regress
from .solutions import Solutions, key

REGRESS_GAME = "gomoku"  # the game of regression files, unless told (see regress_game)


EMPTIES = "4-10"  # empty points of a regression plan's positions


PER_LEVEL = 2  # positions per number of empty points


TIMELIMIT = 5  # the 'timelimit' a regression plan's file sets


def make_regress(game: Game, positions: list[Position], timelimit: int, seconds: float = 600.0,
                 numbers: Sequence[int] | None = None, solutions: Solutions | None = None) -> list[Command]:  # fmt: skip
    """A regression file of ``solve`` tests on ``positions``, answers from the grader's solver:
    each position set up by 'boardsize', 'clear_board' and a 'play' per stone, then a numbered
    'solve' (``numbers``, else 10, 20, ...) whose expected answer lists every move that
    achieves the result ('b C3|b D4'). ``solutions``: where the positions are solved (else
    each within ``seconds``); GraderError for one the budget did not settle."""
    solutions = solutions if solutions is not None else Solutions(seconds)
    out = [Command(0, f"timelimit {timelimit}")]
    solvers: dict[str, Any] = {}
    for n, pos in enumerate(positions, 1):
        game = pos.game
        out += [Command(0, f"boardsize {board_size(game)}"), Command(0, "clear_board")]
        board = pos.board_string()
        stones = {t: [i for i, ch in enumerate(board) if ch == t] for t in game.sides}
        first, second = stones[game.sides[0]], stones[game.sides[1]]
        for i in range(len(first)):  # black and white in turn (no subset of the stones has a winning line)
            out.append(Command(0, f"play {COLOURS[0]} {game.square_name(first[i])}"))
            if i < len(second):
                out.append(Command(0, f"play {COLOURS[1]} {game.square_name(second[i])}"))
        solver = solvers.setdefault(game.name, game.solver(game.scorings[0]))
        entry = solutions.solve(solver, pos)
        if entry.value is None or entry.best is None:
            raise GraderError(
                f"position {n} takes the solver longer than {solutions.budget:g} s: choose positions with fewer "
                "empty points (or raise regress.solve_seconds in config.yaml)"
            )
        best = entry.value
        side = COLOURS[game.sides.index(pos.token)]
        winner = side if best > 0 else COLOURS[1 - COLOURS.index(side)] if best < 0 else "draw"
        moves = [game.square_name(m) for m in entry.best]
        expected = winner if best < 0 else "|".join(f"{winner} {m}" for m in moves)
        out.append(Command(0, "solve", numbers[n - 1] if numbers else n * 10, expected))
    return out


def regress_game(name: str | Game | None = None, config: Config | None = None,
                 files: Sequence[str | Path] = ()) -> Game:  # fmt: skip
    """The game regression files play: ``name`` when it names a variant in full, else the game
    ``files`` name ('# grader: game gomoku:overline=false', as ``grader plan regress`` writes;
    ``name`` may be its family, 'gomoku'), else ``name``, else config.yaml's game when a file
    can set up its positions ('play' commands only place pieces: ``Game.placing``), else
    Gomoku. GraderError when the files name different games, or another than ``name``."""
    config = config or Config()  # its gomoku: section fills in what the name leaves out
    named = {n for f in files if (n := file_game("\n".join(read_lines(f, "regression file")))) is not None}
    if len(named) > 1:
        raise GraderError(f"the regression files are of different games ({', '.join(sorted(named))}): run them apart")
    written = named.pop() if named else None
    if isinstance(name, Game) or (name is not None and (":" in name or written is None)):
        return config.get_game(name)  # a variant named in full wins over the file
    if written is not None:
        if name is not None and written.partition(":")[0] != name:
            raise GraderError(
                f"the regression files are of {written}, not {name}: drop --game, or give the files of {name}"
            )
        return get_game(written)  # as the file was written: config does not change it
    if get_game(config.game).placing:
        return config.get_game(config.game)
    return config.get_game(REGRESS_GAME)


@dataclass(frozen=True)
class RegressPlan:
    """The solve tests of a regression file: positions reached by legal play from ``seed``,
    the file's ``timelimit``, the tests students may see (numbers from 1), and a warning for
    its maker (``seed_warning``), if one is due."""

    game: Game
    positions: tuple[Position, ...]
    seed: int
    levels: range
    timelimit: int
    public: tuple[int, ...] = ()
    warning: str | None = None
    solutions: Solutions = field(default_factory=lambda: Solutions(RegressDefaults.solve_seconds), compare=False)
    unsolved: tuple[Position, ...] = ()  # drawn, but not settled within the budget: left out

    @property
    def size(self) -> int:
        return board_size(self.game)

    def commands(self, public: bool = False) -> list[Command]:
        """The file's commands, answers from the solver; ``public``: its public tests only
        (numbered as in the full file)."""
        chosen = list(self.public) if public else range(1, len(self.positions) + 1)
        return make_regress(self.game, [self.positions[i - 1] for i in chosen], self.timelimit,
                            numbers=[10 * i for i in chosen], solutions=self.solutions)  # fmt: skip

    def save_solutions(self, path: str | Path, public: bool = False) -> Path | None:
        """Keep the solved positions beside the file written at ``path`` (``public``: only
        its public tests', so that the public half's cache shows no private position)."""
        chosen = {key(self.positions[i - 1]) for i in self.public} if public else None
        return self.solutions.only(chosen).save(path) if chosen is not None else self.solutions.save(path)

    @property
    def unsolved_text(self) -> str | None:
        """What the plan could not solve, in words (None: it solved every position)."""
        if not self.unsolved:
            return None
        levels = sorted({p.board_string().count(".") for p in self.unsolved})
        return (f"{len(self.unsolved)} of the positions drawn ({', '.join(map(str, levels))} empty points) were "
                f"left out: the solver could not settle them within {self.solutions.budget:g} s each "
                "(regress.solve_seconds in config.yaml), nor could regress judge them")  # fmt: skip

    def text(self, public: bool = False) -> str:
        """The file's text; it names its game (with its rules: ``file_game``) and its public
        tests ('# grader: public tests 10 30': ``public_tests``; all of them in the public
        file, none or some in the full one), so that reports show only those in full."""
        shown = " ".join(str(10 * i) for i in self.public) or "none"  # none: every test is private
        return write_regress(self.commands(public), [f"grader: game {self.game.name}", f"grader: public tests {shown}"])


def regress_plan(config: Config | None = None, game: str | Game | None = None, *, size: int | None = None,
                 empties: str | None = None, per_level: int | None = None, timelimit: int | None = None,
                 public: int = 0, seed: int | None = None, stop: Stop | None = None) -> RegressPlan:  # fmt: skip
    """A regression file's tests, as ``grader plan regress`` writes them: ``per_level``
    positions (default ``PER_LEVEL``) for each number of empty points in ``empties`` (default
    ``EMPTIES``) of ``regress_game(game, config)`` on a ``size`` board, drawn from
    ``plan_seed(seed, config)`` as a plan's are; ``public`` of them spread over the levels.
    Each position is solved within config's ``regress.solve_seconds``, the budget regress
    judges with; those it does not settle are left out (``unsolved``)."""
    g = regress_game(game, config)
    g = g.sized(size) if size else g
    levels = parse_range(empties or EMPTIES, "--empties", g.empties_allowed)
    drawn, chosen = plan_seed(seed, config)
    solutions = Solutions((config or Config()).regress.solve_seconds)
    solver = g.solver(g.scorings[0])
    solved: list[Position] = []
    unsolved: list[Position] = []
    for pos in g.random_positions(drawn, levels, per_level or PER_LEVEL):  # each within the budget regress has
        entry = solutions.solve(solver, pos, stop.is_set if stop else lambda: False)
        (solved if entry.value is not None and entry.best is not None else unsolved).append(pos)
    if not solved:
        raise GraderError(
            f"none of the {len(unsolved)} positions drawn could be solved within {solutions.budget:g} s each "
            "(regress.solve_seconds in config.yaml): choose fewer empty points, or raise the budget"
        )
    positions = tuple(solved)
    shown = tuple(sorted(spread_public(positions, public, drawn, frozenset()))) if public else ()
    warning = seed_warning(drawn, chosen, len(shown) < len(positions))
    return RegressPlan(g, positions, drawn, levels, timelimit or TIMELIMIT, shown, warning, solutions, tuple(unsolved))
