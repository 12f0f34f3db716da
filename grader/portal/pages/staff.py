"""The staff's pages of the class: the class table and its gradebook CSV, a student's
history on an assignment, the grading queue, the audit log; for instructors, releasing
private results, reruns and extensions (audited)."""

from __future__ import annotations

import csv
import datetime as dt
import io
from typing import Any

from sqlalchemy import select
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import (
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
)
from starlette.routing import BaseRoute, Route

from ...runs.text import safe_cell
from ..course import anonymity, policy
from ..course.deadlines import deadlines, mark_late
from ..course.hand import released_points
from ..course.teams import mates, team_names_of
from ..database.models import (
    QUEUED,
    RUNNING,
    STUDENT,
    AuditEntry,
    Extension,
    HandRelease,
    Job,
    Release,
    Submission,
    User,
    now,
)
from ..jobs.queue import rerun
from ..mail import messages as mails
from ..mail.outbox import outbox_state
from ..web.portal import Portal, mailed
from ..web.routes import (
    audit,
    checked_form,
    csrf_token,
    endpoint,
    find_assignment,
    need_instructor,
    need_staff,
    page,
    wants_json,
    whole,
)
from .assignments import private_shown, staff_view
from .classview import table_view, under_way


def routes(portal: Portal) -> list[BaseRoute]:
    """The class table and what staff do from it."""
    return [
        Route("/class", endpoint(portal, class_page)),
        Route("/class/release", endpoint(portal, release), methods=["POST"]),
        Route("/class/release/undo", endpoint(portal, unrelease), methods=["POST"]),
        Route("/class/audit", endpoint(portal, audit_page)),
        Route("/class/audit.csv", endpoint(portal, audit_csv)),
        Route("/class/rerun", endpoint(portal, rerun_page), methods=["POST"]),
        Route("/class/extension", endpoint(portal, extension), methods=["POST"]),
        Route("/class.csv", endpoint(portal, gradebook)),
        Route("/class/queue", endpoint(portal, queue_page)),
        Route("/class/mail", endpoint(portal, mail_page)),
        Route("/class/exports", endpoint(portal, exports_page)),
        Route("/class/{name}/students/{email}", endpoint(portal, history_page)),
    ]


def class_page(portal: Portal, request: Request, form: Any) -> Response:
    """The class table: each student's counted submission (latest or best), its symbols, total,
    late days spent and penalty, and each student's late days used."""
    user = need_staff(portal, request)
    data = class_table(portal, user)
    if wants_json(request):
        return page(request, "class.html", data, user=user)
    shown = table_view(data, request.query_params)
    hand_graded = {n: a.title for n, a in portal.course.assignments.items() if a.rubric is not None}
    return page(request, "class.html", data, user=user, lti=portal.course.lti is not None, hand_graded=hand_graded,
                **shown)  # fmt: skip


def exports_page(portal: Portal, request: Request, form: Any) -> Response:
    """The gradebook's exports: the CSV, and each assignment's Moodle and Canvas imports."""
    user = need_staff(portal, request)
    with portal.read() as session:
        hidden = anonymity.hidden_from(session, user, portal.course)  # a TA's downloads of them: refused until release
    titles = {n: a.title for n, a in portal.course.assignments.items() if n not in hidden}
    return page(request, "exports.html", {"course": portal.course.title, "assignments": titles}, user=user)


