"""A student's pages: their assignments (home), an assignment with its upload form and their
submissions, a submission's receipt and feedback (live until graded). A student reaches only
their own submissions and their team's: another's id answers 404, as an id that does not
exist does. A TA grading an assignment anonymously reads its submissions' pages under the
student's label ("Student N", "Team N") until its hand grading is released."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session
from starlette.datastructures import UploadFile
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import (
    JSONResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from starlette.routing import BaseRoute, Route

from ...errors import GraderError
from ..course import anonymity, policy
from ..course.course import Assignment, Course
from ..course.deadlines import Deadlines, deadlines
from ..course.gtplab import test_records
from ..course.hand import anonymous_to, released
from ..course.teams import invitations, mates, members, team_of
from ..database.models import (
    FAILED,
    GRADED,
    QUEUED,
    RUNNING,
    Release,
    Submission,
    User,
    now,
)
from ..jobs.queue import DailyLimit, standings, submit, used_today
from ..mail import messages as mails
from ..uploads import check_upload
from ..web.portal import Portal, mailed
from ..web.routes import (
    checked_form,
    csrf_token,
    display_name,
    endpoint,
    find_assignment,
    need_user,
    page,
    signed_in,
    wants_json,
    whole,
)
from .accounts import user_data
from .feedback import cards, symbol_meaning
from .regrades import submission_regrades


def routes(portal: Portal) -> list[BaseRoute]:
    """A student's assignments, uploads and submissions."""
    return [
        Route("/", endpoint(portal, home)),
        Route("/a/{name}", endpoint(portal, assignment_page), methods=["GET", "POST"]),
        Route("/s/{sid}", endpoint(portal, submission_page)),
        Route("/s/{sid}/events", endpoint(portal, submission_events)),
    ]


def home(portal: Portal, request: Request, form: Any) -> Response:
    user = signed_in(portal, request)
    if user is None and wants_json(request):  # /api/ and scripts: told so, as every other page tells them
        need_user(portal, request)
    if user is None:
        return RedirectResponse("/signin", 303)  # a person: to the sign-in page
    if user.staff and not wants_json(request):
        return RedirectResponse("/class", 303)
    with portal.read() as session:
        items = [_assignment_data(a, used_today(session, user, a.name), deadlines(session, user, a))
                 for a in portal.course.assignments.values()]  # fmt: skip
    data = {"course": portal.course.title, "user": user_data(user), "assignments": items}
    return page(request, "home.html", data, user=user)


def _assignment_data(a: Assignment, used: int, mine: Deadlines | None = None) -> dict[str, Any]:
    """An assignment as a person sees it: with ``mine``, a student's own deadlines (their extension's)."""
    deadline = mine.deadline if mine else a.deadline
    hard = mine.hard_deadline if mine else a.hard_deadline
    return {
        "name": a.name,
        "title": a.title,
        "game": a.game,
        "public_tests": a.public_tests,
        "private_tests": a.private_tests,
        "per_day": a.per_day,
        "left_today": None if a.per_day is None else max(0, a.per_day - used),
        "deadline": deadline.isoformat() if deadline else None,
        "hard_deadline": hard.isoformat() if hard else None,
        "extension_days": mine.extra_days if mine else 0,
    }


