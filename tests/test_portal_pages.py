"""Every page of the portal in Chromium, as a student, a TA and an instructor, at 1280 and at
375 pixels wide: no page scrolls sideways (the document's scrollWidth within its
clientWidth), axe-core finds no serious or critical violation, no CSP violation (nor any
other error) is logged, and none weighs more than 100 KB (HTML, CSS and JS). On the demo course with graded submissions written for each
student as a worker writes them (one real grading each); the slow variant has 300 students
and the tic-tac-toe lab's 100-test plan."""

from __future__ import annotations

import re
import secrets
import sqlite3
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason='the portal needs its extra: pip install -e ".[portal]"')
pytest.importorskip("playwright.sync_api", reason="the browser test needs playwright (pip install -e '.[test]')")
axe_api = pytest.importorskip("axe_playwright_python.sync_playwright", reason="pip install -e '.[test]'")

from test_portal_ladder import engine_of, finish  # noqa: E402

from grader.files import SHARE  # noqa: E402
from grader.portal.accounts.signin import new_signin_token  # noqa: E402
from grader.portal.course.course import load_course, make_demo_course  # noqa: E402
from grader.portal.course.sync import sync  # noqa: E402
from grader.portal.database.db import connect, sessions  # noqa: E402
from grader.portal.database.models import User  # noqa: E402
from grader.portal.jobs.grading import grade_upload  # noqa: E402
from grader.portal.web.routes import STATIC  # noqa: E402

from portal_server import WRONG, Server  # noqa: E402
from test_portal_arena import _play_pair, checked_versions  # noqa: E402

WIDTHS = (1280, 375)
CUT = """[...document.querySelectorAll("main svg")].filter(svg => {
  const box = svg.getBoundingClientRect();
  return [...svg.querySelectorAll("rect")].some(r => {
    const b = r.getBoundingClientRect();
    return b.width > 0 && b.height > 0 && (b.right > box.right + 1 || b.bottom > box.bottom + 1);
  });
}).length"""  # the charts whose bars fall outside what they show
MAX_BYTES = 100_000  # a page's HTML with the CSS and JS it loads, before compression
LADDER = (
    "    limits: {wall_seconds: 10}\n    ladder: {anonymous: true, top: 3, deadline_games: 4}\n"
    "    rubric: {anonymous: true, items: [{name: style, points: -1, comment: names say what they hold}]}\n"
)
DRAWN = {r"/arena/t/[^/]+$": "#llr-chart svg polyline.line", r"/ladder/[^/]+$": "#ratings-chart svg circle.dot"}
SPRT_PAIRS = [(1.0, 0.5), (1.0, 1.0), (0.0, 1.0), (1.0, 1.0), (0.5, 0.5)] * 20  # the new version's, until H1
TTT = SHARE / "submissions" / "tictactoe" / "can_lose.py"


def _course(folder: Path, students: int) -> list[str]:
    """The demo course with ``students`` students and a TA on its roster, its Othello lab with a
    ladder, its tic-tac-toe and Gomoku labs done in teams of 2; their e-mails."""
    make_demo_course(folder)
    yaml = (folder / "course.yaml").read_text()
    yaml = yaml.replace("    limits: {wall_seconds: 10}\n", LADDER, 1)
    for plan in ("tictactoe.plan", "gomoku.gtp"):  # done in teams: the team section of their pages
        yaml = yaml.replace(f"    plan: {plan}\n", f"    plan: {plan}\n    teams: {{size: 2}}\n", 1)
    (folder / "course.yaml").write_text(yaml)
    emails = [f"s{i:03d}@example.edu" for i in range(students)]
    rows = "".join(f"{e},Student {i:03d} Name-Longer-Than-Most,student\n" for i, e in enumerate(emails))
    (folder / "roster.csv").write_text("Email,Name,Role\n" + rows + "ta@example.edu,Teaching Assistant,ta\n")
    return emails


