"""Report sections that every scored study gets beside Figures 3-6, when its data allow them.

- Sequence effects (seed 004): the logistic lag-1 model on each worker's stream of judged annotations
  (verified or not) and the order audit (planned position against ``created_at``). Needs two workers or more.
- CrowdTruth (seed 002): disagreement metrics on verify / edit / remove, when annotations have two judges or
  more (an agreement sub-study, k > 1).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from posthoc.errors import PosthocInputError
from posthoc.report.html import Section


def sequence_effects_section(judgements: pd.DataFrame) -> Section | None:
    """The seed 004 section for a study's judgements, or None when there is too little to fit."""
    from posthoc.sequence import audit_orders, lag1_by_subset, lag1_by_tertile, sequence_table_from_judgements
    from posthoc.sequence.report import sequence_section

    if judgements.empty or judgements["worker"].nunique() < 2:
        return None
    try:
        table = sequence_table_from_judgements(judgements)
    except PosthocInputError:
        return None
    if len(table) < 10:
        return None
    served = judgements.drop_duplicates(["worker", "task_key"])[["worker", "task_key", "position", "created_at"]]
    audit = audit_orders(served.rename(columns={"task_key": "item"}))
    caveat = ("One row a judged annotation in the order the worker met them (task position, then text order); "
              "label: verified or not (control tasks left out); gold: the same system's verification rate on the "
              "dataset over the other workers (seed 004 footnote 1). Each worker's stream is one sequence, served "
              "in the planned order.")
    return sequence_section(lag1_by_subset(table), lag1_by_tertile(table), audit=audit, caveat=caveat)


def crowdtruth_section(judgements: pd.DataFrame) -> Section | None:
    """The seed 002 section when annotations have two judges or more, else None."""
    run = crowdtruth_run(judgements)
    return None if run is None else run.section


def crowdtruth_run(judgements: pd.DataFrame) -> Any:
    """CrowdTruth on verify / edit / remove with one unit per annotation, or None with fewer than two judges."""
    from posthoc.crowdtruth.io import judgements_from_posthoc
    from posthoc.crowdtruth.pipeline import run_crowdtruth

    if judgements.empty:
        return None
    # one unit an annotation (the manifest gives each judge's copy its own mention_id): seed 002's unit is
    # what several workers judged, here the same system's span and link in the same document
    key = judgements[["dataset", "doc_id", "system", "start", "end", "link"]].astype(str).agg("|".join, axis=1)
    try:
        table = judgements_from_posthoc(judgements.assign(mention_id=key))
    except PosthocInputError:
        return None
    if table.empty:
        return None
    return run_crowdtruth(table, annotation_vector=("verify", "edit", "remove"),
                          title="CrowdTruth disagreement metrics on verify / edit / remove")


def study_sections(judgements: pd.DataFrame) -> list[Section]:
    """Every extra section the study's judgements support, in report order."""
    sections = [sequence_effects_section(judgements), crowdtruth_section(judgements)]
    return [section for section in sections if section is not None]
