"""A lease: a job row (a submission's grading, or an arena's games) claimed for a time by one
worker, under a token the worker renews while it works. A lease that expired (its worker
killed, its machine gone) is free to claim again; a job whose workers died on it
``MAX_ATTEMPTS`` times is failed by its queue, never claimed again."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import ColumnElement, and_, or_, select, update
from sqlalchemy.orm import Session

from .arena import GameJob
from .models import QUEUED, RUNNING, Job, now

LEASE_SECONDS = 60.0  # how long a claimed job stays its worker's without a renewal


MAX_ATTEMPTS = 3  # claims of a job whose worker never came back (killed, lost) before the job is failed


def stuck(session: Session, table: type[Job] | type[GameJob], attempts: int) -> list[Any]:
    """The jobs of ``table`` (grading or game jobs) claimed ``attempts`` times whose last lease
    expired too: their worker died on each claim. Locked for the caller, who fails them."""
    return list(session.scalars(
        select(table).where(table.state == RUNNING, table.lease_until < now(), table.attempts >= attempts)
        .order_by(table.id).with_for_update(skip_locked=True)
    ))  # fmt: skip


def free(table: type[Job] | type[GameJob], moment: dt.datetime) -> ColumnElement[bool]:
    """A job nobody holds: queued, or running under a lease that expired."""
    return or_(table.state == QUEUED, and_(table.state == RUNNING, table.lease_until < moment))


def claimed(table: type[Job] | type[GameJob], worker: str, moment: dt.datetime, token: str,
             seconds: float) -> dict[str, Any]:  # fmt: skip
    """A claimed job's new values: running, under the lease ``token`` for ``seconds``."""
    return dict(state=RUNNING, claimed_by=worker, claimed_at=moment, attempts=table.attempts + 1, lease_token=token,
                lease_until=moment + dt.timedelta(seconds=seconds))  # fmt: skip


def renewed(session: Session, table: type[Job] | type[GameJob], job_id: int, token: str, seconds: float) -> bool:
    done = session.execute(
        update(table).where(table.id == job_id, table.lease_token == token)
        .values(lease_until=now() + dt.timedelta(seconds=seconds))
    )  # fmt: skip
    return getattr(done, "rowcount", 0) == 1
