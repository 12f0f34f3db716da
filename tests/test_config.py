"""config.yaml loading and validation."""

import pytest

from grader.config import Config, load_config
from grader.errors import ConfigError
from grader.limits import Limits


def write(tmp_path, text):
    f = tmp_path / "config.yaml"
    f.write_text(text)
    return f


def test_bundled_config_is_valid(monkeypatch):
    from conftest import ROOT

    cfg = load_config(ROOT / "config.yaml")
    assert cfg == Config(source=str(ROOT / "config.yaml"))  # the bundled file holds the defaults


def test_defaults_without_a_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert load_config() == Config()


def test_reads_config_yaml_in_the_current_folder(tmp_path, monkeypatch):
    write(tmp_path, "scoring: winner-takes-empties\n")
    monkeypatch.chdir(tmp_path)
    assert load_config().scoring == "winner-takes-empties"


def test_empty_file_means_defaults(tmp_path):
    config = load_config(write(tmp_path, "# nothing set\n"))
    assert (config.game, config.scoring, config.isolation) == ("othello", None, "auto")  # None: the lab's rule


@pytest.mark.parametrize(
    "text, message",
    [
        ("scorng: plain\n", r"unknown key 'scorng' \(did you mean 'scoring'\?\); known keys: game, scoring"),
        (
            "colour: red\n",
            "unknown key 'colour' \\(did you mean 'cluster'\\?\\); known keys: game, scoring, limits, isolation, fair_cpu, jobs, seed, python, commands, entry, tournament, regress, gomoku, backend, max_solve_seconds, engines, cluster$",
        ),
        ("limits:\n  wall_seconds: soon\n", "'limits.wall_seconds' must be a number; got 'soon'"),
        ("limits:\n  wall_seconds: 0\n", "'limits.wall_seconds' must be greater than 0; got 0"),
        ("limits:\n  wall_seconds: true\n", "'limits.wall_seconds' must be a number; got true"),
        (
            "limits:\n  wall_secs: 3\n",
            r"unknown key 'limits.wall_secs' \(did you mean 'limits.wall_seconds'\?\); known keys: limits.wall_seconds, ",
        ),
        ("limits:\n  memory_mb: 2\n", "'limits.memory_mb' must be at least 16; got 2"),
        ("limits:\n  processes: many\n", "'limits.processes' must be a whole number or null; got 'many'"),
        (
            "limits: 5\n",
            "'limits' must be a mapping with keys wall_seconds, cpu_seconds, memory_mb, processes, output_bytes; got 5",
        ),
        ("isolation: docker\n", "'isolation' must be one of auto, none, bwrap, unshare, uid; got 'docker'"),
        ("isolation_fallback: true\n", r"unknown key 'isolation_fallback' \(did you mean 'isolation'\?\)"),
        ("time_limit: 5\n", "unknown key 'time_limit'"),
        ("jobs: 0\n", "'jobs' must be at least 1; got 0"),
        ("jobs: 1.5\n", "'jobs' must be a whole number or null; got 1.5"),
        ("seed: -3\n", "'seed' must be at least 0; got -3"),
        ("python: ''\n", "'python' must be a non-empty string or null; got ''"),
        ("commands: [java]\n", "'commands' must map a file suffix to a command"),
        (
            "commands:\n  java: 'java {board} {token}'\n",
            "'commands': 'java' is not a file suffix: write it like '.java'",
        ),
        ("commands:\n  .java: 'java Foo'\n", r"'commands\.\.java' must be a command holding \{board\} and \{token\}"),
        (
            "scoring: fancy\n",
            r"'scoring' must be one of plain, winner-takes-empties \(for othello\), or null; got 'fancy'",
        ),
        ("scoring: 3\n", r"'scoring' must be one of plain, winner-takes-empties \(for othello\), or null; got 3"),
        (
            "scoring: [plain]\n",
            r"'scoring' must be one of plain, winner-takes-empties \(for othello\), or null; got \['plain'\]",
        ),
        ("game: chess\n", "'game' must be one of gomoku, othello, tictactoe; got 'chess'"),
        (
            "game: tictactoe\nscoring: plain\n",
            r"'scoring' must be one of outcome, fastest-win \(for tictactoe\), or null; got 'plain'",
        ),
        ("- scoring\n", "expected 'key: value' lines at the top level, got list"),
        ("scoring: plain\n  bad: indent\n", "not valid YAML at line 2, column"),
    ],
)
def test_bad_configs_name_the_key_and_the_fix(tmp_path, text, message):
    with pytest.raises(ConfigError, match=message):
        load_config(write(tmp_path, text))


