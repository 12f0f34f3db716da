"""A course: the folder kept in git with its ``course.yaml`` (assignments, limits, deadlines),
its plan files and its roster; loaded with a one-line ConfigError for each bad value."""

from __future__ import annotations

import dataclasses
import datetime as dt
import difflib
import hashlib
import ipaddress
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ...config import SCHEMA, Config, load_config, parse_tc
from ...errors import ConfigError, GraderError
from ...files import SHARE
from ...games import Game
from ...grading.plans import Plan, load_any_plan, new_plan, write_plan_file
from ...grading.results import Settings
from ...limits import Limits
from ...regression.plans import regress_plan
from .gtplab import RegressionFile, digest, load_regression, regress_settings
from .lti import LtiSettings, parse_lti
from .mail import MailSettings, parse_mail
from .regrades import KEYS as REGRADE_KEYS
from .regrades import RegradeSettings, parse_regrades
from .rubric import Rubric, parse_rubric
from .when import read_when

COURSE_FILE = "course.yaml"
NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,39}$")  # an assignment's name: in URLs, never in paths
UPLOAD_KB = 256  # the largest upload by default
IDLE_HOURS = 12.0  # a session unused this long ends, unless course.yaml says otherwise (session_idle_hours)
MAX_IDLE_HOURS = 14 * 24  # a session ends after 14 days whatever its use: no idle time is longer
TRUSTED_PROXIES = ("127.0.0.1", "::1")  # whose X-Forwarded-For is believed, unless course.yaml names others


@dataclass(frozen=True)
class Assignment:
    """One lab students submit to: its game, plan (public and private tests; a GTP lab's: its
    regression file), limits, deadlines."""

    name: str
    title: str
    plan: Plan | RegressionFile
    limits: Limits | None = None  # None: the plan's, else config.yaml's
    per_day: int | None = None  # uploads a student may make a day (UTC); None: no limit
    deadline: dt.datetime | None = None  # soft: later uploads are marked late
    hard_deadline: dt.datetime | None = None  # no upload is taken after it
    private_results: str = (
        "release"  # when students see their private tests: on the instructor's release, or after the deadline
    )
    private_boards: bool = False  # with them, each private test's board and feedback (else its symbol and credit)
    late_days: bool = True  # whether late uploads spend the course's late days (false: the assignment opts out)
    late_penalty: float = 0.0  # the share of the earned total taken per day late (after late days), 0 to 1
    counts: str = "latest"  # which graded submission counts: the latest, or the best (after penalties)
    similar_base: tuple[Path, ...] = ()  # starter code left out of the similarity report's matches
    similar_archive: tuple[Path, ...] = ()  # earlier terms' submissions (a folder each) compared with the class
    rubric: Rubric | None = None  # hand grading's items and rule (None: not hand graded)
    team_size: int | None = None  # students submit in teams of at most this many (course.yaml's teams: {size: N})

    @property
    def game(self) -> str:
        return self.plan.game.name

    def private_shown(self, released: bool, when: dt.datetime) -> bool:
        """Whether students see their private tests now: released, or past the deadline when the course says so."""
        if self.private_results == "deadline":
            last = self.hard_deadline or self.deadline
            return released or (last is not None and when > last)
        return released

    @property
    def over_gtp(self) -> bool:
        """Whether students upload a GTP program, run on the regression file (else a script, on the plan)."""
        return isinstance(self.plan, RegressionFile)

    @property
    def public_tests(self) -> int:
        if isinstance(self.plan, RegressionFile):
            return len(self.plan.public)
        return sum(self.plan.is_public(i) for i in range(1, len(self.plan.positions) + 1))

    @property
    def max_points(self) -> int:
        """What a submission's total is out of: a test each of the plan's, 100 for a GTP lab (as grader regress)."""
        return 100 if isinstance(self.plan, RegressionFile) else len(self.plan.positions)

    @property
    def private_tests(self) -> int:
        total = len(self.plan.numbers) if isinstance(self.plan, RegressionFile) else len(self.plan.positions)
        return total - self.public_tests


LADDER_TC = (10.0, 0.1)  # a ladder's game clock unless the course or config.yaml gives one
DEADLINE_GAMES = 20  # games each two final versions play in a ladder's deadline tournament, unless the course says


