"""Attacks on the portal's passwords, over real HTTP against a real server, on SQLite and on
PostgreSQL (the limits are counted in the database): a password a guesser tries first, a
stranger's failures meant to lock the owner out at a deadline, one client spraying a common
password over many accounts, and X-Forwarded-For forged to pass for many clients. Each
client has an address of its own on the loopback (127.0.0.2, 127.0.0.3...)."""

from __future__ import annotations

import secrets
import threading

import pytest

pytestmark = pytest.mark.xdist_group(__name__)  # one worker: the module's fixture runs once

httpx = pytest.importorskip("httpx", reason="the portal's tests need httpx (pip install -e '.[test]')")
pytest.importorskip("starlette", reason='the portal needs its extra: pip install -e ".[portal]"')

from sqlalchemy import text  # noqa: E402

from grader.portal.accounts.signin import SignInLimit, TooManyFailures  # noqa: E402
from grader.portal.database.db import connect, sessions, upgrade  # noqa: E402

from portal_server import Client, Server, make_course  # noqa: E402

GOOD = "plum kettle orbit lantern"  # a password no guesser tries early


def new_database(request, tmp) -> str:
    """A new, empty database of the kind ``request.param`` names."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp / 'portal.sqlite3'}"
    base = request.getfixturevalue("postgres")
    name = "t_" + secrets.token_hex(6)
    admin = connect(base.format(db="postgres")).execution_options(isolation_level="AUTOCOMMIT")
    with admin.connect() as c:
        c.execute(text(f"CREATE DATABASE {name}"))
    admin.dispose()
    return base.format(db=name)


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def served(request, tmp_path_factory):
    """One server (no workers) for the module's tests, its course trusting the proxy on
    127.0.0.1, on a database of each kind: its URL and instructor."""
    tmp = tmp_path_factory.mktemp("passwords")
    course = make_course(tmp / "course")
    (course / "course.yaml").write_text((course / "course.yaml").read_text() + "trusted_proxies: [127.0.0.1]\n")
    server = Server(course, tmp, new_database(request, tmp), "--workers", "0")
    instructor = Client(server.url)
    instructor.sign_in(server.link)
    yield {"server": server, "url": server.url, "instructor": instructor}
    server.stop()


def from_address(url: str, address: str, forwarded: str | None = None) -> Client:
    """A browser connecting from ``address`` (a loopback address of its own); with
    ``forwarded``, a proxy's request saying X-Forwarded-For: ``forwarded``."""
    client = Client(url)
    client.http = httpx.Client(base_url=url, headers={"Accept": "application/json"}, timeout=30,
                               transport=httpx.HTTPTransport(local_address=address))  # fmt: skip
    if forwarded is not None:
        client.http.headers["X-Forwarded-For"] = forwarded
    client.get("/signin")  # the CSRF token of its cookie
    return client


def with_password(served, email: str, address: str = "127.0.0.2", forwarded: str | None = None) -> Client:
    """The owner's browser at ``address``, signed in with a link, their password set to GOOD."""
    owner = from_address(served["url"], address, forwarded)
    owner.sign_in(served["instructor"].post("/class/links", {"email": email}).json()["links"][0]["link"])
    assert owner.post("/password", {"password": GOOD}).json()["password_set"] is True
    return owner


def sign_out(client: Client) -> None:
    assert client.post("/signout").json()["signed_out"] is True
    client.get("/signin")  # the new cookie's CSRF token


def sign_in(client: Client, email: str, password: str) -> httpx.Response:
    return client.post("/signin", {"email": email, "password": password})


@pytest.mark.parametrize(
    ("password", "why"),
    [
        ("aaaaaaaaaa", 'repeats like "aaa" are easy to guess'),
        ("password123", "this is a very common password"),
        ("qwertyuiop", "this is a top-100 common password"),
        ("Passw0rd!2024", "this is similar to a commonly used password"),
        ("Student1student1", "it is made of your name, your e-mail or the course's"),
        ("s1example.edu", "it is made of your name, your e-mail or the course's"),
        ("s1@example.edu!", "it is made of your name, your e-mail or the course's"),
    ],
)  # fmt: skip
def test_a_password_a_guesser_tries_first_is_refused_saying_what_to_do(served, password, why):
    """Main took any ten characters, ten a's among them."""
    me = from_address(served["url"], "127.0.0.2")
    me.sign_in(served["instructor"].post("/class/links", {"email": "s1@example.edu"}).json()["links"][0]["link"])
    r = me.post("/password", {"password": password})
    assert r.status_code == 400
    assert r.json()["error"] == (f"this password is too easy to guess ({why}): choose a longer one, such as three or "
                                 "four words that do not go together, that is neither a common password nor made of "
                                 "your name or e-mail")  # fmt: skip
    short = me.post("/password", {"password": "too short"}).json()["error"]
    assert short.startswith("a password needs at least 10 characters: choose a longer one")


