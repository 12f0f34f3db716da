"""Regrade requests: a student asks on one of their graded submissions (in a team, on the
team's: it is theirs too), with a reason (at most the course's number of requests on each
assignment, a team's counted together, until its closing date); staff answer once,
with a reply and what they did (``ACTIONS``: a rerun of the submission, by the rerun the class
page starts; a change of its hand grading, made on its code page since the request, whose
account, before -> after from the hand grading the request kept when asked, is kept after the
reply). The answer's mail is enqueued in its transaction; the caller audits both."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from ..course import hand
from ..course.course import Course
from ..course.handchange import HandState, state_of, words
from ..course.regrades import REASON_CHARS
from ..course.teams import hold, mates
from ..database.models import GRADED, Submission, User, now
from ..database.regrades import ANSWERED, OPEN, RegradeRequest
from ..mail import messages as mails
from .queue import BY_INSTRUCTOR, rerun

ON_REQUEST = "rerun on a regrade request"  # the rerun's reason, as the submission page shows it


class RegradeRefused(Exception):
    """A request or an answer not taken: why, in a sentence for the person."""


class NoSuchRequest(RegradeRefused):
    """An answer to a request that does not exist."""


def _rerun(session: Session, course: Course, sub: Submission, found: RegradeRequest) -> str | None:
    """The submission queued again (the class page's rerun); None when it cannot be (not graded, or queued)."""
    assignment = course.assignments.get(sub.assignment)
    if assignment is None:
        return None
    reason = rerun(session, sub, course.plan_digest(assignment))
    if reason == BY_INSTRUCTOR:
        sub.change_reason = reason = ON_REQUEST
    return reason


UNRELEASED = "Hand grading changed; you see it once your instructor releases the hand grading."


def _hand(session: Session, course: Course, sub: Submission, found: RegradeRequest) -> str | None:
    """The change staff made to the submission's hand grading since the request, in words for
    its students once the hand grading is released (before, that it changed): from the state
    the request kept, the items added and removed, the hand total and the grade before -> after
    (``handchange.words``); for a request asked before states were kept, the items applied now
    and the comments written and taken back since. RegradeRefused when the assignment has no
    rubric or nothing changed."""
    assignment = course.assignments.get(sub.assignment)
    rubric = assignment.rubric if assignment else None
    if assignment is None or rubric is None:
        raise RegradeRefused(f"{sub.assignment} is not graded by hand (no rubric): answer with a reply")
    before = HandState.loads(found.hand_asked)
    if before is not None:  # kept when asked: the answer says before -> after
        after = state_of(session, rubric, sub.id)
        if after.same(before):
            raise RegradeRefused("its hand grading has not changed since the request (the same rubric items and "
                                 "line comments as then): change it on the submission's code page first, or "
                                 "answer with a reply")  # fmt: skip
        if not hand.released(session, assignment):
            return UNRELEASED
        return words(session, course, sub, found.user_id, before, after)
    change = hand.changed_since(session, sub.id, found.asked_at)  # a request asked before its state was kept
    if not change:
        raise RegradeRefused("its hand grading has not changed since the request: change it on the submission's "
                             "code page first, or answer with a reply")  # fmt: skip
    if not hand.released(session, assignment):
        return UNRELEASED
    said = []
    if change.items is not None:
        items = [f"{i.name} ({i.points:+g})" for i in rubric.items if i.name in set(change.items)]
        said.append(f"rubric items now applied: {', '.join(items) or 'none'}, {rubric.points(change.items):+g} "
                    "points in all")  # fmt: skip
    if change.added:
        said.append("line comments added: " + ", ".join(f"{c.path} line {c.line}" for c in change.added))
    if change.deleted:
        said.append(f"{change.deleted} line comment(s) taken back")
    return "Hand grading changed: " + "; ".join(said) + "."


# What an answer may do besides its reply, by name: each returns what it did, in words (None:
# it cannot be done now). The words of a change of hand grading are kept after the reply.
ACTIONS: dict[str, Callable[[Session, Course, Submission, RegradeRequest], str | None]] = {
    "rerun": _rerun,
    "hand": _hand,
}
KEPT = ("hand",)  # the actions whose words the request keeps, after the reply


def clean(text: str) -> str:
    return text.replace("\r\n", "\n").strip()


def asked(session: Session, user_id: int, assignment: str) -> int:
    """Requests a student made on an assignment (answered or not); in a team, its members' together."""
    return session.scalar(select(func.count()).select_from(RegradeRequest)
                          .where(RegradeRequest.user_id.in_(mates(session, user_id, assignment)),
                                 RegradeRequest.assignment == assignment)) or 0  # fmt: skip


def ask(session: Session, course: Course, user: User, sub: Submission, reason: str) -> RegradeRequest:
    """A request of ``user`` on their graded submission ``sub`` (their team's: any member asks),
    its hand grading kept as it is now (an answer by a change of it says before -> after);
    RegradeRefused when it is not theirs or not graded, the reason is empty or too long, one is open on it already, the course
    takes no more (its number reached, or past its closing date)."""
    reason = clean(reason)
    team = mates(session, sub.user_id, sub.assignment)
    if user.id not in team:
        raise RegradeRefused("only the submission's student (or team) may ask for its regrade")
    if sub.status != GRADED:
        raise RegradeRefused("only a graded submission can be regraded: wait for its grade")
    if not reason:
        raise RegradeRefused("say why it should be regraded (the 'reason')")
    if len(reason) > REASON_CHARS:
        raise RegradeRefused(f"the reason is too long: at most {REASON_CHARS} characters")
    settings = course.regrades
    if not settings.open_at(now()):
        raise RegradeRefused("regrade requests are closed for this course" + (
            f" (since {settings.until.isoformat()})" if settings.until and settings.max else ""))  # fmt: skip
    session.execute(select(User.id).where(User.id == user.id).with_for_update())  # one request of a student at a time
    hold(session, user.id, sub.assignment)  # and of a team: its row held until this one is taken
    if session.scalar(select(RegradeRequest.id).where(RegradeRequest.submission_id == sub.id,
                                                      RegradeRequest.state == OPEN)) is not None:  # fmt: skip
        raise RegradeRefused("a request on this submission is open already: wait for its answer")
    if asked(session, user.id, sub.assignment) >= settings.max:
        who = "your team" if len(team) > 1 else "you"
        raise RegradeRefused(f"{who} made the {settings.max} regrade request(s) the course allows on this assignment")
    assignment = course.assignments.get(sub.assignment)
    kept = state_of(session, assignment.rubric if assignment else None, sub.id)  # its answer's "before"
    found = RegradeRequest(submission_id=sub.id, user_id=user.id, assignment=sub.assignment, reason=reason,
                           state=OPEN, asked_at=now(), done="", hand_asked=kept.dumps())  # fmt: skip
    session.add(found)
    session.flush()
    return found


@dataclass(frozen=True)
class Answered:
    """An answer given: the request, and what its actions did (``{name: words}``)."""

    request: RegradeRequest
    done: dict[str, str]


def answer(session: Session, course: Course, staff: User, request_id: int, reply: str,
           actions: list[str]) -> Answered:  # fmt: skip
    """Staff's answer to an open request: the ``reply`` (may be empty when an action is taken)
    and the ``actions`` done on its submission; the student's mail enqueued. RegradeRefused when
    the request is unknown or answered, an action unknown, or nothing is answered."""
    reply = clean(reply)
    found = session.get(RegradeRequest, request_id, with_for_update=True)
    if found is None:
        raise NoSuchRequest("no such regrade request")
    if found.state != OPEN:
        raise RegradeRefused("this request was answered already")
    unknown = [a for a in actions if a not in ACTIONS]
    if unknown:
        raise RegradeRefused(f"unknown answer {unknown[0]!r}: give a reply, or {', '.join(ACTIONS)}")
    if len(reply) > REASON_CHARS:
        raise RegradeRefused(f"the reply is too long: at most {REASON_CHARS} characters")
    if not reply and not actions:
        raise RegradeRefused(f"answer with a reply, or {' or '.join(ACTIONS)}, or both")
    sub = session.get(Submission, found.submission_id)
    assert sub is not None  # a foreign key
    done: dict[str, str] = {}
    for name in dict.fromkeys(actions):
        said = ACTIONS[name](session, course, sub, found)
        if said is None:
            raise RegradeRefused(f"the {name} cannot be done now (the submission is being graded): try again later")
        done[name] = said
    found.state, found.answered_at, found.answered_by = ANSWERED, now(), staff.id
    kept = [done[name] for name in KEPT if name in done]
    found.reply, found.done = "\n\n".join([reply] * bool(reply) + kept) or None, ",".join(done)
    session.flush()
    mails.regrade_answered(session, course, found, sub)
    return Answered(found, done)


def view(found: RegradeRequest, sub: Submission | None = None, student: User | None = None,
         by: User | None = None) -> dict:  # fmt: skip
    """A request as a page shows it: staff's view adds the student (``student``) and who answered (``by``)."""
    data = {"id": found.id, "submission": found.submission_id, "assignment": found.assignment,
            "reason": found.reason, "state": found.state, "asked_at": found.asked_at.isoformat(),
            "answered_at": found.answered_at.isoformat() if found.answered_at else None, "reply": found.reply,
            "done": [d for d in found.done.split(",") if d]}  # fmt: skip
    if student is not None:
        data["student"] = {"name": student.name, "email": student.email}
    if by is not None:
        data["answered_by"] = by.email
    if sub is not None:
        data["filename"] = sub.filename
    return data


def of_submission(session: Session, sub: Submission) -> list[RegradeRequest]:
    """A submission's requests, oldest first."""
    return list(session.scalars(select(RegradeRequest).where(RegradeRequest.submission_id == sub.id)
                                .order_by(RegradeRequest.id)))  # fmt: skip


def queue(session: Session, state: str = OPEN) -> list[tuple[RegradeRequest, Submission, User]]:
    """The requests in ``state`` (open: the staff's queue), oldest first, with their submissions and students."""
    return [tuple(row) for row in session.execute(  # type: ignore[misc]
        select(RegradeRequest, Submission, User).join(Submission, Submission.id == RegradeRequest.submission_id)
        .join(User, User.id == RegradeRequest.user_id).where(RegradeRequest.state == state)
        .order_by(RegradeRequest.id)).all()]  # fmt: skip