@dataclass(frozen=True)
class Ladder:
    """A ladder: an assignment's (``assignment``, its name; the assignment's students enter) or
    an open one (``assignment`` None: every signed-in user may enter an engine). ``anonymous``:
    students see aliases; ``top``: students see only the top entries and those around their
    own; ``deadline_games``: games each two final versions play in the deadline tournament."""

    name: str
    title: str
    game: str
    assignment: str | None = None
    anonymous: bool = False
    top: int | None = None
    deadline_games: int = DEADLINE_GAMES
    tc: tuple[float, float] = LADDER_TC


@dataclass(frozen=True)
class Course:
    """A course folder: its title, assignments (in file order), roster, instructors and the
    config.yaml beside it (the grading settings every assignment starts from)."""

    folder: Path
    title: str
    assignments: dict[str, Assignment]
    instructors: tuple[str, ...] = ()
    roster: Path | None = None
    upload_kb: int = UPLOAD_KB
    config: Config = dataclasses.field(default_factory=Config)
    lti: LtiSettings | None = None  # the platforms (LMSs) the portal is an LTI 1.3 tool of
    late_days: int | None = None  # days late each student may spend over the course without penalty
    ladders: dict[str, Ladder] = dataclasses.field(default_factory=dict)  # by name: the assignments' and open ones
    session_idle_hours: float = IDLE_HOURS  # a signed-in session unused this long ends
    trusted_proxies: tuple[str, ...] = TRUSTED_PROXIES  # addresses and networks whose X-Forwarded-For is believed
    mail: MailSettings | None = None  # the mail server; None: the portal sends no mail
    regrades: RegradeSettings = dataclasses.field(default_factory=RegradeSettings)  # students' regrade requests
    source: str = dataclasses.field(default="", compare=False, repr=False)  # course.yaml's text as loaded

    @property
    def upload_bytes(self) -> int:
        return self.upload_kb * 1024

    def settings(self, assignment: Assignment) -> Settings:
        """The grading settings of ``assignment`` as ``grader grade`` resolves them
        (``Settings.resolve``): its limits, then the plan's, then config.yaml's."""
        assert isinstance(assignment.plan, Plan), "a GTP lab's settings are regress_settings'"
        given: dict[str, Any] = {"limits": assignment.limits} if assignment.limits is not None else {}
        return Settings.resolve(self.config, assignment.plan.game, assignment.plan, **given)

    def plan_digest(self, assignment: Assignment) -> str:
        """What grading ``assignment`` depends on (its boards, public tests, scoring, limits; a
        GTP lab's file and credits), as a SHA-256: a submission graded under another digest was
        graded on a plan since changed."""
        if isinstance(assignment.plan, RegressionFile):
            return digest(assignment.plan, regress_settings(self.config, assignment.limits))
        settings = self.settings(assignment).to_json()
        plan = assignment.plan
        what = {"boards": [f"{q.board_string()} {q.token}" for q in plan.positions],
                "public": None if plan.public is None else sorted(plan.public),
                "scoring": settings.get("scoring"), "limits": settings.get("limits")}  # fmt: skip
        return hashlib.sha256(json.dumps(what, sort_keys=True, default=str).encode()).hexdigest()

    def private_files(self) -> list[Path]:
        """The course's files scripts must not read: its folder, course.yaml, config.yaml, plans,
        roster, and the SQLite database in .portal/."""
        state = self.folder / ".portal"
        found = [p for p in self.folder.iterdir() if p.is_file()] + (
            [state, *state.iterdir()] if state.is_dir() else []
        )
        return [self.folder, *found]


