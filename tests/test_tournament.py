"""Tournaments: game rules, forfeits, timeouts, resume, standings and Elo, bundled engines."""

import json
import math
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from grader.cli import main
from grader.errors import BoardFileError, GraderError
from grader.execution.executor import LocalExecutor
from grader.games.othello import OTHELLO, PLAIN, SCORINGS, WINNER_TAKES_EMPTIES
from grader.limits import Limits
from grader.tournaments.engines import Engine
from grader.tournaments.games import GameRecord as Game
from grader.tournaments.games import GameTask, schedule
from grader.tournaments.openings import random_openings as openings_of
from grader.tournaments.openings import read_openings as read_openings_of
from grader.tournaments.ratings import crosstable, elo, elo_interval, standings
from grader.tournaments.settings import TournamentSettings
from grader.tournaments.tables import crosstable_text, standings_table

import reference as ref
from conftest import ROOT

ENGINE = Path(__file__).parent / "scripts" / "engine.py"


def engines(tmp_path, *kinds) -> dict[str, Engine]:
    out = {}
    for kind in kinds:
        path = tmp_path / f"{kind}.py"
        shutil.copy(ENGINE, path)
        out[kind] = Engine(kind, path)
    return out


def play(game: Game, eng: dict[str, Engine], settings: TournamentSettings) -> Game:
    """Play one game on a worker of this process."""
    with LocalExecutor(1) as ex:
        ex.submit("g", GameTask(game, {name: e.spec() for name, e in eng.items()}, settings))
        return next(v for _, v in ex.results())


def parse_transcript(text):
    return OTHELLO.parse_transcript(text)


def transcript(moves):
    return OTHELLO.transcript(moves)


def random_openings(seed, plies, count):
    return openings_of(OTHELLO, seed, plies, count)


def read_openings(path):
    return read_openings_of(path, OTHELLO)


def settings(limit=5.0, **kw) -> TournamentSettings:
    return TournamentSettings(limits=Limits(wall_seconds=limit), jobs=1, **kw)


def replay(moves: str) -> tuple[str, str]:
    """The board after a transcript by the reference rules (passes implied), and who is to move."""
    board, tok = ref.START, "x"
    for sq in parse_transcript(moves):
        if not ref.moves(board, tok):
            tok = ref.other(tok)
        assert sq in ref.moves(board, tok), moves
        board, tok = ref.play(board, tok, sq), ref.other(tok)
    return board, tok


def near_the_end(seed: int, want_pass: bool = False, want_empties: bool = False) -> str:
    """An opening (transcript) a few moves before the end of a random game that has a pass
    in its last moves, or that ends with empties left."""
    rng = random.Random(seed)
    while True:
        board, tok, moves, passes = ref.START, "x", [], []
        while True:
            ms = ref.moves(board, tok)
            if not ms:
                if not ref.moves(board, ref.other(tok)):
                    break
                passes.append(len(moves))
                tok = ref.other(tok)
                continue
            sq = rng.choice(ms)
            moves.append(sq)
            board, tok = ref.play(board, tok, sq), ref.other(tok)
        cut = len(moves) - 6
        if (not want_pass or any(p > cut for p in passes)) and (not want_empties or board.count(".") > 0):
            return transcript(moves[:cut])


def lowest_square_ends_early(seed: int) -> str:
    """An opening from which lowest-square play by both sides (the 'first' engine) ends the
    game with empty squares left, checked by the reference rules."""
    rng = random.Random(seed)
    while True:
        opening = near_the_end(rng.randrange(10**6), want_empties=True)
        if ref.play_out(*replay(opening), lambda b, t, ms: min(ms)).count(".") > 0:
            return opening


@pytest.mark.slow
def test_full_game_by_the_rules_both_scorings(tmp_path):
    eng = engines(tmp_path, "first")
    eng["first2"] = Engine("first2", eng["first"].path)
    opening = lowest_square_ends_early(1)
    results = {}
    for rule in SCORINGS:
        game = play(Game("g", "p", 1, "first", "first2", opening), eng, settings(scoring=rule))
        board, _ = replay(game.moves)
        assert not ref.moves(board, "x") and not ref.moves(board, "o")  # the game is over
        assert (game.black_pieces, game.white_pieces) == (board.count("x"), board.count("o"))
        assert game.margin == ref.score(board, "x", rule) and game.reason == "normal"
        assert game.moves.startswith(opening)
        results[rule] = game
    assert board.count(".") > 0  # it ended with empties left, which only the winner's rule counts
    assert abs(results[WINNER_TAKES_EMPTIES].margin) > abs(results[PLAIN].margin)


