"""Leases: a claimed job is held by its worker's token until an expiry the worker keeps
renewing (a job whose lease expired is claimed again); a submission names the worker that
graded it and counts the results written for it; failed sign-ins kept in the database, so
every server process of a course shares the limit.

Revision ID: 0007
Revises: 0006
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("jobs") as table:
        table.add_column(sa.Column("lease_token", sa.String(32), nullable=True))
        table.add_column(sa.Column("lease_until", sa.DateTime(timezone=True), nullable=True))
    with op.batch_alter_table("submissions") as table:
        table.add_column(sa.Column("graded_by", sa.String(100), nullable=True))
        table.add_column(sa.Column("gradings", sa.Integer, nullable=False, server_default="0"))
    # a job left running by a server of before leases has no lease to expire: queued again, as that server would have
    op.execute("UPDATE jobs SET state = 'queued', claimed_by = NULL, claimed_at = NULL WHERE state = 'running'")
    op.execute("UPDATE submissions SET status = 'queued' WHERE id IN (SELECT submission_id FROM jobs)")
    op.create_table(
        "signin_failures",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("email", sa.String(320), nullable=False, index=True),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("signin_failures")
    with op.batch_alter_table("submissions") as table:
        table.drop_column("gradings")
        table.drop_column("graded_by")
    with op.batch_alter_table("jobs") as table:
        table.drop_column("lease_until")
        table.drop_column("lease_token")
