"""course.yaml as an instructor writes it: deadlines in IANA time zones (abbreviations refused,
naming what is accepted), an unknown key's line and the key meant, ``grader portal check``
validating without applying, and a server started on a broken course.yaml serving the last
one applied, saying so."""

from __future__ import annotations

import csv
import datetime as dt
import io
import re

import pytest
from click.testing import CliRunner

pytest.importorskip("starlette", reason='the portal needs its extra: pip install -e ".[portal]"')

from grader.cli import main  # noqa: E402
from grader.errors import ConfigError  # noqa: E402
from grader.portal.course.course import load_course  # noqa: E402

from portal_server import Client, Server, _sync, make_course  # noqa: E402

ACCEPTED = "an IANA zone name, like 2026-12-18 23:59 America/New_York; an offset, like 2026-12-18 23:59 -05:00"


def with_line(course, old: str, new: str) -> None:
    text = (course / "course.yaml").read_text()
    assert old in text
    (course / "course.yaml").write_text(text.replace(old, new, 1))


@pytest.mark.parametrize(
    "given, utc",
    [
        ("2026-12-18 23:59 America/New_York", dt.datetime(2026, 12, 19, 4, 59)),  # EST, -5
        ("2026-07-01 23:59 America/New_York", dt.datetime(2026, 7, 2, 3, 59)),  # daylight saving time, -4
        ("2026-12-18 23:59 Europe/Berlin", dt.datetime(2026, 12, 18, 22, 59)),
        ("2026-12-18 23:59 -05:00", dt.datetime(2026, 12, 19, 4, 59)),
        ("2026-12-18 23:59 +0100", dt.datetime(2026, 12, 18, 22, 59)),  # without its colon
        ("2026-12-18 23:59 UTC", dt.datetime(2026, 12, 18, 23, 59)),
        ("2026-12-18 23:59", dt.datetime(2026, 12, 18, 23, 59)),
    ],
)
def test_a_deadline_takes_an_iana_zone_name(tmp_path, given, utc):
    course = make_course(tmp_path / "course")
    with_line(course, "per_day: 3", f"per_day: 3\n    deadline: {given}")
    deadline = load_course(course).assignments["othello"].deadline
    assert deadline is not None and deadline.astimezone(dt.timezone.utc) == utc.replace(tzinfo=dt.timezone.utc)
    if "/" in given:
        extended = deadline + dt.timedelta(days=200)  # an extension keeps the wall time across a change of offset
        assert extended.strftime("%H:%M") == "23:59"


@pytest.mark.parametrize("zone", ["EST", "PST", "CET", "Mars/Olympus"])
def test_a_deadline_in_an_abbreviation_or_an_unknown_zone_is_refused_naming_the_accepted_forms(tmp_path, zone):
    course = make_course(tmp_path / "course")
    with_line(course, "per_day: 3", f"per_day: 3\n    deadline: 2026-12-18 23:59 {zone}")
    with pytest.raises(ConfigError) as e:
        load_course(course)
    assert "assignments[0].deadline" in str(e.value) and ACCEPTED in str(e.value)
    assert ("is an abbreviation" if "/" not in zone else "no time zone") in str(e.value)


def test_a_key_typo_names_the_key_meant_the_assignment_and_the_line(tmp_path):
    course = make_course(tmp_path / "course")
    with_line(course, "per_day: 3", "per_day: 3\n    deadline: 2026-12-18 23:59\n    late_penalt: 10%")
    line = (course / "course.yaml").read_text().splitlines().index("    late_penalt: 10%") + 1
    with pytest.raises(ConfigError) as e:
        load_course(course)
    assert str(e.value).startswith(f"{course / 'course.yaml'}, line {line}: unknown key 'assignments[0].late_penalt' "
                                   "(assignment 'othello') (did you mean `late_penalty`?); known keys:")  # fmt: skip


def test_portal_check_validates_without_applying(tmp_path):
    course = make_course(tmp_path / "course")
    with_line(course, "per_day: 3", "per_day: 3\n    deadline: 2026-12-18 23:59 America/New_York")
    good = CliRunner().invoke(main, ["portal", "check", str(course)])
    assert good.exit_code == 0, good.output
    assert good.output.splitlines()[:2] == [
        f"{course / 'course.yaml'} is valid: Game search (demo course), 3 assignments, 6 people on the roster; "
        "nothing applied (grader portal sync applies it)",
        "  othello: Othello endgame lab, due 2026-12-18 23:59 EST",
    ]
    assert not (course / ".portal").exists()  # nothing made, nothing applied
    with_line(course, "upload_kb:", "uplod_kb:")
    bad = CliRunner().invoke(main, ["portal", "check", str(course)])
    assert bad.exit_code == 1 and len(bad.output.strip().splitlines()) == 1
    assert re.match(
        r"Error: .*course.yaml, line \d+: unknown key 'uplod_kb' \(did you mean `upload_kb`\?\)", bad.output
    )


