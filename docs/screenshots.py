"""Screenshots of the course portal's main pages, for the README and docs/guides/portal.md:
a student's assignment page (in a team of two formed by invitation) and submission page
(public feedback, private results released), the submission page on a 375-pixel phone, the
code of the submission with its released hand grade and a line comment as the student reads
it, the instructor's class table, the hand-grading page and the regrade queue with the
student's request open; and of the arena's: an SPRT test decided by the portal's
workers (two versions of an NBoard engine, uploaded in the browser) and an open ladder
three students and the instructor entered. Taken in Chromium (Playwright) from a demo course
(its Othello lab done in teams and graded by hand too, a ladder added) served by
``grader serve`` in a temporary folder.

Usage: python docs/screenshots.py [OUT]    (OUT: docs/images by default; rerunnable)
Needs the portal and test extras and a Chromium (apt-get install chromium).
"""

from __future__ import annotations

import io
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from playwright.sync_api import Page, sync_playwright

ROOT = Path(__file__).resolve().parent.parent
CHROMIUMS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
VIEWPORT = {"width": 1000, "height": 720}
PHONE = {"width": 375, "height": 720}
MAX_BYTES = 150 * 1024  # each image, as the README wants them
# the Othello lab in teams of two, with a rubric (added to the demo course's course.yaml)
OTHELLO = "    per_day: 10\n  - name: tictactoe"
TEAMS_AND_RUBRIC = """\
    per_day: 10
    teams: {size: 2}
    rubric:
      items:
        - {name: clean search, points: 1, comment: a clear negamax with alpha-beta}
        - {name: score, points: -1, comment: the score is the disc difference}
  - name: tictactoe"""
LINE_COMMENT = (86, "This counts your discs at the end: the lab asks for the difference (yours minus theirs).")
REGRADE = "Test 3's line is optimal: may my score be checked by hand?"
LADDER = "ladders:\n  - {name: open, title: Open Othello ladder, game: othello, tc: 2+0.05}\n"
# the ladder's players: the demo students' and the instructor's engines (bundled move scripts)
PLAYERS = {"ada@example.edu": "greedy", "alan@example.edu": "random_mover", "grace@example.edu": "random_mover",
           "": "greedy"}  # fmt: skip


def serve(course: Path, cwd: Path) -> tuple[subprocess.Popen, str, str]:
    """``grader serve COURSE --port 0``: the process, its address and the instructor's link."""
    proc = subprocess.Popen([sys.executable, "-m", "grader", "serve", str(course), "--port", "0"], cwd=cwd,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)  # fmt: skip
    seen = ""
    assert proc.stdout is not None
    for line in proc.stdout:
        seen += line
        found = re.match(r"One-time sign-in link for \S+: (http://\S+)", line)
        if found:
            return proc, re.search(r"Portal at (http://\S+)/", seen).group(1), found.group(1)  # type: ignore[union-attr]
    raise SystemExit("the portal did not start:\n" + seen)


def signed_in(browser, link: str) -> Page:
    page = browser.new_context(viewport=VIEWPORT).new_page()
    page.goto(link)
    page.click("#signin")
    return page


def student_page(browser, instructor: Page, url: str, email: str) -> Page:
    """A page signed in as the student, by a one-time link the instructor makes."""
    instructor.goto(f"{url}/class")
    instructor.fill("form[action='/class/links'] input[name=email]", email)
    instructor.click("text=Make one-time sign-in links")
    return signed_in(browser, instructor.inner_text("#links code"))


def nboard_archive(script: str, folder: Path) -> Path:
    """A .tar.gz of an NBoard engine as an author packs one: the bundled NBoard adapter, a
    bundled move script, and the COMMAND that starts them."""
    from grader.files import bundled

    path = folder / f"{script}.tar.gz"
    with tarfile.open(path, "w:gz") as tf:
        for member, data in (("engine.py", bundled("nboard", "engine.py").read_bytes()),
                             (f"{script}.py", bundled("submissions", f"{script}.py").read_bytes()),
                             ("COMMAND", f"python3 engine.py {script}.py\n".encode())):  # fmt: skip
            info = tarfile.TarInfo(member)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return path


def new_engine(page: Page, url: str, name: str, archives: list[Path]) -> None:
    """An engine of the signed-in user, with a version of each archive, all checked."""
    page.goto(f"{url}/arena")
    page.fill("#new-engine input[name=name]", name)
    page.click("#new-engine button")
    page.wait_for_url(f"{url}/arena/e/*")
    for archive in archives:
        page.set_input_files("#upload input[name=file]", str(archive))
        page.fill("#upload input[name=label]", archive.name.split(".")[0])
        page.click("#upload button")
        page.wait_for_load_state()
    page.locator("#engine[data-settled=true]").wait_for(timeout=300_000)


def shoot(page: Page, path: Path) -> None:
    page.screenshot(path=str(path))
    size = path.stat().st_size
    print(f"{path}: {size // 1024} KiB")
    if size > MAX_BYTES:
        raise SystemExit(f"{path} is {size // 1024} KiB, over {MAX_BYTES // 1024}: make the viewport smaller")


