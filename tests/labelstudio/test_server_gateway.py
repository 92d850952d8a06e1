"""``posthoc ls start --gateway MANIFEST`` (issue 23): Label Studio on 127.0.0.1 with the study gateway (nginx and
its authoriser) beside it under one keeper; ``ls status`` / ``ls env`` / ``study create`` know the gateway,
``ls stop`` stops all of it, and a SIGKILL of ``ls start`` while it starts leaves nothing running."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from gateway.live_study import login, refused_by_gateway
from lsfixtures import copy_template, run_backend, small_sample_manifest
from posthoc.labelstudio.ports import port_is_free
from posthoc.labelstudio.server_log import STATE_FILE
from posthoc.study.plan.logins import default_accounts_file, read_accounts

pytestmark = pytest.mark.labelstudio
POSTHOC = [sys.executable, "-m", "posthoc.cli.main"]
CASE = "POSTHOC_TEST_CASE"


def _posthoc(*args: str, env: dict[str, str], timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*POSTHOC, *args], capture_output=True, text=True, timeout=timeout, check=False, env=env)


def _tagged(case: str) -> list[str]:
    """Command lines of live processes (not zombies) whose environment carries ``CASE=case``."""
    marker = f"{CASE}={case}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if marker not in (entry / "environ").read_bytes().split(b"\0"):
                continue
            if "\nState:\tZ" in (entry / "status").read_text():
                continue
            found.append((entry / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace"))
        except OSError:
            continue
    return found


def _wait_until_gone(case: str, seconds: float = 40) -> list[str]:
    deadline = time.monotonic() + seconds
    while (left := _tagged(case)) and time.monotonic() < deadline:
        time.sleep(0.5)
    return left


@pytest.fixture()
def setting(ls_template: Path, tmp_path: Path) -> dict[str, object]:
    manifest = small_sample_manifest(tmp_path / "manifest.sqlite", name="lsgate", n_documents=4, n_workers=3,
                                     tasks_per_batch=3, control_tasks=False)
    case = uuid.uuid4().hex
    env = {**os.environ, CASE: case}
    env.pop("POSTHOC_GATEWAY_URL", None)
    return {"data_dir": copy_template(ls_template, tmp_path / "ls"), "manifest": Path(manifest.path),
            "env": env, "case": case}


def test_ls_start_with_the_gateway_links_workers_through_it_and_stop_ends_all(setting: dict) -> None:
    data_dir, manifest, env = setting["data_dir"], setting["manifest"], setting["env"]
    started = _posthoc("ls", "start", "--data-dir", str(data_dir), "--gateway", str(manifest), env=env)
    try:
        assert started.returncode == 0, started.stderr[-2000:]
        state = json.loads((data_dir / STATE_FILE).read_text())
        gateway_url, ls_url = state["gateway_url"], state["url"]
        assert f"study gateway: {gateway_url}" in started.stdout
        assert {"nginx", "authoriser"} == set(state["gateway_pids"])
        status = _posthoc("ls", "status", "--data-dir", str(data_dir), env=env, timeout=60)
        assert status.returncode == 0 and f"study gateway {gateway_url}, answering" in status.stdout, status.stdout
        exports = _posthoc("ls", "env", "--data-dir", str(data_dir), env=env, timeout=60).stdout
        assert f"export POSTHOC_GATEWAY_URL={gateway_url}" in exports
        with run_backend(manifest) as backend_url:
            created = _posthoc("study", "create", "--manifest", str(manifest), "--data-dir", str(data_dir),
                               "--backend-url", backend_url, "--no-progress", env=env, timeout=600)
        assert created.returncode == 0, created.stderr[-2000:]
        links = dict(re.findall(r"  (w\d+): (\S+)  login", created.stdout))
        assert sorted(links) == ["w001", "w002", "w003"]
        projects = {w: int(re.search(r"/projects/(\d+)/", link).group(1)) for w, link in links.items()}
        assert all(link == f"{gateway_url}/projects/{projects[w]}/data?labeling=1" for w, link in links.items())
        account = read_accounts(default_accounts_file(manifest))["w001"]
        worker = login(gateway_url, account["email"], account["password"])
        try:
            assert worker.get(links["w001"].removeprefix(gateway_url)).status_code == 200
            assert worker.get(f"/api/projects/{projects['w001']}/next").status_code == 200
            assert refused_by_gateway(worker.get(f"/api/projects/{projects['w002']}/next"))
            assert refused_by_gateway(worker.get(f"/api/projects/{projects['w002']}/"))
        finally:
            worker.close()
    finally:
        stopped = _posthoc("ls", "stop", "--data-dir", str(data_dir), env=env, timeout=120)
    assert f"and its gateway {gateway_url}" in stopped.stdout
    assert _wait_until_gone(setting["case"]) == []
    for url in (ls_url, gateway_url):
        assert port_is_free(int(url.rsplit(":", 1)[1]))
    assert not (data_dir / STATE_FILE).exists()
    assert (data_dir / "gateway" / "nginx.conf").is_file()  # the kept folder, reused by the next start


def test_a_sigkilled_ls_start_leaves_nothing_running(setting: dict, tmp_path: Path) -> None:
    data_dir, manifest, env, case = setting["data_dir"], setting["manifest"], setting["env"], setting["case"]
    temp_before = {p.name for p in Path("/tmp").glob("posthoc-gateway-*")}
    starter = subprocess.Popen([*POSTHOC, "ls", "start", "--data-dir", str(data_dir), "--gateway", str(manifest)],
                               env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 240
        while not any("gateway serve" in command for command in _tagged(case)):  # Label Studio answers by now
            assert starter.poll() is None and time.monotonic() < deadline, _tagged(case)
            time.sleep(0.05)
        assert any("label-studio" in command or "label_studio" in command for command in _tagged(case))
        starter.send_signal(signal.SIGKILL)
        starter.wait(timeout=10)
    finally:
        if starter.poll() is None:
            starter.kill()
    assert _wait_until_gone(case) == []
    assert not (data_dir / STATE_FILE).exists()
    assert {p.name for p in Path("/tmp").glob("posthoc-gateway-*")} == temp_before
    status = _posthoc("ls", "status", "--data-dir", str(data_dir), env=env, timeout=60)
    assert status.returncode == 1 and "not running" in status.stdout