def class_table(portal: Portal, viewer: User) -> dict[str, Any]:
    """The class table's data as ``viewer`` may see it: a TA grading an assignment anonymously
    finds no column of it (``anonymous`` names it: graded from its hand-grading page), neither
    its cells, nor its submissions under way, nor its teams, until its hand grading's release."""
    with portal.read() as session:
        hidden = anonymity.hidden_from(session, viewer, portal.course)
        names = [n for n in portal.course.assignments if n not in hidden]
        students = session.scalars(select(User).where(User.role == STUDENT).order_by(User.name)).all()
        counted = policy.counted(session, portal.course)
        team_names = team_names_of(session, portal.course)
        going, busy = under_way(session)
        released = {r.assignment for r in session.scalars(select(Release)).all()}
    scores: dict[int, list[policy.Score]] = {}
    for (uid, _), one in counted.items():
        scores.setdefault(uid, []).append(one.score)
    rows = []
    for s in students:
        cells: dict[str, dict[str, Any] | None] = {}
        for name in names:
            c = counted.get((s.id, name))
            cells[name] = None if c is None else {
                "submission": c.submission.id, "symbols": c.submission.symbols, "total": c.submission.total,
                "max_total": c.submission.max_total, **c.grade.data()}  # fmt: skip
        used = policy.late_days_used(scores.get(s.id, ()))
        teams = {name: team_names[(s.id, name)] for name in names if (s.id, name) in team_names}
        going_on = {name: u for name, u in busy.get(s.id, {}).items() if name not in hidden}
        rows.append({"name": s.name, "email": s.email, "assignments": cells, "late_days_used": used,
                     "under_way": going_on, "teams": teams})  # fmt: skip
    titles = {n: portal.course.assignments[n].title for n in names}
    anonymous = {n: a.title for n, a in portal.course.assignments.items() if n in hidden}
    return {"course": portal.course.title, "assignments": titles, "students": rows, "queue": going["waiting"],
            "grading": going, "released": sorted(released), "late_days": portal.course.late_days,
            "anonymous": anonymous}  # fmt: skip


def history_page(portal: Portal, request: Request, form: Any) -> Response:
    """Every submission of one student to an assignment, newest first, for staff: symbols,
    totals, days late and what the late policy makes of each, reruns, errors; the counted one marked."""
    user = need_staff(portal, request)
    assignment = find_assignment(portal, request.path_params["name"])
    email = request.path_params["email"].strip().lower()
    with portal.read() as session:
        if assignment.name in anonymity.hidden_from(session, user, portal.course):
            raise HTTPException(403, anonymity.refusal(assignment))
        student = session.scalar(select(User).where(User.email == email, User.role == STUDENT))
        if student is None:
            raise HTTPException(404, f"no student {email!r} on the roster")
        subs = session.scalars(select(Submission).where(Submission.user_id.in_(mates(session, student.id,
                                                                                    assignment.name)),
                                                        Submission.assignment == assignment.name)
                               .order_by(Submission.received_at.desc())).all()  # fmt: skip
        mine = deadlines(session, student, assignment)
        scores = {name: c.score for (_, name), c in policy.counted(session, portal.course, student).items()}
        shown = private_shown(session, assignment)
        hand = released_points(session, portal.course, [(s.id, s.assignment) for s in subs])
        left = policy.available(session, portal.course, student, assignment)  # a team's: the fewest a member has
    counted = scores.get(assignment.name)
    rows = []
    digest = portal.course.plan_digest(assignment)
    for sub in subs:
        scored = policy.score(assignment, policy.candidate(sub, hand), mine.deadline, left)
        graded = policy.grade(scored, sub, mine.extra_days, digest)
        rows.append({**staff_view(sub, assignment, None, shown), "full_feedback": None, **graded.data(),
                     "counts": counted is not None and counted.submission == sub.id})  # fmt: skip
    data = {"assignment": assignment.name, "title": assignment.title, "counts": assignment.counts,
            "student": {"name": student.name, "email": student.email}, "extension_days": mine.extra_days,
            "deadline": mine.deadline.isoformat() if mine.deadline else None,
            "late_days_used": policy.late_days_used(scores.values()), "late_days": portal.course.late_days,
            "submissions": rows}  # fmt: skip
    return page(request, "history.html", data, user=user)


