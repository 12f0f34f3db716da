"""Tournaments between engines (round-robin, gauntlet, Swiss, SPRT), with clocks, game
records and resume.

A script engine is run as 'SCRIPT BOARD TOKEN' for every move, through the same runner as
grading; its move is the last integer it printed (at a per-move time limit: the last one
printed before the kill). A protocol engine (NBoard) runs for the whole game in the same
isolation (``grader.engines.players``). Passes are applied by the harness. Every pair of
engines plays game pairs from the same opening with colours swapped; x is black and moves first.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import shlex
import shutil
import warnings
from dataclasses import asdict, dataclass, field
from dataclasses import replace as dataclass_replace
from pathlib import Path
from typing import Any, Callable, Sequence

from .. import settings as layers
from ..config import Config
from ..engines import available_protocols, get_protocol
from ..engines.isolation import ISOLATIONS
from ..engines.players import PYTHON, EnginePool, Player, ProtocolEngine, Turn, player_for
from ..engines.scripts import RunSettings, Script
from ..errors import BoardFileError, GraderError, GraderWarning
from ..execution.executor import Executor, LocalExecutor, Worker, interrupt_reason, using
from ..files import bundled, read_lines
from ..games import DEFAULT, PASS, Position, get_game, ggf, psq
from ..games import Game as GameRules
from ..runs.folders import RecordFolder
from ..runs.seeds import new_seed
from ..seeding import rng
from ..stop import Stop, Stopped
from . import ratings
from .formats import Format, Planner, SprtPlanner, SprtSettings, SwissPlanner
from .sprt import SprtState
from .swiss import SwissResult

RECORDS = "games.txt"
ON_ILLEGAL = ("forfeit", "random")
BUILTIN = "builtin:"  # 'builtin:greedy' names an engine shipped with the package
NBOARD = "nboard:"  # 'nboard:./edax -nboard' names a program speaking the NBoard protocol


@dataclass(frozen=True)
class Engine:
    """An engine: its name in the standings, and its script (read once, when the tournament
    starts) or the protocol engine it is (``protocol``)."""

    name: str
    path: Path | None = None
    protocol: ProtocolEngine | None = None

    def spec(self) -> Script | ProtocolEngine:
        """What a game needs to play it."""
        if self.protocol is not None:
            return self.protocol
        assert self.path is not None
        return Script.from_path(self.path)

    @property
    def sha256(self) -> str:
        return self.spec().digest

    @property
    def paths(self) -> list[Path]:
        """Its files and folders (for the isolation's check that no private file is among them)."""
        if self.protocol is None:
            return [Path(self.path or "")]
        return [Path(self.protocol.folder)] if self.protocol.folder else []

    def to_json(self) -> dict[str, Any]:
        if self.protocol is not None:
            p = self.protocol
            return {
                "protocol": p.protocol,
                "command": p.origin,
                "workdir": p.workdir,
                "depth": p.depth,
                "sha256": p.digest,
            }
        return {"path": str(Path(self.path or "").absolute()), "sha256": self.sha256}

    @classmethod
    def from_json(cls, name: str, info: dict[str, Any]) -> Engine:
        if "protocol" in info:  # read again: a changed engine gets a new digest, and its games are played again
            return cls(
                name, protocol=protocol_engine(info["command"], info["protocol"], info["workdir"], info["depth"])
            )
        return cls(name, Path(info["path"]))


OPENING_PLIES = 4  # moves of a random opening, unless asked otherwise
ADJUDICATION_SECONDS = 1.0  # the longest a solve for adjudication should take, estimated


def adjudication_cap(game: GameRules, empties: int, backend: str = "auto") -> int:
    """The most empties, up to ``empties``, that ``backend`` solves in about a second (by the
    cost estimate of grader.games.cost): adjudication beyond it would stall each game."""
    from ..games.cost import deepest_within

    fits = deepest_within(game, ADJUDICATION_SECONDS, game.backend(backend))
    return empties if fits is None else max(1, min(empties, fits))


def _capped(settings: TournamentSettings) -> TournamentSettings:
    """``settings`` with adjudication at most as deep as the solver goes in about a second
    (a warning says so): a deeper solve would stall every game."""
    if not settings.adjudicate:
        return settings
    cap = adjudication_cap(settings.rules, settings.adjudicate, settings.backend)
    if cap >= settings.adjudicate:
        return settings
    warnings.warn(f"adjudicating at {cap} empties, not {settings.adjudicate}: the "
                  f"{settings.rules.backend(settings.backend)} solver solves about {cap} empties in a second "
                  "(a deeper solve would stall every game)", GraderWarning, stacklevel=3)  # fmt: skip
    return dataclass_replace(settings, adjudicate=cap)


@dataclass(frozen=True)
class TournamentSettings(RunSettings):
    """How games are played: the shared ``RunSettings`` (``limits`` per move, isolation,
    python, commands, jobs, ``backend`` of the adjudicating solver) and a tournament's own fields.

    - ``scoring``: the rule games are scored by; None: the game's tournament rule.
    - ``on_illegal``: forfeit (the game is lost) | random (a random legal move is played instead).
    - ``adjudicate``: the solver finishes games with this many empties or fewer; None: never.
    - ``game``: the game's name (othello, tictactoe, ...), or a variant's spec (gomoku:size=9).
    - ``tc``: a game clock (seconds, increment per move), as cutechess's ``tc=60+0.5``; None:
      ``limits.wall_seconds`` per move. A flag falls when an engine's clock runs out.
    - ``time_margin``: seconds an engine may overstep its clock (process noise) before its flag falls.
    - ``restart``: start a protocol engine afresh for every game; by default a process that
      played a game cleanly plays its engine's next game on this machine (cutechess's
      ``restart=off``), and every process is stopped when the tournament ends.
    """

    scoring: str | None = None
    on_illegal: str = "forfeit"
    adjudicate: int | None = None
    game: str = DEFAULT
    tc: tuple[float, float] | None = None
    time_margin: float = 0.1
    restart: bool = False

    def __post_init__(self) -> None:
        if self.tc is not None:
            object.__setattr__(self, "tc", tuple(self.tc))  # from JSON: a list

    @classmethod
    def resolve(cls, config: Config, game: GameRules, time_limit: float | None = None, scoring: str | None = None,
                adjudicate: int | None = None, **options: Any) -> TournamentSettings:  # fmt: skip
        """A tournament's settings as every command takes them: the options given win, then
        config.yaml (tournament: move_seconds, scoring for its own game, on_illegal, tc,
        time_margin), then the game's tournament rule. ``options`` are other fields (jobs,
        backend, tc, ...)."""
        given = layers.given(time_limit=time_limit, scoring=scoring, **options)
        found = layers.resolve(cls, given, layers.tournament_layer(config, game))
        rule = found.scoring or game.tournament_scoring
        return dataclasses.replace(found, scoring=game.scoring(rule), adjudicate=adjudicate, game=game.name)

    def to_json(self) -> dict[str, Any]:
        out = super().to_json()
        out["scoring"] = self.rule
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any], jobs: int | None = None) -> TournamentSettings:
        """Also reads a tournament.json written before the settings were one object (the run's
        settings under "run")."""
        if "run" in data:
            data = dict(data["run"], **{k: v for k, v in data.items() if k not in ("run", "stop_on_error")})
        return super().from_json(data, jobs)

    @property
    def rules(self) -> GameRules:
        return get_game(self.game)

    @property
    def rule(self) -> str:
        """The scoring rule games are scored by."""
        return self.rules.scoring(self.scoring or self.rules.tournament_scoring)


