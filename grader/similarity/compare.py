"""Submissions found in folders, fingerprinted by copydetect (its tokenizer renames identifiers
and drops comments and whitespace; winnowed k-grams of the rest), and every pair compared.

A pair's similarity is copydetect's: the share of a file's fingerprinted tokens that also
appear in the other file, the larger of the two shares, over the pair's most similar files.
The starter code's k-grams are left out of every file's fingerprints before any comparison.
Every pair's share of common fingerprints is counted at once (a sparse matrix product); the
pairs most likely to be similar by that count are then compared by copydetect, passage by passage."""

from __future__ import annotations

import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import GraderError
from ..runs.text import plural

SOURCE_SUFFIXES = frozenset(
    {".py", ".c", ".h", ".cc", ".cpp", ".hpp", ".java", ".js", ".ts", ".go", ".rs", ".rb", ".jl", ".kt", ".cs"}
)
NOISE = 25  # copydetect's default: a match is at least 25 characters of tokenized code
GUARANTEE = 25  # copydetect's default: a match this long is always found (winnowing window 1)
TOP = 50  # pairs kept with their similar passages
WINDOW = GUARANTEE - NOISE + 1  # winnowing's window
PER_TASK = 16  # files a tokenizing process is given at a time

_INSTALL = "grader similar needs copydetect: pip install -e '.[similarity]'"


@dataclass(frozen=True)
class SourceFile:
    """One source file of a submission: its path inside the submission, and its text."""

    relative: str
    text: str


@dataclass(frozen=True)
class Submission:
    """A student's files: a source file given on its own, or the source files of a folder.
    ``archive``: from an earlier term, compared with the class but not with the archive."""

    name: str
    path: Path
    files: tuple[SourceFile, ...]
    archive: bool = False


@dataclass(frozen=True)
class FileMatch:
    """Two files' similar passages: each file's share of its tokens in them, the count of
    similar tokens, and the passages as character spans (start, end) of each file's text."""

    left: str
    right: str
    left_share: float
    right_share: float
    tokens: int
    left_spans: tuple[tuple[int, int], ...]
    right_spans: tuple[tuple[int, int], ...]

    @property
    def similarity(self) -> float:
        return max(self.left_share, self.right_share)

    def to_json(self) -> dict[str, Any]:
        return {"left": self.left, "right": self.right, "left_share": round(self.left_share, 4),
                "right_share": round(self.right_share, 4), "tokens": self.tokens,
                "left_spans": [list(s) for s in self.left_spans],
                "right_spans": [list(s) for s in self.right_spans]}  # fmt: skip


@dataclass(frozen=True)
class PairResult:
    """Two submissions (the right one perhaps from the archive), their similarity, and their
    files' matches, the most similar first."""

    left: str
    right: str
    similarity: float
    matches: tuple[FileMatch, ...]
    right_archive: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"left": self.left, "right": self.right, "right_archive": self.right_archive,
                "similarity": round(self.similarity, 4), "matches": [m.to_json() for m in self.matches]}  # fmt: skip


@dataclass
class SimilarityReport:
    """The ranking: the ``top`` most similar pairs (``pairs``), how many pairs were compared,
    and what was compared."""

    submissions: list[Submission]
    pairs: list[PairResult]
    compared: int
    base_files: int
    seconds: float
    noise: int = NOISE
    guarantee: int = GUARANTEE
    texts: dict[tuple[str, str], str] = field(default_factory=dict, repr=False)
    not_text: list[str] = field(default_factory=list)  # files named like source that are no text, left out

    def text(self, submission: str, relative: str) -> str:
        """A file's text, for the report."""
        return self.texts[(submission, relative)]

    def to_json(self) -> dict[str, Any]:
        return {
            "submissions": [{"name": s.name, "archive": s.archive, "files": [f.relative for f in s.files]}
                            for s in self.submissions],
            "base_files": self.base_files, "compared": self.compared, "seconds": round(self.seconds, 3),
            "settings": {"noise": self.noise, "guarantee": self.guarantee},
            "pairs": [p.to_json() for p in self.pairs], "not_text": self.not_text,
        }  # fmt: skip


