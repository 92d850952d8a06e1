"""The study-level randomisation test of order effects (issue 45): its statistic worked by hand, its size on
simulated null studies within binomial error of 5%, and no power lost against the jackknife Wald test of b1."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from posthoc.errors import PosthocInputError
from posthoc.sequence import fit_lag1
from posthoc.sequence.randomisation import order_randomisation_test
from posthoc.sequence.simulate import simulate_binary


def _null_study(seed: int, *, n_workers: int = 20, n_items: int = 20) -> pd.DataFrame:
    """Labels that depend on the item (gold = its quality) and the worker (a bias), never on the order; every
    worker judges every item in their own random order (seed 000's design with k = n_workers)."""
    rng = np.random.default_rng(seed)
    quality = rng.normal(0.0, 1.0, n_items)
    bias = rng.normal(0.0, 0.7, n_workers)
    chance = 1.0 / (1.0 + np.exp(-(0.3 + bias[:, None] + 1.5 * quality[None, :])))
    labels = (rng.random((n_workers, n_items)) < chance).astype(float)
    positions = np.argsort(rng.random((n_workers, n_items)), axis=1)
    workers = np.repeat([f"w{w:02d}" for w in range(n_workers)], n_items)
    return pd.DataFrame({"worker": workers, "sequence": workers, "item": np.tile([f"i{i}" for i in range(n_items)],
                                                                                 n_workers),
                         "position": positions.ravel(), "label": labels.ravel(),
                         "gold": np.tile(quality, n_workers)})


def test_the_statistic_is_the_centred_lag_score_worked_by_hand() -> None:
    """Two workers label 1, 1, 1, 0, 0, 0; no gold, no bias: the null logit fits the mean 0.5, residuals +-0.5.
    A worker's U = sum_{t>=1} e(t) y(t-1) = 0.5 + 0.5 - 0.5 = 0.5, its mean over reorderings
    (sum e * sum y - sum e*y) / n = (0 - 1.5) / 6 = -0.25, so 0.75 a worker and 1.5 in all."""
    rows = [(w, w, f"i{p}", p, float(p < 3), None) for w in ("w1", "w2") for p in range(6)]
    table = pd.DataFrame(rows, columns=["worker", "sequence", "item", "position", "label", "gold"])
    test = order_randomisation_test(table, worker_bias=False, n_permutations=99)
    assert test.statistic == pytest.approx(1.5, abs=1e-9)
    assert (test.n, test.n_workers, test.n_permutations, test.note) == (10, 2, 99, "")
    # the exact reference distribution by enumeration: each worker's 3 ones fall on any 3 of 6 places (20 orders,
    # equally likely), the two workers independently (400 pairs); the Monte Carlo p-value of 9,999 reorderings
    # agrees within three of its standard errors
    per_worker = []
    for ones in itertools.combinations(range(6), 3):
        y = np.isin(np.arange(6), ones).astype(float)
        per_worker.append(float(((y[1:] - 0.5) * y[:-1]).sum()) + 0.25)
    totals = np.add.outer(per_worker, per_worker).ravel()
    exact = float((np.abs(totals) >= 1.5 - 1e-9).mean())
    assert exact == pytest.approx(56 / 400)
    many = order_randomisation_test(table, worker_bias=False, n_permutations=9_999)
    assert abs(many.p_value - exact) <= 3 * np.sqrt(exact * (1 - exact) / 9_999) + 1 / 10_000


def test_the_same_seed_gives_the_same_p_value_and_bad_options_are_refused() -> None:
    table = _null_study(3)
    assert order_randomisation_test(table, seed=5) == order_randomisation_test(table, seed=5)
    with pytest.raises(PosthocInputError, match="n_permutations"):
        order_randomisation_test(table, n_permutations=0)
    one_worker = table[table["worker"] == "w00"]
    assert np.isnan(order_randomisation_test(one_worker).p_value)


def test_size_on_null_studies_is_five_percent_within_binomial_error() -> None:
    """300 null studies (worker biases, item effects, no order effect), 199 reorderings each: the rejections at
    5% fall inside the central 99.8% of Binomial(300, 0.05); the validity bench holds 0.03-0.07 at 1,000 studies."""
    n_studies = 300
    p_values = np.array([order_randomisation_test(_null_study(seed), n_permutations=199, seed=seed).p_value
                         for seed in range(n_studies)])
    rejected = int((p_values <= 0.05).sum())
    low, high = stats.binom.ppf([0.001, 0.999], n_studies, 0.05)
    assert low <= rejected <= high, (rejected, low, high)
    # and the p-values are uniform, not only at 5%: a quarter at or below 0.25 within binomial error
    quarter = int((p_values <= 0.25).sum())
    assert stats.binom.ppf(0.001, n_studies, 0.25) <= quarter <= stats.binom.ppf(0.999, n_studies, 0.25)


def test_no_power_lost_against_the_wald_test_on_a_known_lag() -> None:
    """100 studies with b1 = +0.6 (20 workers x 30 items, each worker their own bias): the randomisation test
    rejects at least as often as the jackknife Wald test of b1 on the same studies, less 5 points."""
    exact, wald = [], []
    for seed in range(100):
        table = simulate_binary(20, 30, b0=-0.5, b1=0.6, b2=2.0, worker_sd=0.5, seed=10_000 + seed)
        exact.append(order_randomisation_test(table, n_permutations=199, seed=seed).p_value <= 0.05)
        wald.append(fit_lag1(table).b1_p < 0.05)
    assert np.mean(exact) >= np.mean(wald) - 0.05, (np.mean(exact), np.mean(wald))
    assert np.mean(exact) >= 0.5  # a real effect is found, far above the 5% of the null
