"""Reading a script's output: every form real scripts print (issue 3's list)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grader.engines.parse import HUGE, OutputScanner, integers, parse_output

SEQ = "[15, -1, 14, -1, 7, -1, 33, 25, 51]"
FORWARD = (51, 25, 33, -1, 7, -1, 14, -1, 15)


@pytest.mark.parametrize(
    "output, score, line, move",
    [
        ("Min score: 18; move sequence: [15, -1, 7, -1, 14, -1, 51]", 18, (51, -1, 14, -1, 7, -1, 15), 51),
        (f"Min Score: 20; move sequence: {SEQ}", 20, FORWARD, 51),
        (f"Negamax score: 20; Move Sequence: {SEQ}", 20, FORWARD, 51),
        (f"min score: 20 list of moves: {SEQ}", 20, FORWARD, 51),  # no semicolon
        ("min score: 20 list of moves: [[[[15, -1], 14, -1], 7, -1], 33, 25, 51]", 20, FORWARD, 51),  # nested
        ("Min score: 20; move sequence: 15 -1 14 -1 7 -1 33 25 51", 20, FORWARD, 51),  # no brackets
        ("Min score: 20; move sequence: [15, 14, 7, 33, 25, 51]", 20, (51, 25, 33, 7, 14, 15), 51),  # passes left out
        ("score -48 14 -1 63 55 7 31", -48, (31, 7, 55, 63, -1, 14), 31),  # negative score
        ("SCORE 3 9", 3, (9,), 9),
        ("score: 5", 5, (), 5),  # a score and no line
    ],
)
def test_score_line_forms(output, score, line, move):
    claim = parse_output(output + "\n")
    assert (claim.score, claim.line, claim.move) == (score, line, move)
    assert parse_output(output).score == score  # no final newline: the same


def test_several_score_lines_the_last_counts():
    out = "score 10 7 3\nMin score: 14; move sequence: [9, 3]\nscore 18 51 14 7\n"
    claim = parse_output(out)
    assert (claim.score, claim.line, claim.move) == (18, (7, 14, 51), 7)
    assert claim.score_text == "score 18 51 14 7"


def test_move_printed_before_the_score_line_the_last_integer_decides():
    claim = parse_output("My move is 7\nMin score: 18; move sequence: [15, -1, 7, -1, 14, -1, 51]\n")
    assert claim.move == 51
    claim = parse_output("Min score: 18; move sequence: [15, -1, 7, -1, 14, -1, 51]\nMy move is 7\n")
    assert (claim.move, claim.move_text, claim.score) == (7, "My move is 7", 18)


@pytest.mark.parametrize("timing", ["Elapsed time: 0.0023", "Time taken: 3.37", "took .5s", "0.0105"])
def test_timing_after_the_score_line_holds_no_integer(timing):
    claim = parse_output(f"score 18 15 7 51\n{timing}\n")
    assert (claim.score, claim.move) == (18, 51)


def test_score_word_without_integer_is_not_a_score_line():
    claim = parse_output("score 18 15 51\nI could not compute the score\nbest 51\n")
    assert claim.score == 18
    assert parse_output("final score: unknown\nMy move is 7\n").score is None
    assert parse_output("final score: unknown\nMy move is 7\n").move == 7


def test_score_word_with_only_a_decimal_is_not_a_score_line():
    assert parse_output("score 0.5\nmove 9\n").score is None


def test_board_echoed_in_upper_case_and_disc_counts():
    board = "XXXXXXO.XXXXXO..XXOOOOOOXOXXOOOOXOXXOOOOXXXOXOOOXXO.OXOOXOOOOOOO"
    out = f"{board} 27/31\nPossible moves for x: 7, 14, 51\nMy move is 51\n"
    claim = parse_output(out)
    assert claim.score is None and claim.move == 51
    assert parse_output(f"{board} 27/31\n").move == 31  # '27/31' holds two integers


def test_a_date_counts_as_integers_as_the_spec_warns():
    claim = parse_output("score 18 51\nFinished 2021-12-14\n")
    assert claim.move == -14  # the date's last number, negative: not a legal move
    assert parse_output("score 18 51\nFinished Dec 14 2021\n").move == 2021


@pytest.mark.parametrize(
    "text, expected",
    [
        ("a -48 b", [-48]),
        ("0.0105", []),
        ("1.5 2 .75 3.", [2, 3]),
        ("27/31", [27, 31]),
        ("[[15, -1], 14]", [15, -1, 14]),
        ("d7", [7]),
        ("15-1", [15, -1]),
        ("", []),
    ],
)
def test_integers(text, expected):
    assert integers(text) == expected


def test_no_output_and_no_integer():
    assert parse_output("").move is None
    claim = parse_output("thinking...\nno idea\n")
    assert (claim.score, claim.move, claim.line) == (None, None, ())


def test_crlf_line_ends():
    claim = parse_output("score 18 15 51\r\nElapsed 0.1\r\n")
    assert (claim.score, claim.line, claim.move) == (18, (51, 15), 51)


def test_invalid_utf8_and_binary():
    claim = parse_output(b"\xff\xfe garbage \x00\x01\nscore 4 \xc3( 9 8\n\x80\x81")
    assert (claim.score, claim.line, claim.move) == (4, (8, 9), 8)


def test_very_long_integers_are_huge_not_an_error():
    claim = parse_output("score 18 " + "7" * 10000 + "\n")
    assert claim.score == 18 and claim.move > 10**17
    assert parse_output("-" + "9" * 5000).move < -(10**17)


def test_a_gigantic_line_without_newline_is_scanned_in_constant_memory():
    scanner = OutputScanner()
    chunk = b"9 " * 50_000
    scanner.feed(b"Min score: 12; move sequence: ")
    for _ in range(100):  # 10 MB on one line
        scanner.feed(chunk)
        assert len(scanner._pending) < 70_000 and len(scanner._ints) <= 600
    scanner.feed(b"33")
    claim = scanner.claim()
    assert claim.score == 12 and claim.move == 33 and claim.line[0] == 33
    assert len(claim.score_text) <= 200


def test_score_word_split_across_pieces():
    scanner = OutputScanner()
    for piece in (b"x" * 70_000 + b" sc", b"ore 5 ", b"6\n"):
        scanner.feed(piece)
    assert scanner.claim().score == 5


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_claim_does_not_depend_on_how_output_is_split(data):
    lines = data.draw(
        st.lists(
            st.sampled_from(
                ["Min score: 18; move sequence: [15, -1, 7, -1, 14, -1, 51]", "My move is 7", "Elapsed time: 0.0105",
                 "score -3 12 -1 44", "27/31", "ünïcödé 5", "score: none", ""]
            ),
            max_size=8,
        )
    )  # fmt: skip
    raw = "\n".join(lines).encode()
    cuts = sorted(data.draw(st.lists(st.integers(0, len(raw)), max_size=6)))
    scanner = OutputScanner()
    for a, b in zip([0] + cuts, cuts + [len(raw)]):
        scanner.feed(raw[a:b])
    assert scanner.claim() == parse_output(raw)


# --- cases found in review ----------------------------------------------------------

HANDOUT_LINE = "Min score: 18; move sequence: [15, -1, 7, -1, 14, -1, 51]"


def test_many_passes_cannot_push_moves_out():
    claim = parse_output("score 18 15 -1 7 -1 14 " + "-1 " * 400 + "51\n")
    assert [m for m in claim.line if m >= 0] == [51, 14, 7, 15]
    scanner = OutputScanner()  # the same on one enormous line fed in pieces
    scanner.feed(b"score 18 15 -1 7 -1 14 ")
    for _ in range(100):
        scanner.feed(b"-1 " * 1000)
    scanner.feed(b"51")
    assert [m for m in scanner.claim().line if m >= 0] == [51, 14, 7, 15]


def test_leading_zeros_are_not_huge():
    claim = parse_output("Min score: 18; move sequence: [15, -1, 7, -1, 14, -1, 000000000000000000000051]")
    assert claim.move == 51
    assert parse_output("0" * 5000 + "7").move == 7


def test_a_long_line_is_never_cut_inside_a_number():
    scanner = OutputScanner()
    scanner.feed(b"score:3;" + b"x" * 70000 + b"7.5" + b"y" * 29)
    scanner.feed(b"z")
    claim = scanner.claim()
    assert (claim.score, claim.line, claim.move) == (3, (), 3)
    scanner = OutputScanner()  # an enormous run of digits is one enormous number
    scanner.feed(b"score 5 " + b"1" * 200_000)
    scanner.feed(b"2 ok")
    assert scanner.claim().move > 10**17


def test_only_ascii_counts():
    assert parse_output("ſcore 5 7\n").score is None  # the long s is not an s
    assert parse_output("x\nſcore 5 7\ny\n").score is None
    assert parse_output("score \u0665 9\n").score == 9  # an Arabic-Indic five is not a digit


@pytest.mark.parametrize("timing", ["Time: 2.1e-05", "took 1e-05 s", "1.5E-7", "3.2e+16", ".5e3", "1.e5"])
def test_scientific_notation_is_a_decimal(timing):
    claim = parse_output(f"{HANDOUT_LINE}\n{timing}\n")
    assert (claim.score, claim.move) == (18, 51)


def _tokenize(text: str) -> list[int]:
    """The rule read naively: numbers left to right, keep those without '.' or an exponent."""
    import re

    tokens = re.findall(r"-?(?:[0-9]+\.?[0-9]*|\.[0-9]+)[eE][-+]?[0-9]+|-?[0-9]*\.[0-9]+|-?[0-9]+", text)
    values = [int(m) for m in tokens if re.fullmatch(r"-?[0-9]+", m)]
    return [v if abs(v) < HUGE else HUGE if v > 0 else -HUGE for v in values]  # beyond 18 digits: HUGE


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="0123456789.-+eEx \n", max_size=40))
def test_integers_match_the_naive_reading(text):
    assert integers(text) == _tokenize(text)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="0123456789.-+eE score\n", max_size=60))
def test_last_integer_and_score_line_match_the_naive_reading(text):
    claim = parse_output(text)
    ints = [i for line in text.split("\n") for i in _tokenize(line)]
    assert claim.move == (ints[-1] if ints else None)
    score_lines = [ln for ln in text.split("\n") if "score" in ln.lower() and _tokenize(ln)]
    assert claim.score == (_tokenize(score_lines[-1])[0] if score_lines else None)
