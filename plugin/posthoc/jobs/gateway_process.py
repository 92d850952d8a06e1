"""The study gateway's two processes side by side (issue 23): the authoriser (``posthoc gateway serve``, gunicorn)
and nginx (:class:`~posthoc.labelstudio.gateway_nginx.NginxGateway`) in front of one Label Studio.

Both are started with :func:`posthoc.processes.die_with_parent`, so they stop with the process that started them,
also when it is ``SIGKILL``-ed: ``posthoc ls start --gateway`` starts them from its keeper
(:mod:`posthoc.jobs.server_keeper`), the tests from the test process. Their files live in one kept folder
(``DATA_DIR/gateway`` under ``ls start``): nginx's prefix and ``authoriser.log``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import IO

from posthoc.errors import PosthocServiceError
from posthoc.http import answers_ok
from posthoc.labelstudio.gateway_nginx import NginxGateway, free_loopback_port, terminate
from posthoc.processes import die_with_parent

AUTHORISER_LOG = "authoriser.log"


class AuthoriserProcess:
    """``posthoc gateway serve`` for ``manifest`` on a free loopback port, logging to ``log`` (default: none)."""

    def __init__(self, *, manifest: Path, ls_url: str, token: str, log: Path | None = None,
                 port: int | None = None) -> None:
        self.manifest = manifest
        self.ls_url = ls_url
        self.token = token
        self.log = log
        self.port = port or free_loopback_port()
        self.process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _log_tail(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")[-800:] if self.log and self.log.is_file() else ""

    def start(self, *, timeout: float = 60.0) -> AuthoriserProcess:
        """Start it and wait for ``/health`` (PosthocServiceError when it exits or does not answer in time)."""
        env = {**os.environ, "POSTHOC_LS_TOKEN": self.token}
        if self.log is not None:
            self.log.parent.mkdir(parents=True, exist_ok=True)
            self._log = open(self.log, "ab")  # noqa: SIM115 - closed in stop()
        output = self._log if self._log is not None else subprocess.DEVNULL
        self.process = subprocess.Popen(
            [sys.executable, "-m", "posthoc.cli.main", "gateway", "serve", "--manifest", str(self.manifest),
             "--url", self.ls_url, "--port", str(self.port)],
            env=env, stdin=subprocess.DEVNULL, stdout=output, stderr=output, preexec_fn=die_with_parent())
        deadline = time.monotonic() + timeout
        while not answers_ok(f"{self.url}/health", timeout=2):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise PosthocServiceError(f"the gateway's authoriser did not start on {self.url}: {self._log_tail()}")
            time.sleep(0.2)
        return self

    def stop(self, *, timeout: float = 20.0) -> None:
        """Stop gunicorn (``SIGTERM``: its graceful stop) and close the log."""
        terminate(self.process, timeout=timeout)
        self.process = None
        if self._log is not None:
            self._log.close()
            self._log = None

    def __enter__(self) -> AuthoriserProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class GatewayProcesses:
    """The authoriser and nginx for the study of ``manifest`` in front of the Label Studio at ``ls_url`` (admin
    ``token``); nginx on ``port`` (a free one when not given), its files in ``folder`` (kept, reused)."""

    def __init__(self, *, manifest: Path, ls_url: str, token: str, folder: Path, port: int | None = None) -> None:
        self.authoriser = AuthoriserProcess(manifest=manifest, ls_url=ls_url, token=token,
                                            log=folder / AUTHORISER_LOG)
        self.nginx = NginxGateway(ls_url=ls_url, authoriser_url=self.authoriser.url, port=port, prefix=folder)

    @property
    def url(self) -> str:
        return self.nginx.url

    def start(self) -> GatewayProcesses:
        self.authoriser.start()
        try:
            self.nginx.start()
        except BaseException:
            self.authoriser.stop()
            raise
        return self

    def stop(self) -> None:
        self.nginx.stop()
        self.authoriser.stop()

    def pids(self) -> dict[str, int]:
        """The running processes' pids (nginx, the authoriser's gunicorn master)."""
        found = {"nginx": self.nginx.process, "authoriser": self.authoriser.process}
        return {name: process.pid for name, process in found.items() if process is not None}

    def __enter__(self) -> GatewayProcesses:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