def assignment_page(portal: Portal, request: Request, form: Any) -> Response:
    user = need_user(portal, request)
    assignment = find_assignment(portal, request.path_params["name"])
    if request.method == "POST":
        return upload(portal, request, form, user, assignment)
    with portal.read() as session:
        ours = mates(session, user.id, assignment.name)  # the team's submissions are each member's
        subs = session.scalars(select(Submission).where(Submission.user_id.in_(ours),
                                                        Submission.assignment == assignment.name)
                               .order_by(Submission.received_at.desc())).all()  # fmt: skip
        used = used_today(session, user, assignment.name)
        mine = deadlines(session, user, assignment)
        shown = private_shown(session, assignment)
        scores = {name: c.score for (_, name), c in policy.counted(session, portal.course, user).items()}
        team = _team_data(session, user, assignment)
        left = policy.available(session, portal.course, user, assignment) if team and team["id"] else None
    counts = scores.get(assignment.name)
    views = [{**student_view(s, assignment, shown), "counts": counts is not None and s.id == counts.submission,
              "late": policy.days_late(s.received_at, mine.deadline) > 0} for s in subs]  # fmt: skip
    data = {
        **_assignment_data(assignment, used, mine),
        **_late_data(portal.course, assignment, mine, scores, left),
        "team_size": assignment.team_size,
        "team": team,
        "submissions": views,
    }
    return page(request, "assignment.html", data, user=user, upload_kb=portal.course.upload_kb)


def _team_data(session: Session, user: User, assignment: Assignment) -> dict[str, Any] | None:
    """The student's team of ``assignment`` (None: not done in teams): its id and name (None:
    in none yet), members, whether it (or they) submitted, whether it is full, the invitations
    received and sent."""
    if assignment.team_size is None or user.staff:
        return None
    team = team_of(session, user.id, assignment.name)
    ours = members(session, team.id) if team is not None else []
    submitted = session.scalar(select(Submission.id).where(Submission.user_id.in_([m.id for m in ours] or [user.id]),
                                                           Submission.assignment == assignment.name).limit(1))  # fmt: skip
    return {"id": team.id if team else None, "name": team.name if team else None,
            "members": [{"name": m.name, "email": m.email} for m in ours], "submitted": submitted is not None,
            "full": len(ours) >= assignment.team_size, **invitations(session, user, assignment.name)}  # fmt: skip


def _late_data(course: Course, assignment: Assignment, mine: Deadlines,
               scores: Mapping[str, policy.Score], left: int | None = None) -> dict[str, Any]:  # fmt: skip
    """The student's late days left, and what an upload now would cost if it counted (``left``:
    their team's late days for it, the fewest a member has)."""
    cost = policy.upload_now(course, assignment, mine.deadline, scores, now(), left)
    return {"counts": assignment.counts, "late_penalty": assignment.late_penalty,
            "late_days_left": policy.late_days_left(course, scores.values()), "uses_late_days": assignment.late_days,
            "upload_now": {"days_late": cost.days_late, "late_days": cost.late_days, "penalty": cost.penalty}}  # fmt: skip


def upload(portal: Portal, request: Request, form: Any, user: User, assignment: Assignment) -> Response:
    limit = portal.course.upload_bytes
    form = checked_form(request, form)
    file = form.get("script")
    if not isinstance(file, UploadFile):
        raise HTTPException(400, "choose the script to upload (the form's 'script' field)")
    content = file.file.read(limit + 1)
    if len(content) > limit:
        raise HTTPException(413, f"the upload is too large: at most {portal.course.upload_kb} KiB")
    name = display_name(file.filename)
    try:
        check_upload(name, content, portal.course.config.commands, portal.course.config.entry,
                             gtp=assignment.over_gtp)  # fmt: skip
        with portal.make.begin() as session:
            sub = submit(session, user, assignment, name, content)
            mails.receipt(session, portal.course, user, sub)  # in the upload's transaction: sent if it is taken
    except DailyLimit as e:
        raise HTTPException(429, str(e)) from None
    except GraderError as e:
        raise HTTPException(400, str(e)) from None
    if portal.workers is not None:
        portal.workers.wake.set()
    mailed(portal)
    if wants_json(request):
        return JSONResponse({**student_view(sub, assignment), "csrf": csrf_token(request)}, 201)
    return RedirectResponse(f"/s/{sub.id}", 303)


STATUS_TEXT = {
    QUEUED: "received, waiting to be graded",
    RUNNING: "being graded",
    GRADED: "graded",
    FAILED: "could not be graded (not your fault): it does not count against today's submissions; submit it again",
}


