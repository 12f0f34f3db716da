"""Screenshots of the course portal's main pages, for the README and docs/guides/portal.md:
a student's assignment page and submission page (public feedback, private results released)
and the instructor's class table, taken in Chromium (Playwright) from a demo course served by
``grader serve`` in a temporary folder.

Usage: python docs/screenshots.py [OUT]    (OUT: docs/images by default; rerunnable)
Needs the portal and test extras and a Chromium (apt-get install chromium).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from playwright.sync_api import Page, sync_playwright

ROOT = Path(__file__).resolve().parent.parent
CHROMIUMS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
VIEWPORT = {"width": 1000, "height": 720}
MAX_BYTES = 150 * 1024  # each image, as the README wants them


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


def shoot(page: Page, path: Path) -> None:
    page.screenshot(path=str(path))
    size = path.stat().st_size
    print(f"{path}: {size // 1024} KiB")
    if size > MAX_BYTES:
        raise SystemExit(f"{path} is {size // 1024} KiB, over {MAX_BYTES // 1024}: make the viewport smaller")


def main(out: Path) -> None:
    from grader.portal.course import make_demo_course

    chromium = next((p for p in map(shutil.which, CHROMIUMS) if p), None)
    if chromium is None:
        raise SystemExit("no Chromium installed (apt-get install chromium)")
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="grader-screenshots-") as tmp:
        course = make_demo_course(Path(tmp) / "course")
        proc, url, link = serve(course, Path(tmp))
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
                instructor = signed_in(browser, link)
                instructor.fill("form[action='/class/links'] input[name=email]", "ada@example.edu")
                instructor.click("text=Make one-time sign-in links")
                student = signed_in(browser, instructor.inner_text("#links code"))
                student.click("text=Othello endgame lab")
                for script in ("negamax.py", "wrong_score.py"):
                    student.goto(f"{url}/a/othello")
                    student.set_input_files("input[name=script]", str(ROOT / "submissions" / script))
                    student.click("#upload")
                    student.wait_for_url(f"{url}/s/*")
                    student.locator("#submission[data-status=graded]").wait_for(timeout=300_000)
                submission = student.url
                instructor.goto(f"{url}/class")
                instructor.click("text=Release the private results of Othello endgame lab")
                student.goto(f"{url}/a/othello")
                shoot(student, out / "portal-assignment.png")
                student.goto(submission)
                shoot(student, out / "portal-submission.png")
                instructor.goto(f"{url}/class")
                shoot(instructor, out / "portal-class.png")
                browser.close()
        finally:
            proc.terminate()
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
                time.sleep(0.1)


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "images")
