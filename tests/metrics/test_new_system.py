"""A new system's posthoc precision from reused, judged and predicted verdicts (issue 46): hand-worked cases and
simulated studies with known truth (:mod:`posthoc.validity.new_system`)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from posthoc.errors import PosthocInputError
from posthoc.metrics.new_system import cross_fitted_predictions, new_system_precision, strict_match_class
from posthoc.validity.new_system import NewSystemSetting, new_system_checks, simulate_new_system, true_precision

KEYS = ["dataset", "doc_id", "start", "end", "link"]


def test_strict_classes_by_hand_and_the_category_hook():
    gt = pd.DataFrame([("d", "1", 0, 5, "Paris"), ("d", "2", 0, 5, "Paris")], columns=KEYS)
    system = pd.DataFrame([("d", "1", 0, 5, "Paris"), ("d", "2", 0, 5, "Paris_(Texas)"), ("d", "2", 0, 4, "Paris"),
                           ("e", "1", 0, 5, "Paris")], columns=KEYS)
    # same span + link; same span other link; a shorter span; the same span in another dataset
    assert strict_match_class(system, gt).tolist() == ["exact", "same_span_other_link", "no_gt_span", "no_gt_span"]
    categorised = system.assign(category=["A", "B", "C", "D"])
    assert strict_match_class(categorised, gt, category_column="category").tolist() == ["A", "B", "C", "D"]
    with pytest.raises(PosthocInputError, match="category"):
        strict_match_class(system, gt, category_column="category")


def test_a_prediction_never_reads_its_own_documents_verdicts():
    rng = np.random.default_rng(3)
    classes = rng.choice(["exact", "no_gt_span"], 300)
    documents = np.repeat(np.arange(30), 10)
    verdicts = (rng.random(300) < 0.7).astype(float)
    judged = rng.random(300) < 0.6
    before = cross_fitted_predictions(classes, verdicts, judged, documents, seed=4)
    flipped = verdicts.copy()
    flipped[documents == 7] = 1 - flipped[documents == 7]  # another verdict everywhere in document 7
    after = cross_fitted_predictions(classes, flipped, judged, documents, seed=4)
    np.testing.assert_array_equal(before[documents == 7], after[documents == 7])
    assert not np.array_equal(before, after)  # the other folds did learn from document 7
    with pytest.raises(PosthocInputError, match="folds"):
        cross_fitted_predictions(classes[:10], verdicts[:10], judged[:10], documents[:10], folds=5)


def test_without_predictions_the_estimate_is_the_stratified_judged_mean():
    # lam = 0: p = w_r mean(reused) + w_n mean(judged novel): 3 reused (2 verified), 6 novel of which 3 judged (1)
    verdicts = [1, 1, 0, 1, 0, 0, 0, 0, 0]
    result = new_system_precision(verdicts, reused=[1, 1, 1, 0, 0, 0, 0, 0, 0], judged=[0, 0, 0, 1, 1, 1, 0, 0, 0],
                                  predictions=[0.9] * 9, doc_ids=list("abcabcabc"), lam=0)
    assert result.estimate == pytest.approx(3 / 9 * 2 / 3 + 6 / 9 * 1 / 3)
    assert (result.reused, result.judged, result.predicted) == (pytest.approx(1 / 3),) * 3
    assert result.low < result.estimate < result.high
    with pytest.raises(PosthocInputError, match="both reused and judged"):
        new_system_precision(verdicts, reused=[1] * 9, judged=[1] * 9, predictions=[0.5] * 9, doc_ids=["a"] * 9)


def test_the_simulation_knows_its_truth():
    """The truth (quadrature) against the mean of own-task verdicts over many simulated annotations."""
    setting = NewSystemSetting(n_docs=4000)
    own = simulate_new_system(setting, np.random.default_rng(0))[5]
    assert own.mean() == pytest.approx(true_precision(setting), abs=0.01)


@pytest.mark.slow
def test_coverage_and_bias_on_simulated_studies():
    """200 studies a setting (a standard error of 0.015 at 0.95): coverage 0.91-0.99 and |bias| <= 0.01 in the paper
    setting and where context changes reused verdicts (reuse refused); reusing them there is biased."""
    settings = (NewSystemSetting(), NewSystemSetting(context=-1.5, reuse=False))
    checks = new_system_checks(settings, n_studies=200, seed=7, coverage_band=(0.91, 0.99))
    assert all(check.passed for check in checks)
    naive = [c for c in checks if "had the verdicts been reused" in c.estimator]
    assert len(naive) == 1 and naive[0].value < -0.05
    share = [c.value for c in checks if c.measure == "judgements / a full study's"]
    assert max(share) < 1 / 3  # at most a third of a full study's judgements
