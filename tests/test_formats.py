"""Tournament formats (gauntlet, Swiss, SPRT), disc-share grades, GGF records, resume, the CLI.

Expected values come a second way: Swiss pairings and tie-breaks worked out by hand, the SPRT's
stopping point from the pentanomial counts, GGF results replayed by the reference rules.
"""

import csv
import dataclasses
import io
import json
import random
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.cli import main
from grader.errors import BoardFileError, GraderError
from grader.games import ggf
from grader.games.othello import OTHELLO
from grader.limits import Limits
from grader.tournaments.folder import TournamentFolder
from grader.tournaments.formats import Format, SprtSettings, fixed_schedule
from grader.tournaments.games import GameRecord
from grader.tournaments.grades import grade_by_share
from grader.tournaments.openings import read_openings
from grader.tournaments.settings import TournamentSettings
from grader.tournaments.sprt import Pentanomial, llr, sprt_bounds
from grader.tournaments.tournament import run_tournament

import reference as ref

ENGINE = Path(__file__).parent / "scripts" / "engine.py"


def engine(tmp_path, name):
    path = tmp_path / f"{name}.py"
    shutil.copy(ENGINE, path)
    return path


def settings(game="othello", limit=5.0, **kw):
    return TournamentSettings(limits=Limits(wall_seconds=limit), jobs=2, game=game, **kw)


def near_end(seed, empties=5):
    """A transcript leaving about ``empties`` squares, from random play by the reference rules."""
    rng = random.Random(seed)
    while True:
        board, tok, moves = ref.START, "x", []
        while board.count(".") > empties:
            ms = ref.moves(board, tok)
            if not ms:
                tok = ref.other(tok)
                if not ref.moves(board, tok):
                    break
                continue
            moves.append(rng.choice(ms))
            board, tok = ref.play(board, tok, moves[-1]), ref.other(tok)
        if board.count(".") == empties and (ref.moves(board, tok) or ref.moves(board, ref.other(tok))):
            return OTHELLO.transcript(moves)


def fake(id, pair, rnd, black, white, opening, result):
    return GameRecord(id, pair, rnd, black, white, opening, result=result)


# --- gauntlet ---------------------------------------------------------------------------


def test_gauntlet_schedule_plays_only_the_opponents():
    fmt = Format("gauntlet", rounds=2, opponents=("r1", "r2"))
    games = fixed_schedule(fmt, ["a", "b", "c", "r1", "r2"], ["f5", "d3"], GameRecord)
    assert len(games) == 2 * 3 * 2 * 2 == fmt.planned_games(5)
    met = {frozenset((g.black, g.white)) for g in games}
    assert met == {frozenset((p, o)) for p in "abc" for o in ("r1", "r2")}
    for first, second in zip(games[::2], games[1::2]):  # colour-swapped pairs on one opening
        assert first.pair == second.pair and (first.black, first.white) == (second.white, second.black)
        assert first.opening == second.opening
    assert {g.opening for g in games if g.round == 2} == {"d3"}


@pytest.mark.parametrize("fmt, engines, message", [
    (Format("gauntlet"), ["a", "b"], "a gauntlet needs opponents: give --opponents SCRIPT"),
    (Format("sprt", sprt=SprtSettings(0, 5, 100)), ["a", "b", "c"], "SPRT is between exactly two engines; got 3"),
    (Format("sprt", sprt=SprtSettings(5, 5, 100)), ["a", "b"], "SPRT needs ELO0 < ELO1; got 5 and 5"),
    (Format("sprt", sprt=SprtSettings(0, 5, 1)), ["a", "b"], "SPRT needs --max-games of at least 2"),
])  # fmt: skip
def test_bad_formats(fmt, engines, message):
    with pytest.raises(GraderError, match=message.replace("(", r"\(")):
        fmt.check(engines)


# --- Swiss, by hand ------------------------------------------------------------------------