def queue_page(portal: Portal, request: Request, form: Any) -> Response:
    """The grading queue for staff: each queued or running job, oldest first, with its age and
    the worker that claimed it."""
    user = need_staff(portal, request)
    when = now()
    with portal.read() as session:
        found = session.execute(select(Job, Submission, User).join(Submission, Submission.id == Job.submission_id)
                                .join(User, User.id == Submission.user_id).order_by(Job.id)).all()  # fmt: skip
        hidden = anonymity.hidden_from(session, user, portal.course)
        who = {sub.id: anonymity.label(session, owner.id, sub.assignment) if sub.assignment in hidden
               else owner.email for _, sub, owner in found}  # fmt: skip
    jobs = [{"submission": sub.id, "student": who[sub.id], "assignment": sub.assignment, "state": job.state,
             "received_at": sub.received_at.isoformat(), "age_seconds": round(_age(when, sub.received_at), 1),
             "worker": job.claimed_by, "claimed_at": job.claimed_at.isoformat() if job.claimed_at else None,
             "attempts": job.attempts, "rerun": sub.change_reason}
            for job, sub, owner in found]  # fmt: skip
    data = {"queued": sum(j["state"] == QUEUED for j in jobs), "running": sum(j["state"] == RUNNING for j in jobs),
            "jobs": jobs}  # fmt: skip
    return page(request, "queue.html", data, user=user)


def mail_page(portal: Portal, request: Request, form: Any) -> Response:
    """The outbox for staff: how many mails were sent, wait, or fail (with the mail server's
    last error), and the newest messages (to whom, what kind, their state; never a body)."""
    user = need_staff(portal, request)
    with portal.read() as session:
        data = outbox_state(session)
        hidden = anonymity.hidden_from(session, user, portal.course)
    data["messages"] = anonymity.outbox_seen(data["messages"], [portal.course.assignments[n] for n in hidden])
    mail = portal.course.mail
    data["server"] = None if mail is None else {"host": mail.host, "port": mail.port, "security": mail.security,
                                                "from": mail.from_address, "send": sorted(mail.send)}  # fmt: skip
    return page(request, "mail.html", data, user=user)


def _age(when: dt.datetime, since: dt.datetime) -> float:
    """Seconds from ``since`` (naive: UTC, as SQLite gives it back) to ``when``."""
    return (when - (since if since.tzinfo else since.replace(tzinfo=dt.timezone.utc))).total_seconds()


def release(portal: Portal, request: Request, form: Any) -> Response:
    """Release an assignment's private results to its students (instructors only; audited):
    the class page's button first asks for a confirmation (a page saying what the students
    will see, its form sending ``confirm``); a JSON request is its own confirmation."""
    user = need_instructor(portal, request)
    form = checked_form(request, form)
    assignment = find_assignment(portal, str(form.get("assignment", "")))
    if not wants_json(request) and form.get("confirm") != "yes":
        with portal.read() as session:
            done = session.get(Release, assignment.name) is not None
            graded = len({uid for (uid, name) in policy.counted(session, portal.course) if name == assignment.name})
        data = {"assignment": assignment.name, "title": assignment.title, "released": done,
                "private_tests": assignment.private_tests, "students": graded}  # fmt: skip
        return page(request, "release.html", data, user=user)
    with portal.make.begin() as session:
        released = session.get(Release, assignment.name) is None
        if released:
            session.add(Release(assignment=assignment.name, released_by=user.id))
            audit(session, user, "release", assignment.name)
            session.flush()
            mails.released(session, portal.course, assignment.name)
    mailed(portal)
    if released and portal.grades is not None:
        portal.grades.released(assignment.name)  # the scores with their private tests, to the platforms
    return JSONResponse({"released": assignment.name}) if wants_json(request) else RedirectResponse("/class", 303)


def unrelease(portal: Portal, request: Request, form: Any) -> Response:
    """Undo a release (instructors only; audited): the students see their public tests only
    again (unless the course shows private results after a deadline that has passed)."""
    return undo_release(portal, request, form, Release, "release undone", "unreleased", "/class")


