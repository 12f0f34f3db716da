"""The arena: engines and their versions, SPRT tests, their games, the queue of game jobs, and
users' API tokens (hashed).

Revision ID: 0008
Revises: 0007
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

WHEN = sa.DateTime(timezone=True)


def _lease() -> list[sa.Column]:
    return [
        sa.Column("state", sa.String(16), nullable=False, index=True),
        sa.Column("claimed_by", sa.String(100), nullable=True),
        sa.Column("claimed_at", WHEN, nullable=True),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("lease_token", sa.String(32), nullable=True),
        sa.Column("lease_until", WHEN, nullable=True),
    ]


def upgrade() -> None:
    op.create_table(
        "arena_engines",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("owner_id", sa.Integer, sa.ForeignKey("users.id"), nullable=False, index=True),
        sa.Column("name", sa.String(60), nullable=False),
        sa.Column("protocol", sa.String(16), nullable=False),
        sa.Column("game", sa.String(40), nullable=False),
        sa.Column("open", sa.Integer, nullable=False),
        sa.Column("created_at", WHEN, nullable=False),
        sa.UniqueConstraint("owner_id", "name"),
    )
    op.create_table(
        "engine_versions",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("engine_id", sa.Integer, sa.ForeignKey("arena_engines.id"), nullable=False, index=True),
        sa.Column("number", sa.Integer, nullable=False),
        sa.Column("label", sa.String(60), nullable=False),
        sa.Column("filename", sa.String(120), nullable=False),
        sa.Column("size", sa.Integer, nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("content", sa.LargeBinary, nullable=False),
        sa.Column("command", sa.String(300), nullable=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("message", sa.Text, nullable=True),
        sa.Column("check_game", sa.Text, nullable=True),
        sa.Column("uploaded_at", WHEN, nullable=False),
        sa.Column("checked_at", WHEN, nullable=True),
        sa.UniqueConstraint("engine_id", "number"),
    )
    op.create_table(
        "arena_tests",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("owner_id", sa.Integer, sa.ForeignKey("users.id"), nullable=False, index=True),
        sa.Column("engine_id", sa.Integer, sa.ForeignKey("arena_engines.id"), nullable=False, index=True),
        sa.Column("new_id", sa.Integer, sa.ForeignKey("engine_versions.id"), nullable=False),
        sa.Column("base_id", sa.Integer, sa.ForeignKey("engine_versions.id"), nullable=False),
        sa.Column("game", sa.String(40), nullable=False),
        sa.Column("tc_seconds", sa.Float, nullable=False),
        sa.Column("tc_increment", sa.Float, nullable=False),
        sa.Column("openings", sa.Text, nullable=False),
        sa.Column("openings_name", sa.String(120), nullable=False),
        sa.Column("elo0", sa.Float, nullable=False),
        sa.Column("elo1", sa.Float, nullable=False),
        sa.Column("alpha", sa.Float, nullable=False),
        sa.Column("beta", sa.Float, nullable=False),
        sa.Column("model", sa.String(16), nullable=False),
        sa.Column("max_games", sa.Integer, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("pairs_queued", sa.Integer, nullable=False),
        *[sa.Column(n, sa.Integer, nullable=False) for n in ("ll", "ld", "dd", "wd", "ww", "wins", "draws", "losses")],
        sa.Column("llr", sa.Float, nullable=False),
        sa.Column("created_at", WHEN, nullable=False),
        sa.Column("finished_at", WHEN, nullable=True),
    )
    op.create_table(
        "game_jobs",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("version_id", sa.Integer, sa.ForeignKey("engine_versions.id"), nullable=True),
        sa.Column("priority", sa.Integer, nullable=False),
        *_lease(),
        sa.Column("created_at", WHEN, nullable=False),
    )
    op.create_table(
        "arena_games",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("test_id", sa.String(32), sa.ForeignKey("arena_tests.id"), nullable=True, index=True),
        sa.Column("job_id", sa.Integer, sa.ForeignKey("game_jobs.id"), nullable=True, index=True),
        sa.Column("pair", sa.Integer, nullable=False),
        sa.Column("black_id", sa.Integer, sa.ForeignKey("engine_versions.id"), nullable=False, index=True),
        sa.Column("white_id", sa.Integer, sa.ForeignKey("engine_versions.id"), nullable=False, index=True),
        sa.Column("opening", sa.Text, nullable=False),
        sa.Column("tc_seconds", sa.Float, nullable=True),
        sa.Column("tc_increment", sa.Float, nullable=True),
        sa.Column("status", sa.String(16), nullable=False, index=True),
        sa.Column("lease_token", sa.String(32), nullable=True),
        sa.Column("played_by", sa.String(100), nullable=True),
        sa.Column("moves", sa.Text, nullable=False),
        sa.Column("clocks", sa.Text, nullable=False),
        sa.Column("evals", sa.Text, nullable=False),
        sa.Column("result", sa.String(8), nullable=False),
        sa.Column("reason", sa.String(16), nullable=False),
        sa.Column("cause", sa.Text, nullable=True),
        sa.Column("record", sa.Text, nullable=True),
        sa.Column("started_at", WHEN, nullable=True),
        sa.Column("finished_at", WHEN, nullable=True),
    )
    op.create_table(
        "api_tokens",
        sa.Column("digest", sa.String(64), primary_key=True),
        sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id"), nullable=False, index=True),
        sa.Column("label", sa.String(60), nullable=False),
        sa.Column("created_at", WHEN, nullable=False),
        sa.Column("used_at", WHEN, nullable=True),
    )


def downgrade() -> None:
    for table in ("api_tokens", "arena_games", "game_jobs", "arena_tests", "engine_versions", "arena_engines"):
        op.drop_table(table)
