"""The default study has no webhook (issue 24): Label Studio sends a webhook inside the annotator's Submit (+36.0 ms
p50 / +40.0 ms p95 in ``bench/results/study_scale_bench.txt``), so ``posthoc study create`` removes the one Label
Studio makes for the backend, and ``posthoc study status`` with its defaults reads progress from Label Studio's API.

On one real study: created with the defaults, no project has a webhook and Submit reaches no receiver; a rerun with
``--webhook`` makes it again (once, however often it is run), annotations then reach the event store, and ``status``
with its defaults (``POSTHOC_LS_URL``, the token in ``LABEL_STUDIO_TOKEN``) reports exactly what the event store
reports; a rerun with the defaults removes the webhook again."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import requests

from lsfixtures import run_backend, small_sample_manifest
from posthoc.jobs.setup import SetupOptions, SetupTarget, create_study
from posthoc.study.live.events import EventStore
from posthoc.study.plan.study import Study

pytestmark = pytest.mark.labelstudio
STUDY = "nohook"
DOMAIN = "nohook.posthoc.local"  # one Label Studio serves every test module: logins must not collide


def _hooks(ls_server: Any, project_id: int) -> list[dict[str, Any]]:
    answer = requests.get(f"{ls_server.url}/api/webhooks/", params={"project": project_id}, timeout=60,
                          headers={"Authorization": f"Token {ls_server.token}"})
    assert answer.status_code == 200, answer.text
    return [h for h in answer.json() if h.get("project") == project_id]


def _status(manifest: Path, out: Path, env: dict[str, str], *args: str) -> str:
    """``posthoc study status --manifest M --out OUT ARGS`` in a process of its own, with exactly ``env``'s
    Label Studio variables; its output."""
    clean = {k: v for k, v in os.environ.items() if k not in ("POSTHOC_LS_URL", "LABEL_STUDIO_TOKEN")}
    done = subprocess.run([sys.executable, "-m", "posthoc.cli.main", "study", "status", "--manifest", str(manifest),
                           "--out", str(out), *args], capture_output=True, text=True, env={**clean, **env},
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def _submit(ls_server: Any, manifest: Any, project_id: int, n: int) -> int:
    """Submit ``n`` of the project's tasks through the API: the control tasks decided as the manifest expects, the
    others verified, the last one cancelled (a skip); how many were submitted."""
    headers = {"Authorization": f"Token {ls_server.token}"}
    tasks = requests.get(f"{ls_server.url}/api/tasks/", params={"project": project_id, "fields": "all"},
                         headers=headers, timeout=60).json()["tasks"][:n]
    for number, task in enumerate(tasks, 1):
        prefill = manifest.prefill(task["data"]["task_key"]).to_dict("records")
        decisions = {m["mention_id"]: m["expected_outcome"] or "verify" for m in prefill}
        result = [{**item, "value": {**item["value"], "labels": [decisions[item["id"]]]}}  # the region's label
                  if item["type"] == "labels" and item["id"] in decisions else item
                  for item in task["predictions"][0]["result"]]
        body = ({"result": [], "lead_time": 1.0, "was_cancelled": True} if number == len(tasks) else
                {"result": result, "lead_time": 2.0})
        posted = requests.post(f"{ls_server.url}/api/tasks/{task['id']}/annotations/", headers=headers, timeout=60,
                               json=body)
        assert posted.status_code == 201, posted.text
    return len(tasks)


def test_the_default_study_has_no_webhook_and_status_reads_the_api(ls_server: Any, tmp_path: Path) -> None:
    manifest = small_sample_manifest(tmp_path / "nohook.manifest", name=STUDY, n_workers=4)
    headers = {"Authorization": f"Token {ls_server.token}"}
    events = tmp_path / "receiver.events.sqlite3"  # not beside the manifest: status's defaults do not see it
    with run_backend(manifest.path, events_db=events) as backend_url:
        target = SetupTarget(url=ls_server.url, token=ls_server.token, backend_url=backend_url)
        setup = create_study(Study(manifest), target, SetupOptions(email_domain=DOMAIN))
        projects = setup.project_ids()
        for project_id in projects.values():
            assert _hooks(ls_server, project_id) == []  # the backend's auto-created hook was removed
            backends = requests.get(f"{ls_server.url}/api/ml/", params={"project": project_id}, headers=headers,
                                    timeout=60).json()
            assert [b["url"].rstrip("/") for b in backends] == [backend_url]  # the backend stays connected
        first, second = sorted(projects)[:2]
        _submit(ls_server, manifest, projects[first], 2)
        assert EventStore(events).events().empty  # Submit reached no receiver

        for _ in range(2):  # --webhook on the same study makes the webhook again, once however often it runs
            again = create_study(Study(manifest), target, SetupOptions(email_domain=DOMAIN, webhook=True))
            assert again.imported_tasks == 0
            for project_id in projects.values():
                assert [(h["url"], h["send_for_all_actions"], h["is_active"]) for h in _hooks(ls_server, project_id)
                        ] == [(f"{backend_url}/webhook", True, True)]
        submitted = _submit(ls_server, manifest, projects[second], 4)
        stored = EventStore(events).events()
        assert (stored["action"] == "ANNOTATION_CREATED").sum() == submitted  # the webhook now tells the receiver

        # the same annotations (w-second's), read from the event store and with status's defaults (the API)
        from_store = _status(manifest.path, tmp_path / "store", {}, "--events-db", str(events))
        beside = Path(manifest.path)
        EventStore(beside.with_name(f"{beside.stem}.events.sqlite3"))  # an empty default store is no source
        from_api = _status(manifest.path, tmp_path / "api",
                           {"POSTHOC_LS_URL": ls_server.url, "LABEL_STUDIO_TOKEN": ls_server.token})
        assert f"study {STUDY}: {submitted} annotations (event store)" in from_store, from_store
        assert f"study {STUDY}: {submitted + 2} annotations (Label Studio API)" in from_api, from_api
        store_workers = pd.read_csv(tmp_path / "store" / "workers.csv").set_index("worker")
        api_workers = pd.read_csv(tmp_path / "api" / "workers.csv").set_index("worker")
        pd.testing.assert_frame_equal(api_workers.drop(index=first), store_workers.drop(index=first))
        assert api_workers.loc[second, "tasks_done"] == submitted - 1 and api_workers.loc[second, "cancelled"] == 1
        assert api_workers.loc[first, "tasks_done"] == 1 and store_workers.loc[first, "tasks_done"] == 0
        controls = {name: pd.read_csv(tmp_path / name / "controls.csv") for name in ("api", "store")}
        controls = {name: frame[frame["worker"] == second].reset_index(drop=True) for name, frame in controls.items()}
        pd.testing.assert_frame_equal(controls["api"], controls["store"])
        assert len(controls["api"]) >= 1 and controls["api"]["passed"].all()  # decided as the manifest expects

        final = create_study(Study(manifest), target, SetupOptions(email_domain=DOMAIN))  # the defaults: it goes
        assert final.imported_tasks == 0
        assert all(_hooks(ls_server, p) == [] for p in projects.values())
