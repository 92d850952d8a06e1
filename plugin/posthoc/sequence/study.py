"""A posthoc study's judgements as a sequence table at the *task* level (seed 004 section 2 on seed 000's design).

An annotator sees every pre-filled region of a task at once and decides them together; neighbouring regions of
one chunk share its difficulty and its system, so treating them as consecutive items would read their
correlation as an order effect. The unit of order is therefore the task: one row a task, in the order the
worker was served (``position``, the planned place in their own project; a control task between two tasks is
left out, so the previous item is the last real task before it). Regions of one task are never consecutive
items.

Labels (``label=``):

``all_verified`` (default, binary, logistic model)
    1 when every pre-filled annotation of the task was verified, else 0.
``verify_share`` (continuous, linear model)
    the share of the task's annotations verified.

Item control (``gold``), which leaks nothing of the current judgement (seed 004 footnote 1 uses the mean of
other workers as a proxy for expert labels):

* when other workers judged the same item (``item_id``: chunk x system, k > 1), the mean of their labels;
* otherwise the mean label of the same system on the same dataset (the cell) over the *other* workers' tasks.

The current worker's own labels never enter their gold; the worker-bias control of the lag model is the
worker's mean over their other tasks (:mod:`posthoc.sequence.lag_model`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

import numpy as np
import pandas as pd

from posthoc.arrays import Floats
from posthoc.errors import PosthocInputError
from posthoc.sequence.table import Sequences, validate_sequence_table
from posthoc.tables import Judgements, require_columns

TASK_LABELS: Final = ("all_verified", "verify_share")
_NEEDED: Final = ("worker", "task_key", "position", "outcome", "dataset", "system", "is_control")


def _leave_own_out(sums: pd.Series, counts: pd.Series, own_sums: pd.Series, own_counts: pd.Series) -> Floats:
    other = counts - own_counts
    return np.where(other > 0, (sums - own_sums) / other.where(other > 0, 1), np.nan)


def task_outcomes(judgements: Judgements, *, include_controls: bool = False,
                  exclude_workers: Iterable[str] = ()) -> pd.DataFrame:
    """One row a (worker, task): ``worker, task_key, item, position, dataset, system, n, n_verified,
    all_verified, verify_share``, sorted by worker and position.

    ``item`` is ``item_id`` (chunk x system) when the judgements have it, else the task key. Control tasks are
    left out unless ``include_controls``; ``exclude_workers`` (for example the workers the main metrics
    excluded for failing their control task) are left out.

    Examples:
        Two workers, two tasks of two regions each: w1 verified both regions of t1 and one of t2; w2 both of t2
        and none of t1.

        >>> import pandas as pd
        >>> from posthoc.sequence import task_outcomes
        >>> rows = [("w1", "t1", 0, "verify"), ("w1", "t1", 0, "verify"), ("w1", "t2", 1, "verify"),
        ...         ("w1", "t2", 1, "remove"), ("w2", "t2", 0, "verify"), ("w2", "t2", 0, "verify"),
        ...         ("w2", "t1", 1, "remove"), ("w2", "t1", 1, "edit")]
        >>> judgements = pd.DataFrame(rows, columns=["worker", "task_key", "position", "outcome"]).assign(
        ...     dataset="d", system="A", is_control=False)
        >>> tasks = task_outcomes(judgements)
        >>> tasks[["worker", "task_key", "position", "n", "n_verified", "all_verified", "verify_share"]]
          worker task_key  position  n  n_verified  all_verified  verify_share
        0     w1       t1         0  2         2.0           1.0           1.0
        1     w1       t2         1  2         1.0           0.0           0.5
        2     w2       t2         0  2         2.0           1.0           1.0
        3     w2       t1         1  2         0.0           0.0           0.0
    """
    require_columns(judgements, _NEEDED, message="judgements table lacks column(s) {missing}")
    rows = judgements if include_controls else judgements[~judgements["is_control"].astype(bool)]
    excluded = {str(w) for w in exclude_workers}
    if excluded:
        rows = rows[~rows["worker"].astype(str).isin(excluded)]
    item = rows["item_id"] if "item_id" in rows.columns else rows["task_key"]
    rows = rows.assign(verified=(rows["outcome"] == "verify").astype(float), item=item.astype(str),
                       worker=rows["worker"].astype(str), task_key=rows["task_key"].astype(str))
    tasks = (
        rows.groupby(["worker", "task_key", "item", "position", "dataset", "system"], as_index=False, observed=True,
                     sort=False)
        .agg(n=("verified", "size"), n_verified=("verified", "sum"))
    )
    tasks["all_verified"] = (tasks["n_verified"] == tasks["n"]).astype(float)
    tasks["verify_share"] = tasks["n_verified"] / tasks["n"]
    return tasks.sort_values(["worker", "position"], kind="mergesort").reset_index(drop=True)


def sequence_table_from_judgements(judgements: Judgements, *, label: str = "all_verified",
                                   include_controls: bool = False,
                                   exclude_workers: Iterable[str] = ()) -> Sequences:
    """The task-level sequence table of a posthoc study (see the module docstring).

    Columns of :data:`~posthoc.sequence.table.SEQUENCE_COLUMNS`; one sequence a worker (one project each,
    served in the planned order). ``label``: ``all_verified`` or ``verify_share``.

    Examples:
        The judgements of :func:`task_outcomes`' example: each task's gold is the other worker's label on it
        (w1's t1 gets w2's 0, w2's t1 gets w1's 1).

        >>> import pandas as pd
        >>> from posthoc.sequence import sequence_table_from_judgements
        >>> rows = [("w1", "t1", 0, "verify"), ("w1", "t1", 0, "verify"), ("w1", "t2", 1, "verify"),
        ...         ("w1", "t2", 1, "remove"), ("w2", "t2", 0, "verify"), ("w2", "t2", 0, "verify"),
        ...         ("w2", "t1", 1, "remove"), ("w2", "t1", 1, "edit")]
        >>> judgements = pd.DataFrame(rows, columns=["worker", "task_key", "position", "outcome"]).assign(
        ...     dataset="d", system="A", is_control=False)
        >>> sequence_table_from_judgements(judgements)
          worker sequence item  position  label  gold
        0     w1       w1   t1         0    1.0   0.0
        1     w1       w1   t2         1    0.0   1.0
        2     w2       w2   t2         0    1.0   0.0
        3     w2       w2   t1         1    0.0   1.0
    """
    if label not in TASK_LABELS:
        raise PosthocInputError(f"label must be one of {', '.join(TASK_LABELS)}, not {label!r}")
    tasks = task_outcomes(judgements, include_controls=include_controls, exclude_workers=exclude_workers)
    value = tasks[label]
    tasks = tasks.assign(value=value, one=1.0)
    by_item = tasks.groupby("item")[["value", "one"]].transform("sum")
    own_item = tasks.groupby(["item", "worker"])[["value", "one"]].transform("sum")
    item_gold = _leave_own_out(by_item["value"], by_item["one"], own_item["value"], own_item["one"])
    cell = ["dataset", "system"]
    by_cell = tasks.groupby(cell, observed=True)[["value", "one"]].transform("sum")
    own_cell = tasks.groupby([*cell, "worker"], observed=True)[["value", "one"]].transform("sum")
    cell_gold = _leave_own_out(by_cell["value"], by_cell["one"], own_cell["value"], own_cell["one"])
    table = pd.DataFrame({
        "worker": tasks["worker"].to_numpy(),
        "sequence": tasks["worker"].to_numpy(),
        "item": tasks["item"].to_numpy(),
        "position": tasks["position"].to_numpy(),
        "label": value.to_numpy(dtype=float),
        "gold": np.where(np.isnan(item_gold), cell_gold, item_gold),
    })
    return validate_sequence_table(table, source="judgements table")
