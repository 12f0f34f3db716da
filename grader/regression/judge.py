"""Judging a program's answers by the grader's own solver, not by the file's regex: ``solve``
answers 'WINNER [MOVE]' (WINNER b, w, draw or unknown; a MOVE that achieves it when the side
to move wins or draws), and any move that achieves the best outcome counts; ``genmove`` by
the same exact search. When the grader cannot solve the position within its own budget, the
regex decides. Every other test is judged by its regex."""

from __future__ import annotations

import re
import time
from typing import Any

from ..errors import BoardError, GraderError
from ..execution.executor import Worker
from ..games import Game, Position
from ..stop import Stop, Stopped
from .format import COLOURS, Command, Shadow, board_size
from .results import REGRESS_SYMBOLS, RegressSettings, RegressTest
from .solutions import Solutions

LIST_SECONDS = 2.0  # the most the grader spends listing every best move for a test's feedback


def solve_file(commands: list[Command], game: Game, solutions: Solutions, stop: Stop) -> int:
    """Settle in ``solutions`` every position of a 'solve' or 'genmove' test that the file
    itself sets up (not one after a program's own 'genmove', which only a run knows, nor one
    whose test expects 'unknown', solved only for a program that answers otherwise), each
    within the budget, before any program runs: so each is solved once per run. How many
    positions the budget did not settle."""
    shadow, unsettled, known = Shadow(game), 0, True
    solvers: dict[str, Any] = {}
    for c in commands:
        words = c.text.split()
        if known and c.number is not None and words[:1] in (["solve"], ["genmove"]) and not _expects_unknown(c):
            pos, _ = shadow.position()
            if pos is not None and not (words[0] == "genmove" and pos.is_game_over()):
                rules = pos.game
                solver = solvers.setdefault(rules.name, rules.solver(rules.scorings[0]))
                if solutions.solve(solver, pos, stop.is_set).value is None:
                    unsettled += 1
        if words[:1] in (["boardsize"], ["clear_board"]):
            known = True
        elif words[:1] == ["genmove"]:
            known = False  # the game goes on from the program's own move, until the file sets it up again
        shadow.command(c.text, "")
    return unsettled


def judge(c: Command, answer: str | None, raw: str, pos: Position | None, problem: str, side: str,
           settings: RegressSettings, worker: Worker, solutions: Solutions | None = None) -> RegressTest:  # fmt: skip
    """The verdict on one test's answer (None: the program answered '? ...'); ``pos`` None:
    the position the file set up cannot arise in play (``problem``), and the regex decides.

    The answer is everything up to the blank line (GTP's rule): a 'solve' or 'genmove' answer
    of more than one line is wrong. Where the file expects 'unknown', 'unknown' passes, and a
    result is judged by the solver, or unverified ('v') where the solver cannot settle it."""
    assert c.number is not None
    verb = c.text.split()[0]
    thinks = verb in ("solve", "genmove")

    def verdict(symbol: str, note: str, judged_by: str = "solver") -> RegressTest:
        credit = {"u": settings.unknown_credit, "v": settings.unverified_credit}.get(symbol, REGRESS_SYMBOLS[symbol][0])
        shown = answer if answer is not None else f"? {raw}"
        return RegressTest(c.number or 0, c.text, "", c.expected, shown, symbol, credit, note, 0.0, c.expect_failure,
                           judged_by, error=answer is None)  # fmt: skip

    lines = answer.splitlines() if answer is not None else []
    if thinks and len(lines) > 1:
        return verdict("-", f"the answer is everything up to the blank line, here {len(lines)} lines "
                            f"('{lines[0][:30]}', then '{lines[1][:30]}'): answer on one line, then a blank line",
                       "rule")  # fmt: skip
    expects_unknown = _expects_unknown(c)
    said_unknown = verb == "solve" and answer is not None and answer.lower().split() == ["unknown"]
    if said_unknown and expects_unknown:
        return verdict("+", "unknown, as the file expects", "regex")
    why_regex = f"; {problem}: the file's answer decides" if pos is None and thinks else ""
    unsettled = f"{problem}: the grader cannot judge it" if pos is None else ""
    if answer is not None and pos is not None and (verb == "solve" or (verb == "genmove" and not pos.is_game_over())):
        solver = worker.cached(
            ("regress", pos.game.name, pos.game.board_length), lambda: pos.game.solver(pos.game.scorings[0])
        )
        truth: _Truth | None = None
        try:
            judged_by = _judge_solve if verb == "solve" else _judge_genmove
            truth = _Truth(solver, pos, worker, settings.solve_seconds, solutions or Solutions(settings.solve_seconds))
            test = judged_by(answer, pos, side, truth, verdict)
            test.best = truth.listed
            return test
        except Stopped:
            if worker.stop.is_set():
                raise
            what = "this position" if truth is None or truth.stuck is None else f"{truth.stuck}'s value"
            unsettled = (f"the grader's solver could not settle {what} within {settings.solve_seconds:g} s "
                         "(regress.solve_seconds in config.yaml)")  # fmt: skip
            why_regex = f"; {unsettled}: the file's answer decides"
    if said_unknown:
        return verdict("u", "unknown" + (f"; {unsettled}" if unsettled else ""), "regex")  # the course's credit
    if expects_unknown and answer is not None:  # a result the grader cannot check: never wrong by the regex
        return verdict("v", f"unverified: the file expects unknown; {unsettled}", "regex")
    if c.expected is None:
        return verdict(
            "+" if answer is not None else "-", "no expected answer: any success passes" + why_regex, "regex"
        )
    matched = answer is not None and re.fullmatch(c.expected, answer) is not None
    return verdict("+" if matched else "-", f"expected [{c.expected}]" + why_regex, "regex")


