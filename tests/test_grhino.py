"""A real Othello engine from a package: GRhino's gtp-rhino (Debian's grhino; pattern
evaluation, opening book, exact endgame search) over GTP, against the bundled NBoard engines.

Edax, the stronger engine, is built from its source only where GRADER_EDAX_SRC names a
checkout (tests/test_edax.py): CI reaches only package registries, and GRhino is the real
Othello engine those carry. .ci/run installs it (apt-get install grhino).
"""

import json
import secrets
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.cli import main
from grader.engines.programs import ProtocolEngine
from grader.errors import GraderError
from grader.games import get_game
from grader.limits import Limits
from grader.tournaments.engines import Engine
from grader.tournaments.settings import TournamentSettings
from grader.tournaments.tournament import run_tournament

from test_nboard import running

RHINO = Path("/usr/games/gtp-rhino")
pytestmark = pytest.mark.skipif(
    not RHINO.is_file() or not Path("/usr/share/grhino/pattern").is_dir(),
    reason="GRhino is not installed: apt-get install grhino (Debian's package; .ci/run installs it)",
)
# 34 plies after which black has no move and white, to move, must be told nothing of the pass
TO_A_PASS = "e6f6f5d6c3g4d7c6h3d3d2f3e2c4b7f7b4a8g8e8b6g6h6h5h4b5a6a4c8b8h7d8f8h8"


def rhino_copy(tmp_path: Path) -> Path:
    """gtp-rhino under a name only this test knows (it reads its data from /usr/share/grhino)."""
    path = tmp_path / f"gtp-rhino-{secrets.token_hex(6)}"
    shutil.copy2(RHINO, path)
    return path


def rhino(path: Path, level: int = 1, name: str = "grhino") -> Engine:
    return Engine(name, protocol=ProtocolEngine.from_command(f"{path} -l {level}", "gtp"))


def games_in(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "games.jsonl").read_text().splitlines()]


def test_grhino_plays_a_round_robin_against_the_bundled_nboard_engines_with_clocks(tmp_path):
    """Every game ends normally on a 30+0.5 clock; each move has its time and clock; the
    NBoard engines' evaluations are recorded (GRhino's GTP gives none); nothing is left running."""
    copy = rhino_copy(tmp_path)
    settings = TournamentSettings(limits=Limits(wall_seconds=10), jobs=2, tc=(30.0, 0.5))
    result = run_tournament([rhino(copy), "builtin:nboard:negamax", "builtin:nboard:greedy"], settings=settings,
                            rounds=2, seed=7, out=tmp_path / "t")  # fmt: skip
    assert len(result.games) == 12 and all(g.reason == "normal" and not g.events for g in result.games), [
        g.events for g in result.games
    ]
    for g in result.games:
        assert len(g.clocks) == len(g.move_times) == len(g.evals) > 0
        assert all(0 < c <= 30 + 0.5 * (i + 1) for i, c in enumerate(g.clocks))
    assert any(e is not None for g in result.games for e in g.evals)  # the bundled engines' own
    # a real engine: it beats the greedy mover (4 games, 2 openings, both colours)
    greedy = [g for g in result.games if {g.black, g.white} == {"grhino", "greedy"}]
    assert sum((g.result == "1-0") == (g.black == "grhino") for g in greedy if g.result != "1/2-1/2") >= 3
    ggf = (result.folder.path / "games.ggf").read_text()
    assert ggf.count("(;GM[Othello]") == 12 and "PB[grhino]" in ggf
    assert running(copy) == []


def test_grhino_is_told_the_game_around_a_forced_pass(tmp_path):
    """GTP Othello engines refuse 'play b pass': the grader tells the moves, not the pass, and
    both games from a position where black must pass end normally."""
    copy = rhino_copy(tmp_path)
    pos = get_game("othello").replay(get_game("othello").parse_transcript(TO_A_PASS))
    assert pos.must_pass() and pos.token == "x"
    result = run_tournament([rhino(copy), "builtin:nboard:greedy"], settings=TournamentSettings(jobs=1),
                            openings=[TO_A_PASS], out=tmp_path / "t")  # fmt: skip
    assert len(result.games) == 2 and all(g.reason == "normal" and not g.events for g in result.games), [
        g.events for g in result.games
    ]
    assert running(copy) == []


@pytest.mark.slow
def test_a_course_grades_a_script_against_grhino_at_two_levels_and_resumes(tmp_path):
    """config.yaml's engines: names GRhino at levels 1 and 2 (its command line); a gauntlet
    with --grade grades a script against both; --resume plays only the games not recorded."""
    copy = rhino_copy(tmp_path)
    (tmp_path / "c.yaml").write_text(
        "engines:\n"
        f"  - {{name: rhino-1, command: ./{copy.name} -l 1, protocol: gtp}}\n"
        f"  - {{name: rhino-2, command: ./{copy.name} -l 2, protocol: gtp}}\n"
    )
    run = ["tournament", "builtin:greedy", "--format", "gauntlet", "--opponents", "rhino-1,rhino-2", "--grade",
           "--rounds", "1", "--seed", "3", "--config", str(tmp_path / "c.yaml"), "--out", str(tmp_path / "t")]  # fmt: skip
    out = CliRunner().invoke(main, run)
    assert out.exit_code == 0, out.output
    games = games_in(tmp_path / "t")
    assert len(games) == 4 and all(g["reason"] == "normal" for g in games)
    grades = (tmp_path / "t" / "grades.csv").read_text().splitlines()
    assert grades[1].startswith("greedy,")
    (tmp_path / "t" / "games.jsonl").write_text("\n".join(json.dumps(g) for g in games[:2]) + "\n")
    again = CliRunner().invoke(main, ["tournament", "--resume", str(tmp_path / "t"), "--grade"])
    assert again.exit_code == 0, again.output
    resumed = games_in(tmp_path / "t")
    assert len(resumed) == 4 and [g["moves"] for g in resumed[:2]] == [g["moves"] for g in games[:2]]
    assert running(copy) == []


def test_gtp_othello_from_a_position_or_with_a_depth_is_a_one_line_error(tmp_path):
    copy = rhino_copy(tmp_path)
    (tmp_path / "o.txt").write_text("---------------------------XO------OX--------------------------- X\n")
    out = CliRunner().invoke(main, ["tournament", f"gtp:{copy}", "builtin:greedy", "--openings",
                                    str(tmp_path / "o.txt"), "--out", str(tmp_path / "t")])  # fmt: skip
    assert out.exit_code != 0 and "give openings as move sequences" in out.output, out.output
    assert not (tmp_path / "t").exists()
    with pytest.raises(GraderError, match="give a GTP engine its level in its command"):
        ProtocolEngine.from_command(str(copy), "gtp", depth=3)
