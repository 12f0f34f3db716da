"""The rules of a run live in the library: which options go together is decided by library
objects raising the library's errors, so the command, a Python caller and the portal meet
the same rules; the command only maps its flags and prints the error as its usage error."""

import re

import pytest
from click.testing import CliRunner

from grader import Config
from grader.cli import main
from grader.errors import OptionError
from grader.tournaments.request import TournamentRequest

TWO = ("builtin:greedy", "builtin:random_mover")

# (what is asked, the flags that ask it, the words of the refusal)
REFUSED = [
    ({"openings_file": "o.txt", "random_openings": 4}, ["--openings", "o.txt", "--random-openings", "4"],
     "give --openings FILE or --random-openings PLIES, not both"),
    ({"opening_plies": 4}, ["--opening-plies", "4"], "--opening-plies cuts the openings of --openings FILE"),
    ({"tc": (10.0, 0.1), "time_limit": 2.0}, ["--tc", "10+0.1", "--time-limit", "2"],
     "give --tc (a game clock) or --time-limit (seconds per move), not both"),
    ({"time_margin": 0.05}, ["--timemargin", "50"], "--timemargin is how far an engine may overstep its clock"),
    ({"sprt": (0.0, 10.0), "format": "gauntlet"}, ["--sprt", "0", "10", "--format", "gauntlet"],
     "--sprt is its own format between two engines"),
    ({"sprt": (0.0, 10.0)}, ["--sprt", "0", "10"], "--sprt needs --max-games N"),
    ({"sprt": (0.0, 10.0), "max_games": 10, "rounds": 2}, ["--sprt", "0", "10", "--max-games", "10", "--rounds", "2"],
     "--rounds is not for --sprt"),
    ({"max_games": 10}, ["--max-games", "10"], "--max-games, --alpha and --beta are for --sprt"),
    ({"opponents": ("builtin:greedy",)}, ["--opponents", "builtin:greedy"], "--opponents is for --format gauntlet"),
    ({"grade": True}, ["--grade"], "--grade grades a gauntlet"),
]  # fmt: skip


@pytest.mark.parametrize("asked, flags, words", REFUSED, ids=[w[:30] for _, _, w in REFUSED])
def test_the_library_and_the_command_refuse_the_same_options(tmp_path, monkeypatch, asked, flags, words):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(OptionError, match=re.escape(words)):
        TournamentRequest(engines=TWO, **asked).arguments(Config())
    done = CliRunner().invoke(main, ["tournament", *TWO, *flags])
    assert done.exit_code == 2 and words in done.output, done.output
    assert not (tmp_path / "runs").exists()  # refused before anything was made


def test_resume_takes_no_option_of_a_new_tournament(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(OptionError, match="not --tc"):
        TournamentRequest(resume="old", tc=(10.0, 0.1)).check()
    TournamentRequest(resume="old", jobs=2, grade=True).check()  # --jobs and --grade may change
    done = CliRunner().invoke(main, ["tournament", "--resume", "old", "--seed", "3"])
    assert done.exit_code == 2 and "give only --resume DIR (and --jobs, --grade), not --seed" in done.output


def test_a_request_resolves_the_seed_and_the_settings_as_the_command_does(tmp_path, monkeypatch):
    """The seed: given, else config.yaml's; settings from the one resolver; config.yaml's
    engines by name."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "config.yaml").write_text(
        "seed: 77\ntournament:\n  move_seconds: 2\nengines:\n  - name: mine\n    command: ./x\n    protocol: nboard\n"
        "    workdir: .\n"
    )
    (tmp_path / "x").write_text("#!/bin/sh\n")
    (tmp_path / "x").chmod(0o755)
    from grader import load_config

    config = load_config(None)
    args = TournamentRequest(engines=("mine", "builtin:greedy")).arguments(config)
    assert args["seed"] == 77 and args["settings"].limits.wall_seconds == 2
    assert args["engines"][0].name == "mine" and args["engines"][1] == "builtin:greedy"
    assert TournamentRequest(engines=TWO, seed=5, time_limit=5.0).arguments(config)["seed"] == 5
    assert TournamentRequest(engines=TWO, time_limit=5.0).arguments(config)["settings"].limits.wall_seconds == 5
