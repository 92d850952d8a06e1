"""A real Label Studio 1.23 connected to this backend: predictions on tasks, no duplicates, auth, webhooks."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from click.testing import CliRunner
from werkzeug.serving import make_server

from backend.payloads import region_decisions
from posthoc.study.live.events import EventStore, current_annotations
from posthoc.study.plan.manifest import Manifest
from posthoc_backend.app import create_app
from posthoc_backend.connect import connect_backend
from posthoc_backend.protocol import MODEL_VERSION

pytestmark = [pytest.mark.labelstudio, pytest.mark.slow]


@pytest.fixture
def serve_backend(manifest: Manifest, tmp_path: Path) -> Iterator[Callable[..., str]]:
    """Factory: serve create_app(manifest, **options) on a free loopback port in a thread; returns its URL."""
    servers: list[Any] = []

    def serve(**options: Any) -> str:
        options.setdefault("events_db", tmp_path / "events.sqlite3")
        server = make_server("127.0.0.1", 0, create_app(manifest, **options), threaded=True)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_port}"

    yield serve
    for server in servers:
        server.shutdown()


def _session(ls_server: Any) -> requests.Session:
    session = requests.Session()
    session.headers["Authorization"] = f"Token {ls_server.token}"
    return session


def _import_worker_tasks(session: requests.Session, url: str, project_id: int, manifest: Manifest,
                         worker: str) -> list[dict[str, Any]]:
    records = manifest.tasks(worker).to_dict("records")
    try:
        from posthoc.labelstudio.tasks import study_task_data

        data = [study_task_data(r["task_key"], r["text"], manifest.prefill(r["task_key"]).to_dict("records"))
                for r in records]
    except ImportError:  # the Label Studio helpers are optional here: text and key are what the backend reads
        data = [{"text": r["text"], "task_key": r["task_key"], "kb_pages": ""} for r in records]
    reply = session.post(f"{url}/api/projects/{project_id}/import", json=data, timeout=120)
    assert reply.status_code == 201, reply.text
    return records


def _tasks_with_predictions(session: requests.Session, url: str, project_id: int) -> list[dict[str, Any]]:
    reply = session.get(f"{url}/api/tasks/", params={"project": project_id, "fields": "all", "page_size": 1000},
                        timeout=120)
    assert reply.status_code == 200, reply.text
    body = reply.json()
    return list(body["tasks"] if isinstance(body, dict) else body)


def _retrieve_predictions(session: requests.Session, url: str, project_id: int) -> None:
    reply = session.post(f"{url}/api/dm/actions", params={"id": "retrieve_tasks_predictions", "project": project_id},
                         json={"selectedItems": {"all": True, "excluded": []}}, timeout=300)
    assert reply.status_code == 200, reply.text


def test_label_studio_pre_fills_tasks_without_duplicates(ls_server: Any, ls_project: Callable[..., Any],
                                                         serve_backend: Callable[..., str], manifest: Manifest,
                                                         config: str, tmp_path: Path) -> None:
    backend = serve_backend()
    worker = manifest.workers()[0]
    project = ls_project(config, title=f"{manifest.study} {worker} backend test")
    session = _session(ls_server)
    records = _import_worker_tasks(session, ls_server.url, project.id, manifest, worker)
    connection = connect_backend(ls_server.url, ls_server.token, project.id, backend, webhook=True)
    assert connection.webhook_id is not None  # Label Studio made the /webhook hook itself

    _retrieve_predictions(session, ls_server.url, project.id)
    tasks = _tasks_with_predictions(session, ls_server.url, project.id)
    assert len(tasks) == len(records)
    by_key = {r["task_key"]: r for r in records}
    for task in tasks:
        (prediction,) = task["predictions"]
        assert prediction["model_version"] == MODEL_VERSION and prediction["score"] is None
        expected = manifest.prefill(task["data"]["task_key"])
        ids = [item["id"] for item in prediction["result"] if item["type"] == "labels"]
        assert ids == list(expected["mention_id"])
        text = by_key[task["data"]["task_key"]]["text"]
        for item in prediction["result"]:
            assert item["value"]["start"] < item["value"]["end"] <= len(text)
            if item["type"] == "labels":
                assert item["value"]["text"] == text[item["value"]["start"]:item["value"]["end"]]

    # opening a task twice and asking again for predictions adds none: /setup and /predict agree
    first = tasks[0]["id"]
    for _ in range(2):
        assert session.get(f"{ls_server.url}/api/tasks/{first}/", timeout=60).status_code == 200
    _retrieve_predictions(session, ls_server.url, project.id)
    again = _tasks_with_predictions(session, ls_server.url, project.id)
    assert [len(t["predictions"]) for t in again] == [1] * len(records)

    # an annotation submitted in Label Studio reaches the event store through the auto-created webhook
    task = again[0]
    decisions = {m: "verify" for m in manifest.prefill(task["data"]["task_key"])["mention_id"]}
    result = region_decisions(task["predictions"][0]["result"], decisions)
    posted = session.post(f"{ls_server.url}/api/tasks/{task['id']}/annotations/", json={"result": result},
                          timeout=60)
    assert posted.status_code == 201, posted.text
    annotations = current_annotations(EventStore(tmp_path / "events.sqlite3").events())
    assert list(annotations["task_key"]) == [task["data"]["task_key"]]
    assert {r["decision"] for r in annotations.loc[0, "regions"]} == {"verify"}

    # `posthoc study status` reads the same annotation from the event store and from Label Studio's API
    from posthoc.cli.status import status_command

    run = CliRunner().invoke(status_command, ["--manifest", str(manifest.path), "--events-db",
                                              str(tmp_path / "events.sqlite3"), "--url", ls_server.url,
                                              "--token-env", "POSTHOC_TEST_LS_TOKEN", "--out", str(tmp_path / "s")],
                             env={"POSTHOC_TEST_LS_TOKEN": ls_server.token})
    assert run.exit_code == 0, run.output
    assert "event store + Label Studio API" in run.output
    workers = (tmp_path / "s" / "workers.csv").read_text().splitlines()
    assert any(line.startswith(f"{worker},{len(records)},1,") for line in workers)


def test_label_studio_connects_with_basic_auth_when_a_secret_is_set(
        ls_server: Any, ls_project: Callable[..., Any], serve_backend: Callable[..., str], manifest: Manifest,
        config: str, tmp_path: Path) -> None:
    secret = "ls-basic-auth-secret"
    backend = serve_backend(secret=secret)
    worker = manifest.workers()[1]
    project = ls_project(config, title=f"{manifest.study} {worker} auth test")
    session = _session(ls_server)
    records = _import_worker_tasks(session, ls_server.url, project.id, manifest, worker)

    refused = session.post(f"{ls_server.url}/api/ml", json={"url": backend, "project": project.id, "title": "x"},
                           timeout=60)
    assert refused.status_code == 400  # /setup answered 401 without credentials

    connect_backend(ls_server.url, ls_server.token, project.id, backend, secret=secret, webhook=True)
    _retrieve_predictions(session, ls_server.url, project.id)
    tasks = _tasks_with_predictions(session, ls_server.url, project.id)
    assert [len(t["predictions"]) for t in tasks] == [1] * len(records)
    hooks = session.get(f"{ls_server.url}/api/webhooks/", params={"project": project.id}, timeout=60).json()
    assert secret not in str(hooks)  # the webhook carries the derived token only

    task = tasks[0]
    posted = session.post(f"{ls_server.url}/api/tasks/{task['id']}/annotations/",
                          json={"result": task["predictions"][0]["result"]}, timeout=60)
    assert posted.status_code == 201
    stored = EventStore(tmp_path / "events.sqlite3").events()
    assert list(stored["task_key"]) == [task["data"]["task_key"]]


def test_label_studio_keeps_the_good_tasks_of_a_batch_with_a_bad_one(
        ls_server: Any, ls_project: Callable[..., Any], serve_backend: Callable[..., str], manifest: Manifest,
        config: str) -> None:
    backend = serve_backend()
    records = manifest.tasks(manifest.workers()[2]).to_dict("records")[:3]
    project = ls_project(config, title=f"{manifest.study} partial batch test")
    session = _session(ls_server)
    data = [{"text": r["text"], "task_key": r["task_key"], "kb_pages": "<p>pages</p>"} for r in records]
    data[1]["text"] = data[1]["text"] + " (changed after planning)"
    assert session.post(f"{ls_server.url}/api/projects/{project.id}/import", json=data, timeout=60).status_code == 201
    connection = connect_backend(ls_server.url, ls_server.token, project.id, backend)
    assert connection.webhook_id is None  # by default the webhook Label Studio made is removed
    hooks = session.get(f"{ls_server.url}/api/webhooks/", params={"project": project.id}, timeout=60).json()
    assert [h for h in hooks if h["project"] == project.id] == []
    _retrieve_predictions(session, ls_server.url, project.id)
    tasks = sorted(_tasks_with_predictions(session, ls_server.url, project.id), key=lambda t: t["id"])
    counts = {t["data"]["task_key"]: len(t["predictions"]) for t in tasks}
    assert counts == {records[0]["task_key"]: 1, records[1]["task_key"]: 0, records[2]["task_key"]: 1}
