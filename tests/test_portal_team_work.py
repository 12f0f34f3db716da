"""Teams where they meet hand grading, regrade requests and mail, over HTTP on a server of its
own whose mail goes to a real SMTP server on loopback: the Othello lab done in teams of 3,
graded by hand with an anonymous rubric, one regrade request on each assignment. A team's
receipt and "graded" mails reach every member (each under their own choices); a teammate asks
for the team's regrade, the limit counts per team, staff see the team, every member reads the
answer; staff's pages name the team (a TA grading anonymously sees one pseudonym for it);
released hand grading is every member's, in their grade too."""

from __future__ import annotations

import csv
import hashlib
import io
import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

pytest.importorskip("starlette", reason='the portal needs its extra: pip install -e ".[portal]"')
pytestmark = pytest.mark.xdist_group(__name__)  # its tests build on each other's state, in order
pytest.importorskip("pygments", reason='the portal needs its extra: pip install -e ".[portal]"')
pytest.importorskip("aiosmtpd", reason="the mail tests need aiosmtpd (pip install -e '.[test]')")

from test_portal_hand import _link  # noqa: E402

from grader.cli import main  # noqa: E402
from grader.portal.course.rubric import combined  # noqa: E402

from portal_server import STUDENTS, WRONG, Client, make_course, open_portal  # noqa: E402
from smtp_server import Mailbox, body  # noqa: E402
from test_portal_mail import mailbox, password, settled  # noqa: E402

FIXTURES = (mailbox, password)  # test_portal_mail's: its SMTP server and the mail password
TEAM = ("s1@example.edu", "s2@example.edu", "s3@example.edu")  # s1 submits; s3 turned receipts off
OUTSIDER = "s4@example.edu"
TA = ("ta@example.edu", "A Teaching Assistant")
PEOPLE = {
    "s1@example.edu": "Ada Lovelace",
    "s2@example.edu": "Alan Turing",
    "s3@example.edu": "Grace Hopper",
    "s4@example.edu": "Edsger Dijkstra",
}  # names nothing like a pseudonym
NAMES = {**dict(STUDENTS), **PEOPLE}


