"""LTI Names and Role Provisioning Services and Dynamic Registration: the platforms' courses
whose rosters are read, their members, the platforms registered dynamically, and the one-time
registration links instructors make.

Revision ID: 0019
Revises: 0018
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None

WHEN = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "lti_contexts",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("issuer", sa.String(300), nullable=False),
        sa.Column("client_id", sa.String(200), nullable=False),
        sa.Column("context_id", sa.String(255), nullable=False),
        sa.Column("title", sa.String(300), nullable=True),
        sa.Column("memberships_url", sa.Text, nullable=False),
        sa.Column("differences_url", sa.Text, nullable=True),
        sa.Column("synced_at", WHEN, nullable=True),
        sa.Column("last_error", sa.Text, nullable=True),
        sa.UniqueConstraint("issuer", "client_id", "context_id"),
    )
    op.create_table(
        "lti_members",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("context", sa.Integer, sa.ForeignKey("lti_contexts.id"), nullable=False, index=True),
        sa.Column("sub", sa.String(255), nullable=False),
        sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id"), nullable=True, index=True),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("changed_at", WHEN, nullable=False),
        sa.UniqueConstraint("context", "sub"),
    )
    op.create_table(
        "lti_registrations",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("issuer", sa.String(300), nullable=False),
        sa.Column("client_id", sa.String(200), nullable=False),
        sa.Column("deployment_id", sa.String(200), nullable=False),
        sa.Column("auth_login_url", sa.Text, nullable=False),
        sa.Column("token_url", sa.Text, nullable=False),
        sa.Column("jwks_url", sa.Text, nullable=False),
        sa.Column("created_by", sa.Integer, sa.ForeignKey("users.id"), nullable=True),
        sa.Column("created_at", WHEN, nullable=False),
        sa.Column("revoked_at", WHEN, nullable=True),
        sa.UniqueConstraint("issuer", "client_id"),
    )
    op.create_table(
        "lti_registration_links",
        sa.Column("digest", sa.String(64), primary_key=True),
        sa.Column("created_by", sa.Integer, sa.ForeignKey("users.id"), nullable=False),
        sa.Column("expires_at", WHEN, nullable=False),
        sa.Column("used_at", WHEN, nullable=True),
    )


def downgrade() -> None:
    for table in ("lti_registration_links", "lti_registrations", "lti_members", "lti_contexts"):
        op.drop_table(table)
