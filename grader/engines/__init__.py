"""One untrusted program at a time: running it under limits (runner), what it can see (isolation),
its staged files and a run on a position (scripts), reading its output (parse). Imports games and
the ground floor only."""
