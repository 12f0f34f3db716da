"""Attacks on the portal's requests, over real HTTP against a real server: a state-changing
request from another site that carries a valid CSRF token (a token leaked, or a subdomain
that can set cookies), by its Origin, its Referer or an Origin hidden as ``null``; and the
API asked without a session, which must answer 401 JSON, not a page's redirect."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.xdist_group(__name__)  # one worker: the module's fixture runs once

httpx = pytest.importorskip("httpx", reason="the portal's tests need httpx (pip install -e '.[test]')")
pytest.importorskip("starlette", reason='the portal needs its extra: pip install -e ".[portal]"')

from portal_server import NEGAMAX, Client, Server, make_course  # noqa: E402
from test_portal_lti import login, post_launch, tool  # noqa: E402, F401  (tool: a platform and its tool, a fixture)

FOREIGN = "the request came from another site (its Origin or Referer): send the form from the portal's own page, or send no Origin"  # noqa: E501


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """One server (no workers: uploads only queue) for the module's tests, and a student signed in."""
    tmp = tmp_path_factory.mktemp("requests")
    server = Server(make_course(tmp / "course", per_day=20), tmp, None, "--workers", "0", "--public-url",
                    "http://grader.example.edu/")  # fmt: skip
    instructor = Client(server.url)
    instructor.sign_in(server.link.replace("http://grader.example.edu", server.url))
    link = instructor.post("/class/links", {"email": "s1@example.edu"}).json()["links"][0]["link"]
    me = Client(server.url)
    me.sign_in(link.replace("http://grader.example.edu", server.url))
    yield {"server": server, "url": server.url, "me": me}
    server.stop()


def uploads(me: Client) -> int:
    return len(me.get("/a/othello").json()["submissions"])


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "https://evil.example"},
        {"Origin": "null"},  # a page with Referrer-Policy no-referrer, or a sandboxed frame
        {"Referer": "https://evil.example/page.html"},
        {"Origin": "http://127.0.0.1.evil.example"},
        {"Origin": "http://grader.example.edu.evil.example"},
    ],
    ids=["origin", "null-origin", "referer", "lookalike-host", "lookalike-public-url"],
)
def test_a_request_from_another_site_is_refused_even_with_a_valid_csrf_token(served, headers):
    """Main checked only the CSRF token: a form posted from another site with the token was taken."""
    me = served["me"]
    before = uploads(me)
    r = me.upload(NEGAMAX, name="forged.py", headers=headers)
    assert (r.status_code, r.json()) == (403, {"error": FOREIGN})
    page = me.http.post("/signout", data={"csrf": me.csrf}, headers={**headers, "Accept": "text/html"})
    assert (page.status_code, page.text) == (403, FOREIGN + "\n")  # one line
    assert page.headers["content-type"].startswith("text/plain")
    assert me.post("/password", {"password": "plum kettle orbit lantern"}, headers=headers).status_code == 403
    assert uploads(me) == before and me.get("/").status_code == 200  # nothing taken, still signed in


def test_a_request_from_the_portals_own_pages_or_no_browser_is_taken(served):
    me, url = served["me"], served["url"]
    before = uploads(me)
    for headers in ({"Origin": url}, {"Referer": url + "/a/othello"}, {"Origin": "http://grader.example.edu"},
                    {"Origin": "http://GRADER.example.edu:80"}, {}):  # fmt: skip
        assert me.upload(b"print(19)\n", name="mine.py", headers=headers).status_code == 201, headers
    assert uploads(me) == before + 5
    assert me.http.get("/a/othello", headers={"Origin": "https://evil.example"}).status_code == 200  # reading: no state


def test_the_pages_say_referrer_policy_same_origin(served):
    """A browser sends the portal's own forms with their Origin (under no-referrer it says
    "null", which is refused), and no Referer leaves for another site (a sign-in link's token)."""
    assert httpx.get(served["url"] + "/signin").headers["referrer-policy"] == "same-origin"


@pytest.mark.parametrize("path", ["/api/", "/api/a/othello", "/api/sessions", "/api/arena", "/api/class"])
def test_the_api_without_a_session_answers_401_json(served, path):
    """Main answered an unauthenticated GET /api/ with a 303 to the sign-in page."""
    r = httpx.get(served["url"] + path)
    assert r.status_code == 401 and r.headers["content-type"].startswith("application/json")
    assert r.json()["error"] == "sign in first: use your sign-in link, or your e-mail and password at /signin"


def test_a_page_without_a_session_still_sends_a_person_to_sign_in(served):
    r = httpx.get(served["url"] + "/", headers={"Accept": "text/html"})
    assert (r.status_code, r.headers["location"]) == (303, "/signin")
    assert httpx.get(served["url"] + "/", headers={"Accept": "application/json"}).status_code == 401


def test_an_lti_platforms_launch_is_a_cross_site_post_and_is_taken(tool):  # noqa: F811
    """The LMS posts the launch from its own site: its signature and state prove it, not its Origin."""
    platform, server = tool["platform"], tool["server"]
    client = Client(server.url)
    _, action, fields = login(client, platform, "s-origin")
    r = client.http.post(action, data=fields, headers={"Accept": "text/html", "Origin": platform.url,
                                                       "Referer": platform.url + "/auth"})  # fmt: skip
    assert r.status_code == 303, r.text
    assert client.get("/").status_code == 200
    r = post_launch(client, action, fields)  # replayed: refused by the launch's own checks, not by its Origin
    assert r.status_code == 401
