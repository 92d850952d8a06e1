"""The local Label Studio lifecycle (posthoc.labelstudio.server, `posthoc ls`) and the shared fixtures."""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import requests

from posthoc.errors import PosthocInputError, PosthocServiceError
from posthoc.labelstudio.credentials import CREDENTIALS_FILE, resolve_credentials
from posthoc.labelstudio.environment import server_environment
from posthoc.labelstudio.server import LabelStudioServer
from posthoc.paths import label_config

pytestmark = pytest.mark.labelstudio


def test_generated_credentials_are_stored_0600_and_reused(tmp_path: Path) -> None:
    first = resolve_credentials(tmp_path, environ={})
    mode = stat.S_IMODE(os.stat(tmp_path / CREDENTIALS_FILE).st_mode)
    assert mode == 0o600
    again = resolve_credentials(tmp_path, environ={})
    assert again == first
    assert first.password not in repr(first) and first.token not in repr(first)


def test_environment_overrides_stored_credentials(tmp_path: Path) -> None:
    resolve_credentials(tmp_path, environ={})
    chosen = resolve_credentials(tmp_path, environ={"POSTHOC_LS_USERNAME": "boss@example.org",
                                                    "POSTHOC_LS_PASSWORD": "pw-1234567", "POSTHOC_LS_TOKEN": "t" * 40})
    assert (chosen.username, chosen.password, chosen.token) == ("boss@example.org", "pw-1234567", "t" * 40)
    with pytest.raises(PosthocInputError, match="5 characters"):
        resolve_credentials(tmp_path, environ={"POSTHOC_LS_TOKEN": "abc"})


def test_server_environment_is_off_network_and_loopback_ml(tmp_path: Path) -> None:
    creds = resolve_credentials(tmp_path, environ={})
    env = server_environment(tmp_path, creds, base={"LABEL_STUDIO_PORT": "9999"})
    assert env["LATEST_VERSION_CHECK"] == "false" and env["COLLECT_ANALYTICS"] == "false"
    assert env["SENTRY_DSN"] == "" and env["FRONTEND_SENTRY_DSN"] == ""
    assert env["LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN"] == "true"
    assert env["LABEL_STUDIO_DISABLE_SIGNUP_WITHOUT_LINK"] == "true"  # sign-up only with the invite link
    assert env["ML_BLOCK_LOCAL_IP"] == "false" and env["SSRF_PROTECTION_ENABLED"] == "false"
    assert "LABEL_STUDIO_PORT" not in env
    remote = server_environment(tmp_path, creds, allow_local_ml=False, base={})
    assert "ML_BLOCK_LOCAL_IP" not in remote


def test_ls_server_answers_with_admin_token(ls_server) -> None:
    assert ls_server.url.startswith("http://127.0.0.1:")
    me = requests.get(f"{ls_server.url}/api/current-user/whoami",
                      headers={"Authorization": f"Token {ls_server.token}"}, timeout=10)
    assert me.status_code == 200 and me.json()["email"] == ls_server.username
    bad = requests.get(f"{ls_server.url}/api/projects/", headers={"Authorization": "Token wrong-token"}, timeout=10)
    assert bad.status_code == 401


def test_server_listens_on_loopback_only(ls_server) -> None:
    port = int(ls_server.url.rsplit(":", 1)[1])
    # the kernel's own table of sockets: local address (hex, little-endian IPv4), port, state 0A = LISTEN
    listening = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text(encoding="ascii").splitlines()[1:]:
            fields = line.split()
            address, hex_port = fields[1].split(":")
            if int(hex_port, 16) == port and fields[3] == "0A":
                listening.append(address)
    assert listening == ["0100007F"]  # 127.0.0.1 only, no IPv6 or wildcard socket


def test_project_factory_creates_and_the_config_validates(ls_server, ls_project) -> None:
    project = ls_project(label_config("entity_verification"), title="fixture check")
    client = ls_server.client()
    assert client.projects.get(id=project.id).title == "fixture check"


def test_annotator_factory_gives_a_working_own_token(ls_server, ls_annotator) -> None:
    account = ls_annotator("fixture-annotator@posthoc.local")
    me = requests.get(f"{ls_server.url}/api/current-user/whoami",
                      headers={"Authorization": f"Token {account.token}"}, timeout=10).json()
    assert me["email"] == "fixture-annotator@posthoc.local" and me["id"] == account.user_id
    again = ls_annotator("fixture-annotator@posthoc.local", password=account.password)
    assert again == account


def test_port_taken_is_refused(ls_template: Path, tmp_path: Path) -> None:
    with socket.socket() as blocker:
        blocker.bind(("127.0.0.1", 0))
        blocker.listen(1)
        port = blocker.getsockname()[1]
        server = LabelStudioServer(tmp_path / "ls", port=port)
        with pytest.raises(PosthocServiceError, match=f"port {port}"):
            server.start()
    assert server.process is None


def test_cli_start_status_stop(ls_template: Path, tmp_path: Path) -> None:
    from lsfixtures import copy_template

    data_dir = copy_template(ls_template, tmp_path / "cli-ls")
    posthoc = [sys.executable, "-m", "posthoc.cli.main"]
    started = subprocess.run([*posthoc, "ls", "start", "--data-dir", str(data_dir)], capture_output=True,
                             text=True, timeout=300, check=False)
    try:
        assert started.returncode == 0, started.stderr
        assert "http://127.0.0.1:" in started.stdout
        status = subprocess.run([*posthoc, "ls", "status", "--data-dir", str(data_dir)], capture_output=True,
                                text=True, timeout=60, check=False)
        assert status.returncode == 0 and "answering" in status.stdout and "NOT" not in status.stdout
        again = subprocess.run([*posthoc, "ls", "start", "--data-dir", str(data_dir)], capture_output=True,
                               text=True, timeout=60, check=False)
        assert again.returncode == 2 and "already runs" in again.stderr
    finally:
        stopped = subprocess.run([*posthoc, "ls", "stop", "--data-dir", str(data_dir)], capture_output=True,
                                 text=True, timeout=60, check=False)
    assert "stopped" in stopped.stdout
    after = subprocess.run([*posthoc, "ls", "status", "--data-dir", str(data_dir)], capture_output=True,
                           text=True, timeout=60, check=False)
    assert after.returncode == 1 and "not running" in after.stdout


def test_changed_admin_password_in_the_environment_is_applied(ls_template: Path, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from lsfixtures import copy_template
    from posthoc.labelstudio.users import login

    data_dir = copy_template(ls_template, tmp_path / "pw-ls")
    monkeypatch.setenv("POSTHOC_LS_PASSWORD", "a-new-admin-password-42")
    server = LabelStudioServer(data_dir)
    with server:
        assert login(server.url, server.username, "a-new-admin-password-42") is not None
    assert resolve_credentials(data_dir, environ={}).password == "a-new-admin-password-42"


def test_stop_leaves_a_stale_pid_of_another_program_alone(tmp_path) -> None:
    """A server.json whose pid now belongs to another program: `ls stop` must not signal it."""
    import json
    import subprocess
    import sys

    from posthoc.labelstudio.server import stop_detached
    from posthoc.labelstudio.server_log import STATE_FILE

    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
    try:
        (tmp_path / STATE_FILE).write_text(json.dumps({"pid": other.pid, "port": 1, "url": "http://127.0.0.1:1"}),
                                           encoding="utf-8")
        assert stop_detached(tmp_path) is False
        assert other.poll() is None  # still running
        assert not (tmp_path / STATE_FILE).exists()
    finally:
        other.kill()
        other.wait()
