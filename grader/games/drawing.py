"""Boards drawn as text and as SVG, for games played on a grid of squares."""

from __future__ import annotations

from typing import Callable, Mapping, Sequence

CELL = 28
MARGIN = 16


def grid_text(board: str, cols: int, files: str, marks: Mapping[int, str] | None = None) -> str:
    """A grid with file letters above and rank numbers on the left; ``marks`` replaces empty squares."""
    marks = marks or {}
    lines = ["  " + " ".join(files[:cols])]
    for r in range(len(board) // cols):
        row = []
        for c in range(cols):
            sq = r * cols + c
            ch = board[sq].lower()
            row.append(marks.get(sq, ch) if ch == "." else ch)
        lines.append(f"{r + 1} " + " ".join(row))
    return "\n".join(lines)


def grid_svg(board: str, cols: int, files: str, piece: Callable[[str, float, float], str], background: str,
             best: Sequence[int], played: int | None, played_legal: bool, label: str) -> str:  # fmt: skip
    """A grid with pieces drawn by ``piece(char, x, y)``, small green dots on the optimal moves,
    a red ring on the script's move (a red cross where that move is not legal)."""
    rows = len(board) // cols
    width, height = cols * CELL + MARGIN, rows * CELL + MARGIN
    parts = [
        f'<svg class="board" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" aria-label="{label}">',
        f'<rect x="{MARGIN}" y="{MARGIN}" width="{cols * CELL}" height="{rows * CELL}" fill="{background}"/>',
    ]
    grid = "".join(f"M{MARGIN + i * CELL} {MARGIN}V{MARGIN + rows * CELL}" for i in range(cols + 1))
    grid += "".join(f"M{MARGIN} {MARGIN + i * CELL}H{MARGIN + cols * CELL}" for i in range(rows + 1))
    parts.append(f'<path d="{grid}" stroke="#333" stroke-opacity="0.5"/>')
    for i in range(cols):
        parts.append(
            f'<text x="{MARGIN + i * CELL + CELL // 2}" y="{MARGIN - 4}" font-size="11" text-anchor="middle">{files[i]}</text>'
        )
    for i in range(rows):
        parts.append(
            f'<text x="{MARGIN // 2}" y="{MARGIN + i * CELL + CELL // 2 + 4}" font-size="11" text-anchor="middle">{i + 1}</text>'
        )

    def centre(sq: int) -> tuple[float, float]:
        return MARGIN + (sq % cols) * CELL + CELL / 2, MARGIN + (sq // cols) * CELL + CELL / 2

    for sq, ch in enumerate(board):
        if ch in "xo":
            parts.append(piece(ch, *centre(sq)))
    for sq in best:
        x, y = centre(sq)
        parts.append(
            f'<circle cx="{x:g}" cy="{y:g}" r="{CELL * 0.17:g}" fill="#7cfc00" stroke="#1b5e20" stroke-width="1.5"/>'
        )
    if played is not None and 0 <= played < len(board):
        x, y = centre(played)
        if played_legal:
            parts.append(
                f'<circle cx="{x:g}" cy="{y:g}" r="{CELL * 0.36:g}" fill="none" stroke="#e53935" stroke-width="3"/>'
            )
        else:
            parts.append(f'<path d="M{x - 9:g} {y - 9:g}l18 18m0 -18l-18 18" stroke="#e53935" stroke-width="3"/>')
    parts.append("</svg>")
    return "".join(parts)
