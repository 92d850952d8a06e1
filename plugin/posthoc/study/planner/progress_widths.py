"""Stop now or go on: per cell, the half-width a study has reached and the one the rest of its plan would bring.

:func:`cell_widths` takes the plan (the manifest's pre-filled annotations, :func:`planned_judgements`), the
judgements so far (the score job's judgements table) and the score's rates table, and gives one row per
dataset x system cell and headline rate (posthoc precision and recall, paper 000 section 3.2, Figure 3):

* ``items_planned``: the cell's real items (chunk x system) with something to judge; ``k`` the judges an item;
  ``items_judged_k`` / ``items_judged_any``: items judged by ``k`` workers / by at least one, counting only
  workers who passed their control tasks (the ones the rates count);
* ``value`` and ``halfwidth_now``: the rate and half the width of its 95% interval in the score's rates table
  (``(high - low) / 2``, the bootstrap interval over documents of paper 000 section 4, Figure 3: "95% confidence
  intervals drawn from 1000 bootstrap samples of the data"; the same reading as the report's Plan against outcome
  section). Nothing new is computed: with ``--resamples 0`` it is empty;
* ``halfwidth_end``: the half-width expected when the whole plan is judged, at the rates observed so far: the
  planner's own prediction (:func:`posthoc.study.planner.rates.rates_from_pilot` on the judgements so far, each
  cell's shares shrunk towards the pooled ones, then the exact delta-method sd of
  :func:`posthoc.study.planner.analytic.ratio_moments` on the plan's shape, times 1.96), i.e. what ``posthoc study
  estimate --pilot judgements.csv`` predicts for the plan;
* with a ``target`` half-width: ``met_now``, ``met_end`` and ``advice`` (``stop: target met``, ``go on: the plan
  meets it``, ``extend: the plan falls short``).

Pure: tables in, a table out (:data:`WIDTH_COLUMNS`); :func:`widths_summary` is its JSON-ready form.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any, Final

import pandas as pd

from posthoc.arrays import Bools
from posthoc.errors import PosthocInputError
from posthoc.tables import require_columns

HEADLINE_METRICS: Final = ("posthoc_precision", "posthoc_recall")
WIDTH_COLUMNS: Final = ["dataset", "system", "metric", "k", "items_planned", "items_judged_k", "items_judged_any",
                        "value", "halfwidth_now", "halfwidth_end", "target", "met_now", "met_end", "advice"]
PLANNED_NEEDS: Final = ("dataset", "doc_id", "system", "item_id", "worker", "is_control", "doc_start", "doc_end",
                        "link")
JUDGED_NEEDS: Final = ("dataset", "system", "item_id", "worker", "outcome", "is_control")
ADVICE: Final = {"now": "stop: target met", "end": "go on: the plan meets it", "short": "extend: the plan falls short"}


def _flag(values: pd.Series) -> Bools:
    """A control flag column as booleans (True, "True", "true", 1)."""
    return values.astype(str).str.lower().isin(["true", "1"]).to_numpy()


def planned_judgements(mentions: pd.DataFrame) -> pd.DataFrame:
    """The judgements table the plan asks for, outcomes open, from the manifest's pre-filled annotations
    (:meth:`posthoc.study.plan.manifest.Manifest.mentions`): document offsets, a missing link as ``""`` (as
    :func:`posthoc.study.planner.simulate.plan_judgements` builds it from a plan), control rows dropped."""
    require_columns(mentions, PLANNED_NEEDS, message="the plan lacks column(s) {missing}")
    real = mentions.loc[~_flag(mentions["is_control"])]
    return pd.DataFrame({
        "dataset": real["dataset"].astype(str).to_numpy(), "doc_id": real["doc_id"].astype(str).to_numpy(),
        "system": real["system"].astype(str).to_numpy(), "item_id": real["item_id"].astype(str).to_numpy(),
        "start": real["doc_start"].astype("int64").to_numpy(), "end": real["doc_end"].astype("int64").to_numpy(),
        "link": real["link"].astype(object).where(real["link"].notna(), "").astype(str).to_numpy(),
        "worker": real["worker"].astype(str).to_numpy(), "outcome": None, "is_control": False,
    })


def _items(planned: pd.DataFrame, judged: pd.DataFrame, k: int) -> pd.DataFrame:
    """Per cell: items planned, judged by ``k`` workers and by at least one."""
    cell = ["dataset", "system"]
    plan = planned.groupby(cell)["item_id"].nunique().rename("items_planned")
    workers = judged.groupby([*cell, "item_id"])["worker"].nunique()
    counts = pd.DataFrame({"items_judged_k": (workers >= k).groupby(level=[0, 1]).sum(),
                           "items_judged_any": (workers >= 1).groupby(level=[0, 1]).sum()})
    table = pd.concat([plan, counts], axis=1).fillna(0).astype("int64").reset_index()
    return table.rename(columns={"level_0": "dataset", "level_1": "system"})


def _predicted(planned: pd.DataFrame, judged: pd.DataFrame, k: int) -> pd.DataFrame:
    """Per cell and headline rate, the expected 95% half-width when the whole plan is judged, at the rates so far."""
    from posthoc.study.planner.analytic import ratio_moments
    from posthoc.study.planner.rates import rates_from_pilot
    from posthoc.study.planner.replicates import Z95
    from posthoc.study.planner.shape import StudyShape

    if planned.empty:
        return pd.DataFrame(columns=["dataset", "system", "metric", "halfwidth_end"])
    rates = rates_from_pilot(judged)
    shape = StudyShape.from_judgements(planned, k=k)
    moments = ratio_moments(shape, shape.shares(rates)[:, 0], rates.consistency)
    cells = shape.cells.astype(str).reset_index(drop=True)
    return pd.concat([cells.assign(metric=metric, halfwidth_end=Z95 * moments[metric][1])
                      for metric in HEADLINE_METRICS], ignore_index=True)


def _advice(now: float, end: float, target: float | None) -> tuple[bool | None, bool | None, str]:
    if target is None:
        return None, None, ""
    met_now = bool(math.isfinite(now) and now <= target)
    met_end = bool(math.isfinite(end) and end <= target)
    return met_now, met_end, ADVICE["now"] if met_now else ADVICE["end"] if met_end else ADVICE["short"]


def cell_widths(planned: pd.DataFrame, judgements: pd.DataFrame, rates: pd.DataFrame, *, k: int,
                exclude_workers: Iterable[str] = (), target: float | None = None) -> pd.DataFrame:
    """One row per cell and headline rate (module docstring), columns :data:`WIDTH_COLUMNS`, sorted.

    ``planned``: :func:`planned_judgements`; ``judgements``: the judgements so far (control rows ignored);
    ``rates``: the score's rates table (``dataset, system, metric, value, low, high``); ``k``: judges an item;
    ``exclude_workers``: workers left out of the rates (failed control tasks); ``target``: a half-width (0-1).
    Raises :class:`PosthocInputError` for a missing column or a bad target.
    """
    if target is not None and not (math.isfinite(target) and 0 < target < 1):
        raise PosthocInputError(f"--target-halfwidth must be between 0 and 1 (e.g. 0.02), got {target!r}")
    require_columns(judgements, JUDGED_NEEDS, table="judgements")
    require_columns(rates, ("dataset", "system", "metric", "value", "low", "high"), table="rates")
    excluded = {str(w) for w in exclude_workers}
    keep = ~_flag(judgements["is_control"]) & ~judgements["worker"].astype(str).isin(excluded).to_numpy()
    judged = judgements.loc[keep].astype({"dataset": str, "system": str, "item_id": str, "worker": str})
    items = _items(planned, judged, k)
    headline = rates.loc[rates["metric"].isin(HEADLINE_METRICS)].astype({"dataset": str, "system": str,
                                                                        "metric": str})
    reached = headline.assign(halfwidth_now=(headline["high"] - headline["low"]) / 2)[
        ["dataset", "system", "metric", "value", "halfwidth_now"]]
    table = _predicted(planned, judged, k).merge(reached, on=["dataset", "system", "metric"], how="outer")
    table = table.merge(items, on=["dataset", "system"], how="left")
    for column in ("items_planned", "items_judged_k", "items_judged_any"):
        table[column] = table[column].fillna(0).astype("int64")
    table["k"] = int(k)
    table["target"] = float("nan") if target is None else float(target)
    flags = [_advice(float(n), float(e), target) for n, e in zip(table["halfwidth_now"].astype(float),
                                                                   table["halfwidth_end"].astype(float), strict=True)]
    table["met_now"] = pd.Series([f[0] for f in flags], index=table.index, dtype="boolean")
    table["met_end"] = pd.Series([f[1] for f in flags], index=table.index, dtype="boolean")
    table["advice"] = [f[2] for f in flags]
    table = table.astype({"value": float, "halfwidth_now": float, "halfwidth_end": float})
    return table.sort_values(["dataset", "system", "metric"], kind="stable").reset_index(drop=True)[WIDTH_COLUMNS]


def widths_summary(table: pd.DataFrame) -> dict[str, Any]:
    """The table as ``summary.json`` holds it: the target, how many cells meet it now and at the end, and the
    rows (NaN as null by :func:`posthoc.atomic.write_summary_json`)."""
    target = float(table["target"].iloc[0]) if len(table) else float("nan")
    rows = table.astype(object).where(table.notna(), None).to_dict(orient="records")
    record: dict[str, Any] = {"target": None if math.isnan(target) else target, "cells": rows}
    if record["target"] is not None:
        record["met_now"] = int(table["met_now"].fillna(False).sum())
        record["met_end"] = int(table["met_end"].fillna(False).sum())
    return record
