"""Errors a user can fix. What a script under test does wrong is a verdict, not an exception."""


class GraderError(Exception):
    """Base class: a problem with the user's input; the message says how to fix it."""


class BoardError(GraderError):
    """A board, token or square that is not valid."""


class BoardFileError(GraderError):
    """A file of boards that cannot be read."""


class ConfigError(GraderError):
    """A config file that is missing, malformed or has bad values."""


class SprtError(GraderError, ValueError):
    """SPRT settings or pair counts that cannot define a test (bounds, error rates, model, counts)."""


class NoPairing(GraderError, ValueError):
    """A Swiss round that cannot be paired without a rematch or a second bye."""


class OptionError(GraderError):
    """Options that do not go together, or one that needs another (the command's usage error)."""


class PlanError(GraderError):
    """A plan file that cannot be read, or one given where another is needed."""


class RunFolderError(GraderError):
    """A run or tournament folder that cannot be created, read or continued."""


class GraderWarning(UserWarning):
    """Something the user should know that does not stop the run (the CLI prints one line)."""