def test_passes_are_applied_by_the_harness(tmp_path):
    eng = engines(tmp_path, "first")
    eng["first2"] = Engine("first2", eng["first"].path)
    game = play(Game("g", "p", 1, "first", "first2", near_the_end(2, want_pass=True)), eng, settings())
    board, _ = replay(game.moves)  # replays with passes implied, checking every move
    assert not ref.moves(board, "x") and not ref.moves(board, "o")


@pytest.mark.parametrize(
    "kind, problem",
    [("illegal", "99 is not a legal move"), ("silent", "no move: the engine printed no integer"),
     ("crash", "the engine crashed: it exited with code 1"), ("late", "99 is not a legal move")],
)  # fmt: skip
def test_forfeits(tmp_path, kind, problem):
    eng = engines(tmp_path, "first", kind)
    game = play(Game("g", "p", 1, "first", kind, ""), eng, settings())
    assert (game.reason, game.forfeit, game.result) == ("forfeit", kind, "1-0")
    (event,) = game.events
    assert event["engine"] == kind and event["token"] == "o" and event["problem"].startswith(problem)
    assert len(event["board"]) == 64
    if kind == "crash":
        assert "engine broke" in event["stderr_tail"]


def test_an_engine_stopped_at_its_time_limit_is_said_to_be(tmp_path):
    """Not 'no move: the engine printed no integer', as if it had ended without one."""
    eng = engines(tmp_path, "first", "hang")
    game = play(Game("g", "p", 1, "first", "hang", ""), eng, settings(limit=0.5))
    assert (game.reason, game.forfeit, game.result) == ("forfeit", "hang", "1-0")
    (event,) = game.events
    assert event["timed_out"] and event["problem"] == "no move within 0.5 s: the engine was stopped at its time limit"


@pytest.mark.slow
def test_on_illegal_random_plays_on(tmp_path):
    eng = engines(tmp_path, "first", "illegal")
    game = play(Game("g", "p", 1, "illegal", "first", ""), eng, settings(on_illegal="random"))
    assert game.reason == "normal" and game.forfeit is None and len(game.events) > 3
    replay(game.moves)


@pytest.mark.slow
def test_last_integer_printed_before_the_time_limit_counts(tmp_path):
    eng = engines(tmp_path, "first", "slow")
    game = play(
        Game("g", "p", 1, "slow", "first", near_the_end(3)), eng, settings(limit=2)
    )  # time to print, loaded or not
    assert game.reason == "normal" and game.timeouts["black"] >= 1 and game.timeouts["white"] == 0
    replay(game.moves)


def test_adjudication_finishes_by_perfect_play(tmp_path):
    eng = engines(tmp_path, "first", "silent")
    opening = near_the_end(4)
    game = play(Game("g", "p", 1, "first", "silent", opening), eng, settings(adjudicate=20))
    assert game.reason == "adjudicated" and not game.events  # the silent engine never had to move
    board, _ = replay(opening)
    _, tok = replay(opening)
    value = ref.value(board, tok, "winner-takes-empties")
    assert game.margin == (value if tok == "x" else -value)


def test_openings_file_and_random_openings(tmp_path):
    f = tmp_path / "o.txt"
    f.write_text("# openings\nf5d6c3\nF5F6\n\n")
    assert read_openings(f) == ["f5d6c3", "f5f6"]
    f.write_text("f5f5\n")
    with pytest.raises(BoardFileError, match=r"o.txt:1: f5 is not legal there \(o to move\)"):
        read_openings(f)
    f.write_text("f5d6c\n")
    with pytest.raises(BoardFileError, match="bad move sequence 'f5d6c'"):
        read_openings(f)
    ops = random_openings(7, 6, 10)
    assert len(set(ops)) == 10 and all(len(o) == 12 for o in ops) and ops == random_openings(7, 6, 10)
    for o in ops:
        replay(o)


def test_schedule_pairs_colours():
    games = schedule(["a", "b", "c"], ["f5", "d3"], rounds=2)
    assert len(games) == 12
    assert [(g.black, g.white, g.opening) for g in games[:2]] == [("a", "b", "f5"), ("b", "a", "f5")]
    assert games[6].opening == "d3" and games[0].pair == games[1].pair != games[2].pair


