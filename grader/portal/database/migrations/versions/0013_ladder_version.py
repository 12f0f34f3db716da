"""A ladder entry's chosen version: the checked version of its engine its author picked to play
(NULL: the engine's latest checked version, as before).

Revision ID: 0013
Revises: 0012
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("ladder_entries") as batch:
        batch.add_column(sa.Column("version_id", sa.Integer, nullable=True))
        batch.create_foreign_key("fk_ladder_entries_version_id", "engine_versions", ["version_id"], ["id"])


def downgrade() -> None:
    with op.batch_alter_table("ladder_entries") as batch:
        batch.drop_constraint("fk_ladder_entries_version_id", type_="foreignkey")
        batch.drop_column("version_id")
