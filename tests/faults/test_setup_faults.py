"""Faults injected in the middle of ``posthoc study create``, for real: Label Studio SIGKILL-ed, the ML backend
killed, PostgreSQL restarted under a Label Studio that runs on it. Each ends with a rerun that completes the study
and doubles nothing: one project per worker, the planned tasks once each in the planned order, one account per
worker, exactly one prediction a task equal to the manifest's pre-fill."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from faults.conftest import backend_process, restart
from faults.proxy import fault_proxy
from lsfixtures import postgresql_label_studio, small_sample_manifest

pytestmark = [pytest.mark.labelstudio, pytest.mark.slow]
POSTHOC = [sys.executable, "-m", "posthoc.cli.main"]
MARKER = "posthoc-study"


def _create(manifest: Any, url: str, backend_url: str, folder: Path, *, token: str, domain: str,
            timeout: float = 600) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, LABEL_STUDIO_TOKEN=token)
    return subprocess.run([*POSTHOC, "study", "create", "--manifest", str(manifest.path), "--url", url,
                           "--backend-url", backend_url, "--accounts-file", str(folder / "accounts.json"),
                           "--email-domain", domain, "--no-progress"],
                          capture_output=True, text=True, timeout=timeout, check=False, env=env)


def _start_create(manifest: Any, url: str, backend_url: str, folder: Path, *, token: str,
                  domain: str) -> subprocess.Popen[str]:
    env = dict(os.environ, LABEL_STUDIO_TOKEN=token)
    return subprocess.Popen([*POSTHOC, "study", "create", "--manifest", str(manifest.path), "--url", url,
                             "--backend-url", backend_url, "--accounts-file", str(folder / "accounts.json"),
                             "--email-domain", domain, "--no-progress"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def _one_line_error(done: subprocess.CompletedProcess[str]) -> str:
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    assert len(lines) == 1, done.stderr[-3000:]
    return lines[0]


def _paged(url: str, token: str, path: str, **params: Any) -> Iterator[dict[str, Any]]:
    headers = {"Authorization": f"Token {token}"}
    page = 1
    while True:
        answer = requests.get(f"{url}{path}", params={**params, "page": page, "page_size": 100}, headers=headers,
                              timeout=120)
        if answer.status_code == 404 and page > 1:
            return
        answer.raise_for_status()
        body = answer.json()
        items = body.get("results", body.get("tasks", [])) if isinstance(body, dict) else body
        yield from items
        if not isinstance(body, dict) or len(items) < 100:
            return
        page += 1


def _study_state(url: str, token: str, study: str, domain: str) -> dict[str, Any]:
    """What setup may have made, read straight from Label Studio's API (not through posthoc's code)."""
    headers = {"Authorization": f"Token {token}"}
    projects = [p for p in _paged(url, token, "/api/projects/")
                if f"{MARKER} {study} worker " in (p.get("expert_instruction") or "") + (p.get("description") or "")]
    tasks: dict[str, list[tuple[str, int]]] = {}
    for project in projects:
        worker = project["title"].rsplit("worker ", 1)[-1]
        listed = sorted(_paged(url, token, "/api/tasks/", project=project["id"], fields="all"),
                        key=lambda task: int(task["id"]))
        tasks[worker] = [(t["data"]["task_key"], len(t["predictions"])) for t in listed]
    users = requests.get(f"{url}/api/users/", headers=headers, timeout=120).json()
    return {"projects": Counter(p["title"] for p in projects), "tasks": tasks,
            "users": Counter(u["email"] for u in users if u["email"].endswith("@" + domain))}


def _assert_complete(state: dict[str, Any], manifest: Any, study: str, domain: str) -> None:
    workers = manifest.workers()
    assert state["projects"] == Counter({f"{study} · worker {w}": 1 for w in workers})  # none doubled or missing
    assert state["users"] == Counter({f"{w}@{domain}": 1 for w in workers})
    for worker in workers:
        planned = manifest.tasks(worker)["task_key"].tolist()
        assert [key for key, _ in state["tasks"][worker]] == planned  # every task once, in the planned order
        assert {n for _, n in state["tasks"][worker]} == {1}  # exactly one prediction a task


def _manifest(folder: Path, study: str) -> Any:
    return small_sample_manifest(folder / "manifest.sqlite", name=study, n_documents=6, n_workers=6,
                                 tasks_per_batch=4)


def test_label_studio_killed_in_the_middle_of_study_create_then_the_rerun_completes(
        private_ls: Any, tmp_path: Path) -> None:
    from lsfixtures import run_backend

    study = "fault-kill"
    domain = f"{study}.faults.local"
    manifest = _manifest(tmp_path, study)
    imports: list[str] = []

    def kill_at_third_import(method: str, path: str, n: int) -> int | None:
        if method == "POST" and "/import" in path:
            imports.append(path)
            if len(imports) == 3 and private_ls.process is not None:
                os.killpg(private_ls.process.pid, signal.SIGKILL)  # no clean shutdown of Label Studio
        return None

    with run_backend(manifest.path) as backend_url:
        try:
            with fault_proxy(private_ls.url, kill_at_third_import) as (url, _):
                killed = _create(manifest, url, backend_url, tmp_path, token=private_ls.token, domain=domain)
            assert len(imports) >= 3, f"the fault was never injected: {killed.stderr[-2000:]}"
            assert killed.returncode == 3, killed.stderr[-3000:]
            assert private_ls.token not in _one_line_error(killed)
        finally:
            restart(private_ls)
        half = _study_state(private_ls.url, private_ls.token, study, domain)
        assert 0 < sum(half["projects"].values()) <= len(manifest.workers())  # it was stopped part-way
        rerun = _create(manifest, private_ls.url, backend_url, tmp_path, token=private_ls.token, domain=domain)
        assert rerun.returncode == 0, rerun.stderr[-3000:]
        _assert_complete(_study_state(private_ls.url, private_ls.token, study, domain), manifest, study, domain)
        again = _create(manifest, private_ls.url, backend_url, tmp_path, token=private_ls.token, domain=domain)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "0 created, 0 tasks imported, 0 accounts created, 0 tasks pre-filled" in again.stdout


def test_the_backend_killed_in_the_middle_of_study_create_is_named_and_the_rerun_completes(
        private_ls: Any, tmp_path: Path) -> None:
    """The ML backend is a separate process (gunicorn, as ``posthoc backend serve`` runs it); it is SIGKILL-ed
    while setup runs. Setup says which backend failed, and the rerun with the backend back completes."""
    study = "fault-backend"
    domain = f"{study}.faults.local"
    manifest = _manifest(tmp_path, study)
    with backend_process(manifest.path) as backend:
        seen: list[str] = []

        def kill_backend_at_second_project(method: str, path: str, n: int) -> int | None:
            if method == "POST" and path.rstrip("/").endswith("/api/projects"):
                seen.append(path)
                if len(seen) == 2:
                    backend.kill()
            return None

        with fault_proxy(private_ls.url, kill_backend_at_second_project) as (url, _):
            failed = _create(manifest, url, backend.url, tmp_path, token=private_ls.token, domain=domain)
        assert len(seen) >= 2, "the fault was never injected"
        assert failed.returncode == 3, failed.stderr[-3000:]
        line = _one_line_error(failed)
        assert "backend" in line.lower() and backend.url in line, line
        backend.start()
        rerun = _create(manifest, private_ls.url, backend.url, tmp_path, token=private_ls.token, domain=domain)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    _assert_complete(_study_state(private_ls.url, private_ls.token, study, domain), manifest, study, domain)


@pytest.fixture(scope="module")
def ls_on_postgresql(ls_pg_template: Path) -> Iterator[Any]:
    """A private Label Studio on its own local PostgreSQL cluster (a copy of the migrated template's)."""
    server, folder = postgresql_label_studio(ls_pg_template)
    server.start(timeout=400)
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)


