"""Users whose name and role the roster or course.yaml gave (an LTI launch never rewrites them).

Revision ID: 0010
Revises: 0009
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # ALTER TABLE ... ADD COLUMN on both (a batch would copy users, which other tables' keys point at)
    op.add_column("users", sa.Column("rostered", sa.Boolean, nullable=False, server_default=sa.false()))
    # a user no launch ever linked came from the roster or course.yaml; a launch's own are found
    # again by the roster and course.yaml at the next start (sync), which mark theirs
    users = sa.table("users", sa.column("id", sa.Integer), sa.column("rostered", sa.Boolean))
    linked = sa.select(sa.table("lti_identities", sa.column("user_id", sa.Integer)).c.user_id)
    op.execute(users.update().where(users.c.id.not_in(linked)).values(rostered=True))


def downgrade() -> None:
    op.drop_column("users", "rostered")  # SQLite 3.35 or newer