def _fill(folder: Path, database: Path, emails: list[str], labs: dict[str, Path]) -> dict[str, str]:
    """The roster synced and, for each lab, one real grading written as every student's
    submission (a worker's columns); each lab's submission id of the first student."""
    sync(folder, f"sqlite:///{database}")
    course = load_course(folder)
    first: dict[str, str] = {}
    with sqlite3.connect(database) as db:
        ids = dict(db.execute("SELECT email, id FROM users"))
        for lab, script in labs.items():
            content = script.read_bytes()
            fb = grade_upload(course, course.assignments[lab], script.name, content)
            rows = [(secrets.token_urlsafe(16), ids[e], lab, f"2026-11-27 {k % 24:02d}:00:00.000000", len(content),
                     content, fb.total, fb.max_total, fb.symbols, fb.public_symbols, fb.public_total, fb.student_text,
                     fb.full_text, fb.records) for k, e in enumerate(emails)]  # fmt: skip
            db.executemany(
                "INSERT INTO submissions (id, user_id, assignment, received_at, late, filename, size, sha256, "
                "content, status, total, max_total, symbols, public_symbols, public_total, student_text, full_text, "
                "records, gradings) VALUES (?, ?, ?, ?, 0, 'lab.py', ?, '', ?, 'graded', ?, ?, ?, ?, ?, ?, ?, ?, 1)",
                rows,
            )
            first[lab] = rows[0][0]
    return first


def _hand_graded(database: Path, sid: str) -> None:
    """The first student's Othello submission graded by hand (the rubric's item, a comment on a
    line), released: its code page shows them to the student, the staff's its forms."""
    with sqlite3.connect(database) as db:
        (staff,) = db.execute("SELECT id FROM users WHERE role = 'instructor'").fetchone()
        db.execute("INSERT INTO hand_grades (submission_id, items, graded_by, graded_at) "
                   "VALUES (?, '[\"style\"]', ?, '2026-11-28 10:00:00')", (sid, staff))  # fmt: skip
        db.execute("INSERT INTO hand_comments (submission_id, path, line, text, written_by, written_at) VALUES "
                   "(?, 'lab.py', 2, 'A long comment that wraps on a phone rather than scrolling sideways.', ?, "
                   "'2026-11-28 10:00:00')", (sid, staff))  # fmt: skip
        db.execute("INSERT INTO hand_releases (assignment, released_at, released_by) "
                   "VALUES ('othello', '2026-11-28 11:00:00', ?)", (staff,))  # fmt: skip


def _teams(database: Path, emails: list[str]) -> None:
    """The first two students a team of the Gomoku lab; the third invites the first into a team of the tic-tac-toe lab."""
    with sqlite3.connect(database) as db:
        ids = dict(db.execute("SELECT email, id FROM users"))
        db.execute("INSERT INTO teams (id, assignment, name, created_at) VALUES (1, 'gomoku', 'Pair', '2026-11-27')")
        db.executemany("INSERT INTO team_members (team_id, user_id, assignment, joined_at) VALUES (1, ?, 'gomoku', "
                       "'2026-11-27')", [(ids[emails[0]],), (ids[emails[1]],)])  # fmt: skip
        db.execute("INSERT INTO team_invites (assignment, from_user, to_user, created_at) VALUES ('tictactoe', ?, ?, "
                   "'2026-11-27')", (ids[emails[2]], ids[emails[0]]))  # fmt: skip


def _regrades(database: Path, emails: list[str]) -> None:
    """A regrade request of the first student on their Othello submission, answered (a reply and a
    rerun), and one of the second student's, open: as the submission page and the staff's queue show them."""
    with sqlite3.connect(database) as db:
        for email, state, reply in (
            (emails[0], "answered", "Seen: " + "graded again " * 20),
            (emails[1], "open", None),
        ):
            uid, sid = db.execute("SELECT users.id, submissions.id FROM users JOIN submissions ON "
                                  "submissions.user_id = users.id WHERE email = ? AND assignment = 'othello'",
                                  (email,)).fetchone()  # fmt: skip
            db.execute("INSERT INTO regrade_requests (submission_id, user_id, assignment, reason, state, asked_at, "
                       "answered_at, reply, done) VALUES (?, ?, 'othello', ?, ?, '2026-11-27 12:00:00', ?, ?, ?)",
                       (sid, uid, "Test 3: my move is optimal too, " + "please " * 30, state,
                        "2026-11-27 13:00:00" if reply else None, reply, "rerun" if reply else ""))  # fmt: skip


