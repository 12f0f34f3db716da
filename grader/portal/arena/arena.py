"""The arena: engines and their versions, each version checked by one game against a bundled
engine, and SPRT tests of one version against another, queued as pairs of games (each opening
with both colours) that the portal's workers play (``arena.play``). Everything here is what a
web request or a worker does in one transaction; ArenaError, one line, for what the user must fix."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import secrets
import shlex
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from ...engines import available_protocols
from ...engines.programs import ProtocolEngine
from ...engines.registry import get_protocol
from ...engines.scripts import Script
from ...errors import GraderError
from ...files import bundled
from ...games import Game as GameRules
from ...games import get_game
from ...tournaments.engines import protocol_engine
from ...tournaments.formats import SprtSettings
from ...tournaments.games import GameRecord
from ...tournaments.openings import OPENING_PLIES, random_openings
from ...tournaments.settings import TournamentSettings
from ...tournaments.sprt import Pentanomial, SprtResult, llr, sprt
from ..course.course import Course
from ..database.arena import (
    CHECK,
    CHECKING,
    DONE,
    GAMES,
    H0,
    H1,
    LIMIT,
    OK,
    STOPPED,
    TEST_PRIORITY,
    ArenaEngine,
    ArenaGame,
    ArenaTest,
    EngineVersion,
    GameJob,
)
from ..database.models import INSTRUCTOR, QUEUED, RUNNING, User, now
from ..uploads import UploadError, check_upload, command_program, is_archive, unpack, unpack_files

CANCELLED = "cancelled"  # a queued game of a test that ended before it was played
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,39}")
CHECK_PRIORITY = 20  # an author waits for their version's check: before tests' games
PAIRS_AHEAD = 8  # pairs of a test queued or being played at once (more as they end)
DEFAULT_SPRT = SprtSettings(elo0=0.0, elo1=10.0, max_games=400)  # alpha, beta, model: grader tournament --sprt's
DEFAULT_TC = (10.0, 0.1)
ERROR = "error"  # a test ended by the grader's own problem (its settings, its machine, its workers dying)
MAX_GAMES = 20_000  # a test's game limit at most (its random openings are drawn when it starts)


class ArenaError(GraderError):
    """What the author asked that the arena cannot do (the message says how to fix it)."""


# --- engines and versions -----------------------------------------------------------------


def can_see(user: User, engine: ArenaEngine) -> bool:
    """An author sees their engines, the staff every engine, everyone an open one."""
    return engine.owner_id == user.id or user.staff or bool(engine.open)


def can_control(user: User, engine: ArenaEngine) -> bool:
    """An author controls their engines (uploads, tests); an instructor the course's."""
    return engine.owner_id == user.id or user.role == INSTRUCTOR


def new_engine(session: Session, owner: User, name: str, protocol: str, game: str, open_: bool = False) -> ArenaEngine:
    """A new engine of ``owner``'s, without versions yet."""
    if not NAME.fullmatch(name):
        raise ArenaError(f"engine name {name[:60]!r}: use 1 to 40 letters, digits, '_', '.', '-', starting with "
                         "a letter or digit")  # fmt: skip
    known = available_protocols()
    if protocol not in known:
        raise ArenaError(f"unknown protocol {protocol!r}: choose one of {', '.join(sorted(known))}")
    rules = get_game(game)  # GraderError naming the known games
    if not get_protocol(protocol).plays(rules):
        raise ArenaError(f"{protocol} engines do not play {rules.title}: choose another protocol or game")
    if session.scalar(select(ArenaEngine.id).where(ArenaEngine.owner_id == owner.id, ArenaEngine.name == name)):
        raise ArenaError(
            f"you have an engine named {name!r} already: upload a new version of it, or choose another name"
        )
    engine = ArenaEngine(owner_id=owner.id, name=name, protocol=protocol, game=rules.name, open=int(open_))
    session.add(engine)
    session.flush()
    return engine


def build(protocol: str, filename: str, content: bytes, command: str | None, folder: Path,
          course: Course) -> Script | ProtocolEngine:  # fmt: skip
    """What a game plays of an upload, unpacked into the empty ``folder``: a script (as
    ``grader grade`` finds it), or a program of ``protocol`` started by ``command`` (an
    archive's COMMAND file when none is given; a single file: run as a Python or '#!' program)."""
    commands, entry = course.config.commands, course.config.entry
    if protocol == "script":
        return unpack(filename, content, folder, commands, entry).script()
    if is_archive(filename):
        root = unpack_files(filename, content, folder)
        program = command_program(root, protocol, command or None)
        if program is None:
            raise UploadError("the archive has no COMMAND file and no command was given: give the command that "
                              "starts your program in its folder (like ./engine, or python3 engine.py)")  # fmt: skip
        return program
    path = unpack(filename, content, folder, commands, entry).path
    assert path is not None  # a single file is always the program
    given = (
        _renamed(command, filename, path.name)
        if command
        else ("{python} " if path.suffix == ".py" else "./") + path.name
    )
    found = command_program(folder.resolve(), protocol, given)
    assert found is not None
    return found


