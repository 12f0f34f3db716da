"""LTI line items the tool finds or makes itself (AGS 2.0's line item service): the line
items container a launch gave (when it gave no line item), a score's container while its line
item is not known yet, and one row per assignment and container, claimed by the sender that
finds or creates the line item (a unique key: never two made by two senders at once).

Revision ID: 0021
Revises: 0020
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None

WHEN = sa.DateTime(timezone=True)


def upgrade() -> None:
    with op.batch_alter_table("lti_links") as batch:
        batch.add_column(sa.Column("lineitems", sa.Text, nullable=True))
    with op.batch_alter_table("lti_scores") as batch:
        batch.add_column(sa.Column("container", sa.Text, nullable=True))
    op.create_table(
        "lti_lineitems",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("digest", sa.String(64), nullable=False, unique=True),
        sa.Column("issuer", sa.String(300), nullable=False),
        sa.Column("client_id", sa.String(200), nullable=False),
        sa.Column("container", sa.Text, nullable=False),
        sa.Column("assignment", sa.String(40), nullable=False),
        sa.Column("url", sa.Text, nullable=True),
        sa.Column("claimed_at", WHEN, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("lti_lineitems")
    with op.batch_alter_table("lti_scores") as batch:
        batch.drop_column("container")
    with op.batch_alter_table("lti_links") as batch:
        batch.drop_column("lineitems")