def _arena(folder: Path, database: Path, emails: list[str]) -> dict[str, str]:
    """The first student's SPRT test of two versions of their engine, played by the library as a
    worker plays it until H1 accepts it, and four students' engines entered in the Othello
    ladder, each beating the next; the ids of the test, the engine, one of the test's games and
    the first student's ladder entry."""
    from sqlalchemy import select

    from grader.portal.arena import arena
    from grader.portal.arena import leases as game_leases
    from grader.portal.database.arena import DONE, ArenaGame, ArenaTest
    from grader.portal.database.ladders import LadderEntry, LadderGame
    from grader.portal.ladders import ladders

    course = load_course(folder)
    make = sessions(connect(f"sqlite:///{database}"))
    with make.begin() as s:
        owner = s.scalar(select(User).where(User.email == emails[0]))
        old, new = checked_versions(s, owner, "mine", 2)
        tid = arena.new_test(s, owner, arena.TestRequest(new=new, base=old, elo1=100, max_games=400)).id
    for scores in SPRT_PAIRS:
        with make.begin() as s:
            lease = game_leases.claim_game(s, "w")
        _play_pair(make, lease, new, scores)
        with make() as s:
            if s.get(ArenaTest, tid).status != "running":
                break
    ladder = course.ladders["othello"]
    with make.begin() as s:
        versions = []
        for email in emails[:4]:
            person = s.scalar(select(User).where(User.email == email))
            ladders.enter(s, course, ladder, person, engine_of(s, person, "laddered").id)
            versions.append(int(ladders.standing(s, ladder).entries[-1].engine[1:]))
        for a, b in zip(versions, versions[1:]):
            for black, white, result in ((a, b, "1-0"), (b, a, "1/2-1/2"), (a, b, "1/2-1/2"), (b, a, "0-1")):
                game = ArenaGame(black_id=black, white_id=white, opening="f5", status=DONE)
                s.add(game)
                s.flush()
                finish(s, game, result)
                s.add(LadderGame(game_id=game.id, ladder=ladder.name))
    with make() as s:
        engine = s.get(ArenaTest, tid).engine_id
        game = s.scalar(select(ArenaGame.id).where(ArenaGame.test_id == tid).order_by(ArenaGame.id))
        entry = s.scalar(
            select(LadderEntry.id).join(User, User.id == LadderEntry.user_id).where(User.email == emails[0])
        )
    return {"test": tid, "engine": str(engine), "game": str(game), "entry": str(entry)}


def _link(database: Path, base: str, email: str) -> str:
    make = sessions(connect(f"sqlite:///{database}"))
    with make.begin() as session:
        from sqlalchemy import select

        user = session.scalar(select(User).where(User.email == email))
        return f"{base}/link/{new_signin_token(session, user)}"


def _reset_link(database: Path, base: str, email: str) -> str:
    from sqlalchemy import select

    from grader.portal.accounts.resets import new_reset_token

    with sessions(connect(f"sqlite:///{database}")).begin() as session:
        user = session.scalar(select(User).where(User.email == email))
        return f"{base}/reset/{new_reset_token(session, user)[0]}"


NOT_FOUND = ("/no/such/page", "/s/no-such-submission")  # the error page, for everyone


def _pages(emails: list[str], subs: dict[str, str], ids: dict[str, str]) -> dict[str, list[str]]:
    """The pages each role opens (each GET route that answers a page to that role)."""
    mine = [p for sid in subs.values() for p in (f"/s/{sid}", f"/s/{sid}/code")]
    arena = ["/arena", f"/arena/e/{ids['engine']}", f"/arena/t/{ids['test']}", f"/arena/g/{ids['game']}",
             "/ladders", "/ladder/othello", "/ladder/othello/crosstable", f"/ladder/othello/entry/{ids['entry']}"]  # fmt: skip
    student = [
        "/",
        "/a/othello",
        "/a/tictactoe",
        "/a/gomoku",
        *mine,
        *arena,
        "/sessions",
        "/preferences",
        "/class",
        *NOT_FOUND,
    ]
    staff = ["/", "/class", "/class?page=3&sort=othello&order=desc", "/class/queue", "/class/mail", "/class/exports", "/class/audit", "/class/regrades", "/class/othello/similar", f"/class/othello/students/{emails[0]}", "/class/othello/grading",
             "/a/othello", *mine, *arena, "/sessions", *NOT_FOUND]  # fmt: skip
    return {"student": student, "ta": staff, "instructor": staff}


