"""The arena's pages under /arena (each also JSON, and at /api/arena/...): an author's engines
and their versions with each check's outcome, uploads of versions, SPRT tests (started, shown
live, stopped) newest first, and every game (board, moves, clocks, evaluations; replayed move
by move; GGF). An author sees and controls only their engines; the staff see the course's (an
instructor controls them too); an open engine is seen by every signed-in user."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlalchemy import or_, select
from sqlalchemy.orm import Session
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from ...engines import available_protocols
from ...errors import GraderError
from ...games import Game as GameRules
from ...games import available as available_games
from ...games import get_game, ggf
from ...tournaments.games import GameRecord
from ...tournaments.openings import read_openings
from ...tournaments.sprt import no_elo_reason
from ..accounts.tokens import (
    API_TOKEN_DAYS,
    api_token_expires,
    api_token_id,
    api_tokens,
    new_api_token,
    revoke_api_token,
)
from ..arena import arena
from ..course.course import Course
from ..database.arena import CHECKING, H0, H1, LIMIT, STOPPED, ArenaEngine, ArenaGame, ArenaTest, EngineVersion
from ..database.ladders import LadderGame
from ..database.models import QUEUED, RUNNING, User
from ..web.charts import Bar, error_bars, llr_chart
from ..web.portal import Portal
from ..web.routes import MAX_ID, checked_form, display_name, endpoint, need_user, page, wants_json, whole

FIELDS = 12  # a form's fields at most (a test's: versions, clock, bounds, game limit, openings)


def routes(portal: Portal) -> list[BaseRoute]:
    """The arena's routes, for ``grader.portal.app``."""
    pages: list[tuple[str, Callable[[Portal, Request, Any], Response], list[str]]] = [
        ("/arena", engines_page, ["GET", "POST"]),
        ("/arena/token", api_token, ["POST"]),
        ("/arena/token/{token_id}/revoke", revoke_token, ["POST"]),
        ("/arena/e/{eid:int}", engine_page, ["GET"]),
        ("/arena/e/{eid:int}/versions", upload_version, ["POST"]),
        ("/arena/e/{eid:int}/tests", start_test, ["POST"]),
        ("/arena/t/{tid}", test_page, ["GET"]),
        ("/arena/t/{tid}/stop", stop_test, ["POST"]),
        ("/arena/t/{tid}/games.ggf", test_ggf, ["GET"]),
        ("/arena/g/{gid:int}", game_page, ["GET"]),
        ("/arena/g/{gid:int}/game.ggf", game_ggf, ["GET"]),
    ]
    return [
        Route(path, endpoint(portal, handler, max_fields=FIELDS), methods=methods) for path, handler, methods in pages
    ]


def _live(parts: list[str]) -> str:
    """What a live page compares: it reloads itself when this changes (static/live.js)."""
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:16]


def _refused(e: GraderError) -> HTTPException:
    return HTTPException(400, str(e))


def _done(request: Request, target: str, data: dict[str, Any]) -> Response:
    """After a form: to ``target`` (a browser), or ``data`` as JSON (the API)."""
    if wants_json(request):
        return JSONResponse(data, 201)
    return RedirectResponse(target, 303)


# --- engines --------------------------------------------------------------------------------


def _visible(session: Session, user: User) -> list[ArenaEngine]:
    query = select(ArenaEngine).order_by(ArenaEngine.name, ArenaEngine.id)
    if not user.staff:
        query = query.where(or_(ArenaEngine.owner_id == user.id, ArenaEngine.open == 1))
    return list(session.scalars(query))


def _engine(session: Session, user: User, eid: int) -> ArenaEngine:
    engine = session.get(ArenaEngine, eid)
    if engine is None or not arena.can_see(user, engine):
        raise HTTPException(404, "no such engine")
    return engine


def _version_data(v: EngineVersion) -> dict[str, Any]:
    return {"id": v.id, "number": v.number, "label": v.label, "filename": v.filename, "size": v.size,
            "sha256": v.sha256, "command": v.command, "status": v.status, "message": v.message,
            "uploaded_at": v.uploaded_at.isoformat(), "checked_at": v.checked_at.isoformat() if v.checked_at else None}  # fmt: skip


