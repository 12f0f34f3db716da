"""The files a grading run leaves for the instructor: grades.csv, results.json, junit.xml, report.html."""

from __future__ import annotations

import json
import os
from pathlib import Path

from ..errors import GraderError
from .html import report_html
from .report import grades_csv, junit_xml, results_json, sort_results
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


def write_files(folder: str | Path, texts: dict[str, str]) -> list[str]:
    """Write each text into ``folder`` under its name; returns the names. A write error is
    a one-line GraderError."""
    for name, text in texts.items():
        try:
            (Path(folder) / name).write_text(text, encoding="utf-8")
        except OSError as e:
            raise GraderError(f"cannot write {Path(folder) / name}: {e.strerror}") from None
    return list(texts)


def check_output_file(path: str | Path, make_parent: bool = False) -> None:
    """Raise now, before any work, if ``path`` cannot be written later (a results file)."""
    p = Path(path)
    if p.is_dir():
        raise GraderError(f"'{p}' is a folder: give a file name to write the results to")
    parent = p.parent
    if make_parent:
        try:
            parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise GraderError(f"cannot create the folder '{parent}' for '{p}': {e.strerror}") from None
    if not parent.is_dir():
        raise GraderError(f"cannot write '{p}': the folder '{parent}' does not exist")
    if not os.access(parent, os.W_OK) or (p.exists() and not os.access(p, os.W_OK)):
        raise GraderError(f"cannot write '{p}': permission denied")


def write_json(path: str | Path, data: object) -> None:
    """Write ``data`` as indented JSON; a write error is a one-line GraderError."""
    try:
        Path(path).write_text(json.dumps(data, indent=1), encoding="utf-8")
    except OSError as e:
        raise GraderError(f"cannot write '{path}': {e.strerror}") from None
