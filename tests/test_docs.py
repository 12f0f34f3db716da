"""The documentation site (mkdocs.yml, docs/) covers what grader does, as sqlite-utils checks its
own documentation: every command has its help (ending with an example where it runs something),
a page generated from that help and a usage in a code block of the site; every key of
config.yaml's schema and every name ``grader`` exports is documented; the site's examples run;
``mkdocs build --strict`` passes; and the README's two commands are the ones CI runs."""

import dataclasses
import importlib
import importlib.util
import re
import subprocess
import sys
import textwrap
import typing
from pathlib import Path

import click
import pytest
import yaml
from click.testing import CliRunner

import grader
from grader.cli import main
from grader.config import SCHEMA, Config, load_config, parse_config

from conftest import ROOT

DOCS = ROOT / "docs"


def subcommands(group: click.Group) -> dict[str, click.Command]:
    """A group's commands by name, those of grader's own loaded as when each runs."""
    ctx = click.Context(group)
    return {name: command for name in group.list_commands(ctx) if (command := group.get_command(ctx, name))}


def commands(group: click.Group = main, prefix: str = "grader") -> list[tuple[str, click.Command]]:
    out = []
    for name, command in sorted(subcommands(group).items()):
        out.append((f"{prefix} {name}", command))
        if isinstance(command, click.Group):
            out += commands(command, f"{prefix} {name}")
    return out


def pages() -> list[Path]:
    return sorted(DOCS.rglob("*.md"))


def blocks(languages: tuple[str, ...]) -> list[tuple[str, str]]:
    """(where, text) of each fenced code block of the site in one of ``languages``
    ('' is a block without one); where is 'page.md:line'."""
    out = []
    for page in pages():
        fence, start, lines = None, 0, []
        for n, line in enumerate(page.read_text().splitlines(), 1):
            if line.lstrip().startswith("```"):
                if fence is None:
                    fence, start, lines = line.strip()[3:].strip(), n, []
                else:
                    if fence in languages:
                        out.append((f"{page.relative_to(DOCS)}:{start}", textwrap.dedent("\n".join(lines))))
                    fence = None
            elif fence is not None:
                lines.append(line)
    return out


def shell_blocks() -> str:
    """The lines of the site's shell code blocks (```sh, ```bash, or no language)."""
    return "\n".join(text for _, text in blocks(("sh", "bash", "")))


@pytest.mark.parametrize("name, command", commands(), ids=[n for n, _ in commands()])
def test_every_command_has_help_a_page_and_a_usage_in_the_docs(name, command):
    shown = CliRunner().invoke(main, [*name.split()[1:], "--help"])
    assert shown.exit_code == 0 and command.help and len(command.help.split()) >= 8, shown.output
    if not isinstance(command, click.Group):
        assert "Example" in command.help, f"{name}: its help ends with an example"
    assert re.search(rf"(?<![\w/.-]){name}\b", shell_blocks()), f"{name}: no usage in a code block of docs/"
    top = name.split()[1]  # a subcommand is rendered on its group's page, as mkdocs-click renders groups
    page = DOCS / "commands" / f"{top}.md"
    assert page.is_file() and f":command: {top.replace('-', '_')}\n" in page.read_text(), (
        f"{name}: docs/commands/{top}.md renders its help (::: mkdocs-click, :command: {top})"
    )
    assert f"commands/{top}.md" in (ROOT / "mkdocs.yml").read_text(), f"{name}: its page is in mkdocs.yml's nav"


def config_keys() -> list[str]:
    """Every key config.yaml may hold: the schema's, and those of each section ('limits.memory_mb')
    and of each item of a list of sections ('engines[].name')."""
    hints = typing.get_type_hints(Config)
    keys = []
    for key in SCHEMA:
        keys.append(key)
        kind = hints[key]
        if typing.get_origin(kind) is tuple and dataclasses.is_dataclass(typing.get_args(kind)[0]):
            keys += [f"{key}[].{f.name}" for f in dataclasses.fields(typing.get_args(kind)[0])]
        elif dataclasses.is_dataclass(kind):
            keys += [f"{key}.{f.name}" for f in dataclasses.fields(kind)]
    return keys