def play_swiss(fmt, engines, strength):
    """Drive a Swiss planner: the stronger engine (earlier in ``strength``) wins every game."""
    planner = fmt.planner(engines, ["f5"], lambda *a: a)
    rounds = []
    while games := planner.more(0):
        rounds.append(sorted({tuple(sorted(g[3:5], key=strength.index)) for g in games}))
        for id, pair, rnd, black, white, opening in games:
            result = "1-0" if strength.index(black) < strength.index(white) else "0-1"
            planner.add(fake(id, pair, rnd, black, white, opening, result))
    planner.finish()
    return planner, rounds


def test_swiss_four_engines_by_hand():
    # R1 (all on 0): a meets the bottom half of the group, c; b meets d. a, b win: a2 b2 c0 d0.
    # R2: a-b (the 2-point group), c-d. After: a4 b2 c2 d0. R3: a has met b and c: a-d; b-c.
    # Final: a 6, b 4, c 2, d 0. Buchholz (opponents' final points): a c+b+d = 6, b d+a+c = 8,
    # c a+d+b = 10, d b+c+a = 12. Sonneborn-Berger (share won x their points): a 2+4+0 = 6,
    # b 0+0+2 = 2, c 0, d 0. A 4th round would be a rematch: stopped early.
    planner, rounds = play_swiss(Format("swiss", rounds=4), ["a", "b", "c", "d"], "abcd")
    assert rounds == [[("a", "c"), ("b", "d")], [("a", "b"), ("c", "d")], [("a", "d"), ("b", "c")]]
    rows = [(s.engine, s.points, s.buchholz, s.sonneborn_berger) for s in planner.standings()]
    assert rows == [("a", 6, 6, 6), ("b", 4, 8, 2), ("c", 2, 10, 0), ("d", 0, 12, 0)]
    assert planner.stopped_early.startswith("round 4 cannot be paired")


def test_swiss_bye_for_an_odd_count_once_each_scored_as_a_win():
    # R1: e (lowest) has the bye (2 points); a-c, b-d: a2 b2 e2 c0 d0. R2: d, the lowest without
    # a bye, has it; a-b, then e meets c (e's score group alone: it floats to c).
    planner, rounds = play_swiss(Format("swiss", rounds=5), ["a", "b", "c", "d", "e"], "abcde")
    byes = [r.bye for r in planner.state.rounds]
    assert byes[:2] == ["e", "d"] and rounds[0] == [("a", "c"), ("b", "d")] and rounds[1] == [("a", "b"), ("c", "e")]
    assert len(byes) == len(set(byes)) == 5 and planner.stopped_early is None  # 5 rounds: each its one bye
    points = {s.engine: s.points for s in planner.standings()}
    assert sum(points.values()) == 5 * 2 * 2 + 5 * 2  # 2 pairs x 2 points + a bye of 2, per round
    assert points["a"] == 8 + 2  # wins all 4 pairs, and its bye


# --- SPRT -------------------------------------------------------------------------------


def test_sprt_planner_stops_at_the_first_pair_over_a_bound():
    fmt = Format("sprt", sprt=SprtSettings(0, 200, max_games=100))
    planner = fmt.planner(["a", "b"], ["f5", "d3"], lambda *a: a)
    upper = sprt_bounds(0.05, 0.05)[1]
    expected = next(k for k in range(1, 50) if llr(Pentanomial(ww=k), 0, 200) >= upper)  # 7 pairs
    pairs = 0
    while games := planner.more(0):
        for id, pair, rnd, black, white, opening in games:
            planner.add(fake(id, pair, rnd, black, white, opening, "1-0" if black == "a" else "0-1"))
        pairs += 1
    assert expected == 7 and pairs == expected
    s = planner.summary().to_json()
    assert s["decision"] == "H1" and s["pentanomial"] == [0, 0, 0, 0, 7] and s["games"] == 14


