"""What the grader's solver settled of a regression file's positions: each position solved
once per run, whatever the number of programs, and kept beside the file for later runs.

A position's entry holds its value for the side to move, the values of the moves settled so
far (those a quick proof settles first, then the rest by the full search), every optimal move
once listed, the budget the solver ran out of, and the moves whose value a search of the whole
budget did not settle (a second program answering one is judged at once, without the solver).
A later run with a larger budget tries what is unsettled again; a file written by another
grader version is not read (its solver may have been wrong).
"""

from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..errors import GraderError
from ..games import Game, Position, get_game
from ..stop import Stopped
from ..version import __version__

SUFFIX = ".solved.json"  # the cache beside a regression file: lab2.gtp -> lab2.gtp.solved.json


@dataclass
class Solution:
    """One position, as far as the solver settled it."""

    value: int | None = None  # +1, 0, -1 for the side to move; None: not settled
    moves: dict[int, int] = field(default_factory=dict)  # move -> its value, for the moves settled
    best: tuple[int, ...] | None = None  # every move achieving the value, once listed
    gave_up: float = 0.0  # the budget in seconds the solver ran out of before settling the value or the list
    seconds: float = 0.0  # what settling it took
    unsettled: dict[int, float] = field(default_factory=dict)  # move -> the budget its search ran out of

    def achieving(self) -> tuple[int, ...]:
        """The moves settled so far that achieve the value (every one, once ``best`` is listed)."""
        return tuple(m for m, v in sorted(self.moves.items()) if v == self.value)

    def to_json(self, game: Game) -> dict[str, Any]:
        if self.value is None:
            return {"gave_up": self.gave_up}
        out: dict[str, Any] = {"value": self.value, "seconds": round(self.seconds, 3), "gave_up": self.gave_up}
        out["moves"] = {game.square_name(m): v for m, v in sorted(self.moves.items())}
        if self.best is not None:
            out["best"] = [game.square_name(m) for m in self.best]
        if self.unsettled:
            out["unsettled"] = {game.square_name(m): s for m, s in sorted(self.unsettled.items())}
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any], game: Game) -> Solution:
        if data.get("value") is None:
            return cls(gave_up=float(data["gave_up"]))
        moves = {game.parse_square(k): int(v) for k, v in data.get("moves", {}).items()}
        best = tuple(game.parse_square(m) for m in data["best"]) if "best" in data else None
        unsettled = {game.parse_square(k): float(v) for k, v in data.get("unsettled", {}).items()}
        return cls(int(data["value"]), moves, best, float(data.get("gave_up", 0.0)), float(data.get("seconds", 0.0)),
                   unsettled)  # fmt: skip


def key(pos: Position) -> str:
    """A position's key: its game's full name, board and side to move."""
    return f"{pos.game.name} {pos.board_string()} {pos.token}"


