"""The grader's version (also what every cluster worker must run)."""

__version__ = "0.2.0"
