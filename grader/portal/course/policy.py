"""A course's late policy and which submission counts, derived from what the database records
(submissions, extensions) and course.yaml, never stored: a changed course.yaml, an extension
or a rerun is followed at once.

Days late are counted from the student's (extended) deadline, per started day. Late days (the
course's ``late_days``, a budget per student) are spent automatically, whole days, before a
penalty applies: on the student's counted submissions in the order of their deadlines. The
rest of the days cost the assignment's ``late_penalty`` of the earned total each, at most all
of it. An assignment counts a student's latest graded submission, or their best (the highest
total after penalties; ties: the latest). A released hand grading's points join a submission's
total under its rubric's rule before any of this (``rubric.combined``)."""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, and_, or_, select
from sqlalchemy.orm import Session, defer

from ..database.models import GRADED, QUEUED, RUNNING, STUDENT, Extension, Submission, User
from .course import Assignment, Course
from .deadlines import moved
from .hand import released_points
from .rubric import combined
from .teams import mates, memberships

DAY = dt.timedelta(days=1)
# read only when used (a download's), while the session is open: the class table needs none of them
LARGE = (Submission.content, Submission.records, Submission.full_text, Submission.student_text)


@dataclass(frozen=True)
class Candidate:
    """A graded submission that may count: its id, when it arrived, its total as graded."""

    id: str
    received_at: dt.datetime
    total: float | None
    max_total: int | None = None
    hand: float | None = None  # hand-graded points (released), added under the rubric's rule


@dataclass(frozen=True)
class Score:
    """A submission's total before and after the late policy, and why they differ."""

    submission: str
    total: float | None  # as graded, with the released hand grading's points
    max_total: int | None
    days_late: int
    late_days: int  # of the course's budget spent on it
    penalty: float  # the share of the total taken, 0 to 1
    hand: float | None = None  # the hand grading's points in the total (None: none released)

    @property
    def score(self) -> float | None:
        """The total after the penalty."""
        return None if self.total is None else round(self.total * (1 - self.penalty), 2)

    @property
    def why(self) -> str:
        """Why the score differs from the total (empty when on time)."""
        if not self.days_late:
            return ""
        costs = ([f"{_days(self.late_days)} of late days spent"] if self.late_days else []) + (
            [f"{self.penalty:.0%} penalty"] if self.penalty else []
        )
        late = f"{_days(self.days_late)} late"
        return f"{late}: {', '.join(costs)}" if costs else late


def _days(n: int) -> str:
    return f"{n} day" if n == 1 else f"{n} days"


def days_late(received: dt.datetime, deadline: dt.datetime | None) -> int:
    """Days late, per started day (a second late is a day); 0 on time or with no deadline."""
    if deadline is None:
        return 0
    return max(0, math.ceil((_aware(received) - deadline) / DAY))


def charge(assignment: Assignment, late: int, left: int) -> tuple[int, float]:
    """(late days spent, share of the total taken) for ``late`` days late with ``left`` late days left."""
    spent = min(late, left) if assignment.late_days else 0
    return spent, min(1.0, (late - spent) * assignment.late_penalty)


def score(assignment: Assignment, c: Candidate, deadline: dt.datetime | None, left: int) -> Score:
    late = days_late(c.received_at, deadline)
    spent, penalty = charge(assignment, late, left)
    total = c.total if c.total is None or c.hand is None else combined(c.total, c.hand, c.max_total)
    return Score(c.id, total, c.max_total, late, spent, penalty, c.hand)


def _aware(when: dt.datetime) -> dt.datetime:
    return when if when.tzinfo else when.replace(tzinfo=dt.timezone.utc)


def standing(course: Course, candidates: Mapping[str, Sequence[Candidate]],
             deadlines: Mapping[str, dt.datetime | None], caps: Mapping[str, int] | None = None,
             before: dict[str, int] | None = None) -> dict[str, Score]:  # fmt: skip
    """One student's counted submission of each assignment (by name) they have graded ones in,
    scored: ``candidates`` by assignment, ``deadlines`` their own (extended) ones. Late days are
    spent in the order of the deadlines (the course file's order between equal ones). ``caps``:
    the late days a team may spend on an assignment (the fewest any member has left), which
    the student's own left may not exceed; ``before`` is given each assignment's late days left
    before it."""
    left = course.late_days or 0
    order = sorted(course.assignments.values(),
                   key=lambda a: (deadlines.get(a.name) is None, deadlines.get(a.name) or dt.datetime.min))  # fmt: skip
    out: dict[str, Score] = {}
    for a in order:
        subs = sorted(candidates.get(a.name, ()), key=lambda c: _aware(c.received_at))
        if not subs:
            continue
        if before is not None:
            before[a.name] = left
        available = min(left, (caps or {}).get(a.name, left))
        scored = [score(a, c, deadlines.get(a.name), available) for c in subs]
        if a.counts == "best":
            best = max(range(len(scored)), key=lambda i: (scored[i].score is not None, scored[i].score or 0.0, i))
            chosen = scored[best]
        else:
            chosen = scored[-1]
        out[a.name] = chosen
        left -= chosen.late_days
    return out