def test_sprt_stops_at_the_game_limit_undecided():
    planner = Format("sprt", sprt=SprtSettings(-5, 5, max_games=7)).planner(["a", "b"], ["f5"], lambda *a: a)
    handed = 0
    while games := planner.more(0):
        handed += len(games)
        for n, (id, pair, rnd, black, white, opening) in enumerate(games):
            planner.add(fake(id, pair, rnd, black, white, opening, "1-0" if n == 0 else "1/2-1/2"))
    assert handed == 6 and planner.summary().to_json()["decision"] is None  # 3 pairs: 7 games hold no 4th pair
    assert planner.summary().to_json()["pentanomial"] == [0, 0, 0, 3, 0]  # a: a win and a draw each pair


@pytest.mark.slow
def test_sprt_end_to_end_with_real_engines(tmp_path):
    # 'crash' forfeits every game: 'first' wins every pair, H1 at the 7th pair (as above).
    result = run_tournament([engine(tmp_path, "first"), engine(tmp_path, "crash")], settings=settings(),
                            format=Format("sprt", sprt=SprtSettings(0, 200, max_games=40)), out=tmp_path / "t", seed=1)  # fmt: skip
    assert result.sprt.to_json()["decision"] == "H1" and result.sprt.to_json()["pentanomial"] == [0, 0, 0, 0, 7]
    assert result.sprt.to_json()["llr"] == pytest.approx(llr(Pentanomial(ww=7), 0, 200))
    assert 14 <= len(result.games) <= 16  # games running at the decision end and are kept
    saved = json.loads((tmp_path / "t" / "results.json").read_text())
    assert saved["sprt"]["decision"] == "H1" and saved["format"] == "sprt"


# --- share and grades ------------------------------------------------------------------------


def test_grade_by_share_thresholds():
    thresholds = [(20, 20), (30, 40), (50, 100)]
    assert [grade_by_share(s, thresholds) for s in (None, 0.1, 0.2, 0.299, 0.3, 0.49, 0.5, 1.0)] == [
        0,
        0,
        20,
        20,
        40,
        40,
        100,
        100,
    ]


def test_gauntlet_grade_end_to_end(tmp_path):
    first, second, ref_engine = engine(tmp_path, "first"), engine(tmp_path, "first_b"), engine(tmp_path, "illegal")
    openings = tmp_path / "o.txt"
    openings.write_text(near_end(3) + "\n")
    config = tmp_path / "c.yaml"
    config.write_text("tournament:\n  grade: [[10, 50], [60, 100]]\n")
    result = CliRunner().invoke(main, ["tournament", str(first), str(second), "--format", "gauntlet", "--opponents", str(ref_engine),
                                       "--grade", "--openings", str(openings), "--out", str(tmp_path / "t"), "--config", str(config),
                                       "--jobs", "2", "--json", str(tmp_path / "r.json")])  # fmt: skip
    assert result.exit_code == 0, result.output
    data = json.loads((tmp_path / "r.json").read_text())
    games = data["games"]
    assert len(games) == 4 and not any({g["black"], g["white"]} == {"first", "first_b"} for g in games)

    # The share by hand: each engine's discs over all discs at its games' ends; a forfeit as
    # its disc difference, 64-0 (here the reference forfeits every game: its share is 0).
    def pieces(g, name):
        if g["forfeit"]:
            return 0 if g["forfeit"] == name else 64
        return g["black_pieces"] if g["black"] == name else g["white_pieces"]

    assert all(g["forfeit"] == "illegal" and abs(g["margin"]) == 64 for g in games)
    for s in data["standings"]:
        mine = sum(pieces(g, s["engine"]) for g in games if s["engine"] in (g["black"], g["white"]))
        total = sum(64 for g in games if s["engine"] in (g["black"], g["white"]))
        assert s["share"] == pytest.approx(mine / total, abs=1e-4)
    assert {s["engine"]: s["share"] for s in data["standings"]} == {"first": 1.0, "first_b": 1.0, "illegal": 0.0}
    rows = list(csv.DictReader(io.StringIO((tmp_path / "t" / "grades.csv").read_text())))
    assert [r["name"] for r in rows] == ["first", "first_b"]  # the opponent is not graded
    for r in rows:
        share = next(s["share"] for s in data["standings"] if s["engine"] == r["name"])
        assert r["total"] == ("100" if share >= 0.6 else "50" if share >= 0.1 else "0") and r["complete"] == "yes"
    assert "grade /100" in result.output


