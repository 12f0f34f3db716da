"""The portal in a real browser: Playwright drives the Chromium apt installs (Playwright's own
browser download is not reachable): a student signs in with their link, uploads a script,
and sees its public tests' feedback appear without reloading (the page's own script)."""

from __future__ import annotations

import shutil

import pytest

pytest.importorskip("starlette", reason='the portal needs its extra: pip install -e ".[portal]"')
sync_api = pytest.importorskip(
    "playwright.sync_api", reason="the browser test needs playwright (pip install -e '.[test]')"
)

from grader.portal.course import load_course  # noqa: E402

from test_portal import NEGAMAX, Client, Server, library_result, make_course  # noqa: E402

CHROMIUMS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


@pytest.fixture
def chromium():
    binary = next((p for p in map(shutil.which, CHROMIUMS) if p), None)
    if binary is None:
        pytest.skip("no Chromium installed (apt-get install chromium)")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=binary, args=["--no-sandbox", "--disable-gpu"])
        yield browser
        browser.close()


@pytest.mark.slow  # a browser, a server and two gradings: 10-20 s
def test_a_student_signs_in_uploads_and_sees_the_feedback_appear(tmp_path, chromium):
    course = make_course(tmp_path / "course")
    script = tmp_path / "negamax.py"  # negamax.py, 0.3 s slower a test: the page is seen before it is graded
    script.write_text("import time\ntime.sleep(0.3)\n" + NEGAMAX.read_text())
    server = Server(course, tmp_path)
    try:
        instructor = Client(server.url)
        instructor.sign_in(server.link)
        link = instructor.post("/class/links", {"email": "s1@example.edu"}).json()["links"][0]["link"]
        page = chromium.new_page()
        problems: list[str] = []
        page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)  # a CSP violation too
        page.on("pageerror", lambda e: problems.append(str(e)))
        page.on("response", lambda r: problems.append(f"{r.status} {r.url}") if r.status >= 400 else None)
        page.goto(link)
        page.click("#signin")
        page.click("text=Othello endgame lab")
        assert "3 of 3 submissions left today" in page.inner_text("#left")
        page.set_input_files("input[name=script]", str(script))
        page.click("#upload")
        page.wait_for_url(f"{server.url}/s/*")
        assert page.get_attribute("#submission", "data-status") in ("queued", "running")
        receipt = page.inner_text("#receipt")
        symbols = page.locator("#public-symbols")
        symbols.wait_for(timeout=180_000)  # shown by the page's own polling: nobody reloads it
        plan = load_course(course).assignments["othello"].plan
        expected = library_result(load_course(course), script)
        assert symbols.inner_text() == "".join(t.symbol for t in expected.tests if plan.is_public(t.index))
        assert "All tests perfect." in page.inner_text("#feedback") or "No public test below" in page.inner_text(
            "#feedback"
        )
        page.click("text=Back to the assignment")
        assert receipt in page.inner_html("#submissions")
        assert "2 of 3 submissions left today" in page.inner_text("#left")
        assert problems == []
    finally:
        server.stop()