def team_course(folder: Path, mailbox: Mailbox) -> Path:
    """The tests' course: its Othello lab in teams of 3 with an anonymous rubric, one regrade
    request on each assignment, a TA on the roster, mail to ``mailbox``."""
    make_course(folder)
    shutil.copy(mailbox.ca_file, folder / "mail-ca.pem")
    data = yaml.safe_load((folder / "course.yaml").read_text())
    othello = data["assignments"][0]
    othello["teams"] = {"size": 3}
    othello["rubric"] = {"anonymous": True, "items": [{"name": "style", "points": -1, "comment": "names"},
                                                      {"name": "search", "points": 2, "comment": "a clean negamax"}]}  # fmt: skip
    data["regrades"] = {"max": 1}
    data["mail"] = mailbox.settings()
    (folder / "course.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    rows = "".join(f"{e},{NAMES[e]},student\n" for e, _ in STUDENTS)
    (folder / "roster.csv").write_text(f"Email,Name,Role\n{rows}{TA[0]},{TA[1]},ta\n")
    return folder


@pytest.fixture(scope="module")
def work(tmp_path_factory, mailbox, password):
    """The server, its people signed in (the TA too), the team formed by the instructor's CSV,
    and the team's graded submission (uploaded by s1)."""
    tmp = tmp_path_factory.mktemp("team-work")
    course = team_course(tmp / "course", mailbox)
    opened = open_portal(course, tmp)
    try:
        ta = Client(opened["server"].url)
        ta.sign_in(_link(course / ".portal" / "portal.sqlite3", opened["server"].url, TA[0]))
        opened["ta"] = ta
        (tmp / "teams.csv").write_text("".join(f"othello,{e},red\n" for e in TEAM))
        made = CliRunner().invoke(main, ["portal", "teams", str(tmp / "teams.csv"), str(course)])
        assert made.exit_code == 0, made.output
        off = opened["students"][TEAM[2]]
        kinds = [k["kind"] for k in off.get("/preferences").json()["kinds"]]
        assert off.post("/preferences", {k: "on" for k in kinds if k != "receipt"}).status_code == 200
        r = opened["students"][TEAM[0]].upload(WRONG, name="lab.py")
        assert r.status_code == 201, r.text
        opened["sub"] = opened["students"][TEAM[0]].graded(r.json()["id"])
        yield opened
    finally:
        opened["server"].stop()


def test_a_teams_receipt_and_grade_are_mailed_to_every_member_under_their_own_choices(work, mailbox):
    sid, digest = work["sub"]["id"], hashlib.sha256(WRONG.read_bytes()).hexdigest()
    for email in TEAM[:2]:
        receipt = body(mailbox.wait(email, "Received: Othello endgame lab"))
        assert digest in receipt and f"/s/{sid}" in receipt
    assert "(by Ada Lovelace, for your team)" in body(mailbox.wait(TEAM[1], "Received: Othello endgame lab"))
    for email in TEAM:
        graded = body(mailbox.wait(email, "Graded: Othello endgame lab"))
        assert f"/s/{sid}" in graded and f"Hello {NAMES[email]}," in graded
    settled(work["instructor"])
    assert not mailbox.to(TEAM[2], "Received")  # they turned receipts off: theirs only
    assert not mailbox.to(OUTSIDER, "Received") and not mailbox.to(OUTSIDER, "Graded")


def test_a_teammate_asks_for_the_teams_regrade_counted_per_team_and_every_member_reads_the_answer(work, mailbox):
    sid, people, prof = work["sub"]["id"], work["students"], work["instructor"]
    first, mate, third = (people[e] for e in TEAM)
    assert mate.get(f"/s/{sid}").json()["regrades"]["can_ask"] is True  # the team's submission is theirs too
    r = mate.post(f"/s/{sid}/regrade", {"reason": "Our search is exact on test 3."})
    assert r.status_code == 201, r.text
    rid = r.json()["id"]
    queue = prof.get("/class/regrades").json()["open"]
    assert [(q["id"], q["student"]["email"], q["team"]["name"], [m["email"] for m in q["team"]["members"]])
            for q in queue] == [(rid, TEAM[1], "red", list(TEAM))]  # fmt: skip
    assert (
        'for team <span class="regrade-team">red</span> (Ada Lovelace, Alan Turing, Grace Hopper)'
        in prof.html("/class/regrades").text
    )
    assert prof.post(f"/class/regrades/{rid}", {"reply": "Test 3 is judged on the exact value."}).status_code == 200
    for member in (first, mate, third):
        seen = member.get(f"/s/{sid}").json()["regrades"]
        assert [(q["state"], q["reply"], q["asked_by"]) for q in seen["requests"]] == [
            ("answered", "Test 3 is judged on the exact value.", "Alan Turing")
        ]
        assert seen["can_ask"] is False and seen["closed"].startswith("Your team made the 1 regrade request(s)")
        assert "Test 3 is judged on the exact value." in member.html(f"/s/{sid}").text
    over = first.post(f"/s/{sid}/regrade", {"reason": "and mine"})
    assert over.status_code == 400 and "your team made the 1 regrade request(s)" in over.text
    assert (
        "Alan Turing</strong> (s2@example.edu), for team" not in prof.html("/class/regrades").text
    )  # answered: out of the open list
    assert body(mailbox.wait(TEAM[1], "Regrade answered: Othello endgame lab"))
    settled(prof)
    assert not mailbox.to(TEAM[0], "Regrade answered") and not mailbox.to(TEAM[2], "Regrade answered")


def test_staff_see_the_team_a_ta_grading_anonymously_one_pseudonym_and_every_member_the_released_grading(work):
    sid, people, prof, ta = work["sub"]["id"], work["students"], work["instructor"], work["ta"]
    names = [PEOPLE[e] for e in TEAM]
    # a TA grading anonymously: one pseudonym for the team, on the code and the grading pages
    code = ta.get(f"/s/{sid}/code").json()
    assert code["student"] == {"name": "Team 1", "email": None, "anonymous": True} and not code["feedback_link"]
    listing = ta.get("/class/othello/grading").json()["submissions"]
    assert [(r["student"], r["email"], r["team"]) for r in listing if r["submission"] == sid] == [
        ("Team 1", None, None)
    ]
    queue = ta.get("/class/regrades").json()["answered"]  # the team's request, answered before
    assert [(q["student"], q.get("team"), q["anonymous"]) for q in queue] == [({"name": "Team 1", "email": None}, None,
                                                                              True)]  # fmt: skip
    assert f'href="/s/{sid}/code"' in ta.html("/class/regrades").text
    assert f'href="/s/{sid}"' not in ta.html("/class/regrades").text  # no link to a page naming them
    for path in (f"/s/{sid}/code", "/class/othello/grading", "/class/regrades"):
        page = ta.html(path).text
        assert "Team 1" in page and not any(n in page or e in page for n, e in zip(names, TEAM)), path
    # the instructor: the team and its members, on every staff page of the submission
    code = prof.get(f"/s/{sid}/code").json()["student"]
    assert code["team"] == {"name": "red", "members": [{"name": n, "email": e} for n, e in zip(names, TEAM)]}
    assert (
        'for team <span id="team">red</span> (Ada Lovelace, Alan Turing, Grace Hopper)'
        in prof.html(f"/s/{sid}/code").text
    )
    rows = [r for r in prof.get("/class/othello/grading").json()["submissions"] if r["submission"] == sid]
    assert [(r["student"], r["email"], r["team"]) for r in rows] == [(", ".join(names), ", ".join(TEAM), "red")]
    staff = prof.get(f"/s/{sid}").json()
    assert staff["team"]["name"] == "red" and [m["email"] for m in staff["team"]["members"]] == list(TEAM)
    assert (
        'for team <span id="team">red</span> (Ada Lovelace (s1@example.edu), Alan Turing' in prof.html(f"/s/{sid}").text
    )
    # graded by hand, then released: every member reads it, and it counts in every member's grade
    assert ta.post(f"/s/{sid}/hand", {"item": "search"}).status_code == 200
    assert ta.post(f"/s/{sid}/comments", {"path": "lab.py", "line": "1", "text": "the team's remark"}).is_success
    for email in TEAM:
        assert people[email].get(f"/s/{sid}/code").json()["hand"] is None  # not released yet
    assert people[OUTSIDER].get(f"/s/{sid}/code").status_code == 404
    assert prof.post("/class/hand/release", {"assignment": "othello"}).status_code == 200
    want = combined(staff["total"], 2, staff["max_total"])
    book = {r["email"]: r for r in csv.DictReader(io.StringIO(prof.get("/class.csv").text))}
    for email in TEAM:
        mine = people[email].get(f"/s/{sid}/code").json()["hand"]
        assert [i["name"] for i in mine["items"]] == ["search"] and mine["points"] == 2
        assert [c["text"] for c in mine["comments"]] == ["the team's remark"]
        assert "the team&#39;s remark" in people[email].html(f"/s/{sid}/code").text
        assert float(book[email]["othello score"]) == want
    assert book[OUTSIDER]["othello score"] in ("", "0", "0.0")
    assert ta.get(f"/s/{sid}/code").json()["student"]["name"] == "Ada Lovelace"  # released: names again
