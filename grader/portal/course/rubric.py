"""An assignment's rubric for hand grading (course.yaml's ``rubric:``): items with points (a
bonus or a deduction) and a comment each, the rule by which the items' sum joins the automatic
total (``combine: add``: added, the sum held within 0 and the maximum), and whether TAs grade
anonymously (``anonymous: true``: "Student N" for a name until the hand grading is released)."""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

COMBINE = ("add",)
MAX_ITEMS = 100
_KEYS = ("items", "combine", "anonymous")
_ITEM_KEYS = ("name", "points", "comment")


@dataclass(frozen=True)
class RubricItem:
    name: str
    points: float  # added to the total when applied: positive a bonus, negative a deduction
    comment: str = ""


@dataclass(frozen=True)
class Rubric:
    items: tuple[RubricItem, ...]
    combine: str = "add"
    anonymous: bool = False

    def item(self, name: str) -> RubricItem | None:
        return next((i for i in self.items if i.name == name), None)

    def points(self, applied: Iterable[str]) -> float:
        """The points of the items ``applied`` (by name; a name the rubric no longer has counts nothing)."""
        return round(sum(i.points for i in self.items if i.name in set(applied)), 2)


def combined(total: float, hand: float, max_total: int | None) -> float:
    """The automatic ``total`` with ``hand`` points added, held within 0 and ``max_total``."""
    top = math.inf if max_total is None else max_total
    return round(min(top, max(0.0, total + hand)), 2)


def _unknown(where: str, key: Any, keys: tuple[str, ...]) -> ValueError:
    close = difflib.get_close_matches(str(key), keys, n=1, cutoff=0.6)
    hint = f" (did you mean `{close[0]}`?)" if close else ""
    return ValueError(f"unknown key '{where}.{key}'{hint}; known keys: {', '.join(f'{where}.{k}' for k in keys)}")


def parse_rubric(value: Any, where: str) -> Rubric | None:
    """The rubric at ``where`` (like ``assignments[1].rubric``), or None when not given; a
    ValueError names the first problem in one line."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ValueError(f"{where} must be 'key: value' lines (items, combine, anonymous); got {value!r}")
    for key in value:
        if key not in _KEYS:
            raise _unknown(where, key, _KEYS)
    items = value.get("items")
    if not isinstance(items, list) or not items or len(items) > MAX_ITEMS:
        raise ValueError(f"{where}.items must be a list of 1 to {MAX_ITEMS} items, each like "
                         f"{{name: style, points: -1, comment: names say what they hold}}")  # fmt: skip
    parsed: list[RubricItem] = []
    for n, item in enumerate(items, 1):
        at = f"{where}.items[{n}]"
        if not isinstance(item, dict):
            raise ValueError(f"{at} must be 'key: value' lines (name, points, comment); got {item!r}")
        for key in item:
            if key not in _ITEM_KEYS:
                raise _unknown(at, key, _ITEM_KEYS)
        name, points, comment = item.get("name"), item.get("points"), item.get("comment", "")
        if not isinstance(name, str) or not name.strip() or len(name) > 80:
            raise ValueError(f"{at}.name must be a short text (up to 80 characters), like style; got {name!r}")
        if any(p.name == name.strip() for p in parsed):
            raise ValueError(f"{at}.name {name!r} is given twice: give each item its own name")
        if not isinstance(points, (int, float)) or isinstance(points, bool) or not math.isfinite(points):
            raise ValueError(f"{at}.points must be a number, positive (a bonus) or negative (a deduction), "
                             f"like -1 or 0.5; got {points!r}")  # fmt: skip
        if not isinstance(comment, str) or len(comment) > 1000:
            raise ValueError(f"{at}.comment must be a text (up to 1000 characters); got {comment!r}")
        parsed.append(RubricItem(name.strip(), float(points), comment.strip()))
    combine = value.get("combine", "add")
    if combine not in COMBINE:
        raise ValueError(f"{where}.combine must be add (the items' points added to the automatic total, "
                         f"held within 0 and the maximum); got {combine!r}")  # fmt: skip
    anonymous = value.get("anonymous", False)
    if not isinstance(anonymous, bool):
        raise ValueError(f"{where}.anonymous must be true (TAs see Student N until release) or false; "
                         f"got {anonymous!r}")  # fmt: skip
    return Rubric(tuple(parsed), combine, anonymous)
