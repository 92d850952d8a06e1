"""Faults injected for real against a real Label Studio: a flaky proxy (502/503), Label Studio SIGKILL-ed in the
middle of ``posthoc score``, ``posthoc score`` SIGKILL-ed while writing, a full disk, and the webhook receiver down
while annotators submit. Each ends with no judgement lost and no partial output."""

from __future__ import annotations

import hashlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import requests

from faults.conftest import restart
from faults.proxy import fault_proxy

pytestmark = [pytest.mark.labelstudio, pytest.mark.slow]
POSTHOC = [sys.executable, "-m", "posthoc.cli.main"]


def _posthoc(*args: str, token: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, LABEL_STUDIO_TOKEN=token)
    return subprocess.run([*POSTHOC, *args], capture_output=True, text=True, timeout=timeout, check=False, env=env)


def _tree(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` (the lock file aside) by relative path -> SHA-256."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file() and p.name != ".posthoc-score.lock"}


def _one_line_error(done: subprocess.CompletedProcess[str]) -> str:
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    assert len(lines) == 1, done.stderr
    return lines[0]


@pytest.fixture(scope="module")
def scored(tiny_on_private: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A first, complete ``posthoc score`` run of the tiny study (the outputs the faults must not damage)."""
    out = tmp_path_factory.mktemp("scored") / "out"
    done = _posthoc("score", "--manifest", str(tiny_on_private.manifest_path), "--url", tiny_on_private.url,
                    "--out", str(out), "--resamples", "50", "--quiet", token=tiny_on_private.token)
    assert done.returncode == 0, done.stderr[-3000:]
    return out


def test_label_studio_answering_503_now_and_then_is_retried(tiny_on_private: Any, tmp_path: Path) -> None:
    """Every other GET answered 503 by a proxy: status and score still give exactly the direct answers."""
    study = tiny_on_private
    direct = _posthoc("study", "status", "--manifest", str(study.manifest_path), "--url", study.url,
                      token=study.token)
    assert direct.returncode == 0, direct.stderr

    def every_other_get(method: str, path: str, n: int) -> int | None:
        return (503 if n % 2 else 502) if method == "GET" and n % 3 != 0 else None

    with fault_proxy(study.url, every_other_get) as (url, counter):
        flaky = _posthoc("study", "status", "--manifest", str(study.manifest_path), "--url", url, token=study.token)
        assert flaky.returncode == 0, flaky.stderr[-2000:]
        assert flaky.stdout == direct.stdout
        assert counter.injected >= 2
        out = tmp_path / "score"
        scored_flaky = _posthoc("score", "--manifest", str(study.manifest_path), "--url", url, "--out", str(out),
                                "--resamples", "50", "--quiet", token=study.token)
    assert scored_flaky.returncode == 0, scored_flaky.stderr[-2000:]
    reference = tmp_path / "reference"
    assert _posthoc("score", "--manifest", str(study.manifest_path), "--url", study.url, "--out", str(reference),
                    "--resamples", "50", "--quiet", token=study.token).returncode == 0
    assert _tree(out) == _tree(reference)  # the same judgements: nothing lost to the faults


def test_label_studio_answering_503_always_is_one_line_and_exit_3(tiny_on_private: Any, scored: Path) -> None:
    study = tiny_on_private
    before = _tree(scored)
    with fault_proxy(study.url, lambda method, path, n: 503) as (url, counter):
        status = _posthoc("study", "status", "--manifest", str(study.manifest_path), "--url", url,
                          token=study.token)
        score = _posthoc("score", "--manifest", str(study.manifest_path), "--url", url, "--out", str(scored),
                         "--resamples", "50", "--quiet", token=study.token)
        assert counter.injected >= 5 + 1  # the client's first try and its 4 retries, at least
    for done in (status, score):
        assert done.returncode == 3, done.stderr
        assert "503" in _one_line_error(done)
    assert _tree(scored) == before


def test_label_studio_killed_in_the_middle_of_score_is_exit_3_and_the_outputs_stay(
        private_ls: Any, tiny_on_private: Any, scored: Path) -> None:
    study = tiny_on_private
    before = _tree(scored)
    killed = []

    def kill_at_third_request(method: str, path: str, n: int) -> int | None:
        if n == 3 and private_ls.process is not None:
            os.killpg(private_ls.process.pid, signal.SIGKILL)  # SIGKILL: no clean shutdown of Label Studio
            killed.append(path)
        return None

    try:
        with fault_proxy(study.url, kill_at_third_request) as (url, _):
            done = _posthoc("score", "--manifest", str(study.manifest_path), "--url", url, "--out", str(scored),
                            "--resamples", "50", "--quiet", token=study.token)
        assert killed, "the fault was never injected"
        assert done.returncode == 3, done.stderr[-2000:]
        _one_line_error(done)
        assert _tree(scored) == before  # byte-identical previous outputs, no staging left
    finally:
        restart(private_ls)
    again = _posthoc("score", "--manifest", str(study.manifest_path), "--url", study.url, "--out", str(scored),
                     "--resamples", "50", "--quiet", "--periodic", token=study.token)
    assert again.returncode == 10, again.stderr  # after the restart: the same data, nothing new, nothing lost


def test_score_sigkilled_while_writing_leaves_no_partial_file_and_no_stale_lock(
        tiny_on_private: Any, tmp_path: Path) -> None:
    study = tiny_on_private
    out = tmp_path / "out"
    reference = tmp_path / "reference"
    assert _posthoc("score", "--manifest", str(study.manifest_path), "--url", study.url, "--out", str(reference),
                    "--resamples", "400", "--quiet", token=study.token).returncode == 0
    env = dict(os.environ, LABEL_STUDIO_TOKEN=study.token)
    process = subprocess.Popen([*POSTHOC, "score", "--manifest", str(study.manifest_path), "--url", study.url,
                                "--out", str(out), "--resamples", "400", "--quiet"], env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    staged = None
    while time.monotonic() < deadline and process.poll() is None:
        staged = next((p for p in out.glob(".posthoc-score-*/stage/*")), None) if out.is_dir() else None
        if staged is not None:  # it is writing its outputs now
            process.kill()
            break
        time.sleep(0.005)
    process.wait(timeout=30)
    if staged is None:
        pytest.fail("the run ended before it was caught writing; nothing was injected")
    complete = _tree(reference)
    for name, digest in _tree(out).items():
        if name.startswith(".posthoc-score-"):
            continue  # the killed run's staging folder: never read as output, removed by the next run
        assert complete.get(name) == digest, f"{name} is partial or wrong after the SIGKILL"
    rerun = _posthoc("score", "--manifest", str(study.manifest_path), "--url", study.url, "--out", str(out),
                     "--resamples", "400", "--quiet", token=study.token)
    assert rerun.returncode == 0, rerun.stderr  # not 4: the killed run's lock died with it
    assert not list(out.glob(".posthoc-score-*"))
    assert _tree(out) == complete


def test_a_full_disk_is_one_line_naming_the_folder_and_leaves_nothing_partial(
        tiny_on_private: Any, tmp_path: Path) -> None:
    study = tiny_on_private
    disk = tmp_path / "small-disk"
    disk.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=48k", "tmpfs", str(disk)], capture_output=True,
                             text=True, check=False)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here (needs root and CAP_SYS_ADMIN): {mounted.stderr.strip()}")
    try:
        out = disk / "out"
        done = _posthoc("score", "--manifest", str(study.manifest_path), "--url", study.url, "--out", str(out),
                        "--resamples", "50", "--quiet", token=study.token)
        assert done.returncode != 0
        line = _one_line_error(done)
        assert str(disk) in line and "space" in line.lower(), line
        leftovers = [p for p in disk.rglob("*") if p.is_file() and p.name != ".posthoc-score.lock"]
        assert leftovers == [], leftovers
    finally:
        subprocess.run(["umount", str(disk)], check=False)


def test_the_webhook_receiver_down_while_annotators_submit_status_is_still_right(
        tiny_on_private: Any, tmp_path: Path) -> None:
    """Label Studio sends a webhook once, with a 1 s timeout, no retry: a receiver that is down misses the event.
    ``posthoc study status --url`` reconciles from Label Studio's API, so the count is still right."""
    study = tiny_on_private
    headers = {"Authorization": f"Token {study.token}"}
    with socket.socket() as probe:  # a port nothing listens on: the receiver is down
        probe.bind(("127.0.0.1", 0))
        dead = probe.getsockname()[1]
    worker = sorted(study.projects)[-1]
    project = study.projects[worker]
    hook = requests.post(f"{study.url}/api/webhooks/", headers=headers, timeout=30,
                         json={"project": project, "url": f"http://127.0.0.1:{dead}/webhook", "send_payload": True,
                               "send_for_all_actions": True}).json()
    before = _posthoc("study", "status", "--manifest", str(study.manifest_path), "--url", study.url,
                      token=study.token)
    assert before.returncode == 0, before.stderr
    count_before = int(before.stdout.split(" annotations", 1)[0].rsplit(" ", 1)[-1])
    tasks = requests.get(f"{study.url}/api/tasks/", params={"project": project}, headers=headers, timeout=30).json()
    tasks = tasks["tasks"] if isinstance(tasks, dict) else tasks
    task = tasks[-1]
    try:
        posted = requests.post(f"{study.url}/api/tasks/{task['id']}/annotations/", headers=headers, timeout=60,
                               json={"result": [], "lead_time": 1.0, "was_cancelled": True})
        assert posted.status_code == 201, posted.text  # the submit itself succeeds with the receiver down
        after = _posthoc("study", "status", "--manifest", str(study.manifest_path), "--url", study.url,
                         token=study.token)
        assert after.returncode == 0, after.stderr
        assert int(after.stdout.split(" annotations", 1)[0].rsplit(" ", 1)[-1]) == count_before + 1
    finally:
        requests.delete(f"{study.url}/api/webhooks/{hook['id']}/", headers=headers, timeout=30)
        requests.delete(f"{study.url}/api/annotations/{posted.json()['id']}/", headers=headers, timeout=30)
