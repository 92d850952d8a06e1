"""`run_score_job` from Label Studio and the manifest alone: projects found by their marker, exported, scored."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from ls_tiny_study import TinyStudy

from posthoc.jobs.score import JudgementSource, ScoreOptions, run_score_job

pytestmark = pytest.mark.labelstudio


def test_score_job_exports_the_study_from_label_studio(tiny_study: TinyStudy, tmp_path: Path) -> None:
    out = tmp_path / "report"
    result = run_score_job(manifest_path=tiny_study.manifest_path,
                           source=JudgementSource(ls_url=tiny_study.url, token=tiny_study.token),
                           out_dir=out, options=ScoreOptions(n_resamples=20))
    assert result.status == "updated"
    judgements = pd.read_csv(out / "judgements.csv")
    kept = {key for keys in tiny_study.tasks.values() for key in keys} - {tiny_study.tasks["w002"][0]}
    assert set(judgements["task_key"]) == kept
    exclusions = pd.read_csv(out / "tables" / "exclusions.csv")
    assert {"skipped", "draft", "foreign_annotator", "annotated_twice", "manual_region",
            "offsets_changed"} <= set(exclusions["kind"])
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "the worker skipped (cancelled) the task" in html
    # Figures 3-6, and the paired comparisons' figure when a dataset has two systems or more (RQ1, issue 26)
    compared = "Which system is better (RQ1)" in html and "Comparisons need two systems" not in html
    assert html.count("data:image/png;base64,") == 4 + compared

    # a fresh export of the same projects is the same data: a periodic run finds nothing new
    again = run_score_job(manifest_path=tiny_study.manifest_path,
                          source=JudgementSource(ls_url=tiny_study.url, token=tiny_study.token),
                          out_dir=out, options=ScoreOptions(n_resamples=20, periodic=True))
    assert again.status == "nothing-new"
    assert again.fingerprint == result.fingerprint


def test_a_refused_token_is_a_service_error(tiny_study: TinyStudy, tmp_path: Path) -> None:
    from posthoc.errors import PosthocServiceError

    with pytest.raises(PosthocServiceError, match="API token was refused"):
        run_score_job(manifest_path=tiny_study.manifest_path,
                      source=JudgementSource(ls_url=tiny_study.url, token="not-a-valid-token"),
                      out_dir=tmp_path / "o", options=ScoreOptions(n_resamples=20))
    assert not (tmp_path / "o" / "report.html").exists()
