"""The reuse check (issue 46): agreement across tasks against within one task, worked by hand and on simulated studies
whose truth is known (context changes verdicts or it does not)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from posthoc.metrics import ScoringOptions, score_judgements
from posthoc.metrics.reuse import reuse_check
from posthoc.scores import REUSE_COLUMNS
from posthoc.synthetic import synthetic_study

COLUMNS = ["dataset", "doc_id", "system", "start", "end", "link", "worker", "outcome"]


def test_pairs_are_counted_by_hand():
    # Paris: A by w1 verify, w2 verify; B by w3 verify, w1 remove (w1 judged it twice: its pair across tasks is not
    # counted). Pairs: 6 in all; within A 1 (agree), within B 1 (disagree); across: w1-w3, w1-w1 (same worker: out),
    # w2-w3, w2-w1 -> 3 pairs, agreeing w1(verify)-w3 and w2-w3: 2 of 3. Seine: A only (not shared).
    rows = pd.DataFrame([("d", "1", s, 0, 5, link, w, o) for s, link, w, o in [
        ("A", "Paris", "w1", "verify"), ("A", "Paris", "w2", "verify"), ("B", "Paris", "w3", "verify"),
        ("B", "Paris", "w1", "remove"), ("A", "Seine", "w1", "verify"), ("A", "Seine", "w2", "remove")]],
        columns=COLUMNS)
    table = reuse_check(rows)
    assert list(table.columns) == REUSE_COLUMNS
    row = table.iloc[0]
    assert (row["n_shared"], row["cross_pairs"], row["within_pairs"]) == (1, 3.0, 2.0)
    assert row["cross_agreement"] == pytest.approx(2 / 3) and row["within_agreement"] == pytest.approx(1 / 2)
    assert row["difference"] == pytest.approx(1 / 2 - 2 / 3)
    assert row["baseline"] == "replicates" and row["decision"] == "not shown"  # one document: no interval


def test_without_replicates_the_control_annotations_are_the_baseline():
    rows = pd.DataFrame([("d", "1", s, 0, 5, "Paris", w, "verify", False) for s, w in [("A", "w1"), ("B", "w2")]]
                        + [("d", "control", "GT", 0, 5, "Lyon", w, o, True) for w, o in
                           [("w1", "verify"), ("w2", "verify"), ("w3", "edit")]],
                        columns=[*COLUMNS, "is_control"])
    row = reuse_check(rows).iloc[0]
    # controls: 3 pairs of workers on Lyon, 1 agreeing
    assert (row["baseline"], row["within_pairs"], row["within_agreement"]) == ("controls", 3.0, pytest.approx(1 / 3))
    assert (row["cross_pairs"], row["cross_agreement"]) == (1.0, 1.0)
    assert reuse_check(rows.loc[~rows["is_control"]]).iloc[0]["baseline"] == "none"


def test_no_shared_annotation_gives_an_empty_typed_table():
    rows = pd.DataFrame([("d", "1", "A", 0, 5, "Paris", "w1", "verify")], columns=COLUMNS)
    table = reuse_check(rows)
    assert table.empty and list(table.columns) == REUSE_COLUMNS


SAME = {"GT": 0.85, "E2E": 0.85, "REL": 0.85}
CONTEXT = {"GT": 0.95, "E2E": 0.5, "REL": 0.5}  # one annotation, judged more harshly in E2E's and REL's tasks


def _study(verify, seed, *, n_docs=40, k=3):
    return synthetic_study(n_docs, datasets=("SIM",), k=k, verify_prob=verify, edit_prob=dict.fromkeys(verify, 0.05),
                           n_control=0, doc_effect_sd=0.7, seed=seed)[2]


def test_where_context_does_not_matter_reuse_is_allowed_and_the_intervals_cover_zero():
    """Every system's task gives an annotation the same verdict probabilities (a document's difficulty shared): the
    true agreement difference and every shift are 0. 20 studies of 200 documents, k = 3: 0 inside the agreement's 90%
    interval in >= 15 and reuse allowed in >= 14 (the rule asks every pair's shift interval inside -+0.05)."""
    rows = [reuse_check(_study(SAME, seed, n_docs=200)).iloc[0] for seed in range(20)]
    assert sum(row["ci_low"] <= 0 <= row["ci_high"] for row in rows) >= 15
    assert [row["decision"] for row in rows].count("reuse") >= 14


def test_with_one_judge_the_shift_alone_decides():
    """k = 1: no replicate baseline; with 800 documents and no context effect the shifts are inside the margin (reuse
    in >= 4 of 5), with a context effect outside it (caught in 5 of 5 at 40 documents)."""
    same = [reuse_check(_study(SAME, seed, n_docs=800, k=1)).iloc[0] for seed in range(5)]
    assert all(row["baseline"] == "none" for row in same)
    assert [row["decision"] for row in same].count("reuse") >= 4
    context = [reuse_check(_study(CONTEXT, seed, k=1)).iloc[0] for seed in range(5)]
    assert all(row["decision"] == "context changes verdicts" for row in context)


def test_where_context_changes_verdicts_the_check_catches_it():
    """The same annotation verified with probability 0.95 in GT's task and 0.5 in E2E's and REL's: within - cross
    agreement is about 0.13 (worked from the outcome probabilities) and GT - E2E's shift about 0.45, both far above the
    margin; caught in >= 19 of 20."""
    rows = [reuse_check(_study(CONTEXT, seed)).iloc[0] for seed in range(20)]
    assert [row["decision"] for row in rows].count("context changes verdicts") >= 19
    assert float(np.median([row["difference"] for row in rows])) == pytest.approx(0.13, abs=0.04)
    assert float(np.median([abs(row["shift"]) for row in rows])) == pytest.approx(0.45, abs=0.06)


def test_the_score_has_the_reuse_table_and_the_report_its_section():
    from posthoc.report.study_report import build_report

    _, mentions, judgements = synthetic_study(15, k=3, seed=4)
    scores = score_judgements(judgements, mentions, options=ScoringOptions(n_resamples=50))
    assert list(scores.reuse.columns) == REUSE_COLUMNS and set(scores.reuse["dataset"]) == {"SYN-A", "SYN-B"}
    pd.testing.assert_frame_equal(scores.reuse, reuse_check(judgements))  # no failing worker here
    assert "Reusing verdicts across tasks" in build_report(scores)
