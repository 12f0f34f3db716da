"""What the staff download of an assignment's counted submissions: Gradescope's results.json,
the run folder as a zip, Canvas's and Moodle's grade imports, the similarity report."""

from __future__ import annotations

from typing import Any

from starlette.datastructures import UploadFile
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import (
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    Response,
    StreamingResponse,
)
from starlette.routing import BaseRoute, Route

from ...errors import GraderError
from ...runs import lms
from ...similarity import report_html, report_json
from ..course import anonymity, exports, similar
from ..course.course import Assignment
from ..database.models import (
    User,
)
from ..web.portal import Portal
from ..web.routes import (
    checked_form,
    csrf_token,
    display_name,
    endpoint,
    find_assignment,
    need_user,
    wants_json,
)


def routes(portal: Portal) -> list[BaseRoute]:
    """An assignment's downloads, for staff."""
    return [
        Route("/class/{name}/gradescope.json", endpoint(portal, gradescope_download)),
        Route("/class/{name}/run.zip", endpoint(portal, run_download)),
        Route("/class/{name}/canvas.csv", endpoint(portal, canvas_download), methods=["POST"]),
        Route("/class/{name}/moodle.csv", endpoint(portal, moodle_download), methods=["GET", "POST"]),
        Route("/class/{name}/similar", endpoint(portal, similar_page)),
    ]


def _download_rows(portal: Portal, request: Request) -> tuple[Assignment, list[exports.Counted]]:
    """The counted submissions of the assignment named, for staff; refused (409) while some were
    graded on a plan changed since (their tests are not the plan's: rerun them first)."""
    assignment = _asked_assignment(portal, request)
    with portal.read() as session:
        rows = exports.counted(session, portal.course, assignment)
    unkept = exports.not_kept(rows) if assignment.over_gtp else []
    if unkept:
        raise HTTPException(409, f"{len(unkept)} counted program(s) of {assignment.title} were graded before the "
                                 "portal kept whole results: rerun them first (the class page's Rerun)")  # fmt: skip
    older = exports.on_older_plans(rows, portal.course.plan_digest(assignment))
    if older:
        raise HTTPException(409, f"{len(older)} counted submission(s) of {assignment.title} were graded on its "
                                 "plan before it changed: rerun them first (the class page's Rerun)")  # fmt: skip
    return assignment, rows


def gradescope_download(portal: Portal, request: Request, form: Any) -> Response:
    """Gradescope's results.json of each student's counted submission (``grader gradescope``'s)."""
    assignment, rows = _download_rows(portal, request)
    data = exports.gradescope_json(assignment, rows)
    disposition = f'attachment; filename="{assignment.name}-gradescope.json"'
    return JSONResponse(data, headers={"content-disposition": disposition})


def similar_page(portal: Portal, request: Request, form: Any) -> Response:
    """The assignment's similarity report (staff): its counted submissions' pairs ranked, each
    pair's similar passages side by side (``grader similar``'s page; JSON: its --json)."""
    assignment = _asked_assignment(portal, request)
    with portal.read() as session:
        rows = exports.counted(session, portal.course, assignment)
    try:
        found = similar.similarity_report(portal.course, assignment, rows)
    except GraderError as e:
        raise HTTPException(409, str(e)) from None
    if wants_json(request):
        return Response(report_json(found), media_type="application/json")
    html = report_html(found, f"Similar submissions: {assignment.title}")
    return HTMLResponse(html, headers={"content-security-policy": similar.CSP})


def run_download(portal: Portal, request: Request, form: Any) -> Response:
    """The run folder ``grader grade class`` writes for the counted submissions, as a zip streamed."""
    assignment, rows = _download_rows(portal, request)
    disposition = f'attachment; filename="{assignment.name}-run.zip"'
    return StreamingResponse(exports.run_zip(portal.course, assignment, rows), media_type="application/zip",
                             headers={"content-disposition": disposition})  # fmt: skip


def _uploaded_text(portal: Portal, form: Any, field: str) -> tuple[str, str] | None:
    """The text of the CSV uploaded in ``field`` and its name as shown; None when none was chosen."""
    file = form.get(field)
    if not isinstance(file, UploadFile) or not file.filename:
        return None
    content = file.file.read(portal.course.upload_bytes + 1)
    name = display_name(file.filename)
    if len(content) > portal.course.upload_bytes:
        raise HTTPException(413, f"the upload is too large: at most {portal.course.upload_kb} KiB")
    try:
        return content.decode("utf-8"), name
    except UnicodeDecodeError:
        raise HTTPException(400, f"{name}: not UTF-8 text: export the gradebook as CSV (UTF-8)") from None


def lms_download(portal: Portal, request: Request, form: Any, to: str) -> Response:
    """An assignment's grades after the late policy as the CSV Canvas or Moodle imports (staff):
    with a POST, the LMS's gradebook export as ``roster``, the grade's ``column`` and, for
    Canvas, ``part=notes`` for the notes CSV beside the import. As JSON: both CSVs, and the
    students the roster does not name or whose grade is not final."""
    assignment = _asked_assignment(portal, request)
    roster, column, part = None, None, "grades"
    if form is not None:
        form = checked_form(request, form)
        column = str(form.get("column") or "").strip() or None
        part = str(form.get("part") or "grades")
        uploaded = _uploaded_text(portal, form, "roster")
        try:
            roster = lms.read_roster(*uploaded) if uploaded is not None else None
        except GraderError as e:
            raise HTTPException(400, str(e)) from None
    try:
        with portal.read() as session:
            made = exports.lms_export(session, portal.course, assignment, to, roster, column)
    except GraderError as e:
        raise HTTPException(400, str(e)) from None
    if wants_json(request):
        return JSONResponse({"assignment": assignment.name, "lms": to, "column": made.column, "csv": made.csv,
                             "notes": made.notes, "unmatched": made.unmatched,
                             "not_final": [{"email": g.name, "why": g.note} for g in made.not_final],
                             "csrf": csrf_token(request)})  # fmt: skip
    notes = part == "notes" and made.notes is not None
    filename = f"{assignment.name}-{to}{'-notes' if notes else ''}.csv"
    return PlainTextResponse(made.notes if notes and made.notes is not None else made.csv,
                             media_type="text/csv; charset=utf-8",
                             headers={"content-disposition": f'attachment; filename="{filename}"'})  # fmt: skip


def canvas_download(portal: Portal, request: Request, form: Any) -> Response:
    """Canvas's gradebook import of an assignment, from Canvas's gradebook export posted as ``roster``."""
    return lms_download(portal, request, form, "canvas")


def moodle_download(portal: Portal, request: Request, form: Any) -> Response:
    """Moodle's grade import of an assignment: students by e-mail address, or by a Moodle roster posted."""
    return lms_download(portal, request, form, "moodle")


def need_staff_download(portal: Portal, request: Request) -> User:
    """Staff (an instructor or a TA, as for the gradebook); a student is refused (403)."""
    user = need_user(portal, request)
    if not user.staff:
        raise HTTPException(403, "only the course's instructors and TAs may download its results")
    return user


def _asked_assignment(portal: Portal, request: Request) -> Assignment:
    """The assignment the path names, for staff; refused (403) to a TA while it is graded
    anonymously (every download pairs its students with their results)."""
    user = need_staff_download(portal, request)
    assignment = find_assignment(portal, request.path_params["name"])
    with portal.read() as session:
        if assignment.name in anonymity.hidden_from(session, user, portal.course):
            raise HTTPException(403, anonymity.refusal(assignment))
    return assignment
