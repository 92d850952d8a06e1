"""``posthoc study estimate`` (real subprocess) and the report's "Plan against outcome" section."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from posthoc.html import page
from posthoc.study.planner.outcome_section import plan_against_outcome_section

SAMPLE = Path(__file__).resolve().parents[2] / "plugin" / "posthoc" / "sample"
STUDY = """
[study]
name = "sample"
seed = 20260101
k = {k}

[[inputs]]
path = "gt.jsonl"
dataset = "sample-news"
system = "GT"

[[inputs]]
path = "e2e.jsonl"
dataset = "sample-news"
system = "E2E"

[[inputs]]
path = "rel.jsonl"
dataset = "sample-news"
system = "REL"
"""


def _study_dir(folder: Path, k: int = 1) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("gt.jsonl", "e2e.jsonl", "rel.jsonl"):
        shutil.copy(SAMPLE / name, folder / name)
    (folder / "study.toml").write_text(STUDY.format(k=k), encoding="utf-8")
    return folder


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "posthoc.cli.main", "study", "estimate", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=600, env={**os.environ})


def _snapshot(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.slow
def test_estimate_with_the_defaults_prints_a_table_and_writes_json_and_csv(tmp_path: Path) -> None:
    folder = _study_dir(tmp_path / "study")
    done = _cli("--config", "study.toml", "--no-progress", cwd=folder)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    for needle in ("tasks", "regions to judge", "workers", "15.00 s a region", "hours", "cost", "at 9 an hour",
                   "posthoc_precision", "posthoc_recall", "± half-width", "estimate.json"):
        assert needle in out, needle
    record = json.loads((folder / "estimate.json").read_text(encoding="utf-8"))
    cells = pd.read_csv(folder / "estimate.csv")
    assert record["counts"]["tasks"] == 85 and record["settings"]["runs"] == 200
    assert len(cells) == 6 and (cells["halfwidth"] > 0).all()
    assert {c["metric"] for c in record["cells"]} == {"posthoc_precision", "posthoc_recall"}
    again = _cli("--config", "study.toml", "--no-progress", cwd=folder)
    assert again.returncode == 0 and (folder / "estimate.json").read_text(encoding="utf-8") == json.dumps(
        record, sort_keys=True, indent=1, ensure_ascii=False) + "\n"  # same inputs, same bytes


@pytest.mark.slow
def test_options_pilot_pace_rate_runs_target_and_out(tmp_path: Path) -> None:
    folder = _study_dir(tmp_path / "study", k=3)
    pilot = pd.DataFrame({"dataset": "sample-news", "doc_id": "d", "system": ["GT", "E2E", "REL"] * 4,
                          "start": range(12), "end": range(1, 13), "link": "x", "worker": "w001",
                          "task_key": [f"t{i // 3}" for i in range(12)], "outcome": ["verify"] * 10 + ["edit"] * 2,
                          "lead_time": 60.0, "is_control": False})
    pilot.to_csv(folder / "pilot.csv", index=False)
    done = _cli("--config", "study.toml", "--no-progress", "--pilot", "pilot.csv", "--hourly-rate", "20",
                "--runs", "40", "--target-halfwidth", "0.2", "--max-judges", "3", "--out", "est", cwd=folder)
    assert done.returncode == 0, done.stderr
    record = json.loads((folder / "est" / "estimate.json").read_text(encoding="utf-8"))
    assert record["settings"]["rates_source"] == "pilot" and record["settings"]["runs"] == 40
    assert record["time"]["seconds_per_region"] == pytest.approx(4 * 60.0 / 12)  # from the pilot's lead_time
    assert record["time"]["hourly_rate"] == 20
    assert {c["metric"] for c in record["cells"]} >= {"fleiss_kappa", "krippendorff_alpha"}  # k = 3
    assert [c["k"] for c in record["target"]["candidates"]] == [2, 3]
    assert "target ± 0.2" in done.stdout
    stated = _cli("--config", "study.toml", "--no-progress", "--seconds-per-region", "9", "--runs", "5", "--json",
                  "--out", "stated", cwd=folder)
    assert stated.returncode == 0, stated.stderr
    assert json.loads(stated.stdout)["time"]["seconds_per_region"] == 9


@pytest.mark.parametrize(("args", "needle"), [
    (("--config", "missing.toml"), "missing.toml"),
    (("--config", "study.toml", "--pilot", "nope.csv"), "--pilot nope.csv"),
    (("--config", "study.toml", "--pilot", "bad.csv"), "lacks column"),
    (("--config", "study.toml", "--pilot", "untimed.csv"), "lead_time"),
    (("--config", "study.toml", "--runs", "1"), "--runs"),
    (("--config", "study.toml", "--target-halfwidth", "3"), "--target-halfwidth"),
    (("--config", "study.toml", "--seconds-per-region", "-2"), "--seconds-per-region"),
    (("--config", "study.toml", "--out", "study.toml"), "--out"),
], ids=["config missing", "pilot missing", "pilot without columns", "pilot without times", "one run",
        "half-width above 1", "negative seconds", "out is the config"])
def test_bad_input_is_one_line_exit_2_and_writes_nothing(tmp_path: Path, args: tuple[str, ...], needle: str) -> None:
    folder = _study_dir(tmp_path / "study")
    (folder / "bad.csv").write_text("a,b\n1,2\n", encoding="utf-8")
    (folder / "untimed.csv").write_text("dataset,system,worker,task_key,outcome,lead_time\nd,GT,w001,t1,verify,\n",
                                        encoding="utf-8")
    before = _snapshot(folder)
    done = _cli(*args, "--no-progress", cwd=folder)
    assert done.returncode == 2, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("posthoc: error:") and needle in lines[0], done.stderr
    assert "Traceback" not in done.stderr
    assert _snapshot(folder) == before


def test_help_explains_every_option(tmp_path: Path) -> None:
    done = _cli("--help", cwd=tmp_path)
    assert done.returncode == 0
    for option in ("--config", "--pilot", "--seconds-per-region", "--hourly-rate", "--runs", "--target-halfwidth",
                   "--max-judges", "--seed", "--out", "--json", "paper 000"):
        assert option in done.stdout, option


@pytest.fixture(scope="module")
def scored_study(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The sample study planned, estimated beside its manifest, exported with simulated decisions and scored."""
    from posthoc.export.synthetic import write_synthetic_export
    from posthoc.jobs.score import JudgementSource, ScoreOptions, run_score_job
    from posthoc.labelstudio.label_config import verification_tags
    from posthoc.paths import label_config
    from posthoc.study.plan.config import load_study_config, read_study_inputs
    from posthoc.study.plan.design import plan_study
    from posthoc.study.plan.index import ManifestIndex
    from posthoc.study.plan.manifest import Manifest
    from posthoc.study.planner.estimate import estimate_study

    folder = _study_dir(tmp_path_factory.mktemp("scored") / "study")
    config = load_study_config(folder / "study.toml")
    plan = plan_study(*read_study_inputs(config), config)
    manifest = Manifest.create(folder / "manifest.sqlite", plan)
    index = ManifestIndex.from_manifest(manifest)
    texts = dict(zip(manifest.tasks()["task_key"], manifest.tasks()["text"], strict=True))
    export = write_synthetic_export(folder / "export.json", index, verification_tags(label_config(
        "entity_verification")), texts=texts, seed=3)
    without = run_score_job(manifest_path=folder / "manifest.sqlite", out_dir=folder / "before",
                            source=JudgementSource(export_files=[export.path]), options=ScoreOptions(n_resamples=50))
    estimate_study(plan, runs=50).write(folder)
    with_estimate = run_score_job(manifest_path=folder / "manifest.sqlite", out_dir=folder / "after",
                                  source=JudgementSource(export_files=[export.path]),
                                  options=ScoreOptions(n_resamples=50, periodic=True))
    return {"folder": folder, "before": without, "after": with_estimate, "plan": plan, "export": export}


