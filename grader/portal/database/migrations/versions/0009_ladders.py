"""Ladders: each ladder's key and deadline tournament, its entries, and its games (arena games).

Revision ID: 0009
Revises: 0008
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

WHEN = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "ladders",
        sa.Column("name", sa.String(40), primary_key=True),
        sa.Column("alias_key", sa.String(32), nullable=False),
        sa.Column("created_at", WHEN, nullable=False),
        sa.Column("deadline_at", WHEN, nullable=True),
        sa.Column("deadline_versions", sa.Text, nullable=True),
    )
    op.create_table(
        "ladder_entries",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("ladder", sa.String(40), sa.ForeignKey("ladders.name"), nullable=False, index=True),
        sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id"), nullable=False),
        sa.Column("engine_id", sa.Integer, sa.ForeignKey("arena_engines.id"), nullable=False),
        sa.Column("alias", sa.String(80), nullable=False),
        sa.Column("joined_at", WHEN, nullable=False),
        sa.UniqueConstraint("ladder", "user_id"),
    )
    op.create_table(
        "ladder_games",
        sa.Column("game_id", sa.Integer, sa.ForeignKey("arena_games.id"), primary_key=True),
        sa.Column("ladder", sa.String(40), sa.ForeignKey("ladders.name"), nullable=False, index=True),
        sa.Column("stage", sa.String(16), nullable=False),
    )


def downgrade() -> None:
    for table in ("ladder_games", "ladder_entries", "ladders"):
        op.drop_table(table)