def _engine_data(session: Session, user: User, e: ArenaEngine) -> dict[str, Any]:
    owner = session.get(User, e.owner_id)
    versions = session.scalars(select(EngineVersion).where(EngineVersion.engine_id == e.id)
                               .order_by(EngineVersion.number.desc())).all()  # fmt: skip
    return {"id": e.id, "name": e.name, "protocol": e.protocol, "game": e.game, "open": bool(e.open),
            "owner": owner.name if owner is not None else "", "mine": e.owner_id == user.id,
            "control": arena.can_control(user, e), "versions": [_version_data(v) for v in versions]}  # fmt: skip


def engines_page(portal: Portal, request: Request, form: Any) -> Response:
    """The engines the user sees; POST: a new engine of theirs."""
    user = need_user(portal, request)
    if form is not None:
        checked_form(request, form)
        try:
            with portal.make.begin() as session:
                engine = arena.new_engine(session, user, str(form.get("name", "")).strip(),
                                          str(form.get("protocol", "")), str(form.get("game", "")),
                                          form.get("open") in ("1", "on", "true"))  # fmt: skip
                eid = engine.id
        except GraderError as err:
            raise _refused(err) from None
        return _done(request, f"/arena/e/{eid}", {"id": eid})
    with portal.make() as session:
        engines = [_engine_data(session, user, e) for e in _visible(session, user)]
        tokens = [{"id": api_token_id(t), "label": t.label, "created_at": t.created_at.isoformat(),
                   "used_at": t.used_at.isoformat() if t.used_at else None,
                   "expires_at": api_token_expires(t).isoformat()}
                  for t in api_tokens(session, user)]  # fmt: skip
    for e in engines:
        e["latest"] = e["versions"][0] if e["versions"] else None
        del e["versions"]
    data = {"engines": engines, "protocols": sorted(available_protocols()), "games": sorted(available_games()),
            "tokens": tokens, "token_days": API_TOKEN_DAYS}  # fmt: skip
    return page(request, "arena.html", data, user=user)


def api_token(portal: Portal, request: Request, form: Any) -> Response:
    """A new API token of the user's (for ``grader arena test --portal``), shown this once."""
    user = need_user(portal, request)
    checked_form(request, form)
    with portal.make.begin() as session:
        token = new_api_token(session, user, str(form.get("label", "")).strip())
    return page(request, "arena_token.html", {"token": token}, 201, user=user)


def revoke_token(portal: Portal, request: Request, form: Any) -> Response:
    """Revoke one of the user's API tokens: a request with it is refused from now on."""
    user = need_user(portal, request)
    checked_form(request, form)
    token_id = request.path_params["token_id"]
    with portal.make.begin() as session:
        if not revoke_api_token(session, user, token_id):
            raise HTTPException(404, "no such token of yours: the list on /arena names them")
    return _done(request, "/arena", {"revoked": token_id})


def engine_page(portal: Portal, request: Request, form: Any) -> Response:
    """An engine: its versions (each check's outcome), its tests newest first, and the forms."""
    user = need_user(portal, request)
    return page(request, "arena_engine.html", _engine_page_data(portal, user, request.path_params["eid"]), user=user)


def _engine_page_data(portal: Portal, user: User, eid: int) -> dict[str, Any]:
    with portal.make() as session:
        engine = _engine(session, user, eid)
        data = _engine_data(session, user, engine)
        tests = session.scalars(select(ArenaTest).where(ArenaTest.engine_id == engine.id)
                                .order_by(ArenaTest.created_at.desc(), ArenaTest.id)).all()  # fmt: skip
        numbers = {v["id"]: v["number"] for v in data["versions"]}
        data["tests"] = [_test_row(t, numbers) for t in tests]
    data["live"] = _live(
        [v["status"] for v in data["versions"]] + [f"{t['status']}{t['games']}" for t in data["tests"]]
    )
    data["settled"] = all(v["status"] != CHECKING for v in data["versions"]) and all(
        t["status"] != RUNNING for t in data["tests"]
    )
    data["defaults"] = {"tc": f"{arena.DEFAULT_TC[0]:g}+{arena.DEFAULT_TC[1]:g}", "elo0": arena.DEFAULT_SPRT.elo0,
                        "elo1": arena.DEFAULT_SPRT.elo1, "alpha": arena.DEFAULT_SPRT.alpha,
                        "beta": arena.DEFAULT_SPRT.beta, "max_games": arena.DEFAULT_SPRT.max_games}  # fmt: skip
    data["upload"] = {"error": None, "label": "", "command": ""}  # a refused upload's reason and values, kept
    return data