def test_the_config_keys_are_the_schemas():
    """The walk below finds the sections the schema checks (a section's keys are its fields)."""
    keys = config_keys()
    assert {"limits.wall_seconds", "tournament.grade", "cluster.connect_seconds", "engines[].protocol"} <= set(keys)
    for key in (k for k in keys if "." in k):
        section, field = key.replace("[]", "").split(".")
        data = {section: [{field: None}] if "[]" in key else {field: None}}
        try:
            parse_config(data, "t")
        except grader.ConfigError as e:
            assert "unknown key" not in str(e), f"{key}: not a key of the schema: {e}"


@pytest.mark.parametrize("key", config_keys())
def test_every_config_key_is_documented(key):
    """A row of a table (| `key` | what it does | default |) of docs/reference/config.md."""
    text = (DOCS / "reference" / "config.md").read_text()
    row = re.search(rf"^\| `{re.escape(key)}` \|[^|\n]*\w[^|\n]*\|[^|\n]*\w", text, re.M)
    assert row, f"config key '{key}': no row of its own in docs/reference/config.md (| `{key}` | values | default |)"


@pytest.mark.parametrize("key", config_keys())
def test_the_shipped_config_lists_every_key(key):
    """config.yaml at the top of the repository, the file users copy, shows every key (a section's
    keys inside it, a list's in a commented example)."""
    text = (ROOT / "config.yaml").read_text()
    if "." not in key:
        assert re.search(rf"^{key}:", text, re.M), f"config.yaml: no line '{key}:'"
    else:
        section, leaf = key.replace("[]", "").split(".")
        part = text[re.search(rf"^{section}:", text, re.M).start() :]
        part = re.split(r"\n(?=\w)", part, maxsplit=1)[0]  # up to the next top-level key
        assert re.search(rf"\b{leaf}:", part), f"config.yaml: no '{leaf}:' in its '{section}:' section"


def test_the_shipped_config_holds_the_defaults():
    assert load_config(ROOT / "config.yaml") == dataclasses.replace(Config(), source=str(ROOT / "config.yaml"))


@pytest.mark.parametrize("name", grader.__all__)
def test_every_public_name_is_in_the_api_reference(name):
    text = (DOCS / "reference" / "api.md").read_text()
    assert re.search(rf"^::: grader\.{re.escape(name)}$", text, re.M), f"grader.{name}: not in docs/reference/api.md"


def python_blocks() -> list[tuple[str, str]]:
    return blocks(("python",))


@pytest.mark.parametrize("where, code", python_blocks(), ids=[w for w, _ in python_blocks()])
def test_the_python_examples_of_the_docs_run(where, code, tmp_path, monkeypatch):
    """Each ```python block, run as written from the repository root (its run folders in tmp_path)."""
    monkeypatch.chdir(ROOT)
    namespace: dict = {}
    exec(compile(code.replace("runs/", f"{tmp_path}/runs/"), where, "exec"), namespace)
    if "result" in namespace and "grade(" in code:  # the library guide's: the example scores 100/100
        result = namespace["result"]
        assert result.total == 100, (result.tests[0].diagnosis, result.tests[0].run.stderr_tail)


def test_the_library_guide_grades_a_script_and_a_class():
    """The guide's first example is the one that grades negamax.py and a class (run above)."""
    guide = [code for where, code in python_blocks() if where.startswith("guides/library.md")]
    assert guide and "grade(" in guide[0] and "grade_class(" in guide[0]


def config_blocks() -> list[tuple[str, str]]:
    """The ```yaml blocks of the site but the plan file of the formats page."""
    return [(where, text) for where, text in blocks(("yaml",)) if not where.startswith("reference/formats.md")]


