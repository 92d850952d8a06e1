"""One nginx in front of several Label Studio app servers (round robin), for ``bench/load_bench.py``.

A minimal configuration written by the bench (the gateway's, ``labelstudio/gateway_nginx.py``, asks an authoriser
first and fronts one server): an ``upstream`` of the app servers with keep-alive connections, Label Studio's
``STATIC_ROOT`` served by nginx itself under ``/static/`` (:func:`posthoc.labelstudio.app_server.static_root`),
everything else proxied with the ``Host`` the browser sent. nginx runs in the foreground in its own session, dies
with the bench and is stopped with its process group.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx


def nginx_config(upstreams: list[str], *, port: int, prefix: Path, static: Path) -> str:
    """The configuration: ``upstreams`` (``http://host:port``) behind ``127.0.0.1:port``."""
    servers = "".join(f"        server {urlsplit(u).netloc};\n" for u in upstreams)
    user = "user root root;\n" if os.geteuid() == 0 else ""  # as root, workers read STATIC_ROOT under /root
    return f"""{user}daemon off;
worker_processes 2;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log warn;
events {{ worker_connections 2048; }}
http {{
    include /etc/nginx/mime.types;
    access_log off;
    client_body_temp_path {prefix}/body;
    proxy_temp_path {prefix}/proxy;
    fastcgi_temp_path {prefix}/fastcgi;
    uwsgi_temp_path {prefix}/uwsgi;
    scgi_temp_path {prefix}/scgi;
    client_max_body_size 200m;
    upstream labelstudio {{
{servers}        keepalive 64;
    }}
    server {{
        listen 127.0.0.1:{port};
        location /static/ {{ alias {static}/; expires 1h; }}
        location / {{
            proxy_pass http://labelstudio;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $http_host;
            proxy_set_header X-Forwarded-For $remote_addr;
            proxy_read_timeout 300s;
        }}
    }}
}}
"""


@contextlib.contextmanager
def nginx_front(upstreams: list[str], prefix: Path) -> Iterator[str]:
    """nginx in front of ``upstreams`` on a free loopback port; yields its URL once a static bundle loads."""
    from posthoc.labelstudio.app_server import static_root
    from posthoc.labelstudio.ports import free_port
    from posthoc.labelstudio.server import stop_process_group
    from posthoc.processes import die_with_parent

    executable = shutil.which("nginx") or "/usr/sbin/nginx"
    prefix.mkdir(parents=True, exist_ok=True)
    port = free_port()
    config = prefix / "nginx.conf"
    config.write_text(nginx_config(upstreams, port=port, prefix=prefix, static=static_root()), encoding="utf-8")
    process = subprocess.Popen([executable, "-c", str(config), "-p", str(prefix), "-e", str(prefix / "error.log")],
                               stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, start_new_session=True,
                               preexec_fn=die_with_parent())
    url = f"http://127.0.0.1:{port}"
    try:
        bundle = next((static_root() / "js").glob("*.js"))
        deadline = time.monotonic() + 30
        while True:
            with contextlib.suppress(httpx.HTTPError):
                answer = httpx.get(f"{url}/static/js/{bundle.name}", timeout=5)
                if answer.status_code == 200 and answer.content == bundle.read_bytes():
                    break
            if process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"nginx did not serve {bundle.name}: {(prefix / 'error.log').read_text()[-1000:]}")
            time.sleep(0.2)
        yield url
    finally:
        stop_process_group(process.pid, timeout=10)
        process.wait(timeout=5)
