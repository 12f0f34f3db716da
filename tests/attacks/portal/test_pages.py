"""Forged requests and markup: a form posted without its CSRF token or with a forged one
(an upload, a sign-out, a password), and a script whose output and file name are markup."""

from __future__ import annotations

import pytest

from portal_server import NEGAMAX

pytestmark = pytest.mark.xdist_group(__name__)  # one worker: the module's fixture runs once


def test_output_is_escaped_and_pages_carry_a_content_security_policy(portal):
    script = portal["tmp"] / "markup.py"
    script.write_text('print("score 0 <script>alert(1)</script>")\nprint("<b>x</b>")\n')
    me = portal["students"]["s4@example.edu"]
    sid = me.upload(script, name="<img src=x onerror=alert(2)>.py").json()["id"]
    seen = me.graded(sid)
    assert "<script>alert(1)</script>" in seen["feedback"]  # the test would pass on output never shown
    page = me.html(f"/s/{sid}")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page.text and "<script>alert" not in page.text
    assert "<img src=x" not in page.text and "&lt;img src=x onerror=alert(2)&gt;.py" in page.text
    csp = page.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "default-src 'none'" in csp
    assert me.html("/signin").headers["content-security-policy"] == csp


def test_a_form_without_its_csrf_token_is_refused(portal):
    me = portal["students"]["s5@example.edu"]
    before = len(me.get("/a/othello").json()["submissions"])
    r = me.upload(NEGAMAX, csrf=False)
    assert r.status_code == 403 and "CSRF" in r.json()["error"]
    forged = me.post("/a/othello", {"csrf": "x" * 43}, files={"script": ("a.py", b"print(1)", "text/x-python")},
                     csrf=False)  # fmt: skip
    assert forged.status_code == 403
    assert me.post("/signout", csrf=False).status_code == 403
    assert me.post("/password", {"password": "a long new password"}, csrf=False).status_code == 403
    assert len(me.get("/a/othello").json()["submissions"]) == before
    assert me.get("/").status_code == 200  # still signed in: the forged sign-out did nothing