def _expects_unknown(c: Command) -> bool:
    """A 'solve' test that expects 'unknown' (the course's '#? [unknown]'): its regex takes
    'unknown' and no bare winner (not '.*', which expects nothing in particular)."""
    if c.text.split()[:1] != ["solve"] or c.expected is None or not re.fullmatch(c.expected, "unknown"):
        return False
    return not any(re.fullmatch(c.expected, w) for w in ("b", "w", "draw"))


def rejudge_test(test: RegressTest, game: Game, settings: RegressSettings, worker: Worker,
                 solutions: Solutions | None = None) -> RegressTest:  # fmt: skip
    """``test`` judged again from its recorded position and answer, with the grader's solver
    and ``settings`` as they are now (a test with no answer keeps its verdict); ``solutions``:
    the positions solved so far, shared by the tests judged again."""
    if test.answer is None or test.symbol == "t":
        return test
    answer, raw = (None, test.answer[2:]) if test.error else (test.answer, test.answer)
    board, _, token = test.board.partition(" ")
    pos, problem = position_of(game, board, token)
    side = COLOURS[game.sides.index(token)] if token in game.sides else COLOURS[0]
    command = Command(0, test.command, test.number, test.expected, test.expect_failure)
    again = judge(command, answer, raw, pos, problem, side, settings, worker, solutions)
    refused = test.note.find(" (the program refused '")
    again.note += test.note[refused:] if refused >= 0 else ""
    again.board, again.seconds = test.board, test.seconds
    return again


def answered_move(t: RegressTest, pos: Position) -> int | None:
    """The point a 'solve' or 'genmove' answer names on ``pos`` (None: none, or not a point)."""
    words = (t.answer or "").split() if not t.error else []
    point = words[1] if t.command.startswith("solve") and len(words) > 1 else words[0] if words else ""
    try:
        return pos.game.parse_square(point) if point else None
    except BoardError:
        return None


def position_of(game: Game, board: str, token: str) -> tuple[Position | None, str]:
    """The position of a recorded board (sized as it was played), or None and why not."""
    try:
        side = round(len(board) ** 0.5)
        rules = game.sized(side) if side != board_size(game) and side * side == len(board) else game
        return rules.parse(board, token), ""
    except (BoardError, GraderError) as e:
        return None, str(e)