def _renamed(command: str, uploaded: str, stored: str) -> str:
    """A single file's command, naming the file as it is stored: 'python3 engine.py' names the
    uploaded engine.py, which is kept as ``stored`` (submission.py)."""
    try:
        words = shlex.split(command)
    except ValueError:
        return command  # refused as the command's own mistake
    name = Path(uploaded).name
    return (
        shlex.join([stored if w in (name, f"./{name}") else w for w in words]) if name in " ".join(words) else command
    )


VERSIONS_PER_DAY = 50  # versions an author may upload in 24 hours, over all their engines: each is kept and checked


def new_version(session: Session, course: Course, engine: ArenaEngine, filename: str, content: bytes,
                command: str | None = None, label: str = "") -> EngineVersion:  # fmt: skip
    """A new version of ``engine`` from an upload: refused now (UploadError) when it cannot
    even be unpacked and started as its protocol starts it, or when its author has uploaded
    ``VERSIONS_PER_DAY`` in the last 24 hours; otherwise queued for its check."""
    since = now() - dt.timedelta(days=1)
    recent = session.scalar(select(func.count(EngineVersion.id)).join(ArenaEngine, EngineVersion.engine_id == ArenaEngine.id)
                            .where(ArenaEngine.owner_id == engine.owner_id, EngineVersion.uploaded_at > since))  # fmt: skip
    if (recent or 0) >= VERSIONS_PER_DAY:
        raise UploadError(f"you have uploaded {VERSIONS_PER_DAY} versions in the last 24 hours: "
                          "upload this one later, or test the ones you have")  # fmt: skip
    if engine.protocol == "script":
        check_upload(filename, content, course.config.commands, course.config.entry)
    with tempfile.TemporaryDirectory(prefix="grader-arena-") as folder:
        build(engine.protocol, filename, content, command, Path(folder), course)
    number = (
        session.scalar(select(func.max(EngineVersion.number)).where(EngineVersion.engine_id == engine.id)) or 0
    ) + 1
    version = EngineVersion(engine_id=engine.id, number=number, label=label[:60], filename=filename[:120],
                            size=len(content), sha256=hashlib.sha256(content).hexdigest(), content=content,
                            command=command or None, status=CHECKING)  # fmt: skip
    session.add(version)
    session.flush()
    session.add(GameJob(kind=CHECK, version_id=version.id, priority=CHECK_PRIORITY, state=QUEUED, attempts=0))
    session.flush()
    return version


def version_name(engine: ArenaEngine, version: EngineVersion) -> str:
    return f"{engine.name} v{version.number}"


CHECK_OPPONENTS = {"nboard": "random_mover", "gtp": "random_player"}  # the bundled engine a check plays, by protocol


def check_opponent(rules: GameRules) -> Script | ProtocolEngine:
    """The bundled engine a version's check game is played against: the game's random example
    (Othello's behind the NBoard adapter; Gomoku's over GTP; others as scripts)."""
    if rules.lab_protocol:
        name = CHECK_OPPONENTS[rules.lab_protocol]
        return protocol_engine(f"builtin:{rules.lab_protocol}:{name}", rules.lab_protocol, game=rules)
    if rules.name == "othello":
        return protocol_engine("builtin:nboard:random_mover", "nboard", game=rules)
    scripts = sorted(bundled(*rules.examples.split("/")).glob("*.py"))
    return Script.from_path(scripts[0])


def game_settings(course: Course, game: str, tc: tuple[float, float] | None) -> TournamentSettings:
    """How the arena plays a game: the course's tournament settings (config.yaml: limits,
    isolation, python, scoring), the clock ``tc`` (None: a move limit), one game at a time."""
    return TournamentSettings.resolve(course.config, get_game(game), tc=tc, jobs=1)


# --- tests --------------------------------------------------------------------------------


