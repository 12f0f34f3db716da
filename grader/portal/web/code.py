"""A submission's files as the code viewer shows them: each highlighted on the server with
Pygments into lines of escaped markup (so the page holds no script and the CSP stays 'self'),
a file too large or not UTF-8 text left out with its size."""

from __future__ import annotations

from dataclasses import dataclass, field
from html import escape
from pathlib import PurePosixPath

from markupsafe import Markup
from pygments import lex
from pygments.lexer import Lexer
from pygments.lexers import (
    CLexer,
    CppLexer,
    GoLexer,
    JavaLexer,
    JavascriptLexer,
    PythonLexer,
    RustLexer,
    TextLexer,
)
from pygments.token import Comment, Keyword, Name, Number, Operator, String, _TokenType

MAX_BYTES = 256 * 1024  # a file larger than this is not shown (its size is)
MAX_LINES = 5000  # nor one of more lines
# token kinds the stylesheet colours (class ``t-X``), most specific first
KINDS: tuple[tuple[_TokenType, str], ...] = (
    (Comment, "c"), (String, "s"), (Number, "m"), (Keyword, "k"), (Operator.Word, "k"),
    (Name.Function, "f"), (Name.Class, "f"), (Name.Builtin, "b"), (Name.Decorator, "b"),
)  # fmt: skip


@dataclass
class CodeFile:
    """One file of a submission: its path in the upload, size, and lines of highlighted markup
    (empty with ``not_shown`` saying why: too large, or not text)."""

    path: str
    size: int
    lines: list[Markup] = field(default_factory=list)
    not_shown: str = ""


def code_file(path: str, data: bytes) -> CodeFile:
    """``data`` of the file ``path`` as the viewer shows it."""
    if len(data) > MAX_BYTES:
        return CodeFile(path, len(data), not_shown=f"too large to show ({len(data):,} bytes)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return CodeFile(path, len(data), not_shown=f"not UTF-8 text ({len(data):,} bytes)")
    if "\0" in text:
        return CodeFile(path, len(data), not_shown=f"binary ({len(data):,} bytes)")
    if text.count("\n") > MAX_LINES:
        return CodeFile(path, len(data), not_shown=f"too long to show ({text.count(chr(10)):,} lines)")
    return CodeFile(path, len(data), highlight(text, _lexer(path, text)))


# The lexers a student's file may pick by its name: the labs' languages only (a lexer chosen from
# Pygments' hundreds by a name the student gives could be one whose patterns a crafted file slows).
LEXERS: dict[str, type[Lexer]] = {
    ".py": PythonLexer, ".c": CLexer, ".h": CLexer, ".cc": CppLexer, ".cpp": CppLexer, ".hpp": CppLexer,
    ".java": JavaLexer, ".js": JavascriptLexer, ".rs": RustLexer, ".go": GoLexer,
}  # fmt: skip


def _lexer(path: str, text: str) -> Lexer:
    found = LEXERS.get(PurePosixPath(path).suffix.lower())
    if found is not None:
        return found()
    first = text.split("\n", 1)[0]
    return PythonLexer() if first.startswith("#!") and "python" in first else TextLexer()


def _kind(token: _TokenType) -> str:
    for parent, kind in KINDS:
        if token in parent:
            return kind
    return ""


def highlight(text: str, lexer: Lexer) -> list[Markup]:
    """``text`` as lines of markup: each token escaped, in a span of its kind's class; no
    span crosses a line's end, so each line stands alone (for its number and anchor)."""
    lines: list[list[str]] = [[]]
    for token, value in lex(text, lexer):
        kind = _kind(token)
        for i, part in enumerate(value.split("\n")):
            if i:
                lines.append([])
            if part:
                lines[-1].append(f'<span class="t-{kind}">{escape(part)}</span>' if kind else escape(part))
    if len(lines) > 1 and not lines[-1]:
        lines.pop()  # the lexer's own line end after the last line
    return [Markup("".join(parts)) for parts in lines]
