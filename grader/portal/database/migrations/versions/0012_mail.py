"""E-mail: the outbox, the kinds of mail each person turned off, the requests for a sign-in link.

Revision ID: 0012
Revises: 0011
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None

WHEN = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "mail_outbox",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id"), nullable=True, index=True),
        sa.Column("to_address", sa.String(320), nullable=False),
        sa.Column("subject", sa.String(200), nullable=False),
        sa.Column("body", sa.Text, nullable=False),
        sa.Column("state", sa.String(16), nullable=False, index=True),
        sa.Column("created_at", WHEN, nullable=False),
        sa.Column("next_at", WHEN, nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("last_error", sa.Text, nullable=True),
        sa.Column("sent_at", WHEN, nullable=True),
        sa.Column("lease_token", sa.String(32), nullable=True),
        sa.Column("lease_until", WHEN, nullable=True),
    )
    op.create_table(
        "mail_optouts",
        sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id"), primary_key=True),
        sa.Column("kind", sa.String(16), primary_key=True),
    )
    op.create_table(
        "mail_link_requests",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("email", sa.String(320), nullable=False, index=True),
        sa.Column("client", sa.String(64), nullable=False, index=True),
        sa.Column("at", WHEN, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("mail_link_requests")
    op.drop_table("mail_optouts")
    op.drop_table("mail_outbox")
