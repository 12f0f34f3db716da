"""The portal's Alembic migrations (``db.upgrade`` runs them: the app upgrades to head at start)."""
