"""What a periodic score run needs before it knows whether anything is new imports neither pandas nor numpy
(issue 24): the score command, its options, the study opened from its manifest, the last run's state. The
option choices the score job checks without the metrics are the metrics' own."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import posthoc.study
from posthoc.errors import PosthocInputError
from posthoc.jobs.score_options import INTERVALS, UNIONS, ScoreOptions
from posthoc.metrics.intervals import METHODS
from posthoc.metrics.verification import UNIONS as METRIC_UNIONS

#: opens what a nothing-new run opens and prints which of pandas, numpy and pyarrow are imported; then builds the
#: manifest's index (what a run that finds a change does first) and prints them again
PROBE = """
import json, sys
from pathlib import Path
import posthoc.cli.score
from posthoc.export.incremental import JudgementCache, context_key
from posthoc.jobs.score import ScoreOptions
from posthoc.study.plan.study import Study

options = ScoreOptions(periodic=True, union="overlap", interval="percentile")
study = Study.open(sys.argv[1])
keys = [context_key(manifest_digest=study.digest, worker=w, user_workers=study.user_workers) for w in study.workers]
state = JudgementCache(Path(sys.argv[2]), Path(sys.argv[2]) / "staging").state()
imported = sorted(m for m in ("numpy", "pandas", "pyarrow") if m in sys.modules)
tasks = len(study.index)
print(json.dumps({"workers": len(keys), "digest": study.plan_digest, "state": state, "imported": imported,
                  "tasks": tasks, "then": sorted(m for m in ("numpy", "pandas") if m in sys.modules)}))
"""


def test_the_choices_are_the_metrics_own() -> None:
    assert UNIONS == METRIC_UNIONS and INTERVALS == METHODS
    with pytest.raises(PosthocInputError, match="union must be one of exact, overlap, not 'pooled'"):
        ScoreOptions(union="pooled")
    with pytest.raises(PosthocInputError, match="interval method must be one of bca, percentile"):
        ScoreOptions(interval="studentized")


def test_the_study_face_hands_on_every_name_from_its_module() -> None:
    for name in posthoc.study.__all__:
        value = getattr(posthoc.study, name)
        assert getattr(sys.modules[posthoc.study._HOMES[name]], name) is value
    assert sorted(posthoc.study.__all__) == sorted(posthoc.study._HOMES)
    with pytest.raises(AttributeError, match="no attribute 'plan_studies'"):
        posthoc.study.plan_studies  # noqa: B018


def test_deciding_nothing_new_imports_neither_pandas_nor_numpy(tmp_path: Path) -> None:
    from posthoc.study.plan.config import read_study_inputs, sample_study_config
    from posthoc.study.plan.design import plan_study
    from posthoc.study.plan.manifest import Manifest

    config = sample_study_config(name="imports", seed=3, k=1)
    manifest = Manifest.create(tmp_path / "imports.manifest", plan_study(*read_study_inputs(config), config))
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "state.json").write_text('{"fingerprint": "f"}\n', encoding="utf-8")
    done = subprocess.run([sys.executable, "-c", PROBE, str(manifest.path), str(tmp_path / "cache")],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    answer = json.loads(done.stdout)
    assert answer["workers"] == len(manifest.workers()) > 0 and answer["digest"] == manifest.digest
    assert answer["state"] == {"fingerprint": "f"}
    assert answer["imported"] == []
    assert answer["tasks"] == len(manifest.tasks()) and answer["then"] == ["numpy", "pandas"]
