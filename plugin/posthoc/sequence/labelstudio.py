"""Sequence tables from Label Studio exports of rating projects (``label_configs/rating.xml``).

A rating study follows the same design as a verification study: one project per worker, tasks imported in
that worker's own seeded order, so the order served is the import order. Task data carries ``item`` (what
is rated), optionally ``position`` (the planned 0-based place) and ``gold``; without ``position`` the rank
of the task id within its project (import order) is used.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from posthoc.errors import PosthocInputError
from posthoc.labelstudio import records as ls
from posthoc.sequence.table import validate_sequence_table


def _worker(annotation: ls.Annotation) -> str:
    who = ls.completed_by(annotation)
    return str(ls.user_email(who) or ls.user_id(who))


def sequence_table_from_rating_export(tasks: Iterable[ls.Task], *, from_name: str = "score",
                                      source: str = "export") -> pd.DataFrame:
    """Flatten an exported JSON list of tasks into the sequence table (one row per submitted annotation).

    Cancelled (skipped) annotations and annotations without a ``from_name`` number are left out; a task with
    no ``item`` in its data is an error naming the task id.

    Examples:
        Two rated tasks of project 5 listed out of order, with no ``position``: the rank of the task id within the
        project gives it (task 11 first, 0; task 12, 1). A task without ``item`` is refused.

        >>> from posthoc.sequence.labelstudio import sequence_table_from_rating_export
        >>> def task(task_id, item, score):
        ...     rating = {"from_name": "score", "type": "number", "value": {"number": score}}
        ...     return {"id": task_id, "project": 5, "data": {"item": item}, "annotations": [
        ...         {"id": task_id, "completed_by": {"id": 2, "email": "ann@example.org"}, "result": [rating]}]}
        >>> table = sequence_table_from_rating_export([task(12, "b", 2), task(11, "a", 4)])
        >>> table[["worker", "sequence", "item", "position", "label"]]
                    worker sequence item  position  label
        0  ann@example.org        5    a         0    4.0
        1  ann@example.org        5    b         1    2.0
        >>> sequence_table_from_rating_export([{"id": 9, "data": {}}])
        Traceback (most recent call last):
        ...
        posthoc.errors.PosthocInputError: export: task 9 has no 'item' in its data
    """
    rows = []
    for task in tasks:
        data = ls.task_data(task)
        if "item" not in data:
            raise PosthocInputError(f"{source}: task {ls.record_id(task)} has no 'item' in its data")
        for annotation in ls.task_annotations(task):
            if ls.was_cancelled(annotation):
                continue
            numbers = [r for r in ls.result_items(annotation) if ls.region_from_name(r) == from_name]
            if not numbers:
                continue
            value = ls.region_number(numbers[0])
            if value is None:
                raise PosthocInputError(f"{source}: task {ls.record_id(task)} annotation {ls.record_id(annotation)} "
                                        f"has no number in {from_name!r}")
            rows.append({
                "worker": _worker(annotation), "sequence": str(ls.task_project(task, "")),
                "item": str(data["item"]), "task_id": ls.int_id(task),
                "position": data.get("position"), "label": float(value),
                "gold": data.get("gold", np.nan), "created_at": ls.created_at(annotation),
            })
    frame = pd.DataFrame(rows, columns=["worker", "sequence", "item", "task_id", "position", "label", "gold",
                                        "created_at"])
    if frame.empty:
        raise PosthocInputError(f"{source}: no submitted ratings in {from_name!r}")
    rank = frame.groupby(["worker", "sequence"])["task_id"].rank(method="first").astype(int) - 1
    frame["position"] = frame["position"].where(frame["position"].notna(), rank)
    table = validate_sequence_table(frame, source=source)
    created = frame.set_index(["worker", "sequence", "item"])["created_at"]
    table["created_at"] = created.reindex(pd.MultiIndex.from_frame(table[["worker", "sequence", "item"]])).to_numpy()
    return table