def load_course(folder: str | Path, text: str | None = None) -> Course:
    """The course in ``folder`` (its course.yaml, or ``text`` in its place: the last one that
    loaded): ConfigError naming the file, the key (an unknown one with its line, and the known
    key it may be a typo of) and the fix."""
    root = Path(folder).resolve()
    path = root / COURSE_FILE
    if text is None and not path.is_file():
        raise ConfigError(f"no {COURSE_FILE} in '{folder}': give a course folder, or no COURSE for the demo course")
    try:
        text = path.read_text(encoding="utf-8") if text is None else text
        data = yaml.safe_load(text)
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"cannot read '{path}': {e}") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark else ""
        raise ConfigError(f"{path}: not valid YAML{where}: {getattr(e, 'problem', None) or 'cannot parse'}") from None
    config = load_config(root / "config.yaml") if (root / "config.yaml").is_file() else Config()
    try:
        return dataclasses.replace(_course(root, data, config), source=text)
    except UnknownKey as e:
        line = _key_line(text, e.path, e.key)
        raise ConfigError(f"{path}{f', line {line}' if line else ''}: {e}") from None
    except ValueError as e:
        raise ConfigError(f"{path}: {e}") from None


_KEYS = ("title", "instructors", "roster", "upload_kb", "late_days", "session_idle_hours", "trusted_proxies",
         "assignments", "lti", "ladders", "mail", "regrades")  # fmt: skip
_ASSIGNMENT_KEYS = ("name", "title", "game", "plan", "seed", "limits", "per_day", "deadline", "hard_deadline",
                    "private_results", "private_boards", "late_days", "late_penalty", "counts", "ladder",
                    "similarity", "rubric", "teams")  # fmt: skip
_LADDER_KEYS = ("anonymous", "top", "deadline_games", "tc")
_OPEN_LADDER_KEYS = ("name", "title", "game", *_LADDER_KEYS)
PRIVATE_RESULTS = ("release", "deadline")
COUNTS = ("latest", "best")
MAX_LATE_DAYS = 365
PERCENT = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*%\s*$")


def _course(root: Path, data: Any, config: Config) -> Course:
    if not isinstance(data, dict):
        raise ValueError("expected 'key: value' lines at the top level (title, instructors, roster, assignments)")
    _known(data, _KEYS, "")
    title = _text(data.get("title", root.name), "title")
    instructors = data.get("instructors") or []
    if not isinstance(instructors, list) or not all(isinstance(e, str) and "@" in e for e in instructors):
        raise ValueError("'instructors' must be a list of e-mail addresses, like [you@example.edu]")
    roster = None
    if data.get("roster") is not None:
        roster = root / _text(data["roster"], "roster")
        if not roster.is_file():
            raise ValueError(f"'roster': no file '{data['roster']}' in the course folder")
    upload_kb = data.get("upload_kb", UPLOAD_KB)
    if not isinstance(upload_kb, int) or isinstance(upload_kb, bool) or not 1 <= upload_kb <= 65536:
        raise ValueError(f"'upload_kb' must be a whole number of KiB from 1 to 65536, like 256; got {upload_kb!r}")
    late_days = data.get("late_days")
    if late_days is not None and (not isinstance(late_days, int) or isinstance(late_days, bool)
                                  or not 0 <= late_days <= MAX_LATE_DAYS):  # fmt: skip
        raise ValueError(f"'late_days' must be a whole number of days from 0 to {MAX_LATE_DAYS}, like 3, "
                         f"or null (none); got {late_days!r}")  # fmt: skip
    idle = data.get("session_idle_hours", IDLE_HOURS)
    if not isinstance(idle, (int, float)) or isinstance(idle, bool) or not 0 < idle <= MAX_IDLE_HOURS:
        raise ValueError(f"'session_idle_hours' must be a number of hours above 0 and at most {MAX_IDLE_HOURS} "
                         f"(a session ends after 14 days anyway), like 12; got {idle!r}")  # fmt: skip
    proxies = _proxies(data.get("trusted_proxies", list(TRUSTED_PROXIES)))
    items = data.get("assignments")
    if not isinstance(items, list) or not items:
        raise ValueError("'assignments' must be a list of assignments, each with name, game and plan")
    assignments: dict[str, Assignment] = {}
    ladders: dict[str, Ladder] = {}
    for i, item in enumerate(items):
        a = _assignment(root, item, f"assignments[{i}]", config)
        if a.name in assignments:
            raise ValueError(f"assignments[{i}].name: {a.name!r} is used twice: give each assignment its own name")
        assignments[a.name] = a
        if item.get("ladder") not in (None, False):
            ladders[a.name] = _ladder(item["ladder"], f"assignments[{i}].ladder", config, a.name, a.title, a.game,
                                      a.name)  # fmt: skip
    ladders.update(_open_ladders(data.get("ladders"), config, ladders))
    lti = parse_lti(data["lti"]) if data.get("lti") is not None else None
    mail = parse_mail(data["mail"], root) if data.get("mail") is not None else None
    regrades = RegradeSettings()
    if data.get("regrades") is not None:
        if isinstance(data["regrades"], dict):
            _known(data["regrades"], REGRADE_KEYS, "regrades.")
        regrades = parse_regrades(data["regrades"], read_when)
    return Course(root, title, assignments, tuple(instructors), roster, upload_kb, config, lti, late_days, ladders,
                  float(idle), proxies, mail, regrades=regrades)  # fmt: skip