def test_every_key(tmp_path):
    text = (
        "scoring: winner-takes-empties\nlimits:\n  wall_seconds: 2.5\n  memory_mb: null\njobs: 3\nseed: 9\n"
        "python: /usr/bin/python3\nisolation: unshare\n"
        "commands:\n  .JAVA: 'java -cp {dir} {stem} {board} {token}'\n"
    )
    cfg = load_config(write(tmp_path, text))
    assert (cfg.scoring, cfg.jobs, cfg.seed, cfg.python, cfg.isolation) == (
        "winner-takes-empties",
        3,
        9,
        "/usr/bin/python3",
        "unshare",
    )
    assert load_config(write(tmp_path, "")).isolation == "auto"
    assert cfg.limits == Limits(wall_seconds=2.5, memory_mb=None)
    assert cfg.commands == {".java": "java -cp {dir} {stem} {board} {token}"}
    nulls = load_config(write(tmp_path, "jobs: null\nseed: null\npython: null\ncommands: null\n"))
    assert (nulls.jobs, nulls.seed, nulls.python, nulls.commands) == (None, None, None, {})


def test_missing_config_file(tmp_path):
    with pytest.raises(ConfigError, match="config file '.*nope.yaml' not found: check the path given to --config"):
        load_config(tmp_path / "nope.yaml")


@pytest.mark.parametrize(
    "text, message",
    [
        ("limits:\n  wall_seconds: .nan\n", "'limits.wall_seconds' must be a number; got .nan"),
        ("limits:\n  wall_seconds: .inf\n", "'limits.wall_seconds' must be a number; got .inf"),
        ("limits:\n  wall_seconds: 1.0e+300\n", "'limits.wall_seconds' must be at most 86400; got 1.0e\\+300"),
        ("limits:\n  cpu_seconds: .nan\n", "'limits.cpu_seconds' must be a number or null; got .nan"),
        ("limits:\n  memory_mb: 20000000000000\n", "'limits.memory_mb' must be at most 16777216; got 20000000000000$"),
        ("limits:\n  output_bytes: 1.0e+20\n", "'limits.output_bytes' must be a whole number or null; got 1.0e\\+20$"),
        ("limits:\n  output_bytes: 100000000000000000000\n", "'limits.output_bytes' must be at most 1125899906842624"),
        (
            "commands:\n  .java: 'java {Board} {board} {token}'\n",
            r"'commands\..java': cannot use .* \('Board'\): the placeholders are",
        ),
        (
            'commands:\n  .java: "java \'Foo {board} {token}"\n',
            r"'commands\..java': cannot use .*quotes must be closed",
        ),
    ],
)
def test_limits_must_be_finite_and_templates_valid(tmp_path, text, message):
    with pytest.raises(ConfigError, match=message):
        load_config(write(tmp_path, text))


@pytest.mark.parametrize(
    "text, message",
    [
        ("gomoku:\n  size: 4\n", "'gomoku.size' must be at least 5; got 4$"),
        ("gomoku:\n  size: 20\n", "'gomoku.size' must be at most 19; got 20$"),
        ("gomoku:\n  overline: maybe\n", "'gomoku.overline' must be true or false; got 'maybe'$"),
        ("gomoku:\n  exact: true\n", r"unknown key 'gomoku.exact'; known keys: gomoku.size, gomoku.overline$"),
        ("game: gomoku:size=25\n", "'game': bad game 'gomoku:size=25': a Gomoku board is 5x5 to 19x19, not 25x25$"),
        ("game: chess:size=9\n", "'game' must be one of gomoku, othello, tictactoe; got 'chess'$"),
    ],
)
def test_bad_gomoku_settings_are_one_line_errors(tmp_path, text, message):
    with pytest.raises(ConfigError, match=message):
        load_config(write(tmp_path, text))
    from click.testing import CliRunner

    from grader.cli import main

    out = CliRunner().invoke(main, ["tournament", "a.py", "b.py", "--config", str(tmp_path / "config.yaml")])
    assert out.exit_code == 1 and len(out.output.splitlines()) == 1 and out.output.startswith("Error: "), out.output


def test_the_gomoku_section_fills_in_what_a_name_leaves_out(tmp_path):
    config = load_config(write(tmp_path, "game: gomoku:size=11\ngomoku:\n  overline: false\n"))
    assert config.gomoku.size == 7 and config.gomoku.overline is False
    assert config.get_game().name == "gomoku:size=11,overline=false"  # the name's size, the section's rule
    assert config.get_game("gomoku").name == "gomoku:overline=false"
    assert config.get_game("gomoku:overline=true").name == "gomoku"
    assert config.get_game("othello").name == "othello"
    assert Config().get_game("gomoku").name == "gomoku"
