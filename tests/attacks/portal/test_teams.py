"""Teams (course.yaml's ``teams: {size: 2}`` on the Othello lab), attacked over HTTP on a
server of its own: another team's submission and feedback, an invitation sent to someone else,
a full team or a second one, leaving after the team submitted, a forged invitation id, a form
without its CSRF token, and an invitation's refusal telling the inviter another student's state."""

from __future__ import annotations

import pytest

httpx = pytest.importorskip("httpx", reason="the portal's tests need httpx (pip install -e '.[test]')")
pytest.importorskip("starlette", reason='the portal needs its extra: pip install -e ".[portal]"')
pytestmark = pytest.mark.xdist_group(__name__)  # its tests build on each other's state, in order

from portal_server import Client, Server, make_course  # noqa: E402

SCRIPT = b"print(19)\n"


@pytest.fixture(scope="module")
def teams_portal(tmp_path_factory):
    """A server (no workers: uploads wait) of the demo course whose Othello lab is done in teams
    of 2, the instructor and six students signed in, by e-mail."""
    tmp = tmp_path_factory.mktemp("teams")
    course = make_course(tmp / "course")
    text = (course / "course.yaml").read_text()
    (course / "course.yaml").write_text(text.replace("per_day: 3", "per_day: 3\n    teams: {size: 2}", 1))
    server = Server(course, tmp, None, "--workers", "0")
    try:
        prof = Client(server.url)
        prof.sign_in(server.link)
        people = {"instructor": prof}
        for entry in prof.post("/class/links").json()["links"]:
            people[entry["email"]] = Client(server.url)
            people[entry["email"]].sign_in(entry["link"])
        yield people
    finally:
        server.stop()


def student(people, n: int) -> Client:
    return people[f"s{n}@example.edu"]


def team(me: Client) -> dict:
    return me.get("/a/othello").json()["team"]


def invite(me: Client, n: int) -> httpx.Response:
    return me.post("/a/othello/team/invite", {"email": f"s{n}@example.edu"})


def pair(people, a: int, b: int) -> None:
    """Students a and b a team: a invites, b accepts."""
    assert invite(student(people, a), b).status_code == 200
    got = team(student(people, b))["received"]
    r = student(people, b).post("/a/othello/team/accept", {"invitation": str(got[0]["id"])})
    assert r.status_code == 200, r.text


def test_a_student_never_sees_another_teams_submission_or_feedback(teams_portal):
    people = teams_portal
    pair(people, 1, 2)
    r = student(people, 1).upload(SCRIPT)
    assert r.status_code == 201, r.text
    sid = r.json()["id"]
    mate, other = student(people, 2), student(people, 3)
    assert [s["id"] for s in mate.get("/a/othello").json()["submissions"]] == [sid]  # the team's: each member's
    assert mate.get(f"/s/{sid}").status_code == 200
    with mate.http.stream("GET", f"/s/{sid}/events") as events:
        assert events.status_code == 200
    for path in (f"/s/{sid}", f"/s/{sid}/events"):
        assert other.get(path).status_code == 404, path  # as an id that does not exist
    assert other.html(f"/s/{sid}").status_code == 404
    assert sid not in other.get("/a/othello").text
    # the day's uploads are the team's: 3 between the two members
    assert mate.upload(SCRIPT).status_code == 201 and student(people, 1).upload(SCRIPT).status_code == 201
    refused = mate.upload(SCRIPT)
    assert refused.status_code == 429 and "your team has used today's 3 submissions" in refused.text
    assert mate.get("/a/othello").json()["left_today"] == 0 and other.get("/a/othello").json()["left_today"] == 3
    names = {s["email"]: s["teams"] for s in people["instructor"].get("/class").json()["students"]}
    assert names["s1@example.edu"] == names["s2@example.edu"] == {"othello": team(mate)["name"]}
    assert names["s3@example.edu"] == {}


def test_a_student_cannot_leave_after_the_teams_first_submission(teams_portal):
    people = teams_portal  # s1 and s2 submitted above
    r = student(people, 2).post("/a/othello/team/leave")
    assert r.status_code == 409 and "can no longer leave" in r.text
    assert len(team(student(people, 2))["members"]) == 2


def test_a_student_cannot_accept_an_invitation_sent_to_someone_else_or_forge_its_id(teams_portal):
    people = teams_portal
    assert invite(student(people, 3), 4).status_code == 200
    sent = team(student(people, 3))["sent"]
    assert [i["email"] for i in sent] == ["s4@example.edu"]
    thief = student(people, 5)
    for forged in (str(sent[0]["id"]), "999999", "-1", "x", "9" * 30, ""):
        r = thief.post("/a/othello/team/accept", {"invitation": forged})
        assert r.status_code == 404, (forged, r.text)  # as one that does not exist
        assert thief.post("/a/othello/team/decline", {"invitation": forged}).status_code == 404
    assert team(thief)["id"] is None and team(student(people, 4))["received"][0]["id"] == sent[0]["id"]
    assert thief.post("/a/tictactoe/team/invite", {"email": "s6@example.edu"}).status_code == 404  # not in teams
    assert people["instructor"].post("/a/othello/team/invite", {"email": "s6@example.edu"}).status_code == 404


