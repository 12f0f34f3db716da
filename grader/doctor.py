"""``grader doctor``: what this machine offers to keep scripts in their place, and proof.

It reports each isolation mechanism (works, or why not), the one 'auto' picks, the Python
used, the limits the system can enforce and what of fair CPU it enforces; then it runs a real attacking script
(``share/attacks/probe.py``) under the chosen isolation, next to a victim test, and reports
each attack as blocked or not.
"""

from __future__ import annotations

import json
import os
import platform
import secrets
import shutil
import socket
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from .engines import fairness
from .engines.cgroups import Cgroup
from .engines.interpreters import find_interpreter
from .engines.isolation import MECHANISMS, choose, problem
from .engines.leftovers import work_folder
from .engines.runner import RunResult
from .engines.sandbox import native_launcher
from .engines.scripts import RunSettings, Script, run_script
from .execution.executor import LocalExecutor, Worker
from .files import bundled
from .games import DEFAULT, get_game
from .limits import Limits
from .runs.seals import keys_dir
from .version import __version__

ATTACKS = {  # category -> what it tries
    "files": "read or write the run folder, the config, plans, other students' scripts, the keys",
    "see": "see the grader through /proc",
    "processes": "read or signal the grader or other tests through /proc",
    "tmp": "read another test's temporary directory",
    "network": "reach the network",
    "linger": "keep running after its test",
    "root": "run as root",
}


@dataclass(frozen=True)
class Attack:
    """One kind of attack, and what of it got through (nothing: blocked)."""

    category: str
    got_through: list[str]

    @property
    def blocked(self) -> bool:
        return not self.got_through


@dataclass
class Diagnosis:
    """What ``grader doctor`` found."""

    version: str
    python: str
    user: str
    mechanisms: dict[str, str | None]  # mechanism -> why it does not work (None: it works)
    isolation: str  # what the configured isolation resolves to here
    limits: list[str]  # what the system can enforce, in words
    attacks: list[Attack] = field(default_factory=list)
    fair_cpu: list[str] = field(default_factory=list)  # what of fair CPU is enforced, a line each
    fair_cpu_missing: str | None = None  # what is not, in one line (None: all is)

    @property
    def safe(self) -> bool:
        return self.isolation != "none" and all(a.blocked for a in self.attacks)


def diagnose(isolation: str = "auto", python: str = sys.executable, attacks: bool = True) -> Diagnosis:
    """Check the mechanisms, then (``attacks``) run the attacking script under the one chosen."""
    mechanisms = {m: problem(m, python) for m in MECHANISMS}
    chosen = choose(isolation, python)
    user = "root" if os.geteuid() == 0 else f"uid {os.geteuid()}"
    found = Diagnosis(__version__, python, user, mechanisms, chosen, _limits())
    found.fair_cpu, found.fair_cpu_missing = fairness.support().lines(), fairness.support().missing()
    if attacks:
        found.attacks = _attack(chosen, python)
    return found


def _limits() -> list[str]:
    out = ["resource limits (memory, CPU time, file size, core dumps): yes"]
    cgroup = Cgroup.find_base() is not None
    if os.geteuid() == 0:
        out.append("processes: a uid of its own per job slot (RLIMIT_NPROC)"
                   + (" and a pids cgroup (v1)" if cgroup else "; no writable pids cgroup"))  # fmt: skip
    else:
        out.append("processes: RLIMIT_NPROC over the user's processes")
    if native_launcher() is not None:
        out.append("starting scripts: the C launcher (grader-launch), never a fork of the grader")
    else:
        out.append("starting scripts: the Python launcher (grader-launch was not built: about 15 ms more per run; "
                   "install a C compiler and reinstall grader)")  # fmt: skip
    return out


@dataclass(frozen=True)
class _Attacker:
    """A task: the probe or the victim, run like a test on a worker of the executor."""

    script: Script
    settings: RunSettings

    def __call__(self, worker: Worker) -> RunResult:
        return run_script(self.script, get_game(DEFAULT).start(), self.settings, worker)[0]


