"""The arena's queue of game jobs (a version's check, a test's pairs, a ladder's games): each
claimed under a lease as a grading job is (``grader.portal.database.leases``), the highest
priority first; a job its workers died on too often ends what it was for."""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from ..database.arena import CHECK, DONE, ArenaGame, ArenaTest, EngineVersion, GameJob
from ..database.arena import FAILED as CHECK_FAILED
from ..database.leases import LEASE_SECONDS, MAX_ATTEMPTS, claimed, free, renewed, stuck
from ..database.models import QUEUED, RUNNING, now
from . import arena


@dataclass(frozen=True)
class GameLease:
    """A claimed game job (``kind`` check or games), held as a grading job's ``Lease``."""

    job_id: int
    kind: str
    token: str


def fail_stuck_games(session: Session, attempts: int = MAX_ATTEMPTS) -> list[int]:
    """End each game job claimed ``attempts`` times whose last lease expired too (its worker
    died on it each time, as an engine that exhausts the machine makes it): a check fails its
    version with ``stopped_text``, a test's pair ends its test (``error``), a ladder's games
    are cancelled. The jobs' ids."""
    ended = stuck(session, GameJob, attempts)
    for job in ended:
        job.state, job.lease_token, job.lease_until = DONE, None, None
        said = (f"the arena stopped {job.attempts} times on this job (its worker was killed or lost while playing "
                "it each time): it is not played again; if the engine uses much memory or many processes, make it "
                "use fewer and upload it again")  # fmt: skip
        version = session.get(EngineVersion, job.version_id) if job.kind == CHECK else None
        if version is not None:
            version.status, version.message, version.checked_at = CHECK_FAILED, said, now()
        games = session.scalars(select(ArenaGame).where(ArenaGame.job_id == job.id)).all()
        for g in games:
            g.status, g.lease_token, g.cause = arena.CANCELLED, None, said
        test = session.get(ArenaTest, games[0].test_id) if games and games[0].test_id else None
        if test is not None and test.status == RUNNING:
            arena.stop_test(session, test, arena.ERROR)
    session.flush()
    return [job.id for job in ended]


def claim_game(session: Session, worker: str, seconds: float = LEASE_SECONDS,
               attempts: int = MAX_ATTEMPTS) -> GameLease | None:  # fmt: skip
    """The game job of highest priority (then the oldest) queued or whose lease expired, now
    this worker's for ``seconds``: as ``claim``, in one statement. A job claimed again after its
    worker died has its games played again from their start; one its workers died on
    ``attempts`` times is ended first (``fail_stuck_games``), never claimed."""
    fail_stuck_games(session, attempts)
    moment, token = now(), secrets.token_hex(16)
    unheld = free(GameJob, moment)
    first = (select(GameJob.id).where(unheld).order_by(GameJob.priority.desc(), GameJob.id).limit(1)
             .with_for_update(skip_locked=True).scalar_subquery())  # fmt: skip
    found = session.execute(
        update(GameJob).where(GameJob.id == first, unheld).values(claimed(GameJob, worker, moment, token, seconds))
        .returning(GameJob.id, GameJob.kind)
    ).first()  # fmt: skip
    return None if found is None else GameLease(found.id, found.kind, token)


def renew_game(session: Session, lease: GameLease, seconds: float = LEASE_SECONDS) -> bool:
    """Keep the game job for ``seconds`` more; False when the lease was lost."""
    return renewed(session, GameJob, lease.job_id, lease.token, seconds)


def finish_game(session: Session, lease: GameLease) -> bool:
    """Mark the game job done if this lease still holds it: True, and the caller writes its
    games in the same transaction; False (write nothing) when another worker holds it now."""
    done = session.execute(
        update(GameJob).where(GameJob.id == lease.job_id, GameJob.lease_token == lease.token, GameJob.state == RUNNING)
        .values(state=DONE, lease_until=None)
    )  # fmt: skip
    return getattr(done, "rowcount", 0) == 1


def waiting_games(session: Session) -> int:
    """Game jobs waiting to be claimed (a ladder queues its games when there are none)."""
    return session.scalar(select(func.count()).select_from(GameJob).where(GameJob.state == QUEUED)) or 0