def upload_version(portal: Portal, request: Request, form: Any) -> Response:
    """A new version of the engine, checked by a worker at once."""
    user = need_user(portal, request)
    checked_form(request, form)
    try:
        return _upload_version(portal, request, form, user)
    except HTTPException as refused:
        if wants_json(request) or refused.status_code not in (400, 413):
            raise
        data = _engine_page_data(portal, user, request.path_params["eid"])  # the page again, the form as it was sent
        data["upload"] = {"error": refused.detail, "label": str(form.get("label", ""))[:60],
                          "command": str(form.get("command", ""))[:300]}  # fmt: skip
        return page(request, "arena_engine.html", data, refused.status_code, user=user)


def _upload_version(portal: Portal, request: Request, form: Any, user: User) -> Response:
    upload = form.get("file")
    if upload is None or isinstance(upload, str):
        raise HTTPException(400, "no file in the form: choose your engine's file (or archive) and send it again")
    content = upload.file.read(portal.course.upload_bytes + 1)
    if len(content) > portal.course.upload_bytes:
        raise HTTPException(413, f"the upload is larger than {portal.course.upload_bytes} bytes: upload a smaller one")
    try:
        with portal.make.begin() as session:
            engine = _engine(session, user, request.path_params["eid"])
            if not arena.can_control(user, engine):
                raise HTTPException(404, "no such engine")
            version = arena.new_version(session, portal.course, engine, display_name(upload.filename), content,
                                        str(form.get("command", "")).strip() or None,
                                        str(form.get("label", "")).strip())  # fmt: skip
            found = {"id": version.id, "number": version.number, "status": version.status}
    except GraderError as e:
        raise _refused(e) from None
    if portal.workers is not None:
        portal.workers.wake.set()
    return _done(request, f"/arena/e/{engine.id}", found)


# --- tests ----------------------------------------------------------------------------------


def _test_row(t: ArenaTest, numbers: dict[int, int]) -> dict[str, Any]:
    return {"id": t.id, "new": numbers.get(t.new_id), "base": numbers.get(t.base_id), "status": t.status,
            "games": 2 * sum(arena.penta(t).counts), "wins": t.wins, "draws": t.draws, "losses": t.losses,
            "llr": round(t.llr, 3), "created_at": t.created_at.isoformat(),
            "tc": f"{t.tc_seconds:g}+{t.tc_increment:g}"}  # fmt: skip


def _number(form: Any, key: str, default: float, kind: type = float) -> Any:
    text = str(form.get(key, "") or "").strip()
    if not text:
        return default
    try:
        value = kind(text)
    except ValueError:
        raise HTTPException(400, f"{key} {text[:40]!r} is not a number: give one, as {default!r}") from None
    if abs(value) > MAX_ID:
        raise HTTPException(400, f"{key} {text[:40]!r} is too large a number: give one, as {default!r}")
    return value


def start_test(portal: Portal, request: Request, form: Any) -> Response:
    """A test of one version of the engine against another (of it, or of another engine of the author's)."""
    from ...config import parse_tc

    user = need_user(portal, request)
    checked_form(request, form)
    try:
        tc = parse_tc(str(form.get("tc", "") or "").strip() or "{:g}+{:g}".format(*arena.DEFAULT_TC))
    except ValueError as e:
        raise HTTPException(400, str(e)) from None
    d = arena.DEFAULT_SPRT
    ask = arena.TestRequest(new=_number(form, "new", 0, int), base=_number(form, "base", 0, int), tc=tc,
                            elo0=_number(form, "elo0", d.elo0), elo1=_number(form, "elo1", d.elo1),
                            alpha=_number(form, "alpha", d.alpha), beta=_number(form, "beta", d.beta),
                            max_games=_number(form, "max_games", d.max_games, int))  # fmt: skip
    try:
        with portal.make.begin() as session:
            engine = _engine(session, user, request.path_params["eid"])
            if not arena.can_control(user, engine):
                raise HTTPException(404, "no such engine")
            new = session.get(EngineVersion, ask.new)
            if new is None or new.engine_id != engine.id:
                raise HTTPException(400, f"choose the new version among {engine.name}'s")
            openings = _openings(form, get_game(engine.game))
            if openings:
                ask = dataclasses.replace(ask, openings=tuple(openings[1]), openings_name=openings[0])
            test = arena.new_test(session, user, ask)
            tid = test.id
    except GraderError as e:
        raise _refused(e) from None
    if portal.workers is not None:
        portal.workers.wake.set()
    return _done(request, f"/arena/t/{tid}", {"id": tid})


