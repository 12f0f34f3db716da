"""A grading's progress: the tests done of how many, kept on its job while a worker grades it.

Revision ID: 0015
Revises: 0014
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("jobs") as batch:
        batch.add_column(sa.Column("tests_done", sa.Integer, nullable=True))
        batch.add_column(sa.Column("tests_total", sa.Integer, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("jobs") as batch:
        batch.drop_column("tests_total")
        batch.drop_column("tests_done")
