"""Round-robin tournaments between engine scripts, with game records and resume.

An engine is run as 'SCRIPT BOARD TOKEN' for every move, through the same runner as
grading; its move is the last integer it printed (at the time limit: the last one printed
before the kill). Passes are applied by the harness. Every pair of engines plays game pairs
from the same opening with colours swapped; x is black and moves first.
"""

from __future__ import annotations

import datetime
import hashlib
import itertools
import random
import re
import threading
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

from . import runner
from .board import Position, Scoring, final_score, parse_square, square_name
from .errors import BoardFileError, GraderError
from .grading import Settings, command_for, run_test
from .runfolder import RecordFolder
from .solver import Solver

RECORDS = "games.txt"
ON_ILLEGAL = ("forfeit", "random")


@dataclass(frozen=True)
class Engine:
    name: str
    path: Path

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.path.read_bytes()).hexdigest()


@dataclass(frozen=True)
class TournamentSettings:
    """How games are played. ``run`` holds the per-move limits, isolation and commands."""

    run: Settings = Settings()
    scoring: Scoring = Scoring.WINNER_TAKES_EMPTIES
    on_illegal: str = "forfeit"
    adjudicate: int | None = None  # the solver finishes games with this many empties or fewer


@dataclass
class Game:
    """One game and how it ended. ``moves`` is the whole transcript, the opening included."""

    id: str
    pair: str  # the two games of a pair (same opening, colours swapped) share it
    round: int
    black: str
    white: str
    opening: str
    moves: str = ""
    black_discs: int = 0
    white_discs: int = 0
    result: str = ""  # 1-0, 0-1 or 1/2-1/2 (black's score first)
    reason: str = ""  # normal, forfeit or adjudicated
    forfeit: str | None = None  # the engine that lost by forfeit
    events: list[dict[str, Any]] = field(default_factory=list)  # illegal moves, crashes, silences
    timeouts: dict[str, int] = field(default_factory=lambda: {"black": 0, "white": 0})
    move_times: list[list[float]] = field(default_factory=list)  # per engine move: [wall, cpu] seconds
    disc_diff: int = 0  # final score from black's view under the tournament's scoring (a forfeit: 64)
    scripts: dict[str, str] = field(default_factory=dict)  # engine -> SHA-256 of the script that played

    @property
    def black_score(self) -> float:
        return {"1-0": 1.0, "0-1": 0.0}.get(self.result, 0.5)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Game:
        return cls(**data)

    def summary(self) -> dict[str, Any]:
        """The --json schema's game object."""
        keys = ("black", "white", "opening", "moves", "black_discs", "white_discs", "result", "reason")
        return {k: getattr(self, k) for k in keys}

    def record_line(self) -> str:
        """A replayable line: the transcript, the final discs, the result and who played."""
        return (
            f"{self.moves or '-'} {self.black_discs}-{self.white_discs} {self.result} "
            f"; black {self.black}, white {self.white}, {self.reason}"
            + (f" ({self.forfeit} forfeits)" if self.forfeit else "")
        )


# --- openings ---------------------------------------------------------------------------


def parse_transcript(text: str) -> list[int]:
    """'f5d6c3' -> squares; any case; passes are implied."""
    t = text.strip()
    if len(t) % 2 or not re.fullmatch(r"([a-hA-H][1-8])*", t):
        raise GraderError(f"bad move sequence {text!r}: write squares like f5d6c3, a1 to h8")
    return [parse_square(t[i : i + 2]) for i in range(0, len(t), 2)]


def transcript(moves: list[int]) -> str:
    return "".join(square_name(m) for m in moves if m >= 0)


def play_opening(moves: list[int]) -> Position:
    """The position after ``moves`` from the start, passes inserted; raises on an illegal move."""
    pos = Position.start()
    for sq in moves:
        if not pos.moves() and not pos.is_game_over():
            pos = pos.pass_turn()
        if not pos.is_legal(sq):
            raise GraderError(f"{square_name(sq)} is not legal there ({pos.token} to move)")
        pos = pos.play(sq)
    return pos