def _source_files(root: Path, not_text: list[Path] | None = None) -> tuple[SourceFile, ...]:
    """The source files under ``root`` (a file, or a folder searched through), hidden files,
    caches and links left out; text that is not UTF-8 is read with replacement characters. A
    file that is no text at all (a NUL byte: a compiled program named like a source file) is
    left out too, and its path added to ``not_text``."""
    if root.is_file():
        paths = [root]
    else:
        paths = [p for p in sorted(root.rglob("*")) if p.suffix.lower() in SOURCE_SUFFIXES and p.is_file()
                 and not p.is_symlink()
                 and not any(part.startswith((".", "_")) for part in p.relative_to(root).parts)]  # fmt: skip
    out = []
    for p in paths:
        try:
            data = p.read_bytes()
        except OSError as e:
            raise GraderError(f"cannot read '{p}': {e}") from None
        if b"\0" in data:
            if not_text is not None:
                not_text.append(p)
            continue
        text = data.decode("utf-8", "replace")
        out.append(SourceFile(p.name if p == root else p.relative_to(root).as_posix(), text))
    return tuple(out)


def find_submissions(folders: list[str | Path], archive: bool = False, qualify: bool = False,
                     not_text: list[Path] | None = None) -> list[Submission]:  # fmt: skip
    """The submissions in ``folders``: each source file directly in a folder is a student (named by
    the file), each sub-folder is a student (named by the folder, all its source files). A name is
    'folder/student' when ``qualify`` (several folders given). Files named like source that are
    no text are left out, their paths added to ``not_text``."""
    found: list[Submission] = []
    for arg in folders:
        folder = Path(arg)
        if not folder.is_dir():
            raise GraderError(f"'{folder}' is not a folder: give a folder of students' files or folders")
        for child in sorted(folder.iterdir()):
            if child.name.startswith((".", "_")) or child.is_symlink():
                continue
            if child.is_file() and child.suffix.lower() not in SOURCE_SUFFIXES:
                continue
            name = child.stem if child.is_file() else child.name
            files = _source_files(child, not_text)
            if files:
                found.append(Submission(f"{folder.name}/{name}" if qualify else name, child, files, archive))
    return found


@dataclass
class _Fingerprint:
    """What copydetect's ``compare_files`` reads of its CodeFingerprint, made from text tokenized
    in another process: the tokenized text, its offsets into the file's text, the k-gram hashes
    and where each one is, and how many tokens they cover."""

    k: int
    filtered_code: str
    offsets: Any
    hashes: set[Any]
    hash_idx: dict[Any, list[int]]
    token_coverage: float


def _tokenized(source: SourceFile) -> tuple[str, Any]:
    """copydetect's tokenized text of a file (identifiers as letters, no comments or whitespace)
    and its offsets into the file's text: the slow part (Pygments, in pure Python)."""
    from copydetect.utils import filter_code

    code, offsets = filter_code(source.text, source.relative)
    return code, offsets


def _hashes(tokens: tuple[str, Any], boilerplate: Any) -> Any:
    """The file's winnowed k-gram hashes (unique, sorted), the starter code's left out."""
    import numpy as np
    from copydetect.utils import hashed_kgrams, winnow

    code = tokens[0]
    if len(code) < NOISE:
        return np.empty(0, np.int64)
    hashes = winnow(hashed_kgrams(code, NOISE), WINDOW, remove_duplicates=True)[0]
    return np.setdiff1d(hashes, boilerplate, assume_unique=True) if len(boilerplate) else hashes


def _fingerprint(tokens: tuple[str, Any], boilerplate: Any) -> _Fingerprint | None:
    """copydetect's fingerprint of a tokenized file, or None when it holds no k-gram."""
    from copydetect.utils import get_document_fingerprints, get_token_coverage

    code, offsets = tokens
    if len(code) < NOISE:
        return None
    hashes, where = get_document_fingerprints(code, NOISE, WINDOW, boilerplate)
    if not hashes:
        return None
    return _Fingerprint(NOISE, code, offsets, hashes, where, get_token_coverage(where, NOISE, len(code)))