@pytest.mark.slow
def test_sprt_resume_counts_pairs_in_the_order_they_ended(tmp_path):
    """Pairs that ended out of schedule order: p2..p8 won by 'first' (H1 at the 7th pair),
    then p1 lost, after the decision (played, not counted). A resume counts them as they
    ended: the same decision and counts, nothing played; in schedule order p1 would count."""
    out = tmp_path / "t"
    first = run_tournament([engine(tmp_path, "first"), engine(tmp_path, "crash")], settings=settings(),
                           format=Format("sprt", sprt=SprtSettings(0, 200, max_games=40)), out=out, seed=1)  # fmt: skip
    won = {g.black: g for g in first.games if g.pair == "p1"}  # 'first' wins with either colour ('crash' forfeits)
    assert {g.forfeit for g in first.games} == {"crash"} and len(won) == 2

    def pair(k, lost=False):
        games = [
            dataclasses.replace(won[b], id=f"p{k}:{n}", pair=f"p{k}", round=k) for n, b in ((1, "first"), (2, "crash"))
        ]
        for g in games if lost else []:
            g.forfeit, g.result, g.margin = "first", ("0-1" if g.black == "first" else "1-0"), -g.margin
        return games

    folder = TournamentFolder.open(out)
    (out / "games.jsonl").write_text("")
    for g in [g for k in range(2, 9) for g in pair(k)] + pair(1, lost=True):
        folder.append(g)
    again = run_tournament(resume=out)
    assert again.sprt.to_json()["decision"] == "H1" and again.sprt.to_json()["pentanomial"] == [0, 0, 0, 0, 7]
    assert again.sprt.to_json()["llr"] == pytest.approx(llr(Pentanomial(ww=7), 0, 200))
    assert [g.id for g in again.games] == [f"p{k}:{n}" for k in range(1, 9) for n in (1, 2)]  # none played again
    assert len((out / "games.jsonl").read_text().splitlines()) == 16


@pytest.mark.parametrize("args, message", [
    (["--format", "gauntlet"], "Error: a gauntlet needs opponents: give --opponents SCRIPT (one or more)"),
    (["--sprt", "0", "5", "--max-games", "10", "{c}"], "Error: SPRT is between exactly two engines; got 3"),
    (["--sprt", "5", "0", "--max-games", "10"], "Error: SPRT needs ELO0 < ELO1; got 5 and 0"),
    (["--sprt", "0", "5"], "Error: --sprt needs --max-games N: the most games to play undecided"),
    (["--grade"], "Error: --grade grades a gauntlet: give --format gauntlet --opponents REFERENCE..."),
    (["--opening-plies", "4"], "Error: --opening-plies cuts the openings of --openings FILE: give the file too"),
    (["--opponents", "{c}"], "Error: --opponents is for --format gauntlet (the engines given play only them)"),
    (["--alpha", "0.1"], "Error: --max-games, --alpha and --beta are for --sprt"),
    (["--sprt", "0", "5", "--max-games", "10", "--rounds", "3"], "Error: --rounds is not for --sprt"),
    (["--sprt", "0", "300", "--max-games", "10"], "Error: SPRT bounds 0 and 300: too far from 0 for the model"),
    (["--sprt", "-inf", "5", "--max-games", "10"], "Error: SPRT bounds -inf and 5: elo0 and elo1 must be finite numbers"),
    (["--game", "tictactoe", "--random-openings", "9"], "Error: no random opening of 9 moves: every Tic-tac-toe game tried ended sooner"),
])  # fmt: skip
def test_cli_bad_format_input_is_one_line(tmp_path, args, message):
    a, b, c = engine(tmp_path, "first"), engine(tmp_path, "first_b"), engine(tmp_path, "first_c")
    result = CliRunner().invoke(
        main, ["tournament", str(a), str(b), *[x.format(c=c) for x in args], "--out", str(tmp_path / "t")]
    )
    assert result.exit_code in (1, 2) and message in result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "t").exists()  # refused before anything is made


