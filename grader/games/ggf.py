"""GGF (Generic Game Format of the GGS game server) records of Othello games.

A record: ``(;GM[Othello]PC[place]DT[date]PB[black]PW[white]RE[result]TY[8]BO[board]moves;)``.
BO is the position the game starts from: '8', the 8 rows top to bottom of '-' (empty), '*'
(black) and 'O' (white), then the side to move. Moves are ``B[f5/eval/seconds]`` and
``W[...]`` (the evaluation an engine gave, from its own view; empty when it gave none); a pass is ``PA``. RE is the final disc
difference from Black's view (under the tournament's scoring rule), with ':t' when a side lost
on time and ':r' when it lost otherwise by forfeit (GGS: resigned). Only 8x8 Othello is written.
"""

from __future__ import annotations

import datetime
import re
from pathlib import Path
from typing import Iterable, Sequence

from ..errors import BoardFileError, GraderError
from .base import PASS, Game, Position

FILE = "games.ggf"
_PROPERTY = re.compile(r"([A-Z]{1,2})\[([^\]]*)\]")
_CELL = {"x": "*", "o": "O", ".": "-"}


def supports(game: Game) -> bool:
    """Whether GGF can hold this game's records (8x8 Othello)."""
    return game.name == "othello"


def board_text(pos: Position) -> str:
    """A BO value: '8 ---------- ... *'."""
    b = "".join(_CELL[c] for c in pos.board_string())
    rows = " ".join(b[i : i + 8] for i in range(0, 64, 8))
    return f"8 {rows} {'*' if pos.token == 'x' else 'O'}"


def parse_board(text: str, game: Game) -> Position:
    """The position of a BO value; GraderError if it is not an 8x8 Othello board."""
    fields = text.split()
    if len(fields) != 10 or fields[0] != "8" or fields[-1] not in ("*", "O"):
        raise GraderError(f"BO[{text}] is not an 8x8 board: '8', 8 rows of -*O, then * or O")
    board = "".join(fields[1:9]).replace("*", "x").replace("O", "o").replace("-", ".")
    return game.parse(board, "x" if fields[-1] == "*" else "o")


def _clean(text: str) -> str:
    return text.replace("[", "(").replace("]", ")")


def _date(created: str) -> str:
    """DT: year.month.day_hour:minute:second.zone, from an ISO time (local) in UTC."""
    try:
        when = datetime.datetime.fromisoformat(created).astimezone(datetime.timezone.utc)
    except ValueError:
        when = datetime.datetime.now(datetime.timezone.utc)
    return when.strftime("%Y.%m.%d_%H:%M:%S.UTC")


def result_text(record) -> str:
    """RE: '+12.000', '-64.000:t', '0.000'."""
    diff = record.margin
    text = f"{diff:+.3f}" if diff else "0.000"
    if record.forfeit:
        timed = any(e.get("timed_out") for e in record.events if e.get("engine") == record.forfeit)
        text += ":t" if timed else ":r"
    return text


def game_record(record, game: Game, date: str, place: str = "grader") -> str:
    """One game as a GGF record."""
    start, opening = game.opening_start(record.opening)
    pos = game.replay(opening, start)
    moves = game.parse_transcript(record.moves)[len(opening) :]  # the transcript holds the opening's moves
    parts = [f"(;GM[Othello]PC[{_clean(place)}]DT[{date}]PB[{_clean(record.black)}]PW[{_clean(record.white)}]"
             f"RE[{result_text(record)}]TY[8]BO[{board_text(pos)}]"]  # fmt: skip
    times, evals = record.move_times, getattr(record, "evals", [])
    for i, sq in enumerate(moves):
        if pos.must_pass():
            parts.append(f"{'B' if pos.token == 'x' else 'W'}[PA]")
            pos = pos.pass_turn()
        seconds = f"{times[i][0]:.2f}" if i < len(times) else ""
        value = f"{evals[i]:.2f}" if i < len(evals) and evals[i] is not None else ""
        parts.append(f"{'B' if pos.token == 'x' else 'W'}[{game.square_name(sq)}/{value}/{seconds}]")
        pos = pos.play(sq)
    parts.append(";)")
    return "".join(parts)


