"""Label Studio's WSGI app under gunicorn with two workers on a local PostgreSQL cluster (real Label Studio, real
PostgreSQL, real gunicorn): both workers answer, the labeling page's JavaScript loads, an annotator logs in and
submits, and stopping leaves no process; SQLite with more than one worker is refused before anything starts."""

from __future__ import annotations

import re
import shutil
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import requests

from lsfixtures import make_annotator, postgresql_label_studio, process_alive

pytestmark = [pytest.mark.labelstudio, pytest.mark.slow]

CONFIG = """<View><Text name="text" value="$text"/>
<Choices name="choice" toName="text"><Choice value="yes"/><Choice value="no"/></Choices></View>"""



@pytest.fixture(scope="module")
def app(ls_pg_template: Path) -> Iterator[Any]:
    """Two gunicorn workers on a copy of the migrated PostgreSQL template (its cluster included)."""
    from posthoc.labelstudio.app_server import AppServer
    from posthoc.labelstudio.database import DatabaseSettings

    prepared, folder = postgresql_label_studio(ls_pg_template)
    server = AppServer(prepared.data_dir, workers=2, access_log=True,
                       database=DatabaseSettings("postgresql", local_cluster=True))
    server.start(timeout=400)
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)


def _admin(app: Any) -> requests.Session:
    session = requests.Session()
    session.headers["Authorization"] = f"Token {app.token}"
    return session


def test_both_workers_answer(app: Any) -> None:
    workers = app.worker_pids()
    assert len(workers) == 2 and app.process.pid not in workers
    admin = _admin(app)

    def whoami(_: int) -> int:
        return requests.get(f"{app.url}/api/current-user/whoami", headers=admin.headers, timeout=60).status_code

    for _ in range(10):  # concurrent requests until the access log shows both workers answered
        with ThreadPoolExecutor(max_workers=6) as pool:
            assert set(pool.map(whoami, range(12))) == {200}
        answered = {int(m) for m in re.findall(r"^<?(\d+)>? \"GET /api/current-user/whoami",
                                                app.app_log.read_text(errors="replace"), re.M)}
        if answered >= set(workers):
            break
    assert answered == set(workers)


def _label_studio_backends(app: Any) -> set[int]:
    """The PostgreSQL backends (pids) connected to Label Studio's database, other than this query's own."""
    import psycopg

    db = app.database
    with psycopg.connect(host=db.host, port=db.port, user=db.user, password=db.password, dbname=db.name,
                         connect_timeout=5, autocommit=True) as connection:
        rows = connection.execute("SELECT pid FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
                                  (db.name,)).fetchall()
    return {int(pid) for (pid,) in rows}


def test_database_connections_persist_across_requests(app: Any) -> None:
    """The project's settings module (issue 41): a worker keeps its PostgreSQL connection between requests instead
    of opening one a request (Label Studio's own CONN_MAX_AGE = 0 leaves no connection once a request is done)."""
    admin = _admin(app)
    for _ in range(6):  # every worker has served a request, so every worker holds its connection
        assert admin.get(f"{app.url}/api/current-user/whoami", timeout=60).status_code == 200
    before = _label_studio_backends(app)
    assert 1 <= len(before) <= 2  # one a worker (one thread each), none left behind by finished requests
    for _ in range(20):
        assert admin.get(f"{app.url}/api/projects/", timeout=60).status_code == 200
    after = _label_studio_backends(app)
    assert before <= after and len(after) <= 2  # the backends that served before serve the new requests


def _login(app: Any, email: str, password: str) -> requests.Session:
    """A browser-like session: the login form with its CSRF cookie, as Label Studio's page posts it."""
    session = requests.Session()
    session.get(f"{app.url}/user/login/", timeout=60)
    csrf = session.cookies["csrftoken"]
    answer = session.post(f"{app.url}/user/login/", data={"csrfmiddlewaretoken": csrf, "email": email,
                                                          "password": password},
                          headers={"Referer": f"{app.url}/user/login/"}, allow_redirects=False, timeout=60)
    assert answer.status_code == 302, answer.text[:500]
    session.headers["X-CSRFToken"] = session.cookies["csrftoken"]
    return session


