"""Fixtures of the fault tests: a private Label Studio (killed and restarted by the tests, so never the shared
session server) with the tiny study of the export tests on it."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from lsfixtures import private_label_studio

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "export"))
from ls_tiny_study import TinyStudy, build_tiny_study


@pytest.fixture(scope="module")
def private_ls(ls_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A Label Studio of this module only, on a copy of the template; tests may kill and restart it."""
    with private_label_studio(ls_template, tmp_path_factory.mktemp("private-ls")) as server:
        yield server


def restart(server: Any) -> None:
    """Start ``server`` again on the same data dir and port (after a kill)."""
    server.stop()
    server.requested_port = server.port
    server.start()


@pytest.fixture(scope="module")
def tiny_on_private(private_ls: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TinyStudy]:
    with build_tiny_study(private_ls, tmp_path_factory.mktemp("tiny-private")) as study:
        yield study


class BackendProcess:
    """The ML backend as its own gunicorn process on a fixed loopback port (as ``posthoc backend serve`` runs
    it), so a test can SIGKILL it and start it again at the same URL."""

    def __init__(self, manifest_path: Path) -> None:
        from posthoc.labelstudio.ports import free_port

        self.manifest_path = manifest_path
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 60) -> None:
        from posthoc.cli.backend import gunicorn_command
        from posthoc.processes import die_with_parent

        env = dict(os.environ, POSTHOC_MANIFEST=str(Path(self.manifest_path).resolve()))
        self.process = subprocess.Popen(
            [*gunicorn_command(host="127.0.0.1", port=self.port, workers=1), "--log-level", "warning"],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
            preexec_fn=die_with_parent())
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if requests.get(f"{self.url}/health", timeout=2).status_code == 200:
                    return
            except requests.RequestException:
                pass
            if self.process.poll() is not None:
                raise RuntimeError(f"the backend exited with {self.process.returncode}")
            time.sleep(0.2)
        raise RuntimeError(f"the backend did not answer at {self.url} within {timeout} s")

    def kill(self) -> None:
        """SIGKILL the gunicorn master and its workers (no clean shutdown)."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=30)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=30)


@contextlib.contextmanager
def backend_process(manifest_path: Path) -> Iterator[BackendProcess]:
    backend = BackendProcess(manifest_path)
    backend.start()
    try:
        yield backend
    finally:
        backend.stop()
