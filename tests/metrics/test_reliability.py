"""Fleiss' kappa and Krippendorff's alpha against statsmodels and the krippendorff package; crowd-kit labels."""

from __future__ import annotations

import krippendorff
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.inter_rater import fleiss_kappa

from posthoc.metrics import (
    ScoringOptions,
    annotation_verdicts,
    dawid_skene,
    fleiss_kappa_table,
    krippendorff_alpha,
    majority_vote,
    score_judgements,
)
from posthoc.synthetic import synthetic_study


@st.composite
def equal_rater_tables(draw):
    raters = draw(st.integers(2, 6))
    items = draw(st.integers(2, 30))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    probabilities = rng.dirichlet(np.ones(3))
    return np.stack([rng.multinomial(raters, probabilities) for _ in range(items)])


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@settings(max_examples=60, deadline=None)
@given(equal_rater_tables())
def test_fleiss_kappa_equals_statsmodels(table):
    ours, theirs = fleiss_kappa_table(table), fleiss_kappa(table, method="fleiss")
    if np.isnan(theirs) or not np.isfinite(theirs):
        assert np.isnan(ours)
    else:
        assert ours == pytest.approx(theirs, abs=1e-9)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 40), st.integers(2, 5))
def test_krippendorff_alpha_equals_the_package(seed, items, values):
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 4, size=(items, values))
    counts[0, :2] = 1  # at least one pairable item with two different values
    theirs = krippendorff.alpha(value_counts=counts, level_of_measurement="nominal")
    assert krippendorff_alpha(counts) == pytest.approx(theirs, abs=1e-9)


def test_krippendorff_alpha_ignores_single_ratings_like_the_package():
    reliability = np.array([[1, 1, np.nan, 2, 3], [1, 2, 2, np.nan, 3], [np.nan, 2, 2, 2, np.nan]])
    counts = np.stack([np.bincount(col[~np.isnan(col)].astype(int), minlength=4)[1:] for col in reliability.T])
    theirs = krippendorff.alpha(reliability_data=reliability, level_of_measurement="nominal")
    assert krippendorff_alpha(counts) == pytest.approx(theirs, abs=1e-9)


def test_fleiss_needs_equal_raters():
    with pytest.raises(ValueError, match="same number"):
        fleiss_kappa_table(np.array([[2, 0, 0], [1, 1, 1]]))


@pytest.fixture(scope="module")
def three_judges():
    _, mentions, judgements = synthetic_study(8, k=3, seed=6, failing_worker_share=0.0)
    return mentions, judgements


def test_score_reports_kappa_and_alpha_equal_to_the_peers(three_judges):
    mentions, judgements = three_judges
    scores = score_judgements(judgements, mentions, options=ScoringOptions(n_resamples=50))
    verdicts = annotation_verdicts(judgements)
    for dataset, part in verdicts.groupby("dataset"):
        counts = part[["n_verify", "n_edit", "n_remove"]].to_numpy()
        got = scores.reliability.set_index(["dataset", "measure"])
        assert got.loc[(dataset, "fleiss_kappa"), "value"] == pytest.approx(fleiss_kappa(counts), abs=1e-9)
        alpha = krippendorff.alpha(value_counts=counts, level_of_measurement="nominal")
        assert got.loc[(dataset, "krippendorff_alpha"), "value"] == pytest.approx(alpha, abs=1e-9)
        assert got.loc[(dataset, "fleiss_kappa"), "n_items"] == len(part)
    assert list(scores.reliability.columns) == ["dataset", "measure", "value", "n_items"]


def test_aggregated_labels_are_crowd_kits_on_the_same_frame(three_judges):
    from crowdkit.aggregation import DawidSkene, MajorityVote

    mentions, judgements = three_judges
    scores = score_judgements(judgements, mentions, options=ScoringOptions(n_resamples=0))
    rows = judgements.loc[~judgements["is_control"]]
    key = rows["mention_id"]
    frame = pd.DataFrame({"task": key, "worker": rows["worker"], "label": rows["outcome"]})
    expected_majority = MajorityVote().fit_predict(frame)
    expected_ds = DawidSkene(n_iter=100).fit_predict(frame)
    got = scores.aggregated.set_index("mention_id")
    assert set(got.index) == set(expected_majority.index)
    assert (got["majority"] == expected_majority.reindex(got.index)).all()
    assert (got["dawid_skene"] == expected_ds.reindex(got.index)).all()
    assert (got["n_judges"] == 3).all()
    # the public helpers return the same labels in verdict order
    verdicts = annotation_verdicts(judgements)
    assert majority_vote(judgements).tolist() == expected_majority.reindex(verdicts["mention_id"]).tolist()
    assert dawid_skene(judgements).tolist() == expected_ds.reindex(verdicts["mention_id"]).tolist()


def test_majority_of_three_decides_verified(three_judges):
    _, judgements = three_judges
    verdicts = annotation_verdicts(judgements)
    assert ((verdicts["n_verify"] >= 2) == verdicts["verified"]).all()


def test_k1_studies_have_empty_reliability_and_aggregated_tables():
    _, mentions, judgements = synthetic_study(3, seed=1)
    scores = score_judgements(judgements, mentions, options=ScoringOptions(n_resamples=0))
    assert scores.reliability.empty and list(scores.reliability.columns) == ["dataset", "measure", "value", "n_items"]
    assert scores.aggregated.empty
    assert list(scores.aggregated.columns) == ["mention_id", "dataset", "system", "n_judges", "majority", "dawid_skene"]
