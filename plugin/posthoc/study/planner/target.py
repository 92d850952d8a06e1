"""The smallest plan that reaches a target half-width: documents (a seeded sample) and judges.

Every figure of a cell depends only on its own dataset's documents (precision and recall are per
dataset and system, the verification union and the agreement per dataset), so each dataset is
searched on its own: the sample of ``n`` documents of a dataset is the first ``n`` in a seeded random
order (:func:`posthoc.study.planner.replicates.document_order`), and ``n`` is bisected until every cell of the
dataset has its expected half-width (:mod:`posthoc.study.planner.replicates`, the same runs and seed at every
step) at or under the target, to within 1% of the dataset's documents, never under 10 documents
(fewer make a bootstrap over documents meaningless). A dataset whose cells miss the
target with all its documents keeps all of them and is reported as not reached.

For a plan with k > 1 each number of judges from 2 to ``max_judges`` is searched (the agreement
figures need two judges or more); the plan with the fewest annotator-hours wins. Counts, hours and
cost of a sample come from :func:`posthoc.study.planner.counts.subset_counts` (no new plan is made).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from posthoc.arrays import Bools, Floats, Ints
from posthoc.study.plan.design import StudyPlan
from posthoc.study.planner.counts import hours, item_table, subset_counts
from posthoc.study.planner.rates import OutcomeRates
from posthoc.study.planner.replicates import document_order, replicate_study
from posthoc.study.planner.shape import StudyShape

if TYPE_CHECKING:
    from tqdm import tqdm

#: the smallest sample of a dataset (unless it has fewer documents)
MIN_DOCUMENTS = 10


def _widest(shape: StudyShape, rates: OutcomeRates, selected: Bools, *, runs: int, seed: int) -> Floats:
    """The widest expected half-width of each dataset's cells on the selected documents (NaN as infinite)."""
    summary = replicate_study(shape, rates, runs=runs, seed=seed, selected=selected).summary()
    widths = summary["halfwidth"].fillna(np.inf)
    per_dataset = widths.groupby(summary["dataset"].astype(str)).max()
    return per_dataset.reindex(list(shape.datasets)).fillna(np.inf).to_numpy()


def _search_documents(shape: StudyShape, rates: OutcomeRates, rank: Ints, target: float, *, runs: int,
                      seed: int, progress: tqdm[None]) -> tuple[Ints, Bools, Floats]:
    """Per dataset: documents needed, whether the target is reached, and the widest half-width there."""
    sizes = np.bincount(shape.doc_dataset, minlength=len(shape.datasets))

    def select(n: Ints) -> Bools:
        return rank < n[shape.doc_dataset]

    full = _widest(shape, rates, select(sizes), runs=runs, seed=seed)
    progress.update(1)
    reached = full <= target
    # fewer than MIN_DOCUMENTS documents make a bootstrap interval over documents meaningless
    low = np.minimum(sizes, MIN_DOCUMENTS) - 1
    high = sizes.copy()  # passes where reached
    widest = full.copy()
    tolerance = np.maximum(1, np.ceil(0.01 * sizes)).astype(np.int64)
    while True:
        open_ = reached & (high - low > tolerance)
        if not open_.any():
            break
        middle = np.where(open_, (low + high) // 2, high)
        widths = _widest(shape, rates, select(middle), runs=runs, seed=seed)
        progress.update(1)
        passed = widths <= target
        high = np.where(open_ & passed, middle, high)
        widest = np.where(open_ & passed, widths, widest)
        low = np.where(open_ & ~passed, middle, low)
    return np.where(reached, high, sizes), reached, widest


def smallest_plan(plan: StudyPlan, shape: StudyShape, rates: OutcomeRates, *, target: float, runs: int, seed: int,
                  max_judges: int, seconds_per_region: float, hourly_rate: float,
                  progress: bool = False) -> dict[str, Any]:
    """The smallest plan under ``target`` (module docstring): a JSON-ready record.

    ``candidates``: one entry per number of judges tried (documents per dataset, counts, hours, cost,
    whether every dataset reached the target, the widest cell); ``best``: the candidate reaching the
    target with the fewest hours, or None; ``sample``: the sampled documents of ``best`` (dataset, doc_id).
    """
    from tqdm import tqdm

    judges = [plan.config.k] if plan.config.k == 1 else list(range(2, max(max_judges, 2) + 1))
    rank = document_order(shape, seed)
    items = item_table(plan)
    doc_index = pd.MultiIndex.from_frame(shape.doc_keys.astype(str))
    item_doc = doc_index.get_indexer(pd.MultiIndex.from_frame(items[["dataset", "doc_id"]].astype(str)))
    candidates: list[dict[str, Any]] = []
    samples: dict[int, Bools] = {}
    with tqdm(desc="target search", unit=" step", disable=not progress, leave=False) as bar:
        for k in judges:
            variant = shape.with_judges(k)
            needed, reached, widest = _search_documents(variant, rates, rank, target, runs=runs, seed=seed,
                                                        progress=bar)
            selected = rank < needed[shape.doc_dataset]
            chosen = items.loc[(item_doc >= 0) & selected[np.maximum(item_doc, 0)]]
            counts = subset_counts(chosen, plan.config, k=k)
            regions = counts["regions"] + counts["control_regions"]
            spent = hours(regions, seconds_per_region)
            samples[k] = selected
            candidates.append({
                **counts, "hours": spent, "cost": spent * hourly_rate, "reached": bool(reached.all()),
                "widest": float(np.max(widest)) if len(widest) else math.nan,
                "datasets": [{"dataset": d, "documents": int(n), "of": int(total), "reached": bool(r),
                              "widest": float(w)}
                             for d, n, total, r, w in zip(shape.datasets, needed,
                                                          np.bincount(shape.doc_dataset,
                                                                      minlength=len(shape.datasets)),
                                                          reached, widest, strict=True)],
            })
    winners = [c for c in candidates if c["reached"]]
    best = min(winners, key=lambda c: (c["hours"], c["k"])) if winners else None
    sample = []
    if best is not None:
        keys = shape.doc_keys.loc[samples[best["k"]]]
        sample = [[str(d), str(i)] for d, i in zip(keys["dataset"], keys["doc_id"], strict=True)]
    return {"target": target, "seed": seed, "judges_tried": judges, "candidates": candidates, "best": best,
            "widest_at_full": min((c["widest"] for c in candidates), default=math.nan), "sample": sample,
            "sample_rule": "per dataset, the first n documents in the seeded order of "
                           "posthoc.study.planner.replicates.document_order(shape, seed)"}
