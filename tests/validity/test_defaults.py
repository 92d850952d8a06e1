"""Every estimator with exactly the settings a user gets without options (the guide: "Test the defaults").

Each is called with its data only, on a simulation whose truth is known, and checked against that truth or
against the same estimator with its defaults spelled out (so a changed default shows here).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from posthoc.metrics import (
    agreement_on_intersection,
    control_results,
    corrected_gold,
    dawid_skene,
    majority_vote,
    posthoc_precision_recall,
    preannotation_scores,
    rates_with_intervals,
    score_judgements,
    union_outcomes_against_gt,
    verification_rates,
    verification_union,
)
from posthoc.sequence import (
    audit_orders,
    fit_lag1,
    lag1_by_subset,
    lag1_by_tertile,
    scores_after_previous,
    sequence_table_from_judgements,
)
from posthoc.sequence.simulate import simulate_binary, simulate_continuous
from posthoc.synthetic import synthetic_study
from posthoc.validity.sequence import simulate_task_study

VERIFY = {"GT": 0.85, "E2E": 0.92, "REL": 0.88}
Study = tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]


@pytest.fixture(scope="module")
def study() -> Study:
    return synthetic_study(60, verify_prob=VERIFY, seed=11)


def test_score_judgements_on_its_defaults(study: Study) -> None:
    _, mentions, judgements = study
    scores = score_judgements(judgements, mentions)
    summary = scores.summary
    assert (summary["n_resamples"], summary["resample_unit"], summary["union"], summary["confidence"]) == (
        1000, "doc_id", "exact", 0.95)
    assert summary["exclude_failing_workers"] is True and summary["control_pass_threshold"] == 1.0
    rates = scores.rates.set_index(["dataset", "system", "metric"])
    for dataset, system in ((d, s) for d in ("SYN-A", "SYN-B") for s in VERIFY):
        row = rates.loc[(dataset, system, "verification_rate")]
        assert row["low"] <= row["value"] <= row["high"]
        assert abs(row["value"] - VERIFY[system]) < 4 * np.sqrt(VERIFY[system] * (1 - VERIFY[system]) / row["n"])
        assert rates.loc[(dataset, system, "mention_rate"), "value"] >= row["value"]
    # rates_with_intervals on its defaults draws the same resamples (no worker fails here)
    alone = rates_with_intervals(judgements).set_index(["dataset", "system", "metric"])
    np.testing.assert_allclose(alone["high"].to_numpy(), rates["high"].to_numpy())
    # the default interval is BCa (issue 26), the same as spelling it out; the percentile option differs
    assert summary["interval"] == "bca" and set(scores.comparisons["method"]) == {"jackknife_t"}  # issue 46
    spelled = rates_with_intervals(judgements, interval="bca").set_index(["dataset", "system", "metric"])
    np.testing.assert_allclose(spelled["low"].to_numpy(), rates["low"].to_numpy())
    old = rates_with_intervals(judgements, interval="percentile").set_index(["dataset", "system", "metric"])
    assert not np.allclose(old["low"].to_numpy(), rates["low"].to_numpy())
    assert len(scores.comparisons) == 2 * 3 * 4 and len(scores.rankings) == 2 * 3 * 3


def test_the_plain_metric_functions_on_their_defaults(study: Study) -> None:
    _, mentions, judgements = study
    verdicts = verification_rates(judgements)
    pr = posthoc_precision_recall(judgements).set_index(["dataset", "system"])
    np.testing.assert_allclose(pr["precision"].to_numpy(), verdicts["verification_rate"].to_numpy())
    union = verification_union(judgements)
    assert pr["n_union"].groupby(level="dataset").first().sum() == len(union)
    outcomes = union_outcomes_against_gt(judgements, mentions)
    assert outcomes["count"].sum() == len(union)
    assert set(control_results(judgements).columns) >= {"worker", "pass_rate", "excluded"}
    assert len(agreement_on_intersection(judgements)) > 0
    pre = preannotation_scores(mentions)
    assert pre["precision"].between(0, 1).all()
    gold = corrected_gold(judgements, mentions)
    assert len(gold) > 0 and gold["source"].notna().all()


def test_aggregation_on_its_defaults() -> None:
    _, _, judgements = synthetic_study(10, k=3, seed=12, verify_prob={"GT": 0.9, "E2E": 0.9, "REL": 0.9})
    majority, ds = majority_vote(judgements), dawid_skene(judgements)
    assert len(majority) == len(ds) > 0
    assert (majority == "verify").mean() > 0.8 and (ds == majority).mean() > 0.9


def test_lag1_on_its_defaults_recovers_the_truth_for_both_kinds() -> None:
    binary = fit_lag1(simulate_binary(40, 40, b1=0.8, worker_sd=0.5, seed=13))
    assert binary.kind == "binary" and binary.b1_low <= 0.8 <= binary.b1_high and binary.b1_low > 0
    continuous = fit_lag1(simulate_continuous(30, 60, b1=-0.3, centre=50, offset_sd=10, scale_range=(5, 15),
                                              seed=14))
    assert continuous.kind == "continuous" and continuous.b1_low <= -0.3 <= continuous.b1_high
    assert continuous.b1_high < 0
    table = simulate_binary(30, 21, b1=0.8, seed=15)
    assert lag1_by_subset(table)["subset"].tolist() == ["all", "moderate", "good", "bad"]
    assert len(lag1_by_tertile(table)) == 12


def test_the_study_sequence_test_and_the_other_sequence_analyses_on_their_defaults() -> None:
    table = sequence_table_from_judgements(simulate_task_study(30, 30, b1=0.0, seed=16))
    fit = fit_lag1(table)
    assert fit.kind == "binary" and fit.n == 30 * 29 and fit.b1_low <= 0.0 <= fit.b1_high
    after = scores_after_previous(simulate_continuous(40, 30, seed=17))
    assert abs(after.high_minus_low) < 0.3 and after.means["n"].sum() == 40 * 29
    audit = audit_orders(simulate_continuous(10, 10, seed=18))
    assert not audit.shared_order_warning