class Solutions:
    """The positions of a run, shared by its programs (thread-safe); ``budget``: the seconds
    the solver may spend settling one position."""

    def __init__(self, budget: float, entries: dict[str, Solution] | None = None):
        self.budget = budget
        self.entries: dict[str, Solution] = dict(entries or {})
        self._lock = threading.Lock()
        self._busy: dict[str, threading.Lock] = {}

    def __getstate__(self) -> dict[str, Any]:  # to a cluster worker: the entries, not the locks
        return {"budget": self.budget, "entries": dict(self.entries)}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["budget"], state["entries"])  # type: ignore[misc]

    def solve(self, solver: Any, pos: Position, stop: Callable[[], bool] = lambda: False,
              moves: bool = True) -> Solution:  # fmt: skip
        """``pos`` settled once for the whole run: its value, then (``moves``) every move's
        value and the optimal moves, within ``budget`` seconds in all (a position is solved
        by one thread at a time; the others wait for its entry). The moves a quick proof
        settles (Gomoku's threats) come first, and the full search spends what is left of the
        budget on the others, keeping each as it is settled. Raises Stopped when ``stop`` says
        so; an entry whose value or list the budget did not settle says so (``gave_up``)."""
        k = key(pos)
        with self._lock:
            busy = self._busy.setdefault(k, threading.Lock())
        with busy:
            entry = self.entries.get(k) or Solution()
            if entry.gave_up >= self.budget or (entry.value is not None and (not moves or entry.best is not None)):
                return entry
            started = time.monotonic()
            deadline = started + self.budget
            solver.should_stop = lambda: time.monotonic() > deadline or stop()
            try:
                if entry.value is None:
                    entry.value = pos.score(pos.game.scorings[0]) if pos.is_game_over() else solver.value(pos)
                if moves and not pos.is_game_over():
                    legal = pos.moves()
                    for m in legal:  # each kept as it is settled: a program's move may be one of them
                        if m not in entry.moves:
                            proven = -1 if entry.value == -1 else solver.proven_move_value(pos, m)  # lost: all lose
                            if proven is not None:
                                entry.moves[m] = proven
                    for m in legal:  # what the proofs left, by the full search
                        if m not in entry.moves:
                            entry.moves[m] = solver.move_value(pos, m)
                    entry.best = tuple(m for m, v in sorted(entry.moves.items()) if v == entry.value)
            except Stopped:
                if stop():
                    raise
                entry.gave_up = self.budget  # the value, or every move's: not within the budget
            finally:
                entry.seconds += time.monotonic() - started
            self.entries[k] = entry
            return entry

    def only(self, keys: set[str]) -> Solutions:
        """The entries of the positions ``keys`` name, alone."""
        with self._lock:
            return Solutions(self.budget, {k: v for k, v in self.entries.items() if k in keys})

    def record(self, pos: Position, move: int, value: int) -> None:
        """A move's value settled while judging (a position after a program's own genmove, say)."""
        with self._lock:
            entry = self.entries.setdefault(key(pos), Solution())
            entry.moves[move] = value
            entry.unsettled.pop(move, None)

    def give_up(self, pos: Position, move: int, seconds: float) -> None:
        """A move whose value a search of ``seconds`` did not settle while judging."""
        with self._lock:
            entry = self.entries.setdefault(key(pos), Solution())
            entry.unsettled[move] = max(seconds, entry.unsettled.get(move, 0.0))

    def unsettled(self, pos: Position, move: int, seconds: float) -> bool:
        """Whether a search of ``seconds`` already failed to settle ``move``'s value on ``pos``."""
        with self._lock:
            entry = self.entries.get(key(pos))
            return entry is not None and move not in entry.moves and entry.unsettled.get(move, 0.0) >= seconds

    # --- the file beside a regression file ---------------------------------------------

    @classmethod
    def load(cls, path: str | Path | None, budget: float) -> Solutions:
        """The solutions kept beside ``path`` (none when there is no such file, it is damaged,
        or another grader version wrote it)."""
        out = cls(budget)
        cache = cache_path(path) if path is not None else None
        if cache is None or not cache.is_file():
            return out
        try:
            data = json.loads(cache.read_text(encoding="utf-8"))
            if data.get("grader") != __version__:
                return out
            for k, v in data["positions"].items():
                out.entries[k] = Solution.from_json(v, get_game(k.split(" ")[0]))
        except (OSError, ValueError, KeyError, TypeError, AttributeError, GraderError):
            return cls(budget)
        return out

    def save(self, path: str | Path | None) -> Path | None:
        """Keep the settled positions beside ``path`` (written whole, then moved in place);
        the cache's path, or None where it cannot be written (a read-only folder)."""
        cache = cache_path(path) if path is not None else None
        if cache is None:
            return None
        with self._lock:
            entries = dict(self.entries)
        positions = {k: entry.to_json(get_game(k.split(" ")[0])) for k, entry in sorted(entries.items())}
        lines = [f" {json.dumps(k)}: {json.dumps(v)}" for k, v in positions.items()]  # a position a line
        head = json.dumps({"grader": __version__, "budget": self.budget})[:-1]
        text = head + ', "positions": {\n' + ",\n".join(lines) + "\n}}"
        try:
            part = cache.with_name(cache.name + ".part")
            part.write_text(text + "\n", encoding="utf-8")
            os.replace(part, cache)
        except OSError:
            return None
        return cache


def cache_path(path: str | Path) -> Path | None:
    """The cache beside the regression file ``path`` (None: ``path`` is no file, a check's own tests)."""
    p = Path(path)
    return p.with_name(p.name + SUFFIX) if p.is_file() else None


__all__ = ["SUFFIX", "Solution", "Solutions", "cache_path", "key"]
