"""The mails the portal sends, each enqueued in the caller's transaction (``outbox.enqueue``):
a one-time sign-in link, a one-time link to set a new password, an upload's receipt with its SHA-256, a submission graded (its
public tests only until the private results are shown), an assignment's results released, a
regrade request answered. A team's upload is receipted, and its grade told, to every member
(each under their own choice of mails); a regrade answer goes to whoever asked."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import select
from sqlalchemy.orm import Session

from ..accounts.resets import RESET_MINUTES, new_reset_token
from ..accounts.signin import LINK_HOURS, new_signin_token
from ..course.course import Course
from ..course.mail import GRADED, RECEIPT, REGRADE, RELEASED, RESET, SIGNIN
from ..course.policy import counted
from ..course.teams import mates
from ..database.mail import MailMessage
from ..database.models import Release, Submission, User, now
from ..database.regrades import RegradeRequest
from .outbox import base_url, enqueue, wanted

LATE = "Late:     yes\n"
FOOTER = "\n\n--\n{course}\nTurn off mails like this one on your preferences page: {base}/preferences\n"


def _body(session: Session, course: Course, text: str) -> str:
    return text + FOOTER.format(course=course.title, base=base_url(session))


def signin_link(session: Session, course: Course, user: User, token: str | None = None) -> MailMessage | None:
    """A one-time sign-in link mailed to ``user``: ``token``'s (made in this transaction), else a
    new one; None, and no link made, when the course or the person turned sign-in mails off."""
    if not wanted(session, course, user, SIGNIN):
        return None
    link = f"{base_url(session)}/link/{token or new_signin_token(session, user)}"
    expires = now() + dt.timedelta(hours=LINK_HOURS)  # the link's (made now, or a moment ago in this transaction)
    text = (f"Hello {user.name},\n\nYour one-time sign-in link to {course.title}:\n\n{link}\n\n"
            f"It works once, within {LINK_HOURS} hours. Once signed in, you may set a password for next time.\n"
            "If you did not ask for it, ignore this mail: nobody can use the link but who reads it.")  # fmt: skip
    return enqueue(session, course, user, SIGNIN, f"Your sign-in link: {course.title}", _body(session, course, text),
                   expires)  # fmt: skip


def password_reset(session: Session, course: Course, user: User) -> MailMessage | None:
    """A one-time link to set a new password, mailed to ``user`` on their request; None, and no
    link made, when the course or the person turned these mails off."""
    if not wanted(session, course, user, RESET):
        return None
    token, expires = new_reset_token(session, user)
    text = (f"Hello {user.name},\n\nSomeone (you, we hope) asked to set a new password for {course.title}. "
            f"Your one-time link:\n\n{base_url(session)}/reset/{token}\n\n"
            f"It works once, within {RESET_MINUTES} minutes; setting the password signs out your other sessions "
            "and revokes your API tokens.\n"
            "If you did not ask for it, ignore this mail: your password stays as it is.")  # fmt: skip
    return enqueue(session, course, user, RESET, f"Set a new password: {course.title}", _body(session, course, text),
                   expires)  # fmt: skip


def _team(session: Session, sub: Submission) -> list[User]:
    """Whom a submission's mails go to: its student, or every member of its team (the submitter first)."""
    ids = mates(session, sub.user_id, sub.assignment)
    found = {u.id: u for u in session.scalars(select(User).where(User.id.in_(ids)))}
    return [found[i] for i in sorted(found, key=lambda i: (i != sub.user_id, i))]


def _by(user: User, submitter: User | None) -> str:
    """Whose upload it was, as a teammate's mail says it."""
    return (
        ""
        if submitter is None or submitter.id == user.id
        else f" (by {submitter.name or submitter.email}, for your team)"
    )


