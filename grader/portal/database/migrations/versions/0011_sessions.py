"""Sessions on the server: a row per signed-in browser, the cookie's random id kept as its SHA-256.

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


def downgrade() -> None:
    op.drop_table("web_sessions")
