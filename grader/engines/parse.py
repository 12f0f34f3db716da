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
_NUMBER_CHARS = "0123456789.-+eE"
# The output's whole lines are read as bytes: the rules' integers and 'score' are ASCII, and only
# the lines that count are decoded.
_INTEGER_BYTES = re.compile(_INTEGER.pattern.encode())
_NOT_NUMBER = re.compile(rb"[^0-9.\-+eE]")  # a byte no number holds: numbers read after it read alike
_LAST_CHARS = 32  # the last integer of a block is looked for in its last characters first
_TAIL_CHARS = 2048  # lines near the end of a block are searched backwards first
_FIRST_WINDOW = 256  # the last integer is looked for in windows from the end of a block, this one first, then doubling
HUGE = 10**18  # integers this long are kept as +-HUGE: no move or score is that large
_KEEP_INTS = 300  # integers kept from one line: a game has at most 60 moves and some passes
_KEEP_TEXT = 200  # characters of a line kept for showing it
_SHOWN_BYTES = 4 * (_KEEP_TEXT + 3)  # bytes that hold them, in UTF-8
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


def _last_score_line(out: bytes, start: int, end: int) -> bytes | None:
    """The last line of ``out[start:end]`` (whole lines) holding 'score' (any case) and an
    integer. The last ~2 KB of lines are read first; the rest only when they hold none."""
    cut = out.rfind(b"\n", start, max(start, end - _TAIL_CHARS)) + 1 or start  # a line start
    for lo, hi in ((cut, end), (start, cut)):
        low = out[lo:hi].lower()  # bytes: ASCII letters only, as the rules' 'score' is ASCII
        at = low.rfind(b"score")
        while at >= 0:  # each line holding 'score', from the last, until one holds an integer
            begins = low.rfind(b"\n", 0, at) + 1
            ends = low.find(b"\n", at)
            ends = len(low) if ends < 0 else ends
            if _has_int(out, lo + begins, lo + ends):
                return out[lo + begins : lo + ends]
            at = low.rfind(b"score", 0, begins)
    return None


def _last_integer(out: bytes, start: int, end: int) -> tuple[int, str] | None:
    """The last integer of ``out[start:end]`` (whole lines), with the start of its line for
    showing. Read from the end: the last few bytes after one no number holds (numbers read from
    there are read as from the line's start), then windows of whole lines, growing."""
    quick = start
    if end - _LAST_CHARS > start:
        near = _NOT_NUMBER.search(out, end - _LAST_CHARS, end)
        quick = near.end() if near else end
    found = _last_int_match(out, quick, end)
    size = _FIRST_WINDOW
    while found is None and end > start:
        lo = out.rfind(b"\n", start, max(start, end - size)) + 1 or start
        size *= 2
        found = _last_int_match(out, lo, end)
        end = lo - 1
    if found is None:
        return None
    begins = out.rfind(b"\n", start, found.start()) + 1 or start
    ends = out.find(b"\n", begins, begins + _SHOWN_BYTES)
    shown = out[begins : ends if ends >= 0 else begins + _SHOWN_BYTES].decode("utf-8", "replace")
    return _int(found.group(1).decode()), _shorten(shown[: _KEEP_TEXT + 3])


def _last_int_match(out: bytes, start: int, end: int) -> re.Match[bytes] | None:
    last = None
    for m in _INTEGER_BYTES.finditer(out, start, end):
        if m.group(1):
            last = m
    return last


def _has_int(out: bytes, start: int, end: int) -> bool:
    """Whether ``out[start:end]`` holds an integer (read up to its first one)."""
    return any(m.group(1) for m in _INTEGER_BYTES.finditer(out, start, end))


def integers(text: str) -> list[int]:
    """The integers of ``text`` in order (decimals hold none)."""
    return [_int(t) for t in _int_tokens(text)]


def _shorten(text: str) -> str:
    text = text.strip()
    return text if len(text) <= _KEEP_TEXT else text[: _KEEP_TEXT - 3] + "..."


