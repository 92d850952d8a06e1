"""Readers of sequence tables, the judgements adapter, and `posthoc sequence` end to end."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

from posthoc.errors import PosthocInputError
from posthoc.sequence import fit_lag1, lagged_design, read_sequence_csv, read_snow_rte, sequence_table_from_judgements
from posthoc.sequence.simulate import simulate_binary, simulate_continuous
from posthoc.validity.sequence import simulate_task_study


def _posthoc(*args: str) -> subprocess.CompletedProcess[str]:
    code = "from posthoc.cli.main import main; main()"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, check=False)


def test_read_sequence_csv_maps_columns(tmp_path: Path) -> None:
    path = tmp_path / "t.tsv"
    path.write_text("who\twhat\twhen\tsaid\ttruth\nA\tx\t1\t1\t1\nA\ty\t0\t0\t1\nB\tx\t0\t1\t1\n", encoding="utf-8")
    table = read_sequence_csv(path, worker="who", item="what", position="when", label="said", gold="truth",
                              sequence=None)
    assert table[["worker", "item", "position"]].values.tolist() == [["A", "y", 0], ["A", "x", 1], ["B", "x", 0]]
    assert (table["sequence"] == table["worker"]).all()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("worker,item,position,label\nA,x,0,1\n", "gold"),
        ("worker,item,position,label,gold\nA,x,zero,1,1\n", "position"),
        ("worker,item,position,label,gold\nA,x,0,yes,1\n", "label"),
        ("worker,item,position,label,gold\nA,x,0,1,1\nA,y,0,0,1\n", "two items at position 0"),
    ],
    ids=["no gold column", "position a word", "label a word", "two items at one position"],
)
def test_bad_tables_name_the_problem(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(PosthocInputError, match=message):
        read_sequence_csv(path, sequence=None)


def _judgements() -> pd.DataFrame:
    rows = [
        # worker, task, item, position, start, outcome, dataset, system, is_control
        ("w1", "t1", "A1", 0, 9, "verify", "d", "A", False), ("w1", "t1", "A1", 0, 0, "remove", "d", "A", False),
        ("w1", "t2", "B1", 1, 0, "verify", "d", "B", False), ("w1", "c1", "C", 2, 0, "edit", "d", "CONTROL", True),
        ("w1", "t5", "A2", 3, 0, "verify", "d", "A", False), ("w1", "t5", "A2", 3, 5, "verify", "d", "A", False),
        ("w2", "t3", "A1", 0, 0, "verify", "d", "A", False), ("w2", "t4", "B2", 1, 0, "edit", "d", "B", False),
    ]
    frame = pd.DataFrame(rows, columns=["worker", "task_key", "item_id", "position", "start", "outcome", "dataset",
                                        "system", "is_control"])
    return frame.assign(end=frame["start"] + 3)


def test_judgements_adapter_one_row_a_task_by_hand() -> None:
    table = sequence_table_from_judgements(_judgements())
    # one row a task in served order, the control task left out (w1's positions 0, 1, 3)
    assert table[["worker", "item", "position"]].values.tolist() == [
        ["w1", "A1", 0], ["w1", "B1", 1], ["w1", "A2", 3], ["w2", "A1", 0], ["w2", "B2", 1]]
    # label: every region verified (t1 had a removal, t4 an edit)
    assert table["label"].tolist() == [0.0, 1.0, 1.0, 1.0, 0.0]
    # gold: A1 was also judged by the other worker -> their label (w2: 1, w1: 0); the other items by one judge
    # only -> the cell's rate over the other worker: (d, B) for w1 is w2's t4 = 0, (d, A) for w1 is w2's t3 = 1,
    # (d, B) for w2 is w1's t2 = 1
    assert table["gold"].tolist() == [1.0, 0.0, 1.0, 0.0, 1.0]


def test_judgements_adapter_verify_share_and_exclusions() -> None:
    shares = sequence_table_from_judgements(_judgements(), label="verify_share")
    assert shares["label"].tolist() == [0.5, 1.0, 1.0, 1.0, 0.0]
    assert shares["gold"].tolist() == [1.0, 0.0, 1.0, 0.5, 1.0]
    alone = sequence_table_from_judgements(_judgements(), exclude_workers=["w2"])
    assert set(alone["worker"]) == {"w1"}
    # nobody else judged anything: no gold can be formed without the worker's own labels
    assert alone["gold"].isna().all()
    with pytest.raises(PosthocInputError, match="label must be"):
        sequence_table_from_judgements(_judgements(), label="verified")


def test_judgements_adapter_never_makes_regions_consecutive_items() -> None:
    judgements = simulate_task_study(6, 12, seed=4)
    table = sequence_table_from_judgements(judgements)
    tasks = judgements.drop_duplicates(["worker", "task_key"])
    assert len(table) == len(tasks) == 6 * 12
    assert not table.duplicated(["worker", "item"]).any()


def test_snow_rte_reports_b1_per_subset(shared_data: Path, tmp_path: Path) -> None:
    path = shared_data / "snow2008" / "rte_sequence_by_assignment.csv"
    table = read_snow_rte(path)
    raw = pd.read_csv(path)
    assert len(table) == len(raw) == 8000
    out = tmp_path / "out"
    result = _posthoc("sequence", str(path), "--layout", "snow-rte", "--out", str(out))
    assert result.returncode == 0, result.stderr
    coefficients = pd.read_csv(out / "coefficients.csv").set_index("subset")
    # every judgement but the first of each worker's HIT has a previous label
    n_sequences = raw.groupby(["!amt_worker_ids", "hit_id_prefix20"]).ngroups
    assert coefficients.loc["all", "n"] == 8000 - n_sequences
    assert coefficients.loc["all", "n_workers"] == raw["!amt_worker_ids"].nunique()
    for subset in ("all", "moderate", "good"):
        row = coefficients.loc[subset]
        assert np.isfinite(row["b1"]) and row["b1_low"] < row["b1"] < row["b1_high"]
    # the figures of docs/sequence.md, unchanged by the continuous and task-level work (issue 10)
    assert coefficients.loc[["all", "moderate", "good"], "b1"].round(3).tolist() == [0.006, -0.008, -0.065]
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "best available guess" in html and "data:image/png;base64," in html
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["n_judgements"] == 8000


def test_snow_rte_b1_equals_an_independent_statsmodels_fit(shared_data: Path) -> None:
    table = read_snow_rte(shared_data / "snow2008" / "rte_sequence_by_assignment.csv")
    design = lagged_design(table)
    exog = sm.add_constant(design[["previous", "gold", "bias"]].to_numpy(float))
    peer = sm.Logit(design["label"].to_numpy(float), exog).fit(disp=0)
    fit = fit_lag1(table)
    np.testing.assert_allclose([fit.b0, fit.b1, fit.b2, fit.b3], peer.params, rtol=1e-7, atol=1e-9)


@pytest.mark.slow
def test_cli_continuous_defaults_recover_the_lag(tmp_path: Path) -> None:
    """The report of issue 10: 0-100 scores, true lag +0.4, 30 workers x 60 items, each worker their own offset
    and scale; the defaults printed b1 = -0.000 (the worker bias of z-scores was the label itself)."""
    path = tmp_path / "scores.csv"
    simulate_continuous(30, 60, b1=0.4, centre=50, offset_sd=10, scale_range=(5, 15), seed=21).to_csv(path, index=False)
    out = tmp_path / "out"
    result = _posthoc("sequence", str(path), "--gold-col", "gold", "--out", str(out))
    assert result.returncode == 0, result.stderr
    row = pd.read_csv(out / "coefficients.csv").set_index("subset").loc["all"]
    assert row["kind"] == "continuous" and row["b1_low"] <= 0.4 <= row["b1_high"]
    assert abs(row["b1"] - 0.4) < 0.05 and row["b1_high"] - row["b1_low"] < 0.2


@pytest.mark.slow
def test_cli_on_a_table_and_on_bad_input(tmp_path: Path) -> None:
    path = tmp_path / "sim.csv"
    simulate_binary(20, 15, b1=0.8, seed=5).to_csv(path, index=False)
    out = tmp_path / "out"
    result = _posthoc("sequence", str(path), "--out", str(out), "--gold-col", "gold", "--sequence-col", "sequence")
    assert result.returncode == 0, result.stderr
    assert "all: b1 = +" in result.stdout
    bad = tmp_path / "bad.csv"
    bad.write_text("worker,item\nA,x\n", encoding="utf-8")
    failed = _posthoc("sequence", str(bad), "--out", str(tmp_path / "none"))
    assert failed.returncode == 2
    assert failed.stderr.count("\n") == 1 and "missing column" in failed.stderr and "Traceback" not in failed.stderr
    assert not (tmp_path / "none").exists()


@pytest.mark.slow
def test_cli_on_a_studys_judgements_leaves_out_failing_workers(tmp_path: Path) -> None:
    from posthoc.metrics.controls import control_results
    from posthoc.synthetic import synthetic_study

    _, _, judgements = synthetic_study(30, seed=5, failing_worker_share=0.3)
    controls = control_results(judgements)
    excluded = set(controls.loc[controls["excluded"], "worker"])
    path = tmp_path / "judgements.csv"
    judgements.to_csv(path, index=False)
    for label, kind in (("all-verified", "binary"), ("verify-share", "continuous")):
        out = tmp_path / label
        result = _posthoc("sequence", str(path), "--layout", "judgements", "--task-label", label, "--out", str(out))
        assert result.returncode == 0, result.stderr
        assert excluded and f"Left out, as in posthoc score's metrics: {len(excluded)} worker(s)" in result.stdout
        row = pd.read_csv(out / "coefficients.csv").set_index("subset").loc["all"]
        kept = judgements.loc[~judgements["is_control"] & ~judgements["worker"].isin(excluded)]
        assert row["kind"] == kind and row["n_workers"] == kept["worker"].nunique()
        # one row a task: every task but each worker's first has a previous task
        assert row["n"] == kept["task_key"].nunique() - kept["worker"].nunique()
