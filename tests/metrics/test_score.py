"""score_judgements as a whole: the Scores contract, determinism, options and input validation."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from posthoc.errors import PosthocInputError
from posthoc.metrics import RATE_METRICS, ScoringOptions, score_judgements, verification_rates
from posthoc.scores import TABLE_NAMES
from posthoc.synthetic import synthetic_study
from posthoc.tables import MENTION_COLUMNS

#: The columns posthoc/scores.py documents for every table.
CONTRACT = {
    "rates": ["dataset", "system", "metric", "value", "low", "high", "n"],
    "preannotation": [
        "dataset", "system", "matching", "averaging", "precision", "recall", "f1",
        "low_precision", "high_precision", "low_recall", "high_recall",
    ],
    "outcome_counts": ["dataset", "system", "outcome", "count", "share"],
    "agreement": ["dataset", "n_judges", "n_verified", "count"],
    "union_outcomes": ["dataset", "outcome", "count", "share"],
    "controls": ["worker", "n_control", "n_passed", "pass_rate", "excluded"],
    "exclusions": ["kind", "worker", "task_key", "detail", "count"],
    "reliability": ["dataset", "measure", "value", "n_items"],
    "aggregated": ["mention_id", "dataset", "system", "n_judges", "majority", "dawid_skene"],
}  # fmt: skip


@pytest.fixture(scope="module")
def study():
    _, mentions, judgements = synthetic_study(15, seed=21, failing_worker_share=0.25)
    return mentions, judgements


@pytest.fixture(scope="module")
def scored(study):
    mentions, judgements = study
    return score_judgements(judgements, mentions, options=ScoringOptions(n_resamples=300, seed=5))


def test_every_table_has_the_contract_columns(scored):
    tables = scored.tables()
    assert tuple(tables) == TABLE_NAMES
    for name, columns in CONTRACT.items():
        assert list(tables[name].columns) == columns, name
    assert list(scored.corrected_gold.columns) == [*MENTION_COLUMNS, "source"]


def test_rates_rows_and_bounds(scored):
    rates = scored.rates
    assert set(rates["metric"]) == set(RATE_METRICS)
    assert len(rates) == 2 * 3 * len(RATE_METRICS)  # 2 datasets x 3 systems
    inside = (rates["low"] <= rates["value"] + 1e-12) & (rates["value"] <= rates["high"] + 1e-12)
    assert inside.all()
    pivot = rates.pivot_table(index=["dataset", "system"], columns="metric", values="value")
    np.testing.assert_allclose(pivot["verification_rate"], pivot["posthoc_precision"])
    np.testing.assert_allclose(pivot[["verify_share", "edit_share", "remove_share"]].sum(axis=1), 1.0)


def test_failing_workers_are_excluded_and_listed(study, scored):
    mentions, judgements = study
    failing = set(scored.controls.loc[scored.controls["excluded"], "worker"])
    assert failing, "the synthetic study has click-through workers"
    listed = set(scored.exclusions.loc[scored.exclusions["kind"] == "failing_worker", "worker"])
    assert listed == failing
    kept = judgements.loc[~judgements["worker"].isin(failing)]
    expected = verification_rates(kept).set_index(["dataset", "system"])["verification_rate"]
    got = scored.rates.loc[scored.rates["metric"] == "verification_rate"].set_index(["dataset", "system"])["value"]
    pd.testing.assert_series_equal(got.sort_index(), expected.sort_index(), check_names=False)
    # click-through workers verify everything: keeping them raises the rates
    everyone = score_judgements(judgements, mentions,
                                options=ScoringOptions(n_resamples=0, exclude_failing_workers=False))
    assert not everyone.controls["excluded"].any()
    assert everyone.summary["n_judgements"] > scored.summary["n_judgements"]


def test_same_seed_same_tables_and_summary(study, scored):
    mentions, judgements = study
    again = score_judgements(judgements, mentions, options=ScoringOptions(n_resamples=300, seed=5))
    for name in TABLE_NAMES:
        pd.testing.assert_frame_equal(getattr(again, name), getattr(scored, name), check_exact=True)
    assert json.dumps(again.summary, sort_keys=True) == json.dumps(scored.summary, sort_keys=True)
    other = score_judgements(judgements, mentions, options=ScoringOptions(n_resamples=300, seed=6))
    assert not np.allclose(other.rates["low"], scored.rates["low"], equal_nan=True)


def test_row_order_does_not_change_the_scores(study, scored):
    mentions, judgements = study
    shuffled = judgements.sample(frac=1.0, random_state=np.random.RandomState(0))
    again = score_judgements(shuffled, mentions.iloc[::-1], options=ScoringOptions(n_resamples=300, seed=5))
    pd.testing.assert_frame_equal(again.rates, scored.rates)
    pd.testing.assert_frame_equal(again.preannotation, scored.preannotation)


def test_summary_is_json_and_states_the_options(scored):
    summary = json.loads(json.dumps(scored.summary, allow_nan=False))
    assert summary["resample_unit"] == "doc_id" and summary["n_resamples"] == 300 and summary["seed"] == 5
    assert summary["confidence"] == 0.95 and summary["study"] == "synthetic"
    entry = summary["datasets"]["SYN-A"]
    assert set(entry["systems"]) == {"GT", "E2E", "REL"}
    strict = scored.preannotation.query("dataset == 'SYN-A' and system == 'E2E' and matching == 'strict'")
    micro = strict.loc[strict["averaging"] == "micro"].iloc[0]
    assert entry["systems"]["E2E"]["preannotation_strict_micro"]["precision"] == micro["precision"]
    assert "preannotation_strict_micro" not in entry["systems"]["GT"]
    assert entry["verification_union"] == int(
        scored.rates.query("dataset == 'SYN-A' and metric == 'posthoc_recall'")["n"].iloc[0]
    )


def test_union_outcomes_and_agreement_totals(scored):
    union_sizes = scored.rates.loc[scored.rates["metric"] == "posthoc_recall"].groupby("dataset")["n"].first()
    totals = scored.union_outcomes.groupby("dataset")["count"].sum()
    pd.testing.assert_series_equal(totals, union_sizes, check_names=False)
    assert (scored.agreement["n_verified"] <= scored.agreement["n_judges"]).all()


def _one_bad(judgements: pd.DataFrame, column: str, value: object) -> pd.DataFrame:
    bad = judgements.copy()
    bad[column] = bad[column].astype(object)
    bad.loc[bad.index[2], column] = value
    return bad


def test_unknown_outcome_names_the_column_and_values(study):
    mentions, judgements = study
    with pytest.raises(PosthocInputError, match=r"outcome.*'accept'"):
        score_judgements(_one_bad(judgements, "outcome", "accept"), mentions, options=ScoringOptions(n_resamples=0))


def test_missing_columns_are_named(study):
    mentions, judgements = study
    with pytest.raises(PosthocInputError, match=r"judgements table lacks column.*worker"):
        score_judgements(judgements.drop(columns=["worker"]), mentions, options=ScoringOptions(n_resamples=0))
    with pytest.raises(PosthocInputError, match=r"mentions table lacks column.*link"):
        score_judgements(judgements, mentions.drop(columns=["link"]), options=ScoringOptions(n_resamples=0))


def test_bad_offsets_and_options_are_input_errors(study):
    mentions, judgements = study
    with pytest.raises(PosthocInputError, match=r"column start.*'x'"):
        score_judgements(_one_bad(judgements, "start", "x"), mentions, options=ScoringOptions(n_resamples=0))
    with pytest.raises(PosthocInputError, match="expected_outcome"):
        bad = judgements.copy()
        bad.loc[bad["is_control"], "expected_outcome"] = "maybe"
        score_judgements(bad, mentions, options=ScoringOptions(n_resamples=0))
    for options in ({"n_resamples": -1}, {"confidence": 1.5}, {"resample_unit": "page"}):
        with pytest.raises(PosthocInputError):
            score_judgements(judgements, mentions, options=ScoringOptions(**options))


@pytest.mark.parametrize("unit", ["task", "annotation", "worker"])
def test_other_units_are_stated_and_change_only_the_bounds(study, scored, unit):
    mentions, judgements = study
    other = score_judgements(judgements, mentions, options=ScoringOptions(n_resamples=300, seed=5, resample_unit=unit))
    assert other.summary["resample_unit"] == unit
    np.testing.assert_allclose(other.rates["value"], scored.rates["value"])
    pd.testing.assert_frame_equal(other.preannotation, scored.preannotation)  # always documents


def test_a_study_with_nothing_judged_yet_gives_empty_tables_with_the_contract_columns(study):
    mentions, judgements = study
    scores = score_judgements(judgements.loc[judgements["is_control"]], mentions,
                              options=ScoringOptions(n_resamples=10))
    for name, columns in CONTRACT.items():
        assert list(getattr(scores, name).columns) == columns, name
    assert scores.rates.empty and scores.union_outcomes.empty and scores.agreement.empty
    assert scores.summary["n_judgements"] == 0 and scores.summary["datasets"] == {}
    assert not scores.preannotation.empty  # pre-annotation needs only the mentions
