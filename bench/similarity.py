"""Similarity benchmark: public student scripts of the Othello lab and disguised copies of them.

Run: python bench/similarity.py [--mirrors DIR] [--copies N] [--class-size 500] [--archive-size 2000]

The scripts are those of bench/data/similarity-sources.txt (one per student, at the commits
listed), downloaded from GitHub into --cache, or read with git from --mirrors DIR/owner+name/repo.
A generator makes disguised copies of each: identifiers renamed, functions reordered, comments
and whitespace changed, dead code added, for loops rewritten as while loops, expressions split
out into new functions; each kind alone, and all of them at once. Known pairs: a script and its
copies, and copies of the same script. Printed for grader similar and for copydetect's defaults
(its CopyDetector over the folder, ranked as its report ranks: by the first file's share;
grader similar keeps the top 2K pairs, comparing in full only the likeliest 6K of them):
precision and recall of the top K pairs (K = the count of known pairs), recall of the top 2K,
average precision over the ranking (for grader similar, its top 2K), the time, and the least
similarity of a script and its copy by disguise beside the most similar pair of two students.
Then the time of grader similar for a class of --class-size with an archive of --archive-size
synthetic files (functions of the sources, mixed and renamed).
"""

from __future__ import annotations

import argparse
import ast
import io
import logging
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
import tokenize
import urllib.parse
import urllib.request
from pathlib import Path

from grader.similarity import similar

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ROOT / "bench" / "data" / "similarity-sources.txt"
KINDS = ("rename", "reorder", "comments", "dead", "loops", "split")


def read_sources() -> list[tuple[str, str, str, str]]:
    """(repository, commit, path, group) of each listed script."""
    out = []
    for line in SOURCES.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            repo, commit, path, *group = line.split("\t")
            out.append((repo, commit, path, group[0] if group else ""))
    return out


def fetch(repo: str, commit: str, path: str, cache: Path, mirrors: Path | None) -> str:
    """A script's text: from a git mirror, or downloaded once into ``cache``."""
    if mirrors is not None:
        git = mirrors / repo.replace("/", "+") / "repo"
        return subprocess.run(["git", "-C", str(git), "show", f"{commit}:{path}"], check=True,
                              capture_output=True).stdout.decode("utf-8", "replace")  # fmt: skip
    saved = cache / repo.replace("/", "+") / commit / path
    if not saved.exists():
        url = f"https://raw.githubusercontent.com/{repo}/{commit}/{urllib.parse.quote(path)}"
        with urllib.request.urlopen(url, timeout=60) as response:
            data = response.read()
        saved.parent.mkdir(parents=True, exist_ok=True)
        saved.write_bytes(data)
    return saved.read_bytes().decode("utf-8", "replace")


# --- the disguise generator ---------------------------------------------------------------

WORDS = ["grid", "cell", "val", "tmp", "acc", "pos", "side", "spot", "item", "count", "best", "res", "node", "key"]


class Renamer(ast.NodeTransformer):
    """Every name the script defines (functions, arguments, variables) gets a new name."""

    def __init__(self, names: set[str], rng: random.Random):
        self.map = {n: f"{rng.choice(WORDS)}_{i}" for i, n in enumerate(sorted(names))}

    def visit_Name(self, node: ast.Name) -> ast.Name:
        node.id = self.map.get(node.id, node.id)
        return node

    def visit_arg(self, node: ast.arg) -> ast.arg:
        node.arg = self.map.get(node.arg, node.arg)
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
        node.name = self.map.get(node.name, node.name)
        self.generic_visit(node)
        return node


def defined_names(tree: ast.AST) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.arg) and node.arg not in ("self", "cls"):
            names.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return names - {"__name__", "__file__"}


def reorder(tree: ast.Module, rng: random.Random) -> None:
    """Functions (at the top level and in classes) shuffled among their own places."""
    for body in [tree.body] + [n.body for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]:
        places = [i for i, s in enumerate(body) if isinstance(s, ast.FunctionDef)]
        defs = [body[i] for i in places]
        rng.shuffle(defs)
        for i, d in zip(places, defs):
            body[i] = d


