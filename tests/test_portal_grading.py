"""The portal grades as the grader grades: each lab's verdicts, totals and feedback as
``grader grade`` (or ``grader gradescope``, for the GTP lab) give them; what an upload can
and cannot do (a hostile archive, a script reading the course, a program remembering the
private positions)."""

from __future__ import annotations

import io
import re
import zipfile

import pytest

pytestmark = pytest.mark.xdist_group(__name__)  # one worker: the module's fixture runs once

httpx = pytest.importorskip("httpx", reason="the portal's tests need httpx (pip install -e '.[test]')")
pytest.importorskip("starlette", reason='the portal needs its extra: pip install -e ".[portal]"')


from grader.grading import report  # noqa: E402

from portal_server import (  # noqa: E402
    GOMOKU,
    NEGAMAX,
    ROOT,
    WRONG,
    Client,
    Server,
    gradescope_of,
    gtp_archive,
    library_result,
)


@pytest.mark.parametrize("script", [NEGAMAX, WRONG], ids=["negamax", "wrong_score"])
def test_the_portal_gives_the_verdicts_grade_gives(portal, graded_pair, script):
    seen = graded_pair[script.name]
    assert seen["status"] == "graded"
    course = portal["course"]
    plan = course.assignments["othello"].plan
    expected = library_result(course, script)
    public = "".join(t.symbol for t in expected.tests if plan.is_public(t.index))
    assert seen["public_symbols"] == public
    assert seen["public_total"] == sum(t.verdict.credit for t in expected.tests if plan.is_public(t.index))
    offending = report.offending_report(expected, public_only=True)
    for line in offending.splitlines():
        if line.startswith(("Test ", "board ", "exact:", "verdict:")) or line == "All tests perfect.":
            assert line in seen["feedback"], line
    staff = portal["instructor"].get(f"/s/{seen['id']}").json()
    assert staff["symbols"] == expected.symbols and staff["total"] == expected.total
    if script == WRONG:
        assert expected.total < expected.max_total  # the check would pass on any answer otherwise


@pytest.mark.slow  # 100 tests, graded twice (by the portal and by grade): 10-15 s
def test_the_tictactoe_lab_is_graded_as_grade_grades_it(portal):
    script = ROOT / "submissions" / "tictactoe" / "can_lose.py"
    me = portal["students"]["s6@example.edu"]
    seen = me.graded(me.upload(script, name="can_lose.py", assignment="tictactoe").json()["id"])
    expected = library_result(portal["course"], script, "tictactoe")
    staff = portal["instructor"].get(f"/s/{seen['id']}").json()
    assert staff["symbols"] == expected.symbols and staff["total"] == expected.total < expected.max_total
    plan = portal["course"].assignments["tictactoe"].plan
    assert seen["public_symbols"] == "".join(t.symbol for t in expected.tests if plan.is_public(t.index))


@pytest.mark.parametrize("upload", ["solver.py", "wrong_winner.tar.gz", "command.zip", "starter.zip"])
def test_the_gomoku_lab_over_gtp_gives_the_verdicts_gradescope_gives(portal, upload, tmp_path):
    """A GTP program, uploaded alone or as an archive of its folder (its program the one
    config.yaml's entry names, or the one its COMMAND file starts), graded by the portal as
    'grader gradescope' grades it on the assignment's regression file."""
    folder = tmp_path / "program"
    folder.mkdir()
    if upload == "solver.py":
        content = (GOMOKU / "solver.py").read_bytes()
        (folder / "solver.py").write_bytes(content)
    elif upload in ("wrong_winner.tar.gz", "command.zip"):
        if upload == "wrong_winner.tar.gz":
            content = gtp_archive(GOMOKU / "wrong_winner.py", GOMOKU / "solver.py")
        else:  # no Gomoku.py: the program is the one COMMAND starts
            out = io.BytesIO()
            with zipfile.ZipFile(out, "w") as zf:
                for name in ("wrong_winner.py", "solver.py"):
                    zf.write(GOMOKU / name, f"lab/{name}")
                zf.writestr("lab/COMMAND", "python3 wrong_winner.py\n")
            content = out.getvalue()
        (folder / "Gomoku.py").write_bytes((GOMOKU / "wrong_winner.py").read_bytes())
        (folder / "solver.py").write_bytes((GOMOKU / "solver.py").read_bytes())
    else:  # the course's starter code (numpy, four modules), zipped as 'zip -r starter.zip gomoku_lab'
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
            for f in sorted((ROOT / "tests" / "gomoku_lab").glob("*.py")):
                zf.write(f, f"gomoku_lab/{f.name}")
                (folder / f.name).write_bytes(f.read_bytes())
        content = out.getvalue()
    me = portal["students"]["s2@example.edu"]
    r = me.upload(content, name=upload, assignment="gomoku")
    assert r.status_code == 201, r.text
    seen = me.graded(r.json()["id"])
    symbols, results = gradescope_of(portal["course"], folder)
    tests = portal["course"].assignments["gomoku"].plan
    staff = portal["instructor"].get(f"/s/{seen['id']}").json()
    assert staff["symbols"] == symbols and staff["total"] == results["score"] and staff["max_total"] == 100
    public = "".join(sym for n, sym in zip(tests.numbers, symbols) if tests.is_public(n))
    assert seen["public_symbols"] == public and seen["public_tests"] == 4 and seen["private_tests"] == 6
    shown = [t for t in results["tests"] if "private test" not in t["name"]]
    assert len(shown) == 4
    for t in shown:  # each public test's line, as Gradescope's output shows it
        number = t["number"]
        assert re.search(rf"^  {re.escape(t['output'][0])} +{number} ", seen["feedback"], re.M), (t, seen["feedback"])
    if upload in ("wrong_winner.tar.gz", "command.zip"):
        assert "-" in symbols and "-" in seen["public_symbols"]  # the check would pass on any program otherwise
    else:  # the example's solver, and the starter code's: both solve every test
        assert symbols == "+" * 10


@pytest.mark.slow  # three labs graded end to end, tic-tac-toe's 100 tests among them: 10-20 s
def test_the_demo_students_upload_to_each_lab_of_the_demo_course(tmp_path):
    server = Server(None, tmp_path)
    try:
        staff = Client(server.url)
        staff.sign_in(server.link)
        links = {e["email"]: e["link"] for e in staff.post("/class/links").json()["links"]}
        uploads = {"ada@example.edu": ("othello", NEGAMAX),
                   "alan@example.edu": ("tictactoe", ROOT / "submissions" / "tictactoe" / "minimax.py"),
                   "grace@example.edu": ("gomoku", GOMOKU / "solver.py")}  # fmt: skip
        for email, (lab, program) in uploads.items():
            me = Client(server.url)
            me.sign_in(links[email])
            seen = me.graded(me.upload(program, name=program.name, assignment=lab).json()["id"])
            assert seen["status"] == "graded" and set(seen["public_symbols"]) == {"+"}, seen
            assert seen["public_tests"] == len(seen["public_symbols"]) > 0 and seen["private_tests"] > 0
        table = staff.get("/class").json()
        for row in table["students"]:
            lab = uploads[row["email"]][0]
            assert row["assignments"][lab]["total"] == row["assignments"][lab]["max_total"], row
    finally:
        server.stop()
