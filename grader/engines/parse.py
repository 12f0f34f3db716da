"""Turning a script's output into a claim, by the lab's rules (shared/spec/endgame-lab.md).

- An integer is an optional '-' and digits that are not part of a decimal number
  ('0.0105' and '2.1e-05' hold no integer; '27/31' holds two; a date's numbers count).
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

# Numbers, read left to right: scientific ('2.1e-05', '1e-05': how Python prints short
# timings), decimal ('0.0105'), integer. Only the integers count.
# (The mantissa is written so that no digit run can be split two ways: matching stays linear.)
_NUMBER = re.compile(r"-?(?:\d+(?:\.\d*)?|\.\d+)[eE][-+]?\d+|-?\d*\.\d+|-?\d+", re.ASCII)
# The same numbers, an integer in a group of its own: findall gives '' for the others, so
# the integers of a text are found at the regex engine's speed (a flood is read as fast as a pipe gives it).
_INTEGER = re.compile(r"-?(?:\d+(?:\.\d*)?|\.\d+)[eE][-+]?\d+|-?\d*\.\d+|(-?\d+)", re.ASCII)
# Lines that may be score lines: 'score' (any case) and a digit; checked with _NUMBER.
_SCORE_CANDIDATE = re.compile(r"(?mi)^(?=[^\n]*score)[^\n]*\d[^\n]*", re.ASCII)
_NUMBER_CHARS = "0123456789.-+eE"
_TAIL_CHARS = 2048  # lines near the end of a block are searched backwards first
_FIRST_WINDOW = 256  # the last integer is looked for in windows from the end of a block, this one first, then doubling
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
    negative = text[0] == "-"
    digits = text.lstrip("-").lstrip("0") or "0"
    if len(digits) > 18:  # int() refuses very long strings; such a number is wrong anyway
        return -HUGE if negative else HUGE
    return -int(digits) if negative else int(digits)


def _moves(found: list[str], after_negative: bool = False, keep: int = _KEEP_INTS) -> list[int]:
    """The last ``keep`` of a line's integers, each run of negatives (passes) kept as one,
    so that no run of passes can push real moves out of what is kept."""
    out: list[int] = []
    for i in range(len(found) - 1, -1, -1):  # from the end: only the last ones are kept
        if found[i][0] == "-" and (found[i - 1][0] == "-" if i else after_negative):
            continue
        out.append(_int(found[i]))
        if len(out) == keep:
            break
    out.reverse()
    return out


def _is_int(token: str) -> bool:
    return token.lstrip("-").isdigit()


def _int_tokens(text: str) -> list[str]:
    return list(filter(None, _INTEGER.findall(text)))


def _tail_tokens(text: str) -> tuple[list[str], bool]:
    """The integers of the end of ``text`` that hold more than the _KEEP_INTS a line keeps
    (all of them when the text holds no more), and whether that is the whole text. Windows
    are read from the end, cut where no number is, so that a long line costs what is kept."""
    found: list[str] = []
    end, size = len(text), 4 * _KEEP_INTS  # '1 ' * 300 and a little
    while end > 0:
        start = max(0, end - size)
        size *= 2
        while start > 0 and text[start - 1] in _NUMBER_CHARS:  # never cut a number
            start -= 1
        found = _int_tokens(text[start:end]) + found
        if start == 0:
            return found, True
        if len(_moves(found, keep=_KEEP_INTS + 1)) > _KEEP_INTS:
            return found[1:], False
        end = start
    return found, True


def integers(text: str) -> list[int]:
    """The integers of ``text`` in order (decimals hold none)."""
    return [_int(t) for t in _int_tokens(text)]


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
            # Scan all but the end, cut after a character that cannot be part of a number.
            head = self._pending[:-8].rstrip(_NUMBER_CHARS)
            if head:
                self._scan(head)
                self._pending = self._pending[len(head) :]
            else:  # over 64 KB of digits, dots and signs: one enormous number (or a decimal)
                run = self._pending
                self._pending = ("-" if run[0] == "-" else "") + ("0.5" if "." in run else "9" * 20)

    def _scan_lines(self, block: str) -> None:
        """Whole lines at once: only the last score line and the last integer matter.

        The last ~2 KB of lines are read first; the rest only when they hold no match.
        """
        cut = block.rfind("\n", 0, max(0, len(block) - _TAIL_CHARS)) + 1  # a line start
        for start, end in ((cut, len(block)), (0, cut)):
            if "score" not in block[start:end].lower():  # at C's speed: most floods hold no score line
                continue
            candidates = list(_SCORE_CANDIDATE.finditer(block, start, end))
            line = next((m.group() for m in reversed(candidates) if _int_tokens(m.group())), None)
            if line is not None:
                found = _int_tokens(line)
                self._score_line = (_int(found[0]), _moves(found[1:]), _shorten(line))
                break
        end, size = len(block), _FIRST_WINDOW
        while end > 0:  # windows of whole lines from the end, growing, until one holds an integer
            start = block.rfind("\n", 0, max(0, end - size)) + 1
            size *= 2
            if _int_tokens(block[start:end]):
                for line in reversed(block[start:end].split("\n")):
                    found = _int_tokens(line)
                    if found:
                        self._last, self._last_text = _int(found[-1]), _shorten(line[: _KEEP_TEXT + 3])
                        return
            end = start - 1

    def _scan(self, piece: str) -> None:
        if len(self._text) < _KEEP_TEXT:
            self._text += piece[: _KEEP_TEXT + 3]
        if not self._has_score:
            self._has_score = "score" in (self._seen + piece).lower()
        self._seen = piece[-4:]
        if self._first is None:
            first = next((m for m in _INTEGER.finditer(piece) if m.group(1)), None)
            if first is None:
                return
            self._first = _int(first.group(1))
            self._last, self._last_text = self._first, _shorten(self._text)
            piece = piece[first.end() :]
        found, whole = _tail_tokens(piece)
        if not found:
            return
        self._last = _int(found[-1])
        if not whole:  # the piece alone holds more than the integers kept
            self._ints = []
        self._ints.extend(_moves(found, bool(self._ints) and self._ints[-1] < 0))
        if len(self._ints) > 2 * _KEEP_INTS:
            del self._ints[:-_KEEP_INTS]
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
