"""Teams: students who submit together to an assignment, at most one team each, and their invitations.

Revision ID: 0016
Revises: 0015
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None

WHEN = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "teams",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("assignment", sa.String(40), nullable=False, index=True),
        sa.Column("name", sa.String(60), nullable=False),
        sa.Column("created_at", WHEN, nullable=False),
        sa.UniqueConstraint("assignment", "name"),
    )
    op.create_table(
        "team_members",
        sa.Column("team_id", sa.Integer, sa.ForeignKey("teams.id"), primary_key=True),
        sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id"), primary_key=True),
        sa.Column("assignment", sa.String(40), nullable=False),
        sa.Column("joined_at", WHEN, nullable=False),
        sa.UniqueConstraint("assignment", "user_id"),
    )
    op.create_table(
        "team_invites",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("assignment", sa.String(40), nullable=False, index=True),
        sa.Column("from_user", sa.Integer, sa.ForeignKey("users.id"), nullable=False),
        sa.Column("to_user", sa.Integer, sa.ForeignKey("users.id"), nullable=False, index=True),
        sa.Column("created_at", WHEN, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("team_invites")
    op.drop_table("team_members")
    op.drop_table("teams")
