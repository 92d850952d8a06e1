"""A study run without the webhook (``posthoc study create --no-webhook``): no project webhook at all, Submit
reaches no receiver, and ``posthoc study status --url`` still counts every annotation from Label Studio's API."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import requests

from lsfixtures import run_backend, small_sample_manifest
from posthoc.jobs.setup import create_study

pytestmark = pytest.mark.labelstudio
STUDY = "nohook"
DOMAIN = "nohook.posthoc.local"  # one Label Studio serves every test module: logins must not collide


def _hooks(ls_server: Any, project_id: int) -> list[dict[str, Any]]:
    answer = requests.get(f"{ls_server.url}/api/webhooks/", params={"project": project_id}, timeout=60,
                          headers={"Authorization": f"Token {ls_server.token}"})
    assert answer.status_code == 200, answer.text
    return [h for h in answer.json() if h.get("project") == project_id]


def test_a_study_without_webhook_has_none_and_status_counts_from_the_api(ls_server: Any, tmp_path: Path) -> None:
    manifest = small_sample_manifest(tmp_path / "nohook.manifest", name=STUDY, n_workers=3, control_tasks=False)
    headers = {"Authorization": f"Token {ls_server.token}"}
    events = tmp_path / "nohook.events.sqlite3"
    with run_backend(manifest.path, events_db=events) as backend_url:
        setup = create_study(manifest, url=ls_server.url, token=ls_server.token, backend_url=backend_url,
                             webhook=False, email_domain=DOMAIN)
        projects = setup.project_ids()
        for project_id in projects.values():
            assert _hooks(ls_server, project_id) == []  # the backend's auto-created hook was removed
            backends = requests.get(f"{ls_server.url}/api/ml/", params={"project": project_id}, headers=headers,
                                    timeout=60).json()
            assert [b["url"].rstrip("/") for b in backends] == [backend_url]  # the backend stays connected
        again = create_study(manifest, url=ls_server.url, token=ls_server.token, backend_url=backend_url,
                             webhook=False, email_domain=DOMAIN)  # a rerun keeps it that way
        assert again.imported_tasks == 0
        assert all(_hooks(ls_server, p) == [] for p in projects.values())

        worker = sorted(projects)[0]
        tasks = requests.get(f"{ls_server.url}/api/tasks/", params={"project": projects[worker], "fields": "all"},
                             headers=headers, timeout=60).json()["tasks"]
        for task in tasks[:3]:
            posted = requests.post(f"{ls_server.url}/api/tasks/{task['id']}/annotations/", headers=headers,
                                   timeout=60, json={"result": [], "lead_time": 1.0, "was_cancelled": True})
            assert posted.status_code == 201, posted.text
        env = dict(os.environ, LABEL_STUDIO_TOKEN=ls_server.token)
        done = subprocess.run([sys.executable, "-m", "posthoc.cli.main", "study", "status", "--manifest",
                               str(manifest.path), "--url", ls_server.url, "--out", str(tmp_path / "status")],
                              capture_output=True, text=True,
                              env=env, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"study {STUDY}: 3 annotations" in done.stdout, done.stdout
    import pandas as pd

    workers = pd.read_csv(tmp_path / "status" / "workers.csv").set_index("worker")
    assert workers.loc[worker, "cancelled"] == 3 and workers.loc[worker, "tasks_done"] == 0
    assert workers["cancelled"].sum() == 3  # and nothing for the other worker
    from posthoc.study.live.events import EventStore

    assert EventStore(events).events().empty  # nothing ever reached the receiver