def test_cli_resume_takes_no_format_options(tmp_path):
    for extra in (["--rounds", "2"], ["--alpha", "0.1"]):
        result = CliRunner().invoke(main, ["tournament", "--resume", str(tmp_path / "t"), *extra])
        assert result.exit_code == 2 and "--resume continues a tournament with its own engines" in result.output


# --- GGF --------------------------------------------------------------------------------


def reference_result(board_x, moves, tok):
    """Replay GGF moves by the reference rules; the winner-takes-empties disc difference for x."""
    board = board_x
    for colour, sq in moves:
        if sq is None:  # PA
            assert not ref.moves(board, tok)
            tok = ref.other(tok)
            continue
        assert tok == ("x" if colour == "B" else "o") and sq in ref.moves(board, tok)
        board, tok = ref.play(board, tok, sq), ref.other(tok)
    assert not ref.moves(board, "x") and not ref.moves(board, "o")  # the game is over
    x, o, empty = board.count("x"), board.count("o"), board.count(".")
    return x - o + (empty if x > o else -empty if o > x else 0)


@pytest.mark.slow
def test_ggf_records_replay_to_their_results(tmp_path):
    # A pass near the end, a forfeit ('illegal'), a crash: every record replays to its RE.
    eng = [engine(tmp_path, n) for n in ("first", "first_b", "illegal")]
    openings = tmp_path / "o.txt"
    openings.write_text("".join(near_end(s) + "\n" for s in (1, 2)))
    result = run_tournament(eng, settings=settings(), openings=read_openings(openings, OTHELLO), rounds=2,
                            out=tmp_path / "t", seed=1)  # fmt: skip
    text = (tmp_path / "t" / "games.ggf").read_text()
    records = ggf.parse_records(text)
    assert len(records) == len(result.games) == 12 and len(text.splitlines()) == 12
    forfeits = 0
    for (_, props, moves), game in zip(records, result.games):
        assert (
            props["GM"] == "Othello" and props["TY"] == "8" and props["PB"] == game.black and props["PW"] == game.white
        )
        fields = props["BO"].split()
        board = "".join(fields[1:9]).replace("*", "x").replace("O", "o").replace("-", ".")
        assert OTHELLO.replay(OTHELLO.parse_transcript(game.opening)).board_string() == board
        parsed = [(c, None if v == "PA" else OTHELLO.parse_square(v.split("/")[0])) for c, v in moves]
        value, _, flag = props["RE"].partition(":")
        if game.forfeit:
            forfeits += 1
            assert flag == "r" and float(value) == (64 if game.forfeit == game.white else -64)
            ggf.replay(props, moves, OTHELLO)  # the moves before the forfeit are legal
        else:
            assert flag == "" and float(value) == reference_result(board, parsed, "x" if fields[-1] == "*" else "o")
        assert all(v.count("/") == 2 for _, v in moves if v != "PA")  # B[f5/eval/seconds]
    assert forfeits == 8  # 'illegal' loses all its games


