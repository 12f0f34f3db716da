"""LTI 1.3: the tool's keys, logins begun, platform users, resource links, scores sent back.

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

WHEN = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "lti_keys",
        sa.Column("kid", sa.String(64), primary_key=True),
        sa.Column("private_pem", sa.Text, nullable=False),
        sa.Column("created_at", WHEN, nullable=False),
        sa.Column("retired_at", WHEN, nullable=True),
    )
    op.create_table(
        "lti_logins",
        sa.Column("state", sa.String(64), primary_key=True),
        sa.Column("nonce", sa.String(64), nullable=False, unique=True),
        sa.Column("issuer", sa.String(300), nullable=False),
        sa.Column("client_id", sa.String(200), nullable=False),
        sa.Column("created_at", WHEN, nullable=False),
        sa.Column("used_at", WHEN, nullable=True),
    )
    op.create_table(
        "lti_identities",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("issuer", sa.String(300), nullable=False),
        sa.Column("sub", sa.String(255), nullable=False),
        sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id"), nullable=False, index=True),
        sa.UniqueConstraint("issuer", "sub"),
    )
    op.create_table(
        "lti_links",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("issuer", sa.String(300), nullable=False),
        sa.Column("client_id", sa.String(200), nullable=False),
        sa.Column("resource_link_id", sa.String(255), nullable=False),
        sa.Column("assignment", sa.String(40), nullable=True, index=True),
        sa.Column("lineitem", sa.Text, nullable=True),
        sa.UniqueConstraint("issuer", "resource_link_id"),
    )
    op.create_table(
        "lti_scores",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("submission_id", sa.String(32), sa.ForeignKey("submissions.id"), nullable=False, index=True),
        sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id"), nullable=False),
        sa.Column("assignment", sa.String(40), nullable=False),
        sa.Column("issuer", sa.String(300), nullable=False),
        sa.Column("client_id", sa.String(200), nullable=False),
        sa.Column("lineitem", sa.Text, nullable=False),
        sa.Column("user_sub", sa.String(255), nullable=False),
        sa.Column("score_given", sa.Float, nullable=True),
        sa.Column("score_maximum", sa.Integer, nullable=False),
        sa.Column("reason", sa.String(40), nullable=False),
        sa.Column("status", sa.String(16), nullable=False, index=True),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("last_error", sa.Text, nullable=True),
        sa.Column("created_at", WHEN, nullable=False),
        sa.Column("next_at", WHEN, nullable=False),
        sa.Column("sent_at", WHEN, nullable=True),
    )


def downgrade() -> None:
    for table in ("lti_scores", "lti_links", "lti_identities", "lti_logins", "lti_keys"):
        op.drop_table(table)
