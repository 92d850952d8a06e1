"""``posthoc gateway config|serve|run`` (no Label Studio needed): the configuration nginx accepts, one-line
errors, and a foreground nginx that stops with its command, also when the command is killed."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from posthoc.cli.main import cli
from posthoc.labelstudio.gateway_nginx import free_loopback_port

pytestmark = pytest.mark.skipif(subprocess.run(["which", "nginx"], capture_output=True, check=False).returncode != 0
                                and not Path("/usr/sbin/nginx").is_file(), reason="nginx is not installed")


def listening(port: int) -> bool:
    with socket.socket() as probe:
        probe.settimeout(0.2)
        return probe.connect_ex(("127.0.0.1", port)) == 0


def test_config_is_accepted_by_nginx(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["gateway", "config", "--ls-url", "http://127.0.0.1:8080", "--authoriser-url",
                                      "http://127.0.0.1:9093", "--listen", "127.0.0.1:8081", "--prefix",
                                      str(tmp_path)], prog_name="posthoc")
    assert result.exit_code == 0, result.output
    config = result.output
    assert "listen 127.0.0.1:8081;" in config and "auth_request /_posthoc_gateway/authorise;" in config
    assert "server 127.0.0.1:8080;" in config and "proxy_pass $posthoc_upstream$request_uri;" in config
    assert "default http://posthoc_label_studio;" in config
    assert "gateway http://posthoc_authoriser/_posthoc_answer;" in config
    assert "X-Original-URI $request_uri" in config and "keepalive" in config
    for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"):
        (tmp_path / "temp" / kind).mkdir(parents=True)
    (tmp_path / "nginx.conf").write_text(config, encoding="utf-8")
    checked = subprocess.run(["nginx", "-t", "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf"), "-e",
                              str(tmp_path / "error.log")], capture_output=True, text=True, check=False)
    assert checked.returncode == 0, checked.stderr


def test_deployed_config_has_no_private_paths() -> None:
    result = CliRunner().invoke(cli, ["gateway", "config", "--ls-url", "http://127.0.0.1:8080", "--authoriser-url",
                                      "http://127.0.0.1:9093"], prog_name="posthoc")
    assert result.exit_code == 0 and "daemon off" not in result.output and "temp_path" not in result.output


@pytest.mark.parametrize("args", [["--ls-url", "ftp://x", "--authoriser-url", "http://127.0.0.1:1"],
                                  ["--ls-url", "http://a;b", "--authoriser-url", "http://127.0.0.1:1"],
                                  ["--ls-url", "http://127.0.0.1:1", "--authoriser-url", "http://127.0.0.1:1",
                                   "--listen", "127.0.0.1:99999"]],
                         ids=["ls-url not http", "ls-url with a semicolon", "listen port out of range"])
def test_bad_config_options_are_one_line_errors(args: list[str]) -> None:
    done = subprocess.run([sys.executable, "-m", "posthoc.cli.main", "gateway", "config", *args],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


def test_serve_without_a_token_is_a_one_line_error(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("POSTHOC_LS_TOKEN", "LABEL_STUDIO_TOKEN")}
    done = subprocess.run([sys.executable, "-m", "posthoc.cli.main", "gateway", "serve", "--manifest",
                           str(tmp_path / "m.sqlite"), "--url", "http://127.0.0.1:1"], capture_output=True,
                          text=True, env=env, check=False)
    assert done.returncode == 2 and "POSTHOC_LS_TOKEN" in done.stderr and "Traceback" not in done.stderr


def _wait_listening(command: subprocess.Popen[str], port: int) -> None:
    deadline = time.monotonic() + 30
    while not listening(port):
        assert command.poll() is None and time.monotonic() < deadline, command.communicate()[1]
        time.sleep(0.1)


def _run(port: int, prefix: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "posthoc.cli.main", "gateway", "run", "--ls-url",
                             "http://127.0.0.1:9", "--authoriser-url", "http://127.0.0.1:9", "--port", str(port),
                             "--prefix", str(prefix)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.nginx
@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL], ids=lambda how: how.name)
def test_run_stops_nginx_with_the_command_also_when_killed(how: signal.Signals, tmp_path: Path,
                                                           nginx_binary: str) -> None:
    port = free_loopback_port()
    temp_before = set(Path("/tmp").glob("posthoc-gateway-*"))
    command = _run(port, tmp_path / "gateway")
    try:
        _wait_listening(command, port)
        command.send_signal(how)
        command.wait(timeout=20)
        deadline = time.monotonic() + 10
        while listening(port) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not listening(port)
    finally:
        if command.poll() is None:
            command.kill()
            command.wait(timeout=10)
    # no temp folder: the kept prefix only, which the next run takes over (also after a SIGKILL)
    assert set(Path("/tmp").glob("posthoc-gateway-*")) == temp_before
    assert (tmp_path / "gateway" / "nginx.conf").is_file()
    again = _run(port, tmp_path / "gateway")
    try:
        _wait_listening(again, port)
        second = subprocess.run([sys.executable, "-m", "posthoc.cli.main", "gateway", "run", "--ls-url",
                                 "http://127.0.0.1:9", "--authoriser-url", "http://127.0.0.1:9", "--prefix",
                                 str(tmp_path / "gateway")], capture_output=True, text=True, timeout=60, check=False)
        assert second.returncode == 2 and "already runs from this folder" in second.stderr, second.stderr
    finally:
        again.send_signal(signal.SIGINT)
        again.wait(timeout=20)