class _Truth:
    """What the grader's solver says of one position, from the run's ``solutions`` (each
    position solved once per run) or searched only as far as a verdict needs: its value, one
    move's value, and the best moves for the feedback (those settled, and a word that there
    may be others, when the budget ran out while listing them). Raises Stopped when the value,
    or a move's, cannot be settled within ``seconds``: a move's at once where a search of as
    long failed before in the run (another program's answer), its name in ``stuck``."""

    def __init__(self, solver: Any, pos: Position, worker: Worker, seconds: float, solutions: Solutions):
        self.solver, self.pos, self.worker, self.seconds, self.solutions = solver, pos, worker, seconds, solutions
        self.entry = solutions.solve(solver, pos, worker.stop.is_set, moves=False)
        if self.entry.value is None:
            raise Stopped("the position was not settled")
        self.value: int = self.entry.value
        self._best: str | None = None
        self._more = ""  # why the list may be incomplete
        self.stuck: str | None = None  # the move whose value was not settled

    def move_value(self, move: int) -> int:
        if move in self.entry.moves:
            return self.entry.moves[move]
        if self.solutions.unsettled(self.pos, move, self.seconds):
            self.stuck = self.pos.game.square_name(move)
            raise Stopped("the move was not settled before")
        deadline = time.monotonic() + self.seconds
        self.solver.should_stop = lambda: time.monotonic() > deadline or self.worker.stop.is_set()
        try:
            value: int = self.solver.move_value(self.pos, move)
        except Stopped:
            if not self.worker.stop.is_set():
                self.stuck = self.pos.game.square_name(move)
                self.solutions.give_up(self.pos, move, self.seconds)
            raise
        self.solutions.record(self.pos, move, value)
        return value

    @property
    def listed(self) -> str:
        """The best moves, if ``best`` was asked for ('' otherwise): those settled, if not all."""
        return self._best or ""

    def best(self) -> str:
        """The best moves for the feedback, with a word where there may be others."""
        if self._best is None and self.entry.best is not None:
            self._best = ", ".join(self.pos.game.square_name(m) for m in self.entry.best)
        if self._best is None and self.entry.gave_up >= self.solutions.budget:
            # the run's whole budget did not list them (not again for each program): those it settled
            self._best = ", ".join(self.pos.game.square_name(m) for m in self.entry.achieving())
            if self._best:
                self._more = (f" and perhaps others (the solver did not settle every move within "
                              f"{self.solutions.budget:g} s)")  # fmt: skip
        if self._best is None:
            until = time.monotonic() + LIST_SECONDS  # within the verdict's own budget
            self.solver.should_stop = lambda: time.monotonic() > until or self.worker.stop.is_set()
            try:
                self._best = ", ".join(self.pos.game.square_name(m) for m in self.solver.optimal_moves(self.pos))
            except Stopped:
                if self.worker.stop.is_set():
                    raise
                self._best = ""
        return self._best + self._more if self._best else ""


def _judge_solve(answer: str, pos: Position, side: str, truth: _Truth, verdict) -> RegressTest:
    words = answer.lower().split()
    other = COLOURS[1 - COLOURS.index(side)]
    best, over, game = truth.value, pos.is_game_over(), pos.game
    winner = side if best > 0 else other if best < 0 else "draw"

    def moves(prefix: str) -> str:  # the moves that achieve the result, where there are any to show
        listed = truth.best() if best >= 0 and not over else ""
        return prefix.format(listed) if listed else ""

    if not words or words[0] not in (*COLOURS, "draw", "unknown"):
        return verdict("-", f"an answer is 'b', 'w', 'draw' or 'unknown' and a move; the winner is {winner}")
    if len(words) > 2:
        return verdict("-", f"an answer is a winner and at most a move, not {len(words)} words; the winner is {winner}")
    if words[0] == "unknown":
        return verdict("u", f"unknown; the winner is {winner}" + moves(" ({})"))
    if words[0] != winner:
        return verdict("-", f"said {words[0]}; the winner is {winner}" + moves(" ({})"))
    if best < 0 or over:  # a loss, or a game over: no move to write
        if len(words) > 1:
            return verdict("W", f"{winner} is right, but a move is written only when the side to move wins or draws")
        return verdict(
            "+", f"{winner} is right: " + ("the game is over" if over else f"{side} loses whatever it plays")
        )
    if len(words) < 2:
        return verdict("W", f"{winner} is right, but no move" + moves(": one of {} achieves it"))
    try:
        move = game.parse_square(words[1])
    except BoardError:
        return verdict("W", f"{winner} is right, but its move is not a point" + moves("; one of {} achieves it"))
    if not pos.is_legal(move):
        return verdict("W", f"{winner} is right, but {game.square_name(move)} is not a legal move"
                            + moves("; one of {} achieves it"))  # fmt: skip
    value = truth.move_value(move)
    if value != best:
        how = f"gives {'a draw' if value == 0 else 'a loss'}"
        return verdict("W", f"{winner} is right, but {game.square_name(move)} {how}" + moves("; one of {} achieves it"))
    return verdict("+", f"{winner} {game.square_name(move)} is right" + moves(" (any of {})"))


def _judge_genmove(answer: str, pos: Position, side: str, truth: _Truth, verdict) -> RegressTest:
    game = pos.game
    try:
        move = game.parse_square(answer.split()[0]) if answer.split() else None
    except BoardError:
        move = None
    if move is None or not pos.is_legal(move):
        best = truth.best()  # listed only for a wrong answer's feedback
        return verdict("-", "the answer is not a legal move" + (f"; best: {best}" if best else ""))
    if len(answer.split()) > 1:
        return verdict("-", f"an answer is one move, not {len(answer.split())} words")
    value = truth.move_value(move)
    if value != truth.value:
        best = truth.best()
        return verdict("-", f"{game.square_name(move)} gives {value:+d}, best is {truth.value:+d}"
                            + (f" ({best})" if best else ""))  # fmt: skip
    return verdict("+", f"{game.square_name(move)} is optimal ({truth.value:+d})")
