"""The code viewer and hand grading: a submission's files highlighted on the server, with its
tests' results (staff: any submission; a student: their own); staff apply the assignment's
rubric items and comment on lines (audited); the instructor releases an assignment's hand
grading (audited; undone the same way), after which its students see the items and comments,
as a list and on their code, and the points enter the grade (``policy``). Under an anonymous
rubric a TA sees "Student N" for a name on these pages until the release (one "Team N" for a
team), and no link leads from them to a page that names the student. A team's submission is
each member's: staff see the team's members named, and every member reads its released hand
grading."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from ..course import anonymity, hand
from ..course.course import Assignment
from ..course.policy import counted
from ..course.rubric import MAX_ITEMS, combined
from ..course.teams import mates, members, team_of
from ..database.models import GRADED, INSTRUCTOR, HandComment, HandGrade, HandRelease, Submission, User, now
from ..database.regrades import OPEN
from ..jobs.regrades import of_submission
from ..uploads import UploadError, upload_files
from ..web.code import CodeFile, code_file
from ..web.portal import Portal
from ..web.routes import (
    audit,
    checked_form,
    csrf_token,
    endpoint,
    find_assignment,
    need_instructor,
    need_staff,
    need_user,
    page,
    wants_json,
    whole,
)
from .assignments import private_shown
from .staff import undo_release

MAX_COMMENT = 2000  # characters


def routes(portal: Portal) -> list[BaseRoute]:
    """The code viewer, hand grading, and its release."""
    return [
        Route("/s/{sid}/code", endpoint(portal, code_page)),
        Route("/s/{sid}/hand", endpoint(portal, grade_items, max_fields=MAX_ITEMS + 2), methods=["POST"]),
        Route("/s/{sid}/comments", endpoint(portal, add_comment), methods=["POST"]),
        Route("/s/{sid}/comments/{cid:int}/delete", endpoint(portal, delete_comment), methods=["POST"]),
        Route("/class/{name}/grading", endpoint(portal, grading_page)),
        Route("/class/hand/release", endpoint(portal, release_hand), methods=["POST"]),
        Route("/class/hand/release/undo", endpoint(portal, unrelease_hand), methods=["POST"]),
    ]


def _submission(session: Session, user: User, sid: str) -> Submission:
    sub = session.get(Submission, sid)
    if sub is None or not (user.staff or user.id in mates(session, sub.user_id, sub.assignment)):
        raise HTTPException(404, "no such submission")  # another's (another team's) as one that does not exist
    return sub


def _files(portal: Portal, sub: Submission) -> list[CodeFile]:
    try:
        found = upload_files(sub.filename, sub.content)
    except UploadError:
        return [CodeFile(sub.filename, sub.size, not_shown=f"an archive that does not unpack ({sub.size:,} bytes)")]
    return [code_file(path, data) for path, data in found]


def _who(session: Session, viewer: User, sub: Submission, assignment: Assignment | None,
         is_released: bool) -> dict[str, Any] | None:  # fmt: skip
    """The student as ``viewer`` may see them: nothing for a student (the submission's, or a
    teammate), a pseudonym under anonymous grading (a team's one), else their name and e-mail,
    and in a team its name and members."""
    if not viewer.staff:
        return None
    team = team_of(session, sub.user_id, sub.assignment)
    if hand.anonymous_to(viewer, assignment, is_released):
        return {"name": anonymity.label(session, sub.user_id, sub.assignment), "email": None, "anonymous": True}
    owner = session.get(User, sub.user_id)
    who: dict[str, Any] = {"name": owner.name if owner else "", "email": owner.email if owner else None,
                           "anonymous": False}  # fmt: skip
    if team is not None:
        who["team"] = {"name": team.name, "members": [{"name": u.name, "email": u.email}
                                                      for u in members(session, team.id)]}  # fmt: skip
    return who


def code_page(portal: Portal, request: Request, form: Any) -> Response:
    """A submission's files, highlighted, each line numbered and anchored, its tests' results
    above them, and its hand grading: for staff, the rubric's form and the comments' form; for
    its student, the items and comments once released."""
    user = need_user(portal, request)
    with portal.read() as session:
        sub = _submission(session, user, request.path_params["sid"])
        assignment = portal.course.assignments.get(sub.assignment)
        is_released = hand.released(session, sub.assignment)
        who = _who(session, user, sub, assignment, is_released)
        grade = session.get(HandGrade, sub.id)
        notes = hand.comments(session, sub.id)
        files = _files(portal, sub)
        full = user.staff or private_shown(session, assignment)  # the total with the private tests: a secret until then
        data = _code_data(user, sub, assignment, files, who, grade, notes, is_released, full)
        if data["hand"] is not None and user.staff:  # the queue: a pseudonym where this page shows one
            data["regrades"] = [r.id for r in of_submission(session, sub) if r.state == OPEN]
    if wants_json(request):
        return page(request, "code.html", data, user=user)
    by_line: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for c in data["hand"]["comments"] if data["hand"] else ():
        by_line.setdefault((c["path"], c["line"]), []).append(c)
    return page(request, "code.html", data, user=user, files=files, by_line=by_line, staff=user.staff,
                instructor=user.role == INSTRUCTOR)  # fmt: skip


def _code_data(user: User, sub: Submission, assignment: Assignment | None, files: list[CodeFile],
               who: dict[str, Any] | None, grade: HandGrade | None, notes: list[HandComment],
               is_released: bool, full: bool) -> dict[str, Any]:  # fmt: skip
    """The code page's data; ``full``: the total with the private tests may be shown (staff, or
    the private results released), else the hand grading's points alone."""
    graded = sub.status == GRADED
    if user.staff:
        results = {"symbols": sub.symbols, "total": sub.total, "max_total": sub.max_total}
    else:
        results = {"public_symbols": sub.public_symbols, "public_total": sub.public_total,
                   "public_tests": assignment.public_tests if assignment else None}  # fmt: skip
    data: dict[str, Any] = {
        "submission": sub.id, "assignment": sub.assignment, "title": assignment.title if assignment else sub.assignment,
        "filename": sub.filename, "status": sub.status, "graded": graded, "student": who, "results": results,
        "feedback_link": not (who or {}).get("anonymous"),
        "files": [{"path": f.path, "size": f.size, "lines": len(f.lines), "not_shown": f.not_shown} for f in files],
        "hand": None,
    }  # fmt: skip
    rubric = assignment.rubric if assignment else None
    if rubric is None or not (user.staff or is_released):
        return data  # a student sees nothing of the hand grading before its release
    chosen = set(hand.applied(grade))
    index = {f.path: i for i, f in enumerate(files)}
    items = [{"name": i.name, "points": i.points, "comment": i.comment, "applied": i.name in chosen}
             for i in rubric.items if user.staff or i.name in chosen]  # fmt: skip
    points = rubric.points(chosen)
    data["hand"] = {
        "released": is_released, "items": items, "points": points if grade is not None else None,
        "total": combined(sub.total, points, sub.max_total) if full and grade is not None and sub.total is not None
        else None,
        "comments": [{"id": c.id, "path": c.path, "line": c.line, "text": c.text,
                      "anchor": f"f{index.get(c.path, 0)}-L{c.line}"} for c in notes],
        "combine": rubric.combine,
    }  # fmt: skip
    return data