def test_an_annotator_logs_in_loads_the_labeling_page_and_submits(app: Any) -> None:
    from posthoc.labelstudio.app_server import static_root

    admin = _admin(app)
    project = admin.post(f"{app.url}/api/projects/", json={"title": "app server", "label_config": CONFIG},
                         timeout=60).json()
    admin.post(f"{app.url}/api/projects/{project['id']}/import", json=[{"text": "served by gunicorn"}],
               timeout=60).raise_for_status()
    annotator = make_annotator(app)
    browser = _login(app, annotator.email, annotator.password)

    page = browser.get(f"{app.url}/projects/{project['id']}/data?labeling=1", timeout=60)
    assert page.status_code == 200
    scripts = re.findall(r'<script[^>]+src="([^"]+\.js)"', page.text)
    assert scripts, page.text[:1000]
    bundle = max(scripts, key=len)
    loaded = browser.get(bundle if bundle.startswith("http") else f"{app.url}{bundle}", timeout=60)
    assert loaded.status_code == 200 and "javascript" in loaded.headers["Content-Type"]
    assert len(loaded.content) > 10_000
    assert static_root().is_dir() and (static_root() / "js").is_dir()

    task = browser.get(f"{app.url}/api/projects/{project['id']}/next", timeout=60).json()
    result = [{"from_name": "choice", "to_name": "text", "type": "choices", "value": {"choices": ["yes"]}}]
    submitted = browser.post(f"{app.url}/api/tasks/{task['id']}/annotations/?project={project['id']}",
                             json={"result": result, "lead_time": 2.5, "was_cancelled": False}, timeout=60)
    assert submitted.status_code == 201, submitted.text[:500]
    stored = admin.get(f"{app.url}/api/tasks/{task['id']}/annotations/", timeout=60).json()
    assert [(a["completed_by"], a["result"][0]["value"]) for a in stored] == [(annotator.user_id,
                                                                               {"choices": ["yes"]})]


def test_a_replica_shares_the_database_and_the_sessions(app: Any, tmp_path: Path) -> None:
    annotator = make_annotator(app)
    browser = _login(app, annotator.email, annotator.password)
    replica = app.replica(tmp_path / "replica", workers=1)
    replica.start(timeout=400)
    try:
        assert replica.url != app.url and replica.database.port == app.database.port
        seen = browser.get(f"{replica.url}/api/current-user/whoami", timeout=60)  # the first server's session
        assert seen.status_code == 200 and seen.json()["email"] == annotator.email
        assert (replica.data_dir / "media").resolve() == (app.data_dir / "media").resolve()  # exports are found
    finally:
        replica.stop()
    assert app.alive() and _admin(app).get(f"{app.url}/api/projects/", timeout=60).status_code == 200


def test_stop_leaves_no_process(app: Any) -> None:
    from posthoc.labelstudio.database import LocalCluster

    pids = [app.process.pid, *app.worker_pids()]
    postmaster = LocalCluster(app.data_dir).pid()
    assert postmaster is not None and all(process_alive(pid) for pid in pids)
    app.stop()
    deadline = time.monotonic() + 10
    while any(process_alive(pid) for pid in [*pids, postmaster]) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert [pid for pid in [*pids, postmaster] if process_alive(pid)] == []
    assert app.process is None and app.worker_pids() == []


def test_sqlite_with_several_workers_is_refused(tmp_path: Path) -> None:
    from posthoc.errors import PosthocInputError
    from posthoc.labelstudio.app_server import AppServer

    with pytest.raises(PosthocInputError, match="2 workers on SQLite: SQLite takes one writer at a time"):
        AppServer(tmp_path / "ls", workers=2)
    assert not (tmp_path / "ls").exists()  # refused before anything was made or started
    assert AppServer(tmp_path / "one", workers=1).workers == 1  # one process on SQLite is the default
