"""Turning a script's output into a claim, by the lab's rules (shared/spec/endgame-lab.md).

- An integer is an optional '-' and digits that are not part of a decimal number
  ('0.0105' holds no integer; '27/31' holds two; a date's numbers count).
- The score line is the last line containing 'score' (any case) and at least one integer:
  its first integer is the claimed score, the rest read in reverse is the claimed line.
- The move is the last integer of the whole output.

``OutputScanner`` reads the output in pieces and keeps only what the rules need, so any
amount of output is scanned in constant memory.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

# An integer: digits with an optional '-' right before them, not part of a decimal number.
# (The same as reading the text left to right as numbers '-?\d*\.\d+|-?\d+' and keeping those
# without a '.'; tests/test_parse.py checks that.) Standing alone, it can be searched backwards.
_INT = r"(?:-|(?<![-\d.]))\d+(?!\d|\.\d)"
_INTEGER = re.compile(_INT)
_LAST_INT = re.compile(r"(?s).*(" + _INT + ")")  # the greedy prefix leaves the last match
_SCORE_LINE = r"(?=[^\n]*score)(?=[^\n]*?" + _INT + r")[^\n]*"  # a line with 'score' and an integer
_LAST_SCORE_LINE = re.compile(r"(?si)(?:.*\n)?(" + _SCORE_LINE + ")")
_SCORE_LINES = re.compile(r"(?mi)^" + _SCORE_LINE)
_TAIL_CHARS = 2048  # lines near the end of a block are searched backwards first
HUGE = 10**18  # integers this long are kept as +-HUGE: no move or score is that large
_KEEP_INTS = 300  # integers kept from one line: a game has at most 60 moves and some passes
_KEEP_TEXT = 200  # characters of a line kept for showing it
_PIECE = 1 << 16  # a line longer than this is scanned in pieces


@dataclass(frozen=True)
class Claim:
    """What a script's output claims. ``score`` is None when there is no score line."""

    score: int | None
    line: tuple[int, ...]  # claimed line, forward order, as printed (passes as negatives)
    move: int | None  # the last integer of the output
    score_text: str | None = None  # the score line, as printed (shortened)
    move_text: str | None = None  # the line holding the last integer (shortened)

    @property
    def has_score_line(self) -> bool:
        return self.score is not None


def _int(text: str) -> int:
    digits = len(text) - (text[0] == "-")
    if digits > 18:  # int() refuses very long strings; such a number is wrong anyway
        return -HUGE if text[0] == "-" else HUGE
    return int(text)


def integers(text: str) -> list[int]:
    """The integers of ``text`` in order (decimals hold none)."""
    return [_int(m) for m in _INTEGER.findall(text)]


def _last_match(matches, whole: bool = False):
    """The last of an iterator of matches: the match itself if ``whole``, else its text."""
    last = None
    for last in matches:
        pass
    if last is None or whole:
        return last
    return last.group()


def _shorten(text: str) -> str:
    text = text.strip()
    return text if len(text) <= _KEEP_TEXT else text[: _KEEP_TEXT - 3] + "..."


class OutputScanner:
    """Feed output bytes as they come; ``claim()`` gives the claim of everything fed."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._pending = ""  # the unscanned end of the current line
        self._seen = ""  # the last few scanned characters of the current line ('score' may straddle)
        self._text = ""  # the start of the current line, for showing it
        self._has_score = False
        self._first: int | None = None  # first integer of the current line
        self._ints: list[int] = []  # the current line's integers after the first (the last _KEEP_INTS)
        self._last: int | None = None
        self._last_text: str | None = None
        self._score_line: tuple[int, list[int], str] | None = None
        self.bytes_seen = 0

    def feed(self, data: bytes) -> None:
        self.bytes_seen += len(data)
        self._feed_text(self._decoder.decode(data))

    def _feed_text(self, text: str) -> None:
        text = self._pending + text
        last_nl = text.rfind("\n")
        if last_nl >= 0:
            first_nl = text.find("\n")
            self._scan(text[:first_nl])  # the end of the current line
            self._end_line()
            if first_nl < last_nl:
                self._scan_lines(text[first_nl + 1 : last_nl])
            text = text[last_nl + 1 :]
        self._pending = text
        if len(self._pending) > _PIECE:
            # Scan all but the end; cut after a character that cannot be inside a number.
            cut = max(self._pending.rfind(c, 0, len(self._pending) - 8) for c in " \t,;:[](){}/")
            if cut <= 0:
                cut = len(self._pending) - 32  # one enormous token: its digits carry no meaning
            self._scan(self._pending[: cut + 1])
            self._pending = self._pending[cut + 1 :]

    def _scan_lines(self, block: str) -> None:
        """Whole lines at once: only the last score line and the last integer matter.

        The last lines are searched backwards (anchored: an unanchored search would retry
        from every position); when they hold no match, the rest is searched forwards.
        """
        cut = block.rfind("\n", 0, max(0, len(block) - _TAIL_CHARS)) + 1  # a line start
        tail = block[cut:]
        m = _LAST_SCORE_LINE.match(tail)
        line = m.group(1) if m else _last_match(_SCORE_LINES.finditer(block, 0, cut))
        if line is not None:
            ints = integers(line)
            self._score_line = (ints[0], ints[1:][-_KEEP_INTS:], _shorten(line))
        m = _LAST_INT.match(tail)
        at, number = (cut + m.start(1), m.group(1)) if m else (None, None)
        if m is None:
            last = _last_match(_INTEGER.finditer(block, 0, cut), whole=True)
            if last is not None:
                at, number = last.start(), last.group()
        if number is not None:
            self._last = _int(number)
            start = block.rfind("\n", 0, at) + 1
            end = block.find("\n", at)
            self._last_text = _shorten(block[start : end if end >= 0 else len(block)][: _KEEP_TEXT + 3])

    def _scan(self, piece: str) -> None:
        if len(self._text) < _KEEP_TEXT:
            self._text += piece[: _KEEP_TEXT + 3]
        if not self._has_score:
            self._has_score = "score" in (self._seen + piece).lower()
        self._seen = piece[-4:]
        found = _INTEGER.findall(piece)
        if not found:
            return
        if self._first is None:
            self._first = _int(found[0])
            found = found[1:]
        self._ints.extend(_int(x) for x in found[-_KEEP_INTS:])
        if len(self._ints) > 2 * _KEEP_INTS:
            del self._ints[:-_KEEP_INTS]
        self._last = self._ints[-1] if self._ints else self._first
        self._last_text = _shorten(self._text)

    def _end_line(self) -> None:
        if self._has_score and self._first is not None:
            self._score_line = (self._first, self._ints[-_KEEP_INTS:], _shorten(self._text))
        self._text, self._seen, self._has_score, self._first, self._ints = "", "", False, None, []

    def claim(self) -> Claim:
        """The claim of all output fed (an unfinished last line counts as a line). Call it last."""
        self._scan(self._pending + self._decoder.decode(b"", final=True))
        self._pending = ""
        self._end_line()
        if self._score_line is None:
            return Claim(None, (), self._last, None, self._last_text)
        score, rest, text = self._score_line
        return Claim(score, tuple(reversed(rest)), self._last, text, self._last_text)


def parse_output(output: str | bytes) -> Claim:
    """The claim in a script's whole output."""
    scanner = OutputScanner()
    scanner.feed(output.encode("utf-8", "surrogateescape") if isinstance(output, str) else output)
    return scanner.claim()
