"""Stop benchmark: how long each long computation takes to end after Ctrl-C or SIGTERM.

Run: python bench/signals.py [--wait 3]
Starts each command on a position of 26 empties (FFO #39, about 16 s of exact solving),
sends SIGINT and then (in a second run) SIGTERM --wait seconds later, and prints the seconds
until the process ended and its exit status, against the 1 s target:
  prove (in the solver), solve, grade (the judge's solver), a class, a tournament.
Figures on a loaded machine are high and noisy.
"""

from __future__ import annotations

import argparse
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET = 1.0  # seconds
FFO39 = next(line for line in (ROOT / "fixtures" / "ffo-endgames.txt").read_text().splitlines()
             if line.startswith("39|")).split("|")  # fmt: skip
DEEP = f"{FFO39[1].lower().replace('-', '.')} {FFO39[2].lower()}"
GREEDY = str(ROOT / "submissions" / "greedy.py")
NEGAMAX = str(ROOT / "submissions" / "negamax.py")

COMMANDS = {
    "prove": ["prove", GREEDY, "--from", *DEEP.split(), "--as", DEEP.split()[1], "--max-seconds", "86400"],
    "solve": ["solve", *DEEP.split()],
    "grade (judge)": ["grade", GREEDY, "--boards", "deep.txt"],
    "class": ["grade", "class", "--boards", "deep.txt", "--out", "run"],
    "tournament": ["tournament", NEGAMAX, "builtin:greedy", "--rounds", "20", "--out", "t"],
}


def stop_seconds(args: list[str], sig: int, wait: float) -> tuple[float, int | None]:
    """Seconds from ``sig`` to the end of ``grader ARGS`` started ``wait`` seconds before, and its status."""
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp)
        (where / "deep.txt").write_text(DEEP + "\n")
        (where / "config.yaml").write_text("max_solve_seconds: 86400\n")
        (where / "class").mkdir()
        for name in ("ann", "ben"):
            shutil.copy(GREEDY, where / "class" / f"{name}.py")
        proc = subprocess.Popen([sys.executable, "-m", "grader", *args], cwd=where, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)  # fmt: skip
        time.sleep(wait)
        if proc.poll() is not None:
            return float("nan"), proc.returncode
        sent = time.monotonic()
        proc.send_signal(sig)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            return float("inf"), None
        return time.monotonic() - sent, proc.returncode


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--wait", type=float, default=3.0, help="seconds of work before the signal (default 3)")
    args = ap.parse_args()
    for name, argv in COMMANDS.items():
        for sig in (signal.SIGINT, signal.SIGTERM):
            seconds, status = stop_seconds(argv, sig, args.wait)
            mark = "ok" if seconds <= TARGET else f"over {TARGET:g} s"
            print(f"{name:<14} {sig.name:<8} stopped in {seconds:.2f} s, exit status {status}  {mark}")


if __name__ == "__main__":
    main()
