"""CrowdTruth-core's unit fixtures: the known answers of its own tests, and parity with the peer on each file."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from ct_helpers import fixture_config, max_abs_diff, ours, peer_run

from posthoc.crowdtruth.metrics import CrowdTruthResult
from sharedparams import shared_params

FIXTURES = Path(__file__).resolve().parents[3] / "shared" / "data" / "crowdtruth" / "unit_fixtures" / "metrics"
FILES = sorted(p.name for p in FIXTURES.glob("*.csv")) if FIXTURES.is_dir() else []
WHAT = "crowdtruth/unit_fixtures/metrics files"
AGREE = shared_params([f for f in FILES if re.fullmatch(r"\d+work_agr\.csv", f)], what=WHAT)
DISAGREE = shared_params([f for f in FILES if f.endswith("work_disagr.csv")], what=WHAT)
OUTLIER = shared_params([f for f in FILES if f.endswith("work_outlier.csv")], what=WHAT)
INCREMENTAL = shared_params([f for f in FILES if "vs" in f], what=WHAT)
MODES = [pytest.param(False, id="closed"), pytest.param(True, id="open")]


def _run(crowdtruth_data: Path, name: str, open_ended: bool) -> CrowdTruthResult:
    return ours(crowdtruth_data / "unit_fixtures" / "metrics" / name, fixture_config(open_ended=open_ended))


@pytest.mark.parametrize("open_ended", MODES)
@pytest.mark.parametrize("name", AGREE)
def test_all_workers_agree_scores_one(crowdtruth_data: Path, name: str, open_ended: bool) -> None:
    result = _run(crowdtruth_data, name, open_ended)
    assert result.units["uqs"].tolist() == pytest.approx([1.0])
    assert result.workers["wqs"].to_numpy() == pytest.approx(1.0)
    if not open_ended:
        assert result.annotations.set_index("annotation").loc["A", "aqs"] == pytest.approx(1.0)


@pytest.mark.parametrize("open_ended", MODES)
@pytest.mark.parametrize("name", DISAGREE)
def test_all_workers_disagree_scores_zero(crowdtruth_data: Path, name: str, open_ended: bool) -> None:
    result = _run(crowdtruth_data, name, open_ended)
    n_workers = int(name.split("work")[0])
    assert len(result.workers) == n_workers
    assert result.units["uqs"].tolist() == pytest.approx([0.0], abs=1e-7)
    assert result.workers["wqs"].to_numpy() == pytest.approx(0.0, abs=1e-7)
    if not open_ended:
        aqs = result.annotations.set_index("annotation")["aqs"]
        assert aqs.to_numpy() == pytest.approx(0.0, abs=1e-7)


@pytest.mark.parametrize("open_ended", MODES)
@pytest.mark.parametrize("name", OUTLIER)
def test_outlier_worker_scores_zero_and_the_rest_one(crowdtruth_data: Path, name: str, open_ended: bool) -> None:
    result = _run(crowdtruth_data, name, open_ended)
    wqs = result.workers.set_index("worker")["wqs"]
    assert wqs["W1"] == pytest.approx(0.0, abs=1e-7)
    assert wqs.drop("W1").to_numpy() == pytest.approx(1.0)
    assert result.units["uqs"].tolist() == pytest.approx([1.0])
    if not open_ended:
        aqs = result.annotations.set_index("annotation")["aqs"]
        assert aqs["A"] == pytest.approx(0.0, abs=1e-7)
        assert aqs["B"] == pytest.approx(1.0)


@pytest.mark.parametrize("open_ended", MODES)
@pytest.mark.parametrize("name", INCREMENTAL)
def test_more_agreement_scores_higher(crowdtruth_data: Path, name: str, open_ended: bool) -> None:
    result = _run(crowdtruth_data, name, open_ended)
    w = int(name.split("vs")[1].split("work")[0]) + 1  # the peer's test names the files (w-2)vs(w-1)
    wqs = result.workers.set_index("worker")["wqs"]
    uqs = result.units.set_index("unit")["uqs"]
    for x in range(2, w):
        if x != w - 1:
            assert wqs["W1"] == pytest.approx(wqs[f"W{x}"])
        assert wqs[f"W{w}"] == pytest.approx(wqs[f"W{w + x - 1}"])
    assert wqs["W1"] > wqs[f"W{w - 1}"]
    assert wqs[f"W{w}"] > wqs[f"W{2 * w - 1}"]
    assert wqs[f"W{w}"] > wqs["W1"]
    assert uqs["1"] < uqs["2"] < uqs["3"]
    if not open_ended:
        aqs = result.annotations.set_index("annotation")["aqs"]
        assert aqs["B"] < aqs["A"] < aqs["C"] < aqs["E"]
        assert aqs["D"] < aqs["C"]


@pytest.mark.parametrize("open_ended", MODES)
@pytest.mark.parametrize("name", shared_params(FILES, what=WHAT))
def test_fixture_matches_the_peer(crowdtruth_data: Path, name: str, open_ended: bool) -> None:
    path = crowdtruth_data / "unit_fixtures" / "metrics" / name
    result = ours(path, fixture_config(open_ended=open_ended))
    peer = peer_run(str(path), "fixture", open_ended)
    assert max_abs_diff(result.units.set_index("unit")["uqs"], peer["units"]["uqs"]) < 1e-9
    workers = result.workers.set_index("worker")
    assert max_abs_diff(workers["wqs"], peer["workers"]["wqs"]) < 1e-9
    assert max_abs_diff(workers["wua_initial"], peer["workers"]["wsa_initial"]) < 1e-9
    if not open_ended:
        assert max_abs_diff(result.annotations.set_index("annotation")["aqs"], peer["annotations"]["aqs"]) < 1e-9
