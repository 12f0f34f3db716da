"""Test plans: the positions a grading run asks about, in test order; and board files."""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

from .errors import BoardError, BoardFileError
from .files import read_lines
from .games import DEFAULT, BoardEntry, Game, Position, get_game, hint_other_game


@dataclass(frozen=True)
class Plan:
    """The positions of a grading run, in test order (all of one game)."""

    positions: tuple[Position, ...]
    seed: int | None  # None for a plan read from a file
    source: str  # in words, for the user

    @property
    def game(self) -> Game:
        return self.positions[0].game


def new_seed() -> int:
    """A fresh seed for a plan nobody asked to reproduce (it is printed and recorded)."""
    return random.SystemRandom().randrange(1, 1_000_000)


def standard_plan(seed: int | None = None, game: str | Game = DEFAULT, name: str = "standard") -> Plan:
    """A game's named plan ('standard': the lab's 100 tests) from ``seed`` (None: a new one)."""
    g = get_game(game)
    seed = new_seed() if seed is None else seed
    positions = tuple(g.make_plan(name, seed))
    return Plan(positions, seed, f"{name} plan, seed {seed}" if name == "standard" else f"{name} plan")


def read_boards(path: str | Path, game: str | Game = DEFAULT) -> list[BoardEntry]:
    """Every position in a board file: one per line ('BOARD TOKEN', or another format the
    game reads), '#' comments and blank lines allowed."""
    g, p = get_game(game), Path(path)
    entries = []
    for i, line in enumerate(read_lines(p, "board file"), 1):
        text = "" if line.lstrip().startswith("#") else line.split("#", 1)[0].strip()
        if not text:
            continue
        try:
            entry = g.parse_board_line(text, f"{p}:{i}")
        except BoardError as e:
            raise BoardFileError(f"{p}:{i}: {e}{hint_other_game(text, g)}") from None
        if entry is not None:
            entries.append(entry)
    if not entries:
        raise BoardFileError(f"board file {str(p)!r} holds no boards: one 'BOARD TOKEN' per line")
    return entries


def load_plan(path: str | Path, game: str | Game = DEFAULT) -> Plan:
    """A plan of every position in a board file; each must have a legal move for its token."""
    entries = read_boards(path, game)
    for e in entries:
        if not e.position.moves():
            over = e.position.is_game_over()
            raise BoardFileError(
                f"{e.label}: {'the game is over on this board' if over else f'{e.position.token} has no legal move on this board'}; "
                "a test board needs a legal move for the side to move"
            )
    return Plan(tuple(e.position for e in entries), None, f"boards from {path}")