_OLD_NAMES = {"black_discs": "black_pieces", "white_discs": "white_pieces", "disc_diff": "margin"}


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
    black_pieces: int = 0
    white_pieces: int = 0
    result: str = ""  # 1-0, 0-1 or 1/2-1/2 (black's score first)
    reason: str = ""  # normal, forfeit or adjudicated
    forfeit: str | None = None  # the engine that lost by forfeit
    events: list[dict[str, Any]] = field(default_factory=list)  # illegal moves, crashes, silences
    timeouts: dict[str, int] = field(default_factory=lambda: {"black": 0, "white": 0})
    move_times: list[list[float | None]] = field(default_factory=list)  # per engine move: [wall, cpu] seconds
    evals: list[float | None] = field(default_factory=list)  # per engine move: its evaluation (own view), if given
    clocks: list[float] = field(default_factory=list)  # per engine move with a game clock: seconds left after it
    analysis: list[dict[str, Any]] = field(default_factory=list)  # engine moves' other lines: {ply, engine, lines}
    margin: int = 0  # final score from black's view under the tournament's scoring (a forfeit: the game's largest)
    scripts: dict[str, str] = field(default_factory=dict)  # engine -> SHA-256 of the script that played
    host: str | None = None  # the cluster worker's machine that played it; None: this machine

    @property
    def black_score(self) -> float:
        return {"1-0": 1.0, "0-1": 0.0}.get(self.result, 0.5)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GameRecord:
        """A record from games.jsonl (also one written before pieces and margin had these names)."""
        data = {_OLD_NAMES.get(k, k): v for k, v in data.items()}
        return cls(**data)

    def summary(self) -> dict[str, Any]:
        """The --json schema's game object."""
        keys = ("black", "white", "opening", "moves", "black_pieces", "white_pieces", "result", "reason", "forfeit",
                "margin", "host")  # fmt: skip
        return {k: getattr(self, k) for k in keys}

    def record_line(self) -> str:
        """A replayable line: the transcript, the final pieces, the result and who played."""
        return (
            f"{self.moves or '-'} {self.black_pieces}-{self.white_pieces} {self.result} "
            f"; black {self.black}, white {self.white}, {self.reason}"
            + (f" ({self.forfeit} forfeits)" if self.forfeit else "")
        )


