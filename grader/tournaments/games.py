"""One game: its record, and playing it between two engines under the clock or the time limit."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Callable

from ..engines.programs import ProtocolEngine
from ..engines.protocol import EnginePool, Player, Turn
from ..engines.registry import player_for
from ..engines.scripts import Script
from ..execution.executor import Worker
from ..games import PASS, Position
from ..games import Game as GameRules
from ..seeding import rng
from ..stop import Stopped
from .formats import Format, fixed_schedule
from .mistakes import setup_fix
from .settings import TournamentSettings

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

    def cause(self) -> str | None:
        """Why the engine that forfeited lost: the problem of its last event (None: no forfeit)."""
        if not self.forfeit:
            return None
        problems = [e.get("problem") for e in self.events if e.get("engine") == self.forfeit and e.get("problem")]
        return str(problems[-1]) if problems else None

    def stderr_line(self) -> str | None:
        """The last line the engine that forfeited wrote to stderr before it did (None: none)."""
        said = [str(e.get("stderr_tail") or "") for e in self.events if e.get("engine") == self.forfeit]
        lines = [line.strip() for line in said[-1].splitlines() if line.strip()] if said and self.forfeit else []
        return lines[-1][:200] if lines else None

    def fix(self) -> str | None:
        """What to change when a setup mistake caused the forfeit (not executable, the wrong
        protocol, the wrong game), as the event recorded it."""
        fixes = [e["fix"] for e in self.events if e.get("engine") == self.forfeit and e.get("fix")]
        return str(fixes[-1]) if fixes else None

    def end_text(self) -> str:
        """How the game ended, in words: 'normal', 'adjudicated', or 'forfeit (X forfeits: why)'."""
        if not self.forfeit:
            return self.reason
        cause, said = self.cause(), self.stderr_line()
        return (f"{self.reason} ({self.forfeit} forfeits{': ' + cause if cause else ''}"
                + (f"; the last line it wrote to stderr: {said}" if said else "") + ")")  # fmt: skip

    def record_line(self) -> str:
        """A replayable line: the transcript, the final pieces, the result and who played."""
        return (
            f"{self.moves or '-'} {self.black_pieces}-{self.white_pieces} {self.result} "
            f"; black {self.black}, white {self.white}, {self.reason}"
            + (f" ({self.forfeit} forfeits)" if self.forfeit else "")
        )


def play_game(game: GameRecord, engines: dict[str, Script | ProtocolEngine], settings: TournamentSettings,
              worker: Worker, pool: EnginePool | None = None,
              on_move: Callable[[GameRecord], None] | None = None) -> GameRecord:  # fmt: skip
    """Play ``game`` (from its opening) to the end with the ``engines`` (by name); returns it
    filled in. Protocol engines come from ``pool`` when one waits there and go back to it
    after a clean game; any other is stopped at the end, whatever happens. ``on_move`` sees
    the record after each move played (its ``moves`` so far, clocks, evaluations). Raises
    Stopped when the run is stopped."""
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
                _with_fix(game, engines[names[token]], settings, worker)
                break
        else:
            final = _play_moves(game, players, names, settings, worker, on_move)
            if game.forfeit and not game.events[-1]["timed_out"]:
                _with_fix(game, engines[game.forfeit], settings, worker)
        clean = True
    finally:
        for player in players.values():
            player.end(clean)
    return _score(game, settings, final)


CPU_CLOCK_WALL = 3.0  # on a CPU-time clock, the wall seconds a move may take per CPU second left


def _play_moves(game: GameRecord, players: dict[str, Player], names: dict[str, str], settings: TournamentSettings,
                worker: Worker, on_move: Callable[[GameRecord], None] | None = None) -> Position:  # fmt: skip
    """The moves of a game (each engine's turn, on its clock), adjudication and forfeits;
    returns the last position."""
    rules, rule, tc = settings.rules, settings.rule, settings.tc
    on_cpu = settings.clock == "cpu"
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
        if tc and on_cpu:
            seconds *= CPU_CLOCK_WALL
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
            spent = turn.cpu if on_cpu and turn.cpu is not None else turn.wall
            had, left = clock[token], clock[token] + settings.time_margin
            clock[token] -= spent
            if turn.timed_out or clock[token] < -settings.time_margin:
                if on_cpu and turn.timed_out:  # the wall-time bound of a CPU clock
                    turn.problem = (f"lost on time: no move within {seconds:.2f} s of wall time "
                                    f"({CPU_CLOCK_WALL:g} times its CPU clock, {left:.2f} s left)")  # fmt: skip
                else:
                    what = "CPU clock" if on_cpu else "clock"
                    used = f"was stopped after {spent:.2f} s" if turn.timed_out else f"used {spent:.2f} s"
                    turn.problem = (f"lost on time: it had {had:.2f} s on its {what} (and a margin of "
                                    f"{settings.time_margin * 1000:g} ms) and {used} on this move")  # fmt: skip
                turn.timed_out = turn.fatal = True
            clock[token] = max(clock[token], 0.0) + tc[1]
            game.clocks.append(round(clock[token], 3))
        move = turn.move
        if turn.problem is None and move is None and turn.timed_out:
            turn.problem = f"no move within {seconds:g} s: the engine was stopped at its time limit"
        elif turn.problem is None and move is None:
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
        if on_move is not None:
            game.moves = rules.transcript(moves)
            on_move(game)
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


def _with_fix(game: GameRecord, engine: Script | ProtocolEngine, settings: TournamentSettings, worker: Worker) -> None:
    """The fix of a setup mistake, in the forfeit's event, when one caused it."""
    fix = setup_fix(engine, settings.rules, settings, worker)
    if fix and game.events:
        game.events[-1]["fix"] = fix


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


def schedule(engines: list[str], openings: list[str], rounds: int) -> list[GameRecord]:
    """A round-robin: every pair plays both colours from each round's opening."""

    return fixed_schedule(Format("round-robin", rounds), engines, openings, GameRecord)


_POOLS: dict[str, EnginePool] = {}  # the pools of the tournaments running in this process, by key
