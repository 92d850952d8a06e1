"""Readers (CrowdTruth CSV, posthoc judgements, Label Studio export) and ``posthoc crowdtruth``."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from posthoc.cli.main import main
from posthoc.crowdtruth.io import (
    CrowdTruthConfig,
    judgements_from_label_studio,
    judgements_from_posthoc,
    read_crowdtruth_csv,
)
from posthoc.crowdtruth.metrics import crowdtruth_metrics
from posthoc.crowdtruth.vectors import build_vectors
from posthoc.errors import PosthocInputError

CF_HEADER = "_unit_id,_id,_worker_id,_started_at,_created_at,sentence,answer\n"


def _write(tmp_path: Path, text: str, name: str = "input.csv") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _run_cli(args: list[str]) -> int:
    try:
        main(args)
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


def test_crowdflower_csv_with_unicode_units_and_answers(tmp_path: Path) -> None:
    rows = [
        ("😀猫", 1, "W1", "東京,e\u0301t\u00e9"), ("😀猫", 2, "W2", "東京"), ("😀猫", 3, "W3", "東京"),
        ("u2", 4, "W1", "none"), ("u2", 5, "W2", "none"), ("solo", 6, "W4", "東京"),
    ]
    text = CF_HEADER + "".join(f'{u},{j},{w},1/1/2020 10:00,1/1/2020 10:01,s,"{a}"\n' for u, j, w, a in rows)
    data = read_crowdtruth_csv(_write(tmp_path, text), CrowdTruthConfig(output_columns=("answer",)))
    assert set(data.judgements["unit"]) == {"😀猫", "u2"}
    assert data.dropped["reason"].tolist() == ["unit judged by one worker"]
    assert set(data.judgements["annotation"]) == {"東京", "e\u0301t\u00e9", "none"}
    result = crowdtruth_metrics(build_vectors(data.judgements, open_ended=True))
    uas = result.unit_annotations.set_index(["unit", "annotation"])["uas_initial"]
    assert uas[("😀猫", "東京")] == pytest.approx(1.0)
    assert uas[("😀猫", "e\u0301t\u00e9")] == pytest.approx(1 / 3)


def test_empty_answers_are_dropped_or_become_the_none_token(tmp_path: Path) -> None:
    text = CF_HEADER + "u,1,W1,t,t,s,A\nu,2,W2,t,t,s,\nu,3,W3,t,t,s,A\n"
    path = _write(tmp_path, text)
    dropped = read_crowdtruth_csv(path, CrowdTruthConfig(output_columns=("answer",)))
    assert len(dropped.judgements) == 2
    assert dropped.dropped["reason"].tolist() == ["empty answer"]
    kept = read_crowdtruth_csv(path, CrowdTruthConfig(output_columns=("answer",), remove_empty_rows=False))
    assert sorted(kept.judgements["annotation"]) == ["A", "A", "NONE"]


@pytest.mark.parametrize(
    ("text", "config", "message"),
    [
        ("a,b\n1,2\n", CrowdTruthConfig(output_columns=("b",)), "custom platform columns"),
        (CF_HEADER + "u,1,W1,t,t,s,A\nu,2,W1,t,t,s,B\n", CrowdTruthConfig(output_columns=("answer",)), "twice"),
        (CF_HEADER + "u,1,W1,t,t,s,A\n", CrowdTruthConfig(output_columns=("missing",)), "missing"),
    ],
    ids=["unknown-platform", "duplicate-judgement", "missing-column"],
)
def test_bad_csv_input_names_the_problem(tmp_path: Path, text: str, config: CrowdTruthConfig, message: str) -> None:
    with pytest.raises(PosthocInputError, match=message):
        read_crowdtruth_csv(_write(tmp_path, text), config)


def test_closed_task_rejects_an_annotation_outside_the_vector() -> None:
    table = pd.DataFrame({"unit": ["u", "u"], "worker": ["a", "b"], "annotation": ["yes", "maybe"]})
    with pytest.raises(PosthocInputError, match="'maybe'"):
        build_vectors(table, annotation_vector=["yes", "no"], open_ended=False)


def test_posthoc_judgements_become_verify_edit_remove_vectors() -> None:
    judgements = pd.DataFrame(
        {
            "mention_id": ["m1", "m1", "m1", "m2", "m2", "m3", "c1", "c1"],
            "worker": ["a", "b", "c", "a", "b", "a", "a", "b"],
            "outcome": ["verify", "verify", "edit", "remove", "remove", "verify", "verify", "remove"],
            "is_control": [False] * 6 + [True, True],
        }
    )
    table = judgements_from_posthoc(judgements)
    assert sorted(set(table["unit"])) == ["m1", "m2"]  # single-judge m3 and control c1 are left out
    result = crowdtruth_metrics(build_vectors(table, annotation_vector=["verify", "edit", "remove"], open_ended=False))
    uas = result.unit_annotations.set_index(["unit", "annotation"])["uas_initial"]
    assert uas[("m1", "verify")] == pytest.approx(2 / 3)
    assert uas[("m2", "remove")] == pytest.approx(1.0)
    with pytest.raises(PosthocInputError, match="not one of"):
        judgements_from_posthoc(judgements.assign(outcome="maybe"))


def test_label_studio_export_conversion_skips_cancelled_and_other_controls() -> None:
    export = [
        {"id": 7, "data": {"unit_id": "s1"}, "annotations": [
            {"completed_by": 1, "result": [
                {"from_name": "relation", "type": "choices", "value": {"choices": ["causes", "treats"]}},
                {"from_name": "comment", "type": "textarea", "value": {"text": ["x"]}}]},
            {"completed_by": {"id": 2, "email": "b@example.org"}, "result": [
                {"from_name": "relation", "type": "choices", "value": {"choices": ["none"]}}]},
            {"completed_by": 3, "was_cancelled": True, "result": []},
        ]},
    ]
    table = judgements_from_label_studio(export, unit_field="unit_id")
    assert table.to_dict("records") == [
        {"unit": "s1", "worker": "1", "annotation": "causes"},
        {"unit": "s1", "worker": "1", "annotation": "treats"},
        {"unit": "s1", "worker": "b@example.org", "annotation": "none"},
    ]


def test_cli_writes_every_table_and_matches_the_metrics(tmp_path: Path, crowdtruth_data: Path) -> None:
    source = crowdtruth_data / "input" / "relex-binary-choice.csv"
    out = tmp_path / "out"
    code = _run_cli(["crowdtruth", str(source), "--out", str(out), "--output-column", "top_member_employee",
                     "--input-column", "sentence", "--annotation-vector", "true,false", "--lowercase",
                     "--format", "parquet", "--threshold", "0.6"])
    assert code == 0
    for name in ("units", "workers", "annotations", "unit_annotations", "weighted_labels"):
        assert (out / f"{name}.parquet").is_file()
    workers = pd.read_parquet(out / "workers.parquet")
    published = pd.read_csv(crowdtruth_data / "reference_outputs" / "binary-relex-workers.csv", dtype={"worker": str})
    merged = workers.merge(published, on="worker", suffixes=("", "_ref"))
    assert len(merged) == len(published)
    assert (merged["wqs"] - merged["wqs_ref"]).abs().max() < 1e-9
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["label_threshold"] == 0.6
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "Lowest-quality workers" in html and "<script" not in html


def test_cli_bad_input_exits_2_and_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = _write(tmp_path, CF_HEADER + "u,1,W1,t,t,s,A\nu,2,W2,t,t,s,<b>B</b>\n")
    out = tmp_path / "out"
    code = _run_cli(["crowdtruth", str(source), "--out", str(out), "--output-column", "answer",
                     "--annotation-vector", "A,B"])
    assert code == 2
    assert not out.exists()
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not in the annotation vector" in err


def test_cli_judgements_layout(tmp_path: Path) -> None:
    judgements = pd.DataFrame({"mention_id": ["m1"] * 3 + ["m2"] * 3 + ["c"] * 2,
                               "worker": ["a", "b", "c"] * 2 + ["a", "b"],
                               "outcome": ["verify", "verify", "remove", "edit", "edit", "edit", "verify", "remove"],
                               "surface": ["x, y", "x, y", "x, y", "😀", "😀", "😀", "z", "z"],
                               "is_control": [False] * 6 + [True, True]})
    source = tmp_path / "judgements.csv"
    judgements.to_csv(source, index=False)
    out = tmp_path / "out"
    assert _run_cli(["crowdtruth", str(source), "--out", str(out), "--layout", "judgements"]) == 0
    annotations = pd.read_csv(out / "annotations.csv")
    assert annotations["annotation"].tolist() == ["verify", "edit", "remove"]
    units = pd.read_csv(out / "units.csv").set_index("unit")
    assert units.loc["m2", "uqs"] == pytest.approx(1.0)
    assert "c" not in units.index  # the control item (is_control read back from CSV as text) is left out


def test_cli_table_layout_escapes_names_in_the_report(tmp_path: Path) -> None:
    table = pd.DataFrame({"unit": ["<img src=x onerror=alert(1)>"] * 3 + ["u2"] * 3,
                          "worker": ["<script>alert(1)</script>", "b", "c"] * 2,
                          "annotation": ["x", "x", "y", "y", "y", "y"]})
    source = tmp_path / "table.csv"
    table.to_csv(source, index=False)
    out = tmp_path / "out"
    assert _run_cli(["crowdtruth", str(source), "--out", str(out), "--layout", "table", "--closed"]) == 0
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "<script>alert" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<img src=x" not in html
    workers = pd.read_csv(out / "workers.csv")
    assert "<script>alert(1)</script>" in set(workers["worker"])
