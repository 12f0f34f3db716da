"""grader similar: real files of the example submissions, disguised by hand, compared by copydetect."""

import json
import re

import pytest
from click.testing import CliRunner

from grader.cli import main
from grader.similarity import similar

from conftest import ROOT

pytest.importorskip("copydetect", reason="copydetect not installed: pip install -e '.[similarity]'")

NEGAMAX = (ROOT / "submissions" / "negamax.py").read_text()
GREEDY = (ROOT / "submissions" / "greedy.py").read_text()
RANDOM = (ROOT / "submissions" / "random_mover.py").read_text()

STARTER = '''import sys


def read_position(text, token):
    """The starter code: the board's 64 characters and whose turn it is, as two sets of squares."""
    mine = {i for i, c in enumerate(text) if c == token}
    theirs = {i for i, c in enumerate(text) if c not in (token, ".")}
    return mine, theirs


def neighbours_of_every_square_on_the_board(square):
    return [square + d for d in (-9, -8, -7, -1, 1, 7, 8, 9) if 0 <= square + d < 64]
'''


def disguise(code: str) -> str:
    """Identifiers renamed, comments dropped, blank lines doubled: what copydetect's tokenizer undoes."""
    code = re.sub(r"\bboard\b", "grid", code)
    code = re.sub(r"\bscore\b", "value", code)
    code = re.sub(r"#.*", "", code)
    return code.replace("\n\n", "\n\n\n")


def write_class(tmp_path, students):
    folder = tmp_path / "class"
    folder.mkdir()
    for name, text in students.items():
        if "/" in name:
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return folder


def test_a_disguised_copy_ranks_first_with_its_passages_marked(tmp_path):
    folder = write_class(tmp_path, {"alice.py": NEGAMAX, "bob/main.py": disguise(NEGAMAX), "carol.py": RANDOM})
    report = similar([folder])
    top = report.pairs[0]
    assert (top.left, top.right) == ("alice", "bob")
    assert top.similarity > 0.9 > max(p.similarity for p in report.pairs[1:])
    assert report.compared == 3
    match = top.matches[0]
    assert (match.left, match.right) == ("alice.py", "main.py")
    left = "".join(NEGAMAX[a:b] for a, b in match.left_spans)
    right = "".join(disguise(NEGAMAX)[a:b] for a, b in match.right_spans)
    assert "def negamax(" in left and "def negamax(" in right
    assert "grid" in right and "grid" not in left


def test_starter_code_is_left_out_of_every_match(tmp_path):
    folder = write_class(tmp_path, {"alice.py": STARTER + GREEDY, "bob.py": STARTER + RANDOM})
    base = tmp_path / "starter.py"
    base.write_text(STARTER)
    shared = similar([folder]).pairs[0]
    assert "neighbours_of_every_square" in "".join(STARTER[a:b] for a, b in shared.matches[0].left_spans)
    without = similar([folder], base=[base])
    assert without.base_files == 1
    for pair in without.pairs:
        for a, b in pair.matches[0].left_spans:
            assert "neighbours_of_every_square" not in (STARTER + GREEDY)[a:b]
    assert (without.pairs[0].similarity if without.pairs else 0) < shared.similarity


def test_the_archive_is_compared_with_the_class_not_with_itself(tmp_path):
    folder = write_class(tmp_path, {"alice.py": NEGAMAX, "bob.py": RANDOM})
    archive = tmp_path / "2024"
    archive.mkdir()
    (archive / "old.py").write_text(disguise(NEGAMAX))
    (archive / "older.py").write_text(NEGAMAX)
    report = similar([folder], archive=[archive])
    assert report.compared == 1 + 2 * 2
    assert {(p.left, p.right) for p in report.pairs if p.similarity > 0.9} == {
        ("class/alice", "2024/old"),
        ("class/alice", "2024/older"),
    }
    assert all(p.right_archive == p.right.startswith("2024/") for p in report.pairs)


