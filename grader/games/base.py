"""The interface every game offers: positions, the ``Game`` class, board-file entries.

Games (``othello.py``, ``tictactoe.py``, and plugins) build on this module alone; the
registry that finds them by name is the package itself (``grader.games``).
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    ClassVar,
    Generic,
    Iterable,
    Iterator,
    Mapping,
    Protocol,
    Sequence,
    TypeVar,
)

from ..errors import BoardError, GraderError

if TYPE_CHECKING:  # Self is typing's from Python 3.11: typing_extensions (a dependency of mypy) for 3.10
    from typing_extensions import Self

DEFAULT = "othello"  # the game of commands and calls that name none
PASS = -1  # a pass, in lines and transcripts
HUGE = 10**18  # parse.py keeps any longer integer as +-HUGE
BACKENDS = ("auto", "native", "python")  # solver backends a user may ask for
MAX_BOARDS = 1_000_000  # random boards drawn at once (grader boards): 70 MB and half an hour of Othello's


class Position(Protocol):
    """What every game's positions offer (immutable and hashable)."""

    @property
    def token(self) -> str:
        """The side to move: one of the game's ``sides``."""

    @property
    def game(self) -> Game: ...

    @property
    def empties(self) -> int: ...

    def board_string(self) -> str: ...

    def moves(self) -> list[int]: ...

    def is_legal(self, move: int) -> bool: ...

    def play(self, move: int, /) -> Self: ...

    def pass_turn(self) -> Self: ...

    def must_pass(self) -> bool: ...

    def is_game_over(self) -> bool: ...

    def score(self, scoring: str) -> int: ...


P = TypeVar("P", bound=Position)  # a game's own positions
Q = TypeVar("Q", bound=Position, contravariant=True)  # the positions a solver takes


@dataclass(frozen=True)
class Analysis:
    """Everything the solver says about one position. Values are for the side to move."""

    position: Position
    scoring: str
    value: int
    optimal_moves: list[int]
    line: list[int]  # one optimal line to the end of the game, PASS (-1) for a pass
    move_values: dict[int, int] | None = None  # every legal move's value, when asked for
    nodes: int = 0
    seconds: float = 0.0
    backend: str = "python"

    def to_json(self) -> dict:
        """The JSON object of ``grader solve --json``."""
        out: dict = {
            "board": self.position.board_string(),
            "token": self.position.token,
            "scoring": self.scoring,
            "value": self.value,
            "optimal_moves": self.optimal_moves,
            "line": self.line,
        }
        if self.move_values is not None:
            out["move_values"] = {str(sq): v for sq, v in self.move_values.items()}
        out.update(nodes=self.nodes, seconds=round(self.seconds, 6), backend=self.backend)
        return out


@dataclass(frozen=True)
class LineCheck:
    """The verdict on a claimed line. Values are from the view of the root position's mover.

    ``problem`` is None for a correct line, else one of: 'illegal' (the move at ``ply`` is not
    legal), 'suboptimal' (legal but worse than ``best_moves``), 'too-long' (moves after the
    game ended), 'too-short' (the line stops before the game ends).
    """

    problem: str | None
    ply: int | None = None  # 1-based, passes counted
    played: list[int] = field(default_factory=list)  # the replayed line before ``ply``, passes explicit
    mover: str | None = None  # token of the side to move at ``ply``
    move: int | None = None  # the claimed move at ``ply``
    move_value: int | None = None  # value reached by the claimed move
    best_moves: list[int] = field(default_factory=list)
    best_value: int | None = None  # value of perfect play from ``ply``

    @property
    def ok(self) -> bool:
        return self.problem is None

    def describe(self, root_token: str, game: Game) -> str:
        """One sentence in plain words, with values from ``root_token``'s view."""
        if self.ok:
            return "line is optimal for both sides to the end of the game"
        move = "?" if self.move is None else game.move_text(self.move)
        before = ", ".join(game.move_text(m) for m in self.played)
        after = f"after {before}, " if before else ""
        best = game.moves_text(self.best_moves, " or ")
        where = f"line goes wrong at ply {self.ply}: {after}"
        if self.problem == "too-long":
            return f"{where}the game is over but the line goes on with {move}"
        if self.problem == "too-short":
            return f"{where}the line stops but the game is not over: {self.mover} plays {best} ({self.best_value:+d} for {root_token})"
        if self.problem == "illegal":
            return f"{where}{self.mover} cannot play {move} (not a legal move)"
        played = f"{where}{self.mover} plays {move} ({self.move_value:+d})"
        if self.mover == root_token:
            return f"{played} but {best} gets {self.best_value:+d}"
        return f"{played} but {best} holds {root_token} to {self.best_value:+d}"


