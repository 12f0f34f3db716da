"""A course portal for the tests: ``grader serve`` as its own process on a free port
(``Server``), a browser's part over HTTP (``Client``), the demo course with a roster
(``make_course``), and what the grader itself gives for a script (``library_result``). The
fixtures ``portal`` (one server for a test module) and ``graded_pair`` (two uploads graded)
are tests/conftest.py's."""

from __future__ import annotations

import io
import re
import signal
import subprocess
import sys
import tarfile
import threading
import time
from pathlib import Path

import pytest

httpx = pytest.importorskip("httpx", reason="the portal's tests need httpx (pip install -e '.[test]')")
pytest.importorskip("starlette", reason='the portal needs its extra: pip install -e ".[portal]"')


from grader.grading.run import grade  # noqa: E402
from grader.portal.course.course import load_course, make_demo_course  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
NEGAMAX = ROOT / "submissions" / "negamax.py"
GOMOKU = ROOT / "submissions" / "gomoku"
WRONG = ROOT / "submissions" / "wrong_score.py"
STUDENTS = [(f"s{i}@example.edu", f"Student {i}") for i in range(1, 7)]
UPLOAD_KB = 16
GRADED_WITHIN = 600  # seconds: a deadline, not a measure: 10 boards graded in far less, 100 in minutes at load 8


def make_course(folder: Path, per_day: int = 3) -> Path:
    """The demo course with a roster of six students, a small upload limit and ``per_day``
    uploads; its config.yaml names the program an upload holding several runs (Gomoku.py)."""
    make_demo_course(folder)
    (folder / "config.yaml").write_text("entry: Gomoku.py\n")
    (folder / "roster.csv").write_text("Email,Name\n" + "".join(f"{e},{n}\n" for e, n in STUDENTS))
    text = (folder / "course.yaml").read_text()
    text = text.replace("upload_kb: 256", f"upload_kb: {UPLOAD_KB}").replace("per_day: 10", f"per_day: {per_day}", 1)
    (folder / "course.yaml").write_text(text)
    return folder


class Server:
    """``grader serve [COURSE] --port 0`` as its own process; its address and instructor link read from its output."""

    def __init__(self, course: Path | None, cwd: Path, database: str | None = None, *options: str):
        args = [sys.executable, "-m", "grader", "serve", *([str(course)] if course else []), "--port", "0", *options]
        if database:
            args += ["--database", database]
        self.proc = subprocess.Popen(args, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.lines: list[str] = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            self.lines.append(line)
            m = re.match(r"One-time sign-in link for (\S+): (https?://\S+)", line)
            if m:
                self.link = m.group(2)
                self.url = re.search(r"Portal at (http://\S+)/", "".join(self.lines)).group(1)
                threading.Thread(target=self._drain, daemon=True).start()
                self._wait_listening()
                return
        self.stop()
        raise AssertionError("the server did not start:\n" + "".join(self.lines))

    def _drain(self) -> None:
        for line in self.proc.stdout:
            self.lines.append(line)

    def _wait_listening(self) -> None:
        deadline = time.monotonic() + 60  # a server still starting on a loaded machine: its first page can take long
        while True:
            try:
                httpx.get(self.url + "/signin", timeout=10)
                return
            except httpx.TransportError as e:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    self.stop()
                    raise AssertionError(f"the server never answered ({e}):\n" + "".join(self.lines)) from e
                time.sleep(0.1)

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class Client:
    """A browser's part over HTTP: its cookies, the session's CSRF token, JSON answers."""

    def __init__(self, url: str):
        self.url = url
        self.http = httpx.Client(base_url=url, headers={"Accept": "application/json"}, timeout=30)
        self.csrf = ""

    def get(self, path: str, **kw) -> httpx.Response:
        r = self.http.get(path, **kw)
        if r.headers.get("content-type", "").startswith("application/json"):
            self.csrf = r.json().get("csrf", self.csrf)
        return r

    def html(self, path: str) -> httpx.Response:
        return self.http.get(path, headers={"Accept": "text/html"})

    def post(self, path: str, data: dict | None = None, csrf: bool = True, **kw) -> httpx.Response:
        fields = dict(data or {})
        if csrf:
            fields["csrf"] = self.csrf
        r = self.http.post(path, data=fields, **kw)
        if r.headers.get("content-type", "").startswith("application/json"):
            self.csrf = r.json().get("csrf", self.csrf)
        return r

    def sign_in(self, link: str) -> None:
        path = link[len(self.url) :]
        assert self.get(path).status_code == 200
        r = self.post(path)
        assert r.status_code == 200, r.text
        self.get("/")

    def upload(self, script: Path | bytes, name: str = "lab.py", assignment: str = "othello", **kw) -> httpx.Response:
        content = script if isinstance(script, bytes) else script.read_bytes()
        return self.post(f"/a/{assignment}", files={"script": (name, content, "text/x-python")}, **kw)

    def graded(self, sid: str) -> dict:
        deadline = time.monotonic() + GRADED_WITHIN
        while time.monotonic() < deadline:
            data = self.get(f"/s/{sid}").json()
            if data["status"] in ("graded", "failed"):
                return data
            time.sleep(0.3)
        raise AssertionError(f"submission {sid} not graded within {GRADED_WITHIN} s: {data}")


def library_result(course, script: Path, assignment: str = "othello"):
    """What grader.grading gives for the script on the assignment's plan and settings."""
    a = course.assignments[assignment]
    return grade(script, a.plan, course.settings(a))


def gtp_archive(program: Path, *helpers: Path) -> bytes:
    """A .tar.gz of a program folder as a student packs it (tar czf lab.tar.gz lab): the program as
    Gomoku.py (the course's config.yaml names it), its helpers beside it."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tf:
        tf.add(program, "lab/Gomoku.py")
        for helper in helpers:
            tf.add(helper, f"lab/{helper.name}")
    return out.getvalue()


def gradescope_of(course, folder: Path) -> tuple[str, dict]:
    """What 'grader gradescope --game gomoku --plan gomoku.gtp' gives the program in ``folder``:
    each test's symbol (from the grading call it makes) and its results.json."""
    from grader.labs import gradescope_results
    from grader.regression.runs import regress_submission
    from grader.runs.submissions import find_submission_folder

    a = course.assignments["gomoku"]
    sub = find_submission_folder(folder, set(), course.config.entry)
    student = regress_submission(sub, [a.plan.path], a.plan.game)
    results = gradescope_results(folder, course.config, game_name="gomoku", plan_name=str(a.plan.path))
    return student.results[0].symbols, results


def _sync(course: Path):
    from click.testing import CliRunner

    from grader.cli import main

    return CliRunner().invoke(main, ["portal", "sync", str(course)])


def open_portal(course: Path, tmp: Path) -> dict:
    """A server of ``course`` and its people signed in: the course, the server, the instructor
    and each student's client (stop its server when done)."""

    server = Server(course, tmp)
    instructor = Client(server.url)
    instructor.sign_in(server.link)
    students = {}
    for entry in instructor.post("/class/links").json()["links"]:
        c = Client(server.url)
        c.sign_in(entry["link"])
        students[entry["email"]] = c
    return {"course": load_course(course), "server": server, "instructor": instructor, "students": students, "tmp": tmp}
