"""``posthoc flags check | review | apply``: Eaglet's error flags (paper 003) and their review in Label Studio."""

from __future__ import annotations

import json
from pathlib import Path

import click

from posthoc.atomic import write_text_atomic
from posthoc.cli.labelstudio_access import require_api_token, url_option
from posthoc.eaglet.rules import DEFAULT_ORDER
from posthoc.errors import PosthocInputError
from posthoc.html import page
from posthoc.labelstudio.url import check_url


def _parse_source(value: str) -> tuple[str, Path]:
    if "=" in value and not Path(value).exists():
        system, _, path = value.partition("=")
        if not system:
            raise PosthocInputError(f"{value!r}: give SYSTEM=PATH with a system name, or just PATH for GT")
        return system, Path(path)
    return "GT", Path(value)


@click.command("check")
@click.argument("mentions", nargs=-1, required=True)
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Folder for flags.csv (or .parquet), rule_shares.csv, flags.nif.ttl, checked.jsonl, report.html.")
@click.option("--system", "checked", default="GT", show_default=True,
              help="The system whose annotations are checked (GT, a system's name, or a verification union's).")
@click.option("--kb", "kb_index", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="KB index built by `posthoc kb build` from Wikipedia's dumps (offline OU, DU, IU).")
@click.option("--kb-redirects", multiple=True, type=click.Path(dir_okay=False, path_type=Path),
              help="DBpedia redirects dump (N-Triples .ttl, .bz2/.gz allowed); repeatable.")
@click.option("--kb-disambiguations", multiple=True, type=click.Path(dir_okay=False, path_type=Path),
              help="DBpedia disambiguations dump; repeatable.")
@click.option("--kb-tsv", multiple=True, type=click.Path(dir_okay=False, path_type=Path),
              help="TSV title<TAB>kind<TAB>target, kind page | redirect | disambiguation; repeatable.")
@click.option("--mediawiki-api", default=None,
              help="Online URI checks against this MediaWiki API (e.g. https://en.wikipedia.org/w/api.php). "
                   "Off by default; used only when no KB file is given.")
@click.option("--mediawiki-cache", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="JSON cache of MediaWiki answers (default OUT/mediawiki_cache.json).")
@click.option("--mediawiki-interval", type=float, default=1.0, show_default=True,
              help="Seconds between two MediaWiki requests.")
@click.option("--rules", "rules", default=None,
              help=f"Comma-separated rules to run, in pipeline order: {', '.join(DEFAULT_ORDER)} (default all).")
@click.option("--tagger", type=click.Choice(["auto", "pattern", "rules"]), default="auto", show_default=True,
              help="Long description tagger: pattern (TextBlob's PatternTagger), rules (word shapes), auto.")
@click.option("--touching", is_flag=True, help="Count touching spans as overlapping (Eaglet's own rule).")
@click.option("--cross-line-breaks", is_flag=True, help="Combined marking also across line breaks (Eaglet).")
@click.option("--normalise", type=click.Choice(["exact", "casefold", "lemma"]), default="exact", show_default=True,
              help="How inconsistent marking compares token sequences.")
@click.option("--common-words", is_flag=True,
              help="Inconsistent marking also proposes numbers, lower-case words, a month or weekday and "
                   "one-word adjectives (paper 003's module); by default only names.")
@click.option("--match", type=click.Choice(["span", "span_link"]), default="span", show_default=True,
              help="Missing entities: systems agree on the same span, or on the same span and link.")
@click.option("--min-votes", type=int, default=None, help="Missing entities: systems needed (default a majority).")
@click.option("--format", "fmt", type=click.Choice(["csv", "parquet"]), default="csv", show_default=True,
              help="Format of the flags table.")
