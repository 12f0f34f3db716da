"""config.yaml loading and validation."""

import pytest

from grader.board import Scoring
from grader.config import Config, load_config
from grader.errors import ConfigError


def write(tmp_path, text):
    f = tmp_path / "config.yaml"
    f.write_text(text)
    return f


def test_bundled_config_is_valid(monkeypatch):
    from conftest import ROOT

    cfg = load_config(ROOT / "config.yaml")
    assert cfg.scoring is Scoring.PLAIN


def test_defaults_without_a_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert load_config() == Config()


def test_reads_config_yaml_in_the_current_folder(tmp_path, monkeypatch):
    write(tmp_path, "scoring: winner-takes-empties\n")
    monkeypatch.chdir(tmp_path)
    assert load_config().scoring is Scoring.WINNER_TAKES_EMPTIES


def test_empty_file_means_defaults(tmp_path):
    assert load_config(write(tmp_path, "# nothing set\n")).scoring is Scoring.PLAIN


@pytest.mark.parametrize(
    "text, message",
    [
        ("scorng: plain\n", r"unknown key 'scorng' \(did you mean 'scoring'\?\); known keys: scoring"),
        ("colour: red\n", "unknown key 'colour'; known keys: scoring"),
        ("scoring: fancy\n", "'scoring' must be one of plain, winner-takes-empties; got 'fancy'"),
        ("scoring: 3\n", "'scoring' must be one of plain, winner-takes-empties; got 3"),
        ("scoring: [plain]\n", "'scoring' must be one of plain, winner-takes-empties; got \\['plain'\\]"),
        ("- scoring\n", "expected 'key: value' lines at the top level, got list"),
        ("scoring: plain\n  bad: indent\n", "not valid YAML at line 2, column"),
    ],
)
def test_bad_configs_name_the_key_and_the_fix(tmp_path, text, message):
    with pytest.raises(ConfigError, match=message):
        load_config(write(tmp_path, text))


def test_missing_config_file(tmp_path):
    with pytest.raises(ConfigError, match="config file '.*nope.yaml' not found: check the path given to --config"):
        load_config(tmp_path / "nope.yaml")
