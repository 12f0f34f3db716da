"""``python -m grader``: the same as the ``grader`` command."""

from .cli import main

main(prog_name="grader")