# --- openings ---------------------------------------------------------------------------


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


# --- one game --------------------------------------------------------------------------


def play_game(game: GameRecord, engines: dict[str, Script | ProtocolEngine], settings: TournamentSettings,
              worker: Worker, pool: EnginePool | None = None) -> GameRecord:  # fmt: skip
    """Play ``game`` (from its opening) to the end with the ``engines`` (by name); returns it
    filled in. Protocol engines come from ``pool`` when one waits there and go back to it
    after a clean game; any other is stopped at the end, whatever happens. Raises Stopped
    when the run is stopped."""
    rules = settings.rules
    game.scripts = {game.black: engines[game.black].digest, game.white: engines[game.white].digest}
    game.host = worker.host
    names = dict(zip(rules.sides, (game.black, game.white)))  # the first player is black
    players = {token: player_for(engines[names[token]], settings, worker, rules, pool) for token in rules.sides}
    final, clean = None, False
    try:
        for token, player in players.items():
            failed = player.begin()
            if failed:
                if failed.interrupted or worker.stop.is_set():
                    raise Stopped(worker.stop.reason)
                _event(game, names[token], token, rules.start(), failed)
                game.forfeit, game.reason = names[token], "forfeit"
                break
        else:
            final = _play_moves(game, players, names, settings, worker)
        clean = True
    finally:
        for player in players.values():
            player.end(clean)
    return _score(game, settings, final)


def _play_moves(game: GameRecord, players: dict[str, Player], names: dict[str, str], settings: TournamentSettings,
                worker: Worker) -> Position:  # fmt: skip
    """The moves of a game (each engine's turn, on its clock), adjudication and forfeits;
    returns the last position."""
    rules, rule, tc = settings.rules, settings.rule, settings.tc
    colour = dict(zip(rules.sides, ("black", "white")))
    start, moves = rules.opening_start(game.opening)
    pos = rules.replay(moves, start)
    plies = _plies(rules, start, moves)  # passes included, for protocol engines
    clock = dict.fromkeys(rules.sides, tc[0]) if tc else {}
    rand = rng(game.id)
    game.reason = "normal"
    while not pos.is_game_over():
        if pos.must_pass():
            pos = pos.pass_turn()
            plies.append(PASS)
            continue
        if settings.adjudicate and pos.empties <= settings.adjudicate:
            solver = worker.cached(("adjudicate", rules.name, rule),
                                   lambda: rules.solver(rule, should_stop=lambda: worker.stop.is_set(), backend=settings.backend))  # fmt: skip
            for sq in solver.line(pos):
                pos = pos.pass_turn() if sq == PASS else pos.play(sq)
                if sq >= 0:
                    moves.append(sq)
            game.reason = "adjudicated"
            break
        token = pos.token
        seconds = clock[token] + settings.time_margin if tc else settings.limits.wall_seconds
        turn = players[token].turn(pos, start, plies, seconds)
        if turn.interrupted or worker.stop.is_set():
            raise Stopped(worker.stop.reason)
        game.move_times.append([round(turn.wall, 4), None if turn.cpu is None else round(turn.cpu, 4)])
        game.evals.append(turn.eval)
        if turn.lines:
            game.analysis.append({"ply": len(plies), "engine": names[token], "lines": turn.lines})
        if turn.timed_out:
            game.timeouts[colour[token]] += 1
        if tc:
            clock[token] -= turn.wall
            if turn.timed_out or clock[token] < -settings.time_margin:
                turn.problem = (
                    f"lost on time: its clock ran out ({turn.wall:.2f} s for this move, {seconds:.2f} s left)"
                )
                turn.timed_out = turn.fatal = True
            clock[token] = max(clock[token], 0.0) + tc[1]
            game.clocks.append(round(clock[token], 3))
        move = turn.move
        if turn.problem is None and move is None:
            turn.problem = "no move: the engine printed no integer"
        elif turn.problem is None and move is not None and not (move >= 0 and pos.is_legal(move)):
            turn.problem = f"{'a pass' if move == PASS else rules.move_text(move)} is not a legal move"
        if turn.problem:
            _event(game, names[token], token, pos, turn)
            if settings.on_illegal == "forfeit" or turn.fatal:
                game.forfeit, game.reason = names[token], "forfeit"
                break
            move = rand.choice(pos.moves())  # 'random': a random legal move instead
        assert move is not None  # no problem: a legal move
        moves.append(move)
        plies.append(move)
        pos = pos.play(move)
    game.moves = rules.transcript(moves)
    game.black_pieces, game.white_pieces = rules.pieces(pos)
    return pos


def _plies(rules: GameRules, start: Position, moves: list[int]) -> list[int]:
    """``moves`` from ``start`` with the passes between them."""
    pos, plies = start, []
    for m in moves:
        while pos.must_pass():
            pos = pos.pass_turn()
            plies.append(PASS)
        pos = pos.play(m)
        plies.append(m)
    return plies


