"""Grade Othello endgame-solver scripts and run tournaments between Othello engine scripts."""

__version__ = "0.1.0"

from .board import PASS, Position, Scoring, parse_square, square_name  # noqa: E402
from .errors import BoardError, BoardFileError, ConfigError, GraderError  # noqa: E402
from .solver import Analysis, LineCheck, Solver  # noqa: E402

__all__ = [
    "PASS",
    "Analysis",
    "BoardError",
    "BoardFileError",
    "ConfigError",
    "GraderError",
    "LineCheck",
    "Position",
    "Scoring",
    "Solver",
    "parse_square",
    "square_name",
]
