"""The portal grades as the grader grades: each lab's verdicts, totals and feedback as
``grader grade`` (or ``grader gradescope``, for the GTP lab) give them; what an upload can
and cannot do (a hostile archive, a script reading the course, a program remembering the
private positions)."""

from __future__ import annotations

import io
import json
import re
import tempfile
import textwrap
import zipfile
from pathlib import Path

import pytest

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


ECHO = """\
import sys
said, before = [], []
for line in sys.stdin:
    words = line.split()
    if not words:
        continue
    print(line, end="", file=sys.stderr, flush=True)
    number = words.pop(0) if words[0].isdigit() else ""  # GTP: '10 solve' is answered '=10 ...'
    if words[0] == "play":
        said += words[1:]
        print(f"={number}\\n", flush=True)
    elif words[0] == "solve":  # the stones of the test before: its position, on one line or two
        two = int(number) // 10 % 3 == 1
        print(f"={number} " + ("b\\n" if two else "") + " ".join(before) + "\\n", flush=True)
        said, before = [], said
    else:
        print(f"={number}\\n", flush=True)
"""


def test_a_gtp_program_echoing_its_input_leaks_no_private_position(portal):
    """A GTP program that answers each test with the stones of the test before (on one line,
    or on a second line, which a note quotes), and writes every command to its stderr: the
    staff see the private positions in the answers of the private tests' program; the student
    sees none of them, in no page and no JSON: the public tests' program, told no private
    test, is shown as it answered."""
    tests = portal["course"].assignments["gomoku"].plan
    text = tests.path.read_text()
    positions: dict[int, str] = {}
    stones: list[str] = []
    for line in text.splitlines():
        if line.startswith("play "):
            stones.append(line[5:])
        elif line.split()[1:2] == ["solve"]:
            positions[int(line.split()[0])] = " ".join(stones)
            stones = []
    public = [positions[n] for n in tests.public]
    private = [" ".join(positions[n].split()[:10]) for n in tests.private]  # its first 5 stones: test_line shows 6
    private = [p for p in private if not any(q.startswith(p) for q in public)]  # those no public test starts with
    assert len(private) >= 4
    me = portal["students"]["s5@example.edu"]
    sid = me.upload(ECHO.encode(), name="echo.py", assignment="gomoku").json()["id"]
    seen = me.graded(sid)
    staff = portal["instructor"].get(f"/s/{sid}").json()["full_feedback"]
    assert any(p in staff for p in private)  # the private tests' program did pass them on
    assert re.search(r"here 2 lines \('b', then 'b ", staff) and re.search(r"here 2 lines", seen["feedback"])
    for page in (me.get(f"/s/{sid}").text, me.html(f"/s/{sid}").text, me.get("/a/gomoku").text,
                 me.html("/a/gomoku").text, json.dumps(seen)):  # fmt: skip
        for p in private:
            assert p not in page and p.replace(" ", "") not in page


def test_a_hostile_archive_is_refused_at_upload_and_nothing_lands_outside(portal, tmp_path):
    """A zip whose member climbs out of its folder: refused at once in one line (400), not
    queued, not counted; no file of that name anywhere around the course."""
    me = portal["students"]["s6@example.edu"]
    before = me.get("/a/gomoku").json()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        zf.writestr("Gomoku.py", "print(1)\n")
        zf.writestr("../../../escaped-by-upload.py", "print(2)\n")
    r = me.upload(out.getvalue(), name="lab.zip", assignment="gomoku")
    assert r.status_code == 400
    assert r.json()["error"] == ("the archive's member '../../../escaped-by-upload.py' climbs out of the folder "
                                 "with '..': pack only the program's folder, by relative paths")  # fmt: skip
    page = me.html("/a/gomoku")
    assert page.status_code == 200
    after = me.get("/a/gomoku").json()
    assert len(after["submissions"]) == len(before["submissions"]) and after["left_today"] == before["left_today"]
    course = portal["course"].folder
    assert not any(list(root.rglob("escaped-by-upload.py")) for root in (course, portal["tmp"]))
    tmp = Path(tempfile.gettempdir())  # where the portal checks an upload: three folders up is /
    assert not list(tmp.glob("*escaped-by-upload.py")) and not list(tmp.glob("*/escaped-by-upload.py"))
    assert not Path("/escaped-by-upload.py").exists()
    r = me.upload(b"my notes", name="notes.txt", assignment="gomoku")
    assert r.status_code == 400 and "not a program the lab runs" in r.json()["error"]


def test_a_script_cannot_read_the_course_folder_or_the_database(portal):
    """A script that reads the plan file (every private board) and the database and crashes
    with what it read: the grader's sandbox keeps both out of its reach, as for grade."""
    course = portal["course"].folder
    script = portal["tmp"] / "thief.py"
    script.write_text(
        textwrap.dedent(f"""
        import sys
        found = []
        for path in ({str(course / "othello-endgame.plan")!r}, {str(course / ".portal" / "portal.sqlite3")!r}):
            try:
                found.append(open(path, "rb").read(300).hex())
            except OSError as e:
                found.append(type(e).__name__)
        sys.exit("STOLEN " + " ".join(found))
    """)
    )
    me = portal["students"]["s4@example.edu"]
    sid = me.upload(script, name="thief.py").json()["id"]
    me.graded(sid)
    full = portal["instructor"].get(f"/s/{sid}").json()["full_feedback"]
    stolen = re.search(r"STOLEN (\S+) (\S+)", full)
    assert stolen, full  # the script ran and said what it found
    assert stolen.groups() == ("FileNotFoundError", "FileNotFoundError") or all(
        g in ("FileNotFoundError", "PermissionError") for g in stolen.groups()
    ), stolen.groups()
    assert b"grader-plan".hex() not in full


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