def test_postgresql_restarted_in_the_middle_of_study_create_then_the_rerun_completes(
        ls_on_postgresql: Any, tmp_path: Path) -> None:
    """PostgreSQL stopped (fast shutdown: every connection cut) at the second import and started again 3 s later,
    while Label Studio keeps running: setup fails with one line or carries on; the rerun completes the study."""
    from lsfixtures import run_backend

    server = ls_on_postgresql
    cluster = server.cluster
    assert cluster is not None
    study = "fault-pg"
    domain = f"{study}.faults.local"
    manifest = _manifest(tmp_path, study)
    imports: list[str] = []
    stopped = threading.Event()

    def stop_postgres_at_second_import(method: str, path: str, n: int) -> int | None:
        if method == "POST" and "/import" in path:
            imports.append(path)
            if len(imports) == 2:
                cluster.stop()
                stopped.set()
        return None

    with run_backend(manifest.path) as backend_url:
        with fault_proxy(server.url, stop_postgres_at_second_import) as (url, _):
            running = _start_create(manifest, url, backend_url, tmp_path, token=server.token, domain=domain)
            # started again from this thread: a child started from a thread gets its parent-death signal when
            # that thread ends (PR_SET_PDEATHSIG), so the proxy's handler thread must not start it
            assert stopped.wait(300), "the fault was never injected"
            time.sleep(3)
            cluster.start(port=cluster.settings.port)
            _, stderr = running.communicate(timeout=600)
        if running.returncode != 0:  # the call in flight failed; setup stops with one line
            assert running.returncode == 3, stderr[-3000:]
            assert "Traceback" not in stderr and len(stderr.strip().splitlines()) == 1, stderr[-3000:]
        rerun = _create(manifest, server.url, backend_url, tmp_path, token=server.token, domain=domain)
    assert rerun.returncode == 0, rerun.stderr[-3000:] + server.log_path.read_text(errors="replace")[-6000:]
    _assert_complete(_study_state(server.url, server.token, study, domain), manifest, study, domain)