def read_openings(path: str | Path) -> list[str]:
    """Openings from a file: one move sequence per line, '#' comments and blank lines allowed."""
    p = Path(path)
    try:
        lines = p.read_text(encoding="utf-8").splitlines()
    except OSError as e:
        raise BoardFileError(f"cannot read openings file '{p}': {e.strerror}: give an existing file") from None
    except UnicodeDecodeError:
        raise BoardFileError(f"openings file '{p}' is not text: one move sequence like f5d6c3 per line") from None
    out = []
    for i, line in enumerate(lines, 1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        try:
            moves = parse_transcript(text)
            if play_opening(moves).is_game_over():
                raise GraderError("the game is over after it")
        except GraderError as e:
            raise BoardFileError(f"{p}:{i}: {e}") from None
        out.append(transcript(moves))
    if not out:
        raise BoardFileError(f"openings file '{p}' holds no openings: one move sequence like f5d6c3 per line")
    return out


def random_openings(seed: int, plies: int, count: int) -> list[str]:
    """``count`` different random legal openings of ``plies`` moves (fewer if there are not enough)."""
    rng = random.Random(f"openings:{seed}:{plies}")
    seen: list[str] = []
    for _ in range(count * 50):
        pos, moves = Position.start(), []
        while len(moves) < plies and not pos.is_game_over():
            if not pos.moves():
                pos = pos.pass_turn()
                continue
            sq = rng.choice(pos.moves())
            moves.append(sq)
            pos = pos.play(sq)
        text = transcript(moves)
        if len(moves) == plies and not pos.is_game_over() and text not in seen:
            seen.append(text)
            if len(seen) == count:
                break
    return seen


# --- one game --------------------------------------------------------------------------


class _LockedSolver:
    """One solver (and its table) shared by the games played at once."""

    def __init__(self, solver: Solver):
        self._solver, self._lock = solver, threading.Lock()

    def line(self, pos: Position) -> list[int]:
        with self._lock:
            return self._solver.line(pos)


def play_game(game: Game, engines: dict[str, Engine], settings: TournamentSettings, solver: Solver | _LockedSolver) -> Game:
    """Play ``game`` (from its opening) to the end; returns it filled in."""
    commands = {"x": command_for(engines[game.black].path, settings.run), "o": command_for(engines[game.white].path, settings.run)}
    game.scripts = {game.black: engines[game.black].sha256, game.white: engines[game.white].sha256}
    names = {"x": game.black, "o": game.white}
    colour = {"x": "black", "o": "white"}
    moves = parse_transcript(game.opening)
    pos = play_opening(moves)
    rng = random.Random(game.id)
    game.reason = "normal"
    while not pos.is_game_over():
        if not pos.moves():
            pos = pos.pass_turn()
            continue
        if settings.adjudicate and pos.empties <= settings.adjudicate:
            for sq in solver.line(pos):
                pos = pos.play(sq)
                if sq >= 0:
                    moves.append(sq)
            game.reason = "adjudicated"
            break
        token = pos.token
        result, claim = run_test(commands[token], pos, settings.run)
        if result.interrupted:
            raise KeyboardInterrupt
        game.move_times.append([round(result.wall_seconds, 4), round(result.cpu_seconds, 4)])
        if result.timed_out:
            game.timeouts[colour[token]] += 1
        move = claim.move
        problem = None
        if result.crashed:
            problem = f"the engine {result.describe()}"
        elif move is None:
            problem = "no move: the engine printed no integer"
        elif not pos.is_legal(move):
            problem = f"{move} is not a legal move"
        if problem:
            game.events.append({
                "engine": names[token], "token": token, "board": pos.board_string(), "move": move,
                "problem": problem, "output_tail": result.stdout_tail[-300:], "stderr_tail": result.stderr_tail[-300:],
            })  # fmt: skip
            if settings.on_illegal == "forfeit":
                game.forfeit = names[token]
                game.reason = "forfeit"
                break
            move = rng.choice(pos.moves())
        moves.append(move)
        pos = pos.play(move)
    game.moves = transcript(moves)
    game.black_discs, game.white_discs = pos.x_discs.bit_count(), pos.o_discs.bit_count()
    game.disc_diff = final_score(pos.x_discs, pos.o_discs, settings.scoring)
    if game.forfeit:  # whatever the board shows, a forfeit counts as 64-0 for the winner
        game.result = "0-1" if game.forfeit == game.black else "1-0"
        game.disc_diff = -64 if game.forfeit == game.black else 64
    else:
        game.result = "1-0" if game.disc_diff > 0 else "0-1" if game.disc_diff < 0 else "1/2-1/2"
    return game


# --- the tournament -------------------------------------------------------------------


def schedule(engines: list[str], openings: list[str], rounds: int) -> list[Game]:
    """Every pair plays both colours from each round's opening."""
    games = []
    for r in range(rounds):
        opening = openings[r % len(openings)]
        for (i, a), (j, b) in itertools.combinations(enumerate(engines), 2):
            pair = f"r{r + 1}:{i}-{j}"
            games.append(Game(f"{pair}:1", pair, r + 1, a, b, opening))
            games.append(Game(f"{pair}:2", pair, r + 1, b, a, opening))
    return games


class TournamentFolder(RecordFolder):
    """tournament.json (engines, the schedule, settings) and games.jsonl (one line per finished game)."""

    META, LINES, KIND, WRITER = "tournament.json", "games.jsonl", "tournament", "a tournament"
    REQUIRED = ("engines", "schedule", "settings")

    @classmethod
    def create(cls, path: str | Path, engines: list[Engine], games: list[Game], settings: TournamentSettings, seed: int | None) -> TournamentFolder:
        meta = {
            "seed": seed,
            "engines": {e.name: {"path": str(e.path.resolve()), "sha256": e.sha256} for e in engines},
            "schedule": [{"id": g.id, "pair": g.pair, "round": g.round, "black": g.black, "white": g.white,
                          "opening": g.opening} for g in games],  # fmt: skip
            "settings": {
                "scoring": settings.scoring.value, "on_illegal": settings.on_illegal, "adjudicate": settings.adjudicate,
                "move_limits": asdict(settings.run.limits), "isolation": settings.run.isolation,
            },  # fmt: skip
        }
        return cls._create(path, meta)

    def engines(self) -> list[Engine]:
        return [Engine(name, Path(info["path"])) for name, info in self.meta["engines"].items()]

    def games(self) -> list[Game]:
        return [Game(**g) for g in self.meta["schedule"]]

    def append(self, game: Game) -> None:
        self._append(game.to_json())

    def _check(self) -> None:
        """Build the engines, schedule and settings from tournament.json (raises if it was damaged)."""
        self.engines()
        self.games()
        s = self.meta["settings"]
        Scoring(s["scoring"])
        runner.Limits(**s["move_limits"])
        if s["on_illegal"] not in ON_ILLEGAL or s["isolation"] not in runner.ISOLATIONS:
            raise ValueError("bad settings")

    def finished(self) -> dict[str, Game]:
        """Games already played by the engines' current scripts, by id (a changed script's are played again)."""
        current = {}
        for e in self.engines():
            if not e.path.is_file():
                raise GraderError(f"the script of engine '{e.name}' ({e.path}) is gone: restore it to resume")
            current[e.name] = e.sha256
        out = {}
        for record in self._records():
            try:
                game = Game.from_json(record)
            except TypeError:
                continue
            if all(game.scripts.get(name) == current.get(name) for name in (game.black, game.white)):
                out[game.id] = game
        return out

    def write(self, name: str, text: str) -> None:
        try:
            (self.path / name).write_text(text, encoding="utf-8")
        except OSError as e:
            raise GraderError(f"cannot write {self.path / name}: {e.strerror}") from None

    def write_records(self, games: list[Game]) -> None:
        self.write(RECORDS, "".join(g.record_line() + "\n" for g in games))


def run_tournament(
    engines: list[Engine],
    games: list[Game],
    settings: TournamentSettings,
    done: dict[str, Game] | None = None,
    on_game: Callable[[Game], None] | None = None,
) -> tuple[list[Game], bool]:
    """Play every game of ``games`` not in ``done``, ``settings.run.jobs`` at a time.

    Returns the finished games in schedule order, and whether Ctrl-C stopped it.
    """
    by_name = {e.name: e for e in engines}
    for e in engines:
        command_for(e.path, settings.run)  # a missing or unrunnable engine stops us before any game
    done = dict(done or {})
    solver = _LockedSolver(Solver(settings.scoring))
    pool = ThreadPoolExecutor(max_workers=max(1, settings.run.jobs))
    futures: dict[Future, Game] = {
        pool.submit(play_game, g, by_name, settings, solver): g for g in games if g.id not in done
    }
    interrupted = False
    pending = set(futures)
    collected: set[Future] = set()

    def collect(finished: set[Future]) -> None:
        for fut in finished - collected:
            collected.add(fut)
            if fut.cancelled() or fut.exception() is not None:
                continue  # not played, or stopped by Ctrl-C
            game = fut.result()
            done[game.id] = game
            if on_game:
                on_game(game)

    try:
        while pending:
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            if any(isinstance(f.exception(), KeyboardInterrupt) for f in finished):
                raise KeyboardInterrupt
            collect(finished)
    except KeyboardInterrupt:
        interrupted = True
        runner.kill_all()
    finally:
        for f in pending:
            f.cancel()
        pool.shutdown(wait=True)
    if interrupted:
        collect({f for f in futures if f.done()})  # games that ended while we were stopping
    return [done[g.id] for g in games if g.id in done], interrupted


def default_folder() -> Path:
    return Path("runs") / (datetime.datetime.now().strftime("%Y-%m-%d_%H-%M-%S") + "-tournament")


def engine_list(paths: list[str]) -> list[Engine]:
    """Engines named by their file names (with the folder when two share a name)."""
    engines = []
    for p in paths:
        path = Path(p)
        if not path.is_file():
            raise GraderError(f"engine '{p}' not found: give the path of a script file")
        engines.append(Engine(path.stem, path))
    names = [e.name for e in engines]
    if len(set(names)) < len(names):
        engines = [Engine(f"{e.path.parent.name}/{e.path.stem}", e.path) for e in engines]
    if len({e.name for e in engines}) < len(engines):
        raise GraderError("the same engine is given twice: give each script once")
    if len(engines) < 2:
        raise GraderError("a tournament needs at least two engines")
    return engines