@pytest.mark.slow  # a server of its own: 3-6 s
def test_a_server_started_on_a_broken_course_yaml_serves_the_last_one_applied_and_says_so(tmp_path):
    course = make_course(tmp_path / "course")
    assert _sync(course).exit_code == 0
    with_line(course, "per_day: 3", "per_day: 3\n    deadline: 2026-12-18 23:59 PST")
    server = Server(course, tmp_path)
    try:
        said = "".join(server.lines)
        assert (
            "Warning: " in said
            and "'PST' is an abbreviation" in said
            and "serving the course.yaml last applied" in said
        )
        staff = Client(server.url)
        staff.sign_in(server.link)
        assert len(staff.get("/api/class").json()["students"]) == 6  # the course as it was
        page = staff.html("/class").text
        assert 'class="banner" role="alert"' in page and "course.yaml does not load:" in page and "PST" in page
        student = Client(server.url)
        student.sign_in(staff.post("/class/links", {"email": "s1@example.edu"}).json()["links"][0]["link"])
        assert "course.yaml does not load" not in student.html("/").text  # staff's business
    finally:
        server.stop()


def test_a_broken_course_yaml_never_applied_still_stops_the_start(tmp_path):
    course = make_course(tmp_path / "course")
    with_line(course, "per_day: 3", "per_day: 3\n    deadline: 2026-12-18 23:59 PST")
    result = CliRunner().invoke(main, ["serve", str(course)])
    assert result.exit_code == 1 and "'PST' is an abbreviation" in result.output


@pytest.mark.slow  # a server of its own: 3-6 s
def test_portal_sync_is_audited_with_what_it_changed_and_the_audit_log_downloads_as_csv(tmp_path):
    course = make_course(tmp_path / "course")
    with_line(course, "per_day: 3", "per_day: 3\n    deadline: 2026-03-06 23:59 America/New_York")
    assert _sync(course).exit_code == 0
    with_line(course, "deadline: 2026-03-06 23:59", "deadline: 2026-03-02 23:59")  # moved 4 days earlier
    text = (course / "course.yaml").read_text()
    start = text.index("  - name: tictactoe")
    block = text[start : text.index("  - name: gomoku")]
    (course / "course.yaml").write_text(text + block.replace("name: tictactoe", "name: tictactoe2")
                                        .replace("title: Tic-tac-toe lab", "title: Tic-tac-toe again"))  # fmt: skip
    with (course / "roster.csv").open("a") as f:
        f.write("s7@example.edu,Student 7\n")
    moved = _sync(course)
    assert moved.exit_code == 0, moved.output
    said = ("othello: deadline 2026-03-06 23:59 EST -> 2026-03-02 23:59 EST; "
            "tictactoe2: new assignment (Tic-tac-toe again, deadline none); roster: 1 new person")  # fmt: skip
    assert moved.output.splitlines()[1] == f"In the audit log: {said}"
    assert len(_sync(course).output.splitlines()) == 1  # nothing changed: nothing audited
    server = Server(course, tmp_path)
    try:
        staff = Client(server.url)
        staff.sign_in(server.link)
        syncs = [e for e in staff.get("/class/audit").json()["entries"] if e["action"] == "sync"]
        assert [(e["by"], e["detail"]) for e in syncs] == [("instructor@example.edu", f"grader portal sync: {said}")]
        got = staff.html("/class/audit.csv")
        assert got.status_code == 200 and 'filename="audit.csv"' in got.headers["content-disposition"]
        rows = list(csv.reader(io.StringIO(got.text)))
        assert rows[0] == ["at", "by", "action", "detail"]
        assert ["instructor@example.edu", "sync", f"grader portal sync: {said}"] in [r[1:] for r in rows[1:]]
        assert 'href="/class/audit.csv"' in staff.html("/class/audit").text
    finally:
        server.stop()


def test_a_course_of_one_assignment_and_one_person_is_counted_in_the_singular(tmp_path):
    course = make_course(tmp_path / "course")
    text = (course / "course.yaml").read_text()
    (course / "course.yaml").write_text(text[: text.index("  - name: tictactoe")])
    (course / "roster.csv").write_text("Email,Name\ns1@example.edu,Student 1\n")
    done = _sync(course)
    assert done.exit_code == 0, done.output
    assert ": 1 assignment, 1 person on the roster (1 new);" in done.output
    checked = CliRunner().invoke(main, ["portal", "check", str(course)])
    assert ", 1 assignment, 1 person on the roster;" in checked.output


@pytest.mark.slow  # a server of its own: 3-6 s
def test_a_running_server_that_cannot_load_a_synced_folder_keeps_its_course_and_says_so(tmp_path):
    """A sync from another copy of the course (another machine's) while this server's folder is
    broken: the server keeps the course it has, logs why, and its staff pages show it."""
    import shutil
    import time

    course = make_course(tmp_path / "course")
    server = Server(course, tmp_path)
    try:
        staff = Client(server.url)
        staff.sign_in(server.link)
        assert "course.yaml does not load" not in staff.html("/class").text
        other = tmp_path / "other"
        shutil.copytree(course, other, ignore=shutil.ignore_patterns(".portal"))
        with_line(other, "per_day: 3", "per_day: 4")
        with_line(course, "per_day: 3", "per_day: 3\n    deadline: 2026-12-18 23:59 PST")
        database = f"sqlite:///{course / '.portal' / 'portal.sqlite3'}"
        synced = CliRunner().invoke(main, ["portal", "sync", str(other), "--database", database])
        assert synced.exit_code == 0, synced.output
        deadline = time.monotonic() + 30
        while "course.yaml does not load" not in (page := staff.html("/class").text):
            assert time.monotonic() < deadline, "the server never said its folder does not load"
            time.sleep(0.3)
        assert "PST" in page and "is an abbreviation" in page
        assert staff.get("/a/othello").json()["per_day"] == 3  # the course as it had it
        assert any("serving the course as it was until it is fixed" in line for line in server.lines)
    finally:
        server.stop()
