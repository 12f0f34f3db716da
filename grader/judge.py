"""Claim + exact answer -> symbol, credit and a diagnosis in plain words.

The symbols and credits of the lab (shared/spec/endgame-lab.md):

    +  score line; move, score and line correct          1
    M  score line; move and score correct, line wrong    3/4
    Q  score line; line correct, score wrong             3/4
    m  score line; move correct, score and line wrong    1/2
    s  score line; score correct, move wrong             1/4
    -  score line; neither score nor move correct        0
    T  no score line; move correct                       1/2
    t  no score line; move wrong or missing              0

A move that is not legal, or no integer at all, fails the test: credit 0 (symbol '-' with a
score line, 't' without), whatever else was right.
"""

from __future__ import annotations

from dataclasses import dataclass

from .board import PASS, Position, Square, square_name
from .parse import HUGE, Claim
from .solver import LineCheck, Solver

SYMBOLS = "+MQTms-t"
CREDIT = {"+": 1.0, "M": 0.75, "Q": 0.75, "m": 0.5, "s": 0.25, "-": 0.0, "T": 0.5, "t": 0.0}


@dataclass(frozen=True)
class Verdict:
    """The judgement of one test."""

    symbol: str
    credit: float
    move_ok: bool
    score_ok: bool | None  # None: no score line
    line_ok: bool | None
    failure: str | None  # why the test failed outright (no move, illegal move), else None
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


def fmt_move(sq: Square) -> str:
    if abs(sq) >= HUGE:
        return "a number of more than 18 digits"
    return "pass" if sq == PASS else f"{sq} ({square_name(sq)})" if 0 <= sq < 64 else str(sq)


def judge(pos: Position, claim: Claim, solver: Solver) -> Verdict:
    """Judge ``claim`` for ``pos`` against the solver's exact answers."""
    value = solver.value(pos)
    optimal = solver.optimal_moves(pos)
    best = " or ".join(fmt_move(m) for m in optimal)
    notes: list[str] = []

    failure = None
    move_value = None
    move = claim.move
    if move is None:
        failure = "no integer in the output, so no move"
    elif not pos.is_legal(move):
        legal = ", ".join(str(m) for m in pos.moves())
        failure = f"move {fmt_move(move)} is not a legal move for {pos.token} (legal: {legal})"
    move_ok = failure is None and move in optimal
    if failure:
        notes.append(failure)
    else:
        move_value = solver.move_value(pos, move)
        if move_ok:
            notes.append(f"move {fmt_move(move)} is optimal ({value:+d})")
        else:
            notes.append(
                f"move {fmt_move(move)} is legal but loses {value - move_value} disc"
                f"{'s' if value - move_value != 1 else ''}: it gives {move_value:+d}, best is {best} ({value:+d})"
            )

    if not claim.has_score_line:
        notes.append("no score line")
        symbol = "t" if failure else symbol_for(False, move_ok, False, False)
        return Verdict(symbol, CREDIT[symbol], move_ok, None, None, failure, move_value, None, "; ".join(notes))

    score_ok = claim.score == value
    if score_ok:
        notes.append(f"score {value:+d} is correct")
    else:
        notes.append(f"claimed score {claim.score:+d} but perfect play gives {value:+d}")
    check = solver.verify_line(pos, [m for m in claim.line if m >= 0])
    notes.append(check.describe(pos.token))
    symbol = "-" if failure else symbol_for(True, move_ok, score_ok, check.ok)
    return Verdict(symbol, CREDIT[symbol], move_ok, score_ok, check.ok, failure, move_value, check, "; ".join(notes))