def _proxies(value: Any) -> tuple[str, ...]:
    """The proxies whose X-Forwarded-For names the client: each an IP address or network."""
    ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
    for v in value if ok else ():
        try:
            ipaddress.ip_network(v.strip())
        except ValueError:
            ok = False
    if not ok:
        raise ValueError("'trusted_proxies' must be a list of your proxies' IP addresses or networks, like "
                         f"[127.0.0.1] or [10.0.0.5, 10.1.0.0/16] ([]: none); got {value!r}")  # fmt: skip
    return tuple(v.strip() for v in value)


def _open_ladders(items: Any, config: Config, taken: dict[str, Ladder]) -> dict[str, Ladder]:
    """The course's open ladders (``ladders:``), each named apart from the assignments' ladders."""
    if items is None:
        return {}
    if not isinstance(items, list):
        raise ValueError("'ladders' must be a list of open ladders, each with name and game, like "
                         "[{name: open-othello, game: othello}]")  # fmt: skip
    out: dict[str, Ladder] = {}
    for i, item in enumerate(items):
        where = f"ladders[{i}]"
        if not isinstance(item, dict):
            raise ValueError(f"{where} must be 'key: value' lines (name, game, anonymous, top, deadline_games, tc)")
        _known(item, _OPEN_LADDER_KEYS, f"{where}.")
        name = item.get("name")
        if not isinstance(name, str) or not NAME.match(name):
            raise ValueError(f"{where}.name must be lower-case letters, digits, - or _ (up to 40), like open-othello; "
                             f"got {name!r}")  # fmt: skip
        if name in taken or name in out:
            raise ValueError(f"{where}.name: a ladder {name!r} exists already: give each ladder its own name")
        game = SCHEMA["game"](f"{where}.game", item.get("game", config.game))
        options = {k: v for k, v in item.items() if k in _LADDER_KEYS}
        out[name] = _ladder(options, where, config, name, _text(item.get("title", name), f"{where}.title"), game, None)
    return out


def _ladder(value: Any, where: str, config: Config, name: str, title: str, game: str,
            assignment: str | None) -> Ladder:  # fmt: skip
    """A ladder's options: ``true`` (the defaults) or a mapping of anonymous, top, deadline_games, tc."""
    if value is True:
        value = {}
    if not isinstance(value, dict):
        raise ValueError(f"{where} must be true or 'key: value' lines ({', '.join(_LADDER_KEYS)}); got {value!r}")
    _known(value, _LADDER_KEYS, f"{where}.")
    anonymous = value.get("anonymous", False)
    if not isinstance(anonymous, bool):
        raise ValueError(f"{where}.anonymous must be true (students see aliases) or false; got {anonymous!r}")
    top = value.get("top")
    if top is not None and (not isinstance(top, int) or isinstance(top, bool) or top < 1):
        raise ValueError(f"{where}.top must be a whole number, 1 or more (students see the top N and the entries "
                         f"around their own), or null (all); got {top!r}")  # fmt: skip
    games = value.get("deadline_games", DEADLINE_GAMES)
    if not isinstance(games, int) or isinstance(games, bool) or games < 2 or games % 2:
        raise ValueError(f"{where}.deadline_games must be an even number, 2 or more (two games to an opening), "
                         f"like 20; got {games!r}")  # fmt: skip
    tc = value.get("tc", config.tournament.tc) or LADDER_TC
    if not isinstance(tc, tuple):
        try:
            tc = parse_tc(str(tc) if isinstance(tc, (str, int, float)) and not isinstance(tc, bool) else "")
        except ValueError as e:
            raise ValueError(f"{where}.tc: {e}") from None
    return Ladder(name, title, game, assignment, anonymous, top, games, tc)


