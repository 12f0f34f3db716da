"""Grade game-search lab scripts (the Othello endgame, tic-tac-toe) against exact solvers,
prove players never lose, and run tournaments between engine scripts. Everything the
``grader`` command does is a call here:

    from grader import grade, standard_plan, Settings
    result = grade("submissions/negamax.py", standard_plan(seed=7), Settings(jobs=2))
    print(result.total, result.symbols)
"""

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
from .runs.submissions import Submission
from .stop import Stop
from .tournaments.results import TournamentResult
from .tournaments.settings import TournamentSettings
from .tournaments.tournament import run_tournament
from .version import __version__

__all__ = [
    "PASS", "Analysis", "BoardEntry", "BoardError", "BoardFileError", "ClassRun", "Config", "ConfigError",
    "ExactSolver", "Executor", "Game", "GraderError", "GraderWarning", "Limits", "LineCheck", "LocalExecutor",
    "Plan", "Position", "Proof", "RunFolder", "RunFolderError", "RunSettings", "SYMBOL_TABLE", "ScriptResult", "Settings", "Stop",
    "Submission", "TestResult", "TournamentResult", "TournamentSettings", "Verdict", "available_games",
    "get_game", "grade", "grade_class", "grade_submission", "load_config", "load_plan", "prove", "read_boards",
    "run_tournament", "solve", "standard_plan", "write_exports", "__version__",
]  # fmt: skip