def _openings(form: Any, rules: GameRules) -> tuple[str, list[str]] | None:
    """An uploaded openings file's name and openings (move sequences, positions, or GGF)."""
    upload = form.get("openings")
    if upload is None or isinstance(upload, str) or not upload.filename:
        return None
    content = upload.file.read()
    name = display_name(upload.filename)
    with tempfile.TemporaryDirectory(prefix="grader-arena-") as folder:
        path = Path(folder) / "openings.txt"
        path.write_bytes(content)
        try:
            found = read_openings(path, rules)
        except GraderError as e:
            raise GraderError(f"{name}: {str(e).replace(str(path), name)}") from None
    return name, found


def _test(session: Session, user: User, tid: str) -> tuple[ArenaTest, ArenaEngine]:
    test = session.get(ArenaTest, tid)
    engine = session.get(ArenaEngine, test.engine_id) if test is not None else None
    if test is None or engine is None or not arena.can_see(user, engine):
        raise HTTPException(404, "no such test")
    return test, engine


PRIVATE = "a private engine"  # how a test names a version of an engine its reader may not see


def _names(session: Session, ids: set[int], reader: User | None = None) -> dict[int, str]:
    """The versions' names (``engine vN``); for a ``reader``, those of engines they may not see
    as PRIVATE (a test of an open engine against its author's private one)."""
    out = {}
    for vid in ids:
        v = session.get(EngineVersion, vid)
        e = session.get(ArenaEngine, v.engine_id) if v is not None else None
        if v is None or e is None:
            out[vid] = f"version {vid}"
        else:
            out[vid] = PRIVATE if reader is not None and not arena.can_see(reader, e) else arena.version_name(e, v)
    return out


def _reader(game: ArenaGame, user: User) -> User | None:
    """Whose sight a game's names follow: a test's reader; a ladder's games name their entries
    as the ladder does (an anonymous ladder's only to who sees both)."""
    return user if game.test_id is not None else None


def test_data(session: Session, test: ArenaTest, engine: ArenaEngine, user: User) -> dict[str, Any]:
    """A test's state: its settings, W/D/L, pentanomial, LLR and bounds, Elo and error, games;
    ``why`` a test ended as error by workers dying on its pair says so (the pair's cause)."""
    found = arena.state(test)
    names = _names(session, {test.new_id, test.base_id}, user)
    games = session.scalars(select(ArenaGame).where(ArenaGame.test_id == test.id, ArenaGame.status != arena.CANCELLED)
                            .order_by(ArenaGame.pair, ArenaGame.id)).all()  # fmt: skip
    lo, hi = found.interval
    error = None if lo is None or hi is None else round((hi - lo) / 2, 1)
    why = session.scalar(select(ArenaGame.cause).where(ArenaGame.test_id == test.id, ArenaGame.status == arena.CANCELLED,
                                                       ArenaGame.cause.is_not(None)).limit(1))  # fmt: skip
    return {"id": test.id, "engine": engine.id, "engine_name": engine.name, "new": names[test.new_id],
            "base": names[test.base_id], "status": test.status, "why": why, "game": test.game,
            "tc": f"{test.tc_seconds:g}+{test.tc_increment:g}", "openings": test.openings_name,
            "elo0": test.elo0, "elo1": test.elo1, "alpha": test.alpha, "beta": test.beta, "model": test.model,
            "max_games": test.max_games, "games": 2 * sum(arena.penta(test).counts), "wins": test.wins,
            "draws": test.draws, "losses": test.losses, "pentanomial": list(arena.penta(test).counts),
            "llr": round(found.llr, 3) + 0, "lower": round(found.lower, 3), "upper": round(found.upper, 3),
            "elo": None if found.elo is None else round(found.elo, 1), "elo_error": error,
            "elo_note": None if found.elo is not None else no_elo_reason(found.penta, test.model),
            "created_at": test.created_at.isoformat(),
            "finished_at": test.finished_at.isoformat() if test.finished_at else None,
            "control": arena.can_control(user, engine) and test.status == RUNNING,
            "list": [_game_row(g, names) for g in games], "settled": test.status != RUNNING,
            "verdict": _verdict(test, found.lower, found.upper),
            "history": [[g, round(v, 4)] for g, v in arena.llr_history(session, test)],
            "interval": [None if v is None else round(v, 1) for v in found.interval],
            "live": _live([test.status, str(sum(arena.penta(test).counts))] + [g.status for g in games])}  # fmt: skip


