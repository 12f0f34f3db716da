"""What staff download of an assignment, and a student cannot: Gradescope's results.json,
the run folder ``grader grade class`` writes, a GTP lab's results as ``grader gradescope``
and ``grader regress`` write them."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import zipfile

import pytest

pytestmark = pytest.mark.xdist_group(__name__)  # one worker: the module's fixture runs once

httpx = pytest.importorskip("httpx", reason="the portal's tests need httpx (pip install -e '.[test]')")
pytest.importorskip("starlette", reason='the portal needs its extra: pip install -e ".[portal]"')


from grader.grading import gradescope  # noqa: E402
from grader.grading.run import grade_class  # noqa: E402
from grader.grading.runfolder import RunFolder  # noqa: E402

from portal_server import (  # noqa: E402
    GOMOKU,
    STUDENTS,
    WRONG,
    gradescope_of,
    gtp_archive,
    library_result,
)


def test_staff_download_the_gradescope_json_grader_gradescope_writes(portal, graded_pair):
    instructor, course = portal["instructor"], portal["course"]
    r = instructor.http.get("/class/othello/gradescope.json")
    assert r.status_code == 200 and "attachment" in r.headers["content-disposition"], r.text
    data = r.json()
    assert data["assignment"] == "othello"
    mine = next(s for s in data["students"] if s["email"] == "s1@example.edu")
    assert mine["submission"] == graded_pair["wrong_score.py"]["id"]  # the counted one: the latest graded
    expected = gradescope.results_json(library_result(course, WRONG), 0.0)  # what grader gradescope writes
    got = mine["results"]
    assert got["tests"] == expected["tests"] and got["tests"]
    assert (got["score"], got["max_score"]) == (expected["score"], expected["max_score"]) and got["score"] < 10
    assert got["output"].splitlines()[1:] == expected["output"].splitlines()[1:]  # the first line names the student
    assert all(t["visibility"] == "after_published" for t in got["tests"] if t["name"].startswith("Private"))
    assert {s["email"] for s in data["students"]} <= {e for e, _ in STUDENTS}


def test_staff_download_the_run_folder_grade_class_writes_as_a_zip(portal, graded_pair, tmp_path, monkeypatch):
    course = portal["course"]
    a = course.assignments["othello"]
    with portal["instructor"].http.stream("GET", "/class/othello/run.zip") as r:
        assert r.status_code == 200 and r.headers["content-type"] == "application/zip"
        assert "content-length" not in r.headers and r.headers["transfer-encoding"] == "chunked"  # streamed
        body = b"".join(r.iter_bytes())
    with zipfile.ZipFile(io.BytesIO(body)) as zf:
        assert all(not n.startswith("/") and ".." not in n.split("/") for n in zf.namelist())
        zf.extractall(tmp_path / "zip")
    top = tmp_path / "zip" / "othello"
    assert (top / "submissions" / "s1@example.edu" / "submission.py").read_bytes() == WRONG.read_bytes()
    theirs = grade_class([WRONG], a.plan, course.settings(a), out=tmp_path / "theirs")
    written = sorted(p.name for p in theirs.folder.path.iterdir() if p.name != "answers.jsonl")  # a cache for --resume
    assert sorted(p.name for p in (top / "run").iterdir()) == written
    monkeypatch.setenv("GRADER_KEYS", str(top / "keys"))  # the run's key came in the zip
    ours = {r.name: r for r in RunFolder.open(top / "run").results()}
    s1, expected = ours["s1@example.edu"], theirs.results[0]
    assert (s1.symbols, s1.total, s1.stopped) == (expected.symbols, expected.total, expected.stopped)
    assert [t.record()["verdict"] for t in s1.tests] == [t.record()["verdict"] for t in expected.tests]
    grades = (top / "run" / "grades.csv").read_text()
    assert grades.splitlines()[0] == (theirs.folder.path / "grades.csv").read_text().splitlines()[0]
    report = subprocess.run([sys.executable, "-m", "grader", "report", str(top / "run")], capture_output=True,
                            text=True, env={**os.environ, "GRADER_KEYS": str(top / "keys")})  # fmt: skip
    assert report.returncode == 0 and "s1@example.edu" in report.stdout, report.stderr


@pytest.mark.slow  # grades the program twice more: as grader gradescope and as grader regress
def test_staff_download_a_gtp_labs_results_as_gradescope_and_regress_write_them(portal, tmp_path, monkeypatch):
    """The Gomoku lab's Gradescope JSON is what 'grader gradescope' writes for the counted
    program, and its run.zip the run folder 'grader regress' writes for the class."""
    from grader.portal.course.gtplab import regress_settings
    from grader.regression.runs import RegressFolder, regress_class

    course, instructor = portal["course"], portal["instructor"]
    a = course.assignments["gomoku"]
    me = portal["students"]["s5@example.edu"]
    r = me.upload(gtp_archive(GOMOKU / "wrong_winner.py", GOMOKU / "solver.py"), name="lab.tar.gz", assignment="gomoku")
    assert me.graded(r.json()["id"])["status"] == "graded"
    program = tmp_path / "class" / "s5@example.edu"
    program.mkdir(parents=True)
    (program / "Gomoku.py").write_bytes((GOMOKU / "wrong_winner.py").read_bytes())
    (program / "solver.py").write_bytes((GOMOKU / "solver.py").read_bytes())
    symbols, expected = gradescope_of(course, program)
    expected = json.loads(json.dumps(expected).replace(str(a.plan.path), a.plan.name))  # the portal names no path
    r = instructor.http.get("/class/gomoku/gradescope.json")
    assert r.status_code == 200 and "attachment" in r.headers["content-disposition"], r.text
    got = next(s for s in r.json()["students"] if s["email"] == "s5@example.edu")["results"]
    assert "-" in symbols and got["tests"] and got["tests"] == expected["tests"]
    assert {k: v for k, v in got.items() if k != "execution_time"} == {
        k: v for k, v in expected.items() if k != "execution_time"}  # fmt: skip
    with instructor.http.stream("GET", "/class/gomoku/run.zip") as r:
        assert r.status_code == 200 and r.headers["content-type"] == "application/zip"
        body = b"".join(r.iter_bytes())
    with zipfile.ZipFile(io.BytesIO(body)) as zf:
        zf.extractall(tmp_path / "zip")
    top = tmp_path / "zip" / "gomoku"
    theirs = regress_class([tmp_path / "class"], [a.plan.path], a.plan.game, regress_settings(course.config, a.limits),
                           out=tmp_path / "theirs", entry=course.config.entry)  # fmt: skip
    assert sorted(p.name for p in (top / "run").iterdir()) == sorted(p.name for p in theirs.folder.path.iterdir())
    monkeypatch.setenv("GRADER_KEYS", str(top / "keys"))  # the run's key came in the zip
    ours = {s.name: s for s in RegressFolder.open(top / "run").results()}
    (expected_student,) = theirs.students
    mine = ours["s5@example.edu"]
    assert [(x.file, x.symbols, x.total) for x in mine.results] == [
        (a.plan.name, x.symbols, x.total) for x in expected_student.results]  # fmt: skip
    assert mine.results[0].symbols == symbols
    grades = (top / "run" / "grades.csv").read_text().splitlines()
    assert grades[0] == (theirs.folder.path / "grades.csv").read_text().splitlines()[0].replace(
        str(a.plan.path), a.plan.name
    )
    report = subprocess.run([sys.executable, "-m", "grader", "report", str(top / "run")], capture_output=True,
                            text=True, env={**os.environ, "GRADER_KEYS": str(top / "keys")})  # fmt: skip
    assert report.returncode == 0 and "s5@example.edu" in report.stdout, report.stderr
