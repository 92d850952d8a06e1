"""What a plan asks of its annotators: tasks, regions to judge, workers, control tasks, and their hours.

:func:`plan_counts` reads a :class:`~posthoc.study.plan.design.StudyPlan`; :func:`subset_counts` gives the
same figures for the plan cut to some of its documents and another number of judges ``k`` without
planning again, by the rules of :mod:`posthoc.study.plan.design` (workers: ``n_workers`` or one batch a
worker, never fewer than a chunk's slots; loads within one task; batches of ``tasks_per_batch - 1``
real tasks plus one control task of three annotations). A test checks both against ``plan_study``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from posthoc.study.plan.config import StudyConfig
from posthoc.study.plan.design import StudyPlan

CONTROL_ANNOTATIONS = 3


def plan_counts(plan: StudyPlan) -> dict[str, Any]:
    """``documents, items, tasks, real_tasks, control_tasks, regions, control_regions, workers`` and the
    per-worker spread (``tasks_per_worker_min/max``, ``regions_per_worker_min/max``) of a plan."""
    tasks = plan.tasks
    regions = plan.prefill.groupby("task_key", sort=False).size()
    per_task = regions.reindex(tasks["task_key"]).fillna(0).to_numpy(dtype=np.int64)
    control = tasks["is_control"].to_numpy(dtype=bool)
    by_worker = pd.DataFrame({"worker": tasks["worker"].to_numpy(), "regions": per_task}).groupby("worker")
    per_worker_regions = by_worker["regions"].sum()
    per_worker_tasks = by_worker.size()
    return {
        "documents": len(plan.documents),
        "datasets": int(plan.documents["dataset"].nunique()),
        "systems": sorted(map(str, plan.summary.get("systems", []))),
        "k": int(plan.config.k),
        "items": int(plan.summary.get("items", 0)),
        "tasks": len(tasks),
        "real_tasks": int((~control).sum()),
        "control_tasks": int(control.sum()),
        "regions": int(per_task[~control].sum()),
        "control_regions": int(per_task[control].sum()),
        "workers": len(plan.workers),
        "tasks_per_worker_min": int(per_worker_tasks.min()),
        "tasks_per_worker_max": int(per_worker_tasks.max()),
        "regions_per_worker_min": int(per_worker_regions.min()),
        "regions_per_worker_max": int(per_worker_regions.max()),
    }


def regions_by_worker(plan: StudyPlan, *, exclude_tasks: frozenset[str] = frozenset()) -> pd.Series:
    """Regions (pre-filled annotations, control ones included) each worker has to judge, by worker id."""
    tasks = plan.tasks.loc[~plan.tasks["task_key"].isin(exclude_tasks)]
    regions = plan.prefill.groupby("task_key", sort=False).size()
    per_task = regions.reindex(tasks["task_key"]).fillna(0).to_numpy(dtype=np.int64)
    counted = pd.Series(per_task, index=tasks["worker"].to_numpy()).groupby(level=0).sum()
    return counted.reindex(list(plan.workers), fill_value=0).astype("int64")


def item_table(plan: StudyPlan) -> pd.DataFrame:
    """Real items with their document: ``dataset, doc_id, chunk_id, system, n_mentions``."""
    items = plan.items.loc[~plan.items["is_control"].astype(bool)]
    chunks = plan.chunks[["chunk_id", "dataset", "doc_id"]]
    return items.merge(chunks, on="chunk_id", how="left")[["dataset", "doc_id", "chunk_id", "system", "n_mentions"]]


def subset_counts(items: pd.DataFrame, config: StudyConfig, *, k: int) -> dict[str, Any]:
    """Counts of a plan over ``items`` (rows of :func:`item_table`) with ``k`` judges an item."""
    n_items = len(items)
    n_slots = n_items * k
    need = int(items.groupby("chunk_id").size().max()) * k if n_items else 0
    real_per_batch = config.real_tasks_per_batch
    workers = config.n_workers if config.n_workers is not None else max(need, math.ceil(n_slots / real_per_batch))
    workers = max(1, min(workers, max(n_slots, 1)))
    low, extra = divmod(n_slots, workers)
    batches_low = max(1, math.ceil(low / real_per_batch)) if low else 1
    batches_high = max(1, math.ceil((low + 1) / real_per_batch))
    controls = (extra * batches_high + (workers - extra) * batches_low) if config.control_tasks else 0
    regions = int(items["n_mentions"].sum()) * k
    return {
        "documents": int(items[["dataset", "doc_id"]].drop_duplicates().shape[0]),
        "k": k,
        "items": n_items,
        "tasks": n_slots + controls,
        "real_tasks": n_slots,
        "control_tasks": controls,
        "regions": regions,
        "control_regions": CONTROL_ANNOTATIONS * controls,
        "workers": workers,
    }


def hours(regions: float, seconds_per_region: float) -> float:
    """Annotator-hours for ``regions`` judged regions at ``seconds_per_region``."""
    return regions * seconds_per_region / 3600.0