def _event(game: GameRecord, engine: str, token: str, pos: Position, turn: Turn) -> None:
    """Record what went wrong with an engine's turn."""
    game.events.append({
        "engine": engine, "token": token, "board": pos.board_string(), "move": turn.move, "problem": turn.problem,
        "timed_out": turn.timed_out, "output_tail": turn.output_tail[-300:], "stderr_tail": turn.stderr_tail[-300:],
    })  # fmt: skip


def _score(game: GameRecord, settings: TournamentSettings, final: Position | None) -> GameRecord:
    """The result: a forfeit counts the game's largest score for the winner, whatever the board shows."""
    rules, rule = settings.rules, settings.rule
    if game.forfeit or final is None:
        game.result = "0-1" if game.forfeit == game.black else "1-0"
        margin = rules.forfeit_score(rule)
        game.margin = -margin if game.forfeit == game.black else margin
    else:
        game.margin = rules.first_player_score(final, rule)
        game.result = "1-0" if game.margin > 0 else "0-1" if game.margin < 0 else "1/2-1/2"
    return game


@dataclass(frozen=True)
class GameTask:
    """One game's work on a worker: the engines' scripts (or protocol commands) travel with it."""

    game: GameRecord
    engines: dict[str, Script | ProtocolEngine]
    settings: TournamentSettings
    pool: str | None = None  # the tournament's pool of protocol engines between games (``pools``)

    def __call__(self, worker: Worker) -> GameRecord:
        pool = _POOLS.get(self.pool) if self.pool else None
        return play_game(GameRecord.from_json(self.game.to_json()), self.engines, self.settings, worker, pool)


_POOLS: dict[str, EnginePool] = {}  # the pools of the tournaments running in this process, by key


# --- the tournament -------------------------------------------------------------------


def schedule(engines: list[str], openings: list[str], rounds: int) -> list[GameRecord]:
    """A round-robin: every pair plays both colours from each round's opening."""
    from .formats import fixed_schedule

    return fixed_schedule(Format("round-robin", rounds), engines, openings, GameRecord)


class TournamentFolder(RecordFolder):
    """tournament.json (engines, the schedule, settings) and games.jsonl (one line per finished game)."""

    META, LINES, KIND, WRITER = "tournament.json", "games.jsonl", "tournament", "a tournament"
    REQUIRED = ("engines", "schedule", "settings")

    @classmethod
    def create(cls, path: str | Path, engines: list[Engine], games: list[GameRecord], settings: TournamentSettings,
               seed: int | None, fmt: Format | None = None, openings: list[str] | None = None) -> TournamentFolder:  # fmt: skip
        meta = {
            "seed": seed,
            "format": (fmt or Format()).to_json(),
            "openings": openings or sorted({g.opening for g in games}),
            "engines": {e.name: e.to_json() for e in engines},
            "schedule": [
                {"id": g.id, "pair": g.pair, "round": g.round, "black": g.black, "white": g.white, "opening": g.opening}
                for g in games
            ],  # fmt: skip
            "settings": settings.to_json(),
        }
        return cls._create(path, meta)

    def engines(self) -> list[Engine]:
        return [Engine.from_json(name, info) for name, info in self.meta["engines"].items()]

    def games(self) -> list[GameRecord]:
        """The fixed schedule (round-robin, gauntlet); Swiss and SPRT games are planned as they go."""
        return [GameRecord(**g) for g in self.meta["schedule"]]

    def format(self) -> Format:
        games = self.games()
        return Format.from_json(self.meta.get("format"), max((g.round for g in games), default=1))

    def openings(self) -> list[str]:
        if "openings" in self.meta:
            return list(self.meta["openings"])
        return list(dict.fromkeys(g.opening for g in self.games()))  # a folder written before formats

    def settings(self, jobs: int | None = None) -> TournamentSettings:
        return TournamentSettings.from_json(self.meta["settings"], jobs)

    def append(self, game: GameRecord) -> None:
        self._append(game.to_json())

    def _check(self) -> None:
        """Build the engines, schedule and settings from tournament.json (raises if it was damaged)."""
        self.engines()
        self.games()
        self.format()
        settings = self.settings()
        if settings.on_illegal not in ON_ILLEGAL or settings.isolation not in ISOLATIONS:
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
            (self.path / name).parent.mkdir(exist_ok=True)
            (self.path / name).write_text(text, encoding="utf-8")
        except OSError as e:
            raise GraderError(f"cannot write {self.path / name}: {e.strerror}") from None


