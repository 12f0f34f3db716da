"""Every command has its help (ending with an example where it runs something) and its usage
in a code block of the README, as sqlite-utils checks its own documentation."""

import re

import click
import pytest
from click.testing import CliRunner

from grader.cli import main

from conftest import ROOT


def commands(group: click.Group = main, prefix: str = "grader") -> list[tuple[str, click.Command]]:
    out = []
    for name, command in sorted(group.commands.items()):
        out.append((f"{prefix} {name}", command))
        if isinstance(command, click.Group):
            out += commands(command, f"{prefix} {name}")
    return out


@pytest.mark.parametrize("name, command", commands(), ids=[n for n, _ in commands()])
def test_every_command_has_help_and_a_place_in_the_readme(name, command):
    shown = CliRunner().invoke(main, [*name.split()[1:], "--help"])
    assert shown.exit_code == 0 and command.help and len(command.help.split()) >= 8, shown.output
    if not isinstance(command, click.Group):
        assert "Example" in command.help, f"{name}: its help ends with an example"
    assert re.search(rf"(?<![\w/.-]){name}\b", shell_blocks()), f"{name}: no usage in a README code block"


def shell_blocks() -> str:
    """The lines of the README's shell code blocks (```sh, or no language)."""
    lines, fence = [], None
    for line in (ROOT / "README.md").read_text().splitlines():
        if line.lstrip().startswith("```"):
            fence = None if fence is not None else line.strip()[3:]
        elif fence in ("sh", "bash", ""):
            lines.append(line)
    return "\n".join(lines)
