"""Password reset by mail: "forgot your password?" on the sign-in page mails a one-time link
(the same answer whether or not the address is on the roster, within the limits a new sign-in
link is asked under, which it shares); the link's page sets a new password without the current
one, ends every other session of the person, revokes their API tokens, cancels their links not
used yet, and is audited."""

from __future__ import annotations

from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from ...errors import GraderError
from ..accounts.passwords import set_password
from ..accounts.resets import RESET_MINUTES, forget_resets, reset_problem, use_reset_token
from ..accounts.sessions import end_sessions
from ..accounts.signin import forget_links
from ..accounts.tokens import revoke_api_tokens
from ..mail import messages as mails
from ..web.portal import Portal
from ..web.routes import audit, checked_form, csrf_token, endpoint, page, start_session, wants_json
from .mail import mail_a_link

ASKED = ("If that address is on the course's roster, a link to set a new password is on its way to it. "
         f"It works once, within {RESET_MINUTES} minutes.")  # fmt: skip


def routes(portal: Portal) -> list[BaseRoute]:
    """A reset link asked for by mail; its page, which sets the new password."""
    return [
        Route("/signin/reset", endpoint(portal, ask_reset), methods=["POST"]),
        Route("/reset/{token}", endpoint(portal, reset), methods=["GET", "POST"]),
    ]


def ask_reset(portal: Portal, request: Request, form: Any) -> Response:
    """Mail a one-time reset link to ``email`` if it is a person of the course: the answer is the
    same either way, and the request counted either way (with the requests for sign-in links)."""
    return mail_a_link(portal, request, form, mails.password_reset, "password resets", "reset_asked", ASKED)


def reset(portal: Portal, request: Request, form: Any) -> Response:
    """The reset link's page: its form (``password``), or why the link would not work (used,
    expired, unknown) before anything is sent. The POST spends the link only if the password is
    taken (the rules of ``accounts.passwords``); it sets it, ends every session of the person
    (the browser that sent it is signed in anew), revokes their API tokens (someone else may have
    held the account), cancels their sign-in and reset links not used yet, and is audited."""
    token = request.path_params["token"]
    if request.method == "POST":
        form = checked_form(request, form)
        try:
            with portal.make.begin() as session:
                user = use_reset_token(session, token)
                if user is None:
                    raise HTTPException(400, "this reset link was used already or has expired: ask for a new one "
                                             "on the sign-in page")  # fmt: skip
                set_password(user, str(form.get("password", "")), [portal.course.title, "grader portal"])
                ended = end_sessions(session, user)
                revoked = revoke_api_tokens(session, user)
                forget_links(session, user)
                forget_resets(session, user)
                audit(session, user, "password reset",
                      f"by a mailed link: {ended} session(s) ended, {revoked} API token(s) revoked")  # fmt: skip
        except GraderError as e:
            raise HTTPException(400, str(e)) from None
        start_session(portal, request, user)
        if wants_json(request):
            return JSONResponse({"password_set": True, "sessions_ended": ended, "tokens_revoked": revoked,
                                 "csrf": csrf_token(request)})  # fmt: skip
        return RedirectResponse("/", 303)
    with portal.read() as session:
        problem = reset_problem(session, token)
    data = {"token": token, "problem": f"{problem}: ask for a new one on the sign-in page" if problem else None}
    return page(request, "reset.html", data, 400 if problem else 200, course=portal.course.title)
