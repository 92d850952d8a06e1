"""``posthoc study extend`` and ``reassign`` on a real Label Studio, with simulated annotators.

A study of 6 workers (k = 2) planned over the first 4 documents of each dataset of its seeded ranking (one batch
a worker) is created, simulated through each worker's first batch (the pilot; w003 verifies everything and fails
their control task), scored, extended until every cell's predicted half-width is under a target, reassigned (w003
failed, w005 left after the pilot, one new account), finished by simulation and scored with the defaults. Then:
every item is judged by exactly k passing workers, no project holds a task twice, every project's tasks are its
worker's manifest tasks in manifest order (and the simulated annotators found /next serving exactly that order),
and a rerun of both commands changes neither the manifest nor Label Studio's task counts. The ML backend, started
before the extension and never restarted, pre-fills a task the extension appended when Label Studio asks it
(issue 28: it follows the revised manifest). The 20-worker scale is the bench's (``bench/study_extend_bench.py``);
here the fewest workers and documents that still have a failed, a departed and a new worker, a reachable target
and a control task in every batch.
"""

from __future__ import annotations

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
from posthoc.jobs.setup_record import default_setup_file, recorded_project_ids
from posthoc.jobs.simulate import SimulationConfig
from posthoc.labelstudio import records as ls
from posthoc.labelstudio.client import LabelStudioClient
from posthoc.study.plan.manifest import Manifest
from posthoc_backend.protocol import MODEL_VERSION

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "study"))
from extend_factory import write_study

pytestmark = [pytest.mark.labelstudio, pytest.mark.slow]

SIMULATION = SimulationConfig(seed=7, careless_worker="w003", control_accuracy=1.0)


