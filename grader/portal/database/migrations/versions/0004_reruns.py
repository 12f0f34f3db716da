"""Reruns: the plan a submission was graded on, and the result a rerun replaced, with why.

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

COLUMNS = (
    ("plan_digest", sa.String(64)),
    ("previous_total", sa.Float),
    ("previous_max_total", sa.Integer),
    ("previous_symbols", sa.Text),
    ("previous_public_symbols", sa.Text),
    ("previous_public_total", sa.Float),
    ("change_reason", sa.Text),
)


def upgrade() -> None:
    with op.batch_alter_table("submissions") as table:
        for name, kind in COLUMNS:
            table.add_column(sa.Column(name, kind, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("submissions") as table:
        for name, _ in reversed(COLUMNS):
            table.drop_column(name)