def _posted(page, axe, found: list[str], role: str, url: str, email: str) -> None:
    """The pages a staff form answers with: sign-in links made and a roster read (instructor), a
    refusal (403) of a button a TA sees but may not press, an API token made."""
    if role == "instructor":
        page.goto(f"{url}/class")
        page.fill("form[action='/class/links'] input[name=email]", email)
        with page.expect_navigation():
            page.click("form[action='/class/links'] button")
        _check(page, axe, found, role, "POST /class/links")
        page.goto(f"{url}/class")
        page.set_input_files("form[action='/class/roster'] input[type=file]",
                             files=[{"name": "roster.csv", "mimeType": "text/csv",
                                     "buffer": f"Email,Name\n{email},Student 000 Name-Longer-Than-Most\n".encode()}])  # fmt: skip
        with page.expect_navigation():
            page.click("form[action='/class/roster'] button")
        _check(page, axe, found, role, "POST /class/roster")
    if role == "ta":  # the ladder's deadline button, which only an instructor may press: the 403 page
        page.goto(f"{url}/ladder/othello")
        with page.expect_navigation() as went:
            page.click("#deadline")
        assert went.value is not None and went.value.status == 403, went.value and went.value.status
        assert "only an instructor starts the deadline tournament" in page.inner_text("main")
        page.logged = [t for t in page.logged if "status of 403" not in t]  # the status itself: no error of the page's
        _check(page, axe, found, role, "POST /ladder/othello/deadline (403)")
    page.goto(f"{url}/arena")
    page.fill("#new-token input[name=label]", "laptop")
    with page.expect_navigation():
        page.click("#new-token button")
    _check(page, axe, found, role, "POST /arena/token")
    page.goto(f"{url}/arena")  # the token listed, with its revoke button
    _check(page, axe, found, role, "/arena with a token")


def check_pages(chromium, tmp_path: Path, students: int, labs: dict[str, Path]) -> None:
    folder = tmp_path / "course"
    emails = _course(folder, students)
    database = tmp_path / "portal.sqlite3"
    subs = _fill(folder, database, emails, labs)
    _hand_graded(database, subs["othello"])
    _teams(database, emails)
    _regrades(database, emails)
    ids = _arena(folder, database, emails)
    server = Server(folder, tmp_path, f"sqlite:///{database}", "--workers", "0")
    axe = axe_api.Axe()
    found: list[str] = []
    try:
        links = {"instructor": server.link, "student": _link(database, server.url, emails[0]),
                 "ta": _link(database, server.url, "ta@example.edu")}  # fmt: skip
        anonymous = _watched(chromium.new_page())
        _look(anonymous, axe, f"{server.url}/signin", found, "anonymous")
        _look(anonymous, axe, links["student"], found, "anonymous")  # the link's page: shown, not yet used
        _look(anonymous, axe, f"{server.url}/sessions", found, "anonymous", 401)
        _look(anonymous, axe, _reset_link(database, server.url, emails[0]), found, "anonymous")  # a reset link's page
        for role, paths in _pages(emails, subs, ids).items():
            context = chromium.new_context()
            page = _watched(context.new_page())
            page.goto(links[role])
            with page.expect_navigation():
                page.click("#signin")
            for path in paths:
                refused = path in NOT_FOUND or (path == "/class" and role == "student")  # as no page: 404
                _look(page, axe, server.url + path, found, role, 404 if refused else 200)
            if role != "student":
                _posted(page, axe, found, role, server.url, emails[0])
            context.close()
    finally:
        server.stop()
    assert found == [], "\n".join(found)


