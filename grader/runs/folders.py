"""Record folders: a run's meta file and its records, one sealed JSON line each, written as
they happen, for every mode (a grading run, a regression class, a tournament).

A folder killed at any moment loses at most what was running; reopened (``--resume``) it
reads every record whose seal holds, warns of those that do not, and goes on.
"""

from __future__ import annotations

import datetime
import json
import os
import threading
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Sequence, TypeVar

from ..engines.scripts import RunSettings
from ..errors import GraderError, RunFolderError
from ..version import __version__
from .seals import SEAL, keep_generation, kept_generation, load_key, new_key, seal, sealed
from .submissions import Submission, find_submissions


def default_path() -> Path:
    return Path("runs") / datetime.datetime.now().strftime("%Y-%m-%d_%H-%M-%S")


def check_new_folder(path: Path, kind: str = "run") -> None:
    """Raise unless ``path`` can become a new folder: missing, or an empty folder we may write."""
    for other in _kinds(RecordFolder):
        if (path / other.META).exists() and other.KIND == kind:
            raise RunFolderError(
                f"'{path}' already holds a {kind}: continue it with --resume {path}, or choose another --out"
            )
        if (path / other.META).exists():
            raise RunFolderError(f"'{path}' holds a {other.KIND}, not a {kind}: choose another --out")
    if path.exists() and not path.is_dir():
        raise RunFolderError(f"'{path}' is a file, not a folder: choose another --out")
    if path.is_dir() and any(path.iterdir()):
        raise RunFolderError(f"'{path}' is not empty: give --out a new folder (or an empty one) for the {kind}")
    parent = next((q for q in [path, *path.parents] if q.exists()), Path("."))
    if not os.access(parent, os.W_OK | os.X_OK):
        raise RunFolderError(f"cannot create '{path}': '{parent}' is not writable; choose another --out")


def _kinds(cls: type[RecordFolder]) -> list[type[RecordFolder]]:
    """Every kind of record folder: the subclasses of ``cls`` with a description file."""
    out: list[type[RecordFolder]] = []
    for sub in cls.__subclasses__():
        out += ([sub] if sub.META else []) + _kinds(sub)
    return out


