"""Openings: read from a file (move sequences, positions, GGF), or drawn at random from a seed."""

from __future__ import annotations

from pathlib import Path

from ..errors import BoardFileError, GraderError
from ..files import read_lines
from ..games import Game as GameRules
from ..games import Position, ggf
from ..seeding import rng

OPENING_PLIES = 4  # moves of a random opening, unless asked otherwise


def read_openings(path: str | Path, game: GameRules, plies: int | None = None) -> list[str]:
    """Openings from a file: one move sequence per line (like f5d6c3), or a position per line
    in any board format of the game (Othello: 'BOARD TOKEN', OBF, FFO), '#' comments and blank
    lines allowed; or a GGF file (records '(;GM[Othello]...;)': each record's moves from its BO
    position). ``plies``: keep only the first moves of each sequence or record. Raises
    BoardFileError naming the line."""

    p = Path(path)
    lines = read_lines(p, "openings file")
    if any("(;" in line for line in lines):
        return ggf.read_openings(p, lines, game, plies)
    out = []
    for i, line in enumerate(lines, 1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        is_board = " " in text or "|" in text or ";" in text
        try:
            if is_board:
                entry = game.parse_board_line(text, f"{p}:{i}")
                if entry is None:
                    continue
                start, moves = entry.position, []
            else:
                start, moves = game.start(), game.parse_transcript(text)[:plies]
            check_opening(game, start, moves)
        except GraderError as e:
            raise BoardFileError(f"{p}:{i}: {e}") from None
        out.append(f"{start.board_string()} {start.token}" if is_board else game.transcript(moves))
    if not out:
        raise BoardFileError(f"openings file '{p}' holds no openings: one move sequence per line")
    return out


def check_opening(game: GameRules, start: Position, moves: list[int]) -> Position:
    """The position after the opening; GraderError if a move is illegal or the game is over."""
    pos = game.replay(moves, start)
    if pos.is_game_over():
        raise GraderError("the game is over after it")
    return pos


def random_openings(game: GameRules, seed: int, plies: int, count: int) -> list[str]:
    """``count`` different random legal openings of ``plies`` moves (fewer if there are not
    enough: the search ends after MISSES tries in a row that find no new one)."""
    rand = rng("openings", seed, plies)
    seen: dict[str, None] = {}  # in the order found
    misses = 0
    while len(seen) < count and misses < MISSES:
        moves = game.random_opening(rand, plies)
        text = None if moves is None else game.transcript(moves)
        if text is None or text in seen:
            misses += 1
        else:
            seen[text], misses = None, 0
    return list(seen)


MISSES = 2000  # random_openings: tries in a row without a new opening, after which it takes it there are no more
