"""Grade game-search lab scripts (the Othello endgame, tic-tac-toe) against exact solvers,
prove players never lose, and run tournaments between engine scripts. Everything the
``grader`` command does is a call here:

    from grader import grade, standard_plan, Settings
    result = grade("submissions/negamax.py", standard_plan(seed=7), Settings(jobs=2))
    print(result.total, result.symbols)
"""

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

from .version import __version__

# Each name of the library, and where it lives: imported when first used, so that the
# ``grader`` command starts without loading what it does not run (``grader --version``).
_NAMES = {
    "Config": (".config", "Config"),
    "load_config": (".config", "load_config"),
    "RunSettings": (".engines.scripts", "RunSettings"),
    "BoardError": (".errors", "BoardError"),
    "BoardFileError": (".errors", "BoardFileError"),
    "ConfigError": (".errors", "ConfigError"),
    "GraderError": (".errors", "GraderError"),
    "GraderWarning": (".errors", "GraderWarning"),
    "RunFolderError": (".errors", "RunFolderError"),
    "Executor": (".execution.executor", "Executor"),
    "LocalExecutor": (".execution.executor", "LocalExecutor"),
    "PASS": (".games", "PASS"),
    "BoardEntry": (".games", "BoardEntry"),
    "Game": (".games", "Game"),
    "Position": (".games", "Position"),
    "get_game": (".games", "get_game"),
    "solve": (".games", "solve"),
    "available_games": (".games", "available"),
    "Analysis": (".games.solving", "Analysis"),
    "ExactSolver": (".games.solving", "ExactSolver"),
    "LineCheck": (".games.solving", "LineCheck"),
    "write_exports": (".grading.exports", "write_exports"),
    "SYMBOL_TABLE": (".grading.judge", "SYMBOL_TABLE"),
    "Verdict": (".grading.judge", "Verdict"),
    "Plan": (".grading.plans", "Plan"),
    "load_plan": (".grading.plans", "load_plan"),
    "read_boards": (".grading.plans", "read_boards"),
    "standard_plan": (".grading.plans", "standard_plan"),
    "ScriptResult": (".grading.results", "ScriptResult"),
    "Settings": (".grading.results", "Settings"),
    "TestResult": (".grading.results", "TestResult"),
    "ClassRun": (".grading.run", "ClassRun"),
    "grade": (".grading.run", "grade"),
    "grade_class": (".grading.run", "grade_class"),
    "grade_submission": (".grading.run", "grade_submission"),
    "RunFolder": (".grading.runfolder", "RunFolder"),
    "Limits": (".limits", "Limits"),
    "Proof": (".prove", "Proof"),
    "prove": (".prove", "prove"),
    "export_grades": (".runs.lms", "export_grades"),
    "Submission": (".runs.submissions", "Submission"),
    "SimilarityReport": (".similarity.compare", "SimilarityReport"),
    "similar": (".similarity.compare", "similar"),
    "Stop": (".stop", "Stop"),
    "TournamentResult": (".tournaments.results", "TournamentResult"),
    "TournamentSettings": (".tournaments.settings", "TournamentSettings"),
    "run_tournament": (".tournaments.tournament", "run_tournament"),
}

if TYPE_CHECKING:  # for type checkers only: at run time each name comes from _NAMES when first used
    from .config import Config, load_config
    from .engines.scripts import RunSettings
    from .errors import BoardError, BoardFileError, ConfigError, GraderError, GraderWarning, RunFolderError
    from .execution.executor import Executor, LocalExecutor
    from .games import PASS, BoardEntry, Game, Position, get_game, solve
    from .games import available as available_games
    from .games.solving import Analysis, ExactSolver, LineCheck
    from .grading.exports import write_exports
    from .grading.judge import SYMBOL_TABLE, Verdict
    from .grading.plans import Plan, load_plan, read_boards, standard_plan
    from .grading.results import ScriptResult, Settings, TestResult
    from .grading.run import ClassRun, grade, grade_class, grade_submission
    from .grading.runfolder import RunFolder
    from .limits import Limits
    from .prove import Proof, prove
    from .runs.lms import export_grades
    from .runs.submissions import Submission
    from .similarity.compare import SimilarityReport, similar
    from .stop import Stop
    from .tournaments.results import TournamentResult
    from .tournaments.settings import TournamentSettings
    from .tournaments.tournament import run_tournament


def __getattr__(name: str) -> Any:
    """A name of the library, imported from its module on first use."""
    if name not in _NAMES:
        raise AttributeError(f"module 'grader' has no attribute {name!r}")
    module, attribute = _NAMES[name]
    value = getattr(importlib.import_module(module, __name__), attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_NAMES])


class _Library(types.ModuleType):
    """The package, whose names a submodule of the same name never hides: importing
    ``grader.prove`` (the module) leaves ``grader.prove`` the function ``prove``, as when
    the package imported every name at once."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _NAMES and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Library


__all__ = [
    "PASS", "Analysis", "BoardEntry", "BoardError", "BoardFileError", "ClassRun", "Config", "ConfigError",
    "ExactSolver", "Executor", "Game", "GraderError", "GraderWarning", "Limits", "LineCheck", "LocalExecutor",
    "Plan", "Position", "Proof", "RunFolder", "RunFolderError", "RunSettings", "SYMBOL_TABLE", "ScriptResult", "Settings", "SimilarityReport", "Stop",
    "Submission", "TestResult", "TournamentResult", "TournamentSettings", "Verdict", "available_games",
    "export_grades", "get_game", "grade", "grade_class", "grade_submission", "load_config", "load_plan", "prove", "read_boards",
    "run_tournament", "similar", "solve", "standard_plan", "write_exports", "__version__",
]  # fmt: skip
