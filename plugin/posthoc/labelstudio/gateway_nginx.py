"""The study gateway's reverse proxy (issue 23): Debian's nginx in front of Label Studio, asking the authoriser
(:mod:`posthoc_backend.gateway`) about every request with ``auth_request``.

:func:`nginx_config` writes the configuration (``posthoc gateway config`` prints it, for a deployed Label Studio
too); :class:`NginxGateway` runs it in the foreground under a private prefix (its own temp dir, pid, logs) on a
loopback port, and stops it on exit, also when the process that started it is killed
(:func:`posthoc.processes.die_with_parent`); its prefix is a kept folder that the next run reuses, so a killed
run leaves no temp folder behind.

Why nginx: it is the server Label Studio's own Docker image puts in front of it, Debian ships it, and
``auth_request`` asks a sub-request (method, raw URI, the original headers, no body) before proxying, so the
rules live in one Python function that tests can drive directly. The raw ``$request_uri`` is what the authoriser
judges and, passed on as ``$request_uri``, exactly what Label Studio receives; an allowed request the authoriser
answers itself (``X-Posthoc-Via: gateway``: the answers of :mod:`posthoc_backend.gateway_answers`, and a worker's
annotation and draft writes, whose bodies ``auth_request`` cannot show it) goes with the same URI and body to
the authoriser instead. Both the sub-request and the
proxied request get one ``Cookie`` header, ``$http_cookie`` (several are joined with ``; ``), so the authoriser and
Label Studio read the same one; the sub-request carries the browser's ``Host`` as ``X-Original-Host`` (a worker's
write must come from a page of it). A logged-out request goes to the login page with the ``?next=`` the
authoriser sends in ``X-Posthoc-Login-Next`` (encoded there), so logging in lands on the page asked for.
"""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

from posthoc.errors import PosthocInputError, PosthocServiceError
from posthoc.processes import die_with_parent, pid_alive

NGINX = "nginx"
#: the internal location of the authorisation sub-request (not reachable from outside: ``internal``)
AUTH_LOCATION = "/_posthoc_gateway/authorise"
REFUSAL = '{"detail": "refused by the study gateway"}'
#: where nginx sends what the authoriser answers itself (``posthoc_backend.gateway_answers.ANSWER_PREFIX``)
ANSWER_PREFIX = "/_posthoc_answer"
#: the private prefix's access log: one line a request, its total time and Label Studio's (seconds, ms resolution;
#: the authoriser's sub-request is not an upstream of the request itself), so the gateway's own share of a request
#: is their difference (``bench/gateway_bench.py`` reads it); no cookie, header or query string is logged (the
#: sign-up link's query holds the organisation's invite token: ``$uri`` is the path alone)
TIMING_FORMAT = "$time_iso8601 $request_method $uri $status $request_time $upstream_response_time"