def _staff_submission(portal: Portal, request: Request, form: Any) -> tuple[User, Any, str]:
    user = need_staff(portal, request)
    return user, checked_form(request, form), request.path_params["sid"]


def _rubric_of(portal: Portal, sub: Submission) -> Assignment:
    assignment = portal.course.assignments.get(sub.assignment)
    if assignment is None or assignment.rubric is None:
        raise HTTPException(400, f"{sub.assignment} has no rubric: give it one in course.yaml (rubric: {{items: ...}})")
    return assignment


def _after(portal: Portal, request: Request, sid: str, assignment: str, is_released: bool,
           extra: Mapping[str, Any]) -> Response:  # fmt: skip
    if is_released and portal.grades is not None:
        portal.grades.rescore(assignment, "hand grading")  # the released points changed: to the platforms
    if wants_json(request):
        return JSONResponse({**extra, "csrf": csrf_token(request)})
    return RedirectResponse(f"/s/{sid}/code#hand", 303)


def grade_items(portal: Portal, request: Request, form: Any) -> Response:
    """Apply the rubric items checked (``item``, each by name; none checked: none applied) to
    the submission; staff only, audited."""
    user, form, sid = _staff_submission(portal, request, form)
    names = [str(n) for n in form.getlist("item")]
    with portal.make.begin() as session:
        sub = _submission(session, user, sid)
        assignment = _rubric_of(portal, sub)
        rubric = assignment.rubric
        assert rubric is not None
        unknown = [n for n in names if rubric.item(n) is None]
        if unknown:
            raise HTTPException(400, f"no rubric item {unknown[0]!r} in {assignment.title}: choose among "
                                     f"{', '.join(i.name for i in rubric.items)}")  # fmt: skip
        chosen = [i.name for i in rubric.items if i.name in set(names)]
        found = session.get(HandGrade, sid)
        if found is None:
            session.add(HandGrade(submission_id=sid, items=json.dumps(chosen), graded_by=user.id))
        else:
            found.items, found.graded_by, found.graded_at = json.dumps(chosen), user.id, now()
        points = rubric.points(chosen)
        audit(session, user, "hand grade", f"{assignment.name}: submission {sid}: "
                                           f"{', '.join(chosen) or 'no items'} ({points:+g})")  # fmt: skip
        is_released = hand.released(session, assignment)
    return _after(portal, request, sid, assignment.name, is_released, {"submission": sid, "items": chosen,
                                                                         "points": points})  # fmt: skip


