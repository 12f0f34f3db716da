"""The presubmission check of a GTP program: a short regression file, and what keeps its answers
from being read."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import GraderError, PlanError
from ..files import read_lines
from ..games import Game
from ..runs.submissions import Submission, find_submission_folder
from ..runs.text import plural
from .format import Command, parse_regress, private_tests
from .plans import make_regress
from .regress import run_regress
from .results import RegressResult, RegressSettings, RegressTest
from .runs import student_program, test_line

COUNT = 5  # tests of a public file checked

GTP_TIMELIMIT = 2  # the built-in check's 'timelimit': easy positions


@dataclass
class GtpCheck:
    """The check of a GTP program: its run of a short regression file, and per test what
    keeps its answer from being read, with the fix."""

    program: str
    source: str  # where the tests came from
    result: RegressResult
    problems: dict[int, list[str]] = field(default_factory=dict)  # by test number

    @property
    def all_fail(self) -> bool:
        """No 'solve' or 'genmove' got an answer the grader could read."""
        asked = [t for t in self.result.counted if t.command.split()[0] in ("solve", "genmove")]
        return not any(t.symbol != "t" and not self.problems.get(t.number) for t in asked)

    def text(self) -> str:
        """What ``grader check`` shows: each test, its fixes, and whether answers can be read."""
        out = [f"Checking {self.program} on {self.source}:"]
        for t in self.result.tests:
            out.append(test_line(t))
            out += [f"   fix: {p}" for p in self.problems.get(t.number, [])]
        if self.all_fail:
            out.append(
                "None of these answers can be graded: every test would fail. Fix the problems above before you submit."
            )
        elif self.problems:
            out.append("The answers can be read, but see the notes above.")
        else:
            out.append("The answers can be read on every test checked.")
        return "\n".join(out)


def check_gtp(program: str | Path, game: Game, public_file: str | Path | None = None,
              settings: RegressSettings | None = None, entry: str | None = None) -> GtpCheck:  # fmt: skip
    """Run the GTP program ``program`` (a file, or a student's folder holding one) on the
    first tests of the public regression file ``public_file`` (else on a few easy positions of
    the grader's own, and on 'list_commands') and say what keeps its answers from being read."""
    settings = settings or RegressSettings()
    path = Path(program)
    if path.is_dir():
        sub = find_submission_folder(path, set(settings.commands), entry)
    elif path.is_file():
        sub = Submission(path.stem, path, single=True)
    else:
        raise GraderError(f"'{program}' not found: give your GTP program (a .py file or an executable)")
    engine = student_program(sub)
    if public_file is not None:
        text = "\n".join(read_lines(public_file, "regression file"))
        commands = parse_regress(text, str(public_file), game)
        if private_tests(text, commands):
            raise PlanError("this regression file holds private tests: check with its public half (FILE.public.gtp)")
        numbered = [i for i, c in enumerate(commands) if c.number is not None]
        commands = commands[: numbered[min(COUNT, len(numbered)) - 1] + 1] if numbered else commands
        source = f"the first {plural(min(COUNT, len(numbered)), 'test', 'tests')} of {public_file}"
    else:
        positions = game.random_positions(0, range(4, 7), 1)
        commands = [Command(0, "list_commands", 1, r"(?s).*\bsolve\b.*"), *make_regress(game, positions, GTP_TIMELIMIT)]
        last = positions[-1]
        commands.append(Command(0, f"genmove {'bw'[game.sides.index(last.token)]}", 40))
        commands = [dataclasses.replace(c, line=i) for i, c in enumerate(commands, 1)]  # lines of its own
        source = f"{plural(len(positions), 'easy position', 'easy positions')} of {game.title} and list_commands"
    result = run_regress(engine, source, game, settings, commands=commands)
    return GtpCheck(
        str(program), source, result, {t.number: p for t in result.tests if (p := _gtp_problems(t, settings))}
    )


def _gtp_problems(t: RegressTest, settings: RegressSettings) -> list[str]:
    """What keeps this answer from being read (or right in form), with the fix."""
    verb = t.command.split()[0]
    if t.symbol == "t":
        if "not run" in t.note:
            return []  # the program had ended: the test that ended it says why
        if "could not start" in t.note:
            return ["your program could not start (see the note above): fix the error its stderr ends with; a "
                    "missing package (numpy) is missing from the Python named there: install it for that Python, "
                    "or run your program with the course's Python"]  # fmt: skip
        if "crashed" in t.note or "killed" in t.note:
            return ["your program crashed: fix the error its stderr ends with (in the note above)"]
        return [f"no answer in time ({t.note}): answer every command with '= ...' and an empty line, and flush "
                "(print(..., flush=True)); a 'solve' must stop by its timelimit and answer 'unknown'"]  # fmt: skip
    if t.answer is not None and t.answer.startswith("? "):
        return [f"your program answered '{t.answer}': it must know '{verb}' and answer it with '= ...'"]
    words = (t.answer or "").lower().split()
    if verb == "solve" and (not words or words[0] not in ("b", "w", "draw", "unknown")):
        return ["a 'solve' answer starts with the winner, 'b', 'w' or 'draw' (or 'unknown'), then a winning move "
                "like 'b C3' (GTP's point names: columns A.. without I, rows from 1)"]  # fmt: skip
    if verb == "solve" and t.symbol == "W" and "is not a point" in t.note:
        return ["the move after the winner must be a point like C3 (a column letter without I, then the row)"]
    if verb == "genmove" and t.symbol == "-" and "is not a legal move" in t.note:
        return ["a 'genmove' answer is the point of the move it plays, like C3"]
    if verb == "list_commands" and t.symbol == "-":
        return ["'list_commands' does not list 'solve': register your solve command"]
    return []
