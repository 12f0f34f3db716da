"""A client of a running portal's arena (``grader arena test --portal``): JSON over HTTP at the
portal's /api paths, signed by the author's API token (made on the portal's /arena page). The
standard library's urllib only: the command line needs no extra to start a test."""

from __future__ import annotations

import json
import secrets
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import GraderError

FINISHED = ("H0", "H1", "limit", "stopped", "error")  # a test's status once it has ended


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

    @property
    def finished(self) -> bool:
        return self.status in FINISHED

    def line(self) -> str:
        """'H1: 14 games, W-D-L 12-1-1, LLR 3.02 (-2.94, 2.94), Elo 180.2 +/- 95.0'."""
        elo = "Elo not finite" if self.elo is None else f"Elo {self.elo:g}" + (
            f" +/- {self.elo_error:g}" if self.elo_error is not None else "")  # fmt: skip
        return (f"{self.status}: {self.games} games, W-D-L {self.wins}-{self.draws}-{self.losses}, "
                f"LLR {self.llr:g} ({self.lower:g}, {self.upper:g}), {elo}")  # fmt: skip


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

    def _call(self, path: str, fields: dict[str, str] | None = None, files: dict[str, Path] | None = None) -> Any:
        """GET ``path`` (POST with ``fields`` and ``files``) under /api; its JSON. GraderError,
        one line, with the portal's own message when it refuses."""
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
                said = json.loads(e.read()).get("error") or e.reason
            except (ValueError, AttributeError):
                said = e.reason
            if e.code == 401:
                said = f"{said} (the portal does not know this API token: make one on its /arena page)"
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

    def state(self, test: str) -> TestState:
        d = self._call(f"/arena/t/{urllib.parse.quote(test)}")
        return TestState(d["id"], f"{self.url}/arena/t/{d['id']}", d["status"], d["games"], d["wins"], d["draws"],
                         d["losses"], tuple(d["pentanomial"]), d["llr"], d["lower"], d["upper"], d["elo"],
                         d["elo_error"])  # fmt: skip


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