# --- standings and Elo, by hand -------------------------------------------------------------


def g(pair, black, white, result, diff=0, forfeit=None, timeouts=None):
    return Game(f"{pair}{black}", pair, 1, black, white, "", result=result, margin=diff, forfeit=forfeit,
                reason="forfeit" if forfeit else "normal", timeouts=timeouts or {"black": 0, "white": 0})  # fmt: skip


def test_elo_by_hand():
    assert elo(0.5) == 0
    assert elo(0.75) == pytest.approx(190.8485, abs=1e-3)  # 400 log10(3)
    assert elo(0.6) == pytest.approx(70.4365, abs=1e-3)  # 400 log10(1.5)
    assert elo(0) is None and elo(1) is None
    # pairs 1, 1/2, 1, 1/2: mean 3/4, variance 1/16, 95% bounds 3/4 -+ 1.96 * 1/8
    assert elo_interval([1, 0.5, 1, 0.5]) == pytest.approx((190.8485, 457.9533), abs=1e-3)
    assert elo_interval([0.75, 0.25, 0.5, 1.0, 0.5]) == pytest.approx((70.4365, 177.5693), abs=1e-3)
    assert elo_interval([1, 1]) == (None, None)
    assert elo_interval([0.5]) == (0, None)


def test_standings_and_crosstable_arithmetic():
    games = [
        g("p1", "a", "b", "1-0", 10), g("p1", "b", "a", "1/2-1/2", 0),
        g("p2", "a", "c", "0-1", -4, timeouts={"black": 2, "white": 0}), g("p2", "c", "a", "0-1", -6, forfeit="c"),
        g("p3", "b", "c", "1-0", 20), g("p3", "c", "b", "1-0", 2),
    ]  # fmt: skip
    table = {s.engine: s for s in standings(games, ["a", "b", "c"])}
    a, b, c = table["a"], table["b"], table["c"]
    assert (a.games, a.points, a.wins, a.draws, a.losses) == (4, 2.5, 2, 1, 1)
    assert a.margin == pytest.approx((10 + 0 - 4 + 6) / 4)
    assert (a.timeouts, c.forfeits, a.forfeits) == (2, 1, 0)
    assert (b.points, c.points) == (1.5, 2.0)
    # a's pairs: p1 (1 + 1/2)/2 = 3/4, p2 (0 + 1)/2 = 1/2 -> mean 5/8
    assert a.elo == pytest.approx(elo(0.625))
    assert [s.engine for s in standings(games, ["a", "b", "c"])] == ["a", "c", "b"]
    cross = crosstable(games, ["a", "b", "c"])
    assert cross == {"a": {"b": 1.5, "c": 1.0}, "b": {"a": 0.5, "c": 1.0}, "c": {"a": 1.0, "b": 1.0}}
    assert sum(s.points for s in table.values()) == len(games)


def test_pairs_that_never_met_and_unbounded_elo_show_as_such():
    """A gauntlet: b and c never meet (a dash, not 0); a wins all but one of its pair scores,
    so the interval of its Elo reaches a score of 1 (n/a, not inf)."""
    game = lambda black, white, score, pair: SimpleNamespace(  # noqa: E731
        black=black, white=white, black_score=score, margin=10 if score == 1 else -10 if score == 0 else 0,
        black_pieces=37, white_pieces=27, forfeit=None, timeouts={}, pair=pair)  # fmt: skip
    games = [game("a", "b", 1, "p1"), game("b", "a", 0, "p1"), game("a", "c", 1, "p2"), game("c", "a", 0.5, "p2")]
    cross = crosstable(games, ["a", "b", "c"])
    assert cross["b"]["c"] is None and cross["c"]["b"] is None and cross["b"]["a"] == 0.0
    text = crosstable_text(cross, ["a", "b", "c"]).splitlines()
    assert text[2].split() == ["a", "-", "2", "1.5"] and text[3].split() == ["b", "0", "-", "-"]
    rows = {ln.split()[0]: ln.split() for ln in standings_table(standings(games, ["a", "b", "c"])).splitlines()[2:]}
    a = next(s for s in standings(games, ["a", "b", "c"]) if s.engine == "a")
    assert math.isinf(a.elo_error) and rows["a"][7:9] == [f"{round(a.elo):+d}", "n/a"]


# --- bundled engines ---------------------------------------------------------------------


