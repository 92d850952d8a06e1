"""The lag-1 model (seed 004 section 2): design by hand, parity with least squares, recovery of known effects."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import stats

from posthoc.errors import PosthocInputError
from posthoc.sequence import fit_lag1, lag1_by_subset, lag1_by_tertile, lagged_design
from posthoc.sequence.lag_model import worker_subsets
from posthoc.sequence.simulate import simulate_binary, simulate_continuous


def _table(rows: list[tuple[str, str, str, int, float, float]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["worker", "sequence", "item", "position", "label", "gold"])


def test_lagged_design_by_hand() -> None:
    # worker a: labels 1, 0, 1 at positions 0..2 (given out of order); worker b: labels 0, 0.
    table = _table([
        ("a", "h1", "x", 2, 1, 1), ("a", "h1", "y", 0, 1, 1), ("a", "h1", "z", 1, 0, 0),
        ("b", "h1", "x", 0, 0, 1), ("b", "h1", "y", 1, 0, 1),
    ])
    design = lagged_design(table)
    a = design[design["worker"] == "a"].sort_values("position")
    # previous labels: position 1 follows label 1 (item y), position 2 follows label 0 (item z)
    assert a["previous"].tolist() == [1.0, 0.0]
    # worker bias leaves the current label out: a's labels sum to 2 over 3 items
    # position 1 (label 0): (2 - 0) / 2 = 1.0 ; position 2 (label 1): (2 - 1) / 2 = 0.5
    assert a["bias"].tolist() == [1.0, 0.5]
    # tertiles of a 3-item sequence: ranks 0, 1, 2 -> 0, 1, 2 (the first row is dropped: no previous)
    assert a["tertile"].tolist() == [1, 2]
    b = design[design["worker"] == "b"]
    assert b["constant_sequence"].all() and not a["constant_sequence"].any()


def test_linear_fit_equals_least_squares() -> None:
    table = simulate_continuous(12, 15, b1=0.3, seed=3)
    fit = fit_lag1(table, kind="continuous", standardise=False)
    design = lagged_design(table)
    x = np.column_stack([np.ones(len(design)), design["previous"], design["gold"], design["bias"]])
    beta, *_ = np.linalg.lstsq(x, design["label"].to_numpy(), rcond=None)
    assert fit.n == len(design) == 12 * 14
    np.testing.assert_allclose([fit.b0, fit.b1, fit.b2, fit.b3], beta, rtol=1e-9, atol=1e-12)
    assert fit.b1_low < fit.b1 < fit.b1_high


def test_binary_fit_matches_its_own_likelihood_optimum() -> None:
    table = simulate_binary(20, 20, b1=0.5, seed=4)
    fit = fit_lag1(table, worker_bias=False)
    design = lagged_design(table, worker_bias=False)
    x = np.column_stack([np.ones(len(design)), design["previous"], design["gold"]])
    y = design["label"].to_numpy()
    beta = np.array([fit.b0, fit.b1, fit.b2])
    # the score (gradient of the log-likelihood) vanishes at the maximum likelihood estimate
    gradient = x.T @ (y - 1 / (1 + np.exp(-x @ beta)))
    assert np.abs(gradient).max() < 1e-4
    assert fit.kind == "binary" and np.isnan(fit.b3)


@pytest.mark.slow
def test_binary_recovery_covers_truth_and_sign() -> None:
    """200 seeded studies with b1 in {-0.8, 0, +0.8}: the 95% interval covers the truth in >= 93%."""
    covered, signs, nonzero = 0, 0, 0
    for repeat in range(200):
        truth = (-0.8, 0.0, 0.8)[repeat % 3]
        fit = fit_lag1(simulate_binary(30, 20, b1=truth, seed=repeat))
        covered += fit.b1_low <= truth <= fit.b1_high
        if truth:
            nonzero += 1
            signs += np.sign(fit.b1) == np.sign(truth)
    assert covered / 200 >= 0.93
    assert signs / nonzero >= 0.97


def test_continuous_defaults_are_not_degenerate_on_z_scores() -> None:
    """Issue 10: z-scored labels sum to zero per worker, so their leave-one-out bias is -label / (n - 1), the
    dependent variable; the defaults compute the bias on the labels as given and do not z-score."""
    table = simulate_continuous(30, 60, b1=0.4, centre=50, offset_sd=10, scale_range=(5, 15), seed=8)
    fit = fit_lag1(table)
    assert fit.kind == "continuous" and fit.b1_low <= 0.4 <= fit.b1_high
    design = lagged_design(table)
    totals = table.groupby("worker")["label"].sum()
    row = design.iloc[5]
    assert row["bias"] == pytest.approx((totals[row["worker"]] - row["label"]) / 59, rel=1e-12)
    # standardise=True is the paper's section 3.3 z-scoring; the bias still comes from the raw labels
    z = lagged_design(table, standardise=True)
    np.testing.assert_allclose(z["bias"], design["bias"], rtol=1e-12)
    assert abs(z.groupby("worker")["label"].mean()).max() < 0.2


def _explicit_jackknife(x: np.ndarray, y: np.ndarray, groups: np.ndarray) -> np.ndarray:
    estimates = []
    for g in np.unique(groups):
        keep = groups != g
        estimates.append(np.linalg.lstsq(x[keep], y[keep], rcond=None)[0])
    estimates = np.array(estimates)
    n = len(estimates)
    return np.sqrt((n - 1) / n * ((estimates - estimates.mean(axis=0)) ** 2).sum(axis=0))


def test_linear_standard_errors_are_the_leave_one_worker_out_jackknife() -> None:
    table = simulate_continuous(9, 12, b1=0.2, offset_sd=2, scale_range=(0.5, 2), seed=6)
    fit = fit_lag1(table)
    design = lagged_design(table)
    x = np.column_stack([np.ones(len(design)), design["previous"], design["gold"], design["bias"]])
    groups = pd.factorize(design["worker"])[0]
    se = _explicit_jackknife(x, design["label"].to_numpy(), groups)
    assert fit.b1_se == pytest.approx(se[1], rel=1e-9)
    t = stats.t.ppf(0.975, 8)
    assert fit.b1_high - fit.b1 == pytest.approx(t * se[1], rel=1e-9)


def test_logistic_fit_equals_statsmodels_and_its_jackknife_is_close_to_refits() -> None:
    table = simulate_binary(12, 25, b1=0.5, worker_sd=0.5, seed=9)
    fit = fit_lag1(table)
    design = lagged_design(table)
    x = sm.add_constant(design[["previous", "gold", "bias"]].to_numpy(float))
    y = design["label"].to_numpy(float)
    peer = sm.Logit(y, x).fit(disp=0)
    np.testing.assert_allclose([fit.b0, fit.b1, fit.b2, fit.b3], peer.params, rtol=1e-7, atol=1e-9)
    groups = pd.factorize(design["worker"])[0]
    refits = np.array([sm.Logit(y[groups != g], x[groups != g]).fit(disp=0).params for g in range(12)])
    explicit = np.sqrt(11 / 12 * ((refits - refits.mean(axis=0)) ** 2).sum(axis=0))
    # the one-step approximation of each refit: within 10% of refitting 12 times
    assert fit.b1_se == pytest.approx(explicit[1], rel=0.1)


def test_separation_is_noted_not_hidden() -> None:
    rows = []
    gold = np.random.default_rng(1).random((4, 16))
    for worker in range(4):
        for position in range(12 + worker):
            label = float((position + worker) % 2)  # alternates: the previous label predicts it perfectly
            rows.append((f"w{worker}", f"w{worker}", f"i{position}", position, label, gold[worker, position]))
    fit = fit_lag1(_table(rows))
    assert "separation" in fit.note or "not converge" in fit.note
    assert abs(fit.b1) > 10 or not np.isfinite(fit.b1)


def test_subsets_drop_constant_sequences_and_split_by_accuracy() -> None:
    rows = []
    for worker, labels in {"steady": [1, 1, 1, 1], "good": [1, 0, 1, 0], "poor": [0, 1, 0, 1]}.items():
        for position, label in enumerate(labels):
            rows.append((worker, "h", f"i{position}", position, label, [1, 0, 1, 0][position]))
    table = _table(rows)
    subsets = worker_subsets(table)
    # accuracy vs gold: steady 2/4 = 0.5, good 4/4 = 1.0, poor 0/4 = 0.0; threshold 0.6
    assert subsets["good"] == ["good"]
    assert subsets["bad"] == ["poor", "steady"]
    assert subsets["moderate"] == ["good", "poor"]


def test_by_subset_and_tertile_tables() -> None:
    table = simulate_binary(30, 21, b1=0.8, seed=11)
    by_subset = lag1_by_subset(table)
    assert by_subset["subset"].tolist() == ["all", "moderate", "good", "bad"]
    all_row = by_subset.iloc[0]
    assert all_row["n"] == 30 * 20 and all_row["n_workers"] == 30
    by_tertile = lag1_by_tertile(table)
    assert len(by_tertile) == 12
    assert by_tertile.loc[by_tertile["subset"] == "all", "n"].sum() == 30 * 20


def test_bad_kind_and_non_binary_labels_are_refused() -> None:
    table = simulate_continuous(5, 5, seed=1)
    with pytest.raises(PosthocInputError, match="kind"):
        fit_lag1(table, kind="poisson")
    with pytest.raises(PosthocInputError, match="binary"):
        fit_lag1(table, kind="binary")


def test_too_little_data_gives_a_note_not_an_exception() -> None:
    table = simulate_binary(1, 4, seed=2)
    fit = fit_lag1(table)
    assert np.isnan(fit.b1) and "too few" in fit.note
