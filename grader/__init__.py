"""Grade Othello endgame-solver scripts against an exact solver, and run tournaments between
engine scripts. Everything the ``grader`` command does is a call here:

    from grader import grade, standard_plan, Settings
    result = grade("submissions/negamax.py", standard_plan(seed=7), Settings(jobs=2))
    print(result.total, result.symbols)
"""

__version__ = "0.2.0"

from .board import PASS, Position, Scoring, move_text, parse_square, square_name  # noqa: E402
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
from .plans import Plan, load_plan, standard_plan  # noqa: E402
from .runfolder import RunFolder  # noqa: E402
from .runner import Limits  # noqa: E402
from .solver import Analysis, LineCheck, Solver, solve  # noqa: E402
from .stop import Stop  # noqa: E402
from .tournament import TournamentResult, TournamentSettings, run_tournament  # noqa: E402

__all__ = [
    "PASS", "Analysis", "BoardError", "BoardFileError", "ClassRun", "Config", "ConfigError", "Executor",
    "GraderError", "GraderWarning", "Limits", "LineCheck", "LocalExecutor", "Plan", "Position", "RunFolder",
    "RunFolderError", "SYMBOL_TABLE", "Scoring", "ScriptResult", "Settings", "Solver", "Stop", "Submission",
    "TestResult", "TournamentResult", "TournamentSettings", "Verdict", "grade", "grade_class",
    "grade_submission", "load_config", "load_plan", "move_text", "parse_square", "run_tournament", "solve",
    "square_name", "standard_plan", "write_exports",
]  # fmt: skip
