"""Similarity between students' submissions: every pair of a class (and each submission
against an archive of earlier terms) ranked by how much of their code is similar, the starter
code left out, with a report that shows the similar passages side by side. The tool finds
pairs to look at; it decides nothing."""

from .compare import (
    FileMatch,
    PairResult,
    SimilarityReport,
    Submission,
    compare_submissions,
    find_submissions,
    similar,
)
from .report import report_html, report_json, report_table

__all__ = [
    "FileMatch",
    "PairResult",
    "SimilarityReport",
    "Submission",
    "compare_submissions",
    "find_submissions",
    "report_html",
    "report_json",
    "report_table",
    "similar",
]