def _watched(page):
    """The page, with the errors its console logs (a CSP violation too) kept in ``page.logged``."""
    page.logged = []
    page.on("console", lambda m: page.logged.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: page.logged.append(str(e)))
    return page


def _look(page, axe, url: str, found: list[str], role: str, status: int = 200) -> None:
    """Open ``url`` (answered ``status``) at each width: what scrolls sideways, axe's serious and
    critical violations, errors logged."""
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 800})
        answer = page.goto(url)
        assert answer is not None and answer.status == status, f"{role} {url}: {answer.status if answer else 'none'}"
        report = url.endswith("/similar")  # grader similar's report: every pair's passages in full, as its file
        if width == WIDTHS[0] and not report and (weight := _weight(answer.body())) > MAX_BYTES:
            found.append(f"{role} {url} weighs {weight} bytes with its CSS and JS (at most {MAX_BYTES})")
        _at(page, axe, found, role, url, width)
    if status != 200:  # the browser logs the status it was answered: that is no error of the page's
        page.logged = [t for t in page.logged if f"status of {status}" not in t]
    _logged(page, found, role, url)


def _weight(html: bytes) -> int:
    """A page's bytes with the stylesheets and scripts it loads (each once), before compression."""
    linked = set(re.findall(rb'<(?:link rel="stylesheet" href|script src)="/static/([^"]+)"', html))
    return len(html) + sum((STATIC / name.decode()).stat().st_size for name in linked)


def _check(page, axe, found: list[str], role: str, url: str) -> None:
    """The page shown (a form's answer) at each width, as ``_look`` opens one."""
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 800})
        _at(page, axe, found, role, url, width)
    _logged(page, found, role, url)


def _at(page, axe, found: list[str], role: str, url: str, width: int) -> None:
    """What the page shown at ``width`` draws, whether it scrolls sideways, what axe finds."""
    for part, selector in DRAWN.items():
        if re.search(part, url) and page.locator(selector).count() == 0:
            found.append(f"{role} {url} at {width}px draws no {selector}")
    if page.evaluate(CUT) > 0:
        found.append(f"{role} {url} at {width}px draws a chart's bars outside its box")
    scroll = page.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    if scroll[0] > scroll[1]:
        found.append(f"{role} {url} at {width}px scrolls sideways: {scroll[0]} > {scroll[1]}")
    for v in axe.run(page).response["violations"]:
        if v["impact"] in ("serious", "critical"):
            where = "; ".join(n["target"][0] for n in v["nodes"][:3])
            found.append(f"{role} {url} at {width}px: {v['id']} ({v['impact']}): {where}")


def _logged(page, found: list[str], role: str, url: str) -> None:
    found.extend(f"{role} {url}: logged {text}" for text in page.logged)
    page.logged.clear()


@pytest.mark.slow  # a browser, a server, one grading: 20-40 s
def test_every_page_fits_a_phone_and_passes_axe_on_a_small_course(tmp_path, chromium):
    check_pages(chromium, tmp_path, 6, {"othello": WRONG})


@pytest.mark.slow  # 300 students, a 100-test plan graded once: a minute or two
def test_every_page_fits_a_phone_and_passes_axe_on_300_students_and_100_tests(tmp_path, chromium):
    check_pages(chromium, tmp_path, 300, {"othello": WRONG, "tictactoe": TTT})


