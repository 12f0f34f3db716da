"""Reading output at a pipe's speed: whole lines are read as bytes from the end of each block,
a long line in pieces, and the claim is the spec's whatever the blocks (bench/grading.py
prints the speed)."""

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from grader.engines.parse import OutputScanner, parse_output

# The spec's rules read the simple way, line by line (shared/spec/endgame-lab.md): numbers left
# to right, only integers count; the score line is the last line holding 'score' and an integer.
NUMBERS = re.compile(rb"-?(?:\d+(?:\.\d*)?|\.\d+)[eE][-+]?\d+|-?\d*\.\d+|-?\d+")


def by_the_rules(raw: bytes) -> tuple[int | None, tuple[int, ...], int | None]:
    """(score, line in forward order, move) of ``raw``, for lines of few integers."""
    score, line, move = None, (), None
    for text in raw.split(b"\n"):
        found = [int(n) for n in NUMBERS.findall(text) if re.fullmatch(rb"-?\d+", n)]
        if found:
            move = found[-1]
            if b"score" in text.lower():
                score, line = found[0], tuple(reversed(found[1:]))
    return score, line, move


LINES = [b"Min score: 18; move sequence: [15, -1, 7, -1, 14, -1, 51]", b"My move is 7", b"Elapsed time: 0.0105",
         b"SCORE -3 12 -1 44", b"27/31", "\u00fcn\u00efc\u00f6d\u00e9 5 \u00e9".encode(), b"score: none 2.5e-3",
         b"", b"\xff\xfe\xc3 9 \xe2\x82", b"x" * 70_000 + b" score 6 33", b"y" * 70_000 + b" 1.5", b"4 " + b"z" * 70_000,
         b"scor", b"e 8 9"]  # fmt: skip


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_the_claim_is_the_rules_whatever_the_blocks(data):
    raw = b"\n".join(data.draw(st.lists(st.sampled_from(LINES), max_size=10)))
    if data.draw(st.booleans()):
        raw += b"\n"
    cuts = sorted(data.draw(st.lists(st.integers(0, len(raw)), max_size=8)))
    scanner = OutputScanner()
    for a, b in zip([0, *cuts], [*cuts, len(raw)]):
        scanner.feed(raw[a:b])
    claim = scanner.claim()
    assert (claim.score, claim.line, claim.move) == by_the_rules(raw)
    assert claim == parse_output(raw)  # the text shown too


def test_a_flood_keeps_only_its_last_score_line_and_integer():
    scanner = OutputScanner()
    block = b"score 12 34 56 78 90\n" * 3000
    for i in range(200):  # 12 MB in blocks of a pipe's size, each ending inside a line
        scanner.feed(block + b"score 1 2 " if i < 199 else block + b"Elapsed 0.1 s; my move: 44 ... ")
    claim = scanner.claim()
    assert (claim.score, claim.line, claim.move) == (12, (90, 78, 56, 34), 44)
    assert claim.score_text == "score 12 34 56 78 90" and claim.move_text.startswith("Elapsed 0.1 s; my move: 44")
    assert scanner.bytes_seen == 200 * len(block) + 199 * 10 + 31
