"""Releasing private results in a browser: the class page's button asks for a confirmation
first, the release can be undone (both in the audit log), and the student's feedback text
says what is shown now: the private tests' symbols and the total once released, waiting again
after the undo (never "shown when the instructor releases them" above released results)."""

from __future__ import annotations

import pytest

pytest.importorskip("starlette", reason='the portal needs its extra: pip install -e ".[portal]"')
pytest.importorskip("playwright.sync_api", reason="the browser test needs playwright (pip install -e '.[test]')")

from test_portal_browser import _signed_in, _until_graded, submit  # noqa: E402

from grader.portal.course.course import load_course  # noqa: E402

from portal_server import WRONG, Server, make_course  # noqa: E402

PENDING = "private tests: results shown when the instructor releases them"


@pytest.mark.slow  # a browser, a server and a grading: 10-20 s
def test_a_release_is_confirmed_undone_and_the_feedback_text_follows(tmp_path, chromium):
    course = make_course(tmp_path / "course")
    server = Server(course, tmp_path)
    try:
        instructor = _signed_in(chromium, server.link, javascript=False)
        instructor.fill("form[action='/class/links'] input[name=email]", "s1@example.edu")
        submit(instructor, "text=Make one-time sign-in links")
        link = instructor.inner_text("#links code")
        student = _signed_in(chromium, link, javascript=False)
        submit(student, "text=Othello endgame lab")
        student.set_input_files("input[name=script]", str(WRONG))
        student.click("#upload")
        student.wait_for_url(f"{server.url}/s/*")
        url = student.url
        _until_graded(student, url)
        private = load_course(course).assignments["othello"].private_tests
        assert f"{private} {PENDING}" in student.text_content("#feedback")

        instructor.goto(f"{server.url}/class")
        submit(instructor, "text=Release the private results of Othello endgame lab")
        asked = instructor.inner_text("main")
        assert "Release the private results of Othello endgame lab?" in asked and "undo" in asked
        assert f"their {private} private tests' symbols and credit" in asked and "1 student has a graded" in asked
        student.goto(url)
        assert student.locator("#private").count() == 0  # nothing released before the confirmation
        submit(instructor, "#confirm-release")
        assert "Othello endgame lab: released to the students." in instructor.inner_text("main")

        student.goto(url)
        text = student.text_content("#feedback")
        assert PENDING not in text and f"{private} private tests: released, " in text and "; total " in text
        assert student.locator("#private").count() == 1

        submit(instructor, "text=Undo the release of Othello endgame lab")
        assert "Release the private results of Othello endgame lab" in instructor.inner_text("main")
        student.goto(url)
        assert f"{private} {PENDING}" in student.text_content("#feedback") and student.locator("#private").count() == 0
        instructor.goto(f"{server.url}/class/audit")
        rows = [r.split("\t")[2:] for r in instructor.locator("#audit tr").all_inner_texts()]
        assert rows[-2:] == [["release", "othello"], ["release undone", "othello"]]
    finally:
        server.stop()