def test_a_strangers_failures_never_lock_the_owner_out(served):
    """Main locked the e-mail for 15 minutes after five failures from anyone: at a deadline, a
    way to keep one student out."""
    owner = with_password(served, "s2@example.edu")
    sign_out(owner)
    stranger = from_address(served["url"], "127.0.0.3")
    assert [sign_in(stranger, "s2@example.edu", f"guess {i}").status_code for i in range(5)] == [401] * 5
    r = sign_in(owner, "s2@example.edu", GOOD)
    assert r.status_code == 200 and r.json()["signed_in"]["email"] == "s2@example.edu"
    blocked = sign_in(stranger, "s2@example.edu", GOOD)  # the stranger is stopped, even with the right one
    assert blocked.status_code == 429
    assert blocked.json()["error"] == ("too many failed sign-ins for this e-mail from here: try again in 15 minutes, "
                                       "or use a sign-in link")  # fmt: skip


@pytest.mark.slow  # 21 sign-ins, each an argon2 check: 10-30 s on a loaded machine
def test_one_client_spraying_a_password_over_many_accounts_is_stopped(served):
    """A client trying one common password on account after account (each once: no limit per
    address is reached) is stopped after 20 failures; another client signs in as before."""
    owner = with_password(served, "s3@example.edu")
    sign_out(owner)
    sprayer = from_address(served["url"], "127.0.0.4")
    emails = [f"s{i}@example.edu" for i in range(1, 7)] + [f"someone{i}@example.edu" for i in range(15)]
    codes = [sign_in(sprayer, email, "Spring2026!").status_code for email in emails]
    assert codes == [401] * 20 + [429]
    r = sign_in(sprayer, "s3@example.edu", GOOD)
    assert r.status_code == 429 and r.json()["error"].startswith("too many failed sign-ins from your address")
    assert sign_in(owner, "s3@example.edu", GOOD).status_code == 200


@pytest.mark.slow  # 28 sign-ins, each an argon2 check: 15-40 s on a loaded machine
def test_x_forwarded_for_names_the_client_only_from_a_trusted_proxy(served):
    """From the course's proxy (127.0.0.1), X-Forwarded-For names the client: a stranger behind
    it is limited apart from the owner behind it, and the owner's session shows their address.
    From anyone else the header is ignored: a client forging a new one at each try is still one
    client, stopped after 20 failures."""
    owner = with_password(served, "s4@example.edu", "127.0.0.1", forwarded="198.51.100.9")
    assert [s["client"] for s in owner.get("/sessions").json()["sessions"]] == ["198.51.100.9"]
    sign_out(owner)
    stranger = from_address(served["url"], "127.0.0.1", forwarded="203.0.113.7")
    assert [sign_in(stranger, "s4@example.edu", f"guess {i}").status_code for i in range(6)] == [401] * 5 + [429]
    assert sign_in(owner, "s4@example.edu", GOOD).status_code == 200
    forger = from_address(served["url"], "127.0.0.5")
    codes = []
    for i in range(21):
        forger.http.headers["X-Forwarded-For"] = f"192.0.2.{i + 1}"
        codes.append(sign_in(forger, f"sprayed{i}@example.edu", "Spring2026!").status_code)
    assert codes == [401] * 20 + [429]


def test_without_a_trusted_proxy_x_forwarded_for_is_ignored(tmp_path):
    """``trusted_proxies: []``: a request from 127.0.0.1 saying X-Forwarded-For is its peer's."""
    course = make_course(tmp_path / "course")
    (course / "course.yaml").write_text((course / "course.yaml").read_text() + "trusted_proxies: []\n")
    server = Server(course, tmp_path, None, "--workers", "0")
    try:
        me = Client(server.url)
        me.http.headers["X-Forwarded-For"] = "198.51.100.9"
        me.sign_in(server.link)
        assert [s["client"] for s in me.get("/sessions").json()["sessions"]] == ["127.0.0.1"]
    finally:
        server.stop()


@pytest.mark.parametrize("value", ["'*'", "[localhost]", "[10.0.0.5/8]", "[300.1.1.1]", "127.0.0.1"])
def test_a_bad_trusted_proxies_is_one_line_naming_the_key(tmp_path, value):
    from click.testing import CliRunner

    from grader.cli import main

    course = make_course(tmp_path / "course")
    (course / "course.yaml").write_text((course / "course.yaml").read_text() + f"trusted_proxies: {value}\n")
    result = CliRunner().invoke(main, ["serve", str(course)])
    assert result.exit_code == 1 and len(result.output.strip().splitlines()) == 1, result.output
    assert "course.yaml: 'trusted_proxies' must be a list of your proxies' IP addresses or networks" in result.output


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request, tmp_path):
    """A new, empty database of each kind."""
    return new_database(request, tmp_path)


def test_tries_racing_through_several_processes_get_no_more_checks_than_the_limits(database):
    """Twelve tries at once from one client at one address, through two engines (two server
    processes): five are counted, the others refused unchecked; another client still may try."""
    engine, other = connect(database), connect(database)
    upgrade(engine)
    makers = [sessions(engine), sessions(other)]
    limit = SignInLimit(failures=5, client_failures=20, seconds=900)
    taken, refused = [], []
    barrier = threading.Barrier(12)

    def one(n: int) -> None:
        barrier.wait()
        try:
            with makers[n % 2].begin() as s:
                taken.append(limit.take(s, "s1@example.edu", "10.0.0.1"))
        except TooManyFailures:
            refused.append(n)

    threads = [threading.Thread(target=one, args=(n,)) for n in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert (len(taken), len(refused)) == (5, 7)
    with makers[0].begin() as s:
        limit.take(s, "s1@example.edu", "10.0.0.2")
    engine.dispose()
    other.dispose()