@dataclass
class TournamentResult:
    """A tournament's games (in the order planned), standings, crosstable and where they are.
    ``swiss``: the Swiss ranking (points with byes, Buchholz, Sonneborn-Berger) and rounds; ``sprt``:
    the test's state; ``stopped_early``: why a format ended before its planned games (a Swiss
    round that cannot be paired)."""

    folder: TournamentFolder
    engines: list[Engine]
    games: list[GameRecord]
    scheduled: int
    standings: list[ratings.Standing]
    crosstable: dict[str, dict[str, float | None]]  # None: the pair never met
    interrupted: str | None = None
    format: Format = field(default_factory=Format)
    swiss: SwissResult | None = None
    sprt: SprtState | None = None
    stopped_early: str | None = None
    files: list[str] = field(default_factory=list)  # what the folder holds besides the records

    def to_json(self) -> dict[str, Any]:
        """The --json schema."""
        out: dict[str, Any] = {
            "format": self.format.kind,
            "standings": [s.to_json() for s in self.standings],
            "crosstable": self.crosstable,
            "games": [g.summary() for g in self.games],
        }
        if self.swiss is not None:
            out.update(self.swiss.to_json())
        if self.sprt is not None:
            out["sprt"] = self.sprt.to_json()
        if self.stopped_early:
            out["stopped_early"] = self.stopped_early
        return out


def run_tournament(
    engines: Sequence[str | Path | Engine] = (),
    *,
    settings: TournamentSettings | None = None,
    rounds: int = 1,
    format: str | Format = "round-robin",
    opponents: Sequence[str | Path | Engine] = (),
    sprt: SprtSettings | None = None,
    openings: list[str] | None = None,
    opening_plies: int | None = None,
    seed: int | None = None,
    out: str | Path | None = None,
    resume: str | Path | None = None,
    jobs: int | None = None,
    private: Sequence[str | Path] = (),
    on_start: Callable[[TournamentFolder, TournamentSettings, int], None] | None = None,
    on_game: Callable[[GameRecord], None] | None = None,
    executor: Executor | None = None,
    stop: Stop | None = None,
) -> TournamentResult:
    """A tournament between ``engines`` (script paths, 'builtin:NAME', or Engines), played
    in a tournament folder that records each game as it ends. Without ``settings``, those of
    the command with no options and no config.yaml (``TournamentSettings.resolve(Config(), ...)``:
    5 s a move, Othello).

    ``format``: 'round-robin' (every pair, ``rounds`` openings), 'gauntlet' (each engine
    against each of ``opponents`` only), 'swiss' (``rounds`` Swiss rounds) or 'sprt' (two
    engines until the ``sprt`` test decides or its game limit). Openings: the given move
    sequences, else random legal openings of ``opening_plies`` moves (None: ``OPENING_PLIES``) from ``seed``.
    ``resume`` continues a folder with its own engines, format, openings and settings (``jobs``
    may change), playing only the games not recorded and those of an engine whose script
    changed. Before any game, the isolation is checked as for a class (``private``: more
    files the engines must not read). ``on_start(folder, settings, games played before)`` is
    called once the folder is ready, ``on_game`` with each game as it ends. Ctrl-C (or
    ``stop`` set: the run's switch when it makes its own executor) keeps the games that ended
    (``interrupted`` set). The folder gets games.txt, results.json,
    report.html and, for Othello, games.ggf; for Gomoku, psq/ (a PSQ file a game).
    """
    if resume is not None:
        folder = TournamentFolder.open(resume)
        players, settings = folder.engines(), folder.settings(jobs)
        fmt, openings = folder.format(), folder.openings()
        for e in players:
            if e.protocol is None and not Path(e.path or "").is_file():
                raise GraderError(f"the script of engine '{e.name}' ({e.path}) is gone: restore it to resume")
            program = e.protocol.program() if e.protocol is not None else None
            if program and not Path(program).is_file() and shutil.which(program) is None:
                raise GraderError(f"the program of engine '{e.name}' ({program}) is gone: restore it to resume")
        settings.sandbox_mechanism([folder.path, *(p for e in players for p in e.paths), *map(Path, private)])
    else:
        settings = _capped(settings or TournamentSettings.resolve(Config(), get_game(DEFAULT)))
        fmt = format if isinstance(format, Format) else Format(format, rounds, (), sprt)
        players = engine_list([*engines, *opponents], settings.rules)
        if opponents:  # a gauntlet's reference engines (any other format refuses them)
            fmt = dataclass_replace(fmt, opponents=tuple(e.name for e in players[len(players) - len(opponents) :]))
        fmt.check([e.name for e in players])
        if jobs:
            settings = dataclass_replace(settings, jobs=jobs)
        seed = new_seed() if seed is None else seed
        opening_plies = OPENING_PLIES if opening_plies is None else opening_plies
        openings = openings or random_openings(settings.rules, seed, opening_plies, fmt.openings_needed())
        if not openings:
            raise GraderError(f"no random opening of {opening_plies} moves: every {settings.rules.title} game "
                              "tried ended sooner; give fewer --random-openings")  # fmt: skip
        _check_openings(players, openings, settings.rules)
        static = fmt.kind in ("round-robin", "gauntlet")
        fixed = fmt.planner([e.name for e in players], openings, GameRecord).more(0) if static else []
        settings.sandbox_mechanism([*(p for e in players for p in e.paths), *map(Path, private)])
        folder = TournamentFolder.create(out or default_folder(), players, fixed, settings, seed, fmt, openings)
    names = [e.name for e in players]
    planner = fmt.planner(names, openings, GameRecord)
    if isinstance(planner, SprtPlanner):
        planner.window = max(1, settings.jobs)
    specs = {e.name: e.spec() for e in players}
    for spec in specs.values():
        if isinstance(spec, Script):
            spec.command(settings)  # an engine the grader cannot run stops us before any game
        elif executor is not None and not isinstance(executor, LocalExecutor):
            raise GraderError("protocol engines run on this machine only: leave out --cluster, or give scripts")
    settings.check()
    done = folder.finished({name: s.digest for name, s in specs.items()}) if resume is not None else {}
    if folder.tampering():
        warnings.warn(folder.tampering() or "", GraderWarning, stacklevel=2)  # those games are played again
    if on_start:
        on_start(folder, settings, len(done))
    played: dict[str, GameRecord] = {}
    pool = None if settings.restart or all(e.protocol is None for e in players) else f"{folder.path}:{id(specs)}"
    if pool:
        _POOLS[pool] = EnginePool()
    try:
        interrupted = _play(folder, planner, done, played, specs, settings, on_game, executor, stop, pool)
    finally:
        if pool:
            _POOLS.pop(pool).close()
    if isinstance(planner, SwissPlanner):
        planner.finish()
    games = list(played.values())
    result = TournamentResult(
        folder, players, games, fmt.planned_games(len(players)), ratings.standings(games, names),
        ratings.crosstable(games, names), interrupted, fmt,
        swiss=planner.summary() if isinstance(planner, SwissPlanner) else None,
        sprt=planner.summary() if isinstance(planner, SprtPlanner) else None,
        stopped_early=planner.stopped_early,
    )  # fmt: skip
    if result.swiss is not None:  # the standings follow the Swiss ranking
        order = {s.engine: i for i, s in enumerate(result.swiss.standings)}
        result.standings.sort(key=lambda s: order[s.engine])
    write_outputs(result, settings)
    return result


