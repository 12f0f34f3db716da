"""The grader's version (also what every cluster worker must run)."""

__version__ = "0.3.0"
