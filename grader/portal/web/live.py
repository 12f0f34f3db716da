"""Live status of submissions for the pages that show them (server-sent events): every page
waiting for a grade is told when its submission's status changes, and when its standing on
the queue does (an ``event: standing``: its place and estimate, or its tests done); one
query a tick asks the database for all the watched submissions at once (and one more for the
standings of those on the queue), however many pages watch."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import NamedTuple

from sqlalchemy import select
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker
from starlette.concurrency import run_in_threadpool

from ..database.models import QUEUED, RUNNING, Submission
from ..jobs.queue import standings

TICK = 0.5  # seconds between the database's looks at the watched submissions
KEEPALIVE = 15.0  # seconds between comments on a quiet stream (a proxy closes an idle one)
RETRY_MS = 1000  # how soon a browser connects again when the stream breaks (a server restart)
CHUNK = 500  # submissions asked in one query at most
MAX_STREAMS = 20  # a user's streams open at once (each holds a connection)
BUSY_RETRY_MS = 30_000  # how soon a stream refused for that comes back
STOPPING = "stopping"  # what a waiting stream is told when its server stops (no status)


class _Waiter(NamedTuple):
    shown: str
    told: asyncio.Future[str | None]


class Watch:
    """The watched submissions of one server process and the streams that wait on them."""

    def __init__(self, read: sessionmaker[Session], tick: float = TICK):
        self._read, self._tick = read, tick
        self._waiting: dict[str, list[_Waiter]] = {}
        self._task: asyncio.Task[None] | None = None
        self._stopping = False
        self._streams: dict[int, int] = {}  # streams open, by user

    def stop(self) -> None:
        """End every stream (the server is stopping: it would wait for them); browsers connect
        again, to the next server."""
        self._stopping = True
        for waiters in self._waiting.values():
            for waiter in waiters:
                if not waiter.told.done():
                    waiter.told.set_result(STOPPING)

    async def changed(self, sid: str, shown: str) -> str | None:
        """The submission's view (its status, a newline, its standing's text) once it is no
        longer ``shown`` (None: it no longer exists; STOPPING: the server stops)."""
        if self._stopping:
            return STOPPING
        waiter = _Waiter(shown, asyncio.get_running_loop().create_future())
        self._waiting.setdefault(sid, []).append(waiter)
        if self._task is None or self._task.done() or self._task.get_loop() is not asyncio.get_running_loop():
            self._task = asyncio.create_task(self._run())
        try:
            return await waiter.told
        finally:
            left = [w for w in self._waiting.get(sid, []) if w is not waiter]
            if left:
                self._waiting[sid] = left
            else:
                self._waiting.pop(sid, None)

    async def events(self, sid: str, status: str, who: int) -> AsyncIterator[str]:
        """The stream of one page: the status now, then each new one until it is final (a
        comment every KEEPALIVE seconds meanwhile), each new standing meanwhile as an
        ``event: standing``; ``gone`` if the submission is deleted. It ends when the server
        stops. A user (``who``) holds at most MAX_STREAMS at once: one more is told to come back
        in BUSY_RETRY_MS and ends (its page still reloads by hand)."""
        if self._streams.get(who, 0) >= MAX_STREAMS:
            yield f"retry: {BUSY_RETRY_MS}\n: too many pages open\n\n"
            return
        self._streams[who] = self._streams.get(who, 0) + 1
        try:
            yield f"retry: {RETRY_MS}\ndata: {status}\n\n"
            view = status + "\n"
            while status in (QUEUED, RUNNING):
                try:
                    now = await asyncio.wait_for(self.changed(sid, view), KEEPALIVE)
                except TimeoutError:
                    yield ": still " + status + "\n\n"
                    continue
                if now == STOPPING:
                    return
                view = now or "gone\n"
                was, (status, _, standing) = status, view.partition("\n")
                if standing and status in (QUEUED, RUNNING):
                    yield f"event: standing\ndata: {standing}\n\n"
                if status != was:
                    yield f"data: {status}\n\n"
        finally:
            self._streams[who] -= 1
            if not self._streams[who]:
                del self._streams[who]

    async def _run(self) -> None:
        while self._waiting:
            await asyncio.sleep(self._tick)
            ids = list(self._waiting)
            try:
                statuses = await run_in_threadpool(self._statuses, ids)
            except SQLAlchemyError:  # the database busy or restarting: ask again at the next tick
                continue
            for sid in ids:
                now = statuses.get(sid)
                for waiter in self._waiting.get(sid, []):
                    if now != waiter.shown and not waiter.told.done():
                        waiter.told.set_result(now)

    def _statuses(self, ids: list[str]) -> dict[str, str]:
        """Each submission's view: its status, a newline, its standing's text while on the queue."""
        found: dict[str, str] = {}
        with self._read() as session:
            for k in range(0, len(ids), CHUNK):
                query = select(Submission.id, Submission.status).where(Submission.id.in_(ids[k : k + CHUNK]))
                found.update({sid: status for sid, status in session.execute(query)})
            busy = [sid for sid, status in found.items() if status in (QUEUED, RUNNING)]
            texts = {sid: st.text() for sid, st in standings(session, busy).items()} if busy else {}
        return {sid: f"{status}\n{texts.get(sid, '')}" for sid, status in found.items()}
