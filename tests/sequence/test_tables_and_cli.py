"""Readers of sequence tables, the judgements adapter, and `posthoc sequence` end to end."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from posthoc.errors import PosthocInputError
from posthoc.sequence import read_sequence_csv, read_snow_rte, sequence_table_from_judgements
from posthoc.sequence.simulate import simulate_binary


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
)
def test_bad_tables_name_the_problem(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(PosthocInputError, match=message):
        read_sequence_csv(path, sequence=None)


def _judgements() -> pd.DataFrame:
    rows = [
        # worker, task, position, start, outcome, dataset, system, is_control
        ("w1", "t1", 0, 9, "verify", "d", "A", False), ("w1", "t1", 0, 0, "remove", "d", "A", False),
        ("w1", "t2", 1, 0, "verify", "d", "B", False), ("w1", "c1", 2, 0, "edit", "d", "CONTROL", True),
        ("w2", "t3", 0, 0, "verify", "d", "A", False), ("w2", "t4", 1, 0, "edit", "d", "B", False),
    ]
    frame = pd.DataFrame(rows, columns=["worker", "task_key", "position", "start", "outcome", "dataset", "system",
                                        "is_control"])
    return frame.assign(end=frame["start"] + 3)


def test_judgements_adapter_per_task_by_hand() -> None:
    table = sequence_table_from_judgements(_judgements(), unit="task").set_index("item")
    assert "c1" not in table.index
    # t1: one of two annotations verified -> 0.5; gold = system A's rate over the other worker: w2 1/1
    assert table.loc["t1", "label"] == 0.5 and table.loc["t1", "gold"] == 1.0
    # t3 (w2, A): gold from w1's A judgements: 1 verified of 2
    assert table.loc["t3", "gold"] == 0.5
    # t4 (w2, B): w1 verified its B annotation
    assert table.loc["t4", "label"] == 0.0 and table.loc["t4", "gold"] == 1.0


def test_judgements_adapter_per_annotation_by_hand() -> None:
    table = sequence_table_from_judgements(_judgements())
    w1 = table[table["worker"] == "w1"]
    # text order within task t1: the annotation at 0 (removed) comes before the one at 9 (verified)
    assert w1["item"].tolist() == ["t1:0-3", "t1:9-12", "t2:0-3"]
    assert w1["position"].tolist() == [0, 1, 2] and w1["label"].tolist() == [0.0, 1.0, 1.0]
    # gold of w1's A annotations: w2's A rate (1 of 1); of w2's A annotation: w1's (1 of 2)
    assert w1["gold"].tolist() == [1.0, 1.0, 0.0]
    assert table.loc[table["item"] == "t3:0-3", "gold"].item() == 0.5


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
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "best available guess" in html and "data:image/png;base64," in html
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["n_judgements"] == 8000


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