def dead_code(tree: ast.Module, rng: random.Random) -> None:
    """Unused assignments and never-taken branches in functions, and an unused function."""
    for fn in [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]:
        if rng.random() < 0.6:
            junk = ast.parse(rng.choice([
                f"unused_{rng.randrange(999)} = [i * {rng.randrange(2, 9)} for i in range({rng.randrange(3, 30)})]",
                f"if {rng.randrange(2, 99)} < 0:\n    print('never', {rng.randrange(99)})",
                f"check_{rng.randrange(999)} = len(str({rng.randrange(9999)})) + {rng.randrange(9)}",
            ])).body  # fmt: skip
            fn.body[rng.randrange(len(fn.body) + 1) if not ast.get_docstring(fn) else 1 : 0] = junk
    tree.body.append(ast.parse("def helper_unused(a, b):\n    total = 0\n    for k in range(a):\n"
                               "        total += k * b\n    return total").body[0])  # fmt: skip


class Loops(ast.NodeTransformer):
    """``for i in range(a, b)`` (no else, no continue) as a while loop with a counter."""

    def visit_For(self, node: ast.For) -> object:
        self.generic_visit(node)
        call = node.iter
        if (node.orelse or not isinstance(node.target, ast.Name) or not isinstance(call, ast.Call)
                or not isinstance(call.func, ast.Name) or call.func.id != "range" or not 1 <= len(call.args) <= 2
                or any(isinstance(n, ast.Continue) for n in ast.walk(node))):  # fmt: skip
            return node
        start, stop = (ast.Constant(0), call.args[0]) if len(call.args) == 1 else call.args
        i = node.target.id
        stop_name = f"{i}_stop"
        init = ast.parse(f"{i} = 0\n{stop_name} = 0").body
        init[0].value, init[1].value = start, stop  # type: ignore[attr-defined]
        loop = ast.parse(f"while {i} < {stop_name}:\n    pass").body[0]
        loop.body = node.body + ast.parse(f"{i} += 1").body  # type: ignore[attr-defined]
        return [*init, loop]


def split(tree: ast.Module, rng: random.Random) -> None:
    """The values of some returns and assignments in functions moved into new functions."""
    added = []
    for fn in [n for n in tree.body if isinstance(n, ast.FunctionDef)]:
        local = {a.arg for a in fn.args.args} | {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)
                                                  and isinstance(n.ctx, ast.Store)}  # fmt: skip
        for node in ast.walk(fn):
            if not isinstance(node, (ast.Return, ast.Assign)) or node.value is None or rng.random() < 0.5:
                continue
            value = node.value
            if sum(1 for _ in ast.walk(value)) < 8 or any(isinstance(n, (ast.Lambda, ast.comprehension, ast.Yield,
                                                                          ast.Await)) for n in ast.walk(value)):  # fmt: skip
                continue
            used = sorted({n.id for n in ast.walk(value) if isinstance(n, ast.Name) and n.id in local})
            name = f"part_{len(added)}_{rng.randrange(999)}"
            helper = ast.parse(f"def {name}({', '.join(used)}):\n    return 0").body[0]
            helper.body[0].value = value  # type: ignore[attr-defined]
            added.append(helper)
            node.value = ast.parse(f"{name}({', '.join(used)})", mode="eval").body
    tree.body[0:0] = added


def restyle_comments(text: str, rng: random.Random) -> str:
    """Comments dropped, new ones and blank lines added, spaces around commas changed."""
    try:
        tokens = [t for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.type != tokenize.COMMENT]
        text = tokenize.untokenize(tokens)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    out = []
    for line in text.splitlines():
        line = line.rstrip().replace(", ", ",") if rng.random() < 0.5 else line.rstrip()
        if line and rng.random() < 0.15:
            indent = line[: len(line) - len(line.lstrip())]
            out.append(f"{indent}# {rng.choice(['step', 'now the loop', 'check this', 'the main part', 'TODO'])}")
        out.append(line)
        if rng.random() < 0.1:
            out.append("")
    return "\n".join(out) + "\n"