def late_days_used(scores: Iterable[Score]) -> int:
    return sum(s.late_days for s in scores)


RERUN = "being rerun: its new result is not in yet"
OLD_PLAN = "graded on the plan before it changed: rerun it"


@dataclass(frozen=True)
class Grade:
    """What every view and export says of a student's grade on an assignment: its score after
    the late policy, the extension granted (days), and why it is not final (empty: it is)."""

    score: Score
    extension: int = 0
    not_final: str = ""

    @property
    def late(self) -> bool:
        """Late by the student's deadline now (the course's, moved by their extension)."""
        return self.score.days_late > 0

    @property
    def final(self) -> bool:
        return not self.not_final

    @property
    def why(self) -> str:
        """How the late policy made the grade: on time, or days late, late days spent and the
        penalty (with the total as graded when a penalty took part of it); the extension."""
        s = self.score
        text = s.why or "on time"
        if s.penalty and s.total is not None:
            text += f" (graded {s.total:g})"
        if self.extension:
            text += f"; deadline extended by {_days(self.extension)}"
        if s.hand is not None:
            text += f"; hand grading {s.hand:+g}"
        return text

    def data(self) -> dict[str, Any]:
        """The grade as the class table's cells and the staff's JSON give it."""
        s = self.score
        return {"late": self.late, "days_late": s.days_late, "late_days": s.late_days, "penalty": s.penalty,
                "score": s.score, "extension": self.extension, "final": self.final, "not_final": self.not_final,
                "why": self.why, "hand": s.hand}  # fmt: skip


def grade(s: Score, submission: Submission, extension: int, plan_digest: str | None) -> Grade:
    """The one grade every view and export shows for a counted submission: ``s`` its score,
    ``extension`` the student's extra days, not final while it is being rerun or was graded on a
    plan other than ``plan_digest`` (the assignment's now)."""
    note = (RERUN if submission.status in (QUEUED, RUNNING)
            else OLD_PLAN if plan_digest is not None and submission.plan_digest not in (None, plan_digest)
            else "")  # fmt: skip
    return Grade(s, extension, note)


def candidate(submission: Submission, hand: Mapping[str, float]) -> Candidate:
    """A graded submission as a candidate to count, with its released hand grading's points (``hand``, by id)."""
    s = submission
    return Candidate(s.id, s.received_at, s.total, s.max_total, hand.get(s.id))


@dataclass(frozen=True)
class Counted:
    """A student's counted submission of an assignment, scored by the late policy, and its grade."""

    user: User
    submission: Submission
    score: Score
    grade: Grade


def counted(session: Session, course: Course, user: User | None = None,
            hand_points: Mapping[str, float] | None = None) -> dict[tuple[int, str], Counted]:  # fmt: skip
    """Each student's counted submission of each assignment, by (user id, assignment name), with
    its grade: of every student, or of ``user`` alone. A submission being rerun counts with its
    old result (not final). A team's submissions are each member's (autograder.io's rule for
    late days: the team may spend the fewest any member has left, and each member spends them).
    ``hand_points``: released hand points (by submission id) to count in place of the recorded
    ones (a regrade's answer: the grade before and after a change of hand grading)."""
    teams = memberships(session, course)
    people_ids = None if user is None else _connected(user.id, teams)
    query = (select(Submission, User).join(User, User.id == Submission.user_id)
             .where(countable(), User.role == STUDENT, Submission.assignment.in_(list(course.assignments)))
             .options(*(defer(c) for c in LARGE)))  # fmt: skip
    extensions = select(Extension)
    if people_ids is not None:
        query = query.where(User.id.in_(people_ids))
        extensions = extensions.where(Extension.user_id.in_(people_ids))
    days = {(e.user_id, e.assignment): e.days for e in session.scalars(extensions)}
    members: dict[tuple[int, str], list[int]] = {}
    for (uid, name), team in teams.items():
        members.setdefault((team, name), []).append(uid)
    subs: dict[int, dict[str, list[Submission]]] = {}
    people: dict[int, User] = {}
    for sub, owner in session.execute(query).all():
        people[owner.id] = owner
        ours = teams.get((owner.id, sub.assignment))
        for uid in members[(ours, sub.assignment)] if ours is not None else [owner.id]:
            subs.setdefault(uid, {}).setdefault(sub.assignment, []).append(sub)
    missing = [uid for uid in subs if uid not in people]  # a member who has not submitted
    if missing:
        people.update((u.id, u) for u in session.scalars(select(User).where(User.id.in_(missing))))

    def extra(uid: int, name: str) -> int:
        """The student's extension: in a team, the longest granted to a member."""
        team = teams.get((uid, name))
        who = members[(team, name)] if team is not None else [uid]
        return max(days.get((m, name), 0) for m in who)

    hand = released_points(session, course, list({(s.id, s.assignment) for m in subs.values() for g in m.values()
                                                  for s in g}))  # fmt: skip
    hand.update(hand_points or {})
    candidates = {uid: {name: [candidate(s, hand) for s in group] for name, group in mine.items()}
                  for uid, mine in subs.items()}  # fmt: skip
    limits = {uid: {a.name: moved(a, extra(uid, a.name)).deadline for a in course.assignments.values()}
              for uid in subs}  # fmt: skip
    standings = _standings(course, candidates, limits, teams, members)
    out: dict[tuple[int, str], Counted] = {}
    digests: dict[str, str] = {}
    for uid, mine in subs.items():
        if user is not None and uid != user.id:
            continue
        by_id = {s.id: s for group in mine.values() for s in group}
        for name, s in standings[uid].items():
            if name not in digests:
                digests[name] = course.plan_digest(course.assignments[name])
            sub = by_id[s.submission]
            out[(uid, name)] = Counted(people[uid], sub, s, grade(s, sub, extra(uid, name), digests[name]))
    return out