def test_the_cli_writes_an_escaped_page_and_json(tmp_path):
    hostile = NEGAMAX + '\nNOTE = "</pre><script>alert(1)</script>"\n'
    folder = write_class(tmp_path, {"alice.py": hostile, "bob.py": disguise(hostile), "carol.py": GREEDY})
    page, data = tmp_path / "similar.html", tmp_path / "similar.json"
    result = CliRunner().invoke(main, ["similar", str(folder), "--html", str(page), "--json", str(data), "--top", "2"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[2].split()[:3] == ["1", "alice", "bob"]
    assert "3 submissions, 0 archived, 3 pairs compared in" in result.output
    html = page.read_text()
    assert "<script>" not in html and "&lt;/pre&gt;&lt;script&gt;" in html
    assert "<mark>" in html and 'id="pair-2"' in html and 'id="pair-3"' not in html
    assert "copied" not in html.lower() and "similar" in html
    saved = json.loads(data.read_text())
    assert [(p["left"], p["right"]) for p in saved["pairs"]][0] == ("alice", "bob")
    assert len(saved["pairs"]) == 2 and saved["compared"] == 3


@pytest.mark.parametrize(
    "files, args, message",
    [
        ({"alice.py": NEGAMAX}, [], "Error: 1 submission found in"),
        ({"notes.txt": "x", "data.csv": "y"}, [], "Error: 0 submissions found in"),
    ],
)
def test_bad_input_is_one_line(tmp_path, files, args, message):
    folder = write_class(tmp_path, files)
    result = CliRunner().invoke(main, ["similar", str(folder), *args])
    assert result.exit_code == 1
    assert result.output.startswith(message) and result.output.count("\n") == 1
    assert "give a folder holding each student's source file or folder" in result.output


def test_two_folders_with_the_same_name_are_refused(tmp_path):
    for term in ("a", "b"):
        (tmp_path / term / "class").mkdir(parents=True)
        (tmp_path / term / "class" / "x.py").write_text(NEGAMAX)
    result = CliRunner().invoke(main, ["similar", str(tmp_path / "a" / "class"), str(tmp_path / "b" / "class")])
    assert result.exit_code == 1
    assert result.output == "Error: two submissions are named 'class/x': rename one, or give their folders apart\n"


def test_the_pairs_compared_in_full_are_those_that_rank(tmp_path):
    """With --top 1 only the likeliest pairs (by their shared fingerprints) are compared passage by
    passage: the ranking's head is the same as when every pair of the 66 is."""
    scripts = [NEGAMAX, GREEDY, RANDOM, STARTER + GREEDY]
    students = {f"s{i:02d}.py": disguise(scripts[i % 4]) + "\n# " + "x" * i for i in range(12)}
    students["s99.py"] = NEGAMAX
    folder = write_class(tmp_path, students)
    every = similar([folder], top=100)
    assert every.compared == 78 and len(every.pairs) == 78
    for top in (1, 5):
        head = similar([folder], top=top)
        assert [(p.left, p.right, p.similarity) for p in head.pairs] == [
            (p.left, p.right, p.similarity) for p in every.pairs[:top]
        ]


def portal_assignment(tmp_path, similarity: str):
    """The demo course's Othello lab with course.yaml's ``similarity:`` line, loaded as the portal loads it."""
    pytest.importorskip("sqlalchemy", reason='the portal needs its extra: pip install -e ".[portal]"')
    from grader.portal.course.course import load_course, make_demo_course

    folder = make_demo_course(tmp_path / "course")
    text = (folder / "course.yaml").read_text()
    (folder / "course.yaml").write_text(text.replace("    per_day: 10\n", f"    per_day: 10\n    {similarity}\n", 1))
    course = load_course(folder)
    return course, course.assignments["othello"]


def counted(email: str, filename: str, content: str):
    from grader.portal.course.exports import Counted

    return Counted(email, email, f"id-{email}", filename, "", content.encode(), "[]", None, None)


def test_the_portal_ranks_an_assignments_counted_submissions_by_email_with_its_base_and_archive(tmp_path):
    from grader.portal.course.similar import similarity_report

    (tmp_path / "course" / "starter").mkdir(parents=True)
    (tmp_path / "course" / "starter" / "lab.py").write_text(STARTER)
    (tmp_path / "course" / "fall25").mkdir()
    (tmp_path / "course" / "fall25" / "old.py").write_text(disguise(RANDOM))
    course, assignment = portal_assignment(tmp_path, "similarity: {base: starter, archive: [fall25]}")
    rows = [counted("ann@uni.edu", "lab.py", NEGAMAX), counted("ben@uni.edu", "negamax.py", disguise(NEGAMAX)),
            counted("cat@uni.edu", "mine.py", STARTER + "\n\ndef best(values):\n    return sorted(set(values))[-1]\n"), counted("dan@uni.edu", "lab.py", RANDOM),
            counted("eve@uni.edu", "x.py", STARTER + "\n\nprint(19)\n")]  # fmt: skip
    report = similarity_report(course, assignment, rows)
    similar_pairs = {(p.left, p.right) for p in report.pairs if p.similarity > 0.9}
    assert similar_pairs == {("ann@uni.edu", "ben@uni.edu"), ("dan@uni.edu", "fall25/old")}
    assert report.base_files == 1 and report.compared == 10 + 5
    assert all(("cat@uni.edu", "eve@uni.edu") != (p.left, p.right) for p in report.pairs)  # only the starter shared


@pytest.mark.parametrize(
    "line, message",
    [
        ("similarity: {base: nowhere.py}", "assignments[0].similarity.base: 'nowhere.py' is no file or folder in"),
        ("similarity: {archive: roster.csv}", "assignments[0].similarity.archive: 'roster.csv' is no folder in"),
        ("similarity: {bases: x}", "unknown key 'assignments[0].similarity.bases'"),
        ("similarity: starter", "assignments[0].similarity must be 'key: value' lines (base, archive)"),
    ],
)
def test_a_bad_similarity_key_is_one_line(tmp_path, line, message):
    from grader.errors import GraderError

    with pytest.raises(GraderError) as e:
        portal_assignment(tmp_path, line)
    assert message in str(e.value) and "\n" not in str(e.value)


def test_files_named_like_source_that_are_no_text_are_left_out_by_name(tmp_path):
    """Two compiled programs named a.py and b.py had been ranked '75% similar'."""
    program = b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 8  # a compiled program's bytes
    (tmp_path / "class").mkdir()
    (tmp_path / "class" / "a.py").write_bytes(program)
    (tmp_path / "class" / "b.py").write_bytes(program)
    got = CliRunner().invoke(main, ["similar", str(tmp_path / "class")])
    assert got.exit_code == 1
    assert got.output == (f"Error: 0 submissions found in {tmp_path / 'class'} (left out, not source text: "
                          f"{tmp_path / 'class' / 'a.py'}, {tmp_path / 'class' / 'b.py'}): give a folder holding each "
                          "student's source file or folder\n")  # fmt: skip
    (tmp_path / "class" / "c.py").write_text(NEGAMAX)
    (tmp_path / "class" / "d.py").write_text(GREEDY)
    got = CliRunner().invoke(main, ["similar", str(tmp_path / "class")])
    assert got.exit_code == 0, got.output
    assert f"Left out, not source text: {tmp_path / 'class' / 'a.py'}, {tmp_path / 'class' / 'b.py'}\n" in got.output
    assert [(p.left, p.right) for p in similar([tmp_path / "class"]).pairs] == [("c", "d")]
