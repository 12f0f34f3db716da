"""The portal's late policy and which submission counts (grader/portal/course/policy.py): days late
per started day from the student's deadline, late days spent before a penalty, the penalty
capped at the whole total, an assignment opting out, latest against best (ties: the latest),
the budget spent in the order of the deadlines, and what an upload now would cost."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest

pytestmark = pytest.mark.xdist_group(__name__)  # one worker: the module's fixture runs once

pytest.importorskip("sqlalchemy", reason='the portal needs its extra: pip install -e ".[portal]"')

from grader.portal.course import policy  # noqa: E402
from grader.portal.course.course import Course, load_course, make_demo_course  # noqa: E402
from grader.portal.course.policy import Candidate  # noqa: E402

DEADLINE = dt.datetime(2026, 12, 18, 23, 59, tzinfo=dt.timezone.utc)
HOUR = dt.timedelta(hours=1)


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Course:
    return load_course(make_demo_course(tmp_path_factory.mktemp("policy") / "course"))


def course_with(demo: Course, budget: int | None, **othello) -> Course:
    """The demo course giving ``budget`` late days, its Othello lab changed as given, due at DEADLINE."""
    lab = dataclasses.replace(demo.assignments["othello"], deadline=DEADLINE, **othello)
    return dataclasses.replace(demo, late_days=budget, assignments={**demo.assignments, "othello": lab})


@pytest.mark.parametrize(
    "received, days",
    [(DEADLINE - HOUR, 0), (DEADLINE, 0), (DEADLINE + dt.timedelta(seconds=1), 1), (DEADLINE + 24 * HOUR, 1),
     (DEADLINE + 25 * HOUR, 2), (DEADLINE + 71 * HOUR, 3)],
)  # fmt: skip
def test_days_late_count_per_started_day(received, days):
    assert policy.days_late(received, DEADLINE) == days
    assert policy.days_late(received, None) == 0


@pytest.mark.parametrize(
    "late_days, uses, penalty, late, spent, taken, why",
    [
        (3, True, 0.10, 2, 2, 0.0, "2 days late: 2 days of late days spent"),
        (1, True, 0.10, 3, 1, 0.20, "3 days late: 1 day of late days spent, 20% penalty"),
        (None, True, 0.25, 6, 0, 1.0, "6 days late: 100% penalty"),  # capped at the whole total
        (5, False, 0.10, 2, 0, 0.20, "2 days late: 20% penalty"),  # the assignment opts out
        (0, True, 0.0, 2, 0, 0.0, "2 days late"),
    ],
)
def test_late_days_are_spent_before_the_penalty_applies(demo, late_days, uses, penalty, late, spent, taken, why):
    course = course_with(demo, late_days, late_days=uses, late_penalty=penalty)
    received = DEADLINE + dt.timedelta(days=late - 1, hours=1)
    got = policy.standing(course, {"othello": [Candidate("a", received, 40.0, 60)]}, {"othello": DEADLINE})
    s = got["othello"]
    assert (s.days_late, s.late_days, s.penalty) == (late, spent, pytest.approx(taken))
    assert s.score == pytest.approx(40.0 * (1 - taken)) and s.total == 40.0 and s.why == why


def test_latest_counts_the_last_graded_and_best_the_highest_after_penalties(demo):
    subs = [Candidate("early", DEADLINE - HOUR, 30.0), Candidate("late", DEADLINE + 30 * HOUR, 32.0),
            Candidate("between", DEADLINE + HOUR, 20.0)]  # fmt: skip
    for counts, expected in (("latest", "late"), ("best", "early")):  # 32 two days late at 10%: 25.6 < 30
        course = course_with(demo, 0, late_penalty=0.10, counts=counts)
        assert policy.standing(course, {"othello": subs}, {"othello": DEADLINE})["othello"].submission == expected
    course = course_with(demo, 0, late_penalty=0.0, counts="best")
    assert policy.standing(course, {"othello": subs}, {"othello": DEADLINE})["othello"].submission == "late"


def test_best_takes_the_latest_of_equal_scores(demo):
    course = course_with(demo, None, counts="best")
    subs = [Candidate("second", DEADLINE - HOUR, 30.0), Candidate("first", DEADLINE - 2 * HOUR, 30.0)]
    assert policy.standing(course, {"othello": subs}, {"othello": DEADLINE})["othello"].submission == "second"


def test_late_days_are_spent_in_the_order_of_the_deadlines(demo):
    later = DEADLINE + dt.timedelta(days=7)
    tictactoe = dataclasses.replace(demo.assignments["tictactoe"], deadline=later, late_penalty=0.5)
    othello = course_with(demo, 2, late_penalty=0.5).assignments["othello"]
    course = dataclasses.replace(demo, late_days=2, assignments={"tictactoe": tictactoe, "othello": othello})
    subs = {"othello": [Candidate("o", DEADLINE + 30 * HOUR, 10.0)],
            "tictactoe": [Candidate("t", later + 30 * HOUR, 10.0)]}  # fmt: skip
    got = policy.standing(course, subs, {"othello": DEADLINE, "tictactoe": later})
    assert (got["othello"].late_days, got["othello"].penalty) == (2, 0.0)  # its deadline comes first
    assert (got["tictactoe"].late_days, got["tictactoe"].penalty, got["tictactoe"].score) == (0, 1.0, 0.0)
    assert policy.late_days_left(course, got.values()) == 0
    assert policy.late_days_left(dataclasses.replace(course, late_days=None), got.values()) is None


def test_an_upload_now_may_spend_the_late_days_its_assignment_spends(demo):
    course = course_with(demo, 2, late_penalty=0.10)
    spent = policy.standing(course, {"othello": [Candidate("a", DEADLINE + HOUR, 10.0)]}, {"othello": DEADLINE})
    assert policy.late_days_left(course, spent.values()) == 1
    cost = policy.upload_now(course, course.assignments["othello"], DEADLINE, spent, DEADLINE + 50 * HOUR)
    assert cost == policy.LateUpload(days_late=3, late_days=2, penalty=pytest.approx(0.10))
    on_time = policy.upload_now(course, course.assignments["othello"], DEADLINE, spent, DEADLINE - HOUR)
    assert on_time == policy.LateUpload(0, 0, 0.0)
