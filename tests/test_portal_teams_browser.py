"""Teams in a real browser (Playwright driving the system's Chromium): two students form a
team by invitation on the assignment's page, one uploads once, and both see the feedback."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("starlette", reason='the portal needs its extra: pip install -e ".[portal]"')
pytest.importorskip("playwright.sync_api", reason="the browser test needs playwright (pip install -e '.[test]')")

from portal_server import GRADED_WITHIN, NEGAMAX, Client, Server, make_course  # noqa: E402


def submit(page: Any, selector: str) -> None:
    """Click a form's button and wait for the page it leads to."""
    with page.expect_navigation():
        page.click(selector)


def signed_in(browser: Any, link: str, problems: list[str]) -> Any:
    """A page of a browser context of its own, signed in with the one-time ``link``, its errors kept in ``problems``."""
    page = browser.new_context().new_page()
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)  # a CSP violation too
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.goto(link)
    submit(page, "#signin")
    return page


@pytest.mark.slow  # a browser, a server and a grading: 10-30 s
def test_a_pair_forms_a_team_by_invitation_one_submits_once_and_both_see_the_feedback(tmp_path, chromium):
    course = make_course(tmp_path / "course")
    text = (course / "course.yaml").read_text()
    (course / "course.yaml").write_text(text.replace("per_day: 3", "per_day: 3\n    teams: {size: 2}", 1))
    server = Server(course, tmp_path)
    try:
        instructor = Client(server.url)
        instructor.sign_in(server.link)
        links = {e["email"]: e["link"] for e in instructor.post("/class/links").json()["links"]}
        problems: list[str] = []
        ada = signed_in(chromium, links["s1@example.edu"], problems)
        bob = signed_in(chromium, links["s2@example.edu"], problems)
        ada.goto(f"{server.url}/a/othello")
        assert "You are not in a team" in ada.inner_text("#team")
        ada.fill("#team-invite input[name=email]", "s2@example.edu")
        submit(ada, "#team-invite button")
        assert "Student 2 (s2@example.edu), waiting for their answer" in ada.inner_text("#team-sent")
        bob.goto(f"{server.url}/a/othello")
        assert "Student 1 (s1@example.edu) invites you" in bob.inner_text("#team-received")
        submit(bob, "#team-received form[action$='/accept'] button")
        assert bob.inner_text("#team-members").splitlines() == ["Student 1 (s1@example.edu)",
                                                                "Student 2 (s2@example.edu)"]  # fmt: skip
        ada.goto(f"{server.url}/a/othello")
        assert "You submit as team Student 1 & Student 2" in ada.inner_text("#team")
        ada.set_input_files("input[name=script]", str(NEGAMAX))
        submit(ada, "#upload")
        sid = ada.url.rsplit("/", 1)[1]
        ada.locator("#public-symbols").wait_for(timeout=GRADED_WITHIN * 1000)  # the page's own live update
        ada.wait_for_load_state()  # the page its script reloaded, whole: its cards are counted below
        symbols = ada.inner_text("#public-symbols")
        bob.goto(f"{server.url}/a/othello")
        assert "2 of 3 submissions left today" in bob.inner_text("#left")  # the team's upload counted
        assert "Your team's submissions" in bob.inner_text("main")
        submit(bob, f"#submissions a[href='/s/{sid}']")
        assert bob.inner_text("#public-symbols") == symbols
        assert bob.locator("#tests li.test").count() == ada.locator("#tests li.test").count() > 0
        assert bob.locator("#team-leave").count() == 0  # the team has submitted: no leaving
        bob.goto(f"{server.url}/a/othello")
        assert bob.locator("#team-leave").count() == 0 and "no longer changes" in bob.inner_text("#team")
        assert problems == []
    finally:
        server.stop()