class RecordFolder:
    """A folder holding a JSON description (``META``) and JSON lines (``LINES``) appended as
    results finish. A line cut short by a kill is skipped when read."""

    META = ""
    LINES = ""
    KIND = ""  # 'run', 'tournament'
    WRITER = ""  # what writes such folders, for messages
    REQUIRED: tuple[str, ...] = ()  # keys META must have

    def __init__(self, path: Path, meta: dict[str, Any], key: bytes):
        self.path = path
        self.meta = meta
        self._key = key
        self._lock = threading.Lock()
        self._ended = False  # checked that the lines file ends with a whole line
        self.tampered: list[dict[str, Any]] = []  # records whose seal failed, as last read (with their line)
        self.unsealed = False  # an adopted folder of grader 0.1: its records carry no seals yet

    @classmethod
    def _create(cls, path: str | Path, meta: dict[str, Any]):
        p = Path(path)
        check_new_folder(p, cls.KIND)
        try:
            p.mkdir(mode=0o700, parents=True, exist_ok=True)
            os.chmod(p, 0o700)  # the user's own: nobody else reads the records
        except OSError as e:
            raise RunFolderError(f"cannot create {cls.KIND} folder '{p}': {e.strerror}") from None
        run_id = uuid.uuid4().hex
        created = datetime.datetime.now().isoformat(timespec="seconds")
        folder = cls(p, {"grader_version": __version__, "created": created, "run_id": run_id, **meta}, new_key(run_id))
        folder._write_meta()
        return folder

    @classmethod
    def open(cls, path: str | Path, adopt_unsealed: bool = False):
        """Open a folder the grader wrote. A folder written before records were sealed (grader
        0.1, no run id) is refused, unless ``adopt_unsealed``: then it gets a run id and a key,
        its description is sealed, and its records are read as they are (``unsealed`` is set)."""
        p = Path(path)
        try:
            meta = json.loads((p / cls.META).read_text(encoding="utf-8"))
            if not isinstance(meta, dict):
                raise ValueError("not a JSON object")
            legacy = "run_id" not in meta and SEAL not in meta
            missing = [k for k in (*cls.REQUIRED, *(() if legacy else ("run_id",))) if k not in meta]
            if missing:
                raise ValueError(f"no {', '.join(missing)}")
        except FileNotFoundError:
            raise RunFolderError(
                f"'{p}' is not a {cls.KIND} folder (no {cls.META}): give the folder {cls.WRITER} wrote"
            ) from None
        except (OSError, ValueError, TypeError) as e:
            raise RunFolderError(f"cannot read {cls.KIND} folder '{p}': {cls.META} is damaged ({e!r})") from None
        if legacy:
            version = str(meta.get("grader_version", "0.1"))
            if not (version == "0.1" or version.startswith("0.1.")) or cls._any_sealed(p):
                raise RunFolderError(
                    f"'{p}' was written by grader {version}, which seals its records, but its seals are gone: "
                    "its results cannot be trusted; grade again into a new folder"
                )
            if not adopt_unsealed:
                raise RunFolderError(
                    f"'{p}' was written by grader {version}, before records were sealed: "
                    "run 'grader rejudge' on it once to bring it up to date"
                )
            return cls._adopt(p, meta)
        key = load_key(str(meta["run_id"]), p)
        if not sealed(key, meta):
            raise RunFolderError(
                f"'{p / cls.META}' was changed after the grader wrote it (its seal does not match): "
                "its results cannot be trusted; grade again into a new folder"
            )
        if int(meta.get("generation", 0)) < kept_generation(str(meta["run_id"])):
            raise RunFolderError(
                f"'{p}' was put back as it was before its records were last rewritten (rejudged): "
                "its results cannot be trusted; restore the folder's latest copy, or grade again into a new folder"
            )
        folder = cls(p, meta, key)
        try:
            folder._check()
        except (OSError, ValueError, TypeError, KeyError, AttributeError, GraderError) as e:
            raise RunFolderError(f"cannot read {cls.KIND} folder '{p}': {cls.META} is damaged ({e!r})") from None
        return folder

    @classmethod
    def _any_sealed(cls, p: Path) -> bool:
        """Whether any file of records in ``p`` holds a sealed line (grader 0.1 sealed none)."""
        for lines in p.glob("*.jsonl*"):
            try:
                if any(
                    f'"{SEAL}"' in line for line in lines.read_text(encoding="utf-8", errors="replace").splitlines()
                ):
                    return True
            except OSError:
                return True
        return False

    @classmethod
    def _adopt(cls, p: Path, meta: dict[str, Any]):
        meta = {**cls.upgrade(meta), "run_id": uuid.uuid4().hex}
        folder = cls(p, meta, new_key(meta["run_id"]))
        folder.unsealed = True
        try:
            folder._check()
        except (OSError, ValueError, TypeError, KeyError, AttributeError, GraderError) as e:
            raise RunFolderError(f"cannot read {cls.KIND} folder '{p}': {cls.META} is damaged ({e!r})") from None
        folder._write_meta()
        return folder

    @classmethod
    def upgrade(cls, meta: dict[str, Any]) -> dict[str, Any]:
        """An older description in today's form (what later versions added, at its default)."""
        return meta

    def _check(self) -> None:
        """Raise if the description cannot be used (it was damaged)."""

    def _write_meta(self) -> None:
        self.meta[SEAL] = seal(self._key, self.meta)
        tmp = self.path / (self.META + ".tmp")
        try:
            tmp.write_text(json.dumps(self.meta, indent=1), encoding="utf-8")
            os.replace(tmp, self.path / self.META)
        except OSError as e:
            tmp.unlink(missing_ok=True)
            raise RunFolderError(f"cannot write {self.path / self.META}: {e.strerror}") from None

    def _append(self, record: dict[str, Any], lines: str | None = None) -> None:
        """One whole line, written and closed (so flushed) before the next. A line left cut
        short by an earlier kill is ended first, so that it cannot swallow this one.
        ``lines``: another file of sealed lines than ``LINES``."""
        generation = 0 if lines else self.generation  # only LINES is ever rewritten
        line = json.dumps({**record, SEAL: seal(self._key, record, generation)}, separators=(",", ":")) + "\n"
        path = self.path / (lines or self.LINES)
        with self._lock:
            try:
                with open(path, "ab") as f:
                    if f.tell() and (lines or not self._ended):
                        with open(path, "rb") as r:
                            r.seek(-1, os.SEEK_END)
                            if r.read(1) != b"\n":
                                f.write(b"\n")
                    if not lines:
                        self._ended = True
                    f.write(line.encode("utf-8"))
            except OSError as e:
                raise RunFolderError(f"cannot write {path}: {e.strerror}") from None

    def _records(self, lines: str | None = None) -> list[dict[str, Any]]:
        """The records whose seal holds; the others go to ``tampered`` (never used).
        ``lines``: another file of sealed lines (its bad lines are skipped, not kept)."""
        path = self.path / (lines or self.LINES)
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return []
        except OSError as e:
            raise RunFolderError(f"cannot read {path}: {e.strerror}: is {self.path} a run folder?") from None
        records, tampered = [], []
        for number, line in enumerate(text.splitlines(), 1):
            try:
                record = json.loads(line)
            except ValueError:
                continue  # a line cut short when the run was killed
            if not isinstance(record, dict):
                continue
            if self.unsealed and SEAL not in record:
                records.append(record)
            elif any(sealed(self._key, record, g) for g in self._generations(lines)):
                del record[SEAL]
                records.append(record)
            else:
                tampered.append({**record, "line": number})
        if not lines:
            self.tampered = tampered
        return records

    @property
    def generation(self) -> int:
        """How many times the records were rewritten (rejudge): each line is sealed as one of
        this generation, so an older line put back is found out as changed."""
        return int(self.meta.get("generation", 0))

    def _generations(self, lines: str | None) -> tuple[int, ...]:
        """The generations a line of ``lines`` (None: LINES) may be sealed as: LINES's own, or
        the next, written by a rewrite that was killed before it recorded that generation."""
        return (0,) if lines else (self.generation, self.generation + 1)

    def _rewrite(self, records: list[dict[str, Any]]) -> None:
        """Replace every record by ``records``, sealed as the next generation (the old lines
        are kept beside, as ``LINES.DATE_TIME.old``)."""
        path = self.path / self.LINES
        tmp = path.with_name(path.name + ".tmp")
        stamp = datetime.datetime.now().strftime("%Y-%m-%d_%H-%M-%S.%f")
        generation = self.generation + 1
        try:
            lines = (
                json.dumps({**r, SEAL: seal(self._key, r, generation)}, separators=(",", ":")) + "\n" for r in records
            )
            tmp.write_text("".join(lines), encoding="utf-8")
            if path.exists():
                os.link(path, path.with_name(f"{path.name}.{stamp}.old"))  # never over an older copy
            os.replace(tmp, path)  # killed after this, before the generation is recorded: still read (_generations)
        except OSError as e:
            tmp.unlink(missing_ok=True)
            raise RunFolderError(f"cannot write {path}: {e.strerror}") from None
        self.meta["generation"] = generation
        self._write_meta()
        keep_generation(str(self.meta["run_id"]), generation)
        self.unsealed, self._ended = False, True

    def tampering(self) -> str | None:
        """A warning naming the records that failed their seal at the last read, if any."""
        if not self.tampered:
            return None
        lines = ", ".join(str(r["line"]) for r in self.tampered[:10]) + (" ..." if len(self.tampered) > 10 else "")
        return (
            f"{len(self.tampered)} record(s) of {self.path / self.LINES} fail their seal (line {lines}): they were "
            "changed after the grader wrote them, so they are left out of every result (--resume runs them again)"
        )


