"""The web layer under attack and as a client sees it: output escaped and a
Content-Security-Policy on every page, a form without its CSRF token refused, an upload
over the limit refused before its body is read, every page as JSON and HTML (and at its
/api path), a number too large for an id one line."""

from __future__ import annotations

import socket

import pytest

httpx = pytest.importorskip("httpx", reason="the portal's tests need httpx (pip install -e '.[test]')")
pytest.importorskip("starlette", reason='the portal needs its extra: pip install -e ".[portal]"')


from portal_server import (  # noqa: E402
    NEGAMAX,
    UPLOAD_KB,
    WRONG,
    Client,
)


def test_an_arena_id_too_large_for_the_database_is_one_line_not_a_server_error(portal):
    """An id past what a table holds (SQLite: OverflowError) answers 404 or 400 in one line."""
    me, huge = portal["students"]["s2@example.edu"], "9" * 25
    for path in (f"/api/arena/e/{huge}", f"/api/arena/g/{huge}", f"/api/arena/g/{huge}/game.ggf"):
        r = me.get(path)
        assert r.status_code == 404 and "larger than any id" in r.json()["error"], path
    eid = me.post("/api/arena", {"name": "huge", "protocol": "nboard", "game": "othello"}).json()["id"]
    r = me.post(f"/api/arena/e/{eid}/tests", {"new": huge, "base": "1"})
    assert r.status_code == 400 and r.json()["error"].startswith(f"new '{huge}' is too large a number"), r.text


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


def _raw(url: str, request: bytes, body_after: bytes = b"") -> tuple[bytes, float]:
    """Send ``request`` (headers, perhaps a first part of the body) on a socket; the answer read."""
    host, port = url.split("//")[1].split(":")
    with socket.create_connection((host, int(port)), timeout=20) as s:
        s.sendall(request)
        if body_after:
            try:
                s.sendall(body_after)
            except OSError:
                pass  # the server closed the connection: it answered already
        answer = b""
        while b"\r\n\r\n" not in answer:
            chunk = s.recv(65536)
            if not chunk:
                break
            answer += chunk
    return answer, 0.0


def test_an_upload_over_the_limit_is_refused_before_its_body_is_read(portal):
    me = portal["students"]["s6@example.edu"]
    cookie = "; ".join(f"{k}={v}" for k, v in me.http.cookies.items())
    host = portal["server"].url.split("//")[1]
    head = (f"POST /a/othello HTTP/1.1\r\nHost: {host}\r\nCookie: {cookie}\r\nAccept: application/json\r\n"
            "Content-Type: multipart/form-data; boundary=b\r\nContent-Length: 1000000000\r\n\r\n").encode()  # fmt: skip
    answer, _ = _raw(portal["server"].url, head)  # a gigabyte announced, not one byte of it sent
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    chunk = b"x" * 4096
    body = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for _ in range(UPLOAD_KB // 4 + 20))
    chunked = head.replace(b"Content-Length: 1000000000", b"Transfer-Encoding: chunked")
    answer, _ = _raw(portal["server"].url, chunked, body)  # no length said: refused once the bytes pass the limit
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    over = me.upload(b"#" * (UPLOAD_KB * 1024 + 1) + b"\n", name="big.py")
    assert over.status_code == 413 and f"{UPLOAD_KB} KiB" in over.json()["error"]
    assert me.get("/a/othello").json()["submissions"] == []
    assert me.upload(b"print(1)\n", name="../../etc/passwd").status_code == 400  # not .py: refused, never a path
    sid = me.upload(b"print(19)\n", name="../../../escape.py").json()["id"]
    assert me.get(f"/s/{sid}").json()["filename"] == "escape.py"


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