def test_a_student_cannot_join_a_full_team_or_a_second_one(teams_portal):
    people = teams_portal
    r = student(people, 4).post(
        "/a/othello/team/accept", {"invitation": str(team(student(people, 4))["received"][0]["id"])}
    )
    assert r.status_code == 200, r.text  # s3 and s4 a team now
    full = invite(student(people, 3), 5)
    assert full.status_code == 409 and "your team is full (2 students)" in full.text
    taken = invite(student(people, 5), 4)
    assert taken.status_code == 409 and "s4@example.edu cannot be invited" in taken.text
    # an invitation made before the team filled is refused when accepted
    assert invite(student(people, 5), 6).status_code == 200
    assert student(people, 6).post("/a/othello/team/leave").status_code == 409  # in no team
    assert invite(student(people, 1), 6).status_code == 409  # s1's team: full and submitted
    got = team(student(people, 6))["received"]
    assert student(people, 6).post("/a/othello/team/accept", {"invitation": str(got[0]["id"])}).status_code == 200
    second = invite(student(people, 3), 6)
    assert second.status_code == 409 and "your team is full" in second.text
    assert [m["email"] for m in team(student(people, 6))["members"]] == ["s5@example.edu", "s6@example.edu"]


def test_a_team_form_without_its_csrf_token_is_refused(teams_portal):
    me = student(teams_portal, 5)
    for action, fields in (("invite", {"email": "s1@example.edu"}), ("leave", {}), ("accept", {"invitation": "1"})):
        r = me.post(f"/a/othello/team/{action}", fields, csrf=False)
        assert r.status_code == 403, action
        r = me.post(f"/a/othello/team/{action}", {**fields, "csrf": "forged"}, csrf=False)
        assert r.status_code == 403, action
    assert len(team(me)["members"]) == 2


def test_a_student_outside_a_team_cannot_ask_for_its_regrade(teams_portal):
    people = teams_portal
    sid = next(s["id"] for s in student(people, 1).get("/a/othello").json()["submissions"])  # the pair 1 & 2's
    outsider = student(people, 5)
    assert outsider.post(f"/s/{sid}/regrade", {"reason": "let me in"}).status_code == 404  # as for no submission
    asked = student(people, 2).post(f"/s/{sid}/regrade", {"reason": "ours"})  # a member: refused only as ungraded
    assert asked.status_code == 400 and "only a graded submission" in asked.text
    assert people["instructor"].get("/class/regrades").json()["open"] == []


def test_a_student_outside_a_team_never_opens_its_code(teams_portal):
    people = teams_portal
    sid = next(s["id"] for s in student(people, 1).get("/a/othello").json()["submissions"])  # the pair 1 & 2's
    assert student(people, 2).get(f"/s/{sid}/code").status_code == 200  # a member: the team's code is theirs
    for n in (3, 5):
        assert student(people, n).get(f"/s/{sid}/code").status_code == 404  # as for no submission
        assert "print(19)" not in student(people, n).html(f"/s/{sid}/code").text


def test_an_invitations_refusal_tells_nothing_of_the_invitees_state(teams_portal):
    """Main's refusals told the inviter whether the address was a student of the course, in a
    team already or had submitted alone. Each is one refusal now: the same answer, but for the
    address given back, as a JSON error and as a page."""
    people, prof = teams_portal, teams_portal["instructor"]
    more = "Email,Name\n" + "".join(f"s{n}@example.edu,Student {n}\n" for n in (7, 8, 9, 10))
    assert prof.post("/class/roster", files={"roster": ("more.csv", more.encode(), "text/csv")}).status_code == 200
    for n in (7, 8, 9, 10):
        people[f"s{n}@example.edu"] = Client(prof.url)
        student(people, n).sign_in(prof.post("/class/links", {"email": f"s{n}@example.edu"}).json()["links"][0]["link"])
    pair(people, 9, 10)  # s10 is in a team
    assert student(people, 8).upload(SCRIPT).status_code == 201  # s8 has submitted alone
    me = student(people, 7)  # in no team, nothing submitted: free to invite
    staff = prof.get("/").json()["user"]["email"]
    states = {"nobody@example.edu": "not on the roster", staff: "staff", "s10@example.edu": "in a team",
              "s8@example.edu": "submitted alone"}  # fmt: skip
    assert {e["email"] for e in prof.get("/class").json()["students"]} >= {"s10@example.edu", "s8@example.edu"}
    answers = set()
    for address in states:
        r = me.post("/a/othello/team/invite", {"email": address})
        page = me.http.post("/a/othello/team/invite", data={"email": address, "csrf": me.csrf},
                            headers={"Accept": "text/html"})  # fmt: skip
        assert r.status_code == page.status_code == 409, (address, r.text)
        answers.add((r.headers["content-type"], r.text.replace(address, "ADDRESS"),
                     page.text.replace(address, "ADDRESS").replace(me.csrf, "CSRF")))  # fmt: skip
    assert len(answers) == 1, answers
    (said,) = answers
    assert "cannot be invited" in said[1] and "may be in a team already" in said[1]
    assert team(me)["sent"] == []
    assert team(student(people, 8))["id"] is None
