"""Alembic's environment: the connection ``db.upgrade`` hands over (never a URL read from a file)."""

from __future__ import annotations

from alembic import context

from grader.portal.database.models import Base

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=Base.metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
