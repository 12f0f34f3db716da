"""Mail a person asks for or turns off: a new sign-in link by mail from the sign-in page (the
same answer whether or not the address is on the roster, within limits per address and per
client), and one's preferences: which kinds of the course's mail one gets."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from ..course.course import Course
from ..course.mail import KINDS
from ..database.models import User
from ..mail import messages as mails
from ..mail.outbox import TooManyRequests, count_link_request, set_turned_off, turned_off
from ..web.portal import Portal, mailed
from ..web.routes import checked_form, client_address, csrf_token, endpoint, need_user, page, wants_json

KIND_TEXT = {
    "signin": "one-time sign-in links I ask for on the sign-in page, or my instructor makes",
    "receipt": "a receipt for each upload, with its SHA-256",
    "graded": "a mail when an upload is graded",
    "released": "a mail when an assignment's private results are released",
    "regrade": "a mail when staff answer my regrade request",
    "reset": "a link to set a new password, when I ask for one on the sign-in page",
}
ASKED = ("If that address is on the course's roster, a one-time sign-in link is on its way to it. "
         "It works once; ask again in a few minutes if nothing arrives.")  # fmt: skip


def routes(portal: Portal) -> list[BaseRoute]:
    """A sign-in link asked for by mail; one's mail preferences."""
    return [
        Route("/signin/link", endpoint(portal, ask_link), methods=["POST"]),
        Route("/preferences", endpoint(portal, preferences, max_fields=len(KINDS) + 2), methods=["GET", "POST"]),
    ]


def ask_link(portal: Portal, request: Request, form: Any) -> Response:
    """Mail a new one-time sign-in link to ``email`` if it is a person of the course: the answer
    is the same either way (it tells nobody who is on the roster), and the requests are
    counted either way (at most a few an hour per address and per client)."""
    return mail_a_link(portal, request, form, mails.signin_link, "sign-in links", "asked", ASKED)


def mail_a_link(portal: Portal, request: Request, form: Any, send: Callable[[Session, Course, User], object],
                what: str, key: str, said: str) -> Response:  # fmt: skip
    """Mail ``send``'s one-time link to the form's ``email`` if it is a person of the course,
    answering ``said`` (under ``key``) either way; the request counted either way, with every
    other request for a link by mail (``what`` they are, in the refusal past the limits)."""
    form = checked_form(request, form)
    email = str(form.get("email", "")).strip().lower()
    if not email or len(email) > 320:
        raise HTTPException(400, "give your e-mail address ('email')")
    try:
        with portal.make.begin() as session:
            count_link_request(session, email, client_address(request), what)
            user = session.scalar(select(User).where(User.email == email))
            if user is not None:
                send(session, portal.course, user)
    except TooManyRequests as e:
        raise HTTPException(429, str(e)) from None
    mailed(portal)
    if wants_json(request):
        return JSONResponse({"asked": True, "message": said, "csrf": csrf_token(request)})
    return page(request, "signin.html", {"error": None, key: said}, course=portal.course.title)


def preferences(portal: Portal, request: Request, form: Any) -> Response:
    """One's own mail preferences: a checkbox for each kind of mail the course sends; the form
    (CSRF-checked) turns off those left unchecked. It only ever changes its sender's."""
    user = need_user(portal, request)
    mail = portal.course.mail
    kinds = [k for k in KINDS if mail is not None and mail.sends(k)]
    if request.method == "POST":
        form = checked_form(request, form)
        on = {k for k in kinds if form.get(k) in ("on", "1", "true")}
        with portal.make.begin() as session:
            set_turned_off(session, user.id, {k for k in KINDS if k not in on} & set(kinds)
                           | (turned_off(session, user.id) - set(kinds)))  # fmt: skip
        if not wants_json(request):
            return RedirectResponse("/preferences?saved=1", 303)
    with portal.read() as session:
        off = turned_off(session, user.id)
    data = {"kinds": [{"kind": k, "text": KIND_TEXT[k], "on": k not in off} for k in kinds],
            "mail": mail is not None, "saved": request.query_params.get("saved") == "1"}  # fmt: skip
    return page(request, "preferences.html", data, user=user)
