"""A client of a running portal's arena and ladders (``grader arena ... --portal``): JSON over
HTTP at the portal's /api paths, signed by the user's API token (made on the portal's /arena
page), which the portal answers with that user's rights. The standard library's urllib only:
the command line needs no extra to start a test or enter a ladder."""

from __future__ import annotations

import datetime as dt
import json
import secrets
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tabulate import tabulate

from ...errors import GraderError
from ...runs.text import fmt_total
from ...tournaments.grades import ShareGrade

FINISHED = ("H0", "H1", "limit", "stopped", "error")  # a test's status once it has ended
EXIT_STATUS = {"H1": 0, "H0": 3, "limit": 4, "stopped": 5, "error": 5}  # grader arena test --wait's, by the end


@dataclass(frozen=True)
class TestState:
    """A test as its page shows it."""

    id: str
    url: str
    status: str
    games: int
    wins: int
    draws: int
    losses: int
    pentanomial: tuple[int, ...]
    llr: float
    lower: float
    upper: float
    elo: float | None
    elo_error: float | None
    model: str = "normalized"  # the Elo's: the SPRT's model
    elo_note: str | None = None  # why there is no Elo, when there is none

    @property
    def finished(self) -> bool:
        return self.status in FINISHED

    def line(self) -> str:
        """'H1: 14 games, W-D-L 12-1-1, LLR 3.02 (-2.94, 2.94), Elo (normalized) 180.2 +/- 95.0'."""
        elo = (f"Elo ({self.model}) none: {self.elo_note or 'not finite'}" if self.elo is None
               else f"Elo ({self.model}) {self.elo:+g}" + (f" +/- {self.elo_error:g}" if self.elo_error is not None else ""))  # fmt: skip
        return (f"{self.status}: {self.games} games, W-D-L {self.wins}-{self.draws}-{self.losses}, "
                f"LLR {self.llr + 0:g} ({self.lower:g}, {self.upper:g}), {elo}")  # fmt: skip


