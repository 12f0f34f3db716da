"""One untrusted program at a time: running it under limits (runner), what it can see (isolation),
its staged files and a run on a position (scripts), reading its output (parse), the protocols a
program may speak for a whole game (nboard, gtp) and players (players). Imports games and the
ground floor only."""

PROTOCOLS = ("nboard", "gtp")  # what a protocol engine may speak (config.yaml's engines: checks it)
