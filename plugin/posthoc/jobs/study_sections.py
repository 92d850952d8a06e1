"""Report sections that every scored study gets beside Figures 3-6, when its data allow them.

- Sequence effects (seed 004): the lag-1 model on each worker's stream of *tasks* in served order (every
  annotation verified or not; the verify share), the same workers as the main metrics, and the order audit
  (planned position against ``created_at``). Needs two workers or more.
- CrowdTruth (seed 002): disagreement metrics on verify / edit / remove, when annotations have two judges or
  more (an agreement sub-study, k > 1).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict
from typing import TYPE_CHECKING

import pandas as pd

from posthoc.errors import PosthocInputError
from posthoc.html import Section

if TYPE_CHECKING:
    from posthoc.crowdtruth.pipeline import CrowdTruthRun


def sequence_effects_section(judgements: pd.DataFrame, *, exclude_workers: Iterable[str] = ()) -> Section | None:
    """The paper 004 section for a study's judgements, or None when there is too little to fit.

    One row a task in the worker's served order (:mod:`posthoc.sequence.study`); the binary label "every
    pre-filled annotation verified" gives the main tables, the continuous verify share one more table.
    ``exclude_workers``: the workers the main metrics excluded (failed control task), left out here too.
    """
    from posthoc.sequence import audit_orders, lag1_by_subset, lag1_by_tertile, sequence_table_from_judgements
    from posthoc.sequence.lag_model import worker_subsets
    from posthoc.sequence.randomisation import order_randomisation_test
    from posthoc.sequence.report import sequence_section

    excluded = sorted({str(w) for w in exclude_workers})
    kept = judgements[~judgements["worker"].astype(str).isin(excluded)] if excluded else judgements
    if kept.empty or kept["worker"].nunique() < 2:
        return None
    try:
        table = sequence_table_from_judgements(kept)
        shares = sequence_table_from_judgements(kept, label="verify_share")
    except PosthocInputError:
        return None
    if len(table) < 10:
        return None
    served = kept.drop_duplicates(["worker", "task_key"])[["worker", "task_key", "position", "created_at"]]
    audit = audit_orders(served.rename(columns={"task_key": "item"}))
    subsets = worker_subsets(table)
    share_subsets = worker_subsets(shares)
    counts = ", ".join(f"{name} {len(subsets[name])}" for name in ("all", "moderate", "good", "bad"))
    share_counts = ", ".join(f"{name} {len(share_subsets[name])}" for name in ("good", "bad"))
    definitions = (
        "Items are tasks: one row a task in the order the worker was served it (control tasks left out; regions "
        "of one task are judged together, so they are never consecutive items). Label: 1 when every pre-filled "
        "annotation of the task was verified, else 0 (logistic); the last table uses the task's share of "
        "verified annotations instead (linear). Gold: the same item's label from the other workers who judged "
        "it, or, when nobody else did, the rate of the same system on the same dataset over the other workers "
        "(paper 004 footnote 1), so it holds nothing of the current judgement. Worker subsets (paper 004 "
        "section 3.1): all; moderate, without workers whose every task had the same outcome (for example "
        "verifying everything); good, workers whose task outcome matched the gold rounded to 0 or 1 in at least "
        f"60% of their tasks; bad, the other workers with gold. Workers: {counts}. For the share of verified "
        "annotations (the last table) good and bad follow paper 004 section 3.2, a correlation with the gold above "
        f"0.5: {share_counts}."
    )
    if excluded:
        definitions += (f" Left out, as in the main metrics: {len(excluded)} worker(s) who failed their control "
                        f"task ({', '.join(excluded)}).")
    caveat = "Each worker's stream is one sequence, served in the planned order (one project a worker)."
    tests = pd.DataFrame([{"label": name, **asdict(order_randomisation_test(labels))}
                          for name, labels in (("all_verified", table), ("verify_share", shares))])
    return sequence_section(lag1_by_subset(table), lag1_by_tertile(table), audit=audit, caveat=caveat,
                            definitions=definitions, order_tests=tests,
                            extra_tables=[(lag1_by_subset(shares), "b1 per worker subset, label = the task's "
                                                                   "share of verified annotations (linear)")])


def crowdtruth_section(judgements: pd.DataFrame) -> Section | None:
    """The seed 002 section when annotations have two judges or more, else None."""
    run = crowdtruth_run(judgements)
    return None if run is None else run.section


def crowdtruth_run(judgements: pd.DataFrame) -> CrowdTruthRun | None:
    """CrowdTruth on verify / edit / remove with one unit per annotation, or None with fewer than two judges."""
    from posthoc.crowdtruth.io import judgements_from_posthoc
    from posthoc.crowdtruth.pipeline import run_crowdtruth

    if judgements.empty:
        return None
    # one unit an annotation (the manifest gives each judge's copy its own mention_id): seed 002's unit is
    # what several workers judged, here the same system's span and link in the same document
    key = judgements["dataset"].astype(str)  # vectorised: a row-wise join took 6.6 s at 29,696 judgements
    for column in ("doc_id", "system", "start", "end", "link"):
        key = key + "|" + judgements[column].astype(str)
    try:
        table = judgements_from_posthoc(judgements.assign(mention_id=key))
    except PosthocInputError:
        return None
    if table.empty:
        return None
    return run_crowdtruth(table, annotation_vector=("verify", "edit", "remove"),
                          title="CrowdTruth disagreement metrics on verify / edit / remove")


def study_sections(judgements: pd.DataFrame, *, exclude_workers: Iterable[str] = ()) -> list[Section]:
    """Every extra section the study's judgements support, in report order (``exclude_workers``: see
    :func:`sequence_effects_section`)."""
    sections = [sequence_effects_section(judgements, exclude_workers=exclude_workers), crowdtruth_section(judgements)]
    return [section for section in sections if section is not None]
