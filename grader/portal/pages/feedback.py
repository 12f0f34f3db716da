"""A submission's tests as its page shows them: each a card with its symbol in words, its
credit and, for a test below full credit (and on request for the others), the board drawn
as the grading reports draw it (the optimal moves and the program's move marked), what the
program printed, the exact answer and the verdict in a sentence. Built from the records a
graded submission keeps; which tests a person may see is the caller's to say (``visible``):
a student's private tests never reach a card before their release."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from ...errors import GraderError
from ...games import Game
from ...grading.judge import SYMBOL_TABLE
from ...grading.results import TestResult
from ...regression.judge import answered_move, position_of
from ...regression.results import REGRESS_SYMBOLS, RegressTest
from ...regression.runs import student_view
from ...runs.text import fmt_credit, plural
from ..course.course import Assignment
from ..course.gtplab import RegressionFile, recorded_student

TONE = {"+": "ok", "M": "good", "Q": "good", "T": "half", "m": "half", "s": "low", "-": "bad", "t": "bad"}
REGRESS_TONE = {"+": "ok", "W": "half", "u": "low", "v": "low", "-": "bad"}  # and "t": bad
BOARDS = 12  # boards drawn on a page at most; the others on request (``?test=N``), so that no page grows past 100 KB
FOLD_OVER = 30  # past this many cards, the details of a test whose board is not drawn are on request too, the same way


@dataclass
class Card:
    """One test as its card shows it."""

    index: int
    symbol: str
    meaning: str  # the symbol in words
    tone: str  # ok, good, half, low, bad: the card's colour (beside the words, never alone)
    credit: float
    public: bool
    facts: list[tuple[str, str]] = field(default_factory=list)  # (what, text), escaped by the template
    board: str = ""  # the SVG, drawn by the grader (no text of the program's in it)
    more: bool = False  # a board exists that this page did not draw: a link asks for it
    folded: bool = False  # its details are not on this page: a link asks for them

    @property
    def passed(self) -> bool:
        return self.credit >= 1

    @property
    def credit_text(self) -> str:
        return fmt_credit(self.credit)


def symbol_meaning(symbol: str, gtp: bool) -> tuple[str, str]:
    """A symbol's words and tone."""
    if gtp:
        return REGRESS_SYMBOLS.get(symbol, (0.0, symbol))[1], REGRESS_TONE.get(symbol, "bad")
    known = SYMBOL_TABLE.get(symbol)
    return (known.meaning if known else symbol), TONE.get(symbol, "bad")


def cards(records: str | None, assignment: Assignment, visible: Callable[[int], bool],
          asked: int | None = None, student: bool = True) -> list[Card]:  # fmt: skip
    """The cards of the tests ``visible`` lets through, in test order: boards drawn for those
    below full credit first, then ``asked``, at most ``BOARDS``; past ``FOLD_OVER`` cards, the
    details of a test whose board is not drawn left for a request; an unreadable record gives no
    cards. For a ``student``, a GTP program's answers after a private test are cut to what was
    judged, as the text feedback cuts them (``regression.runs.student_view``)."""
    if not records:
        return []
    try:
        data = json.loads(records)
        if isinstance(assignment.plan, RegressionFile):
            found = _gtp_cards(data, assignment.plan, visible, student)
        else:
            found = _plan_cards(data, assignment.plan.game, assignment, visible)
    except (GraderError, KeyError, TypeError, ValueError):  # a record of an older portal: the text shows it
        return []
    drawn = 0
    for c, draw in sorted(found, key=lambda pair: (pair[0].index != asked, pair[0].passed, pair[0].index)):
        if draw is None:
            continue
        if drawn < BOARDS and (not c.passed or c.index == asked):
            c.board = draw()
            drawn += 1
        else:
            c.more = True
    for c, _ in found:
        c.folded = len(found) > FOLD_OVER and not c.board and c.index != asked
    return [c for c, _ in found]


Drawing = Callable[[], str] | None


def _plan_cards(data: Any, game: Game, assignment: Assignment,
                visible: Callable[[int], bool]) -> list[tuple[Card, Drawing]]:  # fmt: skip
    out: list[tuple[Card, Drawing]] = []
    for r in data:
        if not visible(r["index"]):
            continue
        t = TestResult.from_record(r, game)
        meaning, tone = symbol_meaning(t.symbol, False)
        card = Card(t.index, t.symbol, meaning, tone, t.verdict.credit, assignment.plan.is_public(t.index))
        c = t.claim
        move = game.move_text(c.move) if c.move is not None else "no move"
        pos = t.position
        card.facts.append(("Position", f"{pos.token} to move, {plural(pos.empties, 'empty square', 'empty squares')}"))
        card.facts.append(("It printed", f"score {c.score:+d}, move {move}" if c.has_score_line
                           else f"no score line; move {move}"))  # fmt: skip
        if c.score_text:
            card.facts.append(("Its score line", c.score_text))
        card.facts.append(("Exact answer", f"value {t.value:+d}; optimal {game.moves_text(t.optimal_moves)}"))
        card.facts.append(("Verdict", _sentence(t.symbol, meaning, t.verdict.credit, t.diagnosis)))
        check = t.verdict.line_check
        if check is not None and not check.ok:
            card.facts.append(("Its line", check.describe(pos.token, game)))
        ended = t.run.describe()
        if ended:
            card.facts.append(("The run", f"the script {ended}"))
        card.facts.append(("Board", f"{pos.board_string()} {pos.token}"))
        out.append((card, partial(_plan_board, t)))
    return out


def _plan_board(t: TestResult) -> str:
    return t.position.game.svg(t.position, t.optimal_moves, t.claim.move)


def _gtp_cards(data: Any, tests: RegressionFile, visible: Callable[[int], bool],
               cut: bool) -> list[tuple[Card, Drawing]]:  # fmt: skip
    program = recorded_student(json.dumps(data)) if isinstance(data, dict) else None
    if program is None:
        return []
    shown: Iterable[RegressTest] = (t for r in program.results
                                    for t in (student_view(r, tests.private)[1] if cut else r.tests))  # fmt: skip
    out: list[tuple[Card, Drawing]] = []
    for t in shown:
        if not visible(t.number):
            continue
        meaning, tone = symbol_meaning(t.symbol, True)
        card = Card(t.number, t.symbol, meaning, tone, t.credit, tests.is_public(t.number))
        card.facts.append(("Asked", t.command))
        card.facts.append(("It answered", t.answer if t.answer is not None else "nothing"))
        if t.best:
            card.facts.append(("Exact answer", f"{t.expected or ''} (moves that achieve it: {t.best})".strip()))
        elif t.expected:
            card.facts.append(("Expected", t.expected))
        card.facts.append(("Verdict", _sentence(t.symbol, meaning, t.credit, t.note)))
        card.facts.append(("Board", t.board))
        board, _, token = t.board.partition(" ")
        pos, _ = position_of(tests.game, board, token)
        drawing: Drawing = None
        if pos is not None:
            best = [pos.game.parse_square(m) for m in t.best.split(", ") if m] if t.judged_by == "solver" else []
            drawing = partial(pos.game.svg, pos, best, answered_move(t, pos))
        out.append((card, drawing))
    return out


def _sentence(symbol: str, meaning: str, credit: float, why: str) -> str:
    """The verdict in a sentence: what the symbol means, the credit, and the diagnosis."""
    text = f"{meaning[:1].upper()}{meaning[1:]} ({symbol}): {fmt_credit(credit)} of 1 point."
    return f"{text} {why[:1].upper()}{why[1:]}" if why else text
