"""Grading runs: plans, the judge, results (the dataclasses, at the bottom of this package),
run folders and their seals, submissions, reports and exports, Gradescope, check and rejudge.
Imports execution, engines, config, games and the ground floor."""
