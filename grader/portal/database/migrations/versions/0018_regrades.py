"""Regrade requests (a student's request on a graded submission, and staff's answer), and
password resets by mail (one-time links, their digests kept), and the expiry of the link a
message of the outbox carries (not sent once it passed).

Revision ID: 0018
Revises: 0017
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None

WHEN = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "regrade_requests",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("submission_id", sa.String(32), sa.ForeignKey("submissions.id"), nullable=False, index=True),
        sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id"), nullable=False, index=True),
        sa.Column("assignment", sa.String(40), nullable=False, index=True),
        sa.Column("reason", sa.Text, nullable=False),
        sa.Column("state", sa.String(16), nullable=False, index=True),
        sa.Column("asked_at", WHEN, nullable=False),
        sa.Column("answered_at", WHEN, nullable=True),
        sa.Column("answered_by", sa.Integer, sa.ForeignKey("users.id"), nullable=True),
        sa.Column("reply", sa.Text, nullable=True),
        sa.Column("done", sa.String(200), nullable=False),
    )
    op.create_table(
        "password_resets",
        sa.Column("digest", sa.String(64), primary_key=True),
        sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id"), nullable=False, index=True),
        sa.Column("created_at", WHEN, nullable=False),
        sa.Column("expires_at", WHEN, nullable=False),
        sa.Column("used_at", WHEN, nullable=True),
    )
    with op.batch_alter_table("mail_outbox") as batch:
        batch.add_column(sa.Column("expires_at", WHEN, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("mail_outbox") as batch:
        batch.drop_column("expires_at")
    op.drop_table("password_resets")
    op.drop_table("regrade_requests")
