"""The database, the portal's ground floor: connecting (SQLite or PostgreSQL), every table
(``models``: people, submissions, jobs; ``arena``, ``ladders``, ``lti``: theirs), the
leases that hold a job for one worker, and the Alembic migrations that make the tables.
It imports nothing else of the portal."""
