"""A backend that is slow only now: Label Studio's call to it times out, and the project asks again (issue 29).

Label Studio 1.23 adds an ML backend inside ``POST /api/ml/``: it calls the backend's ``/health`` (1 s) and
``/setup`` (3 s by default, ``ML_TIMEOUT_HEALTH`` / ``ML_TIMEOUT_SETUP``) and answers 400 when either is late. A
private Label Studio runs here with exactly those defaults; the real backend (``posthoc backend serve``, gunicorn)
is made late by stopping its processes (SIGSTOP), as a busy machine starves them, and let go (SIGCONT).
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from lsfixtures import private_label_studio, small_sample_manifest
from posthoc.errors import PosthocServiceError
from posthoc.labelstudio.backend import BackendLink, backend_refusal
from posthoc.labelstudio.client import LabelStudioClient
from posthoc.labelstudio.environment import ML_TIMEOUT_ENV, server_environment

pytestmark = [pytest.mark.labelstudio, pytest.mark.slow]


@pytest.fixture(scope="module")
def ls_with_default_timeouts(ls_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ML_TIMEOUT_HEALTH", "1")  # Label Studio's own defaults, not the 10 / 20 of `posthoc ls`
        patch.setenv("ML_TIMEOUT_SETUP", "3")
        with private_label_studio(ls_template, tmp_path_factory.mktemp("timeouts-ls")) as server:
            patch.undo()  # the server keeps the environment it started with
            yield server


@pytest.fixture(scope="module")
def gunicorn_backend(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    """``posthoc backend serve`` in its own process group: its URL and the group's id."""
    folder = tmp_path_factory.mktemp("timeouts-backend")
    manifest = small_sample_manifest(folder / "manifest.sqlite", name="slow-backend", n_workers=3,
                                     control_tasks=False)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen([sys.executable, "-m", "posthoc.cli.main", "backend", "serve", "--manifest",
                                str(manifest.path), "--port", str(port), "--workers", "1"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        else:
            pytest.fail("the backend did not answer /health in 120 s")
        yield url, process.pid
    finally:
        os.killpg(process.pid, signal.SIGCONT)
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)


def new_project(server: Any) -> int:
    from posthoc.paths import label_config

    client = LabelStudioClient(server.url, server.token)
    return int(client.post("/api/projects/", {"title": f"slow backend {time.monotonic_ns()}",
                                              "label_config": label_config("entity_verification")})["id"])


def test_a_backend_late_only_now_is_asked_again(ls_with_default_timeouts: Any, gunicorn_backend: tuple[str, int],
                                                caplog: pytest.LogCaptureFixture) -> None:
    url, group = gunicorn_backend
    server = ls_with_default_timeouts
    project = new_project(server)
    link = BackendLink(LabelStudioClient(server.url, server.token), url)
    os.killpg(group, signal.SIGSTOP)
    # late for the first try only: its /health is a GET, which Label Studio tries 3 times (1 s each) itself
    threading.Timer(4.5, os.killpg, (group, signal.SIGCONT)).start()
    with caplog.at_level(logging.WARNING, logger="posthoc"):
        connection = link.connect(project, new=True)
    assert connection.ml_backend_id > 0
    retries = [r.getMessage() for r in caplog.records if "asking again" in r.getMessage()]
    assert retries and "timed out" in retries[0] and "(2 of 4)" in retries[0], retries
    backends = LabelStudioClient(server.url, server.token).ml_backends(project)
    assert [b["url"].rstrip("/") for b in backends] == [url]  # the refused tries added nothing


def test_a_backend_late_every_time_is_one_line_that_quotes_the_cause(ls_with_default_timeouts: Any,
                                                                     gunicorn_backend: tuple[str, int]) -> None:
    url, group = gunicorn_backend
    server = ls_with_default_timeouts
    project = new_project(server)
    link = BackendLink(LabelStudioClient(server.url, server.token), url)
    os.killpg(group, signal.SIGSTOP)
    try:
        with pytest.raises(PosthocServiceError) as caught:
            link.connect(project, new=True)
    finally:
        os.killpg(group, signal.SIGCONT)
    message = str(caught.value)
    assert message.startswith(f"Label Studio could not add the ML backend {url} to project {project} (4 tries): "
                              "its /health failed: "), message
    assert "Read timed out. (read timeout=1.0)" in message and "ML_TIMEOUT_SETUP" in message
    assert "\n" not in message
    assert LabelStudioClient(server.url, server.token).ml_backends(project) == []


def test_label_studio_refusals_are_quoted_whole() -> None:
    """Bodies as Label Studio 1.23 writes them (``ml/serializers.py`` ``_validate_healthcheck`` /
    ``_validate_setup`` inside DRF's validation error); the cause is past the first 200 characters."""
    import json

    cause = ("HTTPConnectionPool(host='127.0.0.1', port=58939): Read timed out. (read timeout=3.0)")
    setup = ("Successfully connected to http://127.0.0.1:58939 but it doesn't look like a valid ML backend. "
             f"Reason: {cause}.\nCheck the ML backend server console logs to check the status.There might be "
             "something wrong with your model or it might be incompatible with the current labeling configuration.")
    body = json.dumps({"id": "x", "status_code": 400, "detail": "Validation error",
                       "validation_errors": {"non_field_errors": [setup]}})
    assert backend_refusal(body) == f"its /setup failed: {cause}"
    health = ("Can't connect to ML backend http://127.0.0.1:9, health check failed. Make sure it is up and your "
              'firewall is properly configured. <a href="https://labelstud.io/guide/ml.html">Learn more</a> about '
              "how to set up an ML backend. Additional info: connection refused")
    assert backend_refusal(json.dumps({"validation_errors": {"url": [health]}})) == \
        "its /health failed: connection refused"
    assert backend_refusal('{"detail": "Not found."}') is None and backend_refusal("<html>") is None


def test_posthoc_starts_label_studio_with_room_for_a_busy_backend(tmp_path: Path) -> None:
    from posthoc.labelstudio.credentials import resolve_credentials

    credentials = resolve_credentials(tmp_path, environ={})
    env = server_environment(tmp_path, credentials, base={})
    assert {name: env[name] for name in ML_TIMEOUT_ENV} == {"ML_TIMEOUT_HEALTH": "10", "ML_TIMEOUT_SETUP": "20"}
    chosen = server_environment(tmp_path, credentials, base={"LABEL_STUDIO_ML_TIMEOUT_SETUP": "60"})
    assert "ML_TIMEOUT_SETUP" not in chosen and chosen["LABEL_STUDIO_ML_TIMEOUT_SETUP"] == "60"
