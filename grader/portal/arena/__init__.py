"""The arena: engines and their versions, each version's check, SPRT tests between two
versions, the game jobs' queue and leases, playing a job's games live, and ``client``, the
command line's client of the arena's API. No page: theirs are in ``grader.portal.pages.arena``."""
