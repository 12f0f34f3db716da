"""MkDocs hook: the commands of ``grader.cli:main`` for the command pages.

Each command becomes an attribute of a module named ``grader_commands``, so that its page
renders its click help with mkdocs-click (``:module: grader_commands``, ``:command: NAME``)
wherever the command's code lives; and the table of every command on ``commands/index.md``
is made from their short help at each build, so it never differs from ``grader --help``."""

import copy
import re
import sys
import textwrap
import types

import click

from grader.cli import main

MARKER = "<!-- the table of commands -->"


def markdown_help(text: str) -> str:
    """Click's help text as Markdown: a paragraph marked ``\\b`` (click's "keep these lines")
    becomes a code block, any other paragraph one line of text with Markdown's signs escaped."""
    out = []
    for paragraph in re.split(r"\n\s*\n", text.strip("\n")):
        lines = paragraph.split("\n")
        if lines[0].strip() == "\b":
            out.append("```text\n" + textwrap.dedent("\n".join(lines[1:])).strip("\n") + "\n```")
        else:
            out.append(re.sub(r"([\\`*_\[\]<>])", r"\\\1", " ".join(line.strip() for line in lines)))
    return "\n\n".join(out)


def for_the_page(command: click.Command) -> click.Command:
    """A copy of ``command`` (and of its subcommands) whose help is Markdown."""
    page = copy.copy(command)
    page.help = markdown_help(command.help or "")
    if isinstance(command, click.Group):
        page.commands = {name: for_the_page(sub) for name, sub in subcommands(command).items()}  # type: ignore[attr-defined]
    return page


def subcommands(group: click.Group) -> dict[str, click.Command]:
    """A group's commands by name (grader's own are imported as when each runs)."""
    ctx = click.Context(group)
    return {name: command for name in group.list_commands(ctx) if (command := group.get_command(ctx, name))}


commands = types.ModuleType("grader_commands", "The commands of grader.cli:main, by name ('-' as '_').")
for _name, _command in subcommands(main).items():
    setattr(commands, _name.replace("-", "_"), for_the_page(_command))
sys.modules["grader_commands"] = commands


def table() -> str:
    """A Markdown table: each command and subcommand, linked to its page, with its short help."""
    rows = ["| command | what it does |", "|---|---|"]
    for name, command in sorted(subcommands(main).items()):
        rows.append(f"| [`grader {name}`]({name}.md) | {command.get_short_help_str(200)} |")
        if isinstance(command, click.Group):
            for sub, subcommand in sorted(subcommands(command).items()):
                rows.append(f"| [`grader {name} {sub}`]({name}.md#{sub}) | {subcommand.get_short_help_str(200)} |")
    return "\n".join(rows)


def on_page_markdown(markdown: str, page, **kwargs) -> str:
    return markdown.replace(MARKER, table()) if page.file.src_uri == "commands/index.md" else markdown
