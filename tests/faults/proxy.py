"""A loopback HTTP proxy in front of a real Label Studio that injects faults: answers 502/503 instead of
forwarding, or runs an action (e.g. SIGKILL the server) at the n-th request. Test code only."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import requests

#: ``policy(method, path, n)`` -> a status code to answer instead of forwarding, or ``None`` to forward
Policy = Callable[[str, str, int], int | None]
_HOP = {"connection", "keep-alive", "transfer-encoding", "content-encoding", "content-length", "te", "trailer",
        "upgrade", "proxy-authorization", "proxy-authenticate"}


class _Counter:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.n = 0
        self.injected = 0

    def next(self) -> int:
        with self.lock:
            self.n += 1
            return self.n


@contextlib.contextmanager
def fault_proxy(upstream: str, policy: Policy) -> Iterator[tuple[str, _Counter]]:
    """Serve a proxy to ``upstream`` on a free loopback port; yields ``(url, counter)``."""
    counter = _Counter()
    session = requests.Session()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:  # quiet
            return

        def _handle(self) -> None:
            n = counter.next()
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            status = policy(self.command, self.path, n)
            if status is not None:
                counter.injected += 1
                payload = b'{"detail": "injected fault"}'
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
                return
            headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP and k.lower() != "host"}
            try:
                answer = session.request(self.command, upstream + self.path, data=body, headers=headers,
                                         timeout=120, allow_redirects=False)
            except requests.RequestException:
                self.send_response(502)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            content = answer.content
            self.send_response(answer.status_code)
            raw = answer.raw.headers  # urllib3's: keeps repeated headers (two Set-Cookie) apart
            for key in dict.fromkeys(k.lower() for k in raw):
                if key not in _HOP:
                    for value in raw.getlist(key):
                        self.send_header(key, value)
            self.send_header("Content-Length", str(len(content)))
            self.end_headers()
            self.wfile.write(content)

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = _handle

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}", counter
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