def _upstream(url: str, option: str) -> tuple[str, str, str]:
    """``(scheme, host:port, path)`` of ``url`` (PosthocInputError unless it is an http(s) URL with a host)."""
    try:
        parts = urlsplit(url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        port = 0
    if parts.scheme not in ("http", "https") or not parts.hostname or not port or "@" in parts.netloc \
            or any(ch in url for ch in " ;{}'\"\n\\$"):
        raise PosthocInputError(f"{option} {url!r}: give an http(s) URL such as http://127.0.0.1:8080")
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return parts.scheme, f"{host}:{port}", parts.path.rstrip("/")


def _listen(listen: str) -> str:
    host, _, port = listen.rpartition(":")
    if not port.isdigit() or not 0 < int(port) < 65536 or any(ch in host for ch in " ;{}'\"\n\\$"):
        raise PosthocInputError(f"--listen {listen!r}: give host:port, e.g. 127.0.0.1:8081")
    return listen


def nginx_config(*, ls_url: str, authoriser_url: str, listen: str, prefix: Path | None = None) -> str:
    """The nginx configuration of the gateway: ``listen`` (host:port) proxies to Label Studio at ``ls_url`` after
    ``authoriser_url``'s ``/authorise`` allowed the request (401: to the login page; 403: a JSON refusal).

    ``prefix``: a private directory for a foreground nginx of one user (pid, logs and temp files there, no daemon,
    no master process); ``None``: a configuration for a deployed server (system logs and temp paths)."""
    ls_scheme, ls_server, ls_path = _upstream(ls_url, "--ls-url")
    auth_scheme, auth_server, auth_path = _upstream(authoriser_url, "--authoriser-url")
    authoriser = f"{auth_scheme}://{auth_server}{auth_path}"
    listen = _listen(listen)
    local = ""
    logs = "    access_log off;\n"
    if prefix is not None:
        local = (f"daemon off;\nmaster_process off;\npid {prefix}/nginx.pid;\nerror_log {prefix}/error.log warn;\n")
        logs = (f"    log_format posthoc_timing '{TIMING_FORMAT}';\n"
                f"    access_log {prefix}/access.log posthoc_timing;\n"
                + "".join(f"    {kind}_temp_path {prefix / 'temp' / kind};\n"
                          for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")))
    return f"""# The posthoc study gateway (issue 23): every request is first authorised by {authoriser}/authorise.
{local}worker_processes 1;
events {{ worker_connections 512; }}
http {{
{logs}    client_max_body_size 200m;
    server_tokens off;
    # kept-alive connections to both: a new TCP connection per request and per sub-request cost milliseconds
    upstream posthoc_authoriser {{
        server {auth_server};
        keepalive 16;
    }}
    upstream posthoc_label_studio {{
        server {ls_server};
        keepalive 32;
    }}
    # where an allowed request goes: Label Studio, or the authoriser's own answers when it said so
    # (X-Posthoc-Via: gateway; posthoc_backend.gateway_answers), the raw URI unchanged after either
    map $posthoc_via $posthoc_upstream {{
        default {ls_scheme}://posthoc_label_studio{ls_path};
        gateway {auth_scheme}://posthoc_authoriser{auth_path}{ANSWER_PREFIX};
    }}
    server {{
        listen {listen};
        merge_slashes off;
        location = {AUTH_LOCATION} {{
            internal;
            proxy_pass {auth_scheme}://posthoc_authoriser{auth_path}/authorise;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host {auth_server};
            proxy_pass_request_body off;
            proxy_set_header Content-Length "";
            proxy_set_header X-Original-Method $request_method;
            proxy_set_header X-Original-URI $request_uri;
            proxy_set_header X-Original-Host $http_host;
            proxy_set_header Cookie $http_cookie;
        }}
        # Label Studio 1.23 logs out at /logout (its menu's link) and answers /user/logout 404
        location ~ ^/user/logout/?$ {{
            return 302 /logout/;
        }}
        location / {{
            auth_request {AUTH_LOCATION};
            auth_request_set $posthoc_next $upstream_http_x_posthoc_login_next;
            auth_request_set $posthoc_via $upstream_http_x_posthoc_via;
            error_page 401 = @posthoc_login;
            error_page 403 = @posthoc_refused;
            proxy_pass $posthoc_upstream$request_uri;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $http_host;
            proxy_set_header Cookie $http_cookie;
            proxy_set_header X-Forwarded-For $remote_addr;
            proxy_set_header X-Forwarded-Proto $scheme;
            proxy_read_timeout 300s;
        }}
        location @posthoc_login {{
            return 302 /user/login/$posthoc_next;
        }}
        location @posthoc_refused {{
            default_type application/json;
            return 403 '{REFUSAL}';
        }}
    }}
}}
"""


def free_loopback_port() -> int:
    """A TCP port free on 127.0.0.1 now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _listening(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.settimeout(0.2)
        return probe.connect_ex(("127.0.0.1", port)) == 0


def terminate(process: subprocess.Popen[bytes] | None, *, timeout: float) -> None:
    """``SIGTERM`` a child still running and wait for it; ``SIGKILL`` after ``timeout`` seconds."""
    if process is None or process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=timeout)


def _pid_in(path: Path) -> int | None:
    """The pid in an nginx pid file when that process still runs, else ``None``."""
    try:
        pid = int(path.read_text(encoding="utf-8").strip())
    except (OSError, ValueError):
        return None
    return pid if pid > 0 and pid_alive(pid) else None


class NginxGateway:
    """nginx in the foreground on ``127.0.0.1:port`` (free when not given) under a private prefix.

    ``prefix``: a folder kept and reused from run to run (``posthoc ls start`` uses ``DATA_DIR/gateway``,
    ``posthoc gateway run`` ``.posthoc/gateway``): a killed run leaves only that folder, which the next run takes
    over. Without one, a fresh temp folder is made and removed on :meth:`stop` (tests, library use)."""

    def __init__(self, *, ls_url: str, authoriser_url: str, port: int | None = None,
                 prefix: Path | None = None) -> None:
        self.ls_url = ls_url
        self.authoriser_url = authoriser_url
        self.port = port or free_loopback_port()
        self.kept_prefix = prefix.resolve() if prefix is not None else None
        self.prefix: Path | None = None
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def error_log(self) -> str:
        log = self.prefix / "error.log" if self.prefix else None
        return log.read_text(encoding="utf-8", errors="replace")[-2000:] if log and log.is_file() else ""

    def _make_prefix(self) -> Path:
        """The prefix folder with its temp folders; PosthocInputError when a live nginx still uses a kept one."""
        if self.kept_prefix is None:
            prefix = Path(tempfile.mkdtemp(prefix="posthoc-gateway-"))
        else:
            prefix = self.kept_prefix
            running = _pid_in(prefix / "nginx.pid")
            if running is not None:
                raise PosthocInputError(f"{prefix}: a gateway (nginx pid {running}) already runs from this folder; "
                                        "stop it first or choose another folder")
        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"):
            (prefix / "temp" / kind).mkdir(parents=True, exist_ok=True)
        return prefix

    def start(self, *, timeout: float = 20.0) -> NginxGateway:
        """Write the configuration, start nginx and wait until it listens; PosthocServiceError when it cannot."""
        executable = shutil.which(NGINX) or shutil.which(NGINX, path="/usr/sbin:/sbin")
        if executable is None:
            raise PosthocServiceError("nginx is not installed (Debian: apt-get install nginx)")
        self.prefix = self._make_prefix()
        config = self.prefix / "nginx.conf"
        config.write_text(nginx_config(ls_url=self.ls_url, authoriser_url=self.authoriser_url,
                                       listen=f"127.0.0.1:{self.port}", prefix=self.prefix), encoding="utf-8")
        self.process = subprocess.Popen(
            [executable, "-p", str(self.prefix), "-c", str(config), "-e", str(self.prefix / "error.log")],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=die_with_parent(signal.SIGTERM))
        deadline = time.monotonic() + timeout
        while not _listening(self.port):
            if self.process.poll() is not None or time.monotonic() > deadline:
                log = self.error_log()
                self.stop()
                raise PosthocServiceError(f"nginx did not start on 127.0.0.1:{self.port}: {log.strip()[-500:]}")
            time.sleep(0.05)
        return self

    def stop(self, *, timeout: float = 10.0) -> None:
        """Stop nginx (``SIGTERM``: fast shutdown); remove a temp prefix (a kept one stays, for the next run)."""
        terminate(self.process, timeout=timeout)
        self.process = None
        if self.prefix is not None and self.kept_prefix is None:
            shutil.rmtree(self.prefix, ignore_errors=True)
        elif self.prefix is not None:
            (self.prefix / "nginx.pid").unlink(missing_ok=True)
        self.prefix = None

    def __enter__(self) -> NginxGateway:
        return self.start() if self.process is None else self

    def __exit__(self, *exc: object) -> None:
        self.stop()
