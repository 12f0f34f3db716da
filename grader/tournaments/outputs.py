"""The files a tournament writes beside its records: games.txt, results.json, games.ggf
(Othello), psq/ (Gomoku) and report.html."""

from __future__ import annotations

import json

from ..games import ggf, psq
from .folder import RECORDS
from .html import tournament_page
from .results import TournamentResult
from .settings import TournamentSettings


def write_outputs(result: TournamentResult, settings: TournamentSettings) -> None:
    """games.txt, results.json, games.ggf (Othello), psq/ (Gomoku) and report.html in the folder."""
    folder = result.folder
    folder.write(RECORDS, "".join(g.record_line() + "\n" for g in result.games))
    folder.write("results.json", json.dumps(result.to_json(), indent=1))
    result.files = [RECORDS, "games.jsonl", "results.json"]
    if ggf.supports(settings.rules):
        folder.write(ggf.FILE, ggf.write_games(result.games, settings.rules, folder.meta.get("created", "")))
        result.files.append(ggf.FILE)
    if psq.supports(settings.rules):  # a game a file, as Piskvork and Gomocup keep them
        seconds = settings.tc[1] if settings.tc else settings.limits.wall_seconds  # a clock's increment
        for name, text in psq.write_games(result.games, settings.rules, seconds).items():
            folder.write(f"{psq.FOLDER}/{name}", text)
        result.files.append(f"{psq.FOLDER}/")
    folder.write("report.html", tournament_page(result, settings.rules))
    result.files.append("report.html")
