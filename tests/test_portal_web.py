"""The web layer under attack and as a client sees it: output escaped and a
Content-Security-Policy on every page, a form without its CSRF token refused, an upload
over the limit refused before its body is read, every page as JSON and HTML (and at its
/api path), a number too large for an id one line."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.xdist_group(__name__)  # one worker: the module's fixture runs once

httpx = pytest.importorskip("httpx", reason="the portal's tests need httpx (pip install -e '.[test]')")
pytest.importorskip("starlette", reason='the portal needs its extra: pip install -e ".[portal]"')


from portal_server import (  # noqa: E402
    WRONG,
    Client,
)


def test_every_page_answers_json_and_html(portal):
    me = portal["students"]["s1@example.edu"]
    for path in ("/", "/a/othello"):
        assert me.get(path).headers["content-type"].startswith("application/json")
        assert me.html(path).headers["content-type"].startswith("text/html")
    assert portal["instructor"].html("/class").headers["content-type"].startswith("text/html")


def test_every_page_answers_json_at_its_api_path_whatever_the_accept_header(portal, graded_pair):
    me, instructor = portal["students"]["s1@example.edu"], portal["instructor"]
    sid = graded_pair["negamax.py"]["id"]
    html = {"Accept": "text/html"}
    for client, path in ((me, "/"), (me, "/a/othello"), (me, f"/s/{sid}"), (instructor, "/class"),
                         (instructor, "/class/audit"), (instructor, f"/s/{sid}")):  # fmt: skip
        api = client.http.get("/api" + path, headers=html)
        assert api.status_code == 200, (path, api.text)
        assert api.headers["content-type"].startswith("application/json"), path
        assert "content-security-policy" in api.headers
        plain = client.get(path).json()
        assert {k: v for k, v in api.json().items() if k != "csrf"} == {k: v for k, v in plain.items() if k != "csrf"}
    assert me.http.get(f"/api/s/{sid}").json()["id"] == sid
    # an upload through the API: the receipt as JSON, graded as any other
    other = portal["students"]["s2@example.edu"]
    r = other.http.post("/api/a/othello", data={"csrf": other.csrf}, headers=html,
                        files={"script": ("lab.py", WRONG.read_bytes(), "text/x-python")})  # fmt: skip
    assert r.status_code == 201 and r.json()["status"] in ("queued", "running", "graded"), r.text
    assert other.graded(r.json()["id"])["public_symbols"] == graded_pair["wrong_score.py"]["public_symbols"]
    # what a page refuses, its API path refuses, in JSON
    for client, path, status in ((other, f"/s/{sid}", 404), (me, "/class", 404), (me, "/no/such/page", 404),
                                 (Client(portal["server"].url), "/a/othello", 401)):  # fmt: skip
        r = client.http.get("/api" + path, headers=html)
        assert r.status_code == status and r.headers["content-type"].startswith("application/json"), (path, r.text)
        assert "error" in r.json() and sid not in r.text
    assert me.http.post("/api/signout", headers=html).status_code == 403  # no CSRF token: refused as the form is
