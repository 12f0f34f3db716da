"""Sign-in links as an instructor hands them out: as a CSV for a mail merge (instructors
only), a new one from the command line without a restart (``grader portal link``), and a
used one saying so before its button is pressed (in a browser)."""

from __future__ import annotations

import csv
import io
import re

import pytest
from click.testing import CliRunner

pytest.importorskip("starlette", reason='the portal needs its extra: pip install -e ".[portal]"')

from grader.cli import main  # noqa: E402

from portal_server import STUDENTS, Client, Server, _sync, make_course  # noqa: E402


def test_portal_link_needs_a_person_of_the_portal_and_its_address(tmp_path):
    course = make_course(tmp_path / "course")
    assert _sync(course).exit_code == 0
    unknown = CliRunner().invoke(main, ["portal", "link", "nobody@example.edu", str(course)])
    assert unknown.exit_code == 1 and unknown.output.startswith("Error: no one with the e-mail 'nobody@example.edu'")
    no_url = CliRunner().invoke(main, ["portal", "link", "s1@example.edu", str(course)])
    assert no_url.exit_code == 1 and "give --url https://HOST" in no_url.output
    made = CliRunner().invoke(
        main, ["portal", "link", "S1@example.edu", str(course), "--url", "https://g.example.edu/"]
    )
    assert made.exit_code == 0, made.output
    assert re.match(r"One-time sign-in link for s1@example.edu \(student\): https://g\.example\.edu/link/\S+\n"
                    r"It works once, until \d{4}-\d\d-\d\d \d\d:\d\d UTC\.\n$", made.output)  # fmt: skip


@pytest.mark.slow  # a server of its own: 3-6 s
def test_a_new_instructor_link_without_a_restart_and_the_students_links_as_csv(tmp_path):
    course = make_course(tmp_path / "course")
    server = Server(course, tmp_path)
    try:
        made = CliRunner().invoke(main, ["portal", "link", "instructor@example.edu", str(course)])
        assert made.exit_code == 0, made.output
        link = re.search(r"(http://\S+/link/\S+)", made.output).group(1)
        assert link.startswith(server.url + "/link/")  # the running server's address
        instructor = Client(server.url)
        instructor.sign_in(link)
        assert instructor.get("/").json()["user"]["role"] == "instructor"
        got = instructor.post("/class/links", {"as": "csv"}, headers={"Accept": "text/html"})
        assert got.status_code == 200 and 'filename="sign-in-links.csv"' in got.headers["content-disposition"]
        assert got.headers["cache-control"] == "no-store"
        rows = list(csv.DictReader(io.StringIO(got.text)))
        assert [(r["email"], r["name"]) for r in rows] == sorted(STUDENTS, key=lambda s: s[1])
        assert all(r["link"].startswith(server.url + "/link/") and r["expires"].endswith(" UTC") for r in rows)
        student = Client(server.url)
        student.sign_in(rows[0]["link"])  # each works
        assert student.post("/class/links", {"as": "csv"}).status_code == 404  # an instructor's page
        log = [e for e in instructor.get("/class/audit").json()["entries"] if e["action"] == "sign-in links"]
        assert log[0]["detail"] == "grader portal link: instructor@example.edu"
    finally:
        server.stop()


@pytest.mark.slow  # a browser and a server: several seconds
def test_a_used_link_says_so_before_its_button_is_pressed(tmp_path, chromium):
    course = make_course(tmp_path / "course")
    server = Server(course, tmp_path, None, "--workers", "0")
    try:
        instructor = Client(server.url)
        instructor.sign_in(server.link)
        link = instructor.post("/class/links", {"email": "s1@example.edu"}).json()["links"][0]["link"]
        first = chromium.new_context(java_script_enabled=False).new_page()
        first.goto(link)
        with first.expect_navigation():
            first.click("#signin")
        again = chromium.new_context(java_script_enabled=False).new_page()
        answer = again.goto(link)  # a second browser, or the same person a day later
        assert answer is not None and answer.status == 400
        said = again.inner_text("#link-problem")
        assert (
            said.startswith("This sign-in link was used already, on ") and "ask your instructor for a new one" in said
        )
        assert again.locator("#signin").count() == 0  # no button to press for nothing
        fresh = chromium.new_context(java_script_enabled=False).new_page()
        fresh.goto(instructor.post("/class/links", {"email": "s2@example.edu"}).json()["links"][0]["link"])
        assert fresh.locator("#signin").count() == 1 and fresh.locator("#link-problem").count() == 0
    finally:
        server.stop()
