"""``posthoc ls start --database postgresql``: a local cluster in the data dir, stopped with ``posthoc ls stop``,
kept across restarts, and a PostgreSQL server named through the environment (real PostgreSQL, real Label Studio)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import requests

from lsfixtures import copy_postgresql_template, postgresql_data_dir, process_alive, require_postgresql

pytestmark = [pytest.mark.labelstudio, pytest.mark.slow]
POSTHOC = [sys.executable, "-m", "posthoc.cli.main"]



def _posthoc(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*POSTHOC, *args], capture_output=True, text=True, timeout=400, check=False,
                          env=env or os.environ.copy())


@pytest.fixture(scope="module")
def pg_folder() -> Path:
    require_postgresql()
    folder = postgresql_data_dir()
    yield folder
    for data_dir in folder.iterdir():
        _posthoc("ls", "stop", "--data-dir", str(data_dir))
    shutil.rmtree(folder, ignore_errors=True)


def test_a_local_cluster_starts_stops_and_keeps_its_projects(pg_folder: Path) -> None:
    data_dir = pg_folder / "ls"
    started = _posthoc("ls", "start", "--data-dir", str(data_dir), "--database", "postgresql")
    assert started.returncode == 0, started.stderr[-2000:]
    assert "PostgreSQL" in started.stdout and "local cluster" in started.stdout
    url = re.search(r"running at (http://127\.0\.0\.1:\d+)", started.stdout).group(1)
    settings = json.loads((data_dir / "database.json").read_text())
    assert settings["engine"] == "postgresql" and settings["local_cluster"] is True
    assert oct((data_dir / "database.json").stat().st_mode & 0o777) == "0o600"
    assert settings["password"] not in started.stdout + started.stderr
    assert not (data_dir / "label_studio.sqlite3").exists()  # Label Studio wrote no SQLite database
    token = json.loads((data_dir / "credentials.json").read_text())["token"]
    headers = {"Authorization": f"Token {token}"}
    project = requests.post(f"{url}/api/projects/", json={"title": "kept on postgres"}, headers=headers,
                            timeout=30).json()

    import psycopg

    with psycopg.connect(host="127.0.0.1", port=settings["port"], user=settings["user"],
                         password=settings["password"], dbname=settings["name"], connect_timeout=5) as connection:
        titles = [row[0] for row in connection.execute("SELECT title FROM project")]
    assert "kept on postgres" in titles  # the project is in PostgreSQL itself

    status = _posthoc("ls", "status", "--data-dir", str(data_dir))
    assert status.returncode == 0 and "PostgreSQL" in status.stdout
    postmaster = int((data_dir / "postgres" / "postmaster.pid").read_text().splitlines()[0])
    ls_pid = json.loads((data_dir / "server.json").read_text())["pid"]
    stopped = _posthoc("ls", "stop", "--data-dir", str(data_dir))
    assert stopped.returncode == 0, stopped.stderr
    assert not process_alive(ls_pid) and not process_alive(postmaster)

    again = _posthoc("ls", "start", "--data-dir", str(data_dir))  # no --database: the stored one
    assert again.returncode == 0, again.stderr[-2000:]
    url = re.search(r"running at (http://127\.0\.0\.1:\d+)", again.stdout).group(1)
    listed = requests.get(f"{url}/api/projects/{project['id']}/", headers=headers, timeout=30)
    assert listed.ok and listed.json()["title"] == "kept on postgres"
    refused = _posthoc("ls", "start", "--data-dir", str(data_dir), "--database", "sqlite")
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert _posthoc("ls", "stop", "--data-dir", str(data_dir)).returncode == 0


def test_a_server_named_by_the_environment_is_used_not_a_local_cluster(pg_folder: Path, ls_pg_template: Path) -> None:
    """The user's own PostgreSQL (here a cluster started for the test: a copy of the migrated template's, so Label
    Studio starts on it without migrating; the first migration is the test above) named by POSTHOC_LS_DATABASE_URL.
    The data dir starts with the template's admin credentials only (no database.json, no cluster)."""
    from posthoc.labelstudio.database import LocalCluster, read_database
    from posthoc.labelstudio.ports import free_port

    server_dir = copy_postgresql_template(ls_pg_template, pg_folder / "their-postgres")
    cluster = LocalCluster(server_dir, settings=read_database(server_dir))
    settings = cluster.start(port=free_port())
    try:
        data_dir = copy_postgresql_template(ls_pg_template, pg_folder / "ls-named", cluster=False)
        assert not (data_dir / "database.json").exists() and not (data_dir / "postgres").exists()
        env = dict(os.environ, POSTHOC_LS_DATABASE_URL=(
            f"postgresql://{settings.user}:{settings.password}@127.0.0.1:{settings.port}/{settings.name}"))
        started = _posthoc("ls", "start", "--data-dir", str(data_dir), "--database", "postgresql", env=env)
        assert started.returncode == 0, started.stderr[-2000:]
        assert f":{settings.port}/" in started.stdout and "(server)" in started.stdout
        assert not (data_dir / "postgres").exists()  # no cluster of its own
        stored = json.loads((data_dir / "database.json").read_text())
        assert stored["local_cluster"] is False and stored["port"] == settings.port
        assert _posthoc("ls", "stop", "--data-dir", str(data_dir)).returncode == 0
        assert cluster.pid() is not None  # stopping Label Studio leaves the user's server running
    finally:
        cluster.stop()
    assert cluster.pid() is None
