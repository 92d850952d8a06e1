"""``posthoc kb build``: Wikipedia's own dumps as the knowledge base of the URI checks and KB-aware scores."""

from __future__ import annotations

from pathlib import Path

import click

from posthoc.cli.exit_codes import exit_codes_epilog

_PATH = click.Path(dir_okay=False, path_type=Path)


@click.command("build", epilog=exit_codes_epilog(done="the index is written (or replaced) whole"))
@click.option("--dumps", "folder", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder with {wiki}-{date}-page.sql.gz, -redirect.sql.gz and -page_props.sql.gz of one wiki.")
@click.option("--page", type=_PATH, default=None, help="The page dump (gzip or plain); wins over --dumps.")
@click.option("--redirect", type=_PATH, default=None, help="The redirect dump.")
@click.option("--page-props", type=_PATH, default=None, help="The page_props dump.")
@click.option("--lang", default=None, help="The wiki's language (default: from the file names, enwiki -> en).")
@click.option("--out", type=_PATH, required=True, help="The index file to write (SQLite; replaced atomically).")
@click.option("--cache-mb", type=click.IntRange(16, 4096), default=256, show_default=True,
              help="SQLite's page cache per database, in MB (the build's memory beyond one dump line).")
@click.option("--one-process", is_flag=True,
              help="Read the three dumps one after the other (default: redirect and page_props in a second process "
                   "while this one reads page).")
@click.option("--quiet", is_flag=True, help="No progress bar.")
def build_command(folder: Path | None, page: Path | None, redirect: Path | None, page_props: Path | None,
                  lang: str | None, out: Path, cache_mb: int, one_process: bool, quiet: bool) -> None:
    """Build a KB index from one wiki's page, redirect and page_props SQL dumps (dumps.wikimedia.org).

    Namespace 0 only; for each title its page id, whether it is a redirect and its final target (chains
    followed; double redirects, loops, missing targets, interwiki redirects reported), whether it is a
    disambiguation page, and its Wikidata id. Use the index with `posthoc flags check --kb INDEX` and
    `posthoc score --kb INDEX`. Memory stays bounded whatever the dumps' size; a failed build leaves the
    previous index as it was.
    """
    from posthoc.jobs.kb_build import find_dumps, run_kb_build

    dumps = find_dumps(folder=folder, page=page, redirect=redirect, page_props=page_props, lang=lang)
    report = run_kb_build(dumps, out=out, progress=not quiet, cache_mb=cache_mb, parallel=not one_process)
    problems = ", ".join(f"{count} {name}" for name, count in report.problems.items()) or "none"
    click.echo(f"{out}: {report.titles} titles ({report.redirects} redirects, {report.disambiguations} "
               f"disambiguation pages, {report.wikidata} with a Wikidata id); redirect problems: {problems}")
