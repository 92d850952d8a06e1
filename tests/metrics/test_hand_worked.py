"""Every number of the tiny study (tests/metrics/conftest.py) worked by hand from seed 000's definitions."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from posthoc.metrics import (
    ScoringOptions,
    agreement_on_intersection,
    classify_against_gt,
    control_results,
    corrected_gold,
    outcome_shares,
    posthoc_precision_recall,
    preannotation_scores,
    score_judgements,
    union_outcomes_against_gt,
    verification_rates,
    verification_union,
)

W = "https://en.wikipedia.org/wiki/"


def _without_c(judgements: pd.DataFrame) -> pd.DataFrame:
    return judgements.loc[judgements["worker"] != "c"]


def _value(table: pd.DataFrame, **where: object) -> pd.Series:
    mask = pd.Series(True, index=table.index)
    for column, value in where.items():
        mask &= table[column] == value
    assert mask.sum() == 1, f"expected one row for {where}"
    return table.loc[mask].iloc[0]


def test_verification_rates(tiny_judgements):
    rates = verification_rates(_without_c(tiny_judgements))
    # GT: 3 judged, d1 L1 and d2 L3 verified -> 2/3; S: 7 judged, 5 verified (L5 removed, L6 edited) -> 5/7
    assert _value(rates, system="GT")["verification_rate"] == pytest.approx(2 / 3)
    assert _value(rates, system="S")[["n_annotations", "n_verified"]].tolist() == [7, 5]
    assert _value(rates, system="S")["verification_rate"] == pytest.approx(5 / 7)


def test_verification_union_counts_verified_only(tiny_judgements):
    union = verification_union(_without_c(tiny_judgements))
    # d1 L1 (GT and S), d2 L3 (GT), d1 [10,20) L2, d1 [3,12) L9, d2 L4, d2 L7 (S): 6; edits are not verified
    assert len(union) == 6
    both = _value(union, doc_id="d1", start=0, end=5)
    assert (both["n_systems"], both["systems"]) == (2, "GT,S")
    assert (
        not ((union["link"] == W + "L2b") | (union["link"] == W + "L2"))
        .loc[union["start"] == 10]
        .loc[union["end"] == 15]
        .any()
    )


def test_posthoc_precision_recall_f1(tiny_judgements):
    table = posthoc_precision_recall(_without_c(tiny_judgements))
    gt, s = _value(table, system="GT"), _value(table, system="S")
    # recall = |V(m,d)| / |V(d)|: GT 2/6, S 5/6
    # F1: GT 2 (2/3)(1/3) / (2/3 + 1/3) = 4/9; S 2 (5/7)(5/6) / (5/7 + 5/6) = 10/13
    assert gt["n_union"] == s["n_union"] == 6
    assert (gt["precision"], gt["recall"], gt["f1"]) == pytest.approx((2 / 3, 1 / 3, 4 / 9))
    assert (s["precision"], s["recall"], s["f1"]) == pytest.approx((5 / 7, 5 / 6, 10 / 13))


def test_outcome_shares(tiny_judgements):
    shares = outcome_shares(_without_c(tiny_judgements))
    # GT: verify 2, edit 1, remove 0 of 3; S: verify 5, edit 1, remove 1 of 7
    assert _value(shares, system="GT", outcome="remove")[["count", "share"]].tolist() == [0, 0.0]
    assert _value(shares, system="GT", outcome="edit")["share"] == pytest.approx(1 / 3)
    assert _value(shares, system="S", outcome="verify")["share"] == pytest.approx(5 / 7)
    assert _value(shares, system="S", outcome="remove")["count"] == 1
    assert len(shares) == 6


def test_union_outcomes_a_to_e(tiny_judgements, tiny_mentions):
    table = union_outcomes_against_gt(_without_c(tiny_judgements), tiny_mentions)
    # A: d1 L1, d2 L3; B: d2 [0,4) L4; C: d1 [10,20) L2; D: d1 [3,12) L9; E: d2 [40,45) L7
    assert dict(zip(table["outcome"], table["count"], strict=True)) == {"A": 2, "B": 1, "C": 1, "D": 1, "E": 1}
    assert table["share"].tolist() == pytest.approx([2 / 6, 1 / 6, 1 / 6, 1 / 6, 1 / 6])


def test_classify_precedence():
    gt = pd.DataFrame({"dataset": "D", "doc_id": "d", "start": [0, 0, 10], "end": [5, 5, 20], "link": ["a", "b", "c"]})
    probe = pd.DataFrame(
        {"dataset": "D", "doc_id": ["d", "d", "d", "d", "d", "x"], "start": [0, 0, 2, 12, 30, 0],
         "end": [5, 5, 12, 14, 31, 5], "link": ["b", "z", "c", "z", "a", "a"]}
    )  # fmt: skip
    # [0,5) b: same span and link -> A even though [0,5) a also exists; [0,5) z -> B;
    # [2,12) c overlaps [10,20) c -> C; [12,14) z overlaps [10,20) only -> D; [30,31) -> E; other document -> E
    assert classify_against_gt(probe, gt).tolist() == ["A", "B", "C", "D", "E", "E"]


def test_agreement_on_intersection(tiny_judgements):
    table = agreement_on_intersection(_without_c(tiny_judgements))
    # only d1 [0,5) L1 is in both GT and S; judged twice, verified twice
    assert table.to_dict("records") == [{"dataset": "D", "n_judges": 2, "n_verified": 2, "count": 1}]


def test_preannotation_strict_and_overlap(tiny_mentions):
    table = preannotation_scores(tiny_mentions)
    assert set(table["system"]) == {"S"}
    micro_strict = _value(table, matching="strict", averaging="micro")
    # strict: only d1 [0,5) L1 matches: P = 1/7, R = 1/3, F1 = 2 (1/21) / (10/21) = 0.2
    assert (micro_strict["precision"], micro_strict["recall"], micro_strict["f1"]) == pytest.approx((1 / 7, 1 / 3, 0.2))
    micro_overlap = _value(table, matching="overlap", averaging="micro")
    # overlap: S [10,20) L2 also counts and finds GT [10,15) L2: P = 2/7, R = 2/3, F1 = 0.4
    assert (micro_overlap["precision"], micro_overlap["recall"], micro_overlap["f1"]) == pytest.approx(
        (2 / 7, 2 / 3, 0.4)
    )
    macro_strict = _value(table, matching="strict", averaging="macro")
    # d1: P 1/3, R 1/2, F1 0.4; d2: 0, 0, 0 -> means 1/6, 1/4, 0.2
    assert (macro_strict["precision"], macro_strict["recall"], macro_strict["f1"]) == pytest.approx((1 / 6, 1 / 4, 0.2))
    macro_overlap = _value(table, matching="overlap", averaging="macro")
    # d1: P 2/3, R 1, F1 0.8; d2: 0 -> 1/3, 1/2, 0.4
    assert (macro_overlap["precision"], macro_overlap["recall"], macro_overlap["f1"]) == pytest.approx(
        (1 / 3, 1 / 2, 0.4)
    )
    assert micro_strict["n_documents"] == 2


def test_macro_leaves_out_documents_where_both_are_empty(tiny_mentions):
    extra = tiny_mentions.iloc[[0]].assign(doc_id="d3", system="T")  # d3 has only system T
    table = preannotation_scores(pd.concat([tiny_mentions, extra], ignore_index=True))
    s = _value(table, system="S", matching="strict", averaging="macro")
    # d3: neither GT nor S -> out of S's scope; still 1/6 over d1, d2
    assert (s["precision"], s["n_documents"]) == (pytest.approx(1 / 6), 2)
    t = _value(table, system="T", matching="strict", averaging="macro")
    # T: d1, d2 have GT and no T (P 0, R 0), d3 has T and no GT (P 0, R 0) -> 0 over 3 documents
    assert (t["precision"], t["recall"], t["n_documents"]) == (0.0, 0.0, 3)


def test_controls_and_exclusion(tiny_judgements):
    table = control_results(tiny_judgements).set_index("worker")
    assert table.loc["c", ["n_control", "n_passed"]].tolist() == [3, 2]
    assert table.loc["c", "pass_rate"] == pytest.approx(2 / 3)
    assert bool(table.loc["c", "excluded"]) and not bool(table.loc["g", "excluded"])
    assert table.loc["s", "n_control"] == 0 and math.isnan(table.loc["s", "pass_rate"])
    assert not control_results(tiny_judgements, pass_threshold=0.6).set_index("worker").loc["c", "excluded"]


def test_corrected_gold(tiny_judgements, tiny_mentions):
    gold = corrected_gold(_without_c(tiny_judgements), tiny_mentions)
    got = list(zip(gold["doc_id"], gold["start"], gold["end"], gold["link"], gold["source"], strict=True))
    # GT kept (verified), GT d1 [10,15) edited to L2b, S's verified d2 [40,45) L7 is missing from GT (E) -> added
    assert got == [
        ("d1", 0, 5, W + "L1", "verified"),
        ("d1", 10, 15, W + "L2b", "edited"),
        ("d2", 0, 4, W + "L3", "verified"),
        ("d2", 40, 45, W + "L7", "added_verified"),
    ]
    assert set(gold["system"]) == {"GT"}
    without = corrected_gold(_without_c(tiny_judgements), tiny_mentions, add_missing=False)
    assert len(without) == 3


def test_score_judgements_excludes_the_failing_worker(tiny_judgements, tiny_mentions):
    scores = score_judgements(tiny_judgements, tiny_mentions, options=ScoringOptions(n_resamples=200, seed=3))
    rates = scores.rates
    assert _value(rates, system="S", metric="verification_rate")["value"] == pytest.approx(5 / 7)
    assert _value(rates, system="S", metric="posthoc_recall")[["value", "n"]].tolist() == [pytest.approx(5 / 6), 6]
    assert _value(rates, system="GT", metric="posthoc_f1")["value"] == pytest.approx(4 / 9)
    exclusions = scores.exclusions.set_index("kind")
    assert exclusions.loc["control_rows", "count"] == 6
    assert (exclusions.loc["failing_worker", "worker"], exclusions.loc["failing_worker", "count"]) == ("c", 1)
    assert scores.summary["n_excluded_workers"] == 1 and scores.summary["n_judgements"] == 10


def test_keeping_the_failing_worker_makes_a_tie(tiny_judgements, tiny_mentions):
    kept = score_judgements(tiny_judgements, tiny_mentions,
                            options=ScoringOptions(n_resamples=0, exclude_failing_workers=False))
    # S d2 L5: s removed, c verified -> 1 of 2 is not a majority: still 5/7; the verify share is 6/8 judgements
    assert _value(kept.rates, system="S", metric="verification_rate")["value"] == pytest.approx(5 / 7)
    assert _value(kept.rates, system="S", metric="verify_share")[["value", "n"]].tolist() == [0.75, 8]
    tie = score_judgements(
        tiny_judgements, tiny_mentions,
        options=ScoringOptions(n_resamples=0, exclude_failing_workers=False, ties_verified=True)
    )
    # counted as verified: 6/7, and the union grows to 7
    assert _value(tie.rates, system="S", metric="verification_rate")["value"] == pytest.approx(6 / 7)
    assert _value(tie.rates, system="S", metric="posthoc_recall")["n"] == 7


def test_bootstrap_bounds_by_hand(tiny_judgements, tiny_mentions):
    rates = score_judgements(tiny_judgements, tiny_mentions, options=ScoringOptions(n_resamples=1000, seed=0)).rates
    # Two documents resampled within D: {d1,d1}, {d1,d2}, {d2,d2} with chances 1/4, 1/2, 1/4.
    # GT rate: d1 1 of 2, d2 1 of 1 -> 2/4, 2/3 or 2/2: the 2.5% / 97.5% quantiles are 0.5 and 1.
    gt = _value(rates, system="GT", metric="verification_rate")
    assert (gt["low"], gt["high"]) == (0.5, 1.0)
    # S rate: d1 3 of 3, d2 2 of 4 -> 6/6 or 4/8 at the extremes
    s = _value(rates, system="S", metric="verification_rate")
    assert (s["low"], s["high"]) == (0.5, 1.0)
    # GT recall: 1 verified of 3 union annotations in each document -> always 1/3
    recall = _value(rates, system="GT", metric="posthoc_recall")
    assert (recall["low"], recall["high"]) == pytest.approx((1 / 3, 1 / 3))
