"""Writing the outputs of ``posthoc score``: tables, judgements, summary, corrected gold, report (staged, then
moved in file by file with ``os.replace``; see :mod:`posthoc.jobs.score`).

Beside the :class:`~posthoc.scores.Scores` tables, ``tables/cell_widths`` (issue 28, "stop early"): per cell the
half-width reached and the one the rest of the plan would bring (:func:`study_cell_widths`), also under
``cell_widths`` in ``summary.json`` and in the report's "Stop now or go on" section."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import pandas as pd

from posthoc.export.checks import exclusions_frame
from posthoc.export.flatten import Flattened
from posthoc.html import Section
from posthoc.scores import Scores
from posthoc.study.plan.study import Study
from posthoc.tables import Documents, Mentions

if TYPE_CHECKING:
    from posthoc.report.explorer import AnnotationTable

CELL_WIDTHS: Final = "cell_widths"


def merge_exclusions(export_exclusions: pd.DataFrame, scoring_exclusions: pd.DataFrame) -> pd.DataFrame:
    columns = list(export_exclusions.columns)
    rows = [tuple(r) for r in export_exclusions[columns].itertuples(index=False, name=None)]
    if not scoring_exclusions.empty:
        extra = scoring_exclusions.reindex(columns=columns)
        for kind, worker, task_key, detail, count in extra.itertuples(index=False, name=None):
            rows.append((str(kind), "" if pd.isna(worker) else str(worker),
                         "" if pd.isna(task_key) else str(task_key), "" if pd.isna(detail) else str(detail),
                         0 if pd.isna(count) else int(count)))
    return exclusions_frame(rows)


def saved_target(study: Study) -> float | None:
    """The target half-width of the estimate ``posthoc study estimate --target-halfwidth`` saved beside the
    manifest for this study, or None (no estimate, another study's, unreadable, or no target)."""
    from posthoc.study.plan.estimate_file import FORMAT

    try:
        record = json.loads(study.estimate_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(record, dict) or record.get("format") != FORMAT or record.get("study") != study.name:
        return None
    target = (record.get("settings") or {}).get("target_halfwidth")
    if isinstance(target, bool) or not isinstance(target, (int, float)):
        return None
    value = float(target)
    return value if math.isfinite(value) and 0 < value < 1 else None


def study_cell_widths(study: Study, scores: Scores, judgements: pd.DataFrame, *,
                      target: float | None = None) -> pd.DataFrame:
    """:func:`posthoc.study.planner.progress_widths.cell_widths` of a scored study: the manifest's plan, its k,
    the judgements so far, the score's rates, the workers the controls excluded; ``target``: the one asked for,
    else the saved estimate's (:func:`saved_target`)."""
    from posthoc.study.planner.progress_widths import cell_widths, planned_judgements

    excluded = scores.controls.loc[scores.controls["excluded"].astype(bool), "worker"] if len(scores.controls) \
        else ()
    return cell_widths(planned_judgements(study.manifest.mentions()), judgements, scores.rates,
                       k=int(study.manifest.k), exclude_workers=excluded,
                       target=target if target is not None else saved_target(study))


def stage_outputs(stage: Path, *, scores: Scores, flattened: Flattened, documents: Documents, fmt: str,
                  summary: dict[str, Any], extra_sections: Iterable[Section], study: Study | None = None,
                  target: float | None = None, mentions: Mentions | None = None,
                  annotation_tables: Sequence[AnnotationTable] = ()) -> list[Path]:
    """Write every output into ``stage`` (``documents``: the study's, for the corrected gold and the explorer);
    returns the files written, relative to ``stage``. With the ``study``, also ``tables/cell_widths``
    (:func:`study_cell_widths` at ``target``), its summary key and its report section, after the others. With the
    source ``mentions`` (the ground truth's included), the study explorer beside the report
    (:func:`posthoc.report.explorer.write_explorer`, ``annotation_tables`` its extra filters and cells) and every
    row of the report's score tables a link into it; the scores' error categories are one of those tables
    (:func:`posthoc.report.categories_section.categories_for_explorer`)."""
    from posthoc.atomic import write_summary_json
    from posthoc.readers.corpus import Corpus
    from posthoc.report.explorer import NO_LINKS, PAGE, CellLinks, write_explorer
    from posthoc.report.study_report import build_report
    from posthoc.writers import write_jsonl, write_nif, write_table

    tables = stage / "tables"
    tables.mkdir(parents=True)
    written: list[Path] = []
    for name, frame in scores.tables().items():
        write_table(frame, tables / f"{name}.{fmt}", fmt=fmt, parquet_compression="zstd")
        written.append(Path("tables") / f"{name}.{fmt}")
    links = CellLinks(PAGE) if mentions is not None else NO_LINKS
    widths = None
    if study is not None:
        from posthoc.report.stop_section import stop_or_go_on_section
        from posthoc.study.planner.progress_widths import widths_summary

        widths = study_cell_widths(study, scores, flattened.judgements, target=target)
        write_table(widths, tables / f"{CELL_WIDTHS}.{fmt}", fmt=fmt, parquet_compression="zstd")
        written.append(Path("tables") / f"{CELL_WIDTHS}.{fmt}")
        summary = {**summary, CELL_WIDTHS: widths_summary(widths)}
        extra_sections = [*extra_sections, stop_or_go_on_section(widths, links)]
    write_table(flattened.judgements, stage / f"judgements.{fmt}", fmt=fmt, parquet_compression="zstd")
    written.append(Path(f"judgements.{fmt}"))
    write_summary_json(stage / "summary.json", summary)
    written.append(Path("summary.json"))
    gold = scores.corrected_gold
    keys = set(zip(gold["dataset"].astype(str), gold["doc_id"].astype(str), strict=True)) if len(gold) else set()
    gold_documents = documents[[(str(d), str(i)) in keys
                                for d, i in zip(documents["dataset"], documents["doc_id"], strict=True)]]
    corpus = Corpus(documents=gold_documents.reset_index(drop=True), mentions=gold.reset_index(drop=True))
    write_jsonl(corpus, stage / "corrected_gold.jsonl")
    write_nif(corpus, stage / "corrected_gold.ttl")
    written += [Path("corrected_gold.jsonl"), Path("corrected_gold.ttl")]
    if mentions is not None:
        from posthoc.report.categories_section import categories_for_explorer

        categories = categories_for_explorer(scores)
        annotation_tables = [*annotation_tables, *([categories] if categories is not None else [])]
        written += write_explorer(stage, scores=scores, judgements=flattened.judgements, mentions=mentions,
                                  documents=documents, annotation_tables=annotation_tables, cell_widths=widths)
    (stage / "report.html").write_text(build_report(scores, extra_sections=extra_sections, links=links),
                                       encoding="utf-8")
    written.append(Path("report.html"))
    return written


def commit_outputs(stage: Path, out_dir: Path, written: Sequence[Path]) -> None:
    """Move every staged file over its target (``os.replace``: each file is atomic on one file system).

    Files get the ordinary permissions of the umask (the atomic writers' temporary files are 0600).
    """
    umask = os.umask(0)
    os.umask(umask)
    for relative in written:
        os.chmod(stage / relative, 0o666 & ~umask)
        target = out_dir / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(stage / relative, "rb") as handle:
            os.fsync(handle.fileno())
        os.replace(stage / relative, target)