def _posthoc(folder: Path, server: Any, backend: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "POSTHOC_LS_TOKEN": server.token}
    done = subprocess.run([sys.executable, "-m", "posthoc.cli.main", "study", *args, "--manifest", "m.sqlite",
                           "--url", server.url, "--backend-url", backend, "--no-progress"],
                          capture_output=True, text=True, cwd=folder, env=env, timeout=900, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def _simulate(manifest_path: Path, server: Any, workers: list[str], *, first_batch: bool = False) -> int:
    return simulate_workers(manifest_path, url=server.url, admin_token=server.token, workers=workers,
                            config=SIMULATION, first_batch=first_batch)


def _label_studio_tasks(manifest_path: Path, server: Any) -> dict[str, list[str]]:
    return project_task_keys(manifest_path, url=server.url, admin_token=server.token)


def _score(manifest_path: Path, server: Any, out: Path) -> pd.DataFrame:
    run_score_job(manifest_path=manifest_path, out_dir=out, source=JudgementSource(ls_url=server.url,
                                                                                    token=server.token))
    return pd.read_csv(out / "judgements.csv", dtype={"worker": str, "item_id": str, "task_key": str})


def _check_backend_pre_fills_an_appended_task(manifest_path: Path, server: Any, after: Manifest) -> None:
    """Take the prediction the setup imported off a task the extension appended, ask Label Studio to retrieve
    predictions for it (the Data Manager's action: Label Studio calls the backend's /setup and /predict), and find
    the manifest's pre-fill on it again: the backend, started on the plan, read the revised manifest."""
    marks = after.task_revisions()
    appended = marks.loc[marks["revision"] == 1].iloc[0]
    project = recorded_project_ids(default_setup_file(manifest_path), study=after.study)[str(appended["worker"])]
    admin = LabelStudioClient(server.url, server.token)
    (task,) = [t for t in admin.tasks(project) if ls.task_data(t).get("task_key") == appended["task_key"]]
    for prediction in admin.predictions(ls.int_id(task)):
        admin.request("DELETE", f"/api/predictions/{ls.int_id(prediction)}/")
    assert admin.predictions(ls.int_id(task)) == []
    admin.request("POST", "/api/dm/actions", params={"id": "retrieve_tasks_predictions", "project": project},
                  json={"selectedItems": {"all": False, "included": [ls.int_id(task)]}})
    (prediction,) = admin.predictions(ls.int_id(task))
    assert prediction["model_version"] == MODEL_VERSION
    labelled = [item["id"] for item in prediction["result"] if item["type"] == "labels"]
    assert labelled == list(after.prefill(str(appended["task_key"]))["mention_id"])


def test_extend_and_reassign_a_running_study(ls_server: Any, tmp_path: Path) -> None:
    from posthoc.study.plan.config import load_study_config, read_study_inputs
    from posthoc.study.plan.revision import config_of
    from posthoc.study.planner.extension_target import documents_for_target
    from posthoc.study.planner.rates import rates_from_pilot

    write_study(tmp_path, n_docs=20, n_pilot=4, n_workers=6, k=2, name="extend-live")
    manifest_path = tmp_path / "m.sqlite"
    planned = subprocess.run([sys.executable, "-m", "posthoc.cli.main", "study", "plan", "--config", "pilot.toml",
                              "--out", str(manifest_path), "--no-progress"], capture_output=True, text=True,
                             cwd=tmp_path, timeout=300, check=False)
    assert planned.returncode == 0, planned.stderr
    with run_backend(manifest_path) as backend:
        _posthoc(tmp_path, ls_server, backend, "create")
        workers = Manifest.open(manifest_path).workers()
        assert _simulate(manifest_path, ls_server, workers, first_batch=True) > 0
        pilot = _score(manifest_path, ls_server, tmp_path / "pilot")
        pilot.to_csv(tmp_path / "pilot.csv", index=False)

        # a target the pilot's documents miss and the pool reaches: 85% of the widest cell's half-width now
        opened = Manifest.open(manifest_path)
        documents, mentions = read_study_inputs(load_study_config(tmp_path / "study.toml"))
        now = documents_for_target(documents, mentions, config_of(opened.config), {"set0": 4, "set1": 4},
                                   rates_from_pilot(pilot), target=0.99, runs=50)
        target = round(0.85 * max(row["widest_now"] for row in now.values()), 4)
        extended = _posthoc(tmp_path, ls_server, backend, "extend", "--config", "study.toml", "--pilot", "pilot.csv",
                            "--target-halfwidth", str(target), "--runs", "50")
        assert "revision 1 (extend) written" in extended.stdout
        after = Manifest.open(manifest_path)
        assert after.documents().groupby("dataset").size().max() > 4
        assert _label_studio_tasks(manifest_path, ls_server) == {
            w: list(after.tasks(w)["task_key"]) for w in after.workers()}
        _check_backend_pre_fills_an_appended_task(manifest_path, ls_server, after)

        reassigned = _posthoc(tmp_path, ls_server, backend, "reassign", "--failed-from", str(tmp_path / "pilot"),
                              "--left", "w005", "--new-workers", "1")
        assert "revision 2 (reassign) written" in reassigned.stdout
        final = Manifest.open(manifest_path)
        assert "w007" in final.workers()
        assert set(final.withdrawn().values()) == {"failed control tasks", "left the study"}
        active = [w for w in final.workers() if w not in ("w003", "w005")]
        assert _simulate(manifest_path, ls_server, active) > 0
        judgements = _score(manifest_path, ls_server, tmp_path / "final")

        # every item judged by exactly k passing workers; the failed worker's judgements stay, excluded
        controls = pd.read_csv(tmp_path / "final" / "tables" / "controls.csv", dtype={"worker": str})
        failing = set(controls.loc[controls["excluded"].astype(bool), "worker"])
        assert failing == {"w003"}
        real = judgements.loc[~judgements["is_control"].astype(bool) & ~judgements["worker"].isin(failing)]
        items = final.items()
        real_items = set(items.loc[~items["is_control"].astype(bool), "item_id"])
        judges = real.groupby("item_id")["worker"].nunique()
        assert set(judges.index) == real_items and (judges == final.k).all()
        assert "w003" in set(judgements["worker"])

        # no task twice in a project; each project's order is its worker's manifest order
        served = _label_studio_tasks(manifest_path, ls_server)
        assert served == {w: list(final.tasks(w)["task_key"]) for w in final.workers()}
        assert all(len(keys) == len(set(keys)) for keys in served.values())

        # reruns change nothing: no revision, the same file, the same tasks in Label Studio
        digest = final.digest
        again = _posthoc(tmp_path, ls_server, backend, "extend", "--config", "study.toml", "--pilot", "pilot.csv",
                         "--target-halfwidth", str(target), "--runs", "50")
        assert "nothing to change" in again.stdout
        again = _posthoc(tmp_path, ls_server, backend, "reassign", "--failed-from", str(tmp_path / "pilot"),
                         "--left", "w005", "--new-workers", "1")
        assert "nothing to change" in again.stdout
        assert Manifest.open(manifest_path).digest == digest
        assert _label_studio_tasks(manifest_path, ls_server) == served