def _verdict(test: ArenaTest, lower: float, upper: float) -> str:
    """What the test's status means, in a sentence."""
    if test.status == H1:
        return (
            f"H1 accepted: the LLR reached its upper bound ({upper:.2f}), so the new version is taken to be "
            f"{test.elo1:g} Elo stronger or more (at most {test.alpha:g} of such tests accept H1 wrongly)."
        )
    if test.status == H0:
        return (
            f"H0 accepted: the LLR reached its lower bound ({lower:.2f}), so the new version is taken to be "
            f"no more than {test.elo0:g} Elo stronger (at most {test.beta:g} of such tests miss a real gain)."
        )
    if test.status == LIMIT:
        return (
            f"Limit reached: the test played its {test.max_games} games and the LLR stayed between its bounds "
            f"({lower:.2f} and {upper:.2f}): no decision; the Elo below is the best estimate."
        )
    if test.status == STOPPED:
        return "Stopped by hand before the LLR reached a bound: no decision."
    if test.status == RUNNING:
        return f"Running: the LLR is between its bounds ({lower:.2f} and {upper:.2f}); more pairs are being played."
    return "Ended by an error of the grader's before a decision (below: why)."


def _game_row(g: ArenaGame, names: dict[int, str]) -> dict[str, Any]:
    return {"id": g.id, "pair": g.pair, "black": names.get(g.black_id, ""), "white": names.get(g.white_id, ""),
            "status": g.status, "result": g.result, "reason": g.reason, "opening": g.opening}  # fmt: skip


def test_page(portal: Portal, request: Request, form: Any) -> Response:
    user = need_user(portal, request)
    with portal.make() as session:
        test, engine = _test(session, user, request.path_params["tid"])
        data = test_data(session, test, engine, user)
    if not wants_json(request):
        data["charts"] = _charts(data)
    return page(request, "arena_test.html", data, user=user)


def _charts(data: dict[str, Any]) -> dict[str, str]:
    """The test page's pictures: its LLR against games between the bounds, its Elo with error bars."""
    lo, hi = data["interval"]
    elo = Bar(data["new"], data["elo"], lo, hi)
    label = f"{data['model']} Elo of {data['new']} against {data['base']}, with its 95% interval"
    return {"llr": llr_chart([tuple(p) for p in data["history"]], data["lower"], data["upper"], data["max_games"]),
            "elo": error_bars([elo], label, ((data["elo0"], "elo0"), (data["elo1"], "elo1")))}  # fmt: skip


def stop_test(portal: Portal, request: Request, form: Any) -> Response:
    user = need_user(portal, request)
    checked_form(request, form)
    with portal.make.begin() as session:
        test, engine = _test(session, user, request.path_params["tid"])
        if not arena.can_control(user, engine):
            raise HTTPException(404, "no such test")
        if test.status == RUNNING:
            arena.stop_test(session, test)
        tid, status = test.id, test.status
    return _done(request, f"/arena/t/{tid}", {"id": tid, "status": status})


def _records(session: Session, games: list[ArenaGame], reader: User | None) -> list[GameRecord]:
    names = _names(session, {v for g in games for v in (g.black_id, g.white_id)}, reader)
    out = []
    for g in games:
        if g.record is None:
            continue
        record = GameRecord.from_json(json.loads(g.record))
        record.black, record.white = names[g.black_id], names[g.white_id]
        out.append(record)
    return out


def _ggf(text: str, filename: str) -> Response:
    return Response(text, media_type="application/x-ggf",
                    headers={"Content-Disposition": f'attachment; filename="{filename}"'})  # fmt: skip


def _ggf_game(game: str) -> GameRules:
    rules = get_game(game)
    if not ggf.supports(rules):
        raise HTTPException(404, f"GGF holds Othello games only, not {rules.title}'s")
    return rules


def test_ggf(portal: Portal, request: Request, form: Any) -> Response:
    """Every finished game of the test, one GGF file."""
    user = need_user(portal, request)
    with portal.make() as session:
        test, _ = _test(session, user, request.path_params["tid"])
        rules = _ggf_game(test.game)
        games = session.scalars(select(ArenaGame).where(ArenaGame.test_id == test.id)
                                .order_by(ArenaGame.pair, ArenaGame.id)).all()  # fmt: skip
        records = _records(session, list(games), user)
    return _ggf(ggf.write_games(records, rules, test.created_at.isoformat()), f"test-{test.id}.ggf")


