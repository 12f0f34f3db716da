"""The portal in a real browser: Playwright drives the Chromium apt installs (Playwright's own
browser download is not reachable): a student signs in with their link, uploads a script,
and sees its public tests' feedback appear without reloading (the page's own script); with
JavaScript off, the upload and release forms work and the student sees the private results
released; a rerun after a plan change (applied by grader portal sync) shows why it changed; a
password is changed only with the current one."""

from __future__ import annotations

import time
from typing import Any

import pytest

pytest.importorskip("starlette", reason='the portal needs its extra: pip install -e ".[portal]"')
sync_api = pytest.importorskip(
    "playwright.sync_api", reason="the browser test needs playwright (pip install -e '.[test]')"
)

from test_portal_ladder import seed  # noqa: E402

from grader.config import Config  # noqa: E402
from grader.files import SHARE  # noqa: E402
from grader.grading.plans import new_plan, write_plan_file  # noqa: E402
from grader.portal.course.course import load_course  # noqa: E402
from grader.portal.course.sync import apply  # noqa: E402
from grader.portal.database.db import connect, sessions, upgrade  # noqa: E402
from grader.portal.ladders import ladders  # noqa: E402

from portal_server import (  # noqa: E402
    GRADED_WITHIN,
    NEGAMAX,
    WRONG,
    Client,
    Server,
    _sync,
    library_result,
    make_course,
)


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
        submit(page, "#signin")
        submit(page, "text=Othello endgame lab")
        assert "3 of 3 submissions left today" in page.inner_text("#left")
        page.set_input_files("input[name=script]", str(script))
        page.click("#upload")
        page.wait_for_url(f"{server.url}/s/*")
        assert page.get_attribute("#submission", "data-status") in ("queued", "running")
        receipt = page.inner_text("#receipt")
        symbols = page.locator("#public-symbols")
        symbols.wait_for(timeout=GRADED_WITHIN * 1000)  # shown by the page's own polling: nobody reloads it
        page.wait_for_load_state()  # the page its script reloaded, whole: its cards are counted below
        plan = load_course(course).assignments["othello"].plan
        expected = library_result(load_course(course), script)
        assert symbols.inner_text() == "".join(t.symbol for t in expected.tests if plan.is_public(t.index))
        text = page.text_content("#feedback")  # the feedback as text, folded below the tests' cards
        assert "All tests perfect." in text or "No public test below" in text
        public = sum(plan.is_public(t.index) for t in expected.tests)
        assert page.locator("#tests li.test").count() == public  # a card a public test, none for a private one
        assert page.locator("#summary").inner_text().startswith("Public tests fully right")
        submit(page, "text=Back to the assignment")
        assert receipt in page.inner_html("#submissions")
        assert "2 of 3 submissions left today" in page.inner_text("#left")
        assert problems == []
    finally:
        server.stop()


def _signed_in(browser, link: str, javascript: bool = True):
    """A page of a new browser context (its own cookies) signed in with the one-time ``link``."""
    page = browser.new_context(java_script_enabled=javascript).new_page()
    page.goto(link)
    submit(page, "#signin")
    return page


def _until_graded(page, url: str, live: bool = False) -> None:
    """Reload the submission's page (as a person without JavaScript does) until it is graded;
    ``live``: a page with JavaScript, which reloads itself once its status changes (a reload of
    the test's would race that one and fail as interrupted), waited for instead."""
    if live:
        page.locator("#submission:not([data-status=queued]):not([data-status=running])").wait_for(
            timeout=GRADED_WITHIN * 1000
        )
        page.wait_for_load_state()
        return
    deadline = time.monotonic() + GRADED_WITHIN
    while page.get_attribute("#submission", "data-status") in ("queued", "running"):
        assert time.monotonic() < deadline, f"{url} not graded within {GRADED_WITHIN} s"
        time.sleep(0.5)
        page.goto(url)


