"""Grade game-search lab scripts (the Othello endgame, tic-tac-toe) against exact solvers,
prove players never lose, and run tournaments between engine scripts. Everything the
``grader`` command does is a call here:

    from grader import grade, standard_plan, Settings
    result = grade("submissions/negamax.py", standard_plan(seed=7), Settings(jobs=2))
    print(result.total, result.symbols)
"""

__version__ = "0.2.0"

from .games import PASS, BoardEntry, Game, Position, available as available_games, get_game  # noqa: E402
from .config import Config, load_config  # noqa: E402
from .errors import (  # noqa: E402
    BoardError, BoardFileError, ConfigError, GraderError, GraderWarning, RunFolderError,
)  # fmt: skip
from .executor import Executor, LocalExecutor  # noqa: E402
from .exports import write_exports  # noqa: E402
from .grading import (  # noqa: E402
    ClassRun, ScriptResult, Settings, Submission, TestResult, grade, grade_class, grade_submission,
)  # fmt: skip
from .judge import SYMBOL_TABLE, Verdict  # noqa: E402
from .plans import Plan, load_plan, read_boards, standard_plan  # noqa: E402
from .runfolder import RunFolder  # noqa: E402
from .runner import Limits  # noqa: E402
from .prove import Proof, prove  # noqa: E402
from .solving import Analysis, ExactSolver, LineCheck, solve  # noqa: E402
from .stop import Stop  # noqa: E402
from .tournament import TournamentResult, TournamentSettings, run_tournament  # noqa: E402

__all__ = [
    "PASS", "Analysis", "BoardEntry", "BoardError", "BoardFileError", "ClassRun", "Config", "ConfigError",
    "ExactSolver", "Executor", "Game", "GraderError", "GraderWarning", "Limits", "LineCheck", "LocalExecutor",
    "Plan", "Position", "Proof", "RunFolder", "RunFolderError", "SYMBOL_TABLE", "ScriptResult", "Settings", "Stop",
    "Submission", "TestResult", "TournamentResult", "TournamentSettings", "Verdict", "available_games",
    "get_game", "grade", "grade_class", "grade_submission", "load_config", "load_plan", "prove", "read_boards",
    "run_tournament", "solve", "standard_plan", "write_exports",
]  # fmt: skip
