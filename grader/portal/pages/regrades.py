"""Regrade requests: a student asks on their graded submission's page (a reason, within the
course's limits); staff see the queue of open requests and answer each once (a reply, a rerun
of the submission by an instructor, a change of its hand grading made on its code page since
the request); the student reads the answer on the submission's page.
A student reaches only their own submissions' requests; every request and answer is audited."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from ..course import anonymity, hand
from ..course.regrades import REASON_CHARS
from ..course.teams import mates, members, team_of
from ..database.models import INSTRUCTOR, Submission, User, now
from ..database.regrades import ANSWERED, OPEN, RegradeRequest
from ..jobs import regrades
from ..web.portal import Portal, mailed
from ..web.routes import audit, checked_form, csrf_token, endpoint, need_staff, need_user, page, wants_json

ANSWERED_SHOWN = 50  # answered requests the queue's page lists below the open ones, newest first


def routes(portal: Portal) -> list[BaseRoute]:
    """A request asked on a submission; the staff's queue and their answers."""
    return [
        Route("/s/{sid}/regrade", endpoint(portal, ask), methods=["POST"]),
        Route("/class/regrades", endpoint(portal, queue_page)),
        Route("/class/regrades/{rid:int}", endpoint(portal, answer), methods=["POST"]),
    ]


def submission_regrades(portal: Portal, session: Session, user: User, sub: Submission) -> dict[str, Any]:
    """What a submission's page shows of its requests: each with its answer, and for its student
    whether they may ask now (``can_ask``) or why not (``closed``)."""
    found = regrades.of_submission(session, sub)
    team = mates(session, sub.user_id, sub.assignment)
    data: dict[str, Any] = {"requests": [regrades.view(r) for r in found], "reason_chars": REASON_CHARS}
    if len(team) > 1:  # a team's: every member reads each request and its answer, and who asked
        names = {u.id: u.name or u.email for u in session.scalars(select(User).where(User.id.in_(team)))}
        for shown, r in zip(data["requests"], found):
            shown["asked_by"] = names.get(r.user_id, "")
    if user.id in team and not user.staff:
        settings = portal.course.regrades
        made = regrades.asked(session, user.id, sub.assignment)
        data.update(left=max(0, settings.max - made), max=settings.max)
        why = None
        if not settings.open_at(now()):
            why = "Regrade requests are closed."
        elif any(r.state == OPEN for r in found):
            why = f"{'A' if len(team) > 1 else 'Your'} request is open: staff answer it here."
        elif made >= settings.max:
            why = f"{'Your team' if len(team) > 1 else 'You'} made the {settings.max} regrade request(s) the course allows on this assignment."
        data.update(can_ask=why is None and sub.status == "graded", closed=why)
    return data


def ask(portal: Portal, request: Request, form: Any) -> Response:
    """A regrade request on the signed-in student's own graded submission (another's answers 404,
    as a submission that does not exist); 400 with the reason when it is not taken."""
    user = need_user(portal, request)
    form = checked_form(request, form)
    sid = request.path_params["sid"]
    try:
        with portal.make.begin() as session:
            sub = session.get(Submission, sid)
            if sub is None or user.id not in mates(session, sub.user_id, sub.assignment):
                raise HTTPException(404, "no such submission")  # another's (another team's) as one that does not exist
            found = regrades.ask(session, portal.course, user, sub, str(form.get("reason") or ""))
            audit(session, user, "regrade asked", f"{sub.assignment}: submission {sub.id} (request {found.id})")
            data = regrades.view(found)
    except regrades.RegradeRefused as e:
        raise HTTPException(400, str(e)) from None
    if wants_json(request):
        return JSONResponse({**data, "csrf": csrf_token(request)}, 201)
    return RedirectResponse(f"/s/{sid}#regrades", 303)