def undo_release(portal: Portal, request: Request, form: Any, kind: type[Release] | type[HandRelease], said: str,
                 key: str, back: str) -> Response:  # fmt: skip
    """Undo the release (a row of ``kind``) of the form's assignment (instructors only; audited
    as ``said``): the platforms are sent the scores as the students see them now. Answers
    ``{key: name}``, or goes to ``back`` (``{name}`` in it the assignment's)."""
    user = need_instructor(portal, request)
    form = checked_form(request, form)
    assignment = find_assignment(portal, str(form.get("assignment", "")))
    with portal.make.begin() as session:
        found = session.get(kind, assignment.name)
        if found is not None:
            session.delete(found)
            audit(session, user, said, assignment.name)
    if found is not None and portal.grades is not None:
        portal.grades.released(assignment.name)
    if wants_json(request):
        return JSONResponse({key: assignment.name, "csrf": csrf_token(request)})
    return RedirectResponse(back.format(name=assignment.name), 303)


def _audit_entries(portal: Portal, viewer: User) -> list[dict[str, str]]:
    """The audit log as ``viewer`` may read it: for a TA, the students of an assignment graded
    anonymously under their labels (``anonymity.audit_seen``)."""
    with portal.read() as session:
        rows = session.execute(select(AuditEntry, User).join(User, User.id == AuditEntry.user_id)
                               .order_by(AuditEntry.id)).all()  # fmt: skip
        hidden = anonymity.hidden_from(session, viewer, portal.course)
        seen = anonymity.audit_seen(session, hidden, [(u.email, e.action, e.detail) for e, u in rows])
    return [{"at": e.at.isoformat(), "by": by, "action": e.action, "detail": detail}
            for (e, _), (by, detail) in zip(rows, seen)]  # fmt: skip


def audit_page(portal: Portal, request: Request, form: Any) -> Response:
    """The audit log: who released results, reran submissions, granted extensions, made
    sign-in links and synced the course (what it changed), and when."""
    user = need_staff(portal, request)
    return page(request, "audit.html", {"entries": _audit_entries(portal, user)}, user=user)


def audit_csv(portal: Portal, request: Request, form: Any) -> Response:
    """The audit log as CSV (staff): when, who, what, its detail; oldest first."""
    user = need_staff(portal, request)
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["at", "by", "action", "detail"])
    for e in _audit_entries(portal, user):
        writer.writerow([safe_cell(e["at"]), safe_cell(e["by"]), safe_cell(e["action"]), safe_cell(e["detail"])])
    return PlainTextResponse(out.getvalue(), media_type="text/csv; charset=utf-8",
                             headers={"content-disposition": 'attachment; filename="audit.csv"'})  # fmt: skip


GRADEBOOK_COLUMNS = ("total", "max", "symbols", "late", "late days", "penalty", "score", "why", "not final")


def gradebook(portal: Portal, request: Request, form: Any) -> Response:
    """The gradebook as CSV: a row per student, each assignment's counted submission: its total
    as graded, maximum, symbols, and its grade as ``policy.grade`` gives it (late, late days
    spent, penalty, score after it, why with the extension, why not final); last, the late
    days the student used."""
    user = need_staff(portal, request)
    table = class_table(portal, user)
    out = io.StringIO()
    writer = csv.writer(out)
    names = list(table["assignments"])
    writer.writerow(["name", "email"] + [f"{n} {what}" for n in names for what in GRADEBOOK_COLUMNS]
                    + ["late days used"])  # fmt: skip
    for s in table["students"]:
        cells = [s["name"], s["email"]]
        for n in names:
            c = s["assignments"][n]
            cells += ([c["total"], c["max_total"], c["symbols"], "yes" if c["late"] else "", c["late_days"],
                       f"{c['penalty']:.0%}", c["score"], c["why"], c["not_final"]]
                      if c else [""] * len(GRADEBOOK_COLUMNS))  # fmt: skip
        writer.writerow([*cells, s["late_days_used"]])
    return PlainTextResponse(out.getvalue(), media_type="text/csv; charset=utf-8",
                             headers={"content-disposition": 'attachment; filename="gradebook.csv"'})  # fmt: skip


