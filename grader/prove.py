"""Proving a script never loses (or plays perfectly) by asking it about every position it
can reach against every reply.

The script is a strategy. From the start (or a given position), with the script as x, as o,
or both, every position where the script is to move is asked once, through the executor
like a test; its move is played and every legal reply of the opponent followed, to the end
of every game. Each position is then asked a second time: a different answer is reported as
not deterministic. Exact values say where a move turned a draw or a win into a loss, where
a forced win slipped, and (from an endgame) where a move was not optimal.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from .engines.parse import Claim
from .engines.runner import RunResult
from .engines.scripts import Script
from .errors import GraderError
from .execution.executor import Executor, interrupt_reason, using
from .games import DEFAULT, PASS, Game, Position, get_game
from .games.cost import first_over, fix_hint
from .grading.results import Settings
from .grading.run import TestTask
from .runs.submissions import Submission
from .stop import Stop, Stopped


@dataclass(frozen=True)
class Move:
    """The script's move in one position, with the exact values around it (script's view)."""

    board: str
    token: str
    move: int
    value: int  # of the position, perfect play
    move_value: int  # after the script's move, perfect play
    best_moves: tuple[int, ...]

    def to_json(self) -> dict[str, Any]:
        return {"board": self.board, "token": self.token, "move": self.move, "value": self.value,
                "move_value": self.move_value, "best_moves": list(self.best_moves)}  # fmt: skip


@dataclass(frozen=True)
class Failure:
    """A position where the script gave no usable move: it crashed, timed out without a move,
    printed none, or an illegal one. The game is lost there."""

    board: str
    token: str
    diagnosis: str

    def to_json(self) -> dict[str, Any]:
        return {"board": self.board, "token": self.token, "diagnosis": self.diagnosis}


@dataclass
class Side:
    """The proof for the script playing one side."""

    side: str
    asked: int = 0  # distinct positions the script was asked about
    lost_game: list[int] | None = None  # the moves of one lost game from the start, passes as -1
    first_loss: Move | None = None  # the first move on that game that turned a draw or a win into a loss
    losing_moves: list[Move] = field(default_factory=list)  # every move that turned >= 0 into < 0
    slipped_wins: list[Move] = field(default_factory=list)  # a forced win that the move did not keep
    suboptimal: list[Move] = field(default_factory=list)  # every move worse than the best
    failures: list[Failure] = field(default_factory=list)
    not_deterministic: list[tuple[str, str, int | None, int | None]] = field(default_factory=list)
    complete: bool = True  # False when interrupted

    @property
    def never_loses(self) -> bool:
        return self.complete and self.lost_game is None and not self.failures and not self.not_deterministic

    @property
    def perfect(self) -> bool:
        """Every move optimal, against every reply."""
        return self.never_loses and not self.suboptimal

    def to_json(self) -> dict[str, Any]:
        return {
            "side": self.side, "positions": self.asked, "complete": self.complete, "never_loses": self.never_loses,
            "perfect": self.perfect, "lost_game": self.lost_game,
            "first_loss": self.first_loss.to_json() if self.first_loss else None,
            "losing_moves": [m.to_json() for m in self.losing_moves],
            "slipped_wins": [m.to_json() for m in self.slipped_wins],
            "suboptimal": [m.to_json() for m in self.suboptimal],
            "failures": [f.to_json() for f in self.failures],
            "not_deterministic": [{"board": b, "token": t, "first": a, "second": c} for b, t, a, c in self.not_deterministic],
        }  # fmt: skip


@dataclass
class Proof:
    """A whole proof: the script, the game, where it started, and each side."""

    script: str
    game: Game
    scoring: str
    start: Position
    sides: list[Side]
    seconds: float
    interrupted: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"script": self.script, "game": self.game.name, "scoring": self.scoring,
                "board": self.start.board_string(), "token": self.start.token, "seconds": round(self.seconds, 2),
                "interrupted": self.interrupted, "sides": [s.to_json() for s in self.sides]}  # fmt: skip


def prove(
    script: str | Path,
    game: str | Game = DEFAULT,
    sides: Sequence[str] | None = None,
    start: Position | None = None,
    settings: Settings | None = None,
    *,
    determinism: bool = True,
    executor: Executor | None = None,
    stop: Stop | None = None,
    on_asked: Callable[[int], None] | None = None,
    max_seconds: float | None = None,
) -> Proof:
    """Prove ``script`` as each of ``sides`` (default: both of the game's) from ``start``
    (default: the game's start), asking
    it about every position it can reach against every reply. ``determinism`` asks each
    position a second time. ``on_asked(n)`` follows progress. Raises GraderError when the
    script cannot be run, or when solving ``start`` is estimated to take more than
    ``max_seconds`` (None: no limit); whatever the script does is part of the proof. A stop
    (Ctrl-C, SIGTERM, ``stop``) ends the proof at once, even in the middle of a solve."""
    g = get_game(game)
    settings = settings or Settings()
    rule = g.scoring(settings.scoring)
    root = start or g.start()
    if root.is_game_over():
        raise GraderError("the game is over in this position: there is nothing to prove")
    refuse_costly(root, g, settings.backend, max_seconds, start is None)
    sides = g.sides if sides is None else sides
    for s in sides:
        if s not in g.sides:
            raise GraderError(f"bad side {s!r}: prove as {' or '.join(g.sides)}, or both")
    path = Path(script)
    loaded = Submission(path.stem, path, single=True).script()
    loaded.command(settings)
    settings.check()
    settings.sandbox_mechanism(strict=False)
    began = time.monotonic()
    out, interrupted = [], None
    with using(executor, settings.jobs, stop) as ex:
        solver = g.solver(rule, should_stop=ex.stop, backend=settings.backend)
        for s in sides:
            side = _Explorer(loaded, root, s, settings, solver, ex, on_asked)
            try:
                side.explore()
                if determinism:
                    side.ask_again()
            except (KeyboardInterrupt, Stopped) as e:
                interrupted = interrupt_reason(e) if isinstance(e, KeyboardInterrupt) else ex.stop.reason
                ex.stop.set(interrupted or "interrupted")
                list(ex.drain())
            if ex.stop.is_set():
                interrupted = interrupted or ex.stop.reason or "interrupted"
                side.result.complete = False
            out.append(side.result)
            if interrupted:
                break
    return Proof(str(script), g, rule, root, out, time.monotonic() - began, interrupted)


def refuse_costly(root: Position, game: Game, backend: str, max_seconds: float | None, from_start: bool) -> None:
    """GraderError when solving ``root`` is estimated to take more than ``max_seconds``: a
    proof solves every position it reaches, its first the hardest. The message says what fits."""
    over = first_over([root], game, game.backend(backend), max_seconds)
    if over is None or max_seconds is None:
        return
    est = over[1]
    what, fix = (
        ("the start", "an endgame instead (--from BOARD TOKEN)")
        if from_start
        else ("this position", "a later position")
    )
    raise GraderError(f"{what} has {est.empties} empties: solving it would take {est.describe()}, over --max-seconds "
                      f"{max_seconds:g}; prove from {fix}: {fix_hint(game, est, max_seconds)}")  # fmt: skip


class _Explorer:
    """One side's search: positions asked through the executor, the tree of play they make."""

    def __init__(self, script: Script, root: Position, side: str, settings: Settings, solver, ex: Executor,
                 on_asked: Callable[[int], None] | None):  # fmt: skip
        self.script, self.root, self.side, self.settings, self.solver, self.ex = (
            script,
            root,
            side,
            settings,
            solver,
            ex,
        )
        self.on_asked = on_asked
        self.result = Side(side)
        self.answers: dict[Position, int | None] = {}
        self.rank: dict[tuple[str, str], int] = {}  # (board, token) of each asked position -> its place in play order

    def explore(self) -> None:
        """Ask every reachable position once, following every reply."""
        pending = deque(self._to_ask(self.root))
        asking: set[Position] = set()
        while pending or asking:
            while pending:
                pos = pending.popleft()
                if pos not in self.answers and pos not in asking:
                    asking.add(pos)
                    self.ex.submit(pos, TestTask(self.script, pos, self.settings))
            got = next(self.ex.results(), None)
            if got is None:  # the run was stopped
                return
            key, (run, claim) = got
            asking.discard(key)
            pending.extend(self._answered(key, run, claim))
        self._finish()

    def _to_ask(self, pos: Position) -> list[Position]:
        """From ``pos``, the positions where the script is to move next, over every reply."""
        out = []
        stack = [pos]
        while stack:
            p = stack.pop()
            if p.is_game_over():
                continue
            if p.must_pass():
                stack.append(p.pass_turn())
            elif p.token == self.side:
                out.append(p)
            else:
                stack += [p.play(m) for m in reversed(p.moves())]
        return out

    def _lost(self, pos: Position) -> bool:
        """The game is over at ``pos`` and the script's side lost it."""
        return pos.score(self.solver.scoring) * (1 if pos.token == self.side else -1) < 0

    def _answered(self, pos: Position, run: RunResult, claim: Claim) -> list[Position]:
        self.result.asked += 1
        if self.on_asked:
            self.on_asked(self.result.asked)
        move = claim.move
        problem = None
        if run.crashed:
            problem = f"the script {run.describe()}"
        elif move is None:
            problem = "no integer in the output, so no move" + (f" (it {run.describe()})" if run.describe() else "")
        elif not pos.is_legal(move):
            problem = f"move {pos.game.move_text(move)} is not a legal move"
        if problem:
            self.answers[pos] = None
            self.result.failures.append(Failure(pos.board_string(), pos.token, problem))
            return []
        assert move is not None  # no problem: a legal move
        self.answers[pos] = move
        value, move_value = self.solver.value(pos), self.solver.move_value(pos, move)
        if move_value < value:
            judged = Move(pos.board_string(), pos.token, move, value, move_value, tuple(self.solver.optimal_moves(pos)))
            self.result.suboptimal.append(judged)
            if value >= 0 > move_value:
                self.result.losing_moves.append(judged)
            if value > 0 >= move_value:
                self.result.slipped_wins.append(judged)
        return self._to_ask(pos.play(move))

    def ask_again(self) -> None:
        """Ask every answered position a second time; a different answer is not deterministic."""
        again = [p for p, m in self.answers.items() if m is not None]
        for pos in again:
            self.ex.submit(("again", pos), TestTask(self.script, pos, self.settings))
        for (_, pos), (run, claim) in self.ex.results():
            if claim.move != self.answers[pos]:
                self.result.not_deterministic.append((pos.board_string(), pos.token, self.answers[pos], claim.move))
        self.result.not_deterministic.sort(key=lambda n: self.rank.get(n[:2], len(self.rank)))

    def _finish(self) -> None:
        """Play the tree again with every answer known, breadth first and moves in order, so
        that the report does not depend on which answers came back first: the shortest lost
        game (the first in move order among equals), its first losing move, and every list of
        positions in the order play reaches them."""
        seen: set[Position] = set()
        queue: deque[tuple[Position, list[int]]] = deque([(self.root, [])])
        while queue:
            p, ms = queue.popleft()
            if p.is_game_over():
                if self.result.lost_game is None and self._lost(p):
                    self.result.lost_game = ms
            elif p.must_pass():
                queue.append((p.pass_turn(), ms + [PASS]))
            elif p.token != self.side:
                queue.extend((p.play(m), ms + [m]) for m in p.moves())
            elif p not in seen:
                seen.add(p)
                self.rank[(p.board_string(), p.token)] = len(self.rank)
                answer = self.answers.get(p)
                if answer is not None:
                    queue.append((p.play(answer), ms + [answer]))
        r = self.result
        for found in (r.losing_moves, r.slipped_wins, r.suboptimal, r.failures):
            found.sort(key=lambda m: self.rank.get((m.board, m.token), len(self.rank)))
        if r.lost_game is None:
            return
        pos = self.root
        for m in r.lost_game:
            if m != PASS and pos.token == self.side and self.solver.move_value(pos, m) < 0 <= self.solver.value(pos):
                self.result.first_loss = Move(pos.board_string(), pos.token, m, self.solver.value(pos),
                                              self.solver.move_value(pos, m), tuple(self.solver.optimal_moves(pos)))  # fmt: skip
                break
            pos = pos.pass_turn() if m == PASS else pos.play(m)
