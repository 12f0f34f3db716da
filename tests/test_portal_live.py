"""How fast pages reach people: a page waiting for its grade is told each change of its
submission's status by server-sent events (grader.portal.web.live), the server asking the database
once a tick for all the watched submissions, however many pages watch; and the server's
connections send each answer at once (TCP_NODELAY)."""

from __future__ import annotations

import asyncio
import socket
import threading

import pytest

pytest.importorskip("sqlalchemy", reason='the portal needs its extra: pip install -e ".[portal]"')

from sqlalchemy import event, update  # noqa: E402

from grader.portal.accounts.roster import RosterEntry, import_roster  # noqa: E402
from grader.portal.database.db import connect, reading, sessions, upgrade  # noqa: E402
from grader.portal.database.models import FAILED, GRADED, QUEUED, RUNNING, Submission, User  # noqa: E402
from grader.portal.server import listening_socket  # noqa: E402
from grader.portal.web.live import BUSY_RETRY_MS, MAX_STREAMS, Watch  # noqa: E402

TICK = 0.05


@pytest.fixture
def db(tmp_path):
    engine = connect(f"sqlite:///{tmp_path / 'portal.sqlite3'}")
    upgrade(engine)
    make = sessions(engine)
    with make.begin() as s:
        import_roster(s, [RosterEntry("a@example.edu", "A")])
    yield engine, make
    engine.dispose()


def add_submissions(make, n: int) -> list[str]:
    with make.begin() as s:
        user = s.query(User).one()
        subs = [Submission(id=f"sub{k:04d}", user_id=user.id, assignment="othello", filename="lab.py", size=1,
                           sha256="0" * 64, content=b"x", status=QUEUED) for k in range(n)]  # fmt: skip
        s.add_all(subs)
    return [sub.id for sub in subs]


def set_status(make, sid: str, status: str) -> None:
    with make.begin() as s:
        s.execute(update(Submission).where(Submission.id == sid).values(status=status))


async def collect(watch: Watch, sid: str, status: str, on_first=None, who: int = 1) -> list[str]:
    """The data lines of one page's stream, to its end (``on_first`` run after the first)."""
    seen = []
    async for chunk in watch.events(sid, status, who):
        seen += [line.removeprefix("data: ") for line in chunk.splitlines() if line.startswith("data: ")]
        if on_first is not None and len(seen) == 1:
            await asyncio.to_thread(on_first)
    return seen


def test_a_page_is_told_each_status_until_the_grade_then_its_stream_ends(db):
    engine, make = db
    (sid,) = add_submissions(make, 1)

    def grade_it() -> None:  # a worker claims the submission, then writes its grade
        set_status(make, sid, RUNNING)
        threading.Timer(0.3, set_status, (make, sid, GRADED)).start()

    seen = asyncio.run(asyncio.wait_for(collect(Watch(reading(make), TICK), sid, QUEUED, grade_it), 30))
    assert seen == [QUEUED, RUNNING, GRADED]


def test_a_stream_of_a_finished_or_deleted_submission_says_so_and_ends(db):
    engine, make = db
    done, gone = add_submissions(make, 2)
    set_status(make, done, FAILED)
    watch = Watch(reading(make), TICK)
    assert asyncio.run(asyncio.wait_for(collect(watch, done, FAILED), 30)) == [FAILED]

    def delete() -> None:
        with make.begin() as s:
            s.delete(s.get(Submission, gone))

    assert asyncio.run(asyncio.wait_for(collect(watch, gone, QUEUED, delete), 30)) == [QUEUED, "gone"]


def test_the_server_asks_once_a_tick_for_all_the_watched_submissions(db):
    """200 pages on 100 submissions: the database is asked about all of them in one query a
    tick, not once a page."""
    engine, make = db
    ids = add_submissions(make, 100)
    queries: list[str] = []
    event.listen(engine, "before_cursor_execute", lambda *a: queries.append(a[2]) if "submissions" in a[2] else None)
    watch = Watch(reading(make), TICK)

    async def pages() -> list[list[str]]:
        waiting = [asyncio.create_task(collect(watch, sid, QUEUED, who=2 * n + k))  # 200 people's pages
                   for n, sid in enumerate(ids) for k in range(2)]  # fmt: skip
        while not queries:  # the watch's first look (later on a loaded machine)
            await asyncio.sleep(TICK)
        await asyncio.sleep(10 * TICK)
        asked = len(queries)
        await asyncio.to_thread(lambda: [set_status(make, sid, GRADED) for sid in ids])
        seen = await asyncio.gather(*waiting)
        assert 0 < asked < len(ids)  # a query a tick for every page (a page a query would be 200 a tick)
        return seen

    assert asyncio.run(asyncio.wait_for(pages(), 60)) == [[QUEUED, GRADED]] * 200
    assert not watch._waiting  # every page's waiter gone with its stream


def test_a_user_holds_at_most_max_streams_and_one_more_is_told_to_come_back_later(db):
    engine, make = db
    (sid,) = add_submissions(make, 1)
    watch = Watch(reading(make), TICK)

    async def pages() -> tuple[list[list[str]], list[str], list[str]]:
        mine = [asyncio.create_task(collect(watch, sid, QUEUED)) for _ in range(MAX_STREAMS)]
        await asyncio.sleep(3 * TICK)
        refused = [chunk async for chunk in watch.events(sid, QUEUED, 1)]
        other = asyncio.create_task(collect(watch, sid, QUEUED, who=2))  # another user's page is not refused
        await asyncio.sleep(3 * TICK)
        await asyncio.to_thread(set_status, make, sid, GRADED)
        return await asyncio.gather(*mine), refused, await other

    mine, refused, other = asyncio.run(asyncio.wait_for(pages(), 30))
    assert mine == [[QUEUED, GRADED]] * MAX_STREAMS and other == [QUEUED, GRADED]
    assert refused == [f"retry: {BUSY_RETRY_MS}\n: too many pages open\n\n"]


def test_the_servers_connections_send_each_answer_without_waiting_for_an_ack():
    """asyncio sets TCP_NODELAY only on sockets made as TCP's by name: on the server's socket
    each accepted connection has it (Nagle's algorithm held a keep-alive answer some 40 ms)."""
    sock = listening_socket("127.0.0.1", 0)

    async def accepted() -> int:
        told: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            told.set_result(writer.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        server = await asyncio.start_server(on_connect, sock=sock)
        async with server:
            _, writer = await asyncio.open_connection(*sock.getsockname())
            value = await asyncio.wait_for(told, 30)
            writer.close()
        return value

    assert asyncio.run(accepted()) != 0


def test_the_servers_socket_queues_a_connection_made_before_the_server_accepts_any():
    """The address is printed before the server starts accepting: a browser or script that
    connects at once waits in the socket's queue rather than being refused."""
    sock = listening_socket("127.0.0.1", 0)
    try:
        with socket.create_connection(sock.getsockname(), timeout=10):
            pass
    finally:
        sock.close()