class Solver(Protocol[Q]):
    """What a game's exact solver answers (``grader.games.solving.ExactSolver`` is one)."""

    nodes: int  # positions searched so far
    should_stop: Callable[[], bool] | None  # asked now and then: True stops the search (Stopped)

    def value(self, pos: Q) -> int: ...

    def move_value(self, pos: Q, move: int) -> int: ...

    def proven_move_value(self, pos: Q, move: int) -> int | None: ...

    def move_values(self, pos: Q) -> dict[int, int]: ...

    def optimal_moves(self, pos: Q) -> list[int]: ...

    def line(self, pos: Q) -> list[int]: ...

    def analyze(self, pos: Q, all_values: bool = False) -> Analysis: ...

    def verify_line(self, pos: Q, claimed: Sequence[int]) -> LineCheck: ...

    def clear(self) -> None: ...


class StringBoard:
    """What a position kept as a string of squares (``board``: '.' empty, 'x', 'o') and the
    side to move (``token``) offers alike: tic-tac-toe's and Gomoku's."""

    __slots__ = ()
    board: str
    token: str

    @property
    def empties(self) -> int:
        return self.board.count(".")

    @property
    def opponent_token(self) -> str:
        return "o" if self.token == "x" else "x"

    def board_string(self) -> str:
        return self.board


@dataclass(frozen=True)
class BoardEntry(Generic[P]):
    """One position from a board file, with the answer the file claims, if any."""

    position: P
    label: str  # where it came from: 'FILE:LINE', or a suite's number
    best_moves: tuple[int, ...] | None = None  # every optimal move, as the file says
    score: int | None = None  # the exact value, as the file says
    scoring: str | None = None  # the rule the file's value is under


