"""Files and secrets (issue 47): what ``posthoc`` writes is its owner's alone (files 0600, folders 0700) whatever
the umask it is started with (here root's 022), and no log holds a query string (the sign-up link's invite token),
a Referer or the backend's secret.

Run as the user runs them: ``python -m posthoc.cli.main`` in a child process started under umask 022 (the planned
study, a scored report, the ML backend's events store and log); the demo's backend secret and the access-log
formats of the processes the gateway and the demo start."""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import requests

from posthoc.cli.backend import gunicorn_command
from posthoc.jobs.demo import BACKEND_KEY_FILE, demo_backend_secret
from posthoc.labelstudio.app_server import ACCESS_FORMAT
from posthoc.labelstudio.gateway_nginx import TIMING_FORMAT

ROOT = Path(__file__).resolve().parents[2]
SECRET = "private-files-secret-0123456789abcdef"
INVITE = "invite0123456789abcdef"


def _under_umask_022() -> None:
    os.umask(0o022)


def _posthoc(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "posthoc.cli.main", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=300, stdin=subprocess.DEVNULL, preexec_fn=_under_umask_022, check=False)


def shared(folder: Path) -> list[str]:
    """Every file or folder under (and with) ``folder`` that its group or others may read, write or enter."""
    paths = [folder, *folder.rglob("*")]
    return [f"{path} {stat.filemode(path.stat().st_mode)}" for path in paths if path.stat().st_mode & 0o077]


def test_a_planned_study_and_its_scored_report_are_the_owners_alone_under_umask_022(tmp_path: Path) -> None:
    study = tmp_path / "study"
    done = _posthoc("study", "plan", "--config", str(ROOT / "examples" / "study.toml"), "--out",
                    str(study / "manifest.sqlite"), "--json", "--no-progress", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (study / "manifest.sqlite").is_file() and len(list(study.iterdir())) >= 1
    assert shared(study) == []

    from posthoc.export.synthetic import write_synthetic_export
    from posthoc.labelstudio.label_config import verification_tags
    from posthoc.paths import label_config
    from posthoc.study.plan.index import ManifestIndex
    from posthoc.study.plan.manifest import Manifest

    manifest = Manifest.open(study / "manifest.sqlite")
    try:
        tasks = manifest.tasks()
        export = write_synthetic_export(tmp_path / "export.json", ManifestIndex.from_manifest(manifest),
                                        verification_tags(label_config("entity_verification")),
                                        texts=dict(zip(tasks["task_key"], tasks["text"], strict=True)), seed=3)
    finally:
        manifest.close()
    scored = study / "scored"
    done = _posthoc("score", "--manifest", str(study / "manifest.sqlite"), "--export-file", str(export.path),
                    "--out", str(scored), "--resamples", "5", "--quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (scored / "report.html").is_file()
    assert shared(study) == []


def test_the_backends_events_store_is_private_and_its_log_holds_no_query_or_secret(tmp_path: Path) -> None:
    study = tmp_path / "study"
    done = _posthoc("study", "plan", "--config", str(ROOT / "examples" / "study.toml"), "--out",
                    str(study / "manifest.sqlite"), "--no-progress", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    url, log = f"http://127.0.0.1:{port}", tmp_path / "backend.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "posthoc.cli.main", "backend", "serve", "--manifest", str(study / "manifest.sqlite"),
             "--port", str(port), "--workers", "1", "--events-db", str(study / "events" / "events.sqlite3")],
            env={**os.environ, "POSTHOC_BACKEND_SECRET": SECRET}, stdout=sink, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, preexec_fn=_under_umask_022)
        try:
            deadline = time.monotonic() + 60
            while True:
                assert process.poll() is None, log.read_text(encoding="utf-8", errors="replace")
                try:
                    if requests.get(f"{url}/health", timeout=2).status_code == 200:
                        break
                except requests.RequestException:
                    pass
                assert time.monotonic() < deadline, "the backend did not start"
                time.sleep(0.2)
            requests.get(f"{url}/health?token={INVITE}", headers={"Referer": f"{url}/user/signup/?token={INVITE}"},
                         timeout=10)
            requests.post(f"{url}/webhook", json={"action": "ANNOTATION_CREATED"}, auth=("labelstudio", SECRET),
                          timeout=10)
        finally:
            process.terminate()
            process.wait(timeout=30)
    text = log.read_text(encoding="utf-8", errors="replace")
    assert "/health" in text  # the access log is there
    assert INVITE not in text and SECRET not in text
    assert shared(study) == []


def test_the_demos_backend_has_a_generated_secret_kept_private(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        secret = demo_backend_secret(tmp_path)
    finally:
        os.umask(old)
    assert len(secret) >= 32 and demo_backend_secret(tmp_path) == secret
    assert stat.S_IMODE((tmp_path / BACKEND_KEY_FILE).stat().st_mode) == 0o600
    assert demo_backend_secret(tmp_path / "another") != secret


def test_no_access_log_format_writes_a_query_string_or_a_referer() -> None:
    """gunicorn's ``%(r)s`` (request line) and ``%(q)s`` hold the query, ``%(f)s`` the Referer (the sign-up page's
    holds the invite token); nginx's ``$request_uri`` / ``$request`` / ``$args`` the query."""
    command = gunicorn_command(host="127.0.0.1", port=9, workers=1)
    formats = [command[command.index("--access-logformat") + 1], ACCESS_FORMAT]
    for fmt in formats:
        assert "%(U)s" in fmt and not any(field in fmt for field in ("%(r)s", "%(q)s", "%(f)s", "%({")), fmt
    assert "$uri" in TIMING_FORMAT and not any(v in TIMING_FORMAT for v in ("$request_uri", "$request ", "$args",
                                                                            "$http_referer", "$query_string"))