def _load(name):
    sys.path.insert(0, str(ROOT / "submissions"))
    try:
        import importlib

        return importlib.import_module(name)
    finally:
        sys.path.pop(0)


def _match(black, white, opening) -> float:
    """Black's score in a game between two choose(board, token) functions."""
    board = ref.play_out(*replay(opening), lambda b, t, ms: (black if t == "x" else white)(b, t))
    d = ref.score(board, "x", "winner-takes-empties")
    return 1.0 if d > 0 else 0.0 if d < 0 else 0.5


@pytest.mark.slow
def test_greedy_beats_random_over_many_games():
    """Most flips scores about 0.61 against random (400 games); 0.55 is 2.5 standard deviations below."""
    greedy, rnd = _load("greedy").choose, _load("random_mover").choose
    openings = random_openings(11, 4, 200)
    points = sum(_match(greedy, rnd, o) + 1 - _match(rnd, greedy, o) for o in openings)
    assert points / (2 * len(openings)) >= 0.55


@pytest.mark.slow
def test_negamax_beats_random_over_many_games():
    """The negamax example (a heuristic, then exact below 11 empties) scores about 0.93
    against random; 0.8 is about 4 standard deviations below."""
    negamax, rnd = _load("negamax").choose, _load("random_mover").choose
    openings = random_openings(12, 20, 30)
    points = sum(_match(negamax, rnd, o) + 1 - _match(rnd, negamax, o) for o in openings)
    assert points / (2 * len(openings)) >= 0.8


@pytest.mark.slow
def test_bundled_engines_tournament_end_to_end(tmp_path):
    paths = [str(ROOT / "submissions" / f"{n}.py") for n in ("negamax", "greedy", "random_mover")]
    result = CliRunner().invoke(main, ["tournament", *paths, "--rounds", "3", "--random-openings", "20", "--seed", "5",
                                       "--jobs", "2", "--time-limit", "10", "--out", str(tmp_path / "t"),
                                       "--json", str(tmp_path / "r.json")])  # fmt: skip
    assert result.exit_code == 0, result.output
    data = json.loads((tmp_path / "r.json").read_text())
    assert set(data) == {"format", "standings", "crosstable", "games"}
    assert set(data["standings"][0]) == {"engine", "games", "points", "wins", "draws", "losses", "margin",
                                         "elo", "elo_error", "forfeits", "timeouts", "share"}  # fmt: skip
    assert len(data["games"]) == 18 and sum(s["points"] for s in data["standings"]) == 18
    assert set(data["games"][0]) == {
        "black",
        "white",
        "opening",
        "moves",
        "black_pieces",
        "white_pieces",
        "result",
        "reason",
        "forfeit",
        "margin",
        "host",
    }
    assert all(s["forfeits"] == 0 for s in data["standings"])
    # negamax scores about 0.93 against random: 6 games, 4 points or more (below that: about 0.5%)
    assert data["crosstable"]["negamax"]["random_mover"] >= 4
    records = (tmp_path / "t" / "games.txt").read_text().splitlines()
    assert len(records) == 18
    for line, game in zip(records, data["games"]):
        moves, discs, score = line.split()[:3]
        board, _ = replay(moves)  # every transcript replays by the rules
        assert discs == f"{board.count('x')}-{board.count('o')}" == f"{game['black_pieces']}-{game['white_pieces']}"
        assert score == game["result"]
    lines = result.output.splitlines()
    header = next(i for i, ln in enumerate(lines) if ln.startswith("engine "))
    assert lines[header + 2].startswith("negamax ")  # the standings table, best first


