"""Names as people read them: an uploaded file's, an engine's, a label, a person's. A name
keeps no character that shows nothing yet changes how the rest reads: a right-to-left
override makes ``notes<U+202E>txt.py`` read as ``notesyp.txt``, a zero-width space makes two
names that look the same differ."""

from __future__ import annotations

import functools
import unicodedata

# Letters (Lo) that draw nothing: the Hangul fillers, the usual blank names of chat services.
BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0")
HIDDEN = frozenset(("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"))  # controls, format, surrogates, private, unassigned


def visible(text: str, keep: str = "") -> str:
    """``text`` without its invisible characters: the controls (Cc) but those in ``keep`` (a
    text's ``\\t\\n``), the format characters (Cf: the bidi embeddings, overrides and isolates
    U+202A-U+202E and U+2066-U+2069, the marks U+200E-U+200F and U+061C, the zero-width
    spaces and joiners U+200B-U+200D, the BOM U+FEFF, the tags...), line and paragraph
    separators, surrogates, private-use and unassigned code points, and the blank letters."""
    if text.isascii():  # the usual name or text: its controls only, at C speed
        return text.translate(_ascii_controls(keep))
    return "".join(c for c in text if c in keep or not (unicodedata.category(c) in HIDDEN or c in BLANK_LETTERS))


@functools.lru_cache(maxsize=8)
def _ascii_controls(keep: str) -> dict[int, None]:
    return {c: None for c in (*range(32), 127) if chr(c) not in keep}
