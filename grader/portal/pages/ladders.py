"""The ladders' pages, each also JSON (``/api/...``): the course's ladders, a ladder's table
(ratings with their 95% error bars), its crosstable, an entry's recent games, entering an
engine, and for the instructor the deadline tournament (started from the ladder's page) with
its grades. What a student sees of a ladder is ``ladders.view``'s: aliases and the rows around
their own when the course says so."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from sqlalchemy import select
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from ...errors import GraderError
from ...games import get_game, ggf
from ...tournaments import ladder as rules
from ...tournaments.grades import grades_csv
from ...tournaments.ratings import Z95
from ..course.course import Course, Ladder
from ..database.arena import ArenaEngine
from ..database.models import INSTRUCTOR, User
from ..ladders import ladders
from ..web.charts import Bar, error_bars
from ..web.portal import Portal
from ..web.routes import checked_form, endpoint, need_staff, need_user, page, wants_json, whole

GAME_PAGE = "/arena/g/{id}"  # the arena's page of a game (it shows the engines' names)


def routes(portal: Portal) -> list[BaseRoute]:
    def find(request: Request) -> Ladder:
        try:
            return ladders.find(portal.course, request.path_params["name"])
        except GraderError as e:
            raise HTTPException(404, str(e)) from None

    def index(request: Request, form: Any) -> Response:
        user = need_user(portal, request)
        items = [_ladder_data(portal.course, x) for x in portal.course.ladders.values()]
        return page(request, "ladders.html", {"ladders": items}, user=user)

    def table(request: Request, form: Any) -> Response:
        user = need_user(portal, request)
        ladder = find(request)
        with portal.make.begin() as session:
            seen = ladders.view(session, ladder, user)
            game = get_game(ladder.game).name
            engines = session.scalars(select(ArenaEngine).where(ArenaEngine.owner_id == user.id)
                                      .order_by(ArenaEngine.name)).all()  # fmt: skip
            mine = [{"id": e.id, "name": e.name, "checked": ladders.checked_numbers(session, e.id)}
                    for e in engines if get_game(e.game).name == game]  # fmt: skip
            deadline = _deadline_data(ladders.deadline_state(session, portal.course, ladder)) if user.staff else None
        rows = [_row_data(seen, r) for r in seen.table.rows]
        data: dict[str, Any] = {
            "ladder": _ladder_data(portal.course, ladder),
            "rows": rows,
            "hidden": seen.table.hidden,
            "games": len(seen.standing.games),
            "ggf": ggf.supports(get_game(ladder.game)),
            "entered": any(r.mine for r in seen.table.rows),
            "engines": mine,
            "deadline": deadline,
        }
        if not wants_json(request):
            data["chart"] = ratings_chart(rows)
        return page(request, "ladder.html", data, user=user)

    def enter(request: Request, form: Any) -> Response:
        user = need_user(portal, request)
        ladder = find(request)
        form = checked_form(request, form)
        text, _, number = str(form.get("engine", "")).partition("/")  # 'ID', or 'ID/N': its version N
        number = number or str(form.get("version", "")).strip()
        if whole(text) is None:
            raise HTTPException(400, "choose the engine to enter (the form's 'engine' field)")
        if number and whole(number) is None:
            raise HTTPException(400, "a version is a number (3 for v3): choose one of the engine's checked versions")
        try:
            with portal.make.begin() as session:
                me = session.get(User, user.id)
                assert me is not None
                entry = ladders.enter(session, portal.course, ladder, me, int(text), int(number) if number else None)
                alias = entry.alias
        except GraderError as e:
            raise HTTPException(400, str(e)) from None
        if portal.workers is not None:
            portal.workers.wake.set()
        if wants_json(request):
            return JSONResponse({"entered": ladder.name, "alias": alias if ladder.anonymous else None})
        return RedirectResponse(f"/ladder/{ladder.name}", 303)

    def crosstable(request: Request, form: Any) -> Response:
        user = need_user(portal, request)
        ladder = find(request)
        with portal.make.begin() as session:
            seen = ladders.view(session, ladder, user)
        engines = seen.table.engines
        cross = rules.crosstable(seen.standing.games, engines)
        names = [r.name for r in seen.table.rows]
        rows = [{"name": r.name, "rank": r.rank, "mine": r.mine,
                 "points": [None if o == r.engine else cross[r.engine][o] for o in engines]}
                for r in seen.table.rows]  # fmt: skip
        data = {
            "ladder": _ladder_data(portal.course, ladder),
            "names": names,
            "rows": rows,
            "hidden": seen.table.hidden,
        }
        return page(request, "ladder_crosstable.html", data, user=user)

    def entry(request: Request, form: Any) -> Response:
        user = need_user(portal, request)
        ladder = find(request)
        number = request.path_params["entry"]
        with portal.make.begin() as session:
            seen = ladders.view(session, ladder, user)
        row = seen.entry_of(number)
        if row is None:
            raise HTTPException(404, "no such entry in this ladder")
        linked = user.staff or (row.mine and not ladder.anonymous)  # the arena shows a game to its engines' owners
        games = []
        for g in rules.recent_games(seen.standing.games, row.engine, ladders.RECENT):
            black = g.black == row.engine
            opponent = g.white if black else g.black
            score = g.black_score if black else 1 - g.black_score
            games.append({"id": g.id, "colour": "black" if black else "white",
                          "opponent": seen.name_of(opponent) or ladders.HIDDEN,
                          "result": {1.0: "won", 0.5: "drew", 0.0: "lost"}[score], "opening": g.opening,
                          "finished": g.finished, "page": GAME_PAGE.format(id=g.id) if linked else None})  # fmt: skip
        data = {"ladder": _ladder_data(portal.course, ladder), "entry": _row_data(seen, row), "games": games}
        return page(request, "ladder_entry.html", data, user=user)

    def deadline(request: Request, form: Any) -> Response:
        user = need_user(portal, request)
        ladder = find(request)
        if user.role != INSTRUCTOR:  # a student knows the ladder already: a refusal tells nothing new
            raise HTTPException(403, f"only an instructor starts the deadline tournament of {ladder.title}")
        checked_form(request, form)
        try:
            with portal.make.begin() as session:
                queued = ladders.start_now(session, portal.course, ladder)
        except GraderError as e:
            raise HTTPException(400, str(e)) from None
        if portal.workers is not None:
            portal.workers.wake.set()
        if wants_json(request):
            return JSONResponse({"deadline": ladder.name, "games": queued})
        return RedirectResponse(f"/ladder/{ladder.name}", 303)

    def grades(request: Request, form: Any) -> Response:
        need_staff(portal, request)
        ladder = find(request)
        with portal.make.begin() as session:
            found = ladders.deadline_state(session, portal.course, ladder)
        if found.started is None:
            raise HTTPException(404, f"the deadline tournament of {ladder.title} has not started")
        named = [dataclasses.replace(g, engine=found.names.get(g.engine, g.engine)) for g in found.grades]
        return PlainTextResponse(grades_csv(named), media_type="text/csv",
                                 headers={"content-disposition": f'attachment; filename="{ladder.name}-grades.csv"'})  # fmt: skip

    def games_ggf(request: Request, form: Any) -> Response:
        user = need_user(portal, request)
        ladder = find(request)
        try:
            with portal.make.begin() as session:
                text = ladders.games_ggf(session, ladder, user)
        except GraderError as e:
            raise HTTPException(404, str(e)) from None
        return Response(text, media_type="application/x-ggf",
                        headers={"content-disposition": f'attachment; filename="{ladder.name}.ggf"'})  # fmt: skip

    def route(path: str, handler: Callable[[Request, Any], Response], methods: tuple[str, ...] = ("GET",)) -> Route:
        return Route(path, endpoint(portal, lambda _, r, f: handler(r, f), max_files=0), methods=list(methods))

    return [
        route("/ladders", index),
        route("/ladder/{name}", table),
        route("/ladder/{name}/enter", enter, ("POST",)),
        route("/ladder/{name}/crosstable", crosstable),
        route("/ladder/{name}/entry/{entry:int}", entry),
        route("/ladder/{name}/deadline", deadline, ("POST",)),
        route("/ladder/{name}/grades.csv", grades),
        route("/ladder/{name}/games.ggf", games_ggf),
    ]


def _ladder_data(course: Course, ladder: Ladder) -> dict[str, Any]:
    cutoff = ladders.deadline(course, ladder)
    return {"name": ladder.name, "title": ladder.title, "game": ladder.game, "assignment": ladder.assignment,
            "anonymous": ladder.anonymous, "top": ladder.top, "deadline_games": ladder.deadline_games,
            "deadline": cutoff.isoformat() if cutoff else None,
            "tc": f"{ladder.tc[0]:g}+{ladder.tc[1]:g}"}  # fmt: skip


def _row_data(seen: ladders.View, row: rules.Row) -> dict[str, Any]:
    r = row.rating
    return {"rank": row.rank, "name": row.name, "entry": seen.standing.entry_ids[row.engine], "mine": row.mine,
            "engine": seen.engine_of(row),
            "elo": None if r.elo is None else round(r.elo, 1), "error": None if r.error is None else round(r.error, 1),
            "margin95": None if r.error is None else round(Z95 * r.error, 1), "games": r.games, "points": r.points}  # fmt: skip


def ratings_chart(rows: list[dict[str, Any]]) -> str:
    """The ladder's rows as Elo ratings with their 95% error bars (SVG), best first; "" with no row."""
    if not rows:
        return ""
    bars = []
    for r in rows:
        elo, margin = r["elo"], r["margin95"]
        low, high = (None, None) if elo is None or margin is None else (elo - margin, elo + margin)
        bars.append(Bar(f"{r['rank']}. {r['name']}", elo, low, high, r["mine"]))
    return error_bars(bars, "Elo ratings of the entries shown, with their 95% error bars")


def _deadline_data(found: ladders.DeadlineState) -> dict[str, Any]:
    return {"started": found.started, "played": found.played, "planned": found.planned, "over": found.over,
            "grades": [{"name": found.names.get(g.engine, g.engine), "games": g.games,
                        "share": None if g.share is None else round(100 * g.share, 2), "grade": g.grade,
                        "complete": g.complete} for g in found.grades]}  # fmt: skip
