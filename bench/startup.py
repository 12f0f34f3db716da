"""Start-up benchmark: how soon the grader answers, against the 0.25 s target.

Run: python bench/startup.py [--runs 7]
Prints the median and best wall time of each, over --runs runs:
  1. python -c pass (the interpreter alone: what no change to the grader can save), and
     python importing click and yaml (the floor of a command that reads config.yaml; check's
     start also holds the probe's own interpreter start);
  2. grader --version and grader --help (they import no command);
  3. grader check's start: from the command to its first script running (a probe script,
     run without isolation, writes the moment it starts);
  4. the import of each command's module (python -X importtime), the biggest first.
Figures on a loaded machine are high and noisy: compare them with line 1.
Every figure is taken with the package's bytecode cached, as after 'pip install' (which
compiles it) or any earlier run: PYTHONDONTWRITEBYTECODE is dropped for the runs, and one run
of each command before the timed ones writes what was missing (compiling the sources again at
each start would cost more than the whole start).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET = 0.25  # seconds
ROOT = Path(__file__).resolve().parents[1]
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # bytecode cached, as installed


def timed(argv: list[str], runs: int, cwd: Path | None = None) -> list[float]:
    """Wall seconds of each of ``runs`` runs of ``argv`` (its output thrown away)."""
    out = []
    for i in range(runs + 1):  # the first, untimed, writes the bytecode that is missing
        start = time.perf_counter()
        subprocess.run(argv, cwd=cwd, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        if i:
            out.append(time.perf_counter() - start)
    return out


def check_start(runs: int) -> list[float]:
    """Seconds from 'grader check PROBE' to the probe script's start, each run."""
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp)
        stamp = where / "started"
        (where / "probe.py").write_text(f"import time\nopen({str(stamp)!r}, 'a').write(f'{{time.time()}}\\n')\n"
                                        "print('My move is 51')\n")  # fmt: skip
        (where / "config.yaml").write_text("isolation: none  # the probe writes outside a sandbox\n")
        for i in range(runs + 1):  # the first, untimed, writes the bytecode that is missing
            stamp.unlink(missing_ok=True)
            start = time.time()
            subprocess.run([sys.executable, "-m", "grader", "check", "probe.py"], cwd=where, env=ENV,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)  # fmt: skip
            if i and stamp.exists():
                out.append(float(stamp.read_text().split()[0]) - start)
    return out


def imports() -> list[tuple[str, float]]:
    """Seconds to import each command module (with what it needs), the biggest first."""
    from grader.cli import COMMANDS

    found = []
    for module in sorted({m for m, _, _ in COMMANDS.values()}):
        argv = [sys.executable, "-X", "importtime", "-c", f"import grader.cli.{module}"]
        subprocess.run(argv, env=ENV, capture_output=True, check=False)  # the bytecode, as installed
        done = subprocess.run(argv, env=ENV, capture_output=True, text=True, check=False)
        line = re.search(rf"\|\s*(\d+) \| +grader\.cli\.{module}$", done.stderr, re.MULTILINE)
        if line:
            found.append((f"grader.cli.{module}", int(line.group(1)) / 1e6))
    return sorted(found, key=lambda f: -f[1])


def show(what: str, seconds: list[float]) -> None:
    if not seconds:
        print(f"{what:<28} no figure")
        return
    median = statistics.median(seconds)
    mark = "" if what.startswith("python") else ("  ok" if median < TARGET else f"  over {TARGET} s")
    print(f"{what:<28} median {median:.3f} s  best {min(seconds):.3f} s{mark}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    grader = [sys.executable, "-m", "grader"]
    show("python -c pass", timed([sys.executable, "-c", "pass"], args.runs))
    show("python: import click, yaml", timed([sys.executable, "-c", "import click, yaml"], args.runs))
    show("grader --version", timed([*grader, "--version"], args.runs))
    show("grader --help", timed([*grader, "--help"], args.runs))
    show("grader check (to its start)", check_start(args.runs))
    print("imports of each command's module (one run each):")
    for module, seconds in imports():
        print(f"  {module:<26} {seconds:.3f} s")


if __name__ == "__main__":
    main()
