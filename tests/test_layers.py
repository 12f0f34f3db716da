"""The package's layers hold: every import points down (or sideways within a package), no
two modules import each other, and nothing under grader/games knows what runs, grades or
plays games. The contracts are in pyproject.toml; lint-imports (import-linter) checks them."""

import subprocess
import sys

from conftest import ROOT


def test_imports_follow_the_layers_without_circles():
    done = subprocess.run([sys.executable, "-c", "import sys; from importlinter.cli import lint_imports; sys.exit(lint_imports())"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Contracts: 6 kept, 0 broken." in done.stdout
