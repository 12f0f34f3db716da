"""Ctrl-C or SIGTERM at any moment of a class run: it always ends with the exports of what
finished and the line that resumes it, never click's bare 'Aborted!' or a traceback.

The signal is sent at 30 points spread over a whole run (each with a random jitter, from a
seed printed on failure): while the first line is printed, while tests run, while records
are written, while the exports are written, after the last test. Every fourth point is in the
quick suite; the slow set (``-m slow``) has them all.
"""

import csv
import io
import json
import random
import shutil
import signal
import subprocess
import sys
import time

import pytest

from conftest import ROOT

TRIALS = 30
SEED = random.randrange(10**6)
RUN_SECONDS = 2.0  # about how long the run below takes here after its first line


def start_class(where, out: str) -> subprocess.Popen:
    klass = where / "class"
    if not klass.exists():
        klass.mkdir()
        for name in ("ann", "ben", "cyd"):
            shutil.copy(ROOT / "submissions" / "negamax.py", klass / f"{name}.py")
        (klass / "dan.py").write_text("import time\ntime.sleep(0.15)\nprint('My move is 51')\n")
        fixed = [line.split("#")[0].strip() for line in (ROOT / "fixtures" / "standard.txt").read_text().splitlines()]
        (where / "b.txt").write_text("\n".join([line for line in fixed if line][:6]) + "\n")
    return subprocess.Popen(
        [sys.executable, "-m", "grader", "grade", "class", "--boards", "b.txt", "--jobs", "2", "--out", out],
        cwd=where, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


@pytest.mark.parametrize("trial", [t if t % 8 == 0 else pytest.param(t, marks=pytest.mark.slow) for t in range(TRIALS)])
def test_a_signal_at_any_moment_ends_with_exports_and_the_resume_line(tmp_path, trial):
    rng = random.Random(SEED * 100 + trial)
    sig = signal.SIGTERM if trial % 5 == 4 else signal.SIGINT
    delay = (trial + rng.random()) * RUN_SECONDS / TRIALS
    proc = start_class(tmp_path, "run")
    first = proc.stdout.readline()  # the run has begun: 'Grading 4 students: ...'
    time.sleep(delay)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)
    out = first + out
    where = f"seed {SEED}, trial {trial}, {sig.name} {delay:.2f} s after the first line\n{out}{err}"
    assert "Aborted!" not in out + err and "Traceback" not in out + err, where
    assert proc.returncode in (0, 128 + sig), where  # 130 for SIGINT, 143 for SIGTERM
    run = tmp_path / "run"
    for name in ("grades.csv", "results.json", "junit.xml", "report.html"):
        assert (run / name).is_file(), where
    rows = list(csv.DictReader(io.StringIO((run / "grades.csv").read_text())))
    assert [r["name"] for r in rows] == ["ann", "ben", "cyd", "dan"], where
    records = run / "tests.jsonl"  # made at the first record
    recorded = sum(1 for line in records.read_text().splitlines() if line.strip()) if records.exists() else 0
    exported = sum(len(s["tests"]) for s in json.loads((run / "results.json").read_text())["scripts"])
    assert exported == recorded, where  # the exports hold exactly what finished
    if proc.returncode:
        reason = "Interrupted (Ctrl-C)" if sig == signal.SIGINT else "Interrupted (SIGTERM)"
        assert out.splitlines()[-1] == f"{reason}: continue with  grader grade --resume run", where
        assert any(r["complete"] == "no" for r in rows) or recorded == 24, where
    else:  # the signal came once every test was done
        assert recorded == 24 and all(r["complete"] == "yes" for r in rows), where
