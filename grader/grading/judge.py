"""Claim + exact answer -> symbol, credit and a diagnosis in plain words.

The symbols and credits of the lab (shared/spec/endgame-lab.md) live in ``SYMBOL_TABLE``,
the one place that says what each symbol means and is worth. A test fails outright (credit
0: symbol '-' with a score line, 't' without) when the script crashed, printed no integer,
or its last integer is not a legal move, whatever else was right.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..engines.parse import Claim
from ..games import Position
from ..games.base import Solver
from ..games.solving import LineCheck

Square = int


@dataclass(frozen=True)
class Symbol:
    """One verdict symbol: what it means and the credit it earns."""

    char: str
    credit: float
    meaning: str  # in a few words, for tables and legends
    needs_score_line: bool


SYMBOL_TABLE: dict[str, Symbol] = {
    s.char: s
    for s in (
        Symbol("+", 1.0, "move, score and line all correct", True),
        Symbol("M", 0.75, "move and score correct, line wrong", True),
        Symbol("Q", 0.75, "line correct, score wrong", True),
        Symbol("T", 0.5, "no score line (timed out, or no negamax); move correct", False),
        Symbol("m", 0.5, "move correct, score and line wrong", True),
        Symbol("s", 0.25, "score correct, move wrong", True),
        Symbol("-", 0.0, "neither score nor move correct, or a failed test", True),
        Symbol("t", 0.0, "no score line; move wrong or missing, or a failed test", False),
    )
}
SYMBOLS = "".join(SYMBOL_TABLE)  # the order of tables and counts


@dataclass(frozen=True)
class Answer:
    """The exact answer for one position: what every verdict on it is judged against."""

    value: int
    optimal_moves: tuple[Square, ...]
    move_values: dict[Square, int]  # every legal move's value for the mover

    @classmethod
    def solve(cls, solver: Solver, pos: Position) -> Answer:
        values = solver.move_values(pos)
        best = max(values.values())
        return cls(best, tuple(sq for sq in sorted(values) if values[sq] == best), values)


@dataclass(frozen=True)
class Verdict:
    """The judgement of one test."""

    symbol: str
    credit: float
    move_ok: bool
    score_ok: bool | None  # None: no score line
    line_ok: bool | None
    failure: str | None  # why the test failed outright (a crash, no move, an illegal move), else None
    move_value: int | None  # value the script's move leads to, when legal
    line_check: LineCheck | None
    diagnosis: str


def symbol_for(has_score_line: bool, move_ok: bool, score_ok: bool, line_ok: bool) -> str:
    """The lab's symbol for the three facts."""
    if not has_score_line:
        return "T" if move_ok else "t"
    if move_ok and score_ok:
        return "+" if line_ok else "M"
    if line_ok and not score_ok:
        return "Q"
    if move_ok:
        return "m"
    return "s" if score_ok else "-"


def judge(pos: Position, claim: Claim, answer: Answer, solver: Solver, crash: str | None = None) -> Verdict:
    """Judge ``claim`` for ``pos``; ``crash`` says how the script crashed, if it did."""
    game = pos.game
    value = answer.value
    best = game.moves_text(answer.optimal_moves, " or ")
    move_text, unit = game.move_text, game.unit
    notes = [f"the script {crash}, so the test fails"] if crash else []

    move = claim.move
    move_value = answer.move_values.get(move) if move is not None else None
    if move is None:
        bad_move = "no integer in the output, so no move"
    elif move_value is None:
        bad_move = f"move {move_text(move)} is not a legal move for {pos.token} (legal: {', '.join(map(str, answer.move_values))})"
    else:
        bad_move = None
    move_ok = move_value is not None and move in answer.optimal_moves
    if bad_move:
        notes.append(bad_move)
    elif move is None or move_value is None:  # a move is bad unless it is legal
        raise AssertionError("a legal move without a value")
    elif move_ok:
        notes.append(f"move {move_text(move)} is optimal ({value:+d})")
    else:
        lost = value - move_value
        notes.append(
            f"move {move_text(move)} is legal but loses {lost} {unit}{'s' if lost != 1 else ''}: "
            f"it gives {move_value:+d}, best is {best} ({value:+d})"
        )
    failure = f"the script {crash}" if crash else bad_move

    if not claim.has_score_line:
        notes.append("no score line")
        symbol = "t" if failure else symbol_for(False, move_ok, False, False)
        return Verdict(
            symbol, SYMBOL_TABLE[symbol].credit, move_ok, None, None, failure, move_value, None, "; ".join(notes)
        )

    score_ok = claim.score == value
    if score_ok:
        notes.append(f"score {value:+d} is correct")
    else:
        notes.append(f"claimed score {claim.score:+d} but perfect play gives {value:+d}")
    check = solver.verify_line(pos, [m for m in claim.line if m >= 0])
    notes.append(check.describe(pos.token, game))
    symbol = "-" if failure else symbol_for(True, move_ok, score_ok, check.ok)
    return Verdict(
        symbol, SYMBOL_TABLE[symbol].credit, move_ok, score_ok, check.ok, failure, move_value, check, "; ".join(notes)
    )
