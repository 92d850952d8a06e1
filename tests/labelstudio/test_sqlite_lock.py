"""SQLite's ``database is locked`` as one clear line, and the load SQLite takes said up front (issue 30).

A real Label Studio on its embedded SQLite, started by ``posthoc ls start`` as a study owner does. The lock is
the one SQLite itself takes: this test holds ``BEGIN IMMEDIATE`` on Label Studio's database file, which is what
each of Label Studio's writes does while it runs (more writes at once than that queue behind it). Measured
first by hand on Label Studio 1.23.2: a PATCH, a sign-up and a log-in answer a "500 | Label Studio" HTML page
after ~5-6 s with the lock only in the server's log; an import gets no answer (its retry middleware waits) and
is applied once the lock goes.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from lsfixtures import copy_template, run_backend, small_sample_manifest
from posthoc.errors import PosthocServiceError
from posthoc.labelstudio.client import LabelStudioClient
from posthoc.labelstudio.server_log import LOCKED, locked_since, log_mark, read_state
from posthoc.labelstudio.users import login

pytestmark = [pytest.mark.labelstudio, pytest.mark.slow]

POSTHOC = [sys.executable, "-m", "posthoc.cli.main"]


def run(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*POSTHOC, *args], capture_output=True, text=True, timeout=timeout, check=False)


@pytest.fixture(scope="module")
def sqlite_ls(ls_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """``posthoc ls start --annotators 150`` on a copy of the migrated template: its output, url and token."""
    data_dir = copy_template(ls_template, tmp_path_factory.mktemp("sqlite-lock") / "labelstudio")
    started = run("ls", "start", "--data-dir", str(data_dir), "--annotators", "150")
    try:
        assert started.returncode == 0, started.stderr
        state = read_state(data_dir)
        assert state is not None
        token = json.loads((data_dir / "credentials.json").read_text())["token"]
        yield {"data_dir": data_dir, "url": str(state["url"]), "token": token, "started": started}
    finally:
        run("ls", "stop", "--data-dir", str(data_dir), timeout=60)


@contextlib.contextmanager
def held_lock(data_dir: Path) -> Iterator[None]:
    """SQLite's write lock on Label Studio's database, as one of its own writes holds it."""
    connection = sqlite3.connect(data_dir / "label_studio.sqlite3", isolation_level=None, timeout=30)
    try:
        connection.execute("BEGIN IMMEDIATE")
        yield
    finally:
        connection.execute("ROLLBACK")
        connection.close()


def one_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    return lines[0]


def test_ls_start_says_when_the_annotators_are_beyond_sqlite(sqlite_ls: dict[str, Any]) -> None:
    started = sqlite_ls["started"]
    warning = one_line(started.stderr)
    assert warning.startswith("posthoc: warning: 150 annotators at once is beyond Label Studio on SQLite")
    assert "posthoc ls start --database postgresql" in warning
    assert "up to about 100 annotators at once; more: --database postgresql" in started.stdout


def test_a_patch_under_the_lock_names_it(sqlite_ls: dict[str, Any]) -> None:
    client = LabelStudioClient(sqlite_ls["url"], sqlite_ls["token"], timeout=60)
    project = client.post("/api/projects/", {"title": "locked patch"})
    with held_lock(sqlite_ls["data_dir"]), pytest.raises(PosthocServiceError) as caught:
        client.patch(f"/api/projects/{project['id']}/", {"description": "under the lock"})
    message = str(caught.value)
    assert message.startswith(f"Label Studio PATCH /api/projects/{project['id']}/ answered 500: Label Studio's "
                              "SQLite database is locked")
    assert str(sqlite_ls["data_dir"] / "labelstudio.log") in message and "--database postgresql" in message
    # the lock gone, the same call goes through and the earlier lock is not blamed for anything else
    client.patch(f"/api/projects/{project['id']}/", {"description": "after the lock"})
    with pytest.raises(PosthocServiceError) as missing:
        client.get("/api/projects/999999/")
    assert "answered 404" in str(missing.value) and LOCKED not in str(missing.value)


def test_a_login_under_the_lock_is_not_a_refused_password(sqlite_ls: dict[str, Any]) -> None:
    credentials = json.loads((sqlite_ls["data_dir"] / "credentials.json").read_text())
    with held_lock(sqlite_ls["data_dir"]), pytest.raises(PosthocServiceError, match="SQLite database is locked"):
        login(sqlite_ls["url"], credentials["username"], credentials["password"])
    session = login(sqlite_ls["url"], credentials["username"], credentials["password"])
    assert session is not None
    session.close()


def test_a_write_that_waits_out_the_client_says_sqlite_and_is_applied_later(sqlite_ls: dict[str, Any],
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POSTHOC_LS_TIMEOUT", "4")  # the client's default wait, as a user extends (or shortens) it
    client = LabelStudioClient(sqlite_ls["url"], sqlite_ls["token"])
    project = client.post("/api/projects/", {"title": "locked import"})
    with held_lock(sqlite_ls["data_dir"]), pytest.raises(PosthocServiceError) as caught:
        client.post(f"/api/projects/{project['id']}/import", [{"text": "one task"}])
    message = str(caught.value)
    assert message.startswith(f"Label Studio POST /api/projects/{project['id']}/import got no answer in 4 s (env "
                              f"POSTHOC_LS_TIMEOUT): it runs on SQLite ({sqlite_ls['data_dir']})"), message
    assert "--database postgresql" in message
    deadline = time.monotonic() + 90  # Label Studio's middleware retries it: 1 s, 1.5 s, 2.25 s, ...
    while time.monotonic() < deadline and not list(client.tasks(project["id"])):
        time.sleep(1)
    assert len(list(client.tasks(project["id"]))) == 1


def test_study_create_under_the_lock_ends_in_one_line_and_a_rerun_completes(sqlite_ls: dict[str, Any],
                                                                           tmp_path: Path) -> None:
    manifest = small_sample_manifest(tmp_path / "manifest.sqlite", name="locked-study", n_workers=3,
                                     control_tasks=False)
    args = ["study", "create", "--manifest", str(manifest.path), "--data-dir", str(sqlite_ls["data_dir"]),
            "--no-progress"]
    with run_backend(manifest.path) as backend_url:
        with held_lock(sqlite_ls["data_dir"]):
            failed = run(*args, "--backend-url", backend_url)
        assert failed.returncode == 3
        line = one_line(failed.stderr)
        assert line.startswith("posthoc: service error: Label Studio POST ")
        assert "SQLite database is locked" in line and "--database postgresql" in line
        created = run(*args, "--backend-url", backend_url)
    assert created.returncode == 0, created.stderr
    assert "3 worker projects" in created.stdout


def test_study_create_warns_when_the_plan_is_beyond_sqlite(sqlite_ls: dict[str, Any], tmp_path: Path) -> None:
    """120 workers at once on SQLite: the warning comes first (here the backend is down, so nothing is made)."""
    from posthoc.sample import sample_corpus
    from posthoc.study.plan.config import sample_study_config
    from posthoc.study.plan.design import plan_study
    from posthoc.study.plan.manifest import Manifest

    corpus = sample_corpus()
    copies = [corpus.documents.assign(doc_id=corpus.documents["doc_id"] + f"-{i}") for i in range(2)]
    mentions = [corpus.mentions.assign(doc_id=corpus.mentions["doc_id"] + f"-{i}") for i in range(2)]
    config = sample_study_config(name="crowded", n_workers=120)
    plan = plan_study(pd.concat(copies, ignore_index=True), pd.concat(mentions, ignore_index=True),
                      dataclasses.replace(config, tasks_per_batch=1, control_tasks=False))
    path = tmp_path / "crowded.sqlite"
    Manifest.create(path, plan).close()
    result = run("study", "create", "--manifest", str(path), "--data-dir", str(sqlite_ls["data_dir"]),
                 "--backend-url", "http://127.0.0.1:9", "--backend-wait", "0", "--no-progress")
    first = result.stderr.splitlines()[0]
    assert first.startswith("posthoc: warning: this study has 120 workers; 120 annotators at once is beyond "
                            "Label Studio on SQLite"), result.stderr
    assert result.returncode == 3 and "Traceback" not in result.stderr


def test_locked_since_reads_only_what_was_logged_after_the_mark(tmp_path: Path) -> None:
    log = tmp_path / "labelstudio.log"
    log.write_text(f"[2026-12-02 14:17:25,513] [ERROR] b7caa988 {LOCKED}\n", encoding="utf-8")
    mark = log_mark(log)
    assert locked_since(mark) is None  # a lock before the call explains nothing about it
    with log.open("a", encoding="utf-8") as stream:
        stream.write("[2026-12-02 14:18:00,001] [WARNING] \"GET /api/projects/ HTTP/1.1\" 200 52\n")
    assert locked_since(mark) is None
    with log.open("a", encoding="utf-8") as stream:
        stream.write(f"sqlite3.OperationalError: {LOCKED}\n")
    assert locked_since(mark) == log
    assert locked_since(None) is None and log_mark(None) is None and log_mark(tmp_path / "absent.log") is None
