"""The backend served for real over loopback HTTP: werkzeug in a thread, and gunicorn via `posthoc backend serve`."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from werkzeug.serving import make_server

from backend.payloads import annotation_event, ls_task, predict_payload
from posthoc.study.live.events import EventStore
from posthoc.study.plan.manifest import Manifest
from posthoc_backend.app import create_app
from posthoc_backend.protocol import MODEL_VERSION


@pytest.fixture
def served(manifest: Manifest, tmp_path: Path) -> Iterator[str]:
    """The app on a werkzeug server on a free loopback port, in a thread."""
    server = make_server("127.0.0.1", 0, create_app(manifest, events_db=tmp_path / "events.sqlite3"), threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join(timeout=10)


def test_protocol_over_http(served: str, manifest: Manifest, config: str) -> None:
    with requests.Session() as session:
        assert session.get(f"{served}/health", timeout=10).json()["status"] == "UP"
        assert session.post(f"{served}/setup", json={"project": "1.1", "schema": config},
                            timeout=10).json() == {"model_version": MODEL_VERSION}
        records = manifest.tasks().to_dict("records")[:10]
        reply = session.post(f"{served}/predict", json=predict_payload([ls_task(r) for r in records], config),
                             timeout=30)
        assert reply.status_code == 200 and reply.headers["Content-Type"].startswith("application/json")
        results = reply.json()["results"]
        assert len(results) == 10
        for record, prediction in zip(records, results, strict=True):
            for item in prediction["result"]:
                if item["type"] == "labels":
                    assert item["value"]["text"] == record["text"][item["value"]["start"]:item["value"]["end"]]
        bad = session.post(f"{served}/predict", data=b"\xff\xfe not json", timeout=10,
                           headers={"Content-Type": "application/json"})
        assert bad.status_code == 400 and bad.json()["error"]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_up(url: str, process: subprocess.Popen[bytes], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"backend exited with {process.returncode}")
        try:
            if requests.get(f"{url}/health", timeout=5).status_code == 200:
                return
        except requests.RequestException:
            time.sleep(0.3)
    raise AssertionError(f"backend did not answer on {url} within {timeout} s")


@pytest.mark.slow
def test_posthoc_backend_serve_runs_gunicorn_with_the_secret_from_the_environment(
        manifest_path: Path, manifest: Manifest, config: str, tmp_path: Path) -> None:
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    events = tmp_path / "served.events.sqlite3"
    home = tmp_path / "home"  # gunicorn 25+ would make its control socket at ~/.gunicorn/gunicorn.ctl
    home.mkdir()
    env = {**os.environ, "POSTHOC_BACKEND_SECRET": "gunicorn-secret", "HOME": str(home)}
    process = subprocess.Popen(
        [sys.executable, "-m", "posthoc.cli.main", "backend", "serve", "--manifest", str(manifest_path),
         "--port", str(port), "--workers", "2", "--events-db", str(events)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    try:
        _wait_up(url, process)
        record = manifest.tasks().to_dict("records")[0]
        body = predict_payload([ls_task(record)], config)
        assert requests.post(f"{url}/predict", json=body, timeout=10).status_code == 401
        reply = requests.post(f"{url}/predict", json=body, auth=("label-studio", "gunicorn-secret"), timeout=10)
        assert reply.status_code == 200
        assert reply.json()["results"][0]["model_version"] == MODEL_VERSION
        event = annotation_event("ANNOTATION_CREATED", annotation_id=1, task_id=1, task_key=record["task_key"],
                                 text=record["text"], result=[])
        hook = requests.post(f"{url}/webhook", json=event, headers={"Authorization": "Bearer gunicorn-secret"},
                             timeout=10)
        assert hook.status_code == 200 and hook.json()["queued"] == 1
        assert list(EventStore(events).events()["task_key"]) == [record["task_key"]]
        assert not (home / ".gunicorn").exists()  # no control socket shared by every gunicorn of the user
    finally:
        process.terminate()
        _, stderr = process.communicate(timeout=30)
    assert b"gunicorn-secret" not in stderr  # the secret never reaches the log


def test_serve_refuses_missing_inputs(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from posthoc.cli.main import cli

    run = CliRunner().invoke(cli, ["backend", "serve", "--manifest", str(tmp_path / "none.sqlite")])
    assert run.exit_code != 0 and "no such file" in str(run.exception or run.output)
    run = CliRunner().invoke(cli, ["backend", "serve"])
    assert run.exit_code != 0 and "--manifest" in str(run.exception or run.output)


def test_wsgi_settings_come_from_the_environment(monkeypatch: pytest.MonkeyPatch, manifest_path: Path,
                                                 config: str, tmp_path: Path) -> None:
    from posthoc.errors import PosthocInputError
    from posthoc_backend.app import app_from_environment

    for key in ("POSTHOC_MANIFEST", "POSTHOC_ALIAS_FILES", "POSTHOC_EVENTS_DB", "POSTHOC_BACKEND_SECRET"):
        monkeypatch.delenv(key, raising=False)
    with pytest.raises(PosthocInputError, match="POSTHOC_MANIFEST"):
        app_from_environment()
    aliases = tmp_path / "aliases.csv"
    aliases.write_text("surface,link\nghent,https://en.wikipedia.org/wiki/Ghent\n", encoding="utf-8")
    monkeypatch.setenv("POSTHOC_MANIFEST", str(manifest_path))
    monkeypatch.setenv("POSTHOC_ALIAS_FILES", str(aliases))
    monkeypatch.setenv("POSTHOC_ALIAS_CASE_INSENSITIVE", "1")
    monkeypatch.setenv("POSTHOC_EVENTS_DB", str(tmp_path / "env.events.sqlite3"))
    monkeypatch.setenv("POSTHOC_BACKEND_SECRET", "from-env")
    client = app_from_environment().test_client()
    health = client.get("/health").json
    assert health["live_mode"] and health["manifest"]
    body = predict_payload([{"id": 1, "data": {"text": "Off to Ghent."}}], config)
    assert client.post("/predict", json=body).status_code == 401
    reply = client.post("/predict", json=body, headers={"Authorization": "Bearer from-env"})
    (item, _) = reply.json["results"][0]["result"]
    assert item["value"]["text"] == "Ghent"
    assert (tmp_path / "env.events.sqlite3").is_file()


@pytest.mark.slow
def test_the_app_warms_the_label_config_parser_before_its_first_request(manifest_path: Path) -> None:
    """Label Studio gives /setup 3 s; the SDK's label-config parser, imported lazily, took 4.3 s under load (issue
    29). A fresh process that only builds the app (as each gunicorn worker does before it accepts) has it loaded."""
    probe = ("import sys; from posthoc_backend.app import create_app; "
             "before = 'label_studio_sdk.label_interface' in sys.modules; "
             f"create_app({str(manifest_path)!r}); "
             "print(before, 'label_studio_sdk.label_interface' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True)
    assert result.stdout.split() == ["False", "True"]
