"""Seed 004 section 4: per-worker random orders leave item scores unbiased; one shared order biases them."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from posthoc.sequence import audit_orders, scores_after_previous, standardise_per_worker
from posthoc.sequence.simulate import simulate_continuous

N_WORKERS, N_ITEMS, B1 = 60, 40, 0.5


def _item_bias(table: pd.DataFrame) -> tuple[pd.Series, pd.Series]:
    """Each item's mean score minus its true quality (centred), and the quality of the item before it
    in worker w000's order."""
    means = table.groupby("item").agg(score=("label", "mean"), quality=("gold", "first"))
    bias = means["score"] - means["quality"]
    bias = bias - bias.mean()
    first = table[table["worker"] == "w000"].sort_values("position")
    predecessor = dict(zip(first["item"].iloc[1:], first["gold"].iloc[:-1], strict=True))
    return bias, means.index.to_series().map(predecessor)


def test_shared_order_biases_item_scores_random_orders_do_not() -> None:
    shared = simulate_continuous(N_WORKERS, N_ITEMS, b1=B1, shared_order=True, seed=7)
    own = simulate_continuous(N_WORKERS, N_ITEMS, b1=B1, shared_order=False, seed=7)
    shared_bias, shared_pred = _item_bias(shared)
    own_bias, _ = _item_bias(own)
    # stationary variance of a score: noise^2 / (1 - b1^2) with unit noise; an item mean over N workers has
    # sampling error sqrt(var / N): that is all the error an unbiased design should show
    sampling_rms = np.sqrt(1 / (1 - B1**2) / N_WORKERS)
    own_rms = float(np.sqrt((own_bias**2).mean()))
    shared_rms = float(np.sqrt((shared_bias**2).mean()))
    assert own_rms < 1.3 * sampling_rms
    assert shared_rms > 2 * own_rms
    # under one shared order, an item's error follows the quality of the item shown before it
    known = shared_pred.notna()
    assert stats.pearsonr(shared_bias[known], shared_pred[known].astype(float)).statistic > 0.5


def test_audit_tells_shared_from_own_orders() -> None:
    shared = audit_orders(simulate_continuous(30, 20, shared_order=True, seed=1))
    own = audit_orders(simulate_continuous(30, 20, shared_order=False, seed=1))
    assert shared.shared_order_warning and abs(shared.mean_pairwise_tau - 1.0) < 1e-12
    assert not own.shared_order_warning and abs(own.mean_pairwise_tau) < 0.1
    assert own.n_pairs == 30 * 29 // 2


def test_audit_served_against_planned_order() -> None:
    table = simulate_continuous(2, 6, seed=3)
    start = pd.Timestamp("2026-01-01T00:00:00Z")
    table["created_at"] = [start + pd.Timedelta(minutes=int(p)) for p in table["position"]]
    # worker w001 did the last two planned tasks in swapped order
    late = (table["worker"] == "w001") & table["position"].isin([4, 5])
    table.loc[late, "created_at"] = table.loc[late, "created_at"].iloc[::-1].to_numpy()
    audit = audit_orders(table).per_worker.set_index("worker")
    assert abs(audit.loc["w000", "served_vs_planned_tau"] - 1.0) < 1e-12
    assert audit.loc["w000", "share_in_planned_order"] == 1.0
    assert audit.loc["w001", "share_in_planned_order"] == 4 / 6
    # one discordant pair out of 15: tau = (14 - 1) / 15
    assert abs(audit.loc["w001", "served_vs_planned_tau"] - 13 / 15) < 1e-12


def test_standardise_per_worker() -> None:
    table = simulate_continuous(5, 10, seed=2)
    z = standardise_per_worker(table)
    grouped = z.groupby("worker")["label"]
    np.testing.assert_allclose(grouped.mean(), 0, atol=1e-12)
    np.testing.assert_allclose(grouped.std(ddof=1), 1, atol=1e-12)


def test_scores_after_previous_detects_assimilation_under_shared_order() -> None:
    table = simulate_continuous(N_WORKERS, N_ITEMS, b1=B1, shared_order=True, seed=5)
    after = scores_after_previous(table)
    assert after.means["bin"].tolist() == ["low", "middle", "high"]
    assert after.means["n"].sum() == N_WORKERS * (N_ITEMS - 1)
    assert after.high_minus_low > 0 and after.p_value < 0.001
    # the Welch test is scipy's on the same two groups
    z = standardise_per_worker(table)
    quality = z.groupby("item")["label"].mean()
    bins = pd.qcut(quality.rank(method="first"), 3, labels=["low", "middle", "high"])
    z["prev"] = z.groupby("worker")["item"].shift(1).map(bins)
    high, low = z.loc[z["prev"] == "high", "label"], z.loc[z["prev"] == "low", "label"]
    expected = stats.ttest_ind(high, low, equal_var=False)
    assert abs(after.t_statistic - expected.statistic) < 1e-9
    assert abs(after.high_minus_low - (high.mean() - low.mean())) < 1e-12


def test_scores_after_previous_no_effect_without_bias() -> None:
    after = scores_after_previous(simulate_continuous(N_WORKERS, N_ITEMS, b1=0.0, shared_order=False, seed=6))
    assert abs(after.high_minus_low) < 0.15
