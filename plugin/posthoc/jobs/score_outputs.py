"""Writing the outputs of ``posthoc score``: tables, judgements, summary, corrected gold, report (staged, then
moved in file by file with ``os.replace``; see :mod:`posthoc.jobs.score`)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from posthoc.export.checks import exclusions_frame
from posthoc.export.flatten import Flattened
from posthoc.html import Section
from posthoc.scores import Scores


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


def stage_outputs(stage: Path, *, scores: Scores, flattened: Flattened, documents: pd.DataFrame, fmt: str,
                  summary: dict[str, Any], extra_sections: Iterable[Section]) -> list[Path]:
    """Write every output into ``stage`` (``documents``: the study's, for the corrected gold); returns the files
    written, relative to ``stage``."""
    from posthoc.atomic import write_summary_json
    from posthoc.readers.corpus import Corpus
    from posthoc.report.study_report import build_report
    from posthoc.writers import write_jsonl, write_nif, write_table

    tables = stage / "tables"
    tables.mkdir(parents=True)
    written: list[Path] = []
    for name, frame in scores.tables().items():
        write_table(frame, tables / f"{name}.{fmt}", fmt=fmt, parquet_compression="zstd")
        written.append(Path("tables") / f"{name}.{fmt}")
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
    (stage / "report.html").write_text(build_report(scores, extra_sections=extra_sections), encoding="utf-8")
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
