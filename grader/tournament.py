"""Round-robin tournaments between engine scripts, with game records and resume.

An engine is run as 'SCRIPT BOARD TOKEN' for every move, through the same runner as
grading; its move is the last integer it printed (at the time limit: the last one printed
before the kill). Passes are applied by the harness. Every pair of engines plays game pairs
from the same opening with colours swapped; x is black and moves first.
"""

from __future__ import annotations

import datetime
import itertools
import json
import random
from dataclasses import asdict, dataclass, field
from dataclasses import replace as dataclass_replace
from pathlib import Path
from typing import Any, Callable, Sequence

from . import ratings
from .errors import BoardFileError, GraderError
from .executor import Executor, LocalExecutor, Worker, interrupt_reason
from .files import bundled, read_lines
from .games import DEFAULT, PASS, get_game
from .games import Game as GameRules
from .grading import Settings
from .isolation import ISOLATIONS
from .plans import new_seed
from .runfolder import RecordFolder
from .scripts import Script, run_script
from .stop import Stopped

RECORDS = "games.txt"
ON_ILLEGAL = ("forfeit", "random")
BUILTIN = "builtin:"  # 'builtin:greedy' names an engine shipped with the package


@dataclass(frozen=True)
class Engine:
    """An engine: its name in the standings and its script (read once, when the tournament starts)."""

    name: str
    path: Path

    def script(self) -> Script:
        return Script.from_path(self.path)

    @property
    def sha256(self) -> str:
        return self.script().digest


@dataclass(frozen=True)
class TournamentSettings:
    """How games are played. ``run`` holds the per-move limits, isolation and commands."""

    run: Settings = Settings()
    scoring: str | None = None  # None: the game's tournament rule
    on_illegal: str = "forfeit"
    adjudicate: int | None = None  # the solver finishes games with this many empties or fewer
    game: str = DEFAULT

    @property
    def rules(self) -> GameRules:
        return get_game(self.game)

    @property
    def rule(self) -> str:
        """The scoring rule games are scored by."""
        return self.rules.scoring(self.scoring or self.rules.tournament_scoring)


@dataclass
class GameRecord:
    """One game and how it ended. ``moves`` is the whole transcript, the opening included.
    Black plays x, which moves first; white plays o."""

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
    disc_diff: int = 0  # final score from black's view under the tournament's scoring (a forfeit: the game's largest)
    scripts: dict[str, str] = field(default_factory=dict)  # engine -> SHA-256 of the script that played
    host: str | None = None  # the cluster worker's machine that played it; None: this machine

    @property
    def black_score(self) -> float:
        return {"1-0": 1.0, "0-1": 0.0}.get(self.result, 0.5)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GameRecord:
        return cls(**data)

    def summary(self) -> dict[str, Any]:
        """The --json schema's game object."""
        keys = ("black", "white", "opening", "moves", "black_discs", "white_discs", "result", "reason", "host")
        return {k: getattr(self, k) for k in keys}

    def record_line(self) -> str:
        """A replayable line: the transcript, the final discs, the result and who played."""
        return (
            f"{self.moves or '-'} {self.black_discs}-{self.white_discs} {self.result} "
            f"; black {self.black}, white {self.white}, {self.reason}"
            + (f" ({self.forfeit} forfeits)" if self.forfeit else "")
        )


# --- openings ---------------------------------------------------------------------------


