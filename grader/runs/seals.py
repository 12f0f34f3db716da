"""Seals on a run folder's records: an HMAC-SHA256 with a key of the run's own, kept outside
the run folder (and out of every script's reach), so a record changed or forged after the
grader wrote it is found out.

Keys live in ``$GRADER_KEYS``, else ``$XDG_DATA_HOME/grader/keys``, else
``~/.local/share/grader/keys``: one file per run, readable by its owner only. A run folder
moved to another machine needs its key file copied along to be read there.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
from pathlib import Path
from typing import Any

from ..errors import RunFolderError

SEAL = "seal"  # the key of a record's seal
RUN_ID = re.compile(r"[0-9a-f]{32}")  # what the grader names a run (uuid4().hex)


def keys_dir() -> Path:
    """Where the keys of runs are kept."""
    if os.environ.get("GRADER_KEYS"):
        return Path(os.environ["GRADER_KEYS"])
    data = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(data) / "grader" / "keys"


def new_key(run_id: str) -> bytes:
    """Make and keep the key of a new run."""
    folder = keys_dir()
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        key = secrets.token_bytes(32)
        fd = os.open(folder / f"{run_id}.key", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(key.hex())
    except OSError as e:
        raise RunFolderError(
            f"cannot keep the run's key in '{folder}': {e.strerror}; set GRADER_KEYS to a private folder"
        ) from None
    return key


def load_key(run_id: str, where: Path) -> bytes:
    """The key of an existing run (``where``: its folder, for the message)."""
    if not RUN_ID.fullmatch(run_id):
        raise RunFolderError(f"'{where}' names no run the grader made (its run id {run_id[:40]!r} is not one): "
                             "its results cannot be trusted; grade again into a new folder")  # fmt: skip
    path = keys_dir() / f"{run_id}.key"
    try:
        return bytes.fromhex(path.read_text().strip())
    except (OSError, ValueError):
        raise RunFolderError(
            f"no key to check the seals of '{where}' (run {run_id}): it is kept in {path} on the machine that "
            "graded it; copy it there (or set GRADER_KEYS to the folder holding it)"
        ) from None


def seal(key: bytes, record: dict[str, Any], generation: int = 0) -> str:
    """The seal of ``record`` (its own seal, if any, left out) as a line of the records'
    ``generation``: a line of an earlier generation (a copy kept from before its file was
    rewritten) does not carry the seal of a later one."""
    body = {k: v for k, v in record.items() if k != SEAL}
    if generation:
        body[" generation"] = generation
    text = json.dumps(body, sort_keys=True, separators=(",", ":"))
    return hmac.new(key, text.encode("utf-8"), hashlib.sha256).hexdigest()


def sealed(key: bytes, record: dict[str, Any], generation: int = 0) -> bool:
    """True when ``record`` carries the seal of its content, in ``generation``."""
    given = record.get(SEAL)
    return isinstance(given, str) and hmac.compare_digest(given, seal(key, record, generation))


def kept_generation(run_id: str) -> int:
    """The generation of a run's records kept beside its key (0: none kept)."""
    try:
        return int((keys_dir() / f"{run_id}.generation").read_text())
    except (OSError, ValueError):
        return 0


def keep_generation(run_id: str, generation: int) -> None:
    """Keep the generation of a run's records beside its key, out of the run folder's reach:
    a whole folder put back as it was before a rewrite is then found out too."""
    path = keys_dir() / f"{run_id}.generation"
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_text(str(generation))
        os.replace(tmp, path)
    except OSError as e:
        raise RunFolderError(f"cannot keep the run's generation in '{path.parent}': {e.strerror}") from None