class ArenaClient:
    """The arena of the portal at ``url`` as the holder of ``token`` sees it."""

    def __init__(self, url: str, token: str, timeout: float = 30.0):
        if not url.startswith(("http://", "https://")):
            raise GraderError(f"portal {url!r}: give its address, like http://localhost:8000")
        if not token:
            raise GraderError(
                "no API token: make one on the portal's /arena page and give it (--token or GRADER_TOKEN)"
            )
        self.url, self.token, self.timeout = url.rstrip("/"), token, timeout

    def _call(self, path: str, fields: dict[str, str] | None = None, files: dict[str, Path] | None = None,
              missing: str = "") -> Any:  # fmt: skip
        """GET ``path`` (POST with ``fields`` and ``files``) under /api; its JSON. GraderError,
        one line, with the portal's own message when it refuses (``missing`` added to a 404's)."""
        headers = {"Authorization": f"Bearer {self.token}", "Accept": "application/json"}
        body = None
        if fields is not None or files:
            body, kind = _multipart(fields or {}, files or {})
            headers["Content-Type"] = kind
        request = urllib.request.Request(self.url + "/api" + path, body, headers, method="POST" if body else "GET")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as answer:
                return json.loads(answer.read())
        except urllib.error.HTTPError as e:
            try:
                said = json.loads(e.read()).get("error")
            except (ValueError, AttributeError):
                said = None
            if said is None and e.code == 401:
                said = f"{e.reason} (the portal does not know this API token: make one on its /arena page)"
            said = said or e.reason
            if e.code == 404 and missing:
                said = f"{said}: {missing}"
            raise GraderError(f"the portal refused: {said}") from None
        except (urllib.error.URLError, OSError) as e:
            reason = getattr(e, "reason", e)
            raise GraderError(
                f"cannot reach the portal at {self.url}: {reason}: is grader serve running there?"
            ) from None

    def engine(self, name: str) -> dict[str, Any]:
        """The user's engine called ``name``, with its versions."""
        found = [e for e in self._call("/arena")["engines"] if e["name"] == name]
        mine = [e for e in found if e.get("mine")] or found
        if not mine:
            raise GraderError(f"no engine {name!r} of yours on the portal: create it on its /arena page first")
        return dict(self._call(f"/arena/e/{mine[0]['id']}"))

    def start_test(self, engine: str, new: int, base: int, fields: dict[str, str],
                   openings: Path | None = None) -> TestState:  # fmt: skip
        """Start a test of ``engine``'s version number ``new`` against ``base`` (the form's
        other ``fields``: tc, elo0, elo1, alpha, beta, max_games)."""
        found = self.engine(engine)
        ids = {v["number"]: v["id"] for v in found["versions"]}
        for n in (new, base):
            if n not in ids:
                known = ", ".join(f"v{k}" for k in sorted(ids)) or "none yet"
                raise GraderError(f"{engine} has no version {n} (it has {known}): upload it on the portal first")
        started = self._call(f"/arena/e/{found['id']}/tests", {**fields, "new": str(ids[new]), "base": str(ids[base])},
                             {"openings": openings} if openings else None)  # fmt: skip
        return self.state(started["id"])

    def upload(self, engine: str, path: Path, label: str = "", command: str = "") -> Uploaded:
        """Upload ``path`` as a new version of the user's ``engine`` (as its page's form does: an
        archive or a single file, its COMMAND file or ``command``); a worker checks it."""
        found = self.engine(engine)
        if not found.get("mine"):
            raise GraderError(f"the engine {engine!r} is not yours: upload versions of your own engines")
        fields = {"label": label, **({"command": command} if command else {})}
        d = self._call(f"/arena/e/{found['id']}/versions", fields, {"file": path})
        return Uploaded(
            engine, found["id"], int(d["number"]), str(d["status"]), "", f"{self.url}/arena/e/{found['id']}"
        )

    def checked(self, uploaded: Uploaded, every: float = 2.0) -> Uploaded:
        """``uploaded`` once its check is over: asked every ``every`` seconds."""
        while True:
            found = self._call(f"/arena/e/{uploaded.engine_id}")
            mine = next(v for v in found["versions"] if v["number"] == uploaded.number)
            if mine["status"] != "checking":
                return Uploaded(uploaded.engine, uploaded.engine_id, uploaded.number, mine["status"],
                                mine.get("message") or "", uploaded.url)  # fmt: skip
            time.sleep(every)

    def state(self, test: str) -> TestState:
        d = self._call(f"/arena/t/{urllib.parse.quote(test)}")
        return TestState(d["id"], f"{self.url}/arena/t/{d['id']}", d["status"], d["games"], d["wins"], d["draws"],
                         d["losses"], tuple(d["pentanomial"]), d["llr"], d["lower"], d["upper"], d["elo"],
                         d["elo_error"], d.get("model", "normalized"), d.get("elo_note"))  # fmt: skip

    def ladders(self) -> list[LadderInfo]:
        """The course's ladders, as the /ladders page lists them."""
        return [_ladder_info(d) for d in self._call("/ladders")["ladders"]]

    def ladder(self, name: str) -> LadderTable:
        """The ladder's table as its page shows it to this token's user (aliases, the rows they may see)."""
        d = self._call(f"/ladder/{urllib.parse.quote(name, safe='')}", missing=LIST_LADDERS)
        info = _ladder_info(d["ladder"])
        rows = tuple(LadderRow(r["rank"], r["name"], r["mine"], r["elo"], r["margin95"], r["games"], r["points"],
                               r.get("engine")) for r in d["rows"])  # fmt: skip
        found = d.get("deadline")
        deadline = None if found is None else _deadline(found, info.deadline_games)
        return LadderTable(info, rows, d["hidden"], d["games"], deadline)

    def enter(self, ladder: str, engine: str, version: int | None = None) -> Entered:
        """Enter the user's ``engine`` in ``ladder`` (in place of the one entered before), as the
        ladder page's form does: its ``version`` plays (a number: 3 for v3, one that passed its
        check), or without one its latest checked version."""
        found = self.engine(engine)
        if not found.get("mine"):
            raise GraderError(f"the engine {engine!r} is not yours: enter one of your own engines")
        checked = [v["number"] for v in found["versions"] if v["status"] == "ok"]
        plays = max(checked, default=None) if version is None else version
        if version is not None and version not in checked:
            raise GraderError(
                _not_playing(engine, version, {v["number"]: v["status"] for v in found["versions"]}, plays)
            )
        fields = {"engine": str(found["id"]), **({"version": str(version)} if version is not None else {})}
        d = self._call(f"/ladder/{urllib.parse.quote(ladder, safe='')}/enter", fields, missing=LIST_LADDERS)
        return Entered(ladder, engine, plays, d.get("alias"), version is not None)

    def start_deadline(self, ladder: str) -> int:
        """Start the ladder's deadline tournament (an instructor's token); the games queued."""
        d = self._call(f"/ladder/{urllib.parse.quote(ladder, safe='')}/deadline", {}, missing=LIST_LADDERS)
        return int(d["games"])

    def follow_deadline(self, ladder: str, every: float = 2.0) -> Iterator[DeadlineProgress]:
        """The ladder's deadline tournament each time its games played change, asked every
        ``every`` seconds, until it is over (its last state, with the grades, comes last)."""
        shown = None
        while True:
            found = self.ladder(ladder).deadline
            if found is None:
                raise GraderError(f"only the course's staff follow the deadline tournament of {ladder!r}")
            if found.started is None:
                raise GraderError(f"the deadline tournament of {ladder!r} has not started: start it first")
            if found != shown:
                yield found
                shown = found
            if found.over:
                return
            time.sleep(every)


