"""Parity with the peer: published reference outputs (1e-9) and the PyPI package ``crowdtruth`` 2.1 run here."""

from __future__ import annotations

import ast
from pathlib import Path

import pandas as pd
import pytest
from ct_helpers import CASES, RTE_CONFIG, max_abs_diff, ours, peer_run, uas_from_counters

TOLERANCE = 1e-9
RELEX = [case for case, (_, _, ref) in CASES.items() if ref]
PEER_CASES = list(CASES)
UNIT_SCORES = ("uqs", "uqs_initial")
WORKER_SCORES = (("wqs", "wqs"), ("wwa", "wwa"), ("wua", "wsa"), ("wqs_initial", "wqs_initial"),
                 ("wwa_initial", "wwa_initial"), ("wua_initial", "wsa_initial"))


def _counters(text: pd.Series) -> pd.Series:
    return text.map(lambda s: ast.literal_eval(s[len("Counter("):-1]))


@pytest.mark.parametrize("case", RELEX)
def test_relex_units_match_published(crowdtruth_data: Path, case: str) -> None:
    file, config, ref = CASES[case]
    result = ours(crowdtruth_data / "input" / file, config)
    published = pd.read_csv(crowdtruth_data / "reference_outputs" / f"{ref}-units.csv", dtype={"unit": str})
    published = published.set_index("unit")
    units = result.units.set_index("unit")
    for column in UNIT_SCORES:
        assert max_abs_diff(units[column], published[column]) < TOLERANCE, column
    ua = result.unit_annotations.set_index(["unit", "annotation"])
    for column, ref_column in (("uas", "unit_annotation_score"), ("uas_initial", "unit_annotation_score_initial")):
        expected = uas_from_counters(_counters(published[ref_column]))
        got = ua[column]
        got.index = got.index.map(lambda k: (str(k[0]), str(k[1])))
        assert max_abs_diff(got, expected) < TOLERANCE, column


@pytest.mark.parametrize("case", RELEX)
def test_relex_workers_match_published(crowdtruth_data: Path, case: str) -> None:
    file, config, ref = CASES[case]
    result = ours(crowdtruth_data / "input" / file, config)
    published = pd.read_csv(crowdtruth_data / "reference_outputs" / f"{ref}-workers.csv", dtype={"worker": str})
    published = published.set_index("worker")
    workers = result.workers.set_index("worker")
    for column, ref_column in WORKER_SCORES:
        assert max_abs_diff(workers[column], published[ref_column]) < TOLERANCE, column


@pytest.mark.parametrize("case", RELEX)
def test_relex_annotations_match_published(crowdtruth_data: Path, case: str) -> None:
    file, config, ref = CASES[case]
    result = ours(crowdtruth_data / "input" / file, config)
    published = pd.read_csv(crowdtruth_data / "reference_outputs" / f"{ref}-annotations.csv", index_col=0)
    published.index = published.index.map(lambda a: str(a).lower())
    annotations = result.annotations.set_index("annotation")
    for column in ("aqs", "aqs_initial"):
        assert max_abs_diff(annotations[column], published[column]) < TOLERANCE, column


@pytest.fixture(scope="module")
def rte(crowdtruth_data: Path):
    return ours(crowdtruth_data / "input" / "rte.standardized.csv", RTE_CONFIG)


def test_rte_units_match_published(crowdtruth_data: Path, rte) -> None:
    published = pd.read_csv(crowdtruth_data / "reference_outputs" / "crowdtruth_units_rte.csv", dtype={"orig_id": str})
    published = published.set_index("orig_id")
    units = rte.units.set_index("unit")
    for column in UNIT_SCORES:
        assert max_abs_diff(units[column], published[column]) < TOLERANCE, column
    wide = rte.unit_annotations.pivot(index="unit", columns="annotation", values="uas")
    wide_initial = rte.unit_annotations.pivot(index="unit", columns="annotation", values="uas_initial")
    assert max_abs_diff(wide["1"], published["true"]) < TOLERANCE
    assert max_abs_diff(wide["0"], published["false"]) < TOLERANCE
    assert max_abs_diff(wide_initial["1"], published["true_initial"]) < TOLERANCE
    assert max_abs_diff(wide_initial["0"], published["false_initial"]) < TOLERANCE


def test_rte_workers_match_published(crowdtruth_data: Path, rte) -> None:
    published = pd.read_csv(crowdtruth_data / "reference_outputs" / "crowdtruth_workers_rte.csv").set_index("worker")
    workers = rte.workers.set_index("worker")
    for column, ref_column in WORKER_SCORES:
        assert max_abs_diff(workers[column], published[ref_column]) < TOLERANCE, column


def test_rte_annotations_match_the_notebook(rte) -> None:
    # the tutorial notebook prints aqs 0.706485 / 0.793250 and aqs_initial 0.616694 / 0.715569 (6 decimals)
    annotations = rte.annotations.set_index("annotation")
    assert annotations.loc["0", "aqs"] == pytest.approx(0.706485, abs=5e-7)
    assert annotations.loc["1", "aqs"] == pytest.approx(0.793250, abs=5e-7)
    assert annotations.loc["0", "aqs_initial"] == pytest.approx(0.616694, abs=5e-7)
    assert annotations.loc["1", "aqs_initial"] == pytest.approx(0.715569, abs=5e-7)


@pytest.mark.parametrize("case", PEER_CASES)
def test_matches_the_peer_run_here(crowdtruth_data: Path, case: str) -> None:
    file, config, _ = CASES[case]
    path = crowdtruth_data / "input" / file
    result = ours(path, config)
    peer = peer_run(str(path), case)
    units, workers = result.units.set_index("unit"), result.workers.set_index("worker")
    for column in UNIT_SCORES:
        assert max_abs_diff(units[column], peer["units"][column]) < TOLERANCE, column
    for column, ref_column in WORKER_SCORES:
        assert max_abs_diff(workers[column], peer["workers"][ref_column]) < TOLERANCE, column
    for column, ref_column in (("uas", "unit_annotation_score"), ("uas_initial", "unit_annotation_score_initial")):
        got = result.unit_annotations.set_index(["unit", "annotation"])[column]
        got.index = got.index.map(lambda k: (str(k[0]), str(k[1])))
        assert max_abs_diff(got, uas_from_counters(peer["units"][ref_column])) < TOLERANCE, column
    if not config.open_ended:
        annotations = result.annotations.set_index("annotation")
        for column in ("aqs", "aqs_initial"):
            assert max_abs_diff(annotations[column], peer["annotations"][column]) < TOLERANCE, column