def _connected(user_id: int, teams: Mapping[tuple[int, str], int]) -> set[int]:
    """``user_id`` and every student their late days depend on: their teammates, theirs, and so on."""
    by_team: dict[int, set[int]] = {}
    by_user: dict[int, set[int]] = {}
    for (uid, _), team in teams.items():
        by_team.setdefault(team, set()).add(uid)
        by_user.setdefault(uid, set()).add(team)
    found, todo = {user_id}, [user_id]
    while todo:
        for team in by_user.get(todo.pop(), ()):
            for other in by_team[team] - found:
                found.add(other)
                todo.append(other)
    return found


def _standings(course: Course, candidates: Mapping[int, Mapping[str, Sequence[Candidate]]],
               limits: Mapping[int, Mapping[str, dt.datetime | None]], teams: Mapping[tuple[int, str], int],
               members: Mapping[tuple[int, str], list[int]]) -> dict[int, dict[str, Score]]:  # fmt: skip
    """Each student's ``standing``, a team's late days capped at the fewest any member has left
    before the assignment: found again until no cap changes (each round settles the next
    assignment in deadline order, so at most one round per assignment and one more)."""
    caps: dict[tuple[int, str], int] = {}
    out: dict[int, dict[str, Score]] = {}
    for _ in range(len(course.assignments) + 2):
        lefts: dict[int, dict[str, int]] = {}
        for uid, mine in candidates.items():
            lefts[uid] = {}
            mycaps = {name: caps[(team, name)] for (who, name), team in teams.items()
                      if who == uid and (team, name) in caps}  # fmt: skip
            out[uid] = standing(course, mine, limits[uid], mycaps, lefts[uid])
        new = {(team, name): min(lefts.get(m, {}).get(name, course.late_days or 0) for m in who)
               for (team, name), who in members.items()}  # fmt: skip
        if not teams or new == caps:
            break
        caps = new
    return out


@dataclass(frozen=True)
class LateUpload:
    """What an upload now would cost a student: days late, late days spent, the share taken."""

    days_late: int
    late_days: int
    penalty: float


def late_days_left(course: Course, scores: Iterable[Score]) -> int | None:
    """The student's late days left (None: the course gives none)."""
    return None if course.late_days is None else max(0, course.late_days - late_days_used(scores))


def upload_now(course: Course, assignment: Assignment, deadline: dt.datetime | None,
               scores: Mapping[str, Score], when: dt.datetime, left: int | None = None) -> LateUpload:  # fmt: skip
    """What an upload at ``when`` would cost if it counted: the late days its assignment's counted
    submission spends now are the student's again to spend on it (``left``: a team's, as
    ``available`` gives them)."""
    others = late_days_used(s for name, s in scores.items() if name != assignment.name)
    late = days_late(when, deadline)
    spent, penalty = charge(assignment, late, max(0, (course.late_days or 0) - others) if left is None else left)
    return LateUpload(late, spent, penalty)


def available(session: Session, course: Course, user: User, assignment: Assignment) -> int:
    """The late days ``user`` may spend on ``assignment``: those their other assignments' counted
    submissions leave them; in a team, the fewest any member has so left (autograder.io's rule)."""
    budget = course.late_days or 0
    fewest = budget
    for uid in mates(session, user.id, assignment.name) if assignment.team_size is not None else [user.id]:
        member = user if uid == user.id else session.get(User, uid)
        if member is None:
            continue
        used = late_days_used(c.score for (_, name), c in counted(session, course, member).items()
                              if name != assignment.name)  # fmt: skip
        fewest = min(fewest, max(0, budget - used))
    return fewest


def countable() -> ColumnElement[bool]:
    """A submission that may count: graded, or graded and being rerun (its old result stands meanwhile)."""
    rerunning = and_(Submission.change_reason.is_not(None), Submission.status.in_((QUEUED, RUNNING)))
    return or_(Submission.status == GRADED, rerunning)