def _play(folder: TournamentFolder, planner: Planner, done: dict[str, GameRecord], played: dict[str, GameRecord],
          specs: dict[str, Script | ProtocolEngine], settings: TournamentSettings, on_game: Callable[[GameRecord], None] | None,
          executor: Executor | None, stop: Stop | None, pool: str | None = None) -> str | None:  # fmt: skip
    """Play what the planner asks for until it asks for nothing more; returns why it was
    interrupted, if it was. Games already in ``done`` are not played again."""
    interrupted = None
    submitted: list[str] = []
    fed = isinstance(planner, SprtPlanner)
    if fed:  # the test counts pairs in the order they ended, as the first run did (games.jsonl's order)
        for game in done.values():
            planner.add(game)
        played.update((key, done[key]) for key in sorted(done, key=lambda k: (done[k].round, k)))
    with using(executor, settings.jobs, stop) as ex:

        def take(game: GameRecord) -> None:
            played[game.id] = game
            folder.append(game)
            planner.add(game)
            if on_game:
                on_game(game)

        try:
            while not ex.stop.is_set():  # a caller's stop, or a cluster's scheduler gone
                wanted = planner.more(ex.pending())
                for g in wanted:
                    if g.id in done:
                        played[g.id] = done[g.id]
                        if not fed:
                            planner.add(done[g.id])
                    else:
                        played[g.id] = None  # type: ignore[assignment]  # keeps the planned order
                        submitted.append(g.id)
                        ex.submit(g.id, GameTask(g, {g.black: specs[g.black], g.white: specs[g.white]}, settings, pool))
                if not ex.pending():
                    if wanted:
                        continue  # all were played before: ask again
                    break
                for _, game in ex.results():
                    take(game)
                    break
                if isinstance(planner, SprtPlanner) and planner.result.decision is not None:
                    ex.cancel(submitted)  # decided: start nothing more; games running end and are kept
        except KeyboardInterrupt as e:
            interrupted = interrupt_reason(e)
            ex.stop.set(interrupted)
            for _, game in ex.drain():  # games that ended while we were stopping
                take(game)
        if interrupted is None and ex.stop.is_set():  # stopped by a caller
            interrupted = ex.stop.reason or "interrupted"
    for key in [k for k, g in played.items() if g is None]:
        del played[key]
    return interrupted