@pytest.mark.slow  # a browser, a server and a grading: 10-20 s
def test_without_javascript_a_student_uploads_and_sees_private_results_once_the_instructor_releases_them(
    tmp_path, chromium
):
    course = make_course(tmp_path / "course")
    server = Server(course, tmp_path)
    try:
        instructor = _signed_in(chromium, server.link, javascript=False)
        assert instructor.url == f"{server.url}/class"
        instructor.fill("form[action='/class/links'] input[name=email]", "s1@example.edu")
        submit(instructor, "text=Make one-time sign-in links")
        link = instructor.inner_text("#links code")
        student = _signed_in(chromium, link, javascript=False)
        submit(student, "text=Othello endgame lab")
        student.set_input_files("input[name=script]", str(WRONG))
        student.click("#upload")  # a plain form post: no script on the page runs
        student.wait_for_url(f"{server.url}/s/*")
        url = student.url
        _until_graded(student, url)
        private = load_course(course).assignments["othello"].private_tests
        assert f"The {private} private tests' results are shown once the instructor releases them." in (
            student.inner_text("main")
        )
        assert student.locator("#private").count() == 0
        instructor.goto(f"{server.url}/class")
        submit(instructor, "text=Release the private results of Othello endgame lab")
        submit(instructor, "#confirm-release")  # after a page saying what the students will see
        assert "Othello endgame lab: released to the students." in instructor.inner_text("main")
        student.goto(url)
        assert "Private tests" in student.inner_text("main")
        assert student.locator("#private tr").count() == private + 1  # its header and a row per test
    finally:
        server.stop()


@pytest.mark.slow  # a browser, a server and a submission graded twice: 15-25 s
def test_an_instructor_reruns_after_a_plan_change_and_the_student_sees_why(tmp_path, chromium):
    course = make_course(tmp_path / "course")
    server = Server(course, tmp_path)
    try:
        instructor = _signed_in(chromium, server.link)
        instructor.fill("form[action='/class/links'] input[name=email]", "s2@example.edu")
        submit(instructor, "text=Make one-time sign-in links")
        student = _signed_in(chromium, instructor.inner_text("#links code"))
        submit(student, "text=Othello endgame lab")
        student.set_input_files("input[name=script]", str(WRONG))
        student.click("#upload")
        student.wait_for_url(f"{server.url}/s/*")
        url = student.url
        student.locator("#public-symbols").wait_for(timeout=GRADED_WITHIN * 1000)
        before = student.inner_text("#public-symbols")
        assert len(before) == 4
        plan = new_plan(Config(), "othello", boards=SHARE / "fixtures" / "standard.txt", public=6).plan
        write_plan_file(plan, course / "six-public.plan")
        text = (course / "course.yaml").read_text()
        (course / "course.yaml").write_text(text.replace("plan: othello-endgame.plan", "plan: six-public.plan"))
        assert _sync(course).exit_code == 0
        deadline = time.monotonic() + 60
        while "6 public tests" not in student.inner_text("main"):  # the server loads the synced course
            assert time.monotonic() < deadline, "the server never loaded the synced course"
            time.sleep(0.3)
            student.goto(f"{server.url}/a/othello")
        instructor.goto(f"{server.url}/class")
        instructor.select_option("form[action='/class/rerun'] select[name=assignment]", "othello")
        submit(instructor, "form[action='/class/rerun'] button")  # queued again once its answer is in
        student.goto(url)
        student.locator("#submission[data-status=graded]").wait_for(timeout=GRADED_WITHIN * 1000)  # live update
        student.wait_for_load_state()  # the page its script reloaded, whole
        assert len(student.inner_text("#public-symbols")) == 6
        assert "Graded again: the plan changed. Before: public tests" in student.inner_text("#rerun")
        assert before in student.inner_text("#rerun")
    finally:
        server.stop()


def submit(page: Any, selector: str) -> None:
    """Click a form's button (or a link) and wait until the page it leads to has loaded (a click
    alone returns once the navigation has begun, when the page may still be empty or half read:
    what the test then counts or reads of it would not wait)."""
    with page.expect_navigation():
        page.click(selector)


