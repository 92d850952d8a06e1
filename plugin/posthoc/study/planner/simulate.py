"""Simulated judgements of a planned study: what the export of a real run would hold, with known truth.

:func:`plan_judgements` is the judgements table (:data:`posthoc.tables.JUDGEMENT_COLUMNS`) a plan
would give, every outcome still open; :func:`simulate_judgements` fills it in with seeded judges who
follow :class:`~posthoc.study.planner.rates.OutcomeRates` (the consistency model: a judge gives the
annotation's latent outcome with probability ``a``, else a draw from the cell's shares) and take
:class:`TaskTime` seconds a task. Control annotations get their expected outcome with probability
``control_accuracy``. Used by the planner's validity checks, the tests and the benches.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pandas as pd

from posthoc.arrays import Floats, Ints
from posthoc.study.plan.design import StudyPlan
from posthoc.study.plan.keys import stream_rng
from posthoc.study.planner.rates import OutcomeRates
from posthoc.tables import JUDGEMENT_COLUMNS, OUTCOMES

_OUTCOMES = np.array(OUTCOMES, dtype=object)


@dataclass(frozen=True)
class TaskTime:
    """Seconds a task: ``worker speed x (overhead + per_region x regions) x noise``.

    Worker speed and task noise are log-normal with median 1 and log-sd ``worker_sd`` / ``task_sd``.
    The defaults make a 4-region task about 60 s, near paper 000's 15 s a region (section 2.1).
    """

    overhead: float = 12.0
    per_region: float = 12.0
    worker_sd: float = 0.35
    task_sd: float = 0.4


def plan_judgements(plan: StudyPlan) -> pd.DataFrame:
    """Every judgement the plan asks for (control annotations included), outcome and time still empty.

    One row per pre-filled region of every task, in worker, position and text order; ``start`` /
    ``end`` are document offsets, as the export gives them.
    """
    tasks = plan.tasks
    joined = plan.prefill.merge(tasks, on="task_key", how="left", validate="many_to_one")
    joined = joined.sort_values(["worker", "position", "start", "end"], kind="stable").reset_index(drop=True)
    frame = pd.DataFrame({
        "study": plan.config.name,
        "dataset": joined["dataset"].to_numpy(dtype=object),
        "doc_id": joined["doc_id"].to_numpy(dtype=object),
        "chunk_id": joined["chunk_id"].to_numpy(dtype=object),
        "item_id": joined["item_id"].to_numpy(dtype=object),
        "task_key": joined["task_key"].to_numpy(dtype=object),
        "mention_id": joined["mention_id"].to_numpy(dtype=object),
        "system": joined["system"].to_numpy(dtype=object),
        "start": joined["doc_start"].astype("int64").to_numpy(),
        "end": joined["doc_end"].astype("int64").to_numpy(),
        "surface": joined["surface"].to_numpy(dtype=object),
        "link": joined["link"].astype(object).where(joined["link"].notna(), "").to_numpy(dtype=object),
        "worker": joined["worker"].to_numpy(dtype=object),
        "outcome": None,
        "new_link": None,
        "deleted_region": False,
        "position": joined["position"].astype("int64").to_numpy(),
        "created_at": None,
        "lead_time": np.nan,
        "is_control": joined["is_control"].astype(bool).to_numpy(),
        "expected_outcome": joined["expected_outcome"].to_numpy(dtype=object),
    })
    frame["batch"] = joined["batch"].astype("int64").to_numpy()
    return frame[[*JUDGEMENT_COLUMNS, "batch"]]


def draw_outcomes(shares: Floats, annotation: Ints, consistency: float,
                  rng: np.random.Generator) -> npt.NDArray[np.int8]:
    """Outcome codes (0 verify, 1 edit, 2 remove) of judgements: ``shares`` ``(n, 3)`` per judgement,
    ``annotation`` the index of the annotation each judges (judges of one annotation share its latent)."""
    n = len(annotation)
    cumulative = np.cumsum(shares, axis=1)
    own = (rng.random(n)[:, None] > cumulative[:, :2]).sum(axis=1)
    n_annotations = int(annotation.max()) + 1 if n else 0
    first = np.full(n_annotations, n, dtype=np.int64)
    np.minimum.at(first, annotation, np.arange(n))
    latent_u = rng.random(n_annotations)
    latent = (latent_u[annotation][:, None] > cumulative[first[annotation]][:, :2]).sum(axis=1)
    copy = rng.random(n) < consistency
    return np.where(copy, latent, own).astype(np.int8)


def simulate_judgements(plan: StudyPlan, rates: OutcomeRates | None = None, *, seed: int = 0,
                        time: TaskTime | None = None, control_accuracy: float = 1.0) -> pd.DataFrame:
    """The judgements table of the whole planned study, simulated (seeded by ``seed``).

    Columns :data:`posthoc.tables.JUDGEMENT_COLUMNS` plus ``batch`` (the task's batch in the worker's
    sequence, for cutting a pilot). Edits get ``new_link`` = link + ``_(edited)``; ``lead_time`` is the
    task's seconds on each of its regions (as Label Studio exports it).
    """
    rates = rates or OutcomeRates()
    time = time or TaskTime()
    frame = plan_judgements(plan)
    rng = stream_rng(seed, "simulate-judgements")
    control = frame["is_control"].to_numpy(dtype=bool)
    keys = ["dataset", "doc_id", "system", "start", "end", "link"]
    # pandas-stubs: integer[Any] for ngroup's int64
    annotation: Ints = frame.groupby(keys, sort=False).ngroup().to_numpy()  # type: ignore[assignment]
    shares = rates.shares_for(frame["dataset"].to_numpy(), frame["system"].to_numpy())
    codes = draw_outcomes(shares, annotation, rates.consistency, rng)
    outcome = _OUTCOMES[codes]
    expected = frame["expected_outcome"].to_numpy(dtype=object)
    right = rng.random(len(frame)) < control_accuracy
    outcome = np.where(control & right, expected, outcome)
    frame["outcome"] = outcome
    edited = (frame["link"].astype(str) + "_(edited)").to_numpy(dtype=object)
    frame["new_link"] = pd.Series(edited).where(outcome == "edit", None).to_numpy(dtype=object)
    workers, worker_code = np.unique(frame["worker"].to_numpy(dtype=str), return_inverse=True)
    speed = np.exp(rng.normal(0.0, time.worker_sd, len(workers)))
    task_code, task_index = pd.factorize(frame["task_key"])
    regions = np.bincount(task_code)
    task_worker = np.zeros(len(task_index), dtype=np.int64)
    task_worker[task_code] = worker_code
    seconds = speed[task_worker] * (time.overhead + time.per_region * regions) * np.exp(
        rng.normal(0.0, time.task_sd, len(task_index)))
    frame["lead_time"] = np.round(seconds[task_code], 3)
    frame["created_at"] = "2026-01-01T00:00:00Z"
    return frame
