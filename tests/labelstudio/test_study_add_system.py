"""``posthoc study add-system`` on a real Label Studio, with simulated annotators (issue 46).

A study of GT and E2E (k = 2, 6 workers) is created and simulated to the end, then a third system (E2E's output with
every other link changed) is added with ``--fraction 0.5``: the revision is written, each worker's project holds
their manifest tasks in manifest order (the new system's sampled tasks at the end), the simulated annotators judge
them, the score job reads every new task's judgements (k per sampled item), and a rerun changes neither the
manifest nor Label Studio. The scoring of the new system from reused, sampled and predicted verdicts is the
estimation side's (``posthoc.metrics.ppi`` / ``posthoc.metrics.reuse``), not tested here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from lsfixtures import run_backend
from posthoc.jobs.revision_sim import project_task_keys, simulate_workers
from posthoc.jobs.score import JudgementSource, run_score_job
from posthoc.jobs.simulate import SimulationConfig
from posthoc.study.plan.manifest import Manifest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "study"))
from extend_factory import planned_study, posthoc_cli
from test_add_system_cli import _new_output

pytestmark = [pytest.mark.labelstudio, pytest.mark.slow]

SIMULATION = SimulationConfig(seed=7, control_accuracy=1.0)


def _posthoc(folder: Path, server: Any, backend: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``posthoc study ARGS`` on the study in ``folder`` against the test's Label Studio and ML backend."""
    connection = ("--manifest", "m.sqlite", "--url", server.url, "--backend-url", backend, "--no-progress")
    done = posthoc_cli("study", *args, *connection, cwd=folder, timeout=900,
                       env={**os.environ, "POSTHOC_LS_TOKEN": server.token})
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def test_add_a_system_to_a_finished_study(ls_server: Any, tmp_path: Path) -> None:
    planned_study(tmp_path, n_docs=16, n_pilot=4, n_workers=6, k=2, name="add-system-live")
    _new_output(tmp_path / "pilot-E2E.jsonl", tmp_path / "new.jsonl")
    manifest_path = tmp_path / "m.sqlite"
    with run_backend(manifest_path) as backend:
        _posthoc(tmp_path, ls_server, backend, "create")
        workers = Manifest.open(manifest_path).workers()
        assert simulate_workers(manifest_path, url=ls_server.url, admin_token=ls_server.token, workers=workers,
                                config=SIMULATION) > 0
        added = _posthoc(tmp_path, ls_server, backend, "add-system", "--input", "new.jsonl", "--system", "NEW",
                         "--fraction", "0.5")
        assert "revision 1 (add-system) written" in added.stdout
        after = Manifest.open(manifest_path)
        record = json.loads(after.revisions()["parameters"].iloc[0])
        stored = after.added_annotations()
        assert record["system"] == "NEW" and record["sampled_chunks"]
        assert sorted(set(stored.loc[stored["chunk_sampled"], "chunk_id"])) == record["sampled_chunks"]
        served = project_task_keys(manifest_path, url=ls_server.url, admin_token=ls_server.token)
        assert served == {w: list(after.tasks(w)["task_key"]) for w in after.workers()}

        assert simulate_workers(manifest_path, url=ls_server.url, admin_token=ls_server.token,
                                workers=after.workers(), config=SIMULATION) > 0
        run_score_job(manifest_path=manifest_path, out_dir=tmp_path / "score",
                      source=JudgementSource(ls_url=ls_server.url, token=ls_server.token))
        judgements = pd.read_csv(tmp_path / "score" / "judgements.csv", dtype={"item_id": str, "system": str})
        items = after.items()
        new_items = set(items.loc[items["system"] == "NEW", "item_id"])
        judged = judgements.loc[judgements["item_id"].isin(new_items)].groupby("item_id")["worker"].nunique()
        assert set(judged.index) == new_items and (judged == after.k).all()

        digest = after.digest
        again = _posthoc(tmp_path, ls_server, backend, "add-system", "--input", "new.jsonl", "--system", "NEW",
                         "--fraction", "0.5")
        assert "nothing to change" in again.stdout
        assert Manifest.open(manifest_path).digest == digest
        assert project_task_keys(manifest_path, url=ls_server.url, admin_token=ls_server.token) == served
