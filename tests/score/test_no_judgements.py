"""A score run with no judgement says so in one line (issue 45): an export whose every task was skipped writes a
report of that one line, the exclusions and the settings (exit 0, "updated"); an export of tasks nobody annotated
writes nothing (status "empty")."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from posthoc.export.synthetic import write_synthetic_export
from posthoc.jobs.score import JudgementSource, ScoreOptions, run_score_job
from posthoc.labelstudio.label_config import verification_tags
from posthoc.paths import label_config
from posthoc.study.plan.index import ManifestIndex
from posthoc.study.plan.manifest import Manifest


@pytest.fixture(scope="module")
def exports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A three-worker study and two exports of all its tasks: every annotation cancelled, no annotation at all."""
    from lsfixtures import small_sample_manifest

    folder = tmp_path_factory.mktemp("study")
    manifest = folder / "manifest.sqlite"
    small_sample_manifest(manifest, name="unjudged", n_documents=3, n_workers=3, control_tasks=False)
    index = ManifestIndex.from_manifest(Manifest.open(manifest))
    full = write_synthetic_export(folder / "full.json", index, verification_tags(label_config("entity_verification")),
                                  seed=1).path
    tasks: list[dict[str, Any]] = json.loads(full.read_text(encoding="utf-8"))
    for task in tasks:
        for annotation in task["annotations"]:
            annotation["was_cancelled"] = True
    (folder / "skipped.json").write_text(json.dumps(tasks), encoding="utf-8")
    for task in tasks:
        task["annotations"] = []
    (folder / "unannotated.json").write_text(json.dumps(tasks), encoding="utf-8")
    return {"manifest": manifest, "skipped": folder / "skipped.json", "unannotated": folder / "unannotated.json",
            "n_tasks": len(tasks)}


def _score(exports: dict[str, Any], name: str, out: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "posthoc.cli.main", "score", "--manifest", str(exports["manifest"]),
                           "--export-file", str(exports[name]), "--out", str(out), "--resamples", "20", "--quiet"],
                          capture_output=True, text=True, timeout=300, check=False)


def test_every_task_skipped_is_one_line_on_stdout_and_in_the_report(exports: dict[str, Any], tmp_path: Path) -> None:
    out = tmp_path / "report"
    done = _score(exports, "skipped", out)
    n_tasks = exports["n_tasks"]
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [f"no judgements to score: 0 judgements, {n_tasks} excluded (the report says "
                                        f"so and lists why) -> {out / 'report.html'}"]
    html = (out / "report.html").read_text(encoding="utf-8")
    assert f"No judgements to score: 0 judgements; {n_tasks} left out (skipped {n_tasks}; see Exclusions)." in html
    assert re.findall(r'<section id="([^"]+)">', html) == ["exclusions", "settings"]
    assert "<img" not in html and "Figure 3" not in html


def test_the_job_reports_the_run_as_updated_with_no_judgement(exports: dict[str, Any], tmp_path: Path) -> None:
    result = run_score_job(manifest_path=exports["manifest"], out_dir=tmp_path / "report",
                           source=JudgementSource(export_files=[exports["skipped"]]),
                           options=ScoreOptions(n_resamples=20, progress=False))
    assert (result.status, result.n_judgements, result.exit_code) == ("updated", 0, 0)
    assert result.n_exclusions == exports["n_tasks"]
    summary = json.loads((tmp_path / "report" / "summary.json").read_text(encoding="utf-8"))
    assert summary["n_judgements"] == 0


def test_tasks_nobody_annotated_are_one_line_and_nothing_written(exports: dict[str, Any], tmp_path: Path) -> None:
    out = tmp_path / "report"
    done = _score(exports, "unannotated", out)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"no judgements in {exports['unannotated']}"), done.stdout
    assert not out.exists()
