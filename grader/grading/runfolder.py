"""A grading run's folder: the plan, the settings and every finished test, written as they happen.

    run.json     grader version, creation time, seed, the plan's boards, the settings, and
                 each student's script with its content hash
    tests.jsonl  one JSON line per finished test (student, script hash, full result)
    answers.jsonl  the exact answer of each test, solved once for the whole run (sealed too)

A run killed at any moment loses at most the tests that were running; ``--resume`` reads
both files, grades only what is missing (or whose script changed), and gives the same
results as an uninterrupted run. The records and their seals are ``grader.runs.folders``'s.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

from ..errors import GraderError, GraderWarning
from ..games import DEFAULT, Position, get_game
from ..limits import Limits
from ..runs.folders import StudentFolder
from .judge import Answer
from .plans import Plan, write_plan_file
from .results import ScriptResult, Settings, TestResult

PLAN_COPY = "plan.plan"  # in a run folder: the plan it was graded on
ANSWERS = "answers.jsonl"  # in a run folder: the exact answer of each test, solved once


class RunFolder(StudentFolder):
    """A grading run's folder."""

    META, LINES, KIND, WRITER = "run.json", "tests.jsonl", "run", "a grading run"
    REQUIRED = ("plan", "settings", "scripts", "seed")

    @classmethod
    def create(cls, path: str | Path, plan: Plan, settings: Settings) -> RunFolder:
        meta = {
            "seed": plan.seed,
            "plan": {
                "game": plan.game.name,
                "source": plan.source,
                "kind": plan.kind,
                "public": None if plan.public is None else sorted(plan.public),
                "empties": None if plan.empties is None else list(plan.empties),
                "boards": [f"{q.board_string()} {q.token}" for q in plan.positions],
            },  # fmt: skip
            "settings": settings.to_json(),
            "scripts": {},
        }
        folder = cls._create(path, meta)
        write_plan_file(plan, folder.path / PLAN_COPY)  # the test set, as a plan file of its own
        return folder

    @classmethod
    def upgrade(cls, meta: dict[str, Any]) -> dict[str, Any]:
        plan = {"game": DEFAULT, "kind": "full", "public": None, **meta["plan"]}
        return {**meta, "plan": plan}

    def _check(self) -> None:
        """Build the plan, settings and students from run.json (raises if it was damaged)."""
        self.plan
        self.settings()
        self.submissions()

    # --- what the run is -------------------------------------------------------------

    @property
    def plan(self) -> Plan:
        meta = self.meta["plan"]
        game = get_game(meta["game"])
        boards = [b.split() for b in meta["boards"]]
        public = None if meta.get("public") is None else frozenset(meta["public"])
        settings = self.meta["settings"]
        ladder = meta.get("empties")
        return Plan(tuple(game.parse(b, t) for b, t in boards), self.meta["seed"], meta["source"], public,
                    meta.get("kind", "full"), settings.get("scoring"), Limits(**settings["limits"]),
                    None if ladder is None else (int(ladder[0]), int(ladder[1])))  # fmt: skip

    def settings(self, jobs: int | None = None) -> Settings:
        return Settings.from_json(self.meta["settings"], jobs)

    # --- tests -----------------------------------------------------------------------

    def set_stopped(self, name: str, stopped: str | None, tests: int) -> None:
        """Record why a student's run stopped early (after ``tests`` tests), or that it did not."""
        self.meta["scripts"][name]["stopped"] = stopped
        self.meta["scripts"][name]["stopped_after"] = tests if stopped else None
        self._write_meta()

    def set_game_hint(self, name: str, hint: str | None) -> None:
        """Record why this student's script seems written for another game (None: it does not)."""
        self.meta["scripts"][name]["game_hint"] = hint
        self._write_meta()

    def append(self, name: str, digest: str | None, test: TestResult) -> None:
        """Record one finished test."""
        self._append({"student": name, "sha256": digest, **test.record()})

    def answers(self, plan: Plan, scoring: str) -> dict[int, Answer]:
        """The exact answers solved for this run before (test index, 0-based), those whose
        seal holds and that are of ``plan``'s boards under ``scoring``."""
        out = {}
        for r in self._records(ANSWERS):
            try:
                i = int(r["test"]) - 1
                pos = plan.positions[i]
                if i < 0 or r["board"] != pos.board_string() or r["token"] != pos.token or r["scoring"] != scoring:
                    continue
                values = {int(sq): int(v) for sq, v in r["move_values"].items()}
                best = max(values.values())
                out[i] = Answer(best, tuple(sq for sq in sorted(values) if values[sq] == best), values)
            except (KeyError, TypeError, ValueError, IndexError, AttributeError):
                continue  # a damaged line: solved again
        return out

    def append_answer(self, index: int, pos: Position, scoring: str, answer: Answer, backend: str) -> None:
        """Keep the exact answer of test ``index`` (0-based), so that it is solved once per run."""
        self._append({"test": index + 1, "board": pos.board_string(), "token": pos.token, "scoring": scoring,
                      "value": answer.value, "move_values": {str(sq): v for sq, v in answer.move_values.items()},
                      "backend": backend}, ANSWERS)  # fmt: skip

    def recorded(self) -> dict[tuple[str, int], TestResult]:
        """Tests recorded for each student's current script (a changed script's are dropped)."""
        game = get_game(self.meta["plan"]["game"])
        out = {}
        for r in self.current_records():
            try:
                out[(r["student"], r["index"])] = TestResult.from_record(r, game)
            except (KeyError, TypeError, ValueError, GraderError):
                continue  # a damaged record: the test is run again
        return out

    def replace_tests(self, tests: list[tuple[str, str | None, TestResult]]) -> None:
        """Replace every record by these (student, script digest, test), sealed."""
        self._rewrite([{"student": name, "sha256": digest, **test.record()} for name, digest, test in tests])

    def results(self) -> list[ScriptResult]:
        """Each student's results as recorded, tests in order (for reports). A student whose
        tests are not all recorded, with no recorded reason to stop, is marked interrupted."""
        plan, recorded = self.plan, self.recorded()
        n = len(plan.positions)
        out = []
        for sub in self.submissions():
            info = self.meta["scripts"][sub.name]
            last = info.get("stopped_after") or n  # a stopped run ends at its stop
            tests = [recorded[(sub.name, i)] for i in range(1, last + 1) if (sub.name, i) in recorded]
            stopped = sub.problem or info.get("stopped")
            interrupted = stopped is None and len(tests) < n
            if interrupted:
                stopped = f"incomplete: {len(tests)} of {n} tests recorded"
                forged = sum(r.get("student") == sub.name for r in self.tampered)
                if forged:
                    stopped += f" ({forged} record(s) failed their seal)"
            seconds = sum(t.run.wall_seconds for t in tests)
            out.append(ScriptResult(str(sub.path or ""), plan, tests, seconds, stopped, interrupted, sub.name,
                                    self.meta.get("backend_used", ""), not_graded=sub.problem is not None,
                                    game_hint=info.get("game_hint")))  # fmt: skip
        tampering = self.tampering()
        if tampering:
            warnings.warn(tampering, GraderWarning, stacklevel=2)
        return out
