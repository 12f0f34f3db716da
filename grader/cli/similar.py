"""``grader similar``: rank the pairs of a class's submissions by how similar their code is."""

from __future__ import annotations

import os

import click

from ..files import check_output_file, write_text
from ..similarity import report_html, report_json, report_table, similar
from ..similarity.compare import TOP
from .options import echo, fail_cleanly, fmt_option, jobs_option, json_option


@click.command("similar")
@click.argument("folders", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False))
@click.option(
    "--base",
    multiple=True,
    type=click.Path(exists=True),
    metavar="STARTER",
    help="The starter code (a file or folder; repeat for more): left out of every match.",
)
@click.option(
    "--archive",
    multiple=True,
    type=click.Path(exists=True, file_okay=False),
    metavar="FOLDER",
    help="Earlier terms' submissions (repeat for more): each compared with the class, not with each other.",
)
@click.option(
    "--html",
    "html_file",
    type=click.Path(dir_okay=False),
    metavar="OUT",
    help="Write the report page: the ranking, then each pair's files side by side, similar passages marked.",
)
@json_option("the ranking with each pair's similar passages")
@click.option(
    "--top",
    type=click.IntRange(min=1),
    default=TOP,
    show_default=True,
    help="How many of the most similar pairs to show.",
)
@jobs_option("Processes that fingerprint the files", default="the number of cores")
@fmt_option
@fail_cleanly
def similar_command(folders: tuple[str, ...], base: tuple[str, ...], archive: tuple[str, ...], html_file: str | None,
                    json_file: str | None, top: int, jobs: int | None, fmt: str) -> None:  # fmt: skip
    """Compare every pair of the submissions in FOLDER (a source file or a sub-folder per
    student), and each with the --archive folders' submissions, and rank the pairs by how
    similar their code is (copydetect's fingerprints: identifiers, comments and whitespace do
    not count). The starter code given by --base is left out of every match. A similar pair
    is one to look at, side by side in the --html report: the tool decides nothing.

    \b
    Examples:
      grader similar class/ --base starter/ --html similar.html
      grader similar class/ --archive terms/2024 --archive terms/2025 --json similar.json
    """
    for path in (html_file, json_file):
        if path is not None:
            check_output_file(path)
    report = similar(list(folders), list(archive), list(base), top, jobs or os.cpu_count() or 1)
    echo(report_table(report, fmt))
    if report.not_text:
        echo(f"Left out, not source text: {', '.join(report.not_text)}")
    archived = sum(s.archive for s in report.submissions)
    echo(f"{len(report.submissions) - archived} submissions, {archived} archived, {report.compared} pairs compared "
         f"in {report.seconds:.1f} s")  # fmt: skip
    for path, text in ((html_file, report_html), (json_file, report_json)):
        if path is not None:
            write_text(path, text(report))
            echo(f"Wrote {path}")
