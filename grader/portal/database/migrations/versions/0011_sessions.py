"""Sessions on the server: a row per signed-in browser, the cookie's random id kept as its SHA-256;
a failed sign-in's client, for the limits per address and client and per client.

Revision ID: 0011
Revises: 0010
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

WHEN = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "web_sessions",
        sa.Column("digest", sa.String(64), primary_key=True),
        sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id"), nullable=False, index=True),
        sa.Column("created_at", WHEN, nullable=False),
        sa.Column("last_seen_at", WHEN, nullable=False),
        sa.Column("client", sa.String(64), nullable=False),
        sa.Column("last_client", sa.String(64), nullable=False),
        sa.Column("user_agent", sa.String(200), nullable=False),
    )
    with op.batch_alter_table("signin_failures") as batch:
        batch.add_column(sa.Column("client", sa.String(64), nullable=False, server_default=""))
        batch.create_index("ix_signin_failures_client", ["client"])


def downgrade() -> None:
    with op.batch_alter_table("signin_failures") as batch:
        batch.drop_index("ix_signin_failures_client")
        batch.drop_column("client")
    op.drop_table("web_sessions")
