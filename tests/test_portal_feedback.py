"""A submission's test cards (``grader.portal.pages.feedback``) on a plan of 100 tests: past
``FOLD_OVER`` cards, a test whose board is not drawn leaves its details for a request, so that
the page stays under 100 KB; the tests whose boards are drawn, and the test asked for, keep theirs."""

from __future__ import annotations

import pytest

pytest.importorskip("starlette", reason='the portal needs its extra: pip install -e ".[portal]"')

from grader.files import SHARE  # noqa: E402
from grader.portal.course.course import load_course, make_demo_course  # noqa: E402
from grader.portal.jobs.grading import grade_upload  # noqa: E402
from grader.portal.pages.feedback import FOLD_OVER, cards  # noqa: E402

TTT = SHARE / "submissions" / "tictactoe" / "can_lose.py"


def test_a_100_test_plan_folds_the_details_of_the_tests_not_drawn_and_keeps_the_asked_ones(tmp_path):
    course = load_course(make_demo_course(tmp_path / "course"))
    lab = course.assignments["tictactoe"]
    records = grade_upload(course, lab, "lab.py", TTT.read_bytes()).records
    every = cards(records, lab, lambda i: True, None, student=False)  # as staff see them: all 100
    assert len(every) == 100 > FOLD_OVER
    folded = [c for c in every if c.folded]
    drawn = [c for c in every if c.board]
    assert len(folded) + len(drawn) == 100 and drawn and not any(c.passed for c in drawn)  # the failed ones first
    asked = folded[0].index
    again = cards(records, lab, lambda i: True, asked, student=False)
    assert not next(c for c in again if c.index == asked).folded  # ?test=N: its details
    public = cards(records, lab, lab.plan.is_public, None)  # as the student sees them
    assert len(public) <= FOLD_OVER and not any(c.folded for c in public)