@pytest.mark.slow
def test_resume_after_sigkill_replays_nothing_finished(tmp_path):
    eng = engines(tmp_path, "first")
    shutil.copy(ENGINE, tmp_path / "first_b.py")
    (tmp_path / "openings.txt").write_text("".join(near_the_end(s) + "\n" for s in (5, 6, 7)))  # short games
    cmd = [sys.executable, "-m", "grader", "tournament", "first.py", "first_b.py", "--rounds", "3",
           "--jobs", "1", "--openings", "openings.txt"]  # fmt: skip
    proc = subprocess.Popen([*cmd, "--out", "t"], cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    games = tmp_path / "t" / "games.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (not games.exists() or len(games.read_text().splitlines()) < 2):
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = [json.loads(ln)["id"] for ln in games.read_text().splitlines()]
    assert 2 <= len(before) < 6
    resumed = subprocess.run([sys.executable, "-m", "grader", "tournament", "--resume", "t"], cwd=tmp_path,
                             capture_output=True, text=True)  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
    assert f"({len(before)} games already played)" in resumed.stdout
    after = [json.loads(ln)["id"] for ln in games.read_text().splitlines()]
    assert after[: len(before)] == before and len(after) == len(set(after)) == 6
    subprocess.run([*cmd, "--out", "fresh"], cwd=tmp_path, check=True, capture_output=True)
    resumed_games = json.loads((tmp_path / "t" / "results.json").read_text())["games"]
    fresh_games = json.loads((tmp_path / "fresh" / "results.json").read_text())["games"]
    assert resumed_games == fresh_games
    del eng


def test_tournament_errors(tmp_path):
    shutil.copy(ENGINE, tmp_path / "first.py")
    run = lambda *a: CliRunner().invoke(main, ["tournament", *map(str, a)])  # noqa: E731
    assert run(tmp_path / "first.py").output.strip() == "Error: a tournament needs at least two engines"
    assert run(tmp_path / "first.py", tmp_path / "nope.py").output.strip() == (
        f"Error: engine '{tmp_path / 'nope.py'}' not found: give the path of a script file, builtin:NAME or nboard:COMMAND"
    )
    both = run(tmp_path / "first.py", tmp_path / "first.py", "--openings", "x", "--random-openings", "2")
    assert both.exit_code == 2 and "not both" in both.output
    assert "is not a tournament folder" in run("--resume", tmp_path).output
    with pytest.raises(GraderError, match="bad square 'z9'"):
        parse_transcript("z9")
    with pytest.raises(GraderError, match="bad move sequence 'f5d'"):
        parse_transcript("f5d")


# --- found in review ---------------------------------------------------------------------


def test_game_ids_are_unique_whatever_the_names():
    games = schedule(["a", "b:c", "a:b", "c"], ["f5"], rounds=2)
    assert len({g.id for g in games}) == len(games) == 24


def test_a_forfeit_counts_64_for_the_winner(tmp_path):
    eng = engines(tmp_path, "first", "late")
    game = play(Game("g", "p", 1, "first", "late", ""), eng, settings())
    assert game.forfeit == "late" and game.result == "1-0" and game.margin == 64


def test_a_record_written_with_the_disc_names_still_reads():
    """games.jsonl of a tournament begun before 0.3 (black_discs, white_discs, disc_diff): resumable."""
    old = {"id": "g", "pair": "p", "round": 1, "black": "a", "white": "b", "opening": "", "moves": "f5",
           "black_discs": 40, "white_discs": 24, "result": "1-0", "disc_diff": 16}  # fmt: skip
    game = Game.from_json(old)
    assert (game.black_pieces, game.white_pieces, game.margin) == (40, 24, 16)
    assert Game.from_json(game.to_json()) == game


def test_elo_from_the_points_when_a_pair_is_incomplete():
    games = [g("p1", "a", "b", "1-0"), g("p1", "b", "a", "0-1"), g("p2", "a", "b", "1-0"), g("p2", "b", "a", "1/2-1/2"),
             g("p3", "a", "b", "1-0")]  # fmt: skip
    a = next(s for s in standings(games, ["a", "b"]) if s.engine == "a")
    assert a.points == 4.5 and a.elo == pytest.approx(elo(4.5 / 5))


@pytest.mark.slow
def test_resume_replays_the_games_of_a_changed_engine(tmp_path):
    for name in ("first", "first_b"):
        shutil.copy(ENGINE, tmp_path / f"{name}.py")
    (tmp_path / "openings.txt").write_text(near_the_end(8) + "\n")
    run = lambda *a: CliRunner().invoke(main, ["tournament", *a])  # noqa: E731
    assert run(str(tmp_path / "first.py"), str(tmp_path / "first_b.py"), "--openings", str(tmp_path / "openings.txt"),
               "--out", str(tmp_path / "t"), "--jobs", "1").exit_code == 0  # fmt: skip
    games = tmp_path / "t" / "games.jsonl"
    assert len(games.read_text().splitlines()) == 2
    (tmp_path / "first_b.py").write_text((tmp_path / "first_b.py").read_text() + "\n# changed\n")
    result = run("--resume", str(tmp_path / "t"))
    assert "(0 games already played)" in result.output
    assert len(games.read_text().splitlines()) == 4
    (tmp_path / "first_b.py").unlink()
    gone = run("--resume", str(tmp_path / "t"))
    assert gone.exit_code == 1 and "the script of engine 'first_b'" in gone.output and "is gone" in gone.output


def test_a_perfect_score_ranks_above_equal_points_from_more_games():
    """A gauntlet: u scores 2 of 4, r (only two games, both won) 2 of 2: neither 100% nor 0%
    has a finite Elo, yet r's 100% is the better score and ranks first; 0% ranks last."""
    games = [g("p1", "u", "r", "0-1"), g("p1", "r", "u", "1-0"), g("p2", "u", "z", "1-0"), g("p2", "z", "u", "0-1")]
    rows = standings(games, ["u", "r", "z"])
    assert [(s.engine, s.points, s.elo) for s in rows] == [("r", 2.0, None), ("u", 2.0, 0.0), ("z", 0.0, None)]


def test_more_random_openings_than_there_are_ends_at_all_of_them():
    """Asked for a billion 2-ply openings, the search ends at the 12 there are (4 first moves
    with 3 replies each, counted from the rules), instead of trying 50 billion times."""
    start = OTHELLO.start()
    all_two = {OTHELLO.transcript([m, r]) for m in start.moves() for r in start.play(m).moves()}
    assert sorted(random_openings(3, 2, 10**9)) == sorted(all_two) and len(all_two) == 12


@pytest.mark.slow
def test_resume_names_the_games_that_fail_their_seal(tmp_path):
    shutil.copy(ENGINE, tmp_path / "first.py")
    shutil.copy(ENGINE, tmp_path / "second.py")
    (tmp_path / "openings.txt").write_text(near_the_end(8) + "\n")
    run = lambda *a: CliRunner().invoke(main, ["tournament", *a])  # noqa: E731
    assert run(str(tmp_path / "first.py"), str(tmp_path / "second.py"), "--openings", str(tmp_path / "openings.txt"),
               "--out", str(tmp_path / "t"), "--jobs", "1").exit_code == 0  # fmt: skip
    games = tmp_path / "t" / "games.jsonl"
    lines = games.read_text().splitlines()
    games.write_text("\n".join([lines[0].replace('"id":"', '"id":"x', 1), *lines[1:]]) + "\n")  # its seal fails
    result = run("--resume", str(tmp_path / "t"))
    assert result.exit_code == 0 and "(1 games already played)" in result.output, result.output
    assert f"Warning: 1 record(s) of {games} fail their seal (line 1)" in result.output


def test_an_engine_name_with_a_control_character_is_one_line(tmp_path):
    """A file name holding a newline would forge a line in games.txt and split a GGF record."""
    evil = tmp_path / "evil\n1-0 ; black x.py"
    shutil.copy(ENGINE, evil)
    result = CliRunner().invoke(main, ["tournament", str(evil), "builtin:greedy", "--out", str(tmp_path / "t")])
    assert result.exit_code == 1 and not (tmp_path / "t").exists(), result.output
    assert result.output == (
        "Error: engine name 'evil\\n1-0 ; black x' holds a control character, which would break the records "
        "and tables: rename its file (or name it in config.yaml's engines:)\n"
    )


@pytest.mark.slow  # a match of real games: 5 s
def test_a_four_game_match_of_even_pairs_shows_no_error_bar_and_its_elo_is_labelled_logistic(tmp_path):
    """Two pairs each split 1-1: the spread of the pairs is unknown, so no '+0 ±0' but n/a; the
    table and report.html say the standings' Elo is logistic."""
    assert elo_interval([0.5, 0.5]) == (0.0, None)
    out = CliRunner().invoke(main, ["tournament", "builtin:greedy", "builtin:random_mover", "--rounds", "2",
                                    "--seed", "1", "--out", str(tmp_path / "t")])  # fmt: skip
    assert out.exit_code == 0, out.output
    rows = standings(_even_games(), ["a", "b"])
    table = standings_table(rows)
    assert "Elo (logistic)" in table and all(line.split()[7:9] == ["+0", "n/a"] for line in table.splitlines()[2:])
    assert "<th>Elo (logistic)</th>" in (tmp_path / "t" / "report.html").read_text()
    assert "Elo (logistic)" in out.output


def _even_games() -> list:
    """Four games, two pairs, each pair won once by each engine."""
    return [Game(f"g{i}", f"p{i // 2}", 1, *("ab" if i % 2 == 0 else "ba"), "", result="1-0",
                       reason="normal") for i in range(4)]  # fmt: skip