class OutputScanner:
    """Feed output bytes as they come; ``claim()`` gives the claim of everything fed.

    Whole lines are read as bytes, from the end of each piece fed: only the last score line
    and the last integer count, so a flood of lines costs what reading a pipe costs. A line
    longer than ``_PIECE`` is decoded and scanned in pieces as it comes."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")  # a long line's
        self._pending = bytearray()  # the start of the current line, not read yet
        self._long = False  # the current line is longer than _PIECE: scanned in pieces
        self._unscanned = ""  # a long line's end, not scanned yet
        self._seen = ""  # the last few scanned characters of the current line ('score' may straddle)
        self._text = ""  # the start of the current line, for showing it
        self._has_score = False
        self._first: int | None = None  # first integer of the current line
        self._ints: list[int] = []  # the current line's integers after the first (the last _KEEP_INTS)
        self._last: int | None = None
        self._last_text: str | None = None
        # The last score line: (score, the integers after it, its text), or a whole line as
        # printed, read by claim() (each block of a flood ends with one: only the last is read).
        self._score_line: tuple[int, list[int], str] | bytes | None = None
        self.bytes_seen = 0

    def feed(self, data: bytes) -> None:
        self.bytes_seen += len(data)
        last_nl = data.rfind(b"\n")
        if last_nl < 0:
            self._more(data)
            return
        start = data.find(b"\n") + 1  # the current line ends there: whole lines follow
        if self._long:
            self._feed_long(self._decoder.decode(data[:start])[:-1])  # up to its newline: nothing held
            self._scan(self._unscanned)
            self._end_line()
            self._long, self._unscanned = False, ""
        elif self._pending:  # read alone: the block is not copied
            self._pending += data[: start - 1]
            self._read_lines(bytes(self._pending), 0, len(self._pending))
            self._pending = bytearray()
        else:
            start = 0
        if start < last_nl:
            self._read_lines(data, start, last_nl)
        self._more(data[last_nl + 1 :])

    def _more(self, data: bytes) -> None:
        """More of the current line (no newline in ``data``)."""
        if self._long:
            self._feed_long(self._decoder.decode(data))
            return
        self._pending += data
        if len(self._pending) > _PIECE:  # too long to keep whole: scanned in pieces from now on
            self._long = True
            self._feed_long(self._decoder.decode(bytes(self._pending)))
            self._pending = bytearray()

    def _feed_long(self, text: str) -> None:
        """More of a long line (no newline in ``text``): all but its end scanned."""
        self._unscanned += text
        if len(self._unscanned) > _PIECE:
            # Scan all but the end, cut after a character that cannot be part of a number.
            head = self._unscanned[:-8].rstrip(_NUMBER_CHARS)
            if head:
                self._scan(head)
                self._unscanned = self._unscanned[len(head) :]
            else:  # over 64 KB of digits, dots and signs: one enormous number (or a decimal)
                run = self._unscanned
                self._unscanned = ("-" if run[0] == "-" else "") + ("0.5" if "." in run else "9" * 20)

    def _read_lines(self, out: bytes, start: int, end: int) -> None:
        """The whole lines ``out[start:end]``: their last score line and their last integer."""
        line = _last_score_line(out, start, end)
        if line is not None:
            self._score_line = line  # read by claim(), unless a later score line replaces it
        last = _last_integer(out, start, end)
        if last is not None:
            self._last, self._last_text = last

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
        if self._long:
            self._scan(self._unscanned + self._decoder.decode(b"", final=True))
            self._end_line()
        elif self._pending:  # an unfinished last line counts as a line
            self._read_lines(bytes(self._pending), 0, len(self._pending))
        self._pending, self._long, self._unscanned = bytearray(), False, ""
        if self._score_line is None:
            return Claim(None, (), self._last, None, self._last_text)
        if isinstance(self._score_line, bytes):
            line = self._score_line.decode("utf-8", "replace")
            found = _int_tokens(line)
            self._score_line = (_int(found[0]), _moves(found[1:]), _shorten(line[: _KEEP_TEXT + 3]))
        score, rest, text = self._score_line
        return Claim(score, tuple(reversed(rest)), self._last, text, self._last_text)


def parse_output(output: str | bytes) -> Claim:
    """The claim in a script's whole output."""
    scanner = OutputScanner()
    scanner.feed(output.encode("utf-8", "surrogateescape") if isinstance(output, str) else output)
    return scanner.claim()
