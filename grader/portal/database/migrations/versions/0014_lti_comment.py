"""A score sent to an LTI platform carries a comment: how the late policy made it (days late,
late days spent, the penalty, the extension).

Revision ID: 0014
Revises: 0013
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("lti_scores") as batch:
        batch.add_column(sa.Column("comment", sa.Text, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("lti_scores") as batch:
        batch.drop_column("comment")