def main(out: Path) -> None:
    from grader.portal.course.course import make_demo_course

    chromium = next((p for p in map(shutil.which, CHROMIUMS) if p), None)
    if chromium is None:
        raise SystemExit("no Chromium installed (apt-get install chromium)")
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="grader-screenshots-") as tmp:
        course = make_demo_course(Path(tmp) / "course")
        text = (course / "course.yaml").read_text()
        assert OTHELLO in text, "the demo course's course.yaml changed: update OTHELLO"
        (course / "course.yaml").write_text(text.replace(OTHELLO, TEAMS_AND_RUBRIC) + LADDER)
        proc, url, link = serve(course, Path(tmp))
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
                instructor = signed_in(browser, link)
                student = student_page(browser, instructor, url, "ada@example.edu")
                teammate = student_page(browser, instructor, url, "alan@example.edu")
                student.click("text=Othello endgame lab")
                student.fill("#team-invite input[name=email]", "alan@example.edu")
                student.click("#team-invite button")
                teammate.goto(f"{url}/a/othello")
                teammate.click("#team-received button:has-text('Accept')")
                teammate.locator("#team-members").wait_for()
                for script in ("negamax.py", "wrong_score.py"):
                    student.goto(f"{url}/a/othello")
                    student.set_input_files("input[name=script]", str(ROOT / "submissions" / script))
                    student.click("#upload")
                    student.wait_for_url(f"{url}/s/*")
                    student.locator("#submission[data-status=graded]").wait_for(timeout=300_000)
                submission = student.url
                instructor.goto(f"{url}/class")
                instructor.click("text=Release the private results of Othello endgame lab")
                instructor.click("#confirm-release")  # the page that asks to confirm
                instructor.locator("text=Othello endgame lab: released to the students").wait_for()
                student.goto(f"{url}/a/othello")
                shoot(student, out / "portal-assignment.png")
                student.goto(submission)
                shoot(student, out / "portal-submission.png")
                student.set_viewport_size(PHONE)
                shoot(student, out / "portal-phone.png")
                student.set_viewport_size(VIEWPORT)
                hand_grading(instructor, student, url, submission, out)
                instructor.goto(f"{url}/class")
                shoot(instructor, out / "portal-class.png")
                arena_pages(browser, instructor, url, Path(tmp), out)
                browser.close()
        finally:
            proc.terminate()
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
                time.sleep(0.1)


def hand_grading(instructor: Page, student: Page, url: str, submission: str, out: Path) -> None:
    """The instructor grades the counted submission by hand (a rubric item, a line comment) and
    releases it; the student reads it on the code page, then asks for a regrade, which the
    staff's queue lists."""
    instructor.goto(f"{url}/class/othello/grading")
    instructor.click("#grading a[href$='/code']")
    instructor.check("#rubric input[value='clean search']")
    instructor.click("#save-rubric")
    instructor.fill("#comment-form input[name=line]", str(LINE_COMMENT[0]))
    instructor.fill("#comment-form textarea[name=text]", LINE_COMMENT[1])
    instructor.click("#add-comment")
    instructor.locator("#hand-comments").wait_for()
    instructor.goto(f"{url}/class/othello/grading")
    shoot(instructor, out / "portal-grading.png")
    instructor.click("#hand-release")
    instructor.locator("#undo-hand-release").wait_for()
    student.goto(f"{submission}/code")
    student.locator("#hand-comments").wait_for()
    shoot(student, out / "portal-code.png")
    student.goto(submission)
    student.fill("#regrade-reason", REGRADE)
    student.click("#regrade-ask")
    student.locator(".regrade-state").wait_for()
    instructor.goto(f"{url}/class/regrades")
    shoot(instructor, out / "portal-regrades.png")


def arena_pages(browser, instructor: Page, url: str, tmp: Path, out: Path) -> None:
    """The arena's test page once its SPRT decided, and the open ladder after some rounds."""
    archives = {name: nboard_archive(name, tmp) for name in set(PLAYERS.values())}
    new_engine(instructor, url, "demo", [archives["random_mover"], archives["greedy"]])
    instructor.select_option("#new-test select[name=new]", label="v2")
    instructor.select_option("#new-test select[name=base]", label="v1")
    instructor.fill("#new-test input[name=tc]", "2+0.05")
    instructor.fill("#new-test input[name=elo1]", "200")
    instructor.fill("#new-test input[name=max_games]", "100")  # room for a decision
    instructor.click("#new-test button")
    instructor.wait_for_url(f"{url}/arena/t/*")
    instructor.locator("#test[data-settled=true]").wait_for(timeout=600_000)  # the page updates itself
    shoot(instructor, out / "arena-test.png")
    for email, script in PLAYERS.items():
        player = student_page(browser, instructor, url, email) if email else instructor
        new_engine(player, url, script.replace("_", "-"), [archives[script]])
        player.goto(f"{url}/ladder/open")
        player.click("#enter")
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:  # until every entry is rated
        instructor.goto(f"{url}/ladder/open")
        if "not rated yet" not in instructor.inner_text("#ladder"):
            break
        time.sleep(5)
    time.sleep(10)
    instructor.goto(f"{url}/ladder/open")
    shoot(instructor, out / "arena-ladder.png")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "images")