def read_openings(path: str | Path, game: GameRules) -> list[str]:
    """Openings from a file: one move sequence per line (like f5d6c3), or lines of a board file
    whose moves lead there are not needed: '#' comments and blank lines allowed."""
    p = Path(path)
    out = []
    for i, line in enumerate(read_lines(p, "openings file"), 1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        try:
            moves = game.parse_transcript(text)
            if game.replay(moves).is_game_over():
                raise GraderError("the game is over after it")
        except GraderError as e:
            raise BoardFileError(f"{p}:{i}: {e}") from None
        out.append(game.transcript(moves))
    if not out:
        raise BoardFileError(f"openings file '{p}' holds no openings: one move sequence per line")
    return out


def random_openings(game: GameRules, seed: int, plies: int, count: int) -> list[str]:
    """``count`` different random legal openings of ``plies`` moves (fewer if there are not enough)."""
    rng = random.Random(f"openings:{seed}:{plies}")
    seen: list[str] = []
    for _ in range(count * 50):
        moves = game.random_opening(rng, plies)
        text = None if moves is None else game.transcript(moves)
        if text is not None and text not in seen:
            seen.append(text)
            if len(seen) == count:
                break
    return seen


# --- one game --------------------------------------------------------------------------


def play_game(game: GameRecord, scripts: dict[str, Script], settings: TournamentSettings, worker: Worker) -> GameRecord:
    """Play ``game`` (from its opening) to the end with the engines' ``scripts`` (by name);
    returns it filled in. Raises Stopped when the run is stopped."""
    rules, rule, run = settings.rules, settings.rule, settings.run.run
    game.scripts = {game.black: scripts[game.black].digest, game.white: scripts[game.white].digest}
    game.host = worker.host
    names = {"x": game.black, "o": game.white}
    colour = {"x": "black", "o": "white"}
    moves = rules.parse_transcript(game.opening)
    pos = rules.replay(moves)
    rng = random.Random(game.id)
    game.reason = "normal"
    while not pos.is_game_over():
        if pos.must_pass():
            pos = pos.pass_turn()
            continue
        if settings.adjudicate and pos.empties <= settings.adjudicate:
            solver = worker.cached(("adjudicate", rules.name, rule),
                                   lambda: rules.solver(rule, should_stop=worker.stop))  # fmt: skip
            for sq in solver.line(pos):
                pos = pos.pass_turn() if sq == PASS else pos.play(sq)
                if sq >= 0:
                    moves.append(sq)
            game.reason = "adjudicated"
            break
        token = pos.token
        result, claim = run_script(scripts[names[token]], pos, run, worker)
        if result.interrupted:
            raise Stopped(worker.stop.reason)
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
    game.moves = rules.transcript(moves)
    game.black_discs, game.white_discs = rules.discs(pos)
    if game.forfeit:  # whatever the board shows, a forfeit counts the game's largest score for the winner
        game.result = "0-1" if game.forfeit == game.black else "1-0"
        margin = rules.forfeit_score(rule)
        game.disc_diff = -margin if game.forfeit == game.black else margin
    else:
        game.disc_diff = rules.first_player_score(pos, rule)
        game.result = "1-0" if game.disc_diff > 0 else "0-1" if game.disc_diff < 0 else "1/2-1/2"
    return game


@dataclass(frozen=True)
class GameTask:
    """One game's work on a worker: the engines' scripts travel with it."""

    game: GameRecord
    scripts: dict[str, Script]
    settings: TournamentSettings

    def __call__(self, worker: Worker) -> GameRecord:
        return play_game(GameRecord.from_json(self.game.to_json()), self.scripts, self.settings, worker)


# --- the tournament -------------------------------------------------------------------


def schedule(engines: list[str], openings: list[str], rounds: int) -> list[GameRecord]:
    """Every pair plays both colours from each round's opening."""
    games = []
    for r in range(rounds):
        opening = openings[r % len(openings)]
        for (i, a), (j, b) in itertools.combinations(enumerate(engines), 2):
            pair = f"r{r + 1}:{i}-{j}"
            games.append(GameRecord(f"{pair}:1", pair, r + 1, a, b, opening))
            games.append(GameRecord(f"{pair}:2", pair, r + 1, b, a, opening))
    return games


class TournamentFolder(RecordFolder):
    """tournament.json (engines, the schedule, settings) and games.jsonl (one line per finished game)."""

    META, LINES, KIND, WRITER = "tournament.json", "games.jsonl", "tournament", "a tournament"
    REQUIRED = ("engines", "schedule", "settings")

    @classmethod
    def create(cls, path: str | Path, engines: list[Engine], games: list[GameRecord], settings: TournamentSettings, seed: int | None) -> TournamentFolder:
        meta = {
            "seed": seed,
            "engines": {e.name: {"path": str(e.path.absolute()), "sha256": e.sha256} for e in engines},
            "schedule": [{"id": g.id, "pair": g.pair, "round": g.round, "black": g.black, "white": g.white,
                          "opening": g.opening} for g in games],  # fmt: skip
            "settings": {
                "game": settings.game, "scoring": settings.rule, "on_illegal": settings.on_illegal,
                "adjudicate": settings.adjudicate, "run": settings.run.to_json(),
            },  # fmt: skip
        }
        return cls._create(path, meta)

    def engines(self) -> list[Engine]:
        return [Engine(name, Path(info["path"])) for name, info in self.meta["engines"].items()]

    def games(self) -> list[GameRecord]:
        return [GameRecord(**g) for g in self.meta["schedule"]]

    def settings(self, jobs: int | None = None) -> TournamentSettings:
        s = self.meta["settings"]
        return TournamentSettings(Settings.from_json(s["run"], jobs), s["scoring"], s["on_illegal"], s["adjudicate"], s["game"])

    def append(self, game: GameRecord) -> None:
        self._append(game.to_json())

    def _check(self) -> None:
        """Build the engines, schedule and settings from tournament.json (raises if it was damaged)."""
        self.engines()
        self.games()
        settings = self.settings()
        if settings.on_illegal not in ON_ILLEGAL or settings.run.isolation not in ISOLATIONS:
            raise ValueError("bad settings")

    def finished(self, digests: dict[str, str]) -> dict[str, GameRecord]:
        """Games already played by the engines' current scripts (``digests`` by name), by id;
        a changed engine's games are played again."""
        out = {}
        for record in self._records():
            try:
                game = GameRecord.from_json(record)
            except TypeError:
                continue
            if all(game.scripts.get(name) == digests.get(name) for name in (game.black, game.white)):
                out[game.id] = game
        return out

    def write(self, name: str, text: str) -> None:
        try:
            (self.path / name).write_text(text, encoding="utf-8")
        except OSError as e:
            raise GraderError(f"cannot write {self.path / name}: {e.strerror}") from None


@dataclass
class TournamentResult:
    """A tournament's games (schedule order), standings, crosstable and where they are."""

    folder: TournamentFolder
    engines: list[Engine]
    games: list[GameRecord]
    scheduled: int
    standings: list[ratings.Standing]
    crosstable: dict[str, dict[str, float]]
    interrupted: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The --json schema."""
        return {
            "standings": [s.to_json() for s in self.standings],
            "crosstable": self.crosstable,
            "games": [g.summary() for g in self.games],
        }


def run_tournament(
    engines: Sequence[str | Path | Engine] = (),
    *,
    settings: TournamentSettings | None = None,
    rounds: int = 1,
    openings: list[str] | None = None,
    opening_plies: int = 4,
    seed: int | None = None,
    out: str | Path | None = None,
    resume: str | Path | None = None,
    jobs: int | None = None,
    private: Sequence[str | Path] = (),
    on_start: Callable[[TournamentFolder, TournamentSettings, int], None] | None = None,
    on_game: Callable[[GameRecord], None] | None = None,
    executor: Executor | None = None,
) -> TournamentResult:
    """A round-robin between ``engines`` (script paths, 'builtin:NAME', or Engines), played
    in a tournament folder that records each game as it ends.

    Openings: the given move sequences, else random legal openings of ``opening_plies`` moves
    from ``seed``, one per round. ``resume`` continues a folder with its own engines, schedule
    and settings (``jobs`` may change), playing only the games not recorded and those of an
    engine whose script changed. Before any game, the isolation is checked as for a class
    (``private``: more files the engines must not read). ``on_start(folder, settings, games played before)`` is called
    once the folder is ready, ``on_game`` with each game as it ends. Ctrl-C keeps the games that
    ended (``interrupted`` set).
    """
    if resume is not None:
        folder = TournamentFolder.open(resume)
        players, games, settings = folder.engines(), folder.games(), folder.settings(jobs)
        for e in players:
            if not e.path.is_file():
                raise GraderError(f"the script of engine '{e.name}' ({e.path}) is gone: restore it to resume")
        settings.run.sandbox_mechanism([folder.path, *(e.path for e in players), *map(Path, private)])
    else:
        settings = settings or TournamentSettings()
        players = engine_list(engines, settings.rules)
        if jobs:
            settings = dataclass_replace(settings, run=dataclass_replace(settings.run, jobs=jobs))
        seed = new_seed() if seed is None else seed
        openings = openings or random_openings(settings.rules, seed, opening_plies, rounds)
        games = schedule([e.name for e in players], openings, rounds)
        settings.run.sandbox_mechanism([*(e.path for e in players), *map(Path, private)])
        folder = TournamentFolder.create(out or default_folder(), players, games, settings, seed)
    scripts = {e.name: e.script() for e in players}
    for script in scripts.values():
        script.command(settings.run.run)  # an engine the grader cannot run stops us before any game
    settings.run.run.check()
    done = folder.finished({name: s.digest for name, s in scripts.items()}) if resume is not None else {}
    if on_start:
        on_start(folder, settings, len(done))
    interrupted = None
    with executor or LocalExecutor(settings.run.jobs) as ex:
        for g in games:
            if g.id not in done:
                ex.submit(g.id, GameTask(g, {g.black: scripts[g.black], g.white: scripts[g.white]}, settings))

        def take(game: GameRecord) -> None:
            done[game.id] = game
            folder.append(game)
            if on_game:
                on_game(game)

        try:
            for _, game in ex.results():
                take(game)
        except KeyboardInterrupt as e:
            interrupted = interrupt_reason(e)
            ex.stop.set(interrupted)
            for _, game in ex.drain():  # games that ended while we were stopping
                take(game)
        if interrupted is None and ex.stop.is_set():  # stopped by a caller
            interrupted = ex.stop.reason or "interrupted"
    played = [done[g.id] for g in games if g.id in done]
    names = [e.name for e in players]
    result = TournamentResult(
        folder, players, played, len(games), ratings.standings(played, names), ratings.crosstable(played, names), interrupted
    )
    folder.write(RECORDS, "".join(g.record_line() + "\n" for g in played))
    folder.write("results.json", json.dumps(result.to_json(), indent=1))
    return result


def default_folder() -> Path:
    return Path("runs") / (datetime.datetime.now().strftime("%Y-%m-%d_%H-%M-%S") + "-tournament")


def engine_list(paths: Sequence[str | Path | Engine], game: GameRules | None = None) -> list[Engine]:
    """Engines named by their file names (with the folder when two share a name);
    'builtin:NAME' is an example script shipped with the package for ``game`` (for Othello:
    random_mover, greedy, negamax)."""
    examples = bundled(*(game or get_game(DEFAULT)).examples.split("/"))
    engines = []
    for p in paths:
        if isinstance(p, Engine):
            engines.append(p)
            continue
        text = str(p)
        if text.startswith(BUILTIN):
            path = examples / (text[len(BUILTIN) :] + ".py")
            if not path.is_file():
                known = ", ".join(sorted(f.stem for f in examples.glob("*.py")))
                raise GraderError(f"no bundled engine '{text}': use one of {known} after '{BUILTIN}'")
        else:
            path = Path(p)
            if not path.is_file():
                raise GraderError(f"engine '{p}' not found: give the path of a script file (or builtin:NAME)")
        engines.append(Engine(path.stem, path))
    names = [e.name for e in engines]
    if len(set(names)) < len(names):
        engines = [Engine(f"{e.path.parent.name}/{e.path.stem}", e.path) for e in engines]
    if len({e.name for e in engines}) < len(engines):
        raise GraderError("the same engine is given twice: give each script once")
    if len(engines) < 2:
        raise GraderError("a tournament needs at least two engines")
    return engines
