"""``posthoc ls start --workers N``: Label Studio's WSGI app under gunicorn with N workers, kept by the keeper of
``ls start`` (real Label Studio, real PostgreSQL, real gunicorn): it serves the login page, a log-in and an API
call, ``ls status`` names it, ``ls stop`` leaves no process, and a ``SIGKILL`` of the keeper takes gunicorn, its
workers and the cluster with it; several workers on SQLite exit 2 before anything is made."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from lsfixtures import copy_postgresql_template, postgresql_data_dir, process_alive
from posthoc.labelstudio.app_server import child_pids

POSTHOC = [sys.executable, "-m", "posthoc.cli.main"]


def _posthoc(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*POSTHOC, *args], capture_output=True, text=True, timeout=600, check=False,
                          env=os.environ.copy())


def test_several_workers_on_sqlite_exit_2_before_anything_is_made(tmp_path: Path) -> None:
    data_dir = tmp_path / "ls"
    refused = _posthoc("ls", "start", "--data-dir", str(data_dir), "--workers", "2")
    assert refused.returncode == 2, refused.stderr
    assert "2 workers on SQLite: SQLite takes one writer at a time" in refused.stderr
    assert "--database postgresql" in refused.stderr and "Traceback" not in refused.stderr
    assert not data_dir.exists()  # nothing made, nothing started
    zero = _posthoc("ls", "start", "--data-dir", str(data_dir), "--workers", "0", "--database", "postgresql")
    assert zero.returncode == 2 and "0 workers: give at least one" in zero.stderr and not data_dir.exists()


def _wait_gone(pids: list[int], seconds: float = 30) -> list[int]:
    deadline = time.monotonic() + seconds
    while any(process_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.2)
    return [p for p in pids if process_alive(p)]


@pytest.fixture()
def pg_data_dir(ls_pg_template: Path) -> Iterator[Path]:
    """A data dir copied from the migrated PostgreSQL template: ``ls start --database postgresql`` keeps its local
    cluster (the first start's migration is tests/labelstudio/test_postgresql.py's)."""
    folder = postgresql_data_dir()
    try:
        yield copy_postgresql_template(ls_pg_template, folder / "ls")
    finally:
        _posthoc("ls", "stop", "--data-dir", str(folder / "ls"))
        shutil.rmtree(folder, ignore_errors=True)


def _started(data_dir: Path) -> tuple[str, dict[str, object]]:
    started = _posthoc("ls", "start", "--data-dir", str(data_dir), "--database", "postgresql", "--workers", "2")
    assert started.returncode == 0, started.stderr[-3000:]
    assert "served by gunicorn, 2 worker processes" in started.stdout, started.stdout
    url = re.search(r"running at (http://127\.0\.0\.1:\d+)", started.stdout).group(1)
    return url, json.loads((data_dir / "server.json").read_text())


@pytest.mark.labelstudio
@pytest.mark.slow
def test_two_workers_on_postgresql_serve_a_login_and_the_api_and_stop_leaves_no_process(pg_data_dir: Path) -> None:
    data_dir = pg_data_dir
    url, state = _started(data_dir)
    master = int(state["label_studio_pid"])
    workers = child_pids(master)
    assert state["workers"] == 2 and len(workers) == 2
    assert "gunicorn" in Path(f"/proc/{master}/cmdline").read_bytes().decode(errors="replace")
    credentials = json.loads((data_dir / "credentials.json").read_text())

    browser = requests.Session()  # the login form, as a person's browser posts it
    page = browser.get(f"{url}/user/login/", timeout=60)
    assert page.status_code == 200 and "csrfmiddlewaretoken" in page.text
    logged_in = browser.post(f"{url}/user/login/", data={
        "csrfmiddlewaretoken": browser.cookies["csrftoken"], "email": credentials["username"],
        "password": credentials["password"]}, headers={"Referer": f"{url}/user/login/"}, allow_redirects=False,
        timeout=60)
    assert logged_in.status_code == 302, logged_in.text[:500]
    assert browser.get(f"{url}/api/current-user/whoami", timeout=60).json()["email"] == credentials["username"]
    headers = {"Authorization": f"Token {credentials['token']}"}
    made = requests.post(f"{url}/api/projects/", json={"title": "under gunicorn"}, headers=headers, timeout=60)
    assert made.status_code == 201, made.text[:500]
    listed = requests.get(f"{url}/api/projects/", params={"ids": made.json()["id"], "include": "id,title"},
                          headers=headers, timeout=60).json()
    assert [p["title"] for p in listed["results"]] == ["under gunicorn"]

    status = _posthoc("ls", "status", "--data-dir", str(data_dir))
    assert status.returncode == 0 and "answering" in status.stdout and "gunicorn with 2 workers" in status.stdout
    postmaster = int((data_dir / "postgres" / "postmaster.pid").read_text().splitlines()[0])
    everything = [int(state["pid"]), master, *workers, postmaster]
    stopped = _posthoc("ls", "stop", "--data-dir", str(data_dir))
    assert stopped.returncode == 0 and "stopped" in stopped.stdout, stopped.stderr
    assert _wait_gone(everything) == [] and not (data_dir / "server.json").exists()
    assert _posthoc("ls", "status", "--data-dir", str(data_dir)).returncode == 1


@pytest.mark.labelstudio
@pytest.mark.slow
def test_a_killed_keeper_takes_gunicorn_its_workers_and_the_cluster_with_it(pg_data_dir: Path) -> None:
    _, state = _started(pg_data_dir)
    master = int(state["label_studio_pid"])
    postmaster = int((pg_data_dir / "postgres" / "postmaster.pid").read_text().splitlines()[0])
    everything = [master, *child_pids(master), postmaster]
    assert len(everything) == 4 and all(process_alive(p) for p in everything)
    os.kill(int(state["pid"]), signal.SIGKILL)  # no clean-up runs: the parent-death signal must do it
    assert _wait_gone(everything) == []