def _bundle(name: str, extra: dict[str, bytes]) -> Script:
    files = {name: bundled("attacks", name).read_bytes(), **extra}
    return Script(name, files, frozenset(), name, secrets.token_hex(32))


def _attack(mechanism: str, python: str) -> list[Attack]:
    secret = secrets.token_hex(8)
    work = Path(work_folder("grader-doctor-"))  # 0700, named after this grader: swept if it is killed
    listener = socket.socket()
    try:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        files = [
            work / "run",
            work / "run" / "tests.jsonl",
            work / "config.yaml",
            work / "class" / "bob.py",
            keys_dir(),
        ]
        (work / "run").mkdir()
        (work / "class").mkdir()
        for f in files[1:4]:
            f.write_text(f"secret {secret}\n")
        targets = {"files": [str(f) for f in files], "port": listener.getsockname()[1], "grader_pid": os.getpid(),
                   "secret": secret}  # fmt: skip
        settings = RunSettings(Limits(wall_seconds=10), mechanism, python)
        with LocalExecutor(2) as ex:
            ex.submit("victim", _Attacker(_bundle("victim.py", {"secret.txt": secret.encode()}), settings))
            time.sleep(0.5)  # the victim's secret is in place
            ex.submit("probe", _Attacker(_bundle("probe.py", {"targets.json": json.dumps(targets).encode()}), settings))
            outcomes = dict(ex.results())
        got = _report(outcomes["probe"])
        got["linger"] = [f"pid {p} still running" for p in _lingering(secret)]
        return [Attack(category, got.get(category, [])) for category in ATTACKS]
    finally:
        listener.close()
        shutil.rmtree(work, ignore_errors=True)


def _report(result: RunResult) -> dict[str, list[str]]:
    for line in result.stdout_tail.splitlines():
        if line.startswith("{"):
            return json.loads(line)
    return {
        "files": [f"the probe did not report ({result.describe() or 'no output'}): {result.stderr_tail.strip()[-200:]}"]
    }


def _lingering(secret: str) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/cmdline", "rb") as f:
                    cmdline = f.read()
            except OSError:
                continue
            if secret.encode() in cmdline and b"grader-probe-linger" in cmdline:
                found.append(int(name))
    for pid in found:
        try:
            os.kill(pid, 9)
        except OSError:
            pass
    return found


def describe(d: Diagnosis) -> str:
    """The doctor's report as text."""
    python = find_interpreter(d.python)  # its own word for its version, not whatever '--version' prints
    lines = [f"grader {d.version} on {platform.system()} {platform.release()}, running as {d.user}",
             f"Python for scripts: {d.python} ({python.version if python else 'not a Python: it does not run Python'})"]  # fmt: skip
    on_path = find_interpreter("python3")
    lines.append(f"python3 in a command (the first on PATH): {on_path.describe() if on_path else 'none found'}")
    lines.append("isolation:")
    for m, why in d.mechanisms.items():
        mark = "  <- used" if m == d.isolation else ""
        lines.append(f"  {m:<8} {'works' if why is None else 'does not work: ' + why}{mark}")
    if d.isolation == "none":
        lines.append("  none     used: scripts can read and change what the grader's user can (unsafe for a class)")
    lines += ["limits:"] + [f"  {x}" for x in d.limits]
    lines += ["fair CPU (each program's processes in cgroups of their own):"] + [f"  {x}" for x in d.fair_cpu]
    if d.fair_cpu_missing:
        lines.append(f"  {d.fair_cpu_missing}")
    if d.attacks:
        lines.append(f"attacks by a real script under '{d.isolation}':")
        width = max(len(t) for t in ATTACKS.values())
        for a in d.attacks:
            verdict = "blocked" if a.blocked else "NOT BLOCKED: " + "; ".join(a.got_through[:3])
            lines.append(f"  {ATTACKS[a.category]:<{width}}  {verdict}")
    return "\n".join(lines)
