"""``posthoc score``: export a study from Label Studio (or read export files), score it, write the report."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Literal

import click

from posthoc.cli.labelstudio_access import api_token, token_env_option, url_option
from posthoc.errors import PosthocInputError
from posthoc.jobs.score import (
    EXIT_LOCKED,
    EXIT_NOTHING_NEW,
    JudgementSource,
    ScoreJobLocked,
    ScoreOptions,
    run_score_job,
)
from posthoc.jobs.score_options import INTERVALS, UNIONS

_EPILOG = """\b
Exit codes:
  0   updated: outputs written (also when nothing changed, without --periodic);
      or no judgements at all (an empty export, nothing annotated yet): one line, nothing written;
      or no judgements but exclusions (every task skipped, drafts only): one line, and a report
      that says so in one line above the exclusions
  10  nothing new since the last run (only with --periodic; outputs untouched)
  2   bad input (manifest, export file, option): one line on stderr
  3   Label Studio unreachable or refusing the token: one line, previous outputs intact
  4   another `posthoc score` run holds the lock on --out
\b
Example (cron, every 15 minutes; scripts/posthoc-score.cron): the settings and the token
in an env file only the study owner can read (chmod 600), never on the crontab line:
  */15 * * * * POSTHOC_SCORE_ENV=$HOME/.config/posthoc/score.env \\
      /opt/posthoc-review/scripts/score-periodic.sh >> $HOME/posthoc-score.log 2>&1
