"""Stop now or go on (issue 28): per cell, the half-width reached and the one the rest of the plan would bring.

Known answers: the score's own rates table (the half-width reached is half its interval, nothing recomputed),
``posthoc study estimate --pilot`` on the same plan and judgements (the half-width at the end is its prediction),
and counts of items worked out from the plan and the judgements.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from study_factory import make_corpus

from posthoc.errors import PosthocInputError
from posthoc.metrics import rates_with_intervals
from posthoc.study import StudyConfig, plan_study
from posthoc.study.plan.manifest import Manifest
from posthoc.study.planner.estimate import estimate_study
from posthoc.study.planner.progress_widths import (
    ADVICE,
    WIDTH_COLUMNS,
    cell_widths,
    planned_judgements,
    widths_summary,
)
from posthoc.study.planner.rates import OutcomeRates
from posthoc.study.planner.simulate import simulate_judgements

RATES = OutcomeRates(default=(0.8, 0.15, 0.05), consistency=0.6)


def _study(tmp_path: Path, k: int) -> tuple[pd.DataFrame, pd.DataFrame, object]:
    documents, mentions = make_corpus(60, seed=2, datasets=2)
    plan = plan_study(documents, mentions, StudyConfig(name="w", seed=3, k=k, tasks_per_batch=10,
                                                       n_workers=8 if k == 1 else 10))
    manifest = Manifest.create(tmp_path / "w.manifest", plan)
    return planned_judgements(manifest.mentions()), simulate_judgements(plan, RATES, seed=4), plan


def test_a_pilot_reached_the_rates_table_and_the_end_is_the_estimates_prediction(tmp_path: Path) -> None:
    planned, judgements, plan = _study(tmp_path, k=1)
    pilot = judgements.loc[judgements["batch"] == 0]
    rates = rates_with_intervals(pilot, n_resamples=200, seed=0)
    table = cell_widths(planned, pilot, rates, k=1)
    assert list(table.columns) == WIDTH_COLUMNS
    assert set(table["metric"]) == {"posthoc_precision", "posthoc_recall"} and len(table) == 2 * 2 * 3
    # reached: half the width of the score's own interval, the value the score's
    shown = rates.set_index(["dataset", "system", "metric"])
    for row in table.itertuples():
        low, high, value = shown.loc[(row.dataset, row.system, row.metric), ["low", "high", "value"]]
        assert row.halfwidth_now == pytest.approx((high - low) / 2) and row.value == pytest.approx(value)
    # at the end: what `posthoc study estimate --pilot` predicts for the same plan from the same judgements
    estimate = estimate_study(plan, pilot=pilot, runs=2).cells.set_index(["dataset", "system", "metric"])
    for row in table.itertuples():
        assert row.halfwidth_end == pytest.approx(estimate.loc[(row.dataset, row.system, row.metric), "halfwidth"],
                                                  rel=1e-9)
    assert (table["halfwidth_end"] < table["halfwidth_now"]).all()  # a sixth of the plan judged: the rest narrows
    # items: planned from the manifest, judged from the pilot
    real = plan.items.loc[~plan.items["is_control"].astype(bool) & (plan.items["n_mentions"] > 0)]
    assert table.drop_duplicates(["dataset", "system"])["items_planned"].sum() == len(real)
    pilot_items = pilot.loc[~pilot["is_control"].astype(bool)].groupby(["dataset", "system"])["item_id"].nunique()
    judged = table.drop_duplicates(["dataset", "system"]).set_index(["dataset", "system"])
    assert (judged["items_judged_any"] == pilot_items.reindex(judged.index)).all()
    assert (judged["items_judged_k"] == judged["items_judged_any"]).all()  # k = 1
    assert (judged["items_judged_any"] < judged["items_planned"]).all()
    assert table["advice"].eq("").all() and table["met_now"].isna().all() and np.isnan(table["target"]).all()


def test_k_judges_count_items_judged_by_all_of_them_and_failed_workers_do_not_count(tmp_path: Path) -> None:
    planned, judgements, _ = _study(tmp_path, k=3)
    part = judgements.loc[judgements["batch"] <= 1]
    rates = rates_with_intervals(part, n_resamples=0)
    table = cell_widths(planned, part, rates, k=3).drop_duplicates(["dataset", "system"])
    real = part.loc[~part["is_control"].astype(bool)]
    workers = real.groupby(["dataset", "system", "item_id"])["worker"].nunique()
    expected_k = (workers >= 3).groupby(level=[0, 1]).sum()
    expected_any = workers.groupby(level=[0, 1]).size()
    got = table.set_index(["dataset", "system"])
    assert (got["items_judged_k"] == expected_k.reindex(got.index)).all()
    assert (got["items_judged_any"] == expected_any.reindex(got.index)).all()
    assert (got["items_judged_k"] < got["items_judged_any"]).any()  # some items still wait for a judge
    assert table["halfwidth_now"].isna().all()  # --resamples 0: no interval, nothing invented
    dropped = sorted(real["worker"].unique())[:2]
    fewer = cell_widths(planned, part, rates, k=3, exclude_workers=dropped).drop_duplicates(["dataset", "system"])
    assert fewer["items_judged_any"].sum() < table["items_judged_any"].sum()


def test_a_target_says_stop_go_on_or_extend_and_the_summary_counts_them(tmp_path: Path) -> None:
    planned, judgements, _ = _study(tmp_path, k=1)
    pilot = judgements.loc[judgements["batch"] == 0]
    rates = rates_with_intervals(pilot, n_resamples=200, seed=0)
    base = cell_widths(planned, pilot, rates, k=1)
    now, end = base["halfwidth_now"].to_numpy(), base["halfwidth_end"].to_numpy()
    target = float(np.sort(end)[len(end) // 2])  # half the cells meet it at the end
    table = cell_widths(planned, pilot, rates, k=1, target=target)
    assert (table["met_now"].to_numpy(dtype=bool) == (now <= target)).all()
    assert (table["met_end"].to_numpy(dtype=bool) == (end <= target)).all()
    expected = np.where(now <= target, ADVICE["now"], np.where(end <= target, ADVICE["end"], ADVICE["short"]))
    assert list(table["advice"]) == list(expected) and {ADVICE["end"], ADVICE["short"]} <= set(expected)
    summary = widths_summary(table)
    assert summary["target"] == target and len(summary["cells"]) == len(table)
    assert summary["met_end"] == int((end <= target).sum()) and summary["met_now"] == int((now <= target).sum())
    assert "met_now" not in widths_summary(base) and widths_summary(base)["target"] is None
    with pytest.raises(PosthocInputError, match="--target-halfwidth must be between 0 and 1"):
        cell_widths(planned, pilot, rates, k=1, target=1.5)
    with pytest.raises(PosthocInputError, match="judgements table lacks column"):
        cell_widths(planned, pilot.drop(columns=["item_id"]), rates, k=1)
