"""The files a grading run leaves for the instructor: grades.csv, results.json, junit.xml, report.html."""

from __future__ import annotations

import json
from pathlib import Path

from ..files import write_files
from ..runs.text import sort_results
from .html import report_html
from .report import grades_csv, junit_xml, results_json
from .results import ScriptResult


def write_exports(folder: str | Path, results: list[ScriptResult]) -> list[str]:
    """Write the four exports of ``results`` into ``folder``; returns their file names."""
    folder = Path(folder)
    files = {
        "grades.csv": grades_csv(sort_results(results)),
        "results.json": json.dumps(results_json(results), indent=1),
        "junit.xml": junit_xml(results),
        "report.html": report_html(results),
    }
    return write_files(folder, files)