PENDING = re.compile(r"^(\d+ private tests?): results shown when the instructor releases them$", re.M)


def feedback_text(sub: Submission, assignment: Assignment | None, shown: bool) -> str | None:
    """The student's feedback as text, as it reads now: written at grading time with the private
    tests waiting for a release, it says they are shown (their symbols, the total) once they
    are, and waiting again after a release is undone."""
    text = sub.student_text
    if not shown or assignment is None or text is None or sub.status != GRADED or sub.total is None:
        return text
    records = test_records(sub.records or "[]")
    private = "".join(r["symbol"] for r in records if not assignment.plan.is_public(r["index"]))
    return PENDING.sub(lambda m: f"{m.group(1)}: released, {private}; total {sub.total:g}/{sub.max_total}", text)


def student_view(sub: Submission, assignment: Assignment | None, shown: bool = False) -> dict[str, Any]:
    """What a student may see of their submission: the receipt and their public tests; once
    the private results are shown (``shown``), each private test's symbol and credit, with
    its board and diagnosis only where the course shows private boards."""
    view = {
        "id": sub.id,
        "assignment": sub.assignment,
        "filename": sub.filename,
        "received_at": sub.received_at.isoformat(),
        "late": bool(sub.late),
        "size": sub.size,
        "sha256": sub.sha256,
        "status": sub.status,
        "status_text": STATUS_TEXT.get(sub.status, sub.status),
        "public_symbols": sub.public_symbols,
        "public_total": sub.public_total,
        "public_tests": assignment.public_tests if assignment else None,
        "private_tests": assignment.private_tests if assignment else None,
        "feedback": feedback_text(sub, assignment, shown),
        "private_shown": shown,
    }
    if sub.change_reason is not None:  # rerun: the result it replaced, beside the new one, and why
        previous: dict[str, Any] = {"reason": sub.change_reason, "public_symbols": sub.previous_public_symbols,
                                    "public_total": sub.previous_public_total}  # fmt: skip
        if shown:
            previous.update(symbols=sub.previous_symbols, total=sub.previous_total, max_total=sub.previous_max_total)
        view["previous"] = previous
    if shown and assignment is not None and sub.status == GRADED and sub.records:
        keys = ("index", "symbol", "credit") + (("board", "token", "diagnosis") if assignment.private_boards else ())
        view["private"] = [{k: r[k] for k in keys} for r in test_records(sub.records)
                           if not assignment.plan.is_public(r["index"])]  # fmt: skip
        view.update(symbols=sub.symbols, total=sub.total, max_total=sub.max_total)
    return view


def private_shown(session: Session, assignment: Assignment | None) -> bool:
    """Whether students see this assignment's private results now."""
    if assignment is None:
        return False
    released = session.get(Release, assignment.name) is not None
    return assignment.private_shown(released, now())


def staff_view(sub: Submission, assignment: Assignment | None, owner: User | None,
               shown: bool = False) -> dict[str, Any]:  # fmt: skip
    """All of a submission for staff; ``private_shown`` says whether its students see their private results now."""
    return {
        **student_view(sub, assignment, shown),
        "student": {"name": owner.name, "email": owner.email} if owner else None,
        "symbols": sub.symbols,
        "total": sub.total,
        "max_total": sub.max_total,
        "private": None,
        "full_feedback": sub.full_text,
        "error": sub.error,
        "previous": None if sub.change_reason is None else {
            "reason": sub.change_reason, "public_symbols": sub.previous_public_symbols,
            "public_total": sub.previous_public_total, "symbols": sub.previous_symbols,
            "total": sub.previous_total, "max_total": sub.previous_max_total},
    }  # fmt: skip


def _visible_submission(session: Session, user: User, sid: str) -> Submission:
    sub = session.get(Submission, sid)
    if sub is None or not (user.staff or user.id in mates(session, sub.user_id, sub.assignment)):
        raise HTTPException(404, "no such submission")  # another's answers as one that does not exist
    return sub