where score.env holds POSTHOC_MANIFEST=/srv/study/manifest.sqlite,
POSTHOC_REPORT_DIR=/srv/study/report, POSTHOC_LS_URL=http://127.0.0.1:8080 and
LABEL_STUDIO_TOKEN=...; scripts/score-periodic.sh runs `posthoc score --periodic --quiet`
and turns exit 10 into 0.
"""


@click.command("score", epilog=_EPILOG)
@click.option("--manifest", "manifest_path", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="The study manifest written by `posthoc study plan`.")
@url_option("Label Studio base URL; every project of the study is exported (found by the marker `posthoc study "
            "create` writes in each project)")
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Output folder: report.html, tables/, judgements, summary.json, corrected_gold.jsonl/.ttl.")
@click.option("--export-file", "export_files", multiple=True, type=click.Path(dir_okay=False, path_type=Path),
              help="Read this Label Studio JSON export instead of fetching (repeat for several projects).")
@click.option("--project", "project_ids", multiple=True, type=int,
              help="Export only these Label Studio project ids (repeatable) instead of finding the study's projects.")
@click.option("--label-config", "label_config_path", default=None, type=click.Path(dir_okay=False, path_type=Path),
              help="Label config (XML) of --export-file exports, if not label_configs/entity_verification.xml.")
@token_env_option
@click.option("--resamples", "n_resamples", default=1000, show_default=True, type=click.IntRange(min=0),
              help="Bootstrap resamples for the 95% intervals (paper 000, Figure 3).")
@click.option("--seed", default=0, show_default=True, type=int, help="Seed of the bootstrap resampling.")
@click.option("--resample-unit", default="doc_id", show_default=True,
              type=click.Choice(["doc_id", "task", "annotation", "worker"]),
              help="What the bootstrap resamples: documents (as the paper), tasks, annotations or workers.")
@click.option("--union", default="exact", show_default=True, type=click.Choice(UNIONS),
              help="How the verification union V(d) behind posthoc recall counts (paper 000 section 3.2): exact = "
                   "one member per distinct verified span and link, the formal definition V(d) = the union over "
                   "systems of V(m,d); overlap = verified annotations with the same link whose spans overlap are "
                   "one member, the paper's 'union of all non-exact, non-overlapping annotations'.")
@click.option("--interval", default="bca", show_default=True, type=click.Choice(INTERVALS),
              help="How the 95% intervals of the rates and of the paired comparisons are read from the resamples: "
                   "bca = bias-corrected and accelerated (Efron 1987), percentile = the resamples' 2.5% and 97.5% "
                   "quantiles (the paper's empirical interval). See docs/metrics.md.")
@click.option("--format", "fmt", default="csv", show_default=True, type=click.Choice(["csv", "parquet"]),
              help="Format of the tables and the judgements file.")
@click.option("--periodic", is_flag=True, help="Cron mode: exit 10 and write nothing when the judgements, exclusions "
              "and options are the same as in the last run. Projects Label Studio reports unchanged since the last "
              "run (counts, tasks updated since or holding a draft: one query a project) are not exported again: "
              "their judgements are read from --out/.posthoc-cache (also without --periodic).")
@click.option("--target-halfwidth", "--target", "target_halfwidth", default=None, type=float,
              help="Half-width each cell is held to in tables/cell_widths and the report's 'Stop now or go on' "
                   "(default: the target of the estimate saved beside the manifest, if any).")
@click.option("--quiet", is_flag=True, help="No progress bars; only the final line (and errors).")
@click.option("--kb", "kb_index", default=None, type=click.Path(dir_okay=False, path_type=Path),
              help="KB index of `posthoc kb build`: adds strict_kb pre-annotation scores (links compared through "
                   "redirects and Wikidata ids) beside the plain strict ones.")
def score_command(manifest_path: Path, ls_url: str | None, out_dir: Path, export_files: tuple[Path, ...],
                  project_ids: tuple[int, ...], label_config_path: Path | None, token_env: str | None, n_resamples: int,
                  seed: int, resample_unit: str, union: str, interval: str, fmt: Literal["csv", "parquet"],
                  periodic: bool, quiet: bool, target_halfwidth: float | None, kb_index: Path | None) -> None:
    """Export every project of a study, score it (paper 000 sections 3-4) and write an HTML report with tables.

    Reruns on the same data give byte-identical files. Everything left out (skipped tasks, drafts,
    annotations by other users, tasks annotated twice, regions drawn by hand or moved) is listed in
    the report and in tables/exclusions.

    Beside the verification rate (verified annotations / judged annotations, the posthoc precision) the
    rates table gives mention_rate: the share of annotations whose mention was right, verified or edited
    (paper 000 section 4: "Edits indicate that the named entity recognition (i.e., mention detection)
    portion of the EL model was able to identify an entity, but the entity was not linked to an verifiable
    entity"). --union chooses how posthoc recall's union of verified annotations counts (exact or overlap).
    --kb adds, beside strict and overlap, the matching strict_kb (paper 000 section 5): a link and its
    redirect, or a Wikidata id, are one entity.
    """
    token = api_token(token_env)
    label_config = None
    if label_config_path is not None:
        try:
            label_config = label_config_path.read_text(encoding="utf-8")
        except OSError as exc:
            raise click.BadParameter(f"cannot read {label_config_path}: {exc.strerror}",
                                     param_hint="--label-config") from None
        except UnicodeDecodeError:
            raise PosthocInputError(f"--label-config {label_config_path}: not UTF-8 text; give the project's "
                                    "label config (XML)") from None
        from posthoc.labelstudio.label_config import verification_tags

        verification_tags(label_config, where=f"--label-config {label_config_path}")  # checked before --out
    try:
        options = ScoreOptions(n_resamples=n_resamples, seed=seed, resample_unit=resample_unit,
                               fmt=fmt, union=union, interval=interval, periodic=periodic, progress=not quiet,
                               target_halfwidth=target_halfwidth, kb_index=None if kb_index is None else str(kb_index))
        source = JudgementSource(ls_url=ls_url, token=token, project_ids=project_ids, export_files=export_files,
                                 label_config=label_config)
        result = run_score_job(manifest_path=manifest_path, out_dir=out_dir, source=source, options=options)
    except ScoreJobLocked as exc:
        click.echo(f"posthoc: locked: {exc}", err=True)
        sys.exit(EXIT_LOCKED)
    projects = ""
    if result.exported or result.reused:
        total = len(result.exported) + len(result.reused)
        projects = f" ({len(result.exported)} of {total} projects exported, {len(result.reused)} unchanged)"
    if result.status == "empty":
        where = ", ".join(map(str, export_files)) if export_files else f"the study's projects on {ls_url}"
        kept = f"the outputs in {out_dir} kept" if out_dir.is_dir() else f"{out_dir} not written"
        click.echo(f"no judgements in {where} (no annotation at all): nothing scored; {kept}")
        sys.exit(0)
    if result.status == "nothing-new":
        click.echo(f"nothing new: {result.n_judgements} judgements unchanged; {result.report_path} kept{projects}")
        sys.exit(EXIT_NOTHING_NEW if periodic else 0)
    if result.n_judgements == 0:
        click.echo(f"no judgements to score: 0 judgements, {result.n_exclusions} excluded (the report says so and "
                   f"lists why) -> {result.report_path}{projects}")
        return
    click.echo(f"updated: {result.n_judgements} judgements, {result.n_exclusions} excluded -> {result.report_path}"
               f"{projects}")
