"""``posthoc sequence``: sequence-effect tests (paper 004) on a table or a scored study's judgements."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pandas as pd

from posthoc.atomic import write_summary_json, write_text_atomic
from posthoc.errors import PosthocInputError
from posthoc.html import page
from posthoc.sequence import (
    audit_orders,
    lag1_by_subset,
    lag1_by_tertile,
    read_sequence_csv,
    read_snow_rte,
    scores_after_previous,
    sequence_table_from_judgements,
)
from posthoc.sequence.labelstudio import sequence_table_from_rating_export
from posthoc.sequence.lag_model import is_binary
from posthoc.sequence.report import sequence_section
from posthoc.writers import write_table

SNOW_CAVEAT = (
    "Snow et al. (2008) released no record of the order each worker saw; the in-HIT order of the released files "
    "(pos_in_hit_fileorder) is the best available guess, assumed the same for every worker of a HIT."
)


@click.command("sequence")
@click.argument("table", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Folder for coefficients.csv, tertiles.csv, after_previous.csv, audit.csv and report.html.")
@click.option("--layout", type=click.Choice(["table", "snow-rte", "judgements", "ls-rating"]), default="table",
              show_default=True,
              help="table: CSV/TSV with worker, item, position, label (and sequence, gold); snow-rte: "
                   "rte_sequence_by_assignment.csv of Snow et al.; judgements: judgements.csv of posthoc score; "
                   "ls-rating: a Label Studio JSON export of rating projects (label_configs/rating.xml).")
@click.option("--kind", type=click.Choice(["auto", "binary", "continuous"]), default="auto", show_default=True,
              help="Logistic model for 0/1 labels, linear for scores; auto decides from the labels.")
@click.option("--worker-col", default="worker", show_default=True, help="Column naming the worker (layout table).")
@click.option("--item-col", default="item", show_default=True, help="Column naming the item (layout table).")
@click.option("--position-col", default="position", show_default=True,
              help="Column with the 0-based position in the worker's sequence (layout table).")
@click.option("--sequence-col", default=None,
              help="Column naming the sequence (HIT id); default: each worker's rows are one sequence.")
@click.option("--label-col", default="label", show_default=True, help="Column with the worker's label or score.")
@click.option("--gold-col", default=None, help="Column with the gold label (omit when there is none).")
@click.option("--good-threshold", type=float, default=0.6, show_default=True,
              help="Binary: accuracy against gold at or above which a worker is 'good' (paper 004: 60%).")
@click.option("--good-correlation", type=float, default=0.5, show_default=True,
              help="Continuous: correlation with gold above which a worker is 'good' (paper 004: 0.5).")
@click.option("--no-worker-bias", is_flag=True, help="Leave out the worker-bias control (the worker's mean label over "
              "their other items, computed on the labels as given).")
@click.option("--standardise", is_flag=True,
              help="Continuous: z-score each worker's labels first (paper 004 section 3.3). Off by default: "
                   "per-worker centring biases a lagged coefficient by about -(1 + b1) / T with T items a worker.")
@click.option("--task-label", type=click.Choice(["all-verified", "verify-share"]), default="all-verified",
              show_default=True,
              help="Layout judgements (one row a task in served order): all-verified = 1 when every pre-filled "
                   "annotation of the task was verified (logistic); verify-share = the share verified (linear).")
def sequence_command(table: Path, out_dir: Path, layout: str, kind: str, worker_col: str, item_col: str,
                     position_col: str, sequence_col: str | None, label_col: str, gold_col: str | None,
                     good_threshold: float, good_correlation: float, no_worker_bias: bool, standardise: bool,
                     task_label: str) -> None:
    """Test a table of judgements for sequence effects (paper 004).

    Fits Y(t) = b0 + b1 Y(t-1) + b2 gold + b3 worker-bias per worker subset (all, moderate, good, bad) and
    position tertile, audits how alike workers' orders are, and for continuous scores compares the mean score
    after low, middle and high items (Welch's t-test). Writes tables and report.html into --out. A posthoc
    study (--layout judgements) is tested one task at a time in each worker's served order.
    """
    caveat = ""
    if layout == "snow-rte":
        sequences = read_snow_rte(table)
        caveat = SNOW_CAVEAT
    elif layout == "judgements":
        try:
            judgements = pd.read_csv(table)
        except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
            raise PosthocInputError(f"{table}: cannot read judgements ({exc})") from exc
        try:
            from posthoc.metrics.controls import control_results

            controls = control_results(judgements)  # the main metrics' exclusions (failed control task)
            excluded = sorted(controls.loc[controls["excluded"], "worker"])
            sequences = sequence_table_from_judgements(judgements, label=task_label.replace("-", "_"),
                                                       exclude_workers=excluded)
        except PosthocInputError as exc:
            raise PosthocInputError(f"{table}: {exc}") from exc
        if excluded:
            caveat = (f"Left out, as in posthoc score's metrics: {len(excluded)} worker(s) who failed their control "
                      f"task ({', '.join(excluded)}).")
            click.echo(caveat)
    elif layout == "ls-rating":
        try:
            exported = json.loads(table.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise PosthocInputError(f"{table}: cannot read a Label Studio JSON export ({exc})") from exc
        if not isinstance(exported, list):
            raise PosthocInputError(f"{table}: a Label Studio JSON export is a list of tasks")
        sequences = sequence_table_from_rating_export(exported, source=str(table))
    else:
        sequences = read_sequence_csv(table, worker=worker_col, sequence=sequence_col, item=item_col,
                                      position=position_col, label=label_col, gold=gold_col)
    if sequences.empty:
        raise PosthocInputError(f"{table}: no judgements to test (no rows in the {layout} layout); give a table "
                                "with one row per judgement")
    options = {"kind": kind, "worker_bias": not no_worker_bias, "standardise": standardise,
               "good_threshold": good_threshold, "good_correlation": good_correlation}
    by_subset = lag1_by_subset(sequences, **options)  # type: ignore[arg-type]
    by_tertile = lag1_by_tertile(sequences, **options)  # type: ignore[arg-type]
    audit = audit_orders(sequences)
    continuous = kind == "continuous" or (kind == "auto" and not is_binary(sequences["label"]))
    after = scores_after_previous(sequences) if continuous else None
    out_dir.mkdir(parents=True, exist_ok=True)
    write_table(by_subset, out_dir / "coefficients.csv")
    write_table(by_tertile, out_dir / "tertiles.csv")
    write_table(audit.per_worker, out_dir / "audit.csv")
    if after is not None:
        write_table(after.means, out_dir / "after_previous.csv")
    summary = {"table": str(table), "layout": layout, "n_judgements": len(sequences),
               "n_workers": int(sequences["worker"].nunique()), "audit": audit.message,
               "b1": {row.subset: row.b1 for row in by_subset.itertuples()}}
    write_summary_json(out_dir / "summary.json", summary)
    section = sequence_section(by_subset, by_tertile, after=after, audit=audit, caveat=caveat)
    write_text_atomic(out_dir / "report.html", page(f"Sequence effects: {table.name}", [section]))
    for row in by_subset.itertuples():
        click.echo(f"{row.subset:>9}: b1 = {row.b1:+.3f} [{row.b1_low:+.3f}, {row.b1_high:+.3f}] "
                   f"p = {row.b1_p:.3g}  n = {row.n}  workers = {row.n_workers}")
    click.echo(f"order audit: {audit.message}")
    click.echo(f"wrote {out_dir / 'report.html'}")