@pytest.mark.slow  # a browser, a test platform, a server, one grading: 20-40 s
def test_the_lti_pages_fit_a_phone_and_pass_axe(tmp_path, chromium):
    """The LTI tool's pages: the assignment an instructor picks for a link (deep linking, from the
    platform's launch), the page that posts the link back to the platform, the scores sent to
    the platforms with one that failed to go, and the rosters read from them (a member dropped,
    staff the portal does not know)."""
    import urllib.parse

    from grader.portal.database.lti import FAILED, LtiContext, LtiMember, LtiRegistration, LtiScore
    from grader.portal.database.models import now

    from test_portal_lti import Platform

    platform = Platform()
    folder = tmp_path / "course"
    emails = _course(folder, 3)
    (folder / "course.yaml").write_text((folder / "course.yaml").read_text() + platform.registration(True))
    with (folder / "roster.csv").open("a") as roster:
        roster.write("t-9@platform.example,Teacher t-9,instructor\n")
    database = tmp_path / "portal.sqlite3"
    subs = _fill(folder, database, emails, {"othello": WRONG})
    make = sessions(connect(f"sqlite:///{database}"))
    with make.begin() as s:
        from sqlalchemy import select

        student = s.scalar(select(User).where(User.email == emails[0]))
        s.add(LtiScore(submission_id=subs["othello"], user_id=student.id, assignment="othello", issuer=platform.url,
                       client_id="tool", lineitem=f"{platform.url}/lineitems/1", user_sub="s-1", score_given=3,
                       score_maximum=10, reason="graded", status=FAILED, attempts=8,
                       last_error="the platform answered 503 Service Unavailable for the score of this submission"))  # fmt: skip
        context = LtiContext(issuer=platform.url, client_id="tool", context_id="course-1", title="Game search 2026",
                             memberships_url=f"{platform.url}/memberships", synced_at=now(),
                             last_error="the platform answered 503 Service Unavailable the last time")  # fmt: skip
        s.add(context)
        s.flush()
        for sub, name, role, status, who in [("s-1", "A student with a rather long name indeed", "student", "active",
                                              student.id), ("s-2", "Dropped Student", "student", "dropped", None),
                                             ("t-3", "Unknown Teacher", "instructor", "active", None)]:  # fmt: skip
            s.add(LtiMember(context=context.id, sub=sub, user_id=who, name=name, role=role, status=status,
                            changed_at=now()))  # fmt: skip
        s.add(LtiRegistration(issuer="https://moodle.example-university.edu/a/rather/long/path", client_id="x7Yq2",
                              deployment_id="3", auth_login_url=f"{platform.url}/auth", token_url=f"{platform.url}/token",
                              jwks_url=f"{platform.url}/jwks", created_at=now()))  # fmt: skip
    server = Server(folder, tmp_path, f"sqlite:///{database}", "--workers", "0")
    platform.tool_jwks = server.url + "/lti/jwks"
    axe = axe_api.Axe()
    found: list[str] = []
    try:
        hint = secrets.token_hex(6)
        platform.messages[hint] = {"claims": platform.claims("t-9", "Instructor", kind="LtiDeepLinkingRequest")}
        page = _watched(chromium.new_page())
        query = urllib.parse.urlencode({"iss": platform.url, "login_hint": "t-9", "lti_message_hint": hint})
        page.goto(f"{server.url}/lti/login?{query}")
        page.wait_for_url(f"{server.url}/lti/pick")
        _check(page, axe, found, "instructor", "/lti/pick")
        # the page that posts the signed answer back to the platform, as it stands where JavaScript
        # does not run (its script, kept from posting, would leave it at once)
        page.route("**/static/lti.js", lambda route: route.fulfill(body="", content_type="text/javascript"))
        page.check("input[value=tictactoe]")
        with page.expect_navigation():
            page.click("#pick")
        assert page.locator("#lti-return button").count() == 1
        _check(page, axe, found, "instructor", "lti_post (POST /lti/pick)")
        page.unroute("**/static/lti.js")
        _look(page, axe, f"{server.url}/class/lti", found, "instructor")
        assert page.locator("#lti-scores button").count() == 1  # the failed score, to send again
        _look(page, axe, f"{server.url}/class/lti/roster", found, "instructor")
        assert page.locator(".roster tr.dropped").count() == 1
        _look(page, axe, f"{server.url}/class/lti/registrations", found, "instructor")
        with page.expect_navigation():  # the page whole before it is measured
            page.click("#make-link")
        _check(page, axe, found, "instructor", "/class/lti/registrations (a link made)")
        assert page.locator("#registration-link").inner_text().startswith(f"{server.url}/lti/register/")
        _look(page, axe, f"{server.url}/lti/register/made-up", found, "the LMS", 400)  # the page the LMS frames
    finally:
        server.stop()
        platform.stop()
    assert found == [], "\n".join(found)