def write_outputs(result: TournamentResult, settings: TournamentSettings) -> None:
    """games.txt, results.json, games.ggf (Othello), psq/ (Gomoku) and report.html in the folder."""
    from .html import tournament_page

    folder = result.folder
    folder.write(RECORDS, "".join(g.record_line() + "\n" for g in result.games))
    folder.write("results.json", json.dumps(result.to_json(), indent=1))
    result.files = [RECORDS, "games.jsonl", "results.json"]
    if ggf.supports(settings.rules):
        folder.write(ggf.FILE, ggf.write_games(result.games, settings.rules, folder.meta.get("created", "")))
        result.files.append(ggf.FILE)
    if psq.supports(settings.rules):  # a game a file, as Piskvork and Gomocup keep them
        seconds = settings.tc[1] if settings.tc else settings.limits.wall_seconds  # a clock's increment
        for name, text in psq.write_games(result.games, settings.rules, seconds).items():
            folder.write(f"{psq.FOLDER}/{name}", text)
        result.files.append(f"{psq.FOLDER}/")
    folder.write("report.html", tournament_page(result, settings.rules))
    result.files.append("report.html")


def default_folder() -> Path:
    return Path("runs") / (datetime.datetime.now().strftime("%Y-%m-%d_%H-%M-%S") + "-tournament")


def engine_list(paths: Sequence[str | Path | Engine], game: GameRules | None = None) -> list[Engine]:
    """Engines named by their file names (with the folder when two share a name):

    - a script's path, or 'builtin:NAME', an example script shipped with the package for
      ``game`` (for Othello: random_mover, greedy, negamax), run afresh for each move;
    - 'nboard:COMMAND' ('nboard:./edax -nboard'), a program speaking the NBoard protocol, or
      'builtin:nboard:NAME', an example script behind the package's NBoard adapter;
    - an ``Engine`` (config.yaml's ``engines:`` table gives them names and options).
    """
    game = game or get_game(DEFAULT)
    examples = bundled(*game.examples.split("/"))
    engines = []
    for p in paths:
        if isinstance(p, Engine):
            if p.protocol is not None:
                _check_protocol(p.name, p.protocol.protocol, game)
            engines.append(p)
            continue
        text = str(p)
        spoken = available_protocols()
        protocol = next((p for p in spoken if text.startswith(f"{p}:") or text.startswith(f"{BUILTIN}{p}:")), None)
        if protocol is not None:
            _check_protocol(text, protocol, game)
            proto = protocol_engine(text, protocol, game=game)
            engines.append(Engine(proto.stem, protocol=proto))
        elif text.startswith(BUILTIN):
            path = _example(examples, text[len(BUILTIN) :], text)
            engines.append(Engine(path.stem, path))
        else:
            path = Path(p)
            if not path.is_file():
                raise GraderError(
                    f"engine '{p}' not found: give the path of a script file, builtin:NAME or nboard:COMMAND"
                )
            engines.append(Engine(path.stem, path))
    for longer in (_protocol_name, _folder_name):  # two engines with one name: the protocol's, then the folder's
        names = [e.name for e in engines]
        engines = [longer(e) if names.count(e.name) > 1 else e for e in engines]
    if len({e.name for e in engines}) < len(engines):
        raise GraderError(
            "the same engine is given twice: give each engine once (or name them in config.yaml's engines:)"
        )
    for e in engines:
        if any(not ch.isprintable() for ch in e.name):
            raise GraderError(f"engine name {e.name!r} holds a control character, which would break the records "
                              "and tables: rename its file (or name it in config.yaml's engines:)")  # fmt: skip
    if len(engines) < 2:
        raise GraderError("a tournament needs at least two engines")
    return engines


def configured_engines(config: Config) -> dict[str, Engine]:
    """The engines config.yaml names (``engines:``), by name; a working folder is relative to
    the config file's folder."""
    base = Path(config.source).parent if Path(config.source).is_file() else Path.cwd()
    out = {}
    for e in config.engines:
        cwd = (base / Path(e.workdir).expanduser()) if e.workdir else None
        try:
            proto = ProtocolEngine.from_command(e.command, e.protocol, cwd, e.depth, here=base)
        except GraderError as err:
            raise GraderError(f"{config.source}: engine '{e.name}': {err}") from None
        out[e.name] = Engine(e.name, protocol=proto)
    return out


def protocol_engine(command: str, protocol: str = "nboard", folder: str | Path | None = None, depth: int | None = None,
                    game: GameRules | None = None) -> ProtocolEngine:  # fmt: skip
    """A protocol engine from its command ('nboard:./edax -nboard', or 'builtin:nboard:NAME',
    an example engine behind the package's NBoard adapter), read now."""
    game = game or get_game(DEFAULT)
    if command.startswith(f"{BUILTIN}nboard:"):  # an example script behind the NBoard adapter
        script = _example(bundled(*game.examples.split("/")), command[len(BUILTIN + NBOARD) :], command)
        files = {"engine.py": bundled("nboard", "engine.py"), script.name: script}
        bundle = Script.of_files("engine.py", files, command)
        argv = (PYTHON, "{dir}/engine.py", "{dir}/" + script.name)
        return ProtocolEngine.made(argv, protocol, bundle, depth, command)
    if command.startswith(f"{BUILTIN}{protocol}:"):  # an example program that speaks the protocol itself
        script = _example(bundled(*game.examples.split("/")), command[len(f"{BUILTIN}{protocol}:") :], command)
        return ProtocolEngine.from_command(shlex.join([PYTHON, str(script)]), protocol, depth=depth)
    if command.startswith(f"{protocol}:"):
        command = command[len(protocol) + 1 :]
    return ProtocolEngine.from_command(command, protocol, folder, depth)


