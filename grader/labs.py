"""A course's lab whatever its protocol: the one place that asks which mode grades a game's
lab (a plan of 'SCRIPT BOARD TOKEN' runs: grading; GTP regression files: regression), for
what the command and the portal do on any lab: check a program, grade a submission for
Gradescope, write the lab's tests."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, Sequence

from .config import Config
from .errors import GraderError, OptionError
from .files import read_lines
from .games import Game
from .grading.plans import NewPlan, load_any_plan, new_plan, plan_for
from .grading.results import Settings
from .runs.submissions import find_submission_folder

# Each mode's pipelines (checking, grading a submission, writing its results, a GTP lab's
# regression files) are imported by the function that runs them, for the lab at hand: 'grader
# check' on Othello loads no regression, no Gradescope results and no report table before its
# script starts. Both modes are below this module: an import here runs down, never round.
if TYPE_CHECKING:  # the type new_tests returns for a GTP lab, from the pipeline it imports when it runs
    from .regression.plans import RegressPlan


class Checked(Protocol):
    """What a presubmission check found, on any lab."""

    @property
    def all_fail(self) -> bool: ...

    def text(self) -> str: ...


def over_gtp(game: Game) -> bool:
    """Whether ``game``'s lab is graded over GTP on regression files (else on a plan)."""
    return game.lab_protocol == "gtp"


def lab_game(config: Config, name: str | None = None, files: Sequence[str | Path] = ()) -> Game:
    """The game ``name`` names (else config.yaml's); for a GTP lab, as its regression ``files`` say."""
    game = config.get_game(name)
    if not over_gtp(game):
        return game
    from .regression.plans import regress_game

    return regress_game(name, config, files)


def check_program(program: str | Path, config: Config, game_name: str | None = None,
                  plan_name: str | None = None) -> Checked:  # fmt: skip
    """``grader check``: run a student's program on a few easy public tests (``plan_name``: the
    public plan, or the public regression file, of a GTP lab) and say what keeps its answers
    from being read."""
    game = lab_game(config, game_name, [plan_name] if plan_name else [])
    if over_gtp(game):
        from .regression.check import check_gtp
        from .regression.results import RegressSettings

        return check_gtp(program, game, plan_name, RegressSettings.resolve(config), config.entry)
    from .grading.check import check

    plan = load_any_plan(plan_name, game) if plan_name else None
    return check(program, game, plan, Settings.resolve(config, game, plan), entry=config.entry)


def gradescope_results(submission: str | Path, config: Config, *, game_name: str | None = None,
                       plan_name: str | None = None, boards_file: str | None = None, seed: int | None = None,
                       backend: str | None = None, visibility: str = "visible", private: Sequence[str | Path] = (),
                       started: float | None = None) -> dict[str, Any]:  # fmt: skip
    """``grader gradescope``: grade the student's folder ``submission`` and return Gradescope's
    results.json. A GTP lab grades on the regression file ``plan_name`` (no boards, seed or
    backend); any other on the full plan."""
    started = time.monotonic() if started is None else started
    game = config.get_game(game_name)
    if over_gtp(game) and (not plan_name or boards_file or seed is not None or backend):
        raise OptionError(f"{game.title} programs are graded on a GTP regression file: give it as --plan FILE.gtp "
                          "('grader plan regress' writes one), without --boards, --seed or --backend")  # fmt: skip
    plan = None if over_gtp(game) else plan_for(game, config, plan_name, boards_file, seed, graded=True)
    if not Path(submission).is_dir():
        raise GraderError(f"submission folder '{submission}' not found: give --submission DIR")
    sub = find_submission_folder(Path(submission), set(config.commands), config.entry)
    if plan is None:
        from .regression.format import public_tests
        from .regression.gradescope import regress_results_json
        from .regression.plans import regress_game
        from .regression.results import RegressSettings
        from .regression.runs import regress_submission

        assert plan_name is not None
        game = regress_game(game_name, config, [plan_name])
        student = regress_submission(sub, [plan_name], game, RegressSettings.resolve(config), private)
        public = public_tests("\n".join(read_lines(plan_name, "regression file")))
        return regress_results_json(student, [public], time.monotonic() - started, visibility)
    from .grading import gradescope
    from .grading.run import grade_submission

    settings = Settings.resolve(config, game, plan, backend=backend)
    result = grade_submission(sub, plan, settings, private=private)
    return gradescope.results_json(result, time.monotonic() - started, visibility)


def new_tests(config: Config, game_name: str | None = None, *, seed: int | None = None, boards: str | None = None,
              plan_name: str | None = None, empties: str | None = None, public: int = 0,
              time_limit: float | None = None, scoring: str | None = None) -> NewPlan | RegressPlan:  # fmt: skip
    """``grader plan new``: a lab's tests, a plan file's (``new_plan``) or, for a GTP lab, a
    regression file's (``regress_plan``, which takes the seed, the empties and the public count)."""
    game = config.get_game(game_name)
    if over_gtp(game):
        from .regression.plans import regress_plan

        if boards or plan_name or time_limit or scoring:
            raise OptionError(f"{game.title}'s tests are a GTP regression file: drop --boards, --plan, --time-limit "
                              "and --scoring (see 'grader plan regress --help' for its options)")  # fmt: skip
        return regress_plan(config, game_name, empties=empties, public=public, seed=seed)
    return new_plan(config, game, seed=seed, name=plan_name, boards=boards, empties=empties, public=public,
                    time_limit=time_limit, scoring=scoring)  # fmt: skip
