"""Grading submissions: the queue of grading jobs with their leases, the grading of one
submission (a script on its plan, a GTP program on its regression file), and the worker
threads that claim both kinds of jobs, grading and the arena's games. No page."""
