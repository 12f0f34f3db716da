"""An assignment's similarity report for its staff: the students' counted submissions, unpacked
as the workers unpack them, ranked pair by pair by how similar their code is as ``grader
similar`` ranks a class (copydetect's fingerprints), the assignment's starter code left out and
its earlier terms' submissions compared too (course.yaml's ``similarity: {base, archive}``).
The report says "similar", never "copied": the pairs are for the instructor to look at."""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import tempfile
from pathlib import Path

from ...errors import GraderError
from ...similarity import SimilarityReport, compare_submissions, find_submissions
from ...similarity.report import STYLE
from .course import Assignment, Course
from .exports import Counted, safe_name, unpacked

TOP = 50  # pairs the page shows
# The report page's own policy: the portal's, with the report's one inline style sheet allowed by its hash.
CSP = ("default-src 'none'; style-src 'sha256-" + base64.b64encode(hashlib.sha256(STYLE.encode()).digest()).decode()
       + "'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'")  # fmt: skip


def similarity_report(course: Course, assignment: Assignment, rows: list[Counted], top: int = TOP) -> SimilarityReport:
    """The counted submissions ``rows`` of ``assignment`` ranked by similarity, named by e-mail;
    a team's (the same submission counted for each member) one author, named by its members' e-mails."""
    rows = one_per_author(rows)
    if len(rows) < (1 if assignment.similar_archive else 2):
        raise GraderError(f"{assignment.title} has {len(rows)} counted submission(s): a report needs two or more "
                          "(one with an archive)")  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="grader-similar-") as tmp:
        unpacked(Path(tmp), course, rows)
        emails = {safe_name(c.email): c.email for c in rows}
        found = [dataclasses.replace(s, name=emails[s.name]) for s in find_submissions([Path(tmp) / "submissions"])]
        found += find_submissions(list(assignment.similar_archive), archive=True, qualify=True)
        return compare_submissions(found, list(assignment.similar_base), top)


def one_per_author(rows: list[Counted]) -> list[Counted]:
    """``rows`` with a submission counted for several students (a team's) once, its ``email``
    their e-mails joined by ", ", so that teammates are never compared as two authors."""
    by_submission: dict[str, list[Counted]] = {}
    for c in rows:
        by_submission.setdefault(c.submission, []).append(c)
    return [dataclasses.replace(group[0], email=", ".join(c.email for c in group)) if len(group) > 1 else group[0]
            for group in by_submission.values()]  # fmt: skip
