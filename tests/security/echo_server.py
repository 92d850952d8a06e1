"""A hostile stand-in for Label Studio on a loopback port: /health is UP, every other request is refused
with a body that echoes the request's headers, path and body (as a misconfigured proxy or debug page does).

It tests what the CLIs print when a server echoes their credentials back; it is no mock of Label Studio's
API (nothing here answers like Label Studio but /health).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class _EchoHandler(BaseHTTPRequestHandler):
    status = 403

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode("utf-8", "replace") if length else ""
        if self.path.rstrip("/") == "/health":
            code, reply = 200, json.dumps({"status": "UP"})
        else:
            code = self.status
            reply = json.dumps({"detail": "refused", "body": body, "headers": dict(self.headers.items()),
                                "path": self.path})
        data = reply.encode("utf-8")
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _answer

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def echo_server(status: int = 403) -> Iterator[str]:
    """The URL of a running echo server answering ``status`` to everything but /health; stopped on exit."""
    handler = type("Handler", (_EchoHandler,), {"status": status})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
