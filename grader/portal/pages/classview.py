"""The class table as its page shows it: each cell's score with a bar of its symbols' counts
(in tenths, drawn by the stylesheet: the CSP allows no inline style), late and extension
marks, and the submission under way (being graded: n of N tests; waiting; a rerun pending);
each assignment's submitted n of N, mean, median and histogram of totals; the rows
filtered and sorted as the page's GET form asks, a page of ``PAGE`` students at a time (its
script filters and sorts the page shown without a reload)."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode

from sqlalchemy.orm import Session

from ...runs.html import histogram_svg
from ..database.models import QUEUED, RUNNING
from ..jobs.queue import standings
from ..web.routes import whole
from .feedback import TONE

TONES = ("ok", "good", "half", "low", "bad")
PAGE = 100  # students a page of the class table shows: 300 in one page weighed ~140 KB


def bar(symbols: str | None) -> list[tuple[str, int]]:
    """Each tone's share of the symbols in tenths (rounded so that they add up to 10), the empty ones left out."""
    if not symbols:
        return []
    counts = Counter(TONE.get(s, "bad") for s in symbols)
    exact = {t: 10 * counts[t] / len(symbols) for t in TONES}
    tenths = {t: int(v) for t, v in exact.items()}
    for t in sorted(TONES, key=lambda t: tenths[t] - exact[t])[: 10 - sum(tenths.values())]:
        tenths[t] += 1
    return [(t, n) for t, n in tenths.items() if n]


def summary(symbols: str | None) -> str:
    """The counts in words, for the bar's title: '45 right, 3 wrong'."""
    if not symbols:
        return ""
    counts = Counter(symbols)
    return ", ".join(f"{n} {s}" for s, n in counts.most_common())


def table_view(data: Mapping[str, Any], query: Mapping[str, str]) -> dict[str, Any]:
    """What the template needs beyond the data: each assignment's statistics and histogram,
    the rows to show (filtered by ``q``, ``missing``, ``late``; sorted by ``sort``), the form's values."""
    names = list(data["assignments"])
    stats = {}
    for name in names:
        cells = [s["assignments"][name] for s in data["students"] if s["assignments"][name]]
        totals = [c["score"] if c["score"] is not None else c["total"] for c in cells]
        totals = [t for t in totals if t is not None]
        top = max((c["max_total"] or 0 for c in cells), default=0)
        stats[name] = {
            "submitted": len(cells), "of": len(data["students"]),
            "mean": round(statistics.fmean(totals), 1) if totals else None,
            "median": round(statistics.median(totals), 1) if totals else None,
            "max_total": top, "histogram": histogram_svg(totals, top) if totals and top else "",
        }  # fmt: skip
    q = query.get("q", "").strip().lower()
    missing, late = query.get("missing") == "1", query.get("late") == "1"
    rows = []
    for s in data["students"]:
        cells = s["assignments"].values()
        if q and q not in s["name"].lower() and q not in s["email"].lower():
            continue
        if missing and all(cells):
            continue
        if late and not any(c and (c["late"] or c["days_late"]) for c in cells):
            continue
        rows.append(s)
    key = query.get("sort", "")
    if key in names:
        rows.sort(key=lambda s: -1 if s["assignments"][key] is None else (s["assignments"][key]["score"] or 0))
    elif key == "late_days":
        rows.sort(key=lambda s: s["late_days_used"])
    desc = query.get("order") == "desc"
    if desc:
        rows.reverse()
    pages = max(1, -(-len(rows) // PAGE))
    text = query.get("page", "")
    number = min(whole(text) or 1, 10**9)  # "²", 5000 digits: the first page
    number = min(max(number, 1), pages)
    asked = {"q": q, "missing": "1" if missing else "", "late": "1" if late else "", "sort": key,
             "order": "desc" if desc else "", "page": str(number)}  # fmt: skip

    def link(**changes: Any) -> str:
        """This view's address with ``changes`` (the page back to 1 unless one is given), empty values left out."""
        wanted = {**asked, "page": "1", **{k: str(v) for k, v in changes.items()}}
        return "/class?" + urlencode({k: v for k, v in wanted.items() if v and not (k == "page" and v == "1")})

    first = (number - 1) * PAGE
    return {"stats": stats, "rows": rows[first : first + PAGE], "matched": len(rows), "first": first + 1,
            "page": number, "pages": pages, "link": link,
            "query": {"q": q, "missing": missing, "late": late, "sort": key, "order": "desc" if desc else ""},
            "bar": bar, "summary": summary}  # fmt: skip


def under_way(session: Session) -> tuple[dict[str, Any], dict[int, dict[str, dict[str, Any]]]]:
    """What the queue holds, for the table's head: submissions waiting to be graded (the ones
    being graded counted too), being graded (each with its tests done of how many), reruns
    pending; and each student's submission under way, by user id and assignment (the newest
    where a student has several)."""
    found = list(standings(session).values())
    cells: dict[int, dict[str, dict[str, Any]]] = {}
    for st in found:
        cells.setdefault(st.user_id, {})[st.assignment] = {
            "submission": st.submission, "state": st.state, "rerun": st.rerun, "done": st.done, "total": st.total,
            "position": st.position, "text": ("rerun " if st.rerun else "") + st.text()}  # fmt: skip
    head = {
        "waiting": len(found),
        "queued": sum(st.state == QUEUED for st in found),
        "running": sum(st.state == RUNNING for st in found),
        "reruns": sum(st.rerun for st in found),
        "being_graded": [{"submission": st.submission, "assignment": st.assignment, "done": st.done,
                          "total": st.total} for st in found if st.state == RUNNING],
    }  # fmt: skip
    return head, cells