def _base_hashes(base: list[str | Path]) -> tuple[Any, int]:
    """Every k-gram hash of the starter code (unique, sorted), and the count of its files."""
    import numpy as np
    from copydetect.utils import hashed_kgrams

    hashes: list[Any] = [np.empty(0, np.int64)]
    files = 0
    for arg in base:
        path = Path(arg)
        if not path.exists():
            raise GraderError(f"--base '{path}' does not exist: give the starter code's file or folder")
        for source in _source_files(path):
            files += 1
            code = _tokenized(source)[0]
            if len(code) >= NOISE:
                hashes.append(hashed_kgrams(code, NOISE))
    return np.unique(np.concatenate(hashes)), files


def _spans(slices: Any) -> tuple[tuple[int, int], ...]:
    """copydetect's 2xN slice array as (start, end) spans, overlapping ones merged."""
    spans: list[tuple[int, int]] = []
    for start, end in sorted(zip(slices[0].tolist(), slices[1].tolist())):
        if spans and start <= spans[-1][1]:
            spans[-1] = (spans[-1][0], max(spans[-1][1], int(end)))
        else:
            spans.append((int(start), int(end)))
    return tuple(spans)


def _match(left: SourceFile, right: SourceFile, a: Any, b: Any) -> FileMatch | None:
    from copydetect.detector import compare_files

    if a.hashes.isdisjoint(b.hashes):
        return None
    tokens, (share_a, share_b), (slices_a, slices_b) = compare_files(a, b)
    if not tokens:
        return None
    return FileMatch(left.relative, right.relative, float(share_a), float(share_b), int(tokens),
                     _spans(slices_a), _spans(slices_b))  # fmt: skip


def _compare(left: Submission, right: Submission, prints: Any) -> PairResult | None:
    """Every file of ``left`` with every file of ``right``, passage by passage (``prints``: each
    file's fingerprint by (submission, file), or None)."""
    matches = []
    for lf in left.files:
        a = prints.get((left.name, lf.relative))
        if a is None:
            continue
        for rf in right.files:
            b = prints.get((right.name, rf.relative))
            if b is not None and (m := _match(lf, rf, a, b)) is not None:
                matches.append(m)
    if not matches:
        return None
    matches.sort(key=lambda m: (-m.similarity, -m.tokens))
    return PairResult(left.name, right.name, matches[0].similarity, tuple(matches), right.archive)


def _candidates(ordered: list[Submission], current: int, hashes: dict[tuple[str, str], Any],
                limit: int) -> list[tuple[int, int]]:  # fmt: skip
    """The ``limit`` pairs (i, j) of ``ordered`` (its first ``current`` the class, then the archive)
    most likely to be similar, by the share of fingerprints their files have in common (the
    estimate of copydetect's share that winnowing is built for), counted for every pair at once
    as a product of sparse matrices; pairs sharing no fingerprint are left out."""
    import numpy as np
    from scipy import sparse

    owner = [k for k, s in enumerate(ordered) for _ in s.files]
    arrays = [hashes[(s.name, f.relative)] for s in ordered for f in s.files]
    sizes = np.array([len(h) for h in arrays])
    if not sizes.sum():
        return []
    _, column = np.unique(np.concatenate(arrays), return_inverse=True)
    rows = np.repeat(np.arange(len(arrays)), sizes)
    matrix = sparse.csr_matrix((np.ones(len(rows), np.float32), (rows, column)), shape=(len(arrays), column.max() + 1))
    owner_array = np.array(owner)
    class_files = int(np.searchsorted(owner_array, current))
    shared = (matrix[:class_files] @ matrix.T).toarray()
    estimate = shared / np.maximum(np.minimum.outer(sizes[:class_files], sizes), 1)
    starts = np.flatnonzero(np.r_[True, owner_array[1:] != owner_array[:-1]])
    by_pair = np.maximum.reduceat(np.maximum.reduceat(estimate, starts[:current], axis=0), starts, axis=1)
    by_pair[np.tril_indices(current, m=len(ordered))] = 0  # each pair of the class once; a student not with themself
    order = np.argsort(-by_pair, axis=None, kind="stable")[:limit]
    return [(int(i), int(j)) for i, j in zip(*np.unravel_index(order, by_pair.shape)) if by_pair[i, j] > 0]