def _assignment(root: Path, item: Any, where: str, config: Config) -> Assignment:
    if not isinstance(item, dict):
        raise ValueError(f"{where} must be 'key: value' lines (name, game, plan...)")
    name = item.get("name")
    _known(item, _ASSIGNMENT_KEYS, f"{where}.", f" (assignment {name!r})" if isinstance(name, str) else "")
    if not isinstance(name, str) or not NAME.match(name):
        raise ValueError(
            f"{where}.name must be lower-case letters, digits, - or _ (up to 40), like othello; got {name!r}"
        )
    game_name = SCHEMA["game"](f"{where}.game", item.get("game", config.game))
    game = config.get_game(game_name)
    plan_name = item.get("plan", "standard")
    plan: Plan | RegressionFile
    if game.lab_protocol == "gtp":
        if item.get("seed") is not None:
            raise ValueError(f"{where}.seed: a GTP lab's tests are its regression file's: drop the seed")
        plan = _regression(root, plan_name, where, config, game_name)
    else:
        plan = _plan(root, item, where, game, plan_name)
    limits = SCHEMA["limits"](f"{where}.limits", item["limits"]) if item.get("limits") is not None else None
    per_day = item.get("per_day")
    if per_day is not None and (not isinstance(per_day, int) or isinstance(per_day, bool) or per_day < 1):
        raise ValueError(
            f"{where}.per_day must be a whole number, 1 or more, like 5, or null (no limit); got {per_day!r}"
        )
    deadline = read_when(item.get("deadline"), f"{where}.deadline")
    hard = read_when(item.get("hard_deadline"), f"{where}.hard_deadline")
    if deadline and hard and hard < deadline:
        raise ValueError(f"{where}.hard_deadline is before its deadline: give one at or after it")
    title = _text(item.get("title", name), f"{where}.title")
    shown = item.get("private_results", "release")
    if shown not in PRIVATE_RESULTS:
        raise ValueError(f"{where}.private_results must be release (when the instructor releases them) or deadline; "
                         f"got {shown!r}")  # fmt: skip
    if shown == "deadline" and deadline is None and hard is None:
        raise ValueError(f"{where}.private_results is deadline, but the assignment has none: give it a deadline")
    boards = item.get("private_boards", False)
    if not isinstance(boards, bool):
        raise ValueError(f"{where}.private_boards must be true or false; got {boards!r}")
    late_days = item.get("late_days", True)
    if not isinstance(late_days, bool):
        raise ValueError(f"{where}.late_days must be true (late uploads spend the course's late days) or false "
                         f"(the assignment opts out); got {late_days!r}")  # fmt: skip
    penalty = _percent(item.get("late_penalty", "0%"), f"{where}.late_penalty")
    if penalty and deadline is None:
        raise ValueError(f"{where}.late_penalty needs a deadline to count days late from: give the assignment one")
    counts = item.get("counts", "latest")
    if counts not in COUNTS:
        raise ValueError(f"{where}.counts must be latest (the last graded submission counts) or best "
                         f"(the highest total after penalties); got {counts!r}")  # fmt: skip
    base, archive = _similarity(root, item.get("similarity"), f"{where}.similarity")
    rubric = parse_rubric(item.get("rubric"), f"{where}.rubric")
    team_size = _teams(item.get("teams"), f"{where}.teams")
    return Assignment(name, title, plan, limits, per_day, deadline, hard, shown, boards, late_days, penalty, counts,
                      base, archive, rubric, team_size)  # fmt: skip


MAX_TEAM = 20