@pytest.mark.slow  # a browser and a server: several seconds
def test_in_a_browser_a_password_is_changed_only_with_the_current_one(tmp_path, chromium):
    """The home page's form, without JavaScript: a first password needs no current one; once
    set, the form asks for it, a wrong one is refused, and the right one changes it."""
    course = make_course(tmp_path / "course")
    server = Server(course, tmp_path, None, "--workers", "0")
    try:
        instructor = Client(server.url)
        instructor.sign_in(server.link)
        link = instructor.post("/class/links", {"email": "s1@example.edu"}).json()["links"][0]["link"]
        context = chromium.new_context(java_script_enabled=False)
        page = context.new_page()
        page.goto(link)
        submit(page, "#signin")
        assert page.locator("input[name=current]").count() == 0  # none set yet: none asked
        page.fill("input[name=password]", "first password 1")
        submit(page, "button:has-text('Set password')")
        assert "You have a password." in page.content()
        page.fill("input[name=current]", "not the password")
        page.fill("input[name=password]", "thief's password")
        submit(page, "button:has-text('Set password')")
        assert page.inner_text("#error") == "the current password is wrong: give the one you sign in with"
        page.goto(server.url + "/")
        page.fill("input[name=current]", "first password 1")
        page.fill("input[name=password]", "second password 2")
        submit(page, "button:has-text('Set password')")
        submit(page, "button:has-text('Sign out')")
        page.fill("input[name=email]", "s1@example.edu")
        page.fill("input[name=password]", "second password 2")
        submit(page, "button:has-text('Sign in')")
        assert page.url == server.url + "/" and "You have a password." in page.content()
        context.close()
    finally:
        server.stop()


@pytest.mark.slow  # a browser and a server: 5-10 s
def test_a_student_sees_the_ladder_with_aliases(tmp_path, chromium):
    course = make_course(tmp_path / "course")
    text = (course / "course.yaml").read_text()
    (course / "course.yaml").write_text(text.replace("plan: othello-endgame.plan\n", "plan: othello-endgame.plan\n"
                                                     "    ladder: {anonymous: true, top: 2}\n", 1))  # fmt: skip
    url = f"sqlite:///{tmp_path / 'portal.sqlite3'}"
    engine = connect(url)
    upgrade(engine)
    make, loaded = sessions(engine), load_course(course)
    apply(loaded, make)
    ladder = loaded.ladders["othello"]
    seed(make, loaded, "othello", [f"s{i}@example.edu" for i in range(1, 7)])  # Student 1 best, then 2, ...
    with make() as s:
        entries = ladders.standing(s, ladder)
    aliases = {e.name: entries.aliases[e.participant] for e in entries.entries}
    engine.dispose()
    server = Server(course, tmp_path, url, "--workers", "0")
    try:
        instructor = Client(server.url)
        instructor.sign_in(server.link)
        staff_rows = instructor.get("/api/ladder/othello").json()["rows"]
        assert [r["name"] for r in staff_rows] == [f"Student {i}" for i in range(1, 7)]  # staff: the names
        link = instructor.post("/class/links", {"email": "s6@example.edu"}).json()["links"][0]["link"]
        page = _signed_in(chromium, link)
        problems: list[str] = []
        page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
        page.on("response", lambda r: problems.append(f"{r.status} {r.url}") if r.status >= 400 else None)
        submit(page, "text=Ladders")
        submit(page, "text=Othello endgame lab")
        rows = page.locator("#ladder tr")
        shown = [rows.nth(i).inner_text().split("\t") for i in range(1, rows.count())]
        assert [r[0] for r in shown] == ["1", "2", "4", "5", "6"]  # the top 2, and 2 above their own
        assert [r[1] for r in shown] == [aliases[f"Student {i}"] for i in (1, 2, 4, 5)] + [
            f"{aliases['Student 6']} (you)"
        ]
        assert "Student" not in page.inner_text("main")
        assert "1 more entry is not shown" in page.inner_text("#hidden")
        assert shown[0][3].startswith("+") and shown[-1][3].startswith("-") and shown[0][4].isdigit()  # Elo, ±95%
        assert [r[2] for r in shown[:-1]] == [""] * 4 and shown[-1][2].endswith(" v1")  # only their own engine named
        with page.expect_navigation():  # its link (the chart names it too)
            page.locator("a", has_text=aliases["Student 5"]).first.click()
        assert "Student" not in page.inner_text("main") and page.locator("#recent tr").count() == 13
        page.go_back()
        submit(page, "text=Crosstable")
        assert page.locator("#crosstable th").nth(1).inner_text() == aliases["Student 1"]
        assert "Student" not in page.inner_text("main")
        assert problems == []
    finally:
        server.stop()


TABS = 250  # the Tab presses a keyboard user makes at most to reach a control


def tab_to(page: Any, selector: str) -> None:
    """Press Tab (the keyboard alone: no click) until the element ``selector`` has the focus."""
    target = page.locator(selector)
    target.wait_for(state="attached")
    for _ in range(TABS):
        page.keyboard.press("Tab")
        if target.evaluate("e => e === document.activeElement"):
            return
    raise AssertionError(f"{TABS} Tab presses never reached {selector} on {page.url}")