# --- games ----------------------------------------------------------------------------------


def _game(session: Session, course: Course, user: User, gid: int) -> tuple[ArenaGame, str]:
    """The game and its game's name, if the user sees one of its engines (both, for a game of
    an anonymous ladder: the page names the engines, which the ladder's aliases hide)."""
    game = session.get(ArenaGame, gid)
    if game is not None:
        seen = []
        for vid in (game.black_id, game.white_id):
            v = session.get(EngineVersion, vid)
            e = session.get(ArenaEngine, v.engine_id) if v is not None else None
            if e is not None and arena.can_see(user, e):
                seen.append(e)
        if seen and (len(seen) == 2 or not _anonymous(session, course, game.id)):
            return game, seen[0].game
    raise HTTPException(404, "no such game")


def _anonymous(session: Session, course: Course, gid: int) -> bool:
    """Whether the game is one of an anonymous ladder's (or of a ladder the course no longer has)."""
    name = session.scalar(select(LadderGame.ladder).where(LadderGame.game_id == gid))
    ladder = course.ladders.get(name) if name is not None else None
    return name is not None and (ladder is None or ladder.anonymous)


def game_data(session: Session, game: ArenaGame, name: str, ply: int | None, user: User) -> dict[str, Any]:
    """A game as its page shows it: the moves so far, each engine move's clock and evaluation,
    and the board after ``ply`` moves (None: the last)."""
    rules = get_game(name)
    names = _names(session, {game.black_id, game.white_id}, _reader(game, user))
    start, opening = rules.opening_start(game.opening)
    moves = rules.parse_transcript(game.moves) if game.moves else list(opening)
    shown = len(moves) if ply is None else max(0, min(ply, len(moves)))
    pos = rules.replay(moves[:shown], start)
    board = pos.board_string()
    size = round(len(board) ** 0.5)
    clocks, evals = json.loads(game.clocks or "[]"), json.loads(game.evals or "[]")
    played = [{"ply": i + 1, "move": rules.move_text(m), "opening": i < len(opening),
               "clock": None, "eval": None} for i, m in enumerate(moves)]  # fmt: skip
    for k, row in enumerate(played[len(opening) :]):  # engine moves, in order (passes are not moves here)
        row["clock"] = clocks[k] if k < len(clocks) else None
        row["eval"] = evals[k] if k < len(evals) else None
    last = moves[shown - 1] if shown and moves[shown - 1] >= 0 else None  # the last move's square (a pass: none)
    files = [rules.square_name(c).rstrip("0123456789") for c in range(size)]
    return {"id": game.id, "test": game.test_id, "pair": game.pair, "black": names[game.black_id],
            "white": names[game.white_id], "status": game.status, "result": game.result, "reason": game.reason,
            "cause": game.cause, "opening": game.opening, "moves": game.moves, "plies": len(moves), "ply": shown,
            "board": [board[r * size : (r + 1) * size] for r in range(size)], "to_move": pos.token,
            "files": files, "ranks": [rules.square_name(r * size)[len(files[0]) :] for r in range(size)],
            "last": None if last is None else {"row": last // size, "col": last % size,
                                               "name": rules.square_name(last)},
            "tc": f"{game.tc_seconds:g}+{game.tc_increment or 0:g}" if game.tc_seconds else None,
            "played": played, "ggf": ggf.supports(rules), "settled": game.status not in (QUEUED, RUNNING),
            "live": _live([game.status, game.moves])}  # fmt: skip


def game_page(portal: Portal, request: Request, form: Any) -> Response:
    user = need_user(portal, request)
    ply = request.query_params.get("ply")
    with portal.make() as session:
        game, name = _game(session, portal.course, user, request.path_params["gid"])
        data = game_data(session, game, name, whole(ply) if ply else None, user)
    return page(request, "arena_game.html", data, user=user)


def game_ggf(portal: Portal, request: Request, form: Any) -> Response:
    user = need_user(portal, request)
    with portal.make() as session:
        game, name = _game(session, portal.course, user, request.path_params["gid"])
        rules = _ggf_game(name)
        records = _records(session, [game], _reader(game, user))
    if not records:
        raise HTTPException(404, "the game is not finished: its GGF is ready once it ends")
    created = game.finished_at.isoformat() if game.finished_at else ""
    return _ggf(ggf.write_games(records, rules, created), f"game-{game.id}.ggf")