def rerun_page(portal: Portal, request: Request, form: Any) -> Response:
    """Rerun the counted submission of the student ``email`` names, or of every student, of the
    ``assignment`` named (instructors only; audited): the old result is kept beside the new one,
    with why it changed (the plan changed since, or the instructor reran it)."""
    user = need_instructor(portal, request)
    form = checked_form(request, form)
    assignment = find_assignment(portal, str(form.get("assignment", "")))
    email = str(form.get("email") or "").strip().lower()
    digest = portal.course.plan_digest(assignment)
    with portal.make.begin() as session:
        counted = {c.user.email: c.submission for (_, name), c in policy.counted(session, portal.course).items()
                   if name == assignment.name and (not email or c.user.email == email)}  # fmt: skip
        if email and not counted:
            raise HTTPException(404, f"{email!r} has no graded submission of {assignment.title}")
        done, seen = [], set()
        for who in sorted(counted):
            if counted[who].id in seen:  # a team's: counted for each member, rerun once
                continue
            seen.add(counted[who].id)
            reason = rerun(session, counted[who], digest)
            if reason is not None:
                done.append({"email": who, "submission": counted[who].id, "reason": reason})
        audit(
            session,
            user,
            "rerun",
            f"{assignment.name}: " + (", ".join(f"{d['email']} ({d['reason']})" for d in done) or "nothing to rerun"),
        )
    if portal.workers is not None:
        portal.workers.wake.set()
    if wants_json(request):
        return JSONResponse({"assignment": assignment.name, "rerun": done, "csrf": csrf_token(request)})
    return RedirectResponse("/class", 303)


MAX_EXTENSION_DAYS = 365


def extension(portal: Portal, request: Request, form: Any) -> Response:
    """Grant the student ``email`` names ``days`` extra days on the ``assignment`` named: their
    deadline and hard deadline move by as much (0 takes an extension back), and the late flag of
    their submissions follows; instructors only, audited."""
    user = need_instructor(portal, request)
    form = checked_form(request, form)
    assignment = find_assignment(portal, str(form.get("assignment", "")))
    email = str(form.get("email") or "").strip().lower()
    text = str(form.get("days", "")).strip()
    days = whole(text)
    if days is None or days > MAX_EXTENSION_DAYS:
        raise HTTPException(400, f"days must be a whole number from 0 to {MAX_EXTENSION_DAYS}, not {text!r}")
    with portal.make.begin() as session:
        student = session.scalar(select(User).where(User.email == email, User.role == STUDENT))
        if student is None:
            raise HTTPException(404, f"no student {email!r} on the roster")
        found = session.get(Extension, (student.id, assignment.name))
        if found is None:
            session.add(Extension(user_id=student.id, assignment=assignment.name, days=days, granted_by=user.id))
        else:
            found.days, found.granted_by, found.granted_at = days, user.id, now()
        session.flush()
        mine = deadlines(session, student, assignment)
        mark_late(session, student, assignment)  # the submissions made already follow the new deadline
        audit(session, user, "extension", f"{assignment.name}: {email} {days} day(s)")
    if portal.grades is not None:
        portal.grades.rescore(user=student)  # the student's grades after the new deadline (late days are shared)
    if wants_json(request):
        data = {"assignment": assignment.name, "email": email, "extension_days": days,
                "deadline": mine.deadline.isoformat() if mine.deadline else None,
                "hard_deadline": mine.hard_deadline.isoformat() if mine.hard_deadline else None}  # fmt: skip
        return JSONResponse({**data, "csrf": csrf_token(request)})
    return RedirectResponse("/class", 303)