def queue_page(portal: Portal, request: Request, form: Any) -> Response:
    """The staff's queue: the open requests, oldest first (each with its student and team,
    submission, reason and the answer's form), then the latest answered; a TA grading an
    assignment anonymously sees its students' pseudonyms."""
    user = need_staff(portal, request)
    with portal.read() as session:
        opened = regrades.queue(session, OPEN)
        answered = regrades.queue(session, ANSWERED)[-ANSWERED_SHOWN:][::-1]
        by = {
            u.id: u for u in session.scalars(select(User).where(User.id.in_({r.answered_by for r, _, _ in answered})))
        }
        data = {"open": [{**_row(portal, session, user, r, s, u), "hand": _by_hand(portal, s)} for r, s, u in opened],
                "answered": [_row(portal, session, user, r, s, u, by.get(r.answered_by or 0)) for r, s, u in answered],
                "reason_chars": REASON_CHARS, "actions": list(regrades.ACTIONS)}  # fmt: skip
    return page(request, "regrades.html", data, user=user, instructor=user.role == INSTRUCTOR)


def _row(portal: Portal, session: Session, viewer: User, found: RegradeRequest, sub: Submission, student: User,
         by: User | None = None) -> dict[str, Any]:  # fmt: skip
    """A request as the queue shows it to ``viewer``: its student and team named, or for a TA
    grading the assignment anonymously (before its hand grading's release) their pseudonym
    ("Team N" for a team) and no e-mail, its links to the code page only."""
    assignment = portal.course.assignments.get(found.assignment)
    if hand.anonymous_to(viewer, assignment, hand.released(session, found.assignment)):
        name = anonymity.label(session, student.id, found.assignment)
        return {**regrades.view(found, sub, None, by), "student": {"name": name, "email": None}, "anonymous": True}
    return {**regrades.view(found, sub, student, by), **_team(session, found)}


def _team(session: Session, found: RegradeRequest) -> dict[str, Any]:
    """The team of a request's student on its assignment, as the queue names it (nothing when alone)."""
    team = team_of(session, found.user_id, found.assignment)
    if team is None:
        return {}
    return {"team": {"name": team.name, "members": [{"name": u.name, "email": u.email}
                                                    for u in members(session, team.id)]}}  # fmt: skip


def _by_hand(portal: Portal, sub: Submission) -> bool:
    """Whether the submission's assignment is graded by hand (a rubric): its answer may be a change of hand grading."""
    assignment = portal.course.assignments.get(sub.assignment)
    return assignment is not None and assignment.rubric is not None


def answer(portal: Portal, request: Request, form: Any) -> Response:
    """Staff's answer to an open request: ``reply``; ``hand``: the change of its hand grading
    made on its code page since the request (its account kept after the reply); from an
    instructor, ``rerun`` (the submission graded again, as the class page's rerun does);
    audited, the student mailed."""
    user = need_staff(portal, request)
    form = checked_form(request, form)
    actions = [name for name in regrades.ACTIONS if form.get(name) in ("on", "1", "true", "yes")]
    if "rerun" in actions and user.role != INSTRUCTOR:
        raise HTTPException(403, "only an instructor reruns a submission: answer with a reply, or ask an instructor")
    try:
        with portal.make.begin() as session:
            done = regrades.answer(session, portal.course, user, request.path_params["rid"],
                                   str(form.get("reply") or ""), actions)  # fmt: skip
            found: RegradeRequest = done.request
            audit(session, user, "regrade answered", f"{found.assignment}: submission {found.submission_id} "
                  f"(request {found.id})" + "".join(f"; {d}" for d in done.done.values()))  # fmt: skip
            data = regrades.view(found)
    except regrades.RegradeRefused as e:
        raise HTTPException(404 if isinstance(e, regrades.NoSuchRequest) else 400, str(e)) from None
    if done.done and portal.workers is not None:
        portal.workers.wake.set()
    mailed(portal)
    if wants_json(request):
        return JSONResponse({**data, "csrf": csrf_token(request)})
    return RedirectResponse("/class/regrades", 303)
