"""``posthoc crowdtruth FILE``: CrowdTruth 2.0 disagreement metrics (paper 002) on a judgement file."""

from __future__ import annotations

from pathlib import Path

import click
import pandas as pd

from posthoc.atomic import write_bytes_atomic, write_summary_json, write_text_atomic
from posthoc.crowdtruth.io import (
    CrowdTruthConfig,
    judgements_from_label_studio,
    judgements_from_posthoc,
    read_crowdtruth_csv,
)
from posthoc.crowdtruth.pipeline import CrowdTruthRun, run_crowdtruth
from posthoc.errors import PosthocInputError
from posthoc.html import page
from posthoc.tables import require_columns
from posthoc.writers import table_bytes


def _split(values: tuple[str, ...]) -> tuple[str, ...]:
    """Repeated options, each also allowed as a comma-separated list."""
    return tuple(part.strip() for value in values for part in value.split(",") if part.strip())


def _read_table(path: Path) -> pd.DataFrame:
    try:
        return pd.read_csv(path, dtype=str, sep="\t" if path.suffix.lower() in (".tsv", ".tab") else ",")
    except FileNotFoundError as exc:
        raise PosthocInputError(f"{path}: file not found") from exc
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise PosthocInputError(f"{path}: not a readable CSV/TSV ({exc})") from exc


def _reference(unit_inputs: pd.DataFrame, gold_column: str, positive_annotation: str | None, *,
               lowercase: bool) -> pd.Series:
    """Whether each unit's ``gold_column`` value is ``positive_annotation`` (lower-cased with ``lowercase``)."""
    gold = unit_inputs.set_index("unit")[f"input.{gold_column}"].astype(str)
    if positive_annotation is None:
        raise PosthocInputError("--gold-column needs --positive-annotation (or --annotation-vector)")
    gold = gold.str.lower() if lowercase else gold
    return gold == positive_annotation


def _read_judgements(file: Path, layout: str, vector: tuple[str, ...], *, from_name: str,
                     unit_field: str | None) -> tuple[pd.DataFrame, tuple[str, ...]]:
    """The judgements of a file in the ``table``, ``judgements`` or ``label-studio`` layout, and the annotation
    vector (the judgements layout's is verify, edit, remove unless one is given)."""
    if layout == "label-studio":
        judgements = judgements_from_label_studio(file, from_name=from_name, unit_field=unit_field)
    elif layout == "judgements":
        judgements = judgements_from_posthoc(_read_table(file), source=str(file))
        vector = vector or ("verify", "edit", "remove")
    else:
        judgements = _read_table(file)
        require_columns(judgements, ("unit", "worker", "annotation"), table=str(file))
    if judgements.empty:
        raise PosthocInputError(f"{file}: no judgements with two or more workers on a unit")
    return judgements, vector


def _write_outputs(run: CrowdTruthRun, out_dir: Path, *, fmt: str, title: str) -> None:
    """Every table of ``run``, its summary and its report into ``out_dir`` (encoded before the first write)."""
    outputs = {f"{name}.{fmt}": table_bytes(table, fmt=fmt) for name, table in run.tables.items()}
    html = page(title, [run.section])
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, payload in outputs.items():
        write_bytes_atomic(out_dir / name, payload, permissions=0o644)
    write_summary_json(out_dir / "summary.json", run.summary, permissions=0o644)
    write_text_atomic(out_dir / "report.html", html, permissions=0o644)


@click.command("crowdtruth")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Folder for units, workers, annotations, unit_annotations, weighted_labels (and threshold_sweep "
                   "with --gold-column), summary.json and report.html.")
@click.option("--layout", type=click.Choice(["crowdtruth", "table", "judgements", "label-studio"]),
              default="crowdtruth", show_default=True,
              help="crowdtruth: CrowdTruth's CSV input (CrowdFlower, MTurk or custom columns); table: CSV with "
                   "unit, worker, annotation; judgements: judgements.csv of posthoc score (k > 1; unit = mention, "
                   "annotations verify/edit/remove); label-studio: a Label Studio JSON export of a Choices project.")
@click.option("--input-column", "input_columns", multiple=True,
              help="Input column shown to workers (repeat or comma-separate); kept in units.csv.")
@click.option("--output-column", "output_columns", multiple=True,
              help="Answer column; the first is scored. Default: detected as crowdtruth does.")
@click.option("--platform-columns", default=None,
              help="Custom platform: 'judgment,unit,worker,started,submitted' column names (files that are not "
                   "CrowdFlower or MTurk exports).")
@click.option("--annotation-vector", "annotation_vector", multiple=True,
              help="The annotations of a closed task, in order (repeat or comma-separate).")
@click.option("--open-ended/--closed", default=None,
              help="Open-ended: each unit's vector has only the annotations used on it, no AQS. Default: closed "
                   "when --annotation-vector is given (or for the judgements layout), else open-ended.")
@click.option("--annotation-separator", default=",", show_default=True,
              help="Separates several annotations in one answer (use '\\n' for a newline).")
@click.option("--keep-empty-rows", is_flag=True, help="Replace empty answers by --none-token instead of dropping them.")
@click.option("--none-token", default="NONE", show_default=True, help="Placeholder answer for empty answers.")
@click.option("--lowercase", is_flag=True, help="Lower-case every answer before splitting.")
@click.option("--remove-chars", default="", help="Delete these characters from answers before splitting, e.g. '[]\"'.")
@click.option("--csv-separator", default=",", show_default=True, help="Field separator of the CrowdTruth CSV.")
@click.option("--from-name", default="relation", show_default=True,
              help="label-studio layout: the name of the Choices control to read.")