def _tokenize_all(files: list[SourceFile], jobs: int) -> list[tuple[str, Any]]:
    """Each file's tokenized text and offsets, in ``jobs`` processes when there are many. Only
    the tokens cross between processes: the hashes are taken here, as Python's string hashes
    differ from one process to another."""
    if jobs < 2 or len(files) < 4 * PER_TASK:
        return [_tokenized(f) for f in files]
    with ProcessPoolExecutor(jobs) as pool:
        return list(pool.map(_tokenized, files, chunksize=PER_TASK))


class _Prints(dict[tuple[str, str], Any]):
    """The fingerprints of the files compared in full, made when first asked for."""

    def __init__(self, tokens: dict[tuple[str, str], tuple[str, Any]], boilerplate: Any):
        super().__init__()
        self.tokens, self.boilerplate = tokens, boilerplate

    def __missing__(self, key: tuple[str, str]) -> _Fingerprint | None:
        self[key] = found = _fingerprint(self.tokens[key], self.boilerplate)
        return found

    def get(self, key: tuple[str, str], default: Any = None) -> Any:  # type: ignore[override]
        return self[key]


def compare_submissions(
    submissions: list[Submission], base: list[str | Path] | None = None, top: int = TOP, jobs: int = 1
) -> SimilarityReport:
    """Compare every pair of the class's submissions, and each of them with every archived one
    (archived ones are not compared with each other); keep the ``top`` most similar pairs.
    ``jobs``: processes that fingerprint the files."""
    try:
        import copydetect  # noqa: F401
    except ImportError:
        raise GraderError(_INSTALL) from None
    started = time.monotonic()
    names = [s.name for s in submissions]
    if len(set(names)) != len(names):
        twice = sorted({n for n in names if names.count(n) > 1})
        raise GraderError(f"two submissions are named {twice[0]!r}: rename one, or give their folders apart")
    boilerplate, base_files = _base_hashes(list(base or []))
    keys = [(s.name, f.relative) for s in submissions for f in s.files]
    tokens = dict(zip(keys, _tokenize_all([f for s in submissions for f in s.files], jobs)))
    hashes = {key: _hashes(tokens[key], boilerplate) for key in keys}
    prints = _Prints(tokens, boilerplate)
    current = [s for s in submissions if not s.archive]
    archived = [s for s in submissions if s.archive]
    ordered = current + archived
    compared = len(current) * (len(current) - 1) // 2 + len(current) * len(archived)
    best: list[tuple[float, int, PairResult]] = []
    for n, (i, j) in enumerate(_candidates(ordered, len(current), hashes, max(3 * top, top + 50))):
        pair = _compare(ordered[i], ordered[j], prints)
        if pair is not None:
            best.append((pair.similarity, -n, pair))
    best = sorted(best, key=lambda e: (-e[0], -e[1]))[:top]
    pairs = [entry[2] for entry in best]
    texts = {(s.name, f.relative): f.text for s in submissions for f in s.files}
    return SimilarityReport(submissions, pairs, compared, base_files, time.monotonic() - started, texts=texts)


def similar(folders: list[str | Path], archive: list[str | Path] | None = None, base: list[str | Path] | None = None,
            top: int = TOP, jobs: int = 1) -> SimilarityReport:  # fmt: skip
    """``grader similar``: the class in ``folders`` ranked, with the ``archive`` folders'
    submissions and the starter code ``base`` left out of every match; ``jobs`` processes
    fingerprint the files."""
    archive = list(archive or [])
    qualify = len(folders) + len(archive) > 1
    not_text: list[Path] = []
    submissions = find_submissions(list(folders), qualify=qualify, not_text=not_text)
    if len(submissions) < 2 and not archive:
        apart = f" ({_not_text(not_text)})" if not_text else ""
        raise GraderError(
            f"{plural(len(submissions), 'submission', 'submissions')} found in {', '.join(map(str, folders))}{apart}: "
            "give a folder holding each student's source file or folder"
        )
    submissions += find_submissions(archive, archive=True, qualify=qualify, not_text=not_text)
    if top < 1:
        raise GraderError(f"--top {top}: give 1 or more pairs to show")
    report = compare_submissions(submissions, base, top, jobs)
    report.not_text = [str(p) for p in not_text]
    return report


def _not_text(paths: list[Path]) -> str:
    """'left out, not source text: a.py, b.py'."""
    return f"left out, not source text: {', '.join(map(str, paths))}"
