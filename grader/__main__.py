"""``python -m grader`` and the ``grader`` command: the CLI, imported once Ctrl-C can be
answered in one line (a Ctrl-C while Python loads it had printed a traceback)."""

from __future__ import annotations

import sys

from .stop import STARTING


def main() -> None:
    """Run the ``grader`` command. Ctrl-C while it loads ends in one line, exit status 130."""
    try:
        from .cli import main as cli  # here, not above: the import is what a Ctrl-C may interrupt
    except KeyboardInterrupt:
        sys.stderr.write(STARTING + "\n")
        raise SystemExit(130) from None
    cli(prog_name="grader")


if __name__ == "__main__":
    main()
