"""The servers a bench starts beside the code it measures, each in its own process and stopped on the way out.

A webhook receiver that answers at once (:func:`instant_receiver`), the study's ML backend as a study owner runs it
(:func:`study_backend`: ``posthoc backend serve``, gunicorn) and a fresh Label Studio on a copy of the tests' migrated
template (:func:`start_label_studio`). Every process has its own session and dies with the bench
(:func:`posthoc.processes.die_with_parent`); leaving a ``with`` block sends SIGTERM to its group, then SIGKILL.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))


def serve_instant(port: int) -> None:
    """A webhook receiver that answers 200 at once (the standard library's threading HTTP server), until killed."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Answer(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # one segment, no 40 ms delayed-ACK stall

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")

        def do_GET(self) -> None:
            self.do_POST()

        def log_message(self, *args: Any) -> None:
            pass

    ThreadingHTTPServer(("127.0.0.1", port), Answer).serve_forever()


@contextlib.contextmanager
def _server_process(command: list[str], url: str, *, ready: str = "/", env: dict[str, str] | None = None
                    ) -> Iterator[str]:
    """``command`` as its own process (its own session; it dies with this one), once ``url + ready`` answers; stopped
    (SIGTERM to its group, then SIGKILL) on the way out."""
    import signal

    from posthoc.processes import die_with_parent

    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                               start_new_session=True, preexec_fn=die_with_parent())
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(url + ready, timeout=2).status_code < 500:
                    break
            except httpx.HTTPError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"{command[:4]} did not start (exit {process.poll()})")
            time.sleep(0.2)
        yield url
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@contextlib.contextmanager
def instant_receiver() -> Iterator[str]:
    """:func:`serve_instant` in its own process, as the study's receiver runs in its own (fair to both)."""
    from posthoc.labelstudio.ports import free_port

    port = free_port()
    code = f"import sys; sys.path.insert(0, {str(HERE)!r}); import bench_servers as b; b.serve_instant({port})"
    with _server_process([sys.executable, "-c", code], f"http://127.0.0.1:{port}") as url:
        yield url


@contextlib.contextmanager
def study_backend(manifest_path: Path, events_db: Path) -> Iterator[str]:
    """The study's ML backend as a study owner runs it: ``posthoc backend serve`` (gunicorn, its defaults)."""
    from posthoc.labelstudio.ports import free_port

    port = free_port()
    command = [sys.executable, "-m", "posthoc.cli.main", "backend", "serve", "--manifest", str(manifest_path),
               "--events-db", str(events_db), "--port", str(port)]
    with _server_process(command, f"http://127.0.0.1:{port}", ready="/health") as url:
        yield url


def start_label_studio(folder: Path) -> Any:
    """A fresh Label Studio 1.23 (SQLite) on a copy of the tests' migrated template, started."""
    from lsfixtures import build_template, copy_template
    from posthoc.labelstudio.server import LabelStudioServer

    template = build_template(Path(tempfile.gettempdir()) / f"pytest-of-{os.environ.get('USER', 'root')}"
                              / "posthoc-ls")
    return LabelStudioServer(copy_template(template, folder / "ls")).start()