LIST_LADDERS = "grader arena ladders lists the course's ladders"


@dataclass(frozen=True)
class Uploaded:
    """A version uploaded: its number, where its engine's page is, and its check (``status``:
    checking, ok or failed; ``message``: what the check found, once over)."""

    engine: str
    engine_id: int
    number: int
    status: str
    message: str
    url: str

    def line(self) -> str:
        """'mine v3 passed its check: it played a whole legal game ...' (or is being checked)."""
        if self.status == "checking":
            return f"Uploaded {self.engine} v{self.number}: a worker checks it now ({self.url})"
        verdict = "passed its check" if self.status == "ok" else "failed its check"
        return f"{self.engine} v{self.number} {verdict}: {self.message}"


def _not_playing(engine: str, version: int, statuses: dict[int, str], plays: int | None) -> str:
    """Why ``version`` of ``engine`` is not the one a ladder would play."""
    if version not in statuses:
        known = ", ".join(f"v{k}" for k in sorted(statuses)) or "none yet"
        return f"{engine} has no version {version} (it has {known}): upload it on the portal first"
    why = "is still being checked" if statuses[version] == "checking" else "failed its check"
    checked = [f"v{n}" for n in sorted(statuses) if statuses[n] == "ok"]
    return f"{engine} v{version} {why}: choose a version that passed its check" + (
        f" ({', '.join(checked)})" if checked else "")  # fmt: skip


@dataclass(frozen=True)
class LadderInfo:
    """A ladder and the options the course set for it."""

    name: str
    title: str
    game: str
    assignment: str | None
    anonymous: bool
    top: int | None
    tc: str
    deadline: str | None  # when its deadline tournament starts by itself (ISO), if it does
    deadline_games: int


def _ladder_info(d: dict[str, Any]) -> LadderInfo:
    return LadderInfo(d["name"], d["title"], d["game"], d["assignment"], d["anonymous"], d["top"], d["tc"],
                      d["deadline"], d["deadline_games"])  # fmt: skip


def ladders_table(found: list[LadderInfo], fmt: str = "simple") -> str:
    """The ladders as a text table: name, title, game, clock, who is shown how, the deadline."""
    rows = [[x.name, x.title, x.game, x.tc, _shown(x), x.deadline or ""] for x in found]
    return tabulate(rows, headers=["ladder", "title", "game", "clock", "students see", "deadline"], tablefmt=fmt,
                    disable_numparse=True)  # fmt: skip


def _shown(ladder: LadderInfo) -> str:
    names = "aliases" if ladder.anonymous else "names"
    return names if ladder.top is None else f"{names}, top {ladder.top} and around their own"


@dataclass(frozen=True)
class LadderRow:
    """A row of a ladder's table as one reader sees it (``name``: an alias for a student of an anonymous ladder)."""

    rank: int
    name: str
    mine: bool
    elo: float | None  # None: not rated yet
    margin95: float | None
    games: int
    points: float
    engine: str | None = None  # the engine and version that plays ('mine v3'), where the reader sees it


