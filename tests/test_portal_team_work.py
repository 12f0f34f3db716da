"""Teams where they meet hand grading, regrade requests and mail, over HTTP on a server of its
own whose mail goes to a real SMTP server on loopback: the Othello lab done in teams of 3,
graded by hand with an anonymous rubric, one regrade request on each assignment. A team's
receipt and "graded" mails reach every member (each under their own choices); a teammate asks
for the team's regrade, the limit counts per team, staff see the team, every member reads the
answer; staff's pages name the team (a TA grading anonymously sees one pseudonym for it);
released hand grading is every member's, in their grade too."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

pytest.importorskip("starlette", reason='the portal needs its extra: pip install -e ".[portal]"')
pytest.importorskip("pygments", reason='the portal needs its extra: pip install -e ".[portal]"')
pytest.importorskip("aiosmtpd", reason="the mail tests need aiosmtpd (pip install -e '.[test]')")

from test_portal_hand import _link  # noqa: E402

from grader.cli import main  # noqa: E402

from portal_server import STUDENTS, WRONG, Client, make_course, open_portal  # noqa: E402
from smtp_server import Mailbox, body  # noqa: E402
from test_portal_mail import mailbox, password, settled  # noqa: E402

FIXTURES = (mailbox, password)  # test_portal_mail's: its SMTP server and the mail password
TEAM = ("s1@example.edu", "s2@example.edu", "s3@example.edu")  # s1 submits; s3 turned receipts off
OUTSIDER = "s4@example.edu"
TA = ("ta@example.edu", "A Teaching Assistant")
NAMES = dict(STUDENTS)


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
    with (folder / "roster.csv").open("a") as f:
        f.write(f"{TA[0]},{TA[1]},ta\n")
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
    assert "(by Student 1, for your team)" in body(mailbox.wait(TEAM[1], "Received: Othello endgame lab"))
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
        'for team <span class="regrade-team">red</span> (Student 1, Student 2, Student 3)'
        in prof.html("/class/regrades").text
    )
    assert prof.post(f"/class/regrades/{rid}", {"reply": "Test 3 is judged on the exact value."}).status_code == 200
    for member in (first, mate, third):
        seen = member.get(f"/s/{sid}").json()["regrades"]
        assert [(q["state"], q["reply"], q["asked_by"]) for q in seen["requests"]] == [
            ("answered", "Test 3 is judged on the exact value.", "Student 2")
        ]
        assert seen["can_ask"] is False and seen["closed"].startswith("Your team made the 1 regrade request(s)")
        assert "Test 3 is judged on the exact value." in member.html(f"/s/{sid}").text
    over = first.post(f"/s/{sid}/regrade", {"reason": "and mine"})
    assert over.status_code == 400 and "your team made the 1 regrade request(s)" in over.text
    assert "Student 2, for team" not in prof.html("/class/regrades").text  # answered: out of the open list
    assert body(mailbox.wait(TEAM[1], "Regrade answered: Othello endgame lab"))
    settled(prof)
    assert not mailbox.to(TEAM[0], "Regrade answered") and not mailbox.to(TEAM[2], "Regrade answered")