def add_comment(portal: Portal, request: Request, form: Any) -> Response:
    """A comment on a line (``path``: the file's path in the upload, ``line`` from 1, ``text``);
    staff only, audited."""
    user, form, sid = _staff_submission(portal, request, form)
    path, line_text, text = str(form.get("path", "")), str(form.get("line", "")).strip(), str(form.get("text", ""))
    text = text.strip()
    if not text or len(text) > MAX_COMMENT:
        raise HTTPException(400, f"write the comment (1 to {MAX_COMMENT} characters)")
    with portal.make.begin() as session:
        sub = _submission(session, user, sid)
        assignment = _rubric_of(portal, sub)
        files = {f.path: f for f in _files(portal, sub)}
        if path not in files:
            raise HTTPException(400, f"no file {path!r} in this submission: choose one of {', '.join(files)}")
        most = max(1, len(files[path].lines))
        line = whole(line_text)
        if line is None or not 1 <= line <= most:
            raise HTTPException(400, f"line must be a number from 1 to {most} (the file's lines); got {line_text!r}")
        note = HandComment(submission_id=sid, path=path, line=line, text=text, written_by=user.id)
        session.add(note)
        session.flush()
        audit(session, user, "hand comment", f"{assignment.name}: submission {sid}: {path} line {line_text}")
        cid = note.id
    return _after(portal, request, sid, assignment.name, False, {"submission": sid, "comment": cid})


def delete_comment(portal: Portal, request: Request, form: Any) -> Response:
    """Take a line comment back; staff only, audited."""
    user, form, sid = _staff_submission(portal, request, form)
    with portal.make.begin() as session:
        sub = _submission(session, user, sid)
        assignment = _rubric_of(portal, sub)
        note = session.get(HandComment, request.path_params["cid"])
        if note is None or note.submission_id != sid:
            raise HTTPException(404, "no such comment")
        session.delete(note)
        audit(session, user, hand.COMMENT_DELETED, f"{assignment.name}: submission {sid}: {note.path} "
                                                     f"line {note.line}")  # fmt: skip
    return _after(portal, request, sid, assignment.name, False, {"submission": sid, "deleted": note.id})