@pytest.mark.slow
def test_the_report_sets_the_plan_against_the_outcome_when_an_estimate_lies_beside_the_manifest(
        scored_study: dict[str, Any]) -> None:
    before = scored_study["before"].report_path.read_text(encoding="utf-8")
    after = scored_study["after"].report_path.read_text(encoding="utf-8")
    assert "Plan against outcome" not in before
    assert "Plan against outcome" in after and 'id="plan-against-outcome"' in after
    for needle in ("predicted_halfwidth", "achieved_halfwidth", "expected_noise", "assured_within_15",
                   "predicted_hours", "measured_hours", "all workers"):
        assert needle in after, needle
    # a new estimate is a change: a periodic run rewrites the report
    assert scored_study["after"].status == "updated"


def test_the_section_compares_cells_and_hours_and_notes_a_foreign_or_broken_estimate(
        scored_study: dict[str, Any], tmp_path: Path) -> None:
    from posthoc.metrics import ScoringOptions, score_judgements

    folder: Path = scored_study["folder"]
    judgements = pd.read_csv(folder / "after" / "judgements.csv")
    scores = score_judgements(judgements, scored_study["plan"].source_mentions, options=ScoringOptions(n_resamples=50))
    section = plan_against_outcome_section(folder / "estimate.json", scores, judgements, study="sample")
    assert section is not None
    html = page("t", [section])
    assert "posthoc_precision" in html and "ratio" in html
    measured = judgements.drop_duplicates(["worker", "task_key"])["lead_time"].sum() / 3600
    assert f"{measured:.4g}"[:4] in html.replace(",", "")
    assert plan_against_outcome_section(tmp_path / "none.json", scores, judgements) is None
    broken = tmp_path / "estimate.json"
    broken.write_text("{not json", encoding="utf-8")
    note = plan_against_outcome_section(broken, scores, judgements)
    assert note is not None and "could not be read" in page("t", [note])
    other = plan_against_outcome_section(folder / "estimate.json", scores, judgements, study="another")
    assert other is not None and "not compared" in page("t", [other])