def disguise(text: str, kinds: tuple[str, ...], rng: random.Random) -> str:
    """A copy of ``text`` with the disguises ``kinds``. Any but 'comments' rewrites the script
    from its syntax tree (ast.unparse), which drops its comments and normalizes its spacing too;
    scripts Python 3 cannot parse get only the text-level disguise."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return restyle_comments(text, rng)
    if kinds == ("comments",):
        return restyle_comments(text, rng)
    if "split" in kinds:
        split(tree, rng)
    if "loops" in kinds:
        tree = ast.fix_missing_locations(Loops().visit(tree))
    if "dead" in kinds:
        dead_code(tree, rng)
    if "reorder" in kinds:
        reorder(tree, rng)
    if "rename" in kinds:
        tree = Renamer(defined_names(tree), rng).visit(tree)
    ast.fix_missing_locations(tree)
    out = ast.unparse(tree) + "\n"
    return restyle_comments(out, rng) if "comments" in kinds else out


# --- the measures ---------------------------------------------------------------------------


def average_precision(ranked: list[tuple[str, str]], known: set[frozenset[str]], ignored: set[frozenset[str]]) -> float:
    """The mean, over the known pairs, of the precision at each one's rank (0 for one not ranked)."""
    hits, total = 0, 0.0
    for rank, pair in enumerate((p for p in map(frozenset, ranked) if p not in ignored), 1):
        if pair in known:
            hits += 1
            total += hits / rank
    return total / len(known)


def precision_recall(ranked: list[tuple[str, str]], known: set[frozenset[str]], ignored: set[frozenset[str]],
                     k: int) -> tuple[float, float]:  # fmt: skip
    top = [frozenset(p) for p in ranked if frozenset(p) not in ignored][:k]
    hits = sum(p in known for p in top)
    return hits / max(len(top), 1), hits / len(known)


def copydetect_ranking(folder: Path) -> tuple[list[tuple[str, str]], float]:
    """copydetect's defaults over the folder (test and reference files alike), its report's pairs
    in its order (by the first file's share, over its display threshold), then the rest."""
    from copydetect import CopyDetector

    started = time.perf_counter()
    detector = CopyDetector(test_dirs=[str(folder)], ref_dirs=[str(folder)], extensions=["py"], silent=True,
                            autoopen=False)  # fmt: skip
    detector.run()
    listed = detector.get_copied_code_list()
    seconds = time.perf_counter() - started
    seen, ranked = set(), []
    for entry in listed:
        pair = (Path(entry[2]).stem, Path(entry[3]).stem)
        if frozenset(pair) not in seen:
            seen.add(frozenset(pair))
            ranked.append(pair)
    return ranked, seconds