def grading_page(portal: Portal, request: Request, form: Any) -> Response:
    """An assignment's hand grading for staff: each student's counted submission (a pseudonym
    for a TA under anonymous grading), its automatic total and hand grade, a link to its code;
    for the instructor, the release and its undo."""
    user = need_staff(portal, request)
    assignment = find_assignment(portal, request.path_params["name"])
    if assignment.rubric is None:
        raise HTTPException(404, f"{assignment.title} has no rubric: give it one in course.yaml to grade it by hand")
    with portal.read() as session:
        is_released = hand.released(session, assignment)
        anonymous = hand.anonymous_to(user, assignment, is_released)
        rows = [c for (_, name), c in counted(session, portal.course).items() if name == assignment.name]
        grades = {g.submission_id: g for g in session.scalars(
            select(HandGrade).where(HandGrade.submission_id.in_([c.submission.id for c in rows])))}  # fmt: skip
        aliases = hand.pseudonyms(session) if anonymous else {}
        teams = {c.submission.id: team_of(session, c.submission.user_id, assignment.name) for c in rows}
        listed, seen = [], set()
        for c in rows:
            if c.submission.id in seen:
                continue  # a team's submission: one row, naming its members
            seen.add(c.submission.id)
            g, team = grades.get(c.submission.id), teams[c.submission.id]
            people = members(session, team.id) if team is not None else [c.user]
            if anonymous:
                name = hand.team_pseudonym(session, team) if team is not None else aliases.get(c.user.id, "")
            else:
                name = ", ".join(u.name for u in people) if team is not None else c.user.name
            listed.append({"student": name, "email": None if anonymous else ", ".join(u.email for u in people),
                           "team": None if anonymous or team is None else team.name,
                           "submission": c.submission.id, "total": c.submission.total,
                           "max_total": c.submission.max_total, "graded": g is not None,
                           "points": assignment.rubric.points(hand.applied(g)) if g is not None else None,
                           "score": c.grade.score.score})  # fmt: skip
    listed.sort(key=lambda r: (r["graded"], r["student"]))
    data = {"assignment": assignment.name, "title": assignment.title, "released": is_released,
            "anonymous": anonymous, "rubric_anonymous": assignment.rubric.anonymous,
            "items": [{"name": i.name, "points": i.points, "comment": i.comment} for i in assignment.rubric.items],
            "submissions": listed}  # fmt: skip
    return page(request, "grading.html", data, user=user, instructor=user.role == INSTRUCTOR)


def release_hand(portal: Portal, request: Request, form: Any) -> Response:
    """Release an assignment's hand grading to its students (instructors only; audited): they
    see the items and comments, and the points enter their grade."""
    user = need_instructor(portal, request)
    form = checked_form(request, form)
    assignment = find_assignment(portal, str(form.get("assignment", "")))
    with portal.make.begin() as session:
        done = session.get(HandRelease, assignment.name) is None
        if done:
            session.add(HandRelease(assignment=assignment.name, released_by=user.id))
            audit(session, user, "hand grading released", assignment.name)
    if done and portal.grades is not None:
        portal.grades.released(assignment.name)
    if wants_json(request):
        return JSONResponse({"hand_released": assignment.name, "csrf": csrf_token(request)})
    return RedirectResponse(f"/class/{assignment.name}/grading", 303)


def unrelease_hand(portal: Portal, request: Request, form: Any) -> Response:
    """Undo the release of an assignment's hand grading (instructors only; audited)."""
    return undo_release(portal, request, form, HandRelease, "hand grading release undone", "hand_unreleased",
                        "/class/{name}/grading")  # fmt: skip
