"""Hand grading: the rubric items applied to a submission, comments on its lines, and the
assignments whose hand grading is released.

Revision ID: 0017
Revises: 0016
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "hand_grades",
        sa.Column("submission_id", sa.String(32), sa.ForeignKey("submissions.id"), primary_key=True),
        sa.Column("items", sa.Text, nullable=False),
        sa.Column("graded_by", sa.Integer, sa.ForeignKey("users.id"), nullable=False),
        sa.Column("graded_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "hand_comments",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("submission_id", sa.String(32), sa.ForeignKey("submissions.id"), nullable=False),
        sa.Column("path", sa.String(300), nullable=False),
        sa.Column("line", sa.Integer, nullable=False),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("written_by", sa.Integer, sa.ForeignKey("users.id"), nullable=False),
        sa.Column("written_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_hand_comments_submission_id", "hand_comments", ["submission_id"])
    op.create_table(
        "hand_releases",
        sa.Column("assignment", sa.String(40), primary_key=True),
        sa.Column("released_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("released_by", sa.Integer, sa.ForeignKey("users.id"), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("hand_releases")
    op.drop_index("ix_hand_comments_submission_id", "hand_comments")
    op.drop_table("hand_comments")
    op.drop_table("hand_grades")
