"""A student's team of an assignment done in teams, formed on the assignment's page: invite a
classmate by e-mail, accept or decline an invitation (or take back one sent), leave the team
until its first submission. Every form carries its CSRF token; each change is audited. An
invitation that is not the student's answers 404, as one that does not exist does."""

from __future__ import annotations

from typing import Any

from sqlalchemy.exc import IntegrityError
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from ..course import teams
from ..database.models import STUDENT, User
from ..web.portal import Portal
from ..web.routes import audit, checked_form, csrf_token, endpoint, find_assignment, need_user, wants_json


def routes(portal: Portal) -> list[BaseRoute]:
    """The team forms of an assignment's page."""
    return [Route(f"/a/{{name}}/team/{action}", endpoint(portal, handler), methods=["POST"])
            for action, handler in (("invite", invite), ("accept", accept), ("decline", decline), ("leave", leave))]  # fmt: skip


def _asked(portal: Portal, request: Request, form: Any) -> tuple[User, Any, Any]:
    """The student asking, the assignment (done in teams) and the form, its CSRF token checked."""
    user = need_user(portal, request)
    assignment = find_assignment(portal, request.path_params["name"])
    if user.role != STUDENT or assignment.team_size is None:
        raise HTTPException(404, "no such page: teams are for the students of an assignment done in teams")
    return user, assignment, checked_form(request, form)


def _done(request: Request, name: str, said: dict[str, Any]) -> Response:
    if wants_json(request):
        return JSONResponse({**said, "csrf": csrf_token(request)})
    return RedirectResponse(f"/a/{name}#team", 303)


def invite(portal: Portal, request: Request, form: Any) -> Response:
    user, assignment, form = _asked(portal, request, form)
    email = str(form.get("email") or "")
    try:
        with portal.make.begin() as session:
            made = teams.invite(session, portal.course, user, assignment, email)
            audit(session, user, "team invitation", f"{assignment.name}: invited {email.strip().lower()}")
            said = {"invitation": made.id}
    except teams.TeamError as e:
        raise HTTPException(409, str(e)) from None
    return _done(request, assignment.name, said)


def accept(portal: Portal, request: Request, form: Any) -> Response:
    user, assignment, form = _asked(portal, request, form)
    try:
        with portal.make.begin() as session:
            team = teams.accept(session, user, assignment, form.get("invitation"))
            audit(session, user, "team joined", f"{assignment.name}: team {team.name!r} (id {team.id})")
            said = {"team": team.id, "name": team.name}
    except LookupError:
        raise HTTPException(404, "no such invitation") from None
    except teams.TeamError as e:
        raise HTTPException(409, str(e)) from None
    except IntegrityError:  # the database's one team per student, against another acceptance at the same moment
        raise HTTPException(409, "the team changed at the same moment: reload the page and try again") from None
    return _done(request, assignment.name, said)


def decline(portal: Portal, request: Request, form: Any) -> Response:
    user, assignment, form = _asked(portal, request, form)
    try:
        with portal.make.begin() as session:
            gone = teams.decline(session, user, assignment, form.get("invitation"))
            what = "declined" if gone.to_user == user.id else "took back"
            audit(session, user, "team invitation", f"{assignment.name}: {what} invitation {gone.id}")
    except LookupError:
        raise HTTPException(404, "no such invitation") from None
    return _done(request, assignment.name, {"declined": gone.id})


def leave(portal: Portal, request: Request, form: Any) -> Response:
    user, assignment, form = _asked(portal, request, form)
    try:
        with portal.make.begin() as session:
            team = teams.leave(session, user, assignment)
            audit(session, user, "team left", f"{assignment.name}: team {team.name!r} (id {team.id})")
            said = {"left": team.id}
    except teams.TeamError as e:
        raise HTTPException(409, str(e)) from None
    return _done(request, assignment.name, said)