@dataclass(frozen=True)
class DeadlineProgress:
    """A ladder's deadline tournament as the staff see it: games played of all, grades so far."""

    started: str | None
    played: int
    planned: int
    over: bool
    grades: tuple[ShareGrade, ...]

    def line(self) -> str:
        """'started 2026-11-27 13:00 UTC: 12 of 40 games played' (or 'not started')."""
        if self.started is None:
            return "not started"
        at = dt.datetime.fromisoformat(self.started)
        at = at.astimezone(dt.timezone.utc) if at.tzinfo else at  # naive: UTC, as SQLite gives it back
        return f"started {at:%Y-%m-%d %H:%M} UTC: {self.played} of {self.planned} games played"


def _deadline(d: dict[str, Any], games_a_pair: int) -> DeadlineProgress:
    per_engine = games_a_pair * (len(d["grades"]) - 1)
    grades = tuple(ShareGrade(g["name"], g["games"], None if g["share"] is None else g["share"] / 100, g["grade"],
                              g["complete"], "" if g["complete"] else f"{g['games']} of {per_engine} games played")
                   for g in d["grades"])  # fmt: skip
    return DeadlineProgress(d["started"], d["played"], d["planned"], d["over"], grades)


@dataclass(frozen=True)
class LadderTable:
    """A ladder as its page shows it to one reader."""

    ladder: LadderInfo
    rows: tuple[LadderRow, ...]
    hidden: int  # rows this reader does not see (top N and around their own)
    games: int
    deadline: DeadlineProgress | None  # None: not staff

    def text(self, fmt: str = "simple") -> str:
        """The page's heading line, its table (Elo with its 95% error bar) and what is not shown."""
        x = self.ladder
        head = f"{x.title}: ladder of {x.game} at {x.tc} a game, {self.games} games so far"
        if not self.rows:
            return f"{head}\nNo entries yet."
        rows = [[r.rank, r.name + (" (you)" if r.mine else ""), r.engine or "",
                 "not rated yet" if r.elo is None else f"{r.elo:+.0f}",
                 "" if r.margin95 is None else f"{r.margin95:.0f}", r.games, fmt_total(r.points)]
                for r in self.rows]  # fmt: skip
        table = tabulate(rows, headers=["#", "entry", "engine", "Elo (logistic)", "+-95%", "games", "points"],
                         tablefmt=fmt, disable_numparse=True)  # fmt: skip
        lines = [head, table]
        if self.hidden:
            lines.append(f"{self.hidden} more {'entry is' if self.hidden == 1 else 'entries are'} not shown: "
                         f"you see the top {x.top} and the entries around your own")  # fmt: skip
        return "\n".join(lines)


@dataclass(frozen=True)
class Entered:
    """An engine entered in a ladder: the version that plays (None: none checked yet), the alias shown to students."""

    ladder: str
    engine: str
    version: int | None
    alias: str | None
    chosen: bool = False  # the author chose the version (else the latest checked one plays)

    def line(self) -> str:
        plays = ("it plays once a version of it passes its check" if self.version is None
                 else f"its v{self.version} plays, as you chose" if self.chosen
                 else f"its v{self.version} plays (its latest checked version)")  # fmt: skip
        return f"{self.engine} entered in the ladder {self.ladder}: {plays}" + (
            f"; students see it as {self.alias}" if self.alias else "")  # fmt: skip


def _multipart(fields: dict[str, str], files: dict[str, Path]) -> tuple[bytes, str]:
    """A multipart/form-data body of ``fields`` and ``files`` (read now), and its content type."""
    boundary = "grader" + secrets.token_hex(16)
    parts: list[bytes] = []
    for name, value in fields.items():
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode())
    for name, path in files.items():
        try:
            data = Path(path).read_bytes()
        except OSError as e:
            raise GraderError(f"cannot read {path}: {e.strerror}") from None
        head = (f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; filename="{Path(path).name}"\r\n'
                "Content-Type: application/octet-stream\r\n\r\n")  # fmt: skip
        parts.append(head.encode() + data + b"\r\n")
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"