def test_openings_from_ggf_obf_and_ffo(tmp_path):
    game = "(;GM[Othello]PC[x]PB[a]PW[b]RE[+2.000]TY[8]BO[8 -------- -------- -------- ---O*--- ---*O--- -------- -------- -------- *]B[f5//1]W[d6]B[c3/0.5/];)\n"
    f = tmp_path / "o.ggf"
    f.write_text(game * 2)
    assert read_openings(f, OTHELLO) == ["f5d6c3", "f5d6c3"]
    assert read_openings(f, OTHELLO, plies=2) == ["f5d6", "f5d6"]
    f.write_text(game.replace("W[d6]", "W[d7]"))
    with pytest.raises(BoardFileError, match=r"o.ggf:1: d7 is not legal there \(o to move\)"):
        read_openings(f, OTHELLO)
    obf = tmp_path / "o.obf"
    board = OTHELLO.replay(OTHELLO.parse_transcript("f5d6c3")).board_string()
    obf.write_text(board.replace("x", "X").replace("o", "O").replace(".", "-") + " O; d3:+4;\n")
    assert read_openings(obf, OTHELLO) == [f"{board} o"]
    full = tmp_path / "full.obf"
    full.write_text("X" * 64 + " O;\n")
    with pytest.raises(BoardFileError, match=r"full.obf:1: the game is over after it"):
        read_openings(full, OTHELLO)


@pytest.mark.slow
def test_cli_openings_from_an_earlier_tournaments_ggf_cut_to_plies(tmp_path):
    """games.ggf holds whole games from their BO position (after their opening): with
    --opening-plies 6 the new openings are those positions 6 moves on."""
    a, b = engine(tmp_path, "first"), engine(tmp_path, "first_b")
    common = ["tournament", str(a), str(b), "--time-limit", "5", "--jobs", "2"]
    first = CliRunner().invoke(main, [*common, "--random-openings", "8", "--seed", "3", "--out", str(tmp_path / "t1")])
    assert first.exit_code == 0, first.output
    whole = CliRunner().invoke(
        main, [*common, "--openings", str(tmp_path / "t1" / "games.ggf"), "--out", str(tmp_path / "t2")]
    )
    assert whole.exit_code == 1 and "games.ggf:1: the game is over after it (give fewer plies)" in whole.output
    cut = CliRunner().invoke(main, [*common, "--openings", str(tmp_path / "t1" / "games.ggf"), "--opening-plies", "6",
                                    "--out", str(tmp_path / "t3")])  # fmt: skip
    assert cut.exit_code == 0, cut.output
    earlier = [g["moves"] for g in map(json.loads, (tmp_path / "t1" / "games.jsonl").read_text().splitlines())]
    openings = {g["opening"] for g in map(json.loads, (tmp_path / "t3" / "games.jsonl").read_text().splitlines())}
    on = [OTHELLO.replay(OTHELLO.parse_transcript(m)[: 8 + 6]) for m in earlier]
    assert openings == {f"{p.board_string()} {p.token}" for p in on} and len(on) == 2


# --- resume and plugins -----------------------------------------------------------------------


@pytest.mark.slow
def test_swiss_with_tictactoe_stops_early_and_resumes(tmp_path):
    names = ["builtin:minimax", "builtin:first_empty", "builtin:can_lose"]
    out = tmp_path / "t"
    ttt = settings("tictactoe")
    first = run_tournament(names, settings=ttt, format="swiss", rounds=4, out=out, seed=2)
    assert first.stopped_early and first.stopped_early.startswith("round 4 cannot be paired")
    assert len(first.games) == 6 and sorted(first.to_json()["swiss"][i]["engine"] for i in range(3)) == [
        "can_lose",
        "first_empty",
        "minimax",
    ]
    byes = {e.name: 3 - sum(g.black == e.name or g.white == e.name for g in first.games) // 2 for e in first.engines}
    assert byes == {"minimax": 1, "first_empty": 1, "can_lose": 1}  # 3 rounds, 2 pairs each: one bye each
    assert not (out / "games.ggf").exists() and (out / "report.html").exists()  # GGF is Othello's
    lines = (out / "games.jsonl").read_text().splitlines()
    (out / "games.jsonl").write_text("\n".join(lines[:3]) + "\n")  # as if interrupted after 3 games
    again = run_tournament(resume=out)
    assert [g.summary() for g in again.games] == [g.summary() for g in first.games]
    assert [(s.engine, s.points, s.buchholz) for s in again.swiss.standings] == [
        (s.engine, s.points, s.buchholz) for s in first.swiss.standings
    ]
    assert len((out / "games.jsonl").read_text().splitlines()) == 6