@pytest.mark.parametrize("where, text", config_blocks(), ids=[w for w, _ in config_blocks()])
def test_the_config_examples_of_the_docs_are_valid(where, text):
    parse_config(yaml.safe_load(text), where)


def test_the_docs_name_the_import_error_of_a_clones_folder(tmp_path):
    """From the folder holding a clone (named grader/ by git clone), the clone's folder hides
    the editable install: the library guide says so, in the words Python uses."""
    (tmp_path / "grader").mkdir()  # the clone's folder, as its parent folder sees it
    done = subprocess.run(
        [sys.executable, "-c", "from grader import grade"], cwd=tmp_path, capture_output=True, text=True
    )
    guide = (DOCS / "guides" / "library.md").read_text()
    if done.returncode == 0:
        pytest.skip("the package is not an editable install here: the clone's folder does not hide it")
    error = done.stderr.strip().splitlines()[-1]
    assert error == "ImportError: cannot import name 'grade' from 'grader' (unknown location)"
    assert error in " ".join(guide.replace("`", "").split()), "docs/guides/library.md: explain the import error"


def mentions(pattern: str) -> list[str]:
    texts = [page.read_text() for page in pages()] + [(ROOT / "README.md").read_text()]
    return sorted({m for text in texts for m in re.findall(pattern, text)})


@pytest.mark.parametrize(
    "name", mentions(r"(?<![\w.\"])grader(?:\.[A-Za-z_]\w*)+")
)  # not "grader.x": an entry-point group
def test_every_dotted_name_the_docs_mention_exists(name):
    """grader.games.psq.parse, grader.execution.cluster.DaskExecutor...: a module moved or a name
    renamed is found here, not by a reader."""
    parts = name.split(".")
    for n in range(len(parts), 0, -1):
        try:
            found = importlib.import_module(".".join(parts[:n]))
        except ImportError:
            continue
        for attribute in parts[n:]:
            assert hasattr(found, attribute), f"the docs name {name}, but {'.'.join(parts[:n])} has no {attribute}"
            found = getattr(found, attribute)
        return
    pytest.fail(f"the docs name {name}, which cannot be imported")


@pytest.mark.parametrize("path", mentions(r"(?<![\w/.~-])(?:grader|tests|bench|fixtures|submissions)/[\w./-]*\w"))
def test_every_file_the_docs_mention_exists(path):
    assert (ROOT / path).exists(), f"the docs name {path}, which is not in the repository"


def security_table() -> set[str]:
    """The tests (``FILE::TEST``, under tests/) the portal guide's attack table names: its rows
    of this checkout, not those of a change still to be merged."""
    text = (DOCS / "guides" / "portal.md").read_text()
    table = text.split("### The attack suite", 1)[1].split("#### Added with", 1)[0]
    named = set()
    for row in (r for r in table.splitlines() if r.startswith("| `")):
        file = ""
        for name in re.findall(r"`([^`]+)`", row.split(" | ")[0]):
            file = name.rpartition("::")[0] or file  # '::test' goes on with the file before it
            named.add(f"{file}::{name.rpartition('::')[2]}")
    return named


def test_the_security_table_names_every_attack_of_the_suite_and_only_tests_that_exist():
    """The portal guide's table of attacks is true: each test it names is there, and each test
    of tests/attacks/portal/ has its row."""
    named = security_table()
    for name in sorted(named):
        file, test = name.split("::")
        assert re.search(rf"^def {test}\(", (ROOT / "tests" / file).read_text(), re.M), f"no test {name}"
    suite = {f"attacks/portal/{path.name}::{test}" for path in sorted((ROOT / "tests" / "attacks" / "portal").glob("test_*.py"))
             for test in re.findall(r"^def (test_\w+)\(", path.read_text(), re.M)}  # fmt: skip
    assert sorted(suite - named) == [], "attacks without a row in docs/guides/portal.md's table"


