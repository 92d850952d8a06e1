"""No secret in code, output, logs, task data or reports; tokens come from the environment.

* The repository (outside tests/) holds no hard-coded token, password or key.
* ``posthoc score``, ``posthoc study status`` and ``posthoc study create`` never print the Label Studio
  token or the backend secret: not against a dead port, and not when the server echoes the request's
  headers and body in its error answers (:mod:`security.echo_server`).
* ``connect_backend`` errors hide the token and the secret it sends.
* ``posthoc score`` outputs hold no token; ``posthoc backend serve``'s log (gunicorn access log on stdout,
  errors on stderr) holds neither the secret nor Label Studio's ``/setup`` access token.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

from security.echo_server import echo_server
from security.htmlcheck import assert_safe_html

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "tok-0f1e2d3c4b5a69788796a5b4c3d2e1f0"  # throwaway values
SECRET = "backend-secret-9a8b7c6d5e4f"
ENV = {"LABEL_STUDIO_TOKEN": TOKEN, "POSTHOC_LS_TOKEN": TOKEN, "POSTHOC_BACKEND_SECRET": SECRET}

#: A literal assigned to a name that says secret, or a string shaped like a real credential.
_ASSIGNED = re.compile(r"""(?i)\b\w*(?:password|passwd|secret|token|api_?key)\w*\s*[:=]\s*["']([^"'\s]{8,})["']""")
_ENV_NAME = re.compile(r"[A-Z][A-Z0-9_]+")  # the name of an environment variable, not a value
_SHAPED = re.compile(r"\b(?:[0-9a-f]{40}|ghp_[A-Za-z0-9]{30,}|sk-[A-Za-z0-9]{20,}|AKIA[0-9A-Z]{16}"
                     r"|xox[bp]-[\w-]{10,})\b|-----BEGIN [A-Z ]*PRIVATE KEY-----")


def _tracked_files() -> list[Path]:
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=False)
    if listed.returncode != 0:
        pytest.skip("not a git work tree (git ls-files failed)")
    return [ROOT / name for name in listed.stdout.splitlines() if not name.startswith("tests/")]


def test_the_repository_holds_no_hard_coded_secret() -> None:
    found = []
    for path in _tracked_files():
        if path.suffix not in {".py", ".md", ".toml", ".cfg", ".ini", ".sh", ".yml", ".yaml", ".xml", ".json", ""}:
            continue
        if path.name in {"credentials.json", "accounts.json", ".env"} or path.suffix in {".pem", ".key"}:
            found.append(f"{path}: a credentials file is tracked")
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, FileNotFoundError, IsADirectoryError):
            continue
        for number, line in enumerate(text.splitlines(), start=1):
            assigned = [m for m in _ASSIGNED.finditer(line) if not _ENV_NAME.fullmatch(m.group(1))]
            if assigned or _SHAPED.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:100]}")
    assert found == []


def test_the_secret_patterns_find_what_they_must() -> None:
    assert _ASSIGNED.search('API_TOKEN = "abcdefgh12345678"') and _ASSIGNED.search("password: 'hunter2hunter2'")
    assert _SHAPED.search("Authorization: Token " + "0123456789abcdef" * 2 + "01234567")
    assert not _ASSIGNED.search('token = os.environ.get("LABEL_STUDIO_TOKEN")')
    assert _ENV_NAME.fullmatch(_ASSIGNED.search('TOKEN_ENV = "LABEL_STUDIO_TOKEN"').group(1))  # type: ignore[union-attr]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _posthoc(*args: str, env: dict[str, str] | None = None, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "posthoc.cli.main", *args], capture_output=True, text=True,
                          env={**os.environ, **ENV, **(env or {})}, timeout=timeout, stdin=subprocess.DEVNULL)


def _commands(manifest: Path, url: str, out: Path) -> dict[str, list[str]]:
    return {
        "score": ["score", "--manifest", str(manifest), "--url", url, "--out", str(out / "score"), "--quiet",
                  "--resamples", "5"],
        "study status": ["study", "status", "--manifest", str(manifest), "--url", url],
        "study create": ["study", "create", "--manifest", str(manifest), "--url", url, "--backend-url",
                         f"http://127.0.0.1:{_free_port()}", "--no-progress", "--accounts-file",
                         str(out / "accounts.json")],
    }


def _assert_quiet_failure(done: subprocess.CompletedProcess[str]) -> None:
    output = done.stdout + done.stderr
    assert TOKEN not in output and SECRET not in output
    assert TOKEN[4:20] not in output and SECRET[:16] not in output  # not even part of them
    assert done.returncode == 3, output
    assert "Traceback" not in output and len(done.stderr.strip().splitlines()) == 1, output


@pytest.mark.slow
@pytest.mark.parametrize("status", [403, 500])
def test_cli_errors_never_print_the_token_even_when_the_server_echoes_it(manifest_path: Path, tmp_path: Path,
                                                                         status: int) -> None:
    with echo_server(status) as url:
        for name, args in _commands(manifest_path, url, tmp_path).items():
            done = _posthoc(*args)
            _assert_quiet_failure(done)
            assert str(status) in done.stderr, name  # the answer is reported, with the credentials blanked


@pytest.mark.slow
def test_cli_errors_never_print_the_token_against_a_dead_port(manifest_path: Path, tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{_free_port()}"
    for args in _commands(manifest_path, url, tmp_path).values():
        _assert_quiet_failure(_posthoc(*args))
    assert not (tmp_path / "accounts.json").exists()


def test_connect_backend_errors_hide_the_token_and_the_secret() -> None:
    from posthoc.errors import PosthocServiceError
    from posthoc_backend.connect import connect_backend

    with echo_server(400) as url, pytest.raises(PosthocServiceError) as raised:
        connect_backend(url, TOKEN, 1, "http://127.0.0.1:9", secret=SECRET)
    message = str(raised.value)
    assert "400" in message and "basic_auth_pass" in message and "***" in message  # the echo is shown ...
    assert TOKEN not in message and SECRET not in message  # ... blanked


def test_a_setup_target_shows_neither_the_token_nor_the_secret() -> None:
    from posthoc.jobs.setup_options import SetupTarget

    target = SetupTarget(url="http://127.0.0.1:9", token=TOKEN, backend_url="http://127.0.0.1:8",
                         backend_secret=SECRET)
    shown = f"{target!r} {target}"
    assert "http://127.0.0.1:9" in shown and "http://127.0.0.1:8" in shown  # the value is shown ...
    assert TOKEN not in shown and SECRET not in shown  # ... without what opens Label Studio and the backend


@pytest.mark.slow
def test_score_outputs_hold_no_token(manifest_path: Path, tmp_path: Path) -> None:
    from posthoc.export.synthetic import write_synthetic_export
    from posthoc.labelstudio.label_config import verification_tags
    from posthoc.paths import label_config
    from posthoc.study.plan.index import ManifestIndex
    from posthoc.study.plan.manifest import Manifest

    manifest = Manifest.open(manifest_path)
    try:
        tasks = manifest.tasks()
        texts = dict(zip(tasks["task_key"], tasks["text"], strict=True))
        export = write_synthetic_export(tmp_path / "export.json", ManifestIndex.from_manifest(manifest),
                                        verification_tags(label_config("entity_verification")), texts=texts, seed=3)
    finally:
        manifest.close()
    out = tmp_path / "scored"
    done = _posthoc("score", "--manifest", str(manifest_path), "--export-file", str(export.path), "--out", str(out),
                    "--resamples", "5", "--quiet")
    assert done.returncode == 0, done.stderr
    files = [path for path in out.rglob("*") if path.is_file()]
    assert any(path.name == "report.html" for path in files) and len(files) > 5
    for path in files:
        data = path.read_bytes()
        assert TOKEN.encode() not in data and SECRET.encode() not in data, path
    assert TOKEN not in done.stdout + done.stderr
    assert_safe_html((out / "report.html").read_text(encoding="utf-8"))  # the CLI's own report.html too


def test_backend_serve_log_holds_no_secret(manifest_path: Path, tmp_path: Path) -> None:
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    log = tmp_path / "backend.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "posthoc.cli.main", "backend", "serve", "--manifest", str(manifest_path),
             "--port", str(port), "--workers", "1", "--events-db", str(tmp_path / "events.sqlite3")],
            env={**os.environ, **ENV}, stdout=sink, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 60
            while True:
                assert process.poll() is None, log.read_text(encoding="utf-8", errors="replace")
                try:
                    if requests.get(f"{url}/health", timeout=2).status_code == 200:
                        break
                except requests.RequestException:
                    pass
                assert time.monotonic() < deadline, "backend did not start"
                time.sleep(0.2)
            setup = {"project": "1.1", "schema": "<View/>", "hostname": "http://127.0.0.1:8080",
                     "access_token": TOKEN}
            assert requests.post(f"{url}/setup", json=setup, auth=("labelstudio", SECRET), timeout=10).status_code \
                in (200, 422)
            assert requests.get(f"{url}/versions", headers={"Authorization": f"Bearer {SECRET}"},
                                timeout=10).status_code == 200
            for wrong in (SECRET[:-1], SECRET + "x", "nope"):
                assert requests.get(f"{url}/versions", headers={"Authorization": f"Bearer {wrong}"},
                                    timeout=10).status_code == 401
                assert requests.post(f"{url}/predict", json={"tasks": []}, auth=("labelstudio", wrong),
                                     timeout=10).status_code == 401
            assert requests.post(f"{url}/predict", json={"tasks": "bad", "access_token": TOKEN},
                                 auth=("labelstudio", SECRET), timeout=10).status_code == 400
        finally:
            process.terminate()
            process.wait(timeout=30)
    text = log.read_text(encoding="utf-8", errors="replace")
    assert "/versions" in text and "auth on" in text  # the access log and the start line are there
    assert SECRET not in text and SECRET[:-1] not in text and TOKEN not in text