def _example(examples: Path, name: str, text: str) -> Path:
    path = examples / (name + ".py")
    if not path.is_file():
        known = ", ".join(sorted(f.stem for f in examples.glob("*.py")))
        raise GraderError(f"no bundled engine '{text}': use one of {known} after '{BUILTIN}' (or '{BUILTIN}{NBOARD}')")
    return path


def _protocol_name(e: Engine) -> Engine:
    return dataclass_replace(e, name=f"{e.protocol.protocol}:{e.name}") if e.protocol is not None else e


def _folder_name(e: Engine) -> Engine:
    return Engine(f"{e.path.parent.name}/{e.path.stem}", e.path) if e.path is not None else e


def _check_protocol(name: str, protocol: str, game: GameRules) -> None:
    if not get_protocol(protocol).plays(game):
        playing = [p for p in available_protocols() if _plays(p, game)]
        speak = f"speak {' or '.join(playing)}, or are scripts" if playing else "are scripts"
        raise GraderError(f"engine '{name}' speaks {protocol}, which does not play {game.title}: its engines {speak}")


def _plays(protocol: str, game: GameRules) -> bool:
    """Whether engines of ``protocol`` play ``game`` (a plugin that cannot be loaded: no)."""
    try:
        return get_protocol(protocol).plays(game)
    except GraderError:
        return False


def _check_openings(players: list[Engine], openings: list[str], game: GameRules) -> None:
    """An engine whose protocol tells it a game only from the start (GTP in Othello) cannot
    start from an opening given as a position."""
    for e in players:
        kind = get_protocol(e.protocol.protocol) if e.protocol is not None else None
        if kind and not kind.sets_up(game) and any(" " in o.strip() for o in openings):  # 'BOARD TOKEN': a position
            raise GraderError(f"engine '{e.name}' speaks {kind.title}, which can tell it a {game.title} game only from "
                              "the start: give openings as move sequences (f5d6c3), not positions")  # fmt: skip


# --- grades by share -----------------------------------------------------------------------


@dataclass(frozen=True)
class ShareGrade:
    """An engine's grade out of 100 from its share of the pieces (None: it has no games)."""

    engine: str
    games: int
    share: float | None
    grade: float
    complete: bool
    note: str = ""


def grade_by_share(share: float | None, thresholds: Sequence[tuple[float, float]]) -> float:
    """The points of the highest threshold (share in percent, points) that ``share`` (0..1)
    reaches; 0 below the first or without pieces."""
    points = 0.0
    for percent, value in thresholds:
        if share is not None and 100 * share >= percent - 1e-9:
            points = value
    return points


def share_grades(result: TournamentResult, thresholds: Sequence[tuple[float, float]]) -> list[ShareGrade]:
    """Grades of a gauntlet's engines (not its reference opponents) by share, in the
    order given; incomplete when an engine's games were not all played."""
    if result.format.kind != "gauntlet":
        raise GraderError("--grade grades a gauntlet: give --format gauntlet --opponents REFERENCE...")
    rows = {s.engine: s for s in result.standings}
    per_engine = 2 * result.format.rounds * len(result.format.opponents)
    out = []
    for e in result.engines:
        if e.name in result.format.opponents:
            continue
        s = rows[e.name]
        complete = s.games == per_engine
        note = "" if complete else f"{s.games} of {per_engine} games played"
        out.append(ShareGrade(e.name, s.games, s.share, grade_by_share(s.share, thresholds), complete, note))
    return out


def grades_csv(grades: Sequence[ShareGrade]) -> str:
    """grades.csv of a graded gauntlet: name, total, max, share (%), games, complete, note."""
    import csv
    import io

    from ..runs.text import fmt_total, safe_cell

    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["name", "total", "max", "share", "games", "complete", "note"])
    for g in grades:
        share = "" if g.share is None else f"{100 * g.share:.2f}"
        writer.writerow(
            [
                safe_cell(g.engine),
                fmt_total(g.grade),
                100,
                share,
                g.games,
                "yes" if g.complete else "no",
                safe_cell(g.note),
            ]
        )
    return out.getvalue()


def write_grades(result: TournamentResult, thresholds: Sequence[tuple[float, float]]) -> list[ShareGrade]:
    """Grade a gauntlet by share of the pieces and write grades.csv in its folder."""
    grades = share_grades(result, thresholds)
    result.folder.write("grades.csv", grades_csv(grades))
    result.files.append("grades.csv")
    return grades
