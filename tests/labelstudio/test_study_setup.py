"""Study setup against a real Label Studio and the real ML backend (issue 3, acceptance).

One small study (5 sample documents, 4 workers, batches of 5 with a control task) is set up once per
module: first interrupted (tasks missing at the end of one project, a task without its prediction, a
duplicate prediction), then completed by a rerun. The tests check the final state, walk every
worker's stream through ``/next`` as that worker, post annotations as them and read the snapshot export.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from lsfixtures import run_backend, small_sample_manifest
from posthoc.jobs.setup import (
    MARKER,
    SEQUENTIAL,
    SetupOptions,
    SetupTarget,
    create_study,
    project_markers,
    read_accounts,
)
from posthoc.jobs.simulate import SimulationConfig, annotate_stream, plan_decisions
from posthoc.labelstudio.client import LabelStudioClient
from posthoc.labelstudio.label_config import verification_tags
from posthoc.labelstudio.tasks import TASK_DATA_KEYS
from posthoc.paths import label_config
from posthoc.study.plan.study import Study

pytestmark = [pytest.mark.labelstudio, pytest.mark.slow]

STUDY = "itest"
DOMAIN = "itest.posthoc.local"  # one Label Studio serves every test module: logins must not collide


def _state(client: LabelStudioClient, study: str) -> dict[str, Any]:
    """Everything setup may create, counted: projects, tasks, users, predictions, ML backends."""
    projects = [p for p in client.projects() if any(m.startswith(f"{MARKER} {study} ") for m in project_markers(p))]
    tasks = {p["id"]: list(client.tasks(p["id"])) for p in projects}
    return {
        "projects": sorted((p["id"], p["title"]) for p in projects),
        "tasks": {pid: [(t["id"], t["data"]["task_key"]) for t in ts] for pid, ts in tasks.items()},
        "predictions": {pid: sorted(pr["id"] for t in ts for pr in t["predictions"]) for pid, ts in tasks.items()},
        "backends": {p["id"]: [b["id"] for b in client.ml_backends(p["id"])] for p in projects},
        "users": sorted(u["email"] for u in client.get("/api/users/")),
    }


@pytest.fixture(scope="module")
def study(ls_server, tmp_path_factory) -> Any:
    folder = tmp_path_factory.mktemp("study")
    manifest = small_sample_manifest(folder / "manifest.sqlite", name=STUDY)
    client = LabelStudioClient(ls_server.url, ls_server.token)
    with run_backend(manifest.path) as backend_url:
        accounts = folder / "accounts.json"
        target = SetupTarget(url=ls_server.url, token=ls_server.token, backend_url=backend_url)
        first = create_study(Study(manifest), target, SetupOptions(accounts_file=accounts, email_domain=DOMAIN))
        # an interruption: the last two tasks of w001 never imported, one task of w002 never predicted,
        # and a duplicate prediction in w003
        p1, p2, p3 = (first.project_ids()[w] for w in ("w001", "w002", "w003"))
        for task in list(client.tasks(p1))[-2:]:
            client.delete(f"/api/tasks/{task['id']}/")
        victim = list(client.tasks(p2))[3]
        for prediction in victim["predictions"]:
            client.delete(f"/api/predictions/{prediction['id']}/")
        doubled = list(client.tasks(p3))[1]
        original = doubled["predictions"][0]
        client.post("/api/predictions/", {"task": doubled["id"], "result": original["result"],
                                          "model_version": original["model_version"]})
        second = create_study(Study(manifest), target, SetupOptions(accounts_file=accounts, email_domain=DOMAIN))
        yield {"manifest": manifest, "first": first, "second": second, "backend_url": backend_url,
               "accounts": accounts, "client": client, "folder": folder}


def test_first_run_creates_everything(study) -> None:
    first, manifest = study["first"], study["manifest"]
    assert first.created_projects == 4 and first.created_users == 4
    assert first.imported_tasks == len(manifest.tasks()) == first.predicted_tasks
    assert [p.worker for p in first.projects] == manifest.workers()


def test_rerun_after_interruption_completes_without_duplicates(study) -> None:
    second = study["second"]
    assert second.created_projects == 0 and second.created_users == 0
    assert second.imported_tasks == 2
    assert second.predicted_tasks == 3  # the two re-imported tasks and the one stripped of its prediction
    assert second.deleted_duplicates == 1


def test_one_project_per_worker_with_the_right_settings(study, ls_server) -> None:
    client, manifest = study["client"], study["manifest"]
    for project in study["second"].projects:
        details = client.get(f"/api/projects/{project.project_id}/")
        assert details["title"] == f"{STUDY} · worker {project.worker}"
        assert details["sampling"] == SEQUENTIAL
        assert details["maximum_annotations"] == 1
        assert details["show_skip_button"] is False
        assert details["model_version"] == "posthoc-v1"
        assert details["label_config"].strip() == label_config("entity_verification").strip()
        assert project.n_tasks == len(manifest.tasks(project.worker))
        # the marker is for machines: kept out of the description a project card shows (issue 13)
        assert MARKER not in details["description"] and project.worker in details["description"]
        assert project_markers(details) == {f"{MARKER} {STUDY} worker {project.worker}"}  # in expert_instruction
        assert project.link == f"{ls_server.url}/projects/{project.project_id}/data?labeling=1"


def test_every_task_holds_exactly_the_manifest_prefill(study) -> None:
    client, manifest = study["client"], study["manifest"]
    tasks_by_key = manifest.tasks().set_index("task_key")
    for project in study["second"].projects:
        tasks = list(client.tasks(project.project_id))
        assert [t["data"]["task_key"] for t in tasks] == manifest.tasks(project.worker)["task_key"].tolist()
        for number, task in enumerate(tasks, start=1):
            key = task["data"]["task_key"]
            assert set(task["data"]) == set(TASK_DATA_KEYS)
            assert task["data"]["batch_position"] == f"Task {number} of {len(tasks)} in your batch"
            assert task["data"]["text"] == tasks_by_key.loc[key, "text"]
            shown = " ".join(task["data"].values())
            assert tasks_by_key.loc[key, "dataset"] not in shown and tasks_by_key.loc[key, "item_id"] not in shown
            assert len(task["predictions"]) == 1
            result = task["predictions"][0]["result"]
            assert task["predictions"][0].get("score") is None
            expected = manifest.prefill(key)
            regions = [r for r in result if r["type"] == "labels"]
            assert [r["id"] for r in regions] == expected["mention_id"].tolist()
            text = task["data"]["text"]
            for region, row in zip(regions, expected.itertuples(index=False), strict=True):
                assert (region["value"]["start"], region["value"]["end"]) == (row.start, row.end)
                assert region["value"]["text"] == text[row.start:row.end] == row.surface


def test_accounts_file_is_private_and_logins_work(study, ls_server) -> None:
    from posthoc.labelstudio.users import login

    accounts = study["accounts"]
    assert oct(os.stat(accounts).st_mode & 0o777) == "0o600"
    stored = read_accounts(accounts)
    assert sorted(stored) == study["manifest"].workers()
    assert login(ls_server.url, stored["w001"]["email"], stored["w001"]["password"]) is not None
    assert login(ls_server.url, stored["w001"]["email"], "not-the-password") is None


@pytest.fixture(scope="module")
def annotated(study, ls_server) -> dict[str, Any]:
    """Every worker walks their stream via /next (their own token) and annotates as simulated.

    ``annotate_stream`` raises if ``/next`` serves any task out of the planned order."""
    from posthoc.labelstudio.users import ensure_user

    manifest = study["manifest"]
    tags = verification_tags(label_config("entity_verification"))
    decisions = plan_decisions(manifest.mentions(), SimulationConfig(seed=3, careless_worker="w002"))
    stored = read_accounts(study["accounts"])
    tokens = {}
    for project in study["second"].projects:
        account = ensure_user(ls_server.url, ls_server.token, email=stored[project.worker]["email"],
                              password=stored[project.worker]["password"])
        tokens[project.worker] = account.token
        mine = decisions[decisions["worker"] == project.worker]
        posted = annotate_stream(LabelStudioClient(ls_server.url, account.token), project.project_id, mine, tags)
        assert posted == mine["task_key"].nunique()
    return {"decisions": decisions, "tokens": tokens}


def test_next_serves_the_planned_order_then_nothing(study, annotated, ls_server) -> None:
    # annotate_stream raised if /next had served any task out of the planned order; now the stream is done
    for project in study["second"].projects:
        worker_client = LabelStudioClient(ls_server.url, annotated["tokens"][project.worker])
        assert worker_client.next_task(project.project_id) is None


def test_export_holds_completed_by_outcomes_and_positions(study, annotated) -> None:
    client, manifest = study["client"], study["manifest"]
    decisions = annotated["decisions"].set_index("mention_id")
    tags = verification_tags(label_config("entity_verification"))
    stored = read_accounts(study["accounts"])
    positions = manifest.tasks().set_index("task_key")["position"]
    seen: Counter[str] = Counter()
    for project in study["second"].projects:
        export = sorted(client.export_snapshot(project.project_id), key=lambda t: t["id"])
        assert len(export) == project.n_tasks
        for place, task in enumerate(export):
            key = task["data"]["task_key"]
            assert positions[key] == place  # import order = planned position
            assert len(task["predictions"]) == 1 and isinstance(task["predictions"][0], dict)
            (annotation,) = task["annotations"]
            assert annotation["completed_by"]["email"] == stored[project.worker]["email"]
            assert annotation["was_cancelled"] is False
            by_region = {}
            for item in annotation["result"]:
                if item["from_name"] == tags.decision:  # the region's label is its decision
                    by_region[item["id"]] = item["value"]["labels"][0]
                if item["from_name"] == tags.new_link:
                    assert decisions.loc[item["id"], "new_link"] == item["value"]["text"][0]
            for region, outcome in by_region.items():
                assert decisions.loc[region, "outcome"] == outcome
                assert decisions.loc[region, "worker"] == project.worker
                seen[outcome] += 1
    assert sum(seen.values()) == len(annotated["decisions"])
    assert set(seen) == {"verify", "edit", "remove"}


def test_rerun_through_the_cli_changes_nothing(study, annotated, ls_server) -> None:
    client = study["client"]
    before = _state(client, STUDY)
    env = {**os.environ, "POSTHOC_LS_TOKEN": ls_server.token}
    done = subprocess.run([sys.executable, "-m", "posthoc.cli.main", "study", "create", "--manifest",
                           str(study["manifest"].path), "--url", ls_server.url, "--backend-url", study["backend_url"],
                           "--accounts-file", str(study["accounts"]), "--email-domain", DOMAIN, "--no-progress"],
                          capture_output=True, text=True, env=env, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    assert "0 created, 0 tasks imported, 0 accounts created, 0 tasks pre-filled" in done.stdout
    assert ls_server.token not in done.stdout + done.stderr
    assert _state(client, STUDY) == before


def test_a_rerun_with_the_backend_down_fails_and_says_so(study, annotated, ls_server) -> None:
    """Nothing to set up, but the study cannot run without its backend (issue 29: this exited 0)."""
    import socket

    with socket.socket() as probe:  # a port nobody listens on: the backend is down
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}"
    before = _state(study["client"], STUDY)
    env = {**os.environ, "POSTHOC_LS_TOKEN": ls_server.token}
    done = subprocess.run([sys.executable, "-m", "posthoc.cli.main", "study", "create", "--manifest",
                           str(study["manifest"].path), "--url", ls_server.url, "--backend-url", dead,
                           "--accounts-file", str(study["accounts"]), "--email-domain", DOMAIN, "--no-progress",
                           "--backend-wait", "2"],
                          capture_output=True, text=True, env=env, timeout=600, check=False)
    assert done.returncode == 3
    assert done.stderr.strip() == (f"posthoc: service error: the ML backend at {dead} does not answer /health in 2 s "
                                   "(connection refused: is it running, and is the URL right?): start it (`posthoc "
                                   "backend serve --manifest MANIFEST --port PORT`) or fix --backend-url, then rerun")
    assert _state(study["client"], STUDY) == before


def test_cli_bad_manifest_is_one_line_exit_2(tmp_path: Path, ls_server) -> None:
    env = {**os.environ, "POSTHOC_LS_TOKEN": ls_server.token}
    done = subprocess.run([sys.executable, "-m", "posthoc.cli.main", "study", "create", "--manifest",
                           str(tmp_path / "missing.sqlite"), "--url", ls_server.url, "--backend-url",
                           "http://127.0.0.1:9"], capture_output=True, text=True, env=env, timeout=120, check=False)
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "does not exist" in done.stderr


def _counted_rerun(study, ls_server, *, verify: bool = False) -> tuple[Any, list[tuple[str, str]]]:
    """``create_study`` again through a proxy that records every call (method, path with ids as N)."""
    import re

    from faults.proxy import fault_proxy

    seen: list[tuple[str, str]] = []

    def record(method: str, path: str, n: int) -> None:
        seen.append((method, re.sub(r"/\d+/", "/N/", path.split("?")[0])))
        return None

    with fault_proxy(ls_server.url, record) as (url, _):
        again = create_study(Study(study["manifest"]),
                             SetupTarget(url=url, token=ls_server.token, backend_url=study["backend_url"]),
                             SetupOptions(accounts_file=study["accounts"], email_domain=DOMAIN, verify=verify))
    assert (again.created_projects, again.imported_tasks, again.predicted_tasks, again.created_users) == (0, 0, 0, 0)
    assert [call for call in seen if call[0] != "GET"] == []
    return again, seen


#: a rerun's calls: listings, and each worker's user by id (the accounts file knows their ids: no member listing),
#: and the server's release, asked once (a server outside 1.20-1.23 gets a warning line: issue 44)
RERUN_LISTINGS = {"/api/current-user/whoami", "/api/version", "/api/users/N/", "/api/projects/", "/api/webhooks/",
                  "/api/dm/views/"}


def test_a_rerun_with_nothing_to_do_reads_a_few_listings_and_writes_nothing(study, ls_server) -> None:
    """Through a counting proxy: no write, no task or prediction read (the setup record and Label Studio's project
    counts agree), only a few listings whatever the number of workers, and one read of each worker's user."""
    _, seen = _counted_rerun(study, ls_server)
    assert {path for _, path in seen} <= RERUN_LISTINGS, seen
    users = sum(path == "/api/users/N/" for _, path in seen)
    assert users == len(study["manifest"].workers())
    assert len(seen) - users <= 2 * len(RERUN_LISTINGS)


def test_a_rerun_with_verify_reads_every_project_back(study, ls_server) -> None:
    """``verify=True``: the task pages and one prediction listing a project, still no write."""
    import math

    manifest = study["manifest"]
    _, seen = _counted_rerun(study, ls_server, verify=True)
    task_pages = sum(math.ceil(len(manifest.tasks(w)) / 100) for w in manifest.workers())
    assert sum(path == "/api/tasks/" for _, path in seen) == task_pages
    assert sum(path == "/api/predictions/" for _, path in seen) == len(manifest.workers())  # one a project
    assert {path for _, path in seen if path not in ("/api/tasks/", "/api/predictions/")} <= RERUN_LISTINGS | {
        "/api/ml/", "/api/ml/N/versions"}, seen