def _team_named(session: Session, sub: Submission) -> dict[str, Any] | None:
    """The team of a submission, by name and members (None: its student's alone)."""
    found = team_of(session, sub.user_id, sub.assignment)
    if found is None:
        return None
    return {"name": found.name, "members": [{"name": u.name, "email": u.email} for u in members(session, found.id)]}


def submission_page(portal: Portal, request: Request, form: Any) -> Response:
    user = need_user(portal, request)
    with portal.read() as session:
        sub = _visible_submission(session, user, request.path_params["sid"])
        owner = session.get(User, sub.user_id)
        assignment = portal.course.assignments.get(sub.assignment)
        shown = private_shown(session, assignment)
        viewer = owner if user.staff or owner is None else user  # a teammate: the team's counted one, as theirs
        counted = policy.counted(session, portal.course, viewer).get((viewer.id, sub.assignment)) if viewer else None
        due = deadlines(session, owner, assignment).deadline if owner and assignment else None
        standing = standings(session, [sub.id]).get(sub.id) if sub.status in (QUEUED, RUNNING) else None
        hand_graded = (
            assignment is not None
            and assignment.rubric is not None
            and (user.staff or released(session, sub.assignment))
        )
        regrade_data = submission_regrades(portal, session, user, sub)
        anonymous = anonymous_to(user, assignment, released(session, sub.assignment))
        team = _team_named(session, sub) if user.staff and not anonymous else None
        alias = anonymity.label(session, sub.user_id, sub.assignment) if anonymous else None
    data = staff_view(sub, assignment, owner, shown) if user.staff else student_view(sub, assignment, shown)
    if alias is not None:  # a TA grading it anonymously: its label, as on the grading pages, and no teammate named
        data.update(student={"name": alias, "email": None}, anonymous=True)
        for r in regrade_data["requests"]:
            r.pop("asked_by", None)
    if user.staff and team is not None:  # a team's submission: staff see whose it is beside its submitter
        data["team"] = team
    data["late"] = policy.days_late(sub.received_at, due) > 0  # by the deadline now, as every view says
    data["regrades"] = regrade_data
    if standing is not None:  # where it stands on the queue; the page's stream tells each change
        data["standing"] = {"text": standing.text(), "position": standing.position,
                            "estimate_seconds": round(standing.estimate) if standing.estimate else None,
                            "tests_done": standing.done, "tests_total": standing.total}  # fmt: skip
    context: dict[str, Any] = {"counts": counted is not None and counted.submission.id == sub.id,
                               "counted": counted.submission.id if counted else None, "hand_graded": hand_graded}  # fmt: skip
    if not wants_json(request) and assignment is not None and sub.status == GRADED:
        plan = assignment.plan
        visible = (lambda i: True) if user.staff else plan.is_public  # a student's private tests: never a card
        asked = request.query_params.get("test", "")
        context["cards"] = cards(sub.records, assignment, visible, whole(asked),
                                 not user.staff)  # fmt: skip
        gtp = assignment.over_gtp
        context["meaning"] = lambda symbol: symbol_meaning(symbol, gtp)[0]
    return page(request, "submission.html", data, user=user, staff=user.staff,
                title=assignment.title if assignment else sub.assignment, **context)  # fmt: skip


def submission_events(portal: Portal, request: Request, form: Any) -> Response:
    """The submission's status as server-sent events (``text/event-stream``): its page's live
    update, one line ``data: STATUS`` now and at each change until the status is final."""
    user = need_user(portal, request)
    with portal.read() as session:
        sub = _visible_submission(session, user, request.path_params["sid"])
    return StreamingResponse(portal.watch.events(sub.id, sub.status, user.id), media_type="text/event-stream",
                             headers={"cache-control": "no-store", "x-accel-buffering": "no"})  # fmt: skip
