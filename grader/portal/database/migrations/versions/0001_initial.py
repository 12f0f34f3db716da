"""The first tables: portal_meta, users, signin_tokens, submissions, daily_counts, jobs.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

TIME = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "portal_meta", sa.Column("key", sa.String(64), primary_key=True), sa.Column("value", sa.Text, nullable=False)
    )
    op.create_table(
        "users",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("email", sa.String(320), nullable=False, unique=True),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("password_hash", sa.String(200)),
        sa.Column("created_at", TIME, nullable=False),
    )
    op.create_table(
        "signin_tokens",
        sa.Column("digest", sa.String(64), primary_key=True),
        sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id"), nullable=False, index=True),
        sa.Column("expires_at", TIME, nullable=False),
        sa.Column("used_at", TIME),
    )
    op.create_table(
        "submissions",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id"), nullable=False, index=True),
        sa.Column("assignment", sa.String(40), nullable=False, index=True),
        sa.Column("received_at", TIME, nullable=False),
        sa.Column("late", sa.Integer, nullable=False),
        sa.Column("filename", sa.String(120), nullable=False),
        sa.Column("size", sa.Integer, nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("content", sa.LargeBinary, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("graded_at", TIME),
        sa.Column("total", sa.Float),
        sa.Column("max_total", sa.Integer),
        sa.Column("symbols", sa.Text),
        sa.Column("public_symbols", sa.Text),
        sa.Column("public_total", sa.Float),
        sa.Column("student_text", sa.Text),
        sa.Column("full_text", sa.Text),
        sa.Column("records", sa.Text),
        sa.Column("error", sa.Text),
    )
    op.create_table(
        "daily_counts",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id"), nullable=False),
        sa.Column("assignment", sa.String(40), nullable=False),
        sa.Column("day", sa.String(10), nullable=False),
        sa.Column("count", sa.Integer, nullable=False),
        sa.UniqueConstraint("user_id", "assignment", "day"),
    )
    op.create_table(
        "jobs",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("submission_id", sa.String(32), sa.ForeignKey("submissions.id"), nullable=False, unique=True),
        sa.Column("state", sa.String(16), nullable=False, index=True),
        sa.Column("claimed_by", sa.String(100)),
        sa.Column("claimed_at", TIME),
        sa.Column("attempts", sa.Integer, nullable=False),
    )


def downgrade() -> None:
    for table in ("jobs", "daily_counts", "submissions", "signin_tokens", "users", "portal_meta"):
        op.drop_table(table)
