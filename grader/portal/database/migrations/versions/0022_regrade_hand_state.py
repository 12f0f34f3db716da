"""A regrade request keeps its submission's hand grading as it was when asked (the rubric items
applied with their points, the hand total, the line comments' ids; JSON), so that an answer by a
change of hand grading says what changed, before and after. Requests made before have none
(NULL): they are answered as before, by what changed since they were asked.

Revision ID: 0022
Revises: 0021
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0022"
down_revision = "0021"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("regrade_requests") as batch:
        batch.add_column(sa.Column("hand_asked", sa.Text, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("regrade_requests") as batch:
        batch.drop_column("hand_asked")