def game_in_progress(start: Position, plies: Sequence[int], game: Game, black: str = "", white: str = "") -> str:
    """A game so far as one GGF record (NBoard's ``set game``): BO the position it started
    from, then every ply from there, a pass as PA."""
    parts = [f"(;GM[Othello]PC[grader]PB[{_clean(black)}]PW[{_clean(white)}]RE[?]TY[8]BO[{board_text(start)}]"]
    pos = start
    for sq in plies:
        parts.append(f"{'B' if pos.token == 'x' else 'W'}[{'PA' if sq == PASS else game.square_name(sq)}]")
        pos = pos.pass_turn() if sq == PASS else pos.play(sq)
    parts.append(";)")
    return "".join(parts)


def write_games(records: Iterable, game: Game, created: str = "") -> str:
    """games.ggf: one record per line."""
    date = _date(created)
    return "".join(game_record(r, game, date) + "\n" for r in records)


def parse_records(text: str) -> list[tuple[int, dict[str, str], list[tuple[str, str]]]]:
    """Each record of a GGF text: (its line, its properties but moves, its moves as (colour, value))."""
    out = []
    for m in re.finditer(r"\(;(.*?);\)", text, re.S):
        props: dict[str, str] = {}
        moves: list[tuple[str, str]] = []
        for key, value in _PROPERTY.findall(m.group(1)):
            if key in ("B", "W"):
                moves.append((key, value))
            else:
                props.setdefault(key, value)
        out.append((text.count("\n", 0, m.start()) + 1, props, moves))
    return out


def replay(props: dict[str, str], moves: list[tuple[str, str]], game: Game) -> tuple[Position, list[int]]:
    """The position a record ends in and its moves (passes as -1); GraderError at a move that
    is not legal, or played by the wrong colour."""
    pos = parse_board(props.get("BO", ""), game)
    played = []
    for colour, value in moves:
        token = "x" if colour == "B" else "o"
        if token != pos.token:
            raise GraderError(f"{colour}[{value}] is played out of turn ({pos.token} to move)")
        square = value.split("/", 1)[0].strip()
        if square.upper() == "PA":
            if not pos.must_pass():
                raise GraderError(f"{colour}[{value}]: a pass, but {pos.token} has a move")
            pos = pos.pass_turn()
            played.append(-1)
            continue
        sq = game.parse_square(square.lower())
        if pos.must_pass():  # a pass left implied
            pos = pos.pass_turn()
            if token == pos.token:
                raise GraderError(f"{colour}[{value}] is played out of turn")
        if not pos.is_legal(sq):
            raise GraderError(f"{square} is not legal there ({pos.token} to move)")
        pos = pos.play(sq)
        played.append(sq)
    return pos, played


def read_openings(path: Path, lines: list[str], game: Game, plies: int | None = None) -> list[str]:
    """Openings from a GGF file: each record's start position and moves (the first ``plies``),
    as a move sequence when BO is the standard start, else as 'BOARD TOKEN' after the moves."""
    if not supports(game):
        raise BoardFileError(f"{path}: GGF records are Othello games; this tournament plays {game.name}")
    out = []
    for line, props, moves in parse_records("\n".join(lines)):
        try:
            if props.get("GM", "Othello").lower() != "othello":
                raise GraderError(f"GM[{props['GM']}] is not Othello")
            start = parse_board(props.get("BO", ""), game)
            _, played = replay({"BO": props["BO"]}, moves[:plies] if plies is not None else moves, game)
            pos = game.replay([m for m in played if m >= 0], start)
            if pos.is_game_over():
                raise GraderError("the game is over after it (give fewer plies)")
        except GraderError as e:
            raise BoardFileError(f"{path}:{line}: {e}") from None
        squares = [m for m in played if m >= 0]
        if start.board_string() == game.start().board_string() and start.token == game.start().token:
            out.append(game.transcript(squares))
        else:
            out.append(f"{pos.board_string()} {pos.token}")
    if not out:
        raise BoardFileError(f"openings file '{path}' holds no GGF records '(;GM[Othello]...;)'")
    return out