def receipt(session: Session, course: Course, user: User, sub: Submission) -> list[MailMessage]:
    """An upload's receipt: what was received, when, and its SHA-256 (the student can check their
    file), to its submitter ``user`` and, in a team, to each other member."""
    assignment = course.assignments.get(sub.assignment)
    title = assignment.title if assignment else sub.assignment
    made = []
    for member in _team(session, sub):
        text = (f"Hello {member.name},\n\nYour upload to {title}{_by(member, user)} was received.\n\n"
                f"File:     {sub.filename}\nSize:     {sub.size} bytes\nReceived: {sub.received_at.isoformat()} (UTC)\n"
                f"SHA-256:  {sub.sha256}\n{LATE if sub.late else ''}\n"
                f"It is graded next; its page: {base_url(session)}/s/{sub.id}")  # fmt: skip
        found = enqueue(session, course, member, RECEIPT, f"Received: {title}", _body(session, course, text))
        made += [found] if found is not None else []
    return made


def graded(session: Session, course: Course, sub: Submission) -> list[MailMessage]:
    """A submission graded, to its student or each member of its team: its public tests' result;
    the whole total only once the students may see the private tests (released, or past the
    deadline where the course says so)."""
    submitter = session.get(User, sub.user_id)
    assignment = course.assignments.get(sub.assignment)
    if submitter is None or assignment is None:
        return []
    shown = assignment.private_shown(session.get(Release, assignment.name) is not None, now())
    lines = [
        f"Public tests: {_points(sub.public_total)} of {assignment.public_tests}"
        + (f"  ({sub.public_symbols})" if sub.public_symbols else "")
    ]
    if shown and sub.total is not None:
        lines.append(f"Total:        {_points(sub.total)} of {sub.max_total}")
    elif assignment.private_tests:
        lines.append(f"Private tests ({assignment.private_tests}): their results come when your instructor "
                     "releases them.")  # fmt: skip
    made = []
    for user in _team(session, sub):
        text = (f"Hello {user.name},\n\nYour upload {sub.filename} to {assignment.title}{_by(user, submitter)} "
                "was graded.\n\n" + "\n".join(lines) + f"\n\nIts feedback: {base_url(session)}/s/{sub.id}")  # fmt: skip
        found = enqueue(session, course, user, GRADED, f"Graded: {assignment.title}", _body(session, course, text))
        made += [found] if found is not None else []
    return made


def released(session: Session, course: Course, assignment_name: str) -> int:
    """An assignment's results released: a mail to each student with a graded submission to it; the count."""
    assignment = course.assignments.get(assignment_name)
    if assignment is None or course.mail is None or not course.mail.sends(RELEASED):
        return 0
    made = 0
    for (_, name), found in counted(session, course).items():
        if name != assignment_name:
            continue
        user, sub, grade = found.user, found.submission, found.grade
        score = f"{_points(sub.total)} of {sub.max_total}"
        if grade.score.penalty:
            score += f"; after the late policy {_points(grade.score.score)} ({grade.why})"
        text = (f"Hello {user.name},\n\nThe results of {assignment.title}'s private tests are released.\n\n"
                f"Your counted upload ({sub.filename}): {score}\n\n"
                f"See every test: {base_url(session)}/a/{assignment.name}")  # fmt: skip
        made += enqueue(session, course, user, RELEASED, f"Results released: {assignment.title}",
                        _body(session, course, text)) is not None  # fmt: skip
    return made


ANSWER_WORDS = {
    "rerun": "Your submission is graded again; its page shows the new result beside the old one.",
    "hand": "Its code page shows the hand grading: {base}/s/{sid}/code",
}


def regrade_answered(session: Session, course: Course, request: RegradeRequest, sub: Submission) -> MailMessage | None:
    """A regrade request answered, to whoever asked (in a team, their teammates read it on the
    submission's page): the reply, and what was done (a rerun), with the submission's page."""
    user = session.get(User, request.user_id)
    assignment = course.assignments.get(request.assignment)
    if user is None:
        return None
    title = assignment.title if assignment else request.assignment
    done = [ANSWER_WORDS.get(d, d).format(base=base_url(session), sid=sub.id) for d in request.done.split(",") if d]
    text = (f"Hello {user.name},\n\nYour regrade request on {sub.filename} ({title}) was answered.\n\n"
            + (f"The reply:\n\n{request.reply}\n\n" if request.reply else "")
            + "".join(d + "\n\n" for d in done)
            + f"Its page: {base_url(session)}/s/{sub.id}")  # fmt: skip
    return enqueue(session, course, user, REGRADE, f"Regrade answered: {title}", _body(session, course, text))


def _points(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:g}"