def check_command(mentions: tuple[str, ...], out_dir: Path, checked: str, kb_index: Path | None,
                  kb_redirects: tuple[Path, ...],
                  kb_disambiguations: tuple[Path, ...], kb_tsv: tuple[Path, ...], mediawiki_api: str | None,
                  mediawiki_cache: Path | None, mediawiki_interval: float, rules: str | None, tagger: str,
                  touching: bool, cross_line_breaks: bool, normalise: str, common_words: bool, match: str,
                  min_votes: int | None, fmt: str) -> None:
    """Flag errors in a gold standard (or any system's annotations) with Eaglet's rules (paper 003).

    MENTIONS are files or WNED folders the readers know (NIF .ttl, WNED, JSONL, ...), each PATH (the
    ground truth, system GT) or SYSTEM=PATH (another system's output; they vote for missing entities).
    Writes the flags table, the per-rule shares of annotations (the paper's Table 1), NIF with the
    flags, the checked annotations as JSONL (input of `posthoc flags review` / `apply`) and report.html.
    """
    from posthoc.eaglet.flags import write_flags
    from posthoc.eaglet.kb import KbSnapshot, KnowledgeBase, MediaWikiChecker
    from posthoc.eaglet.nif_out import write_flagged_nif
    from posthoc.eaglet.pipeline import default_pipeline
    from posthoc.eaglet.report import flags_section, rule_shares
    from posthoc.readers import read_mentions
    from posthoc.writers import write_jsonl, write_table

    if kb_index is not None and (kb_redirects or kb_disambiguations or kb_tsv):
        raise PosthocInputError("--kb and --kb-redirects / --kb-disambiguations / --kb-tsv: give one knowledge base")
    corpus = None
    for value in mentions:
        system, path = _parse_source(value)
        part = read_mentions(path, system=system, progress=True)
        corpus = part if corpus is None else corpus.merge(part)
    assert corpus is not None
    kb: KnowledgeBase | None = None
    if kb_index is not None:
        from posthoc.eaglet.kb_index import WikiIndexKb

        kb = WikiIndexKb(kb_index)
    elif kb_redirects or kb_disambiguations or kb_tsv:
        kb = KbSnapshot.from_files(redirects=kb_redirects, disambiguations=kb_disambiguations, tsv=kb_tsv)
    elif mediawiki_api:
        kb = MediaWikiChecker(mediawiki_api, cache_path=mediawiki_cache or out_dir / "mediawiki_cache.json",
                              min_interval=mediawiki_interval)
    only = [name.strip() for name in rules.split(",") if name.strip()] if rules else None
    pipeline = default_pipeline(kb=kb, only=only, tagger=tagger, touching=touching,
                                cross_line_breaks=cross_line_breaks, normalise=normalise,
                                common_words=common_words, match=match, min_votes=min_votes)
    flags = pipeline.run(corpus.documents, corpus.mentions, system=checked, progress=True)
    out_dir.mkdir(parents=True, exist_ok=True)
    write_flags(flags, out_dir / f"flags.{fmt}", fmt=fmt)
    shares = rule_shares(flags, corpus.documents, corpus.mentions, system=checked)
    write_table(shares, out_dir / "rule_shares.csv")
    write_flagged_nif(corpus, flags, out_dir / "flags.nif.ttl", system=checked)
    write_jsonl(corpus, out_dir / "checked.jsonl", system=checked)
    write_text_atomic(out_dir / "meta.json", json.dumps({"system": checked, "rules": pipeline.names,
                                                         "flags_file": f"flags.{fmt}"}, indent=1))
    section = flags_section(flags, corpus.documents, corpus.mentions, system=checked)
    write_text_atomic(out_dir / "report.html", page("Eaglet flags", [section]))
    click.echo(shares.to_string(index=False))
    click.echo(f"{len(flags)} flags written to {out_dir}")


@click.command("review")
@click.option("--flags", "flags_dir", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Folder written by `posthoc flags check`.")
@url_option("Label Studio's URL, e.g. http://127.0.0.1:8080 (token from env POSTHOC_LS_TOKEN or "
            "LABEL_STUDIO_TOKEN)", dest="url", required=True)
@click.option("--title", default=None, help="Project title (default: 'Eaglet review: <folder name>').")
@click.option("--rules", "rules", default=None, help="Comma-separated rules whose flags to review (default all).")
def review_command(flags_dir: Path, url: str, title: str | None, rules: str | None) -> None:
    """Turn flags into Label Studio review tasks (one task per flagged document; idempotent).

    Each flag is a pre-filled region (result id = flag id) with accept / modify / reject and the
    link; the reviewer can add missed mentions. Rerunning adds only documents not yet imported.
    The project id is written to FLAGS/review.json.
    """
    from posthoc.eaglet.review import create_review_project

    check_url(url)
    token = require_api_token()
    only = [name.strip() for name in rules.split(",") if name.strip()] if rules else None
    result = create_review_project(flags_dir, url=url, token=token, title=title, rules=only)
    click.echo(f"project {result.project_id}: {result.created} task(s) created, {result.existing} already there")


@click.command("apply")
@click.option("--flags", "flags_dir", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Folder written by `posthoc flags check` (holds the original annotations).")
@url_option("Label Studio's URL (token from env POSTHOC_LS_TOKEN or LABEL_STUDIO_TOKEN)", dest="url",
            required=True)
@click.option("--project", "project_id", type=int, default=None,
              help="Review project id (default: the one in FLAGS/review.json).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Folder for corrected.jsonl, corrected.nif.ttl and changes.csv.")
def apply_command(flags_dir: Path, url: str, project_id: int | None, out_dir: Path) -> None:
    """Export the review project and write the corrected gold standard and a log of every change."""
    from posthoc.eaglet.review import apply_review

    check_url(url)
    token = require_api_token()
    result = apply_review(flags_dir, url=url, token=token, project_id=project_id, out_dir=out_dir)
    click.echo(f"{result.changes} change(s) applied; corrected gold standard in {out_dir}")