def _teams(value: Any, where: str) -> int | None:
    """The largest team of an assignment students submit to in teams (``teams: {size: 2}``); None: alone."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ValueError(f"{where} must be 'key: value' lines, like {{size: 2}}; got {value!r}")
    _known(value, ("size",), f"{where}.")
    size = value.get("size")
    if not isinstance(size, int) or isinstance(size, bool) or not 2 <= size <= MAX_TEAM:
        raise ValueError(f"{where}.size must be a whole number of students from 2 to {MAX_TEAM}, like 2; "
                         f"got {size!r}")  # fmt: skip
    return size


def _similarity(root: Path, value: Any, where: str) -> tuple[tuple[Path, ...], tuple[Path, ...]]:
    """The similarity report's starter code (``base``: files or folders) and earlier terms'
    submissions (``archive``: folders), each a path in the course folder or a list of them."""
    if value is None:
        return (), ()
    if not isinstance(value, dict):
        raise ValueError(f"{where} must be 'key: value' lines (base, archive), like {{base: starter/}}; got {value!r}")
    _known(value, ("base", "archive"), f"{where}.")

    def paths(key: str, folders: bool) -> tuple[Path, ...]:
        given = value.get(key) or []
        given = [given] if isinstance(given, str) else given
        kind = "folder" if folders else "file or folder"
        if not isinstance(given, list) or not all(isinstance(g, str) for g in given):
            raise ValueError(f"{where}.{key} must be a {kind} of the course folder or a list of them; got {given!r}")
        found = tuple(root / g for g in given)
        for g, path in zip(given, found):
            if not (path.is_dir() if folders else path.exists()):
                raise ValueError(f"{where}.{key}: {g!r} is no {kind} in {root}: give one there, or drop it")
        return found

    return paths("base", False), paths("archive", True)


def _percent(value: Any, key: str) -> float:
    """A share per day written as a percentage, like 10%: 0 to 1."""
    found = PERCENT.match(value) if isinstance(value, str) else None
    if found is None or float(found.group(1)) > 100:
        raise ValueError(f"{key} must be a percentage of the earned total taken per day late, from 0% to 100%, "
                         f"like 10%; got {value!r}")  # fmt: skip
    return float(found.group(1)) / 100


def _plan(root: Path, item: dict, where: str, game: Game, plan_name: Any) -> Plan:
    """The assignment's plan: a plan file of the course folder, or a named plan with its seed."""
    if not isinstance(plan_name, str):
        raise ValueError(f"{where}.plan must be a plan file in the course folder or a plan name; got {plan_name!r}")
    seed = item.get("seed")
    if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool) or seed < 0):
        raise ValueError(f"{where}.seed must be a whole number, 0 or more, like 7; got {seed!r}")
    plan_path = root / plan_name
    try:
        if plan_path.suffix == ".plan" or plan_path.is_file():
            if not plan_path.is_file():
                raise GraderError(f"no plan file '{plan_name}' in the course folder: write it with 'grader plan new'")
            plan = load_any_plan(str(plan_path), game)
        else:
            if seed is None:
                raise GraderError("a named plan needs a 'seed' (the same boards at every start)")
            plan = load_any_plan(plan_name, game, seed)
    except GraderError as e:
        raise ValueError(f"{where}.plan: {e}") from None
    if plan.kind == "public":
        raise ValueError(f"{where}.plan: '{plan_name}' is a public plan: give the full plan it came from")
    return plan


def _regression(root: Path, file_name: Any, where: str, config: Config, game_name: str) -> RegressionFile:
    """A GTP lab's tests: a regression file of the course folder (``grader plan regress`` writes one)."""
    if not isinstance(file_name, str) or not file_name.endswith(".gtp") or "/" in file_name or "\\" in file_name:
        raise ValueError(f"{where}.plan must be a regression file (.gtp) in the course folder, like lab2.gtp; "
                         f"got {file_name!r}")  # fmt: skip
    try:
        return load_regression(root / file_name, config, game_name)
    except GraderError as e:
        raise ValueError(f"{where}.plan: {e}") from None


class UnknownKey(ValueError):
    """A key course.yaml does not know: where it is (``prefix``), the key, the known ones."""

    def __init__(self, prefix: str, key: Any, keys: tuple[str, ...], label: str = "") -> None:
        close = difflib.get_close_matches(str(key), keys, n=1, cutoff=0.6)
        hint = f" (did you mean `{close[0]}`?)" if close else ""
        known = ", ".join(prefix + k for k in keys)
        super().__init__(f"unknown key '{prefix}{key}'{label}{hint}; known keys: {known}")
        self.path, self.key = prefix, key


