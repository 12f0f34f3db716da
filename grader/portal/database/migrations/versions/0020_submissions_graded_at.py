"""An index on submissions.graded_at: the queue's estimate reads the pace of the latest gradings
(the newest graded_at first) at each page that shows a submission waiting.

Revision ID: 0020
Revises: 0019
"""

from __future__ import annotations

from alembic import op

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_submissions_graded_at", "submissions", ["graded_at"])


def downgrade() -> None:
    op.drop_index("ix_submissions_graded_at", table_name="submissions")
