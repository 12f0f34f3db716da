"""Names that read as something else: a file, a label or a person named with a right-to-left
override (``notes<U+202E>txt.py`` reads ``notesyp.txt``), zero-width or other invisible
characters. Each name is shown without them (grader.names.visible, as it is stored and as a
page shows it), and the receipt keeps the SHA-256 of the bytes uploaded."""

from __future__ import annotations

import hashlib
import html
import io
import sqlite3
import zipfile

import pytest

pytestmark = pytest.mark.xdist_group(__name__)  # one worker: the module's fixture runs once

pytest.importorskip("httpx", reason="the portal's tests need httpx (pip install -e '.[test]')")

RLO, HIDDEN = "\u202e", "\u202e\u202a\u2066\u2069\u200b\u200d\u200f\ufeff\x1b"  # bidi, zero-width, BOM, ESC
SCRIPT = b"print('hello')\n"


def shown(text: str) -> bool:
    """Whether ``text`` shows none of the hidden characters, escaped or not."""
    text = html.unescape(text)
    return not any(c in text for c in HIDDEN)


def student(portal):
    return portal["students"]["s1@example.edu"]


def test_a_file_named_to_read_as_another_is_shown_without_its_override(portal):
    """A ``.py`` named to read as ``.txt``: its receipt, its page and the staff's history show
    the name without the override, and the SHA-256 of the bytes uploaded."""
    me = student(portal)
    r = me.upload(SCRIPT, name=f"notes{RLO}txt.py", assignment="tictactoe")
    assert r.status_code == 201, r.text
    receipt = r.json()
    assert receipt["filename"] == "notestxt.py"
    assert receipt["sha256"] == hashlib.sha256(SCRIPT).hexdigest() and receipt["size"] == len(SCRIPT)
    page = me.html(f"/s/{receipt['id']}").text
    assert "notestxt.py" in page and receipt["sha256"] in page and shown(page)
    assert shown(me.html("/a/tictactoe").text)
    history = portal["instructor"].html("/class/tictactoe/students/s1@example.edu").text
    assert "notestxt.py" in history and shown(history)


def test_an_archive_member_named_with_an_override_is_refused_in_one_line(portal):
    packed = io.BytesIO()
    with zipfile.ZipFile(packed, "w") as z:
        z.writestr(f"lab/notes{RLO}txt.py", SCRIPT)
    r = student(portal).upload(packed.getvalue(), name="lab.zip", assignment="tictactoe")
    assert r.status_code == 400
    assert "an invisible character (a right-to-left override...) in its name" in r.text
    assert RLO not in r.text  # the name is quoted escaped: \u202e


def test_a_rosters_names_are_shown_without_invisible_characters(portal):
    """A roster whose names hold bidi controls, zero-width characters, a BOM and an escape:
    the class page (HTML and JSON) shows each name without them."""
    teacher = portal["instructor"]
    roster = ("Email,Name\n" + f"eve@example.edu,Eve{RLO}nilam\u200b\n"
              + f"mal@example.edu,\u2066Mal\u2069\u200d{chr(0x1b)}[31mlory\ufeff\n")  # fmt: skip
    r = teacher.post("/class/roster", files={"roster": ("roster.csv", roster.encode(), "text/csv")})
    assert r.status_code == 200, r.text
    names = {s["email"]: s["name"] for s in teacher.get("/class").json()["students"]}
    assert (names["eve@example.edu"], names["mal@example.edu"]) == ("Evenilam", "Mal[31mlory")
    assert shown(teacher.html("/class").text)


def test_a_name_stored_before_is_shown_without_invisible_characters(portal):
    """A name written to the database without going through the portal (an older portal's
    row, a hand-edited one): the pages show it without its override all the same."""
    database = portal["tmp"] / "course" / ".portal" / "portal.sqlite3"
    with sqlite3.connect(database) as db:
        db.execute("UPDATE users SET name = ? WHERE email = 's2@example.edu'", (f"Student{RLO}2 lanigirO",))
    page = portal["instructor"].html("/class").text
    assert "Student2 lanigirO" in html.unescape(page) and shown(page)


def test_labels_and_engine_names_are_shown_without_invisible_characters(portal):
    """An API token's label and an engine version's label with an override are shown without
    it; an engine's name with one is refused (letters, digits, '_', '.', '-' only)."""
    me = student(portal)
    r = me.post("/arena/token", {"label": f"laptop{RLO}exe.txt"})
    assert r.status_code == 201, r.text
    assert [t["label"] for t in me.get("/arena").json()["tokens"]] == ["laptopexe.txt"]
    assert shown(me.html("/arena").text)
    refused = me.post("/arena", {"name": f"mine{RLO}", "protocol": "script", "game": "tictactoe"})
    assert refused.status_code == 400 and "engine name" in refused.text
    r = me.post("/arena", {"name": "mine", "protocol": "script", "game": "tictactoe"})
    assert r.status_code == 201, r.text
    eid = r.json()["id"]
    r = me.post(f"/arena/e/{eid}/versions", {"label": f"v1{RLO}kcab"},
                files={"file": (f"eng{RLO}yp.py", SCRIPT, "text/x-python")})  # fmt: skip
    assert r.status_code == 201, r.text
    (version,) = me.get(f"/arena/e/{eid}").json()["versions"]
    assert (version["label"], version["filename"]) == ("v1kcab", "engyp.py")
    assert shown(me.html(f"/arena/e/{eid}").text)