class StudentFolder(RecordFolder):
    """A record folder of students' programs (``meta['scripts']``): grading and regression runs."""

    def submissions(self) -> list[Submission]:
        """The students recorded in this run, with their scripts' paths."""
        return [
            Submission(
                name,
                Path(info["path"]) if info["path"] else None,
                info.get("problem"),
                Path(info["folder"]) if info.get("folder") else None,
                info.get("single", False),
            )
            for name, info in sorted(self.meta["scripts"].items())
        ]

    def resumed(self, paths: Sequence[str | Path], settings: RunSettings, entry: str | None,
                private: Sequence[str | Path]) -> tuple[list[Submission], str]:  # fmt: skip
        """The students a resume of this run grades (those under ``paths``, else the recorded
        ones; GraderError where a script is gone) and the isolation mechanism, checked."""
        subs = find_submissions(list(paths), set(settings.commands), entry) if paths else self.submissions()
        for sub in subs:
            if sub.path is not None and not sub.path.exists():
                raise RunFolderError(
                    f"the script of '{sub.name}' ({sub.path}) is gone: restore it, or give the scripts to run"
                )
        settings.check()
        hidden = [self.path, *(s.folder or s.path for s in subs if s.path), *map(Path, private)]
        return subs, settings.sandbox_mechanism([p for p in hidden if p is not None])

    def register(self, subs: list[Submission], digests: dict[str, str]) -> dict[str, str | None]:
        """Record the students of this (resumed) run with their scripts' content digests
        (``digests`` by name; none for a student without a script); returns the digests."""
        out = {}
        for sub in subs:
            out[sub.name] = digests.get(sub.name)
            self.meta["scripts"][sub.name] = {
                "path": str(sub.path.absolute()) if sub.path else None,
                "folder": str(sub.folder.absolute()) if sub.folder else None,
                "single": sub.single,
                "sha256": out[sub.name],
                "problem": sub.problem,
            }
        self._write_meta()
        return out

    def current_records(self) -> list[dict[str, Any]]:
        """The records (as written) of each student's current script."""
        hashes = {name: info["sha256"] for name, info in self.meta["scripts"].items()}
        return [r for r in self._records() if r.get("student") in hashes and r.get("sha256") == hashes[r["student"]]]


F = TypeVar("F", bound=RecordFolder)
R = TypeVar("R")


@dataclass
class ClassResults(Generic[F, R]):
    """A class run in its folder: each student's results as recorded, why the run stopped
    early (if it did), and the exports written."""

    folder: F
    results: list[R]
    interrupted: str | None = None
    files: list[str] = field(default_factory=list)
