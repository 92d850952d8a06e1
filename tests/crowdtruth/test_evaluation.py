"""Seed 002 sections 3.3, 3.4 and 4: hand-worked answers, the RTE tutorial's published F1, simulations."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from ct_helpers import RTE_CONFIG
from scipy.stats import binomtest

from posthoc.crowdtruth import evaluation as ev
from posthoc.crowdtruth.io import read_crowdtruth_csv
from posthoc.crowdtruth.pipeline import run_crowdtruth
from posthoc.crowdtruth.vectors import build_vectors
from posthoc.errors import PosthocInputError


def test_sentence_relation_score_is_the_cosine_with_the_unit_vector() -> None:
    table = pd.DataFrame({"unit": ["s"] * 4, "worker": ["w1", "w2", "w3", "w3"], "annotation": ["a", "a", "b", "a"]})
    vectors = build_vectors(table, annotation_vector=["a", "b", "c"], open_ended=False)
    srs = ev.sentence_relation_scores(vectors).set_index("annotation")["srs"]
    # V_s = (3, 1, 0): srs(a) = 3 / sqrt(10), srs(b) = 1 / sqrt(10), srs(c) = 0
    assert srs["a"] == pytest.approx(3 / math.sqrt(10))
    assert srs["b"] == pytest.approx(1 / math.sqrt(10))
    assert srs["c"] == 0.0
    assert ev.clarity(ev.sentence_relation_scores(vectors))["s"] == pytest.approx(3 / math.sqrt(10))


def test_weighted_precision_recall_f1_by_hand() -> None:
    index = ["u1", "u2", "u3", "u4"]
    predicted = pd.Series([True, True, False, False], index=index)
    reference = pd.Series([True, False, True, False], index=index)
    weights = pd.Series([0.9, 0.5, 0.2, 0.7], index=index)
    got = ev.weighted_prf(predicted, reference, weights)
    assert got["precision"] == pytest.approx(0.9 / 1.4)
    assert got["recall"] == pytest.approx(0.9 / 1.1)
    assert got["f1"] == pytest.approx(0.72)
    plain = ev.weighted_prf(predicted, reference)
    assert (plain["precision"], plain["recall"], plain["f1"]) == pytest.approx((0.5, 0.5, 0.5))


def test_weighted_training_labels_rescale_into_the_papers_intervals() -> None:
    table = pd.DataFrame({"unit": list("abcde"), "annotation": ["r"] * 5, "uas": [0.6, 1.0, 0.8, 0.0, 0.3]})
    labels = ev.weighted_training_labels(table, threshold=0.6)
    assert labels["label"].tolist() == [1, 1, 1, -1, -1]
    assert labels["weight"].tolist() == pytest.approx([0.85, 1.0, 0.925, -1.0, -0.925])
    assert ev.rescale_scores(np.array([0.2, 0.9]), 1.0).tolist() == pytest.approx([-0.97, -0.865])
    with pytest.raises(PosthocInputError):
        ev.rescale_scores(np.array([0.5]), 1.5)


def test_mcnemar_exact_matches_the_binomial_test() -> None:
    index = [f"u{i}" for i in range(12)]
    reference = pd.Series([True] * 12, index=index)
    first = pd.Series([True] * 10 + [False] * 2, index=index)
    second = pd.Series([True] * 3 + [False] * 9, index=index)
    got = ev.mcnemar_test(first, second, reference)
    assert (got["b"], got["c"]) == (7, 0)
    assert got["pvalue"] == pytest.approx(binomtest(0, 7, 0.5).pvalue)
    chi = ev.mcnemar_test(first, second, reference, exact=False)
    assert chi["statistic"] == pytest.approx((abs(7 - 0) - 1) ** 2 / 7)


@pytest.fixture(scope="module")
def rte_run(crowdtruth_data: Path):
    data = read_crowdtruth_csv(crowdtruth_data / "input" / "rte.standardized.csv", RTE_CONFIG)
    gold = data.unit_inputs.set_index("unit")["input.gold"] == "1"
    run = run_crowdtruth(data.judgements, annotation_vector=("0", "1"), open_ended=False,
                         unit_inputs=data.unit_inputs, reference=gold, positive_annotation="1")
    raw = pd.read_csv(crowdtruth_data / "input" / "rte.standardized.csv")
    return run, raw


def test_rte_best_f1_is_the_tutorials_and_beats_every_other_threshold(rte_run) -> None:
    run, _ = rte_run
    sweep = run.tables["threshold_sweep"]
    best = run.summary["best_f1"]
    assert (sweep["f1"] <= best).all()
    assert run.summary["best_threshold"] == pytest.approx(0.52)
    # the CrowdTruth tutorial notebook prints [[0.52, 0.9280397]] for the annotation 'true'
    assert best == pytest.approx(0.9280397, abs=5e-8)
    assert best > run.summary["majority_vote_f1"]


def test_rte_majority_vote_f1_by_hand(rte_run) -> None:
    run, raw = rte_run
    per_unit = raw.groupby("orig_id").agg(yes=("response", "sum"), n=("response", "size"), gold=("gold", "first"))
    predicted = per_unit["yes"] * 2 >= per_unit["n"]
    truth = per_unit["gold"] == 1
    tp = int((predicted & truth).sum())
    fp = int((predicted & ~truth).sum())
    fn = int((~predicted & truth).sum())
    assert run.summary["majority_vote_f1"] == 2 * tp / (2 * tp + fp + fn)
    assert run.summary["majority_vote_f1"] == pytest.approx(0.8853211009174312)  # the notebook's value


def test_rte_weighted_labels_cover_every_unit_annotation(rte_run) -> None:
    run, _ = rte_run
    labels = run.tables["weighted_labels"]
    assert len(labels) == 1600
    positive = labels["label"] == 1
    assert labels.loc[positive, "weight"].between(0.85, 1.0).all()
    assert labels.loc[~positive, "weight"].between(-1.0, -0.85).all()
    assert (labels.loc[positive, "score"] >= run.summary["label_threshold"]).all()


def _simulated_task(seed: int) -> pd.DataFrame:
    """Eight careful workers label 12 units with their true relation; one spammer answers at random."""
    rng = np.random.default_rng(seed)
    truth = rng.choice(["a", "b", "c"], size=12)
    rows = [(f"u{u}", f"good{w}", truth[u]) for u in range(12) for w in range(8)]
    rows += [(f"u{u}", "spammer", rng.choice(["a", "b", "c"])) for u in range(12)]
    return pd.DataFrame(rows, columns=["unit", "worker", "annotation"])


def test_filtering_removes_the_spammer_and_rescoring_raises_unit_quality() -> None:
    vectors = build_vectors(_simulated_task(7), annotation_vector=["a", "b", "c"], open_ended=False)
    filtered = ev.filter_and_rescore(vectors, worker_threshold=0.5)
    assert filtered.dropped_workers["worker"].tolist() == ["spammer"]
    assert "spammer" not in set(filtered.result.workers["worker"])
    assert filtered.result.units["uqs"].to_numpy() == pytest.approx(1.0)


def test_filtering_drops_units_one_sd_below_the_mean() -> None:
    rows = [(f"u{u}", f"w{w}", "a") for u in range(5) for w in range(6)]
    rows += [("split", f"w{w}", "a" if w < 3 else "b") for w in range(6)]
    vectors = build_vectors(pd.DataFrame(rows, columns=["unit", "worker", "annotation"]),
                            annotation_vector=["a", "b"], open_ended=False)
    filtered = ev.filter_and_rescore(vectors, worker_threshold=0.0)
    assert filtered.dropped_units["unit"].tolist() == ["split"]
    assert filtered.dropped_workers.empty
    assert set(filtered.result.units["unit"]) == {"u0", "u1", "u2", "u3", "u4", "split"}


def test_threshold_sweep_rejects_disjoint_reference() -> None:
    with pytest.raises(PosthocInputError, match="share no unit"):
        ev.threshold_sweep(pd.Series([0.5], index=["a"]), pd.Series([True], index=["b"]))