def cpu_seconds() -> float:
    """CPU time of this process and of its finished children (the tokenizing processes)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def synthetic(functions: list[str], count: int, rng: random.Random, folder: Path) -> None:
    """``count`` files of 8-14 functions each, drawn from ``functions`` and renamed."""
    folder.mkdir(parents=True)
    for n in range(count):
        text = "\n\n".join(rng.sample(functions, min(len(functions), rng.randint(8, 14))))
        (folder / f"s{n:05d}.py").write_text(disguise(text, ("rename",), rng))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "grader-bench" / "similarity")
    ap.add_argument("--mirrors", type=Path, default=None, help="read the sources from git mirrors DIR/owner+name/repo")
    ap.add_argument("--copies", type=int, default=1, help="copies of each script per disguise kind")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="processes that fingerprint the files")
    ap.add_argument("--class-size", type=int, default=500, help="0: no timing of a class and its archive")
    ap.add_argument("--archive-size", type=int, default=2000)
    args = ap.parse_args()
    logging.disable(logging.WARNING)  # copydetect logs each file it cannot tokenize
    rng = random.Random(args.seed)
    sources = read_sources()
    texts = [fetch(repo, commit, path, args.cache, args.mirrors) for repo, commit, path, _ in sources]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "class"
        folder.mkdir()
        origin: dict[str, int] = {}
        kind_of: dict[str, str] = {}
        names = rng.sample(range(10000), len(texts) * (1 + args.copies * (len(KINDS) + 1)))
        for i, text in enumerate(texts):
            variants = [("original", text)] + [
                ("+".join(kinds) if len(kinds) == 1 else "all", disguise(text, kinds, rng))
                for kinds in [(k,) for k in KINDS] + [KINDS]
                for _ in range(args.copies)
            ]
            for kind, variant in variants:
                name = f"student{names.pop():04d}"
                (folder / f"{name}.py").write_text(variant)
                origin[name], kind_of[name] = i, kind
        students = sorted(origin)
        known = {frozenset((a, b)) for a in students for b in students if a < b and origin[a] == origin[b]}
        groups = {i: g for i, (*_, g) in enumerate(sources) if g}
        ignored = {frozenset((a, b)) for a in students for b in students if a < b and origin[a] != origin[b]
                   and groups.get(origin[a]) is not None and groups.get(origin[a]) == groups.get(origin[b])}  # fmt: skip
        k = len(known)
        print(f"{len(texts)} public scripts ({len(sources)} students), {len(students) - len(texts)} disguised copies "
              f"({', '.join(KINDS)}, and all at once); {len(students)} files, {k} known pairs, "
              f"{len(ignored)} pairs of a shared shell left out of the scores")  # fmt: skip
        started, cpu = time.perf_counter(), cpu_seconds()
        report = similar([folder], top=2 * k, jobs=args.jobs)
        ours = time.perf_counter() - started
        ours_cpu = cpu_seconds() - cpu
        ranked = [(p.left, p.right) for p in report.pairs]
        cpu = cpu_seconds()
        theirs, their_seconds = copydetect_ranking(folder)
        their_cpu = cpu_seconds() - cpu
        print(f"{'':28} {'P@K':>6} {'R@K':>6} {'R@2K':>6} {'AP':>6} {'seconds':>8} {'CPU s':>8}")
        for label, order, seconds, used in (("grader similar", ranked, ours, ours_cpu),
                                            ("copydetect defaults", theirs, their_seconds, their_cpu)):  # fmt: skip
            p1, r1 = precision_recall(order, known, ignored, k)
            _, r2 = precision_recall(order, known, ignored, 2 * k)
            ap = average_precision(order, known, ignored)
            print(f"{label:28} {p1:6.3f} {r1:6.3f} {r2:6.3f} {ap:6.3f} {seconds:8.2f} {used:8.2f}")
        similarity = {frozenset((p.left, p.right)): p.similarity for p in report.pairs}
        lowest = {}
        for pair in known:
            a, b = sorted(pair, key=lambda n: kind_of[n] != "original")
            if kind_of[a] == "original":
                lowest[kind_of[b]] = min(lowest.get(kind_of[b], 1.0), similarity.get(pair, 0.0))
        unrelated = max((v for p, v in similarity.items() if p not in known and p not in ignored), default=0.0)
        print("grader similar, the least similar copy of a script by disguise: "
              + ", ".join(f"{kind} {100 * v:.0f}%" for kind, v in lowest.items())
              + f"; the most similar pair of different students: {100 * unrelated:.0f}%")  # fmt: skip
        if not args.class_size:
            return 0
        functions = []
        for text in texts:
            try:
                tree = ast.parse(text)
            except SyntaxError:
                continue
            functions += [ast.unparse(n) for n in tree.body if isinstance(n, ast.FunctionDef)]
        base = Path(tmp) / "timing"
        synthetic(functions, args.class_size, rng, base / "class")
        synthetic(functions, args.archive_size, rng, base / "archive")
        started, cpu = time.perf_counter(), cpu_seconds()
        timed = similar([base / "class"], archive=[base / "archive"], jobs=args.jobs)
        print(f"a class of {args.class_size} and an archive of {args.archive_size} synthetic files "
              f"({len(functions)} functions of the sources mixed and renamed): {timed.compared} pairs in "
              f"{time.perf_counter() - started:.1f} s ({cpu_seconds() - cpu:.1f} CPU s, --jobs {args.jobs}); "
              f"top pair {100 * timed.pairs[0].similarity:.0f}% similar")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