class Game(ABC, Generic[P]):
    """A game's rules, exact solver, drawing, standard plan and file formats."""

    name: ClassVar[str]
    title: ClassVar[str]
    board_length: ClassVar[int]  # characters of a board string
    scorings: ClassVar[tuple[str, ...]]  # the first is the lab's default
    sides: ClassVar[tuple[str, str]] = ("x", "o")  # the tokens of the two sides, the first player's first
    tournament_scoring: ClassVar[str]
    plans: ClassVar[tuple[str, ...]] = ("standard",)  # plan names make_plan() knows
    ladders: ClassVar[Mapping[str, tuple[int, int]]] = {}  # speed plans among them: name -> (first, last) empties
    max_score: ClassVar[int]  # the largest value a game can have, under any rule
    unit: ClassVar[str] = "point"  # what a score counts ('disc' for Othello)
    examples: ClassVar[str]  # the folder of its example scripts under share/ ('builtin:NAME' engines)
    protocols: ClassVar[tuple[str, ...]] = ()  # engine protocols that play it ('nboard', 'gtp')
    # A move only adds the mover's piece (Gomoku): any position is set up by playing its pieces
    # on an empty board (GTP). Othello's flips allow only the moves of a game from its start.
    placing: ClassVar[bool] = False
    lab_protocol: ClassVar[str | None] = None  # what the lab's submissions speak: None, 'SCRIPT BOARD TOKEN'; 'gtp'
    # The settings a variant may change, found as 'NAME:KEY=VALUE,...' (get_game('gomoku:size=9')):
    # key -> its type (int or bool). A variant's ``name`` is that spec, so it survives wherever a game
    # is recorded by name (plan files, run and tournament folders).
    options: ClassVar[Mapping[str, type]] = {}

    # --- positions ---------------------------------------------------------------------

    @abstractmethod
    def parse(self, board: str, token: str) -> P:
        """A position from a board string and the side to move; BoardError if invalid."""

    @abstractmethod
    def start(self) -> P:
        """The position a game starts from."""

    def variant(self, **options: Any) -> Game[P]:
        """These rules with ``options`` changed (keys of ``options``); GraderError for any other."""
        if options:
            raise GraderError(f"{self.name} has no setting {next(iter(options))!r}: it is played one way only")
        return self

    def sized(self, size: int) -> Game[P]:
        """This game on a ``size`` x ``size`` board (GTP's boardsize); GraderError for a game of one size."""
        raise GraderError(f"{self.title} is played on one board size: boardsize {size} is not for it")

    @abstractmethod
    def square_name(self, sq: int) -> str:
        """'d7', 'b2': a square's name."""

    @abstractmethod
    def parse_square(self, text: str) -> int:
        """A square from its index or its name; BoardError if neither."""

    def move_text(self, move: int) -> str:
        """How every report writes a move: '51 (d7)', 'pass'; other numbers as printed."""
        if move == PASS:
            return "pass"
        if 0 <= move < self.board_length:
            return f"{move} ({self.square_name(move)})"
        return "a number of more than 18 digits" if abs(move) >= HUGE else str(move)

    def moves_text(self, moves: Iterable[int], sep: str = ", ") -> str:
        return sep.join(self.move_text(m) for m in moves) or "none"

    @abstractmethod
    def render(self, pos: P, marks: Mapping[int, str] | None = None) -> str:
        """The board as text; ``marks`` draws characters on empty squares."""

    @abstractmethod
    def svg(self, pos: P, best: Sequence[int], played: int | None) -> str:
        """The board as an SVG picture: optimal moves marked, and the script's move."""

    def pieces(self, pos: P) -> tuple[int, int]:
        """The pieces each side holds (the first player's first): discs, marks, stones."""
        board = pos.board_string()
        return board.count("x"), board.count("o")

    # --- exact answers -----------------------------------------------------------------

    @abstractmethod
    def solver(self, scoring: str, should_stop=None, backend: str = "auto") -> Solver[P]:
        """An exact solver under ``scoring`` (keep one to share its memory across calls);
        ``backend`` as for ``backend()``."""

    def backends(self) -> tuple[str, ...]:
        """The solver backends built on this machine, the fastest first."""
        return ("python",)

    def backend_missing(self, name: str) -> str:
        """One line: why ``name`` cannot be used here, and what to do."""
        return f"{self.name} has only the python solver: drop --backend {name} (or use auto)"

    def backend(self, name: str = "auto") -> str:
        """The backend ``name`` stands for here: 'auto' is the fastest built; GraderError for
        one not built (saying how to get it) or unknown."""
        if name not in BACKENDS:
            raise GraderError(f"unknown solver backend {name!r}: use one of {', '.join(BACKENDS)}")
        built = self.backends()
        if name == "auto":
            return built[0]
        if name not in built:
            raise GraderError(self.backend_missing(name))
        return name

    def backend_note(self) -> str | None:
        """A one-line note when a faster solver this game has is not built here (else None)."""
        return None

    def solve_nodes(self, empties: int, backend: str = "python") -> float | None:
        """Typical nodes an exact analysis (value, every optimal move, a line) of a position
        with ``empties`` empties searches with ``backend``; None: no cost model (a game that
        solves at once)."""
        return None

    def calibration(self, backend: str) -> list[P]:
        """Positions whose solve measures a backend's nodes per second (a few tens of ms)."""
        return []

    def scoring(self, name: str | None) -> str:
        """``name`` checked against this game's rules (None: the lab's default)."""
        if name is None:
            return self.scorings[0]
        if name not in self.scorings:
            raise GraderError(f"{self.name} has no scoring rule {name!r}: use one of {', '.join(self.scorings)}")
        return name

    # --- plans and files ---------------------------------------------------------------

    @abstractmethod
    def make_plan(self, name: str, seed: int) -> list[P]:
        """The positions of a named plan ('standard', ...), from ``seed``; a ladder's (``ladders``)
        are drawn by grading's speed plan from ``random_positions``."""

    def published(self, name: str) -> list[P]:
        """The positions of plan ``name`` that are the same whatever the seed: they ship with
        the grader (or anyone can list them), so no plan can keep them private."""
        return []

    @abstractmethod
    def random_positions(self, seed: int, empties: range, count: int) -> list[P]:
        """``count`` positions for each number of empties, reached by legal play, with a move."""

    empties_allowed: ClassVar[range]  # numbers of empties random_positions accepts

    def random_boards(self, seed: int, empties: range, count: int) -> Iterator[P]:
        """``random_positions``'s boards one at a time, in its order. A game may draw them as
        they are asked for, so that a long draw can show its progress and stop; here all are
        drawn first."""
        yield from self.random_positions(seed, empties, count)

    def distinct_boards(self, empties: int) -> int | None:
        """How many different boards with ``empties`` empties random play can reach (with a
        move to make), where they are few enough to count (tic-tac-toe's); None: more."""
        return None

    def check_draw(self, empties: range, count: int) -> None:
        """BoardError, at once, for a draw of ``count`` boards per number of ``empties`` that
        cannot be made: more boards of one number of empties than there are, or more than
        ``MAX_BOARDS`` in all (hours of drawing, gigabytes of text)."""
        for e in empties:
            there = self.distinct_boards(e)
            if there is not None and count > there:
                raise BoardError(f"--count {count:,}: there are only {there:,} {self.title} boards with {e} empt"
                                 f"{'y' if e == 1 else 'ies'} and a move to make: ask for at most {there:,}")  # fmt: skip
        if count * len(empties) > MAX_BOARDS:
            levels = (
                f" for each of {len(empties)} numbers of empties ({count * len(empties):,} boards)"
                if len(empties) > 1
                else ""
            )
            raise BoardError(f"--count {count:,}{levels} is more than the {MAX_BOARDS:,} boards drawn at once: draw "
                             "more in several files, each with its own --seed")  # fmt: skip

    def parse_board_line(self, text: str, label: str) -> BoardEntry[P] | None:
        """One non-empty line of a board file: 'BOARD TOKEN' (games may read more formats;
        None for a line that holds no board, such as a format's own comment)."""
        head = text.split(";", 1)[0].split()
        if len(head) != 2:
            raise BoardError(
                f"expected 'BOARD TOKEN' ({self.board_length}-character board, then x or o), got {len(head)} field(s)"
            )
        return BoardEntry(self.parse(*head), label)

    # --- games between engines ---------------------------------------------------------

    def transcript(self, moves: Sequence[int]) -> str:
        """A game's moves as text, like 'f5d6c3' (passes implied)."""
        return "".join(self.square_name(m) for m in moves if m >= 0)

    def parse_transcript(self, text: str) -> list[int]:
        """Moves from a transcript; BoardError naming the bad part."""
        t = text.strip()
        if len(t) % 2:
            raise BoardError(
                f"bad move sequence {text!r}: write squares like {self.transcript(self.start().moves()[:2])}"
            )
        return [self.parse_square(t[i : i + 2]) for i in range(0, len(t), 2)]

    def replay(self, moves: Sequence[int], start: P | None = None) -> P:
        """The position after ``moves``, passes inserted; BoardError at an illegal move."""
        pos = start or self.start()
        for sq in moves:
            if pos.must_pass():
                pos = pos.pass_turn()
            if not pos.is_legal(sq):
                raise BoardError(f"{self.square_name(sq)} is not legal there ({pos.token} to move)")
            pos = pos.play(sq)
        return pos

    def opening_start(self, opening: str) -> tuple[P, list[int]]:
        """Where a game from ``opening`` starts, and the opening's moves from there: an opening
        is a move sequence from the start (f5d6c3) or a position 'BOARD TOKEN' (an OBF line)."""
        if " " in opening.strip():
            board, token = opening.split()
            return self.parse(board, token), []
        return self.start(), self.parse_transcript(opening)

    def random_opening(self, rng: random.Random, plies: int) -> list[int] | None:
        """Moves of a random legal opening of ``plies`` moves (None: the game ended first)."""
        pos, moves = self.start(), list[int]()
        while len(moves) < plies:
            if pos.is_game_over():
                return None
            if pos.must_pass():
                pos = pos.pass_turn()
                continue
            moves.append(rng.choice(pos.moves()))
            pos = pos.play(moves[-1])
        return None if pos.is_game_over() else moves

    def forfeit_score(self, scoring: str) -> int:
        """What a forfeit counts for the winner: the largest value under ``scoring``."""
        return self.max_score

    def first_player_score(self, pos: P, scoring: str) -> int:
        """The final score of a finished game from the view of 'x' (who moves first)."""
        return pos.score(scoring) if pos.token == "x" else -pos.score(scoring)