def press(page: Any, key: str) -> None:
    """Press ``key`` on the focused control and wait for the page it leads to."""
    with page.expect_navigation():
        page.keyboard.press(key)


@pytest.mark.slow  # a browser and a server: several seconds
def test_a_student_signs_in_and_uploads_with_the_keyboard_alone(tmp_path, chromium):
    """Tab, Enter and Space only: the sign-in button, the assignment's link, the file input
    (Space opens the file chooser), the Submit button; the submission's page says it was received."""
    course = make_course(tmp_path / "course")
    server = Server(course, tmp_path, None, "--workers", "0")
    try:
        instructor = Client(server.url)
        instructor.sign_in(server.link)
        link = instructor.post("/class/links", {"email": "s1@example.edu"}).json()["links"][0]["link"]
        page = chromium.new_page()
        # Listening for file choosers from the start makes the browser intercept them long before
        # the Space press: a listener added only with the press races it (puppeteer#6040).
        page.on("filechooser", lambda _: None)
        page.goto(link)
        tab_to(page, "#signin")
        press(page, "Enter")
        tab_to(page, "a[href='/a/othello']")
        press(page, "Enter")
        tab_to(page, "input[name=script]")
        with page.expect_file_chooser(timeout=10_000) as chosen:
            page.keyboard.press("Space")
        chosen.value.set_files(str(WRONG))
        tab_to(page, "#upload")
        press(page, "Enter")
        assert page.url.startswith(f"{server.url}/s/")
        assert page.inner_text("#receipt") == page.url.rsplit("/", 1)[1]
        assert f"{WRONG.name}, received" in page.inner_text("main")
    finally:
        server.stop()


@pytest.mark.slow  # a browser and a server: several seconds
def test_an_instructor_releases_the_private_results_with_the_keyboard_alone(tmp_path, chromium):
    """Tab and Space only, from the sign-in page to the class page's release button."""
    course = make_course(tmp_path / "course")
    server = Server(course, tmp_path, None, "--workers", "0")
    try:
        page = chromium.new_page()
        page.goto(server.link)
        tab_to(page, "#signin")
        press(page, "Space")
        assert page.url == f"{server.url}/class"
        tab_to(page, "form[action='/class/release']:has(input[value=othello]) button")
        press(page, "Space")
        tab_to(page, "#confirm-release")  # the confirmation page's button
        press(page, "Space")
        assert "Othello endgame lab: released to the students." in page.inner_text("main")
        assert page.locator("form[action='/class/release']:has(input[value=othello])").count() == 0
    finally:
        server.stop()


@pytest.mark.slow  # a browser and a server: several seconds
def test_the_class_table_filters_and_sorts_its_page_without_a_reload_and_the_class_by_its_form(tmp_path, chromium):
    """A class of 230, shown 100 a page: typing in the filter hides this page's rows that do
    not match and a heading sorts this page, neither reloading it (the status says 'on this
    page'); the Filter button asks the server, which filters the whole class."""
    course = make_course(tmp_path / "course")
    emails = [f"p{i:03d}@example.edu" for i in range(230)]
    (course / "roster.csv").write_text("Email,Name\n" + "".join(f"{e},Student {e[:4]}\n" for e in emails))
    server = Server(course, tmp_path, None, "--workers", "0")
    try:
        page = chromium.new_page()
        page.goto(server.link)
        submit(page, "#signin")
        page.goto(server.url + "/class")
        shown = page.locator("#class tbody tr:visible td:first-child small")
        page.fill("#filter input[name=q]", "p21")  # on the third page: none on this one
        assert page.inner_text("#shown") == "0 of the 100 students on this page" and shown.count() == 0
        page.fill("#filter input[name=q]", "p02")
        assert shown.all_inner_texts() == emails[20:30]
        page.click("#class thead th:first-child a.sort")  # sorted the other way, this page only
        assert shown.all_inner_texts() == emails[20:30][::-1]
        assert page.url == server.url + "/class"  # no reload
        page.fill("#filter input[name=q]", "p21")
        submit(page, "#filter button")
        assert page.url == server.url + "/class?q=p21" and shown.all_inner_texts() == emails[210:220]
        assert page.inner_text("#shown") == "10 of 230 students"
    finally:
        server.stop()