@dataclass(frozen=True)
class TestRequest:
    """What an author asks of a test (the form's and the API's fields)."""

    new: int  # the version tested
    base: int  # the version it is tested against
    tc: tuple[float, float] = DEFAULT_TC
    elo0: float = DEFAULT_SPRT.elo0
    elo1: float = DEFAULT_SPRT.elo1
    alpha: float = DEFAULT_SPRT.alpha
    beta: float = DEFAULT_SPRT.beta
    max_games: int = DEFAULT_SPRT.max_games
    openings: tuple[str, ...] = ()  # none: random openings
    openings_name: str = ""
    seed: int | None = None


def new_test(session: Session, owner: User, ask: TestRequest) -> ArenaTest:
    """A test of version ``ask.new`` against ``ask.base``, its first pairs queued. ArenaError
    for versions the owner cannot test (not theirs, not checked, another game) or bad bounds."""
    new, base = session.get(EngineVersion, ask.new), session.get(EngineVersion, ask.base)
    if new is None or base is None or new.id == base.id:
        raise ArenaError("a test needs two different versions: choose the new version and the one it is tested against")
    engines = [session.get(ArenaEngine, v.engine_id) for v in (new, base)]
    for e, v in zip(engines, (new, base)):
        assert e is not None
        if not can_control(owner, e):
            raise ArenaError("you can test only your own engines' versions")
        if v.status != OK:
            raise ArenaError(f"{version_name(e, v)} has not passed its check ({v.status}): fix it and upload it again")
    new_engine_, base_engine = engines
    assert new_engine_ is not None and base_engine is not None
    if new_engine_.game != base_engine.game:
        raise ArenaError(f"{new_engine_.name} plays {new_engine_.game} and {base_engine.name} {base_engine.game}: "
                         "test versions of one game")  # fmt: skip
    settings = SprtSettings(ask.elo0, ask.elo1, ask.max_games, ask.alpha, ask.beta)
    settings.check()  # GraderError naming the bound
    if ask.max_games > MAX_GAMES:
        raise ArenaError(f"a test plays at most {MAX_GAMES} games; got {ask.max_games}: give a game limit of "
                         f"{MAX_GAMES} or fewer")  # fmt: skip
    base_s, inc = ask.tc
    if not (0 < base_s <= 3600 and 0 <= inc <= 60):
        raise ArenaError(f"time control {base_s:g}+{inc:g}: give 0 < seconds <= 3600 and 0 <= increment <= 60")
    rules = get_game(new_engine_.game)
    openings, name = list(ask.openings), ask.openings_name or "uploaded"
    if not openings:
        seed = ask.seed if ask.seed is not None else secrets.randbelow(2**31)
        openings = random_openings(rules, seed, OPENING_PLIES, max(1, ask.max_games // 2))
        name = f"random, {OPENING_PLIES} moves (seed {seed})"
    test = ArenaTest(id=secrets.token_urlsafe(12), owner_id=owner.id, engine_id=new.engine_id, new_id=new.id,
                     base_id=base.id, game=rules.name, tc_seconds=base_s, tc_increment=inc,
                     openings=json.dumps(openings), openings_name=name[:120], elo0=ask.elo0, elo1=ask.elo1,
                     alpha=ask.alpha, beta=ask.beta, model=settings.model, max_games=ask.max_games, status=RUNNING,
                     pairs_queued=0, ll=0, ld=0, dd=0, wd=0, ww=0, wins=0, draws=0, losses=0, llr=0.0)  # fmt: skip
    session.add(test)
    session.flush()
    queue_pairs(session, test, PAIRS_AHEAD)
    return test


def queue_pairs(session: Session, test: ArenaTest, count: int) -> int:
    """Queue up to ``count`` more pairs of ``test`` (never past its game limit), each a job:
    the new version black, then white, from the pair's opening. How many were queued."""
    openings: list[str] = json.loads(test.openings)
    queued = 0
    while queued < count and (test.pairs_queued + 1) * 2 <= test.max_games:
        k = test.pairs_queued
        job = GameJob(kind=GAMES, priority=TEST_PRIORITY, state=QUEUED, attempts=0)
        session.add(job)
        session.flush()
        opening = openings[k % len(openings)]
        for black, white in ((test.new_id, test.base_id), (test.base_id, test.new_id)):
            session.add(ArenaGame(test_id=test.id, job_id=job.id, pair=k + 1, black_id=black, white_id=white,
                                  opening=opening, tc_seconds=test.tc_seconds, tc_increment=test.tc_increment,
                                  status=QUEUED, moves="", clocks="[]", evals="[]", result="", reason=""))  # fmt: skip
        test.pairs_queued += 1
        queued += 1
    session.flush()
    return queued


def penta(test: ArenaTest) -> Pentanomial:
    return Pentanomial(test.ll, test.ld, test.dd, test.wd, test.ww)


def state(test: ArenaTest) -> SprtResult:
    """The test's SPRT state now (LLR, bounds, Elo estimate and interval)."""
    return sprt(penta(test), test.elo0, test.elo1, test.alpha, test.beta, test.model)


def llr_history(session: Session, test: ArenaTest) -> list[tuple[int, float]]:
    """The test's LLR after each pair it counted, by the SPRT code of ``grader tournament --sprt``:
    (games counted, LLR), from (0, 0.0). Pairs count in the order their games finished (a worker
    counts a pair as it writes its games); pairs finished after the test ended are not counted."""
    games = session.execute(select(ArenaGame.pair, ArenaGame.black_id, ArenaGame.result, ArenaGame.finished_at)
                            .where(ArenaGame.test_id == test.id, ArenaGame.status == DONE)
                            .order_by(ArenaGame.pair, ArenaGame.id)).all()  # fmt: skip
    pairs: dict[int, list[tuple[float, Any]]] = {}
    for pair, black, result, finished in games:
        black_score = {"1-0": 1.0, "0-1": 0.0}.get(result, 0.5)
        pairs.setdefault(pair, []).append(
            (black_score if black == test.new_id else 1 - black_score, finished or test.created_at)
        )
    done = sorted((max(f for _, f in p), k, [s for s, _ in p]) for k, p in pairs.items() if len(p) == 2)
    counted, out = Pentanomial(), [(0, 0.0)]
    for _, _, (first, second) in done[: penta(test).pairs]:
        counted = counted.add(first, second)
        out.append((counted.games, llr(counted, test.elo0, test.elo1, test.model)))
    return out


def stop_test(session: Session, test: ArenaTest, status: str = STOPPED) -> None:
    """End ``test`` with ``status``: its queued games are cancelled (those being played end
    and are kept, not counted)."""
    test.status, test.finished_at = status, now()
    jobs = select(ArenaGame.job_id).where(ArenaGame.test_id == test.id, ArenaGame.status == QUEUED)
    session.execute(update(GameJob).where(GameJob.id.in_(jobs), GameJob.state == QUEUED).values(state=DONE))
    session.execute(update(ArenaGame).where(ArenaGame.test_id == test.id, ArenaGame.status == QUEUED)
                    .values(status=CANCELLED))  # fmt: skip


def count_pair(session: Session, test: ArenaTest, games: list[ArenaGame]) -> None:
    """Count a finished pair of a running test: W/D/L, the pentanomial, the LLR; the test ends
    when the SPRT decides or its game limit is reached, else one more pair is queued. The
    test's row is read anew under a lock: workers counting two pairs at once (PostgreSQL)
    count one after the other, not each over the same old counts."""
    session.flush()  # a change not yet written would be lost to the refresh
    session.refresh(test, with_for_update=True)
    if test.status != RUNNING:
        return  # ended meanwhile: played, not counted
    scores = []
    for g in games:
        black_score = {"1-0": 1.0, "0-1": 0.0}.get(g.result, 0.5)
        score = black_score if g.black_id == test.new_id else 1 - black_score
        scores.append(score)
        test.wins += int(score == 1.0)
        test.draws += int(score == 0.5)
        test.losses += int(score == 0.0)
    counts = penta(test).add(*scores).counts
    test.ll, test.ld, test.dd, test.wd, test.ww = counts
    found = state(test)
    test.llr = found.llr
    if found.decision is not None:
        stop_test(session, test, H1 if found.decision == "H1" else H0)
    elif (sum(counts) + 1) * 2 > test.max_games:  # no pair more fits (an odd limit: the last game unplayed)
        stop_test(session, test, LIMIT)
    else:
        queue_pairs(session, test, 1)


def game_record(game: ArenaGame, names: dict[int, str]) -> GameRecord:
    """The tournaments' record of a queued game: engines named by ``names`` (version id -> name)."""
    return GameRecord(id=f"g{game.id}", pair=f"p{game.pair}", round=game.pair, black=names[game.black_id],
                      white=names[game.white_id], opening=game.opening)  # fmt: skip


def write_record(game: ArenaGame, record: GameRecord) -> None:
    """A finished game's row from its record."""
    game.status, game.moves, game.result, game.reason = DONE, record.moves, record.result, record.reason
    game.clocks, game.evals = json.dumps(record.clocks), json.dumps(record.evals)
    game.cause = record.cause() if record.forfeit else None
    game.record, game.finished_at, game.lease_token = json.dumps(record.to_json()), now(), None