@click.option("--unit-field", default=None,
              help="label-studio layout: task data field naming the unit (default: the task id).")
@click.option("--gold-column", default=None,
              help="Input column with the reference label of each unit; enables the F1 threshold sweep, majority "
                   "vote and McNemar's test.")
@click.option("--positive-annotation", default=None,
              help="With --gold-column: the annotation whose unit-annotation score is tested; a unit is positive "
                   "when its gold value equals it. Default: the last annotation of --annotation-vector.")
@click.option("--threshold", type=click.FloatRange(0.0, 1.0), default=None,
              help="Threshold of the weighted training labels (paper 002 section 3.4). Default: the best-F1 "
                   "threshold with --gold-column, else 0.5.")
@click.option("--worker-threshold", type=click.FloatRange(0.0, 1.0), default=None,
              help="Also run section 3.3's filtering: units 1 sd below mean UQS left out, workers below this WQS "
                   "removed, everything re-scored (filtered_units / filtered_workers tables).")
@click.option("--max-iterations", type=click.IntRange(1), default=10_000, show_default=True,
              help="Safety cap on the fixed-point rounds (the peer has none; it stops when no score moves 0.001).")
@click.option("--format", "fmt", type=click.Choice(["csv", "parquet"]), default="csv", show_default=True,
              help="Format of the table files.")
def crowdtruth_command(file: Path, out_dir: Path, layout: str, input_columns: tuple[str, ...],
                       output_columns: tuple[str, ...], platform_columns: str | None,
                       annotation_vector: tuple[str, ...], open_ended: bool | None, annotation_separator: str,
                       keep_empty_rows: bool, none_token: str, lowercase: bool, remove_chars: str,
                       csv_separator: str, from_name: str, unit_field: str | None, gold_column: str | None,
                       positive_annotation: str | None, threshold: float | None, worker_threshold: float | None,
                       max_iterations: int, fmt: str) -> None:
    """Score a judgement file with the CrowdTruth 2.0 metrics (paper 002).

    Unit quality (UQS), worker quality (WQS, WWA, WUA), annotation quality (AQS) and unit-annotation
    scores (UAS) by the crowdtruth 2.1 fixed-point iteration; sentence-relation scores and clarity;
    weighted training labels; with --gold-column the F1 threshold sweep against the reference, majority
    vote and McNemar's test. Nothing is written unless every step succeeds.
    """
    vector = _split(annotation_vector)
    separator = annotation_separator.encode().decode("unicode_escape") if "\\" in annotation_separator \
        else annotation_separator
    unit_inputs = None
    reference = None
    if layout == "crowdtruth":
        platform = _split((platform_columns,)) if platform_columns else ()
        if platform and len(platform) != 5:
            raise PosthocInputError("--platform-columns needs five names: judgment,unit,worker,started,submitted")
        inputs = _split(input_columns)
        if gold_column and gold_column not in inputs:
            inputs = (*inputs, gold_column)
        config = CrowdTruthConfig(
            input_columns=inputs, output_columns=_split(output_columns), custom_platform_columns=platform,
            open_ended=(not vector) if open_ended is None else open_ended, annotation_vector=vector,
            remove_empty_rows=not keep_empty_rows, none_token=none_token, annotation_separator=separator,
            lowercase=lowercase, remove_chars=remove_chars, csv_separator=csv_separator,
        )
        data = read_crowdtruth_csv(file, config)
        judgements, unit_inputs, is_open = data.judgements, data.unit_inputs, data.open_ended
        if gold_column:
            if positive_annotation is None and vector:
                positive_annotation = vector[-1]
            reference = _reference(unit_inputs, gold_column, positive_annotation, lowercase=lowercase)
    else:
        if gold_column:
            raise PosthocInputError("--gold-column works with the crowdtruth layout only")
        judgements, vector = _read_judgements(file, layout, vector, from_name=from_name, unit_field=unit_field)
        is_open = (not vector) if open_ended is None else open_ended
    try:
        run = run_crowdtruth(
            judgements, annotation_vector=vector or None, open_ended=is_open, unit_inputs=unit_inputs,
            reference=reference, positive_annotation=positive_annotation, threshold=threshold,
            worker_threshold=worker_threshold, max_iterations=max_iterations, title=f"CrowdTruth: {file.name}",
        )
    except PosthocInputError as exc:
        if str(exc).startswith("judgement table"):  # the metrics name the table, not the file it came from
            raise PosthocInputError(f"{file}: {exc}") from None
        raise
    run.summary.update(file=str(file), layout=layout)
    _write_outputs(run, out_dir, fmt=fmt, title=f"CrowdTruth metrics: {file.name}")
    s = run.summary
    click.echo(f"{s['n_units']} units, {s['n_workers']} workers, {s['n_judgements']} judgements; "
               f"{s['iterations']} iterations{'' if s['converged'] else ' (cap reached)'}")
    if "best_f1" in s:
        click.echo(f"best F1 {s['best_f1']:.4f} at threshold {s['best_threshold']:.2f} "
                   f"(clarity-weighted {s['weighted_f1_at_best']:.4f}); majority vote F1 {s['majority_vote_f1']:.4f}")
    click.echo(f"wrote {out_dir / 'report.html'}")
