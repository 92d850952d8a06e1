"""``posthoc study login`` prints a worker's login again; ``posthoc study retire`` takes a finished study off a
shared Label Studio, its projects exported first, nothing deleted without ``--yes``, a rerun harmless. On the real
Label Studio the tests start (``ls_server``), through the CLI as a user runs it (env from ``posthoc ls env``)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lsfixtures import run_backend, small_sample_manifest
from posthoc.jobs.setup_record import default_setup_file, recorded_project_ids
from posthoc.labelstudio.client import LabelStudioClient
from posthoc.study.plan.logins import default_accounts_file, read_accounts

pytestmark = [pytest.mark.labelstudio, pytest.mark.slow]


def _posthoc(ls_server: Any, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in {"POSTHOC_LS_TOKEN", "POSTHOC_GATEWAY_URL"}}
    env.update(POSTHOC_LS_URL=ls_server.url, LABEL_STUDIO_TOKEN=ls_server.token)  # as `eval "$(posthoc ls env)"`
    return subprocess.run([sys.executable, "-m", "posthoc.cli.main", *args], capture_output=True, text=True,
                          env=env, timeout=600, check=False)


def _created(ls_server: Any, folder: Path, name: str) -> tuple[Path, str]:
    manifest = small_sample_manifest(folder / f"{name}.sqlite", name=name, n_workers=3, control_tasks=False)
    with run_backend(manifest.path) as backend_url:
        done = _posthoc(ls_server, "study", "create", "--manifest", str(manifest.path), "--backend-url", backend_url,
                        "--no-progress")
    assert done.returncode == 0, done.stderr
    return Path(manifest.path), done.stdout


@pytest.fixture(scope="module")
def studies(ls_server: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    folder = tmp_path_factory.mktemp("retire")
    retiring, printed = _created(ls_server, folder, "retiring")
    neighbour, _ = _created(ls_server, folder, "neighbour")
    yield {"retiring": retiring, "printed": printed, "neighbour": neighbour, "folder": folder}
    admin = LabelStudioClient(ls_server.url, ls_server.token)
    for manifest in (retiring, neighbour):
        for project_id in recorded_project_ids(default_setup_file(manifest), study=manifest.stem).values():
            admin.delete(f"/api/projects/{project_id}/")


def test_login_prints_the_line_study_create_printed_and_only_that_workers_password(
        studies: dict[str, Any], ls_server: Any) -> None:
    manifest = studies["retiring"]
    done = _posthoc(ls_server, "study", "login", "--manifest", str(manifest), "--worker", "w002")
    assert done.returncode == 0, done.stderr
    first, second = done.stdout.splitlines()
    assert first in studies["printed"].splitlines() and first.startswith("  w002: ")
    accounts = read_accounts(default_accounts_file(manifest))
    assert second.startswith(f"  password: {accounts['w002']['password']}  (from ")
    others = [a["password"] for w, a in accounts.items() if w != "w002"]
    assert not any(secret in done.stdout for secret in [*others, ls_server.token, ls_server.password])


@pytest.mark.parametrize(("worker", "says"), [("w999", "not a worker of study"), ("", "not a worker of study")],
                         ids=["unknown worker", "empty worker"])
def test_login_of_a_worker_the_study_does_not_have_is_bad_input(studies: dict[str, Any], ls_server: Any,
                                                                 worker: str, says: str) -> None:
    done = _posthoc(ls_server, "study", "login", "--manifest", str(studies["retiring"]), "--worker", worker)
    assert done.returncode == 2 and says in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr


def _state(ls_server: Any, manifest: Path) -> tuple[set[int], set[int]]:
    """The study's projects and its workers' accounts that Label Studio still holds (ids)."""
    admin = LabelStudioClient(ls_server.url, ls_server.token)
    ids = set(recorded_project_ids(default_setup_file(manifest), study=manifest.stem).values())
    projects = {int(p["id"]) for p in admin.projects(ids=sorted(ids))} & ids
    users = {int(a["user_id"]) for a in read_accounts(default_accounts_file(manifest)).values()}
    return projects, {u for u in users if admin.user(u) is not None}


def test_retire_exports_first_deletes_only_with_yes_and_a_rerun_is_harmless(studies: dict[str, Any],
                                                                            ls_server: Any) -> None:
    manifest, neighbour = studies["retiring"], studies["neighbour"]
    accounts_path = default_accounts_file(manifest)
    accounts = read_accounts(accounts_path)
    shared = read_accounts(default_accounts_file(neighbour))["w001"]["email"]  # another study's login
    accounts["w003"]["email"] = shared  # as a study whose w003 logs in with an account another study uses too
    accounts_path.write_text(json.dumps(accounts), encoding="utf-8")
    before, neighbour_before = _state(ls_server, manifest), _state(ls_server, neighbour)
    assert len(before[0]) == 3 and len(before[1]) == 3 and len(neighbour_before[0]) == 3
    out = studies["folder"] / "kept"

    listed = _posthoc(ls_server, "study", "retire", "--manifest", str(manifest), "--out", str(out))
    assert listed.returncode == 0, listed.stderr
    assert _state(ls_server, manifest) == before  # nothing changed without --yes
    assert listed.stdout.count("would delete (give --yes): project") == 3
    assert listed.stdout.count("would delete (give --yes): account") == 2 and f"kept: account {shared}" in listed.stdout
    files = sorted(out.iterdir())
    assert len(files) == 3 and stat.S_IMODE(out.stat().st_mode) == 0o700
    assert all(stat.S_IMODE(f.stat().st_mode) == 0o600 for f in files)
    keys = {task["data"]["task_key"] for f in files for task in json.loads(f.read_text(encoding="utf-8"))}
    from posthoc.study.plan.manifest import Manifest

    planned = Manifest.open(manifest)
    try:
        assert keys == set(planned.tasks()["task_key"])  # every task of every project kept
    finally:
        planned.close()

    retired = _posthoc(ls_server, "study", "retire", "--manifest", str(manifest), "--out", str(out), "--yes")
    assert retired.returncode == 0, retired.stderr
    assert retired.stdout.count("deleted: project") == 3 and retired.stdout.count("deleted: account") == 2
    projects, users = _state(ls_server, manifest)
    assert projects == set() and users == {int(accounts["w003"]["user_id"])}  # w003's user id: not the shared one
    assert _state(ls_server, neighbour) == neighbour_before  # the other study, its shared login too, untouched
    exported = {f.name: f.read_bytes() for f in out.iterdir()}
    assert len(exported) == 3

    again = _posthoc(ls_server, "study", "retire", "--manifest", str(manifest), "--out", str(out), "--yes")
    assert again.returncode == 0 and "nothing to export or delete" in again.stdout, again.stdout + again.stderr
    assert {f.name: f.read_bytes() for f in out.iterdir()} == exported
    gone = _posthoc(ls_server, "study", "login", "--manifest", str(manifest), "--worker", "w001")
    assert gone.returncode == 2 and "holds no project of worker w001" in gone.stderr, gone.stderr