def _known(data: dict, keys: tuple[str, ...], prefix: str, label: str = "") -> None:
    for key in data:
        if key not in keys:
            raise UnknownKey(prefix, key, keys, label)


def _key_line(text: str, prefix: str, key: Any) -> int | None:
    """The line of course.yaml (from 1) where the key ``key`` under ``prefix`` (like
    ``assignments[1].``) is written, found in the YAML's node tree; None when it cannot be."""
    try:
        node = yaml.compose(text)
    except yaml.YAMLError:
        return None
    for part in re.findall(r"[^.\[\]]+|\[\d+\]", prefix):
        if isinstance(node, yaml.SequenceNode) and part.startswith("["):
            index = int(part[1:-1])
            node = node.value[index] if index < len(node.value) else None
        elif isinstance(node, yaml.MappingNode):
            node = next((v for k, v in node.value if k.value == part), None)
        else:
            node = None
        if node is None:
            return None
    if not isinstance(node, yaml.MappingNode):
        return None
    return next((k.start_mark.line + 1 for k, _ in node.value if k.value == str(key)), None)


def _text(value: Any, key: str) -> str:
    if isinstance(value, str) and value.strip():
        return value.strip()
    raise ValueError(f"'{key}' must be a non-empty string; got {value!r}")


# --- the demo course ---------------------------------------------------------------------

DEMO_FOLDER = "grader-demo-course"
DEMO_GOMOKU_EMPTIES = "6-10"  # the demo's Gomoku positions: 2 for each count of empty points, solved at once
DEMO_INSTRUCTOR = "instructor@example.edu"
DEMO_STUDENTS = (("ada@example.edu", "Ada Lovelace"), ("alan@example.edu", "Alan Turing"),
                 ("grace@example.edu", "Grace Hopper"))  # fmt: skip


def make_demo_course(folder: str | Path) -> Path:
    """A course folder made from the bundled fixtures (kept as it is when it exists): the
    Othello endgame lab on the 10 fixed boards (4 public), the tic-tac-toe lab, the Gomoku
    lab over GTP (a regression file of 10 solve tests, 4 public, as 'grader plan regress'
    writes it), a roster of three students, an instructor."""
    root = Path(folder)
    if (root / COURSE_FILE).is_file():
        return root
    try:
        root.mkdir(parents=True, exist_ok=True)
        othello = new_plan(Config(), "othello", boards=SHARE / "fixtures" / "standard.txt", public=4).plan
        write_plan_file(othello, root / "othello-endgame.plan")
        ttt = new_plan(Config(game="tictactoe"), "tictactoe", seed=1, public=3).plan
        write_plan_file(ttt, root / "tictactoe.plan")
        (root / "gomoku.gtp").write_text(regress_plan(Config(game="gomoku"), "gomoku", empties=DEMO_GOMOKU_EMPTIES,
                                                      public=4, seed=1).text(), encoding="utf-8")  # fmt: skip
        (root / "roster.csv").write_text(
            "Email,Name\n" + "".join(f"{email},{name}\n" for email, name in DEMO_STUDENTS), encoding="utf-8"
        )
        (root / COURSE_FILE).write_text(_DEMO_YAML.format(instructor=DEMO_INSTRUCTOR), encoding="utf-8")
    except OSError as e:
        raise GraderError(f"cannot make the demo course in '{root}': {e.strerror}") from None
    return root


_DEMO_YAML = """\
# The demo course of 'grader serve' (docs/guides/portal.md says what each key means).
title: Game search (demo course)
instructors: [{instructor}]
roster: roster.csv
upload_kb: 256
assignments:
  - name: othello
    title: Othello endgame lab
    game: othello
    plan: othello-endgame.plan
    limits: {{wall_seconds: 10}}
    per_day: 10
  - name: tictactoe
    title: Tic-tac-toe lab
    game: tictactoe
    plan: tictactoe.plan
    per_day: 10
  - name: gomoku
    title: Gomoku lab over GTP
    game: gomoku
    plan: gomoku.gtp
    per_day: 10
"""
