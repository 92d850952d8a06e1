"""`posthoc score` on its defaults writes tables/cell_widths, its summary key and the "Stop now or go on" section
(issue 28); a target comes from --target-halfwidth or the estimate saved beside the manifest."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from posthoc.export.synthetic import write_synthetic_export
from posthoc.jobs.score import JudgementSource, ScoreOptions, run_score_job
from posthoc.labelstudio.label_config import verification_tags
from posthoc.paths import label_config
from posthoc.report.stop_section import stop_or_go_on_section
from posthoc.study.plan.index import ManifestIndex
from posthoc.study.planner.progress_widths import WIDTH_COLUMNS


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The bundled sample corpus planned as a study (k = 3) and a synthetic export of it."""
    from posthoc.study.plan.config import read_study_inputs, sample_study_config
    from posthoc.study.plan.design import plan_study
    from posthoc.study.plan.manifest import Manifest

    folder = tmp_path_factory.mktemp("widths")
    config = sample_study_config(name="sample", seed=5, k=3)
    documents, mentions = read_study_inputs(config)
    plan = plan_study(documents, mentions, config)
    manifest = Manifest.create(folder / "sample.manifest", plan)
    texts = dict(zip(manifest.tasks()["task_key"], manifest.tasks()["text"], strict=True))
    export = write_synthetic_export(folder / "export.json", ManifestIndex.from_manifest(manifest),
                                    verification_tags(label_config("entity_verification")), texts=texts, seed=1)
    return {"manifest": folder / "sample.manifest", "export": export.path, "plan": plan, "folder": folder}


@pytest.mark.slow
def test_the_default_score_writes_the_cell_widths_table_summary_and_section(study: dict[str, Any],
                                                                           tmp_path: Path) -> None:
    result = run_score_job(manifest_path=study["manifest"], out_dir=tmp_path,
                           source=JudgementSource(export_files=[study["export"]]), options=ScoreOptions())
    assert tmp_path / "tables" / "cell_widths.csv" in result.files
    table = pd.read_csv(tmp_path / "tables" / "cell_widths.csv")
    assert list(table.columns) == WIDTH_COLUMNS and (table["k"] == 3).all()
    rates = pd.read_csv(tmp_path / "tables" / "rates.csv")
    headline = rates.loc[rates["metric"].isin(["posthoc_precision", "posthoc_recall"])]
    assert len(table) == len(headline) == 6
    merged = table.merge(headline, on=["dataset", "system", "metric"])
    assert ((merged["halfwidth_now"] - (merged["high"] - merged["low"]) / 2).abs() < 1e-12).all()
    assert (merged["halfwidth_now"] > 0).all() and (merged["halfwidth_end"] > 0).all()
    judgements = pd.read_csv(tmp_path / "judgements.csv")
    real = judgements.loc[~judgements["is_control"].astype(bool)]
    judged = real.groupby(["dataset", "system"])["item_id"].nunique()
    per_cell = table.drop_duplicates(["dataset", "system"]).set_index(["dataset", "system"])
    assert (per_cell["items_judged_any"] == judged.reindex(per_cell.index)).all()
    assert (per_cell["items_judged_k"] <= per_cell["items_judged_any"]).all()
    assert (per_cell["items_judged_any"] <= per_cell["items_planned"]).all()
    assert table["target"].isna().all() and table["advice"].isna().all()  # no target, no estimate beside
    summary = json.loads((tmp_path / "summary.json").read_text(encoding="utf-8"))
    assert summary["cell_widths"]["target"] is None and len(summary["cell_widths"]["cells"]) == 6
    assert "target_halfwidth" not in summary  # the options a run without a target digests are those of before
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert 'id="stop-or-go-on"' in html and "Stop now or go on" in html and "No target half-width" in html


@pytest.mark.slow
def test_a_saved_estimates_target_is_used_and_the_option_overrides_it(study: dict[str, Any], tmp_path: Path) -> None:
    from posthoc.study.planner.estimate import estimate_study

    folder = tmp_path / "study"
    folder.mkdir()
    manifest = folder / "sample.manifest"
    manifest.write_bytes(study["manifest"].read_bytes())
    estimate_study(study["plan"], runs=2, target_halfwidth=0.3).write(folder)
    source = JudgementSource(export_files=[study["export"]])
    run_score_job(manifest_path=manifest, out_dir=tmp_path / "a", source=source, options=ScoreOptions(n_resamples=50))
    saved = pd.read_csv(tmp_path / "a" / "tables" / "cell_widths.csv")
    assert (saved["target"] == 0.3).all() and saved["advice"].notna().all()
    run_score_job(manifest_path=manifest, out_dir=tmp_path / "b", source=source,
                  options=ScoreOptions(n_resamples=50, target_halfwidth=0.01))
    tight = pd.read_csv(tmp_path / "b" / "tables" / "cell_widths.csv")
    assert (tight["target"] == 0.01).all() and not tight["met_now"].any()
    assert set(tight["advice"]) == {"extend: the plan falls short"}  # 20 documents are far from ± 0.01
    summary = json.loads((tmp_path / "b" / "summary.json").read_text(encoding="utf-8"))
    assert summary["target_halfwidth"] == "0.01" and summary["cell_widths"]["met_now"] == 0


@pytest.mark.slow
def test_the_cli_takes_target_and_writes_parquet(study: dict[str, Any], tmp_path: Path) -> None:
    run = subprocess.run([sys.executable, "-m", "posthoc.cli.main", "score", "--manifest", str(study["manifest"]),
                          "--export-file", str(study["export"]), "--out", str(tmp_path), "--resamples", "20",
                          "--format", "parquet", "--target", "0.2", "--quiet"],
                         capture_output=True, text=True, env=dict(os.environ), timeout=600)
    assert run.returncode == 0, run.stderr
    table = pd.read_parquet(tmp_path / "tables" / "cell_widths.parquet")
    assert list(table.columns) == WIDTH_COLUMNS and (table["target"] == 0.2).all()
    bad = subprocess.run([sys.executable, "-m", "posthoc.cli.main", "score", "--manifest", str(study["manifest"]),
                          "--export-file", str(study["export"]), "--out", str(tmp_path / "bad"),
                          "--target-halfwidth", "2"], capture_output=True, text=True, env=dict(os.environ),
                         timeout=600)
    assert bad.returncode == 2 and "--target-halfwidth must be between 0 and 1" in bad.stderr
    assert "Traceback" not in bad.stderr and not (tmp_path / "bad").exists()


def test_the_section_escapes_what_it_shows() -> None:
    row = dict.fromkeys(WIDTH_COLUMNS, 0.05)
    row.update(dataset="<script>alert(1)</script>", system="S&P", metric="posthoc_precision", k=1, items_planned=4,
               items_judged_k=2, items_judged_any=3, met_now=True, met_end=True, advice="stop: target met")
    html = stop_or_go_on_section(pd.DataFrame([row], columns=WIDTH_COLUMNS)).body_html
    assert "<script>" not in html and "&lt;script&gt;" in html and "S&amp;P" in html
    assert "1 of 1 cells meet it now" in html
    assert "No cell of the plan" in stop_or_go_on_section(pd.DataFrame(columns=WIDTH_COLUMNS)).body_html
