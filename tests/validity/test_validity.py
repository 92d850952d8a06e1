"""The validity checks of bench/validity_bench.py on smaller runs: every estimator on its defaults, against truth.

Each test runs the same function the bench runs (posthoc.validity), with fewer or smaller simulated studies, and
asserts the targets of issue 10 (coverage >= 0.93, |mean bias| <= 0.03 for b1 and 0.01 for rates, null
rejections <= 0.06, peers to 1e-12). Where a smaller run makes the coverage estimate noisier than the margin
between 0.95 and 0.93, the bound is the one a correct 95% interval (or a correct 5% test) passes with probability
> 0.999 on that many studies (binomial), and the test says so; the bench holds the acceptance bounds.
"""

from __future__ import annotations

import math

import pytest
from scipy import stats

from posthoc.validity import Check
from posthoc.validity import metrics as metric_checks
from posthoc.validity import sequence as sequence_checks

pytestmark = pytest.mark.slow


def _failed(checks: list[Check]) -> list[str]:
    return [f"{c.estimator} ({c.setting}) {c.measure} = {c.value:.4f}, target {c.target}" for c in checks
            if not c.passed]


def _binomial_floor(n: int) -> float:
    """The coverage a true 95% interval falls below with probability 0.001 on ``n`` studies."""
    return float(stats.binom.ppf(0.001, n, 0.95)) / n


def test_lag1_continuous_defaults_cover_and_are_unbiased() -> None:
    """120 studies per true b1 in {-0.3, 0, +0.4}, 20 workers x 30 items (the bench: 300 of 30 x 60), workers
    with their own offset (sd 10) and scale (5-15); |mean bias| <= 0.03 as in the acceptance."""
    floor = _binomial_floor(120)
    checks = sequence_checks.lag1_checks("continuous", n_studies=120, n_workers=20, n_items=30, coverage_target=floor)
    assert len(checks) == 6 and floor > 0.88 and not _failed(checks), _failed(checks)


def test_lag1_binary_defaults_cover_and_are_unbiased() -> None:
    floor = _binomial_floor(100)
    checks = sequence_checks.lag1_checks("binary", n_studies=100, n_workers=20, n_items=30, coverage_target=floor)
    assert floor >= 0.87 and not _failed(checks), _failed(checks)


def _binomial_ceiling(n: int) -> float:
    """The rejection share a true 5% test exceeds with probability 0.001 on ``n`` null studies."""
    return float(stats.binom.ppf(0.999, n, 0.05)) / n


def test_study_level_test_holds_its_size_and_covers_a_known_lag() -> None:
    """100 null and 100 lagged studies of 24 workers x 20 tasks (the paper's batch size); the bench holds the
    acceptance bounds (<= 6% rejections on 200 null studies, coverage >= 0.93) at 40 x 40."""
    checks = sequence_checks.study_test_checks(n_studies=100, n_workers=24, tasks_per_worker=20,
                                               coverage_target=_binomial_floor(100),
                                               rejection_target=_binomial_ceiling(100))
    assert checks[0].measure == "rejects at 5%" and _binomial_ceiling(100) <= 0.13
    assert not _failed(checks), _failed(checks)


def test_posthoc_precision_and_recall_cover_the_truth() -> None:
    floor = _binomial_floor(150)
    checks = metric_checks.precision_recall_checks(n_studies=150, n_docs=200, population_docs=6000,
                                                   coverage_target=floor)
    # 6 rates x (coverage, bias) and the paired difference of 3 pairs x 2 metrics, on the default BCa
    assert len(checks) == 18 and not _failed(checks), _failed(checks)
    assert sum(c.estimator.startswith("paired difference") for c in checks) == 6


def test_paired_test_holds_its_size_and_the_old_method_is_reported_beside() -> None:
    """150 whole studies with two equal systems: the 5% test rejects no more than a true 5% test would (binomial,
    p > 0.999); the bench holds the 0.03-0.07 band at 1,000 studies."""
    ceiling = _binomial_ceiling(150)
    checks = metric_checks.paired_size_checks(n_studies=150, rejection_band=(0.0, ceiling))
    assert len(checks) == 1 and checks[0].measure == "rejects at 5%" and ceiling <= 0.12
    assert not _failed(checks), _failed(checks)
    both = metric_checks.precision_recall_checks(n_studies=20, n_docs=40, population_docs=2000,
                                                 methods=("bca", "percentile"), coverage_target=0.0)
    reported = [c for c in both if "percentile (old method)" in c.estimator]
    assert len(reported) == 12 and all(c.target == "(reported)" for c in reported)


def test_three_judge_majority_rate_covers_the_truth() -> None:
    floor = _binomial_floor(60)
    checks = metric_checks.majority_checks(n_studies=60, n_docs=40, coverage_target=floor)
    assert not _failed(checks), _failed(checks)


def test_fleiss_kappa_and_krippendorff_alpha_equal_the_peers() -> None:
    checks = metric_checks.agreement_checks(n_studies=3, n_docs=8)
    assert not _failed(checks), _failed(checks)
    assert all(math.isfinite(c.value) for c in checks)


def test_dawid_skene_recovers_known_worker_accuracies() -> None:
    checks = metric_checks.dawid_skene_checks(n_studies=2)
    assert not _failed(checks), _failed(checks)


def test_the_randomisation_checks_hold_both_tests_on_the_same_studies() -> None:
    """The bench's randomisation part (issue 45) on 60 null and 30 lagged studies of 24 workers x 20 tasks,
    k = 3: the randomisation test's null rejections within binomial error of 5% (p > 0.998 for a true 5% test),
    and its power no more than 10 points below the Wald test's on the same lagged studies; the bench holds
    0.03-0.07 at 1,000 studies and 3 points."""
    band = tuple(float(b) / 60 for b in stats.binom.ppf([0.001, 0.999], 60, 0.05))
    checks = sequence_checks.randomisation_test_checks(n_studies=60, power_studies=30, n_workers=24,
                                                       tasks_per_worker=20, n_permutations=199,
                                                       rejection_band=band, power_loss=0.10)
    assert len(checks) == 10 and {c.runs for c in checks} == {60, 30}
    assert [c.measure for c in checks[:5]] == ["rejects at 5%", "rejects at 5%", "power at 5%", "power at 5%",
                                               "power minus Wald's"]
    assert not _failed(checks), _failed(checks)