def readme_commands(text: str) -> tuple[str, str]:
    """The install command and the test command of the first shell block of ``text``."""
    block = re.search(r"```sh\n(.*?)```", text, re.S).group(1).splitlines()
    install = block[0].split("#")[0].split("&&")[0].strip()
    test = block[1].split("#")[0].strip()
    return install, test


def test_the_readme_commands_are_those_ci_runs():
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    install, test = readme_commands((ROOT / "README.md").read_text())
    assert install in ci and test in ci, f"README: {install!r} and {test!r} must be lines of .ci/run"
    assert "mkdocs build --strict" in ci
    for page in ("index.md", "getting-started.md"):  # the site shows the same two commands
        assert readme_commands((DOCS / page).read_text()) == (install, test), page


def slug(heading: str) -> str:
    """A heading's anchor, as MkDocs' toc makes it."""
    text = re.sub(r"[^\w\s-]", "", heading).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def test_the_readme_links_into_the_site():
    """Each link of the README to docs/ names a page there, and a heading of it."""
    links = re.findall(r"\]\((docs/[^)#]+)(?:#([^)]+))?\)", (ROOT / "README.md").read_text())
    assert len(links) >= 10
    for page, heading in links:
        assert (ROOT / page).is_file(), f"README links to {page}, which does not exist"
        if heading:
            headings = [slug(h) for h in re.findall(r"^#+ (.*)$", (ROOT / page).read_text(), re.M)]
            assert heading in headings, f"README links to {page}#{heading}: no such heading"


def test_every_page_is_two_clicks_away():
    """The nav is sections of pages, no deeper: a page is one click from its section's list."""
    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text())["nav"]
    listed = []
    for entry in nav:
        ((title, target),) = entry.items()
        for item in target if isinstance(target, list) else [{title: target}]:
            ((_, page),) = item.items()
            assert isinstance(page, str), f"{title}: a section inside a section is a third click"
            listed.append(page)
    assert sorted(listed) == sorted(str(p.relative_to(DOCS)) for p in pages()), "every page of docs/ in the nav"


MISSING = [
    name for name in ("mkdocs", "mkdocs_click", "mkdocstrings_handlers") if importlib.util.find_spec(name) is None
]


@pytest.mark.slow
@pytest.mark.skipif(bool(MISSING), reason=f"{', '.join(MISSING)} not installed: pip install -e '.[docs]'")
def test_the_site_builds_with_mkdocs_strict(tmp_path):
    """Every page, link, anchor, command page and API name resolves: a warning fails the build."""
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=ROOT, capture_output=True, text=True)  # fmt: skip
    warnings = [line for line in done.stderr.splitlines() if not line.startswith("INFO")]
    assert done.returncode == 0, "\n".join(warnings)[-3000:]
    page = (tmp_path / "site" / "commands" / "grade" / "index.html").read_text()
    assert "--stop-on-error" in page and "grader grade [OPTIONS]" in page  # rendered from the click help
    api = (tmp_path / "site" / "reference" / "api" / "index.html").read_text()
    assert 'id="grader.grade"' in api and "Run every test of" in api  # rendered from the docstring


def test_the_readmes_example_output_agrees_with_its_command():
    """The README showed 'seed 7' under a command that draws a new seed each run (issue 51):
    the first command, the screen's heading and the screen itself name the same seed."""
    text = (ROOT / "README.md").read_text()
    command = re.search(r"```sh\n[^\n]*&& (grader grade [^#\n]*?)\s*#", text).group(1)
    heading = re.search(r"## One screen: what `([^`]*)` shows", text).group(1)
    screen = re.search(r"## One screen:.*?```\n(.*?)```", text, re.S).group(1)
    assert command == heading, (command, heading)
    shown = set(re.findall(r"seed (\d+)", screen))
    given = re.search(r"--seed (\d+)", command)
    assert given is not None and shown == {given.group(1)}, (command, shown)
    for page in ("index.md", "getting-started.md"):
        assert command in (DOCS / page).read_text(), page
