"""The labs' own interface as a protocol: a script started afresh for each move
(``SCRIPT BOARD TOKEN``), its move the last integer it printed. Every game has it."""

from __future__ import annotations

from dataclasses import replace

from ..errors import GraderError
from ..games import Game, Position
from .protocol import EnginePool, EngineSpec, Player, Protocol, Turn
from .scripts import Runs, RunSettings, Script, run_script


class ScriptPlayer(Player):
    """A script, run afresh for each move."""

    def __init__(self, script: Script, settings: RunSettings, where: Runs):
        self.script, self.settings, self.where = script, settings, where

    def begin(self) -> Turn | None:
        return None

    def turn(self, pos: Position, start: Position, plies: list[int], seconds: float) -> Turn:
        settings = replace(self.settings, limits=replace(self.settings.limits, wall_seconds=seconds))
        result, claim = run_script(self.script, pos, settings, self.where)
        problem = f"the engine {result.describe()}" if result.crashed else None
        return Turn(claim.move, problem, result.wall_seconds, result.cpu_seconds, result.timed_out,
                    output_tail=result.stdout_tail, stderr_tail=result.stderr_tail,
                    interrupted=result.interrupted)  # fmt: skip


class ScriptProtocol(Protocol):
    """``script``: the engine is a lab script (its files, read once), run for each move."""

    name, title = "script", "script"

    @classmethod
    def player(cls, engine: EngineSpec, settings: RunSettings, where: Runs, game: Game,
               pool: EnginePool | None = None) -> Player:  # fmt: skip
        if not isinstance(engine, Script):
            raise GraderError(f"engine {engine.origin!r} is a program, not a script: give it with its protocol")
        return ScriptPlayer(engine, settings, where)

    @classmethod
    def plays(cls, game: Game) -> bool:
        return True
