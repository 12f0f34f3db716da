"""``python -m grader`` and the ``grader`` command: the CLI, imported once Ctrl-C can be
answered in one line (a Ctrl-C while Python loads it had printed a traceback)."""

from __future__ import annotations

import sys

from .stop import STARTING, exit_status, install, interrupt_reason, signal_point


def main() -> None:
    """Run the ``grader`` command. SIGINT and SIGTERM are answered from here on, SIGINT even
    when it came ignored (a background job of a script had lost it while the grader loaded,
    and answered it once a run began). Ctrl-C while it loads ends in one line, exit status
    130 (SIGTERM: 143)."""
    install()
    try:
        signal_point("start")
        from .cli import main as cli  # here, not above: the import is what a Ctrl-C may interrupt
    except KeyboardInterrupt as e:
        sys.stderr.write(STARTING.replace("(Ctrl-C)", interrupt_reason(e)[len("interrupted ") :]) + "\n")
        raise SystemExit(exit_status(interrupt_reason(e))) from None
    cli(prog_name="grader")


if __name__ == "__main__":
    main()
