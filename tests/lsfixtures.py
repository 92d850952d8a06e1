"""Pytest fixtures that start a real, unmodified Label Studio (loaded as a plugin by ``conftest.py``).

* A migrated *template* data directory is built once per Label Studio version (cold start, ~30 s) in
  pytest's per-user temp root, guarded by a file lock so parallel runs build it once.
* ``ls_server`` (session scope) copies the template and starts a server on a free loopback port
  (~3-6 s). It yields a :class:`posthoc.labelstudio.server.LabelStudioServer` with ``url``, ``token``,
  ``username``, ``password``, ``data_dir`` and ``client()`` (an SDK ``LabelStudio``).
* ``ls_project`` (function scope) is a factory: ``ls_project(label_config, title=...)`` creates a
  throwaway project and deletes it after the test. :func:`make_project` is the same as a context manager.
* ``browser`` (module scope): Debian's chromium through Playwright; skips when chromium is missing.
* ``ls_annotator`` (function scope) is a factory: ``ls_annotator(email=None)`` makes (or logs into) an
  annotator account and returns a :class:`posthoc.labelstudio.users.Account` with its own API token.

A missing ``label_studio`` fails these tests (it is a hard dependency); only a missing chromium skips.
"""

from __future__ import annotations

import contextlib
import importlib.util
import itertools
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

TEMPLATE_READY = ".posthoc-template-ready"
_counter = itertools.count(1)


def _require_label_studio() -> None:
    """Fail (never skip): label-studio is in the ``test`` extra (pyproject.toml), which the suite needs."""
    if importlib.util.find_spec("label_studio") is None:
        pytest.fail("label-studio is not installed, but the tests need it (the test extra includes the server "
                    "extra): run `pip install -e '.[test]'` (or bash scripts/test.sh) and rerun", pytrace=False)


def _build_once(target: Path, make: Callable[[Path], None]) -> Path:
    """``target``, made by ``make(folder)`` (which fills the folder it is given) unless a finished one is there:
    under a file lock, so that runs at the same time build it once, and renamed into place only when done."""
    from filelock import FileLock

    target.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(target) + ".lock", timeout=900):
        if (target / TEMPLATE_READY).is_file():
            return target
        shutil.rmtree(target, ignore_errors=True)
        building = target.with_name(f"{target.name}.building")
        shutil.rmtree(building, ignore_errors=True)
        make(building)
        (building / TEMPLATE_READY).write_text("migrated\n", encoding="utf-8")
        building.rename(target)
    return target


def build_template(root: Path) -> Path:
    """The migrated template data dir for this Label Studio version under ``root`` (built once, locked)."""
    from posthoc.labelstudio.environment import label_studio_version
    from posthoc.labelstudio.server import LabelStudioServer

    def make(building: Path) -> None:
        server = LabelStudioServer(building)
        server.start(timeout=400)
        server.stop()

    return _build_once(root / f"posthoc-ls-template-{label_studio_version()}", make)


def copy_template(template: Path, target: Path) -> Path:
    """A fresh data dir at ``target`` copied from ``template`` (without its log and state files)."""
    shutil.copytree(template, target, ignore=shutil.ignore_patterns("labelstudio.log", "server.json",
                                                                    TEMPLATE_READY),
                    dirs_exist_ok=True)
    return target


@pytest.fixture(scope="session")
def ls_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The migrated template data dir (kept across runs, keyed by the Label Studio version)."""
    _require_label_studio()
    return build_template(tmp_path_factory.getbasetemp().parent / "posthoc-ls")


@contextlib.contextmanager
def private_label_studio(template: Path, target: Path) -> Iterator[Any]:
    """A started Label Studio of one module only (tests may kill, restart or reconfigure it), on a copy of
    ``template`` at ``target``; stopped on exit. It is started with the environment of the moment."""
    from posthoc.labelstudio.server import LabelStudioServer

    server = LabelStudioServer(copy_template(template, target))
    server.start()
    try:
        yield server
    finally:
        server.stop()


#: ``POSTHOC_TEST_DATABASE=postgresql`` runs the ``ls_server`` tests on PostgreSQL (``scripts/test.sh`` does both)
TEST_DATABASE = os.environ.get("POSTHOC_TEST_DATABASE", "sqlite")
#: what a copy of a data dir leaves out: the running server's and cluster's logs and state (``server_log.py``,
#: ``database.py``: ``postgres.log``; ``postmaster.pid`` is absent from a cluster stopped cleanly)
_NOT_COPIED = ("labelstudio.log", "server.json", "gunicorn.log", "postgres.log", "postmaster.pid", TEMPLATE_READY)


def postgresql_data_dir() -> Path:
    """A fresh folder for a data dir with a local PostgreSQL cluster: under /tmp, searchable by the unprivileged
    user PostgreSQL runs as when the tests run as root (pytest's own temp root is 0700)."""
    folder = Path(tempfile.mkdtemp(prefix="posthoc-pg-", dir="/tmp"))
    folder.chmod(0o711)
    return folder


def postgresql_label_studio(template: Path) -> tuple[Any, Path]:
    """A Label Studio (not started) on a local PostgreSQL cluster in a fresh folder under /tmp; returns
    ``(server, folder)`` (remove the folder after). ``template`` is the SQLite template (``ls_template``: the data
    dir is copied without the SQLite database, and the first start runs ``initdb`` and Label Studio's migrations,
    ~45 s) or the PostgreSQL one (``ls_pg_template``: the migrated cluster is copied too, and starts in seconds)."""
    from posthoc.labelstudio.database import CLUSTER_DIR, DatabaseSettings
    from posthoc.labelstudio.server import LabelStudioServer

    folder = postgresql_data_dir()
    data_dir = folder / "labelstudio"
    if (template / CLUSTER_DIR / "PG_VERSION").is_file():
        copy_postgresql_template(template, data_dir)
    else:
        shutil.copytree(template, data_dir, ignore=shutil.ignore_patterns(*_NOT_COPIED, "label_studio.sqlite3*"))
    return LabelStudioServer(data_dir, database=DatabaseSettings("postgresql", local_cluster=True)), folder


def copy_postgresql_template(template: Path, data_dir: Path, *, cluster: bool = True) -> Path:
    """A data dir at ``data_dir`` copied from the PostgreSQL template (:func:`build_postgresql_template`): its
    ``.env``, admin credentials and, with ``cluster``, its migrated cluster and ``database.json``. The cluster's
    files go to the user PostgreSQL runs as (``LocalCluster.owner``: it refuses a data folder it does not own)
    and the stored port is cleared, so that the copy listens on a free port of its own (``LabelStudioServer.start``
    takes a free one when none is stored; the Unix socket lives in the copy's own cluster folder, ``database.py``).
    ``data_dir``'s parents must be searchable by that user (:func:`postgresql_data_dir`)."""
    import dataclasses

    from posthoc.labelstudio.database import CLUSTER_DIR, DATABASE_FILE, LocalCluster, read_database, write_database

    skipped = _NOT_COPIED if cluster else (*_NOT_COPIED, CLUSTER_DIR, DATABASE_FILE)
    shutil.copytree(template, data_dir, ignore=shutil.ignore_patterns(*skipped), symlinks=True)
    if not cluster:
        return data_dir
    write_database(data_dir, dataclasses.replace(read_database(data_dir), port=0))
    owner = LocalCluster(data_dir).owner
    if owner is not None:
        for folder, _, files in os.walk(data_dir / CLUSTER_DIR):
            for path in [folder, *(os.path.join(folder, name) for name in files)]:
                os.lchown(path, owner.pw_uid, owner.pw_gid)
    return data_dir


def build_postgresql_template(root: Path, template: Path) -> Path:
    """The PostgreSQL template under ``root``: the SQLite ``template``'s data dir on a local cluster that Label
    Studio has migrated (its admin made), then stopped cleanly (fast shutdown: a checkpoint, no ``postmaster.pid``
    left), so that a copy starts without recovery. Built once per Label Studio and PostgreSQL version (locked,
    kept across runs, as :func:`build_template`); a test about the first migration itself starts from
    ``ls_template`` instead (``tests/labelstudio/test_postgresql.py``)."""
    from posthoc.labelstudio.database import CLUSTER_DIR
    from posthoc.labelstudio.environment import label_studio_version

    def make(building: Path) -> None:
        server, folder = postgresql_label_studio(template)
        try:
            server.start(timeout=400)
            server.stop()
            if (server.data_dir / CLUSTER_DIR / "postmaster.pid").exists():
                pytest.fail(f"the PostgreSQL template's cluster did not shut down cleanly: {server.data_dir}",
                            pytrace=False)
            shutil.move(server.data_dir, building)
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    return _build_once(root / f"posthoc-ls-pg-template-{label_studio_version()}-pg{_postgres_version()}", make)


def _postgres_version() -> str:
    """The installed PostgreSQL server's version (``postgres --version``), as part of the template's name."""
    import re
    import subprocess

    from posthoc.labelstudio.database import postgres_bin_dir

    done = subprocess.run([str(postgres_bin_dir() / "postgres"), "--version"], capture_output=True, text=True,
                          timeout=60, check=True)
    found = re.search(r"\d+(?:\.\d+)*", done.stdout)
    return found.group(0) if found else "unknown"


@pytest.fixture(scope="session")
def ls_pg_template(ls_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The migrated PostgreSQL template data dir (:func:`build_postgresql_template`; skips without PostgreSQL):
    copy it with :func:`postgresql_label_studio` or :func:`copy_postgresql_template` instead of migrating."""
    require_postgresql()
    return build_postgresql_template(tmp_path_factory.getbasetemp().parent / "posthoc-ls", ls_template)


@pytest.fixture(scope="session")
def ls_server(ls_template: Path, tmp_path_factory: pytest.TempPathFactory,
              request: pytest.FixtureRequest) -> Iterator[Any]:
    """A running Label Studio for the whole test session: on a copy of the SQLite template, or with
    ``POSTHOC_TEST_DATABASE=postgresql`` on a copy of the PostgreSQL template (``ls_pg_template``)."""
    from posthoc.labelstudio.server import LabelStudioServer

    if TEST_DATABASE == "postgresql":
        from posthoc.labelstudio.database import postgres_bin_dir

        try:
            postgres_bin_dir()
        except Exception as exc:
            pytest.fail(f"POSTHOC_TEST_DATABASE=postgresql but {exc}")
        server, folder = postgresql_label_studio(request.getfixturevalue("ls_pg_template"))
    elif TEST_DATABASE == "sqlite":
        folder = None
        server = LabelStudioServer(copy_template(ls_template, tmp_path_factory.mktemp("labelstudio")))
    else:
        pytest.fail(f"POSTHOC_TEST_DATABASE={TEST_DATABASE!r}: use sqlite or postgresql")
    server.start(timeout=400)
    try:
        yield server
    finally:
        server.stop()
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)


@contextlib.contextmanager
def make_project(server: Any, label_config: str, *, title: str | None = None, **settings: Any) -> Iterator[Any]:
    """A throwaway project (SDK object) on ``server``; deleted on exit."""
    client = server.client()
    project = client.projects.create(title=title or f"test project {next(_counter)}", label_config=label_config,
                                     **settings)
    try:
        yield project
    finally:
        with contextlib.suppress(Exception):
            client.projects.delete(id=project.id)


@pytest.fixture
def ls_project(ls_server: Any) -> Iterator[Callable[..., Any]]:
    """Factory ``ls_project(label_config, title=None, **settings)`` -> project; deleted after the test."""
    with contextlib.ExitStack() as stack:
        def create(label_config: str, *, title: str | None = None, **settings: Any) -> Any:
            return stack.enter_context(make_project(ls_server, label_config, title=title, **settings))

        yield create


def make_annotator(server: Any, email: str | None = None, *, password: str | None = None) -> Any:
    """An annotator account on ``server`` (created or logged into) with its own API token."""
    import secrets

    from posthoc.labelstudio.users import ensure_user

    email = email or f"annotator-{secrets.token_hex(4)}@posthoc.local"
    password = password or f"pw-{secrets.token_urlsafe(12)}"

    def reset(login: str, new_password: str) -> None:
        server.run_command(["reset_password", "--username", login, "--password", new_password])

    return ensure_user(server.url, server.token, email=email, password=password, reset_password=reset)


@pytest.fixture
def ls_annotator(ls_server: Any) -> Callable[..., Any]:
    """Factory ``ls_annotator(email=None, password=None)`` -> :class:`posthoc.labelstudio.users.Account`."""

    def create(email: str | None = None, *, password: str | None = None) -> Any:
        return make_annotator(ls_server, email, password=password)

    return create


@contextlib.contextmanager
def run_backend(manifest_path: Path, *, secret: str | None = None, events_db: Path | None = None) -> Iterator[str]:
    """The ML backend (``posthoc_backend.app.create_app``) for ``manifest_path`` on a free loopback port, in a
    thread; yields its URL."""
    import logging
    import threading

    from werkzeug.serving import make_server

    from posthoc_backend.app import create_app

    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # one access line per request is noise here
    app = create_app(manifest_path, secret=secret, events_db=events_db)
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, name="posthoc-backend", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join(timeout=10)


def small_sample_manifest(path: Path, *, name: str, n_documents: int = 5, n_workers: int = 4,
                          tasks_per_batch: int = 5, seed: int = 20260101, control_tasks: bool = True) -> Any:
    """A manifest over the first ``n_documents`` documents of the bundled sample corpus (real planner)."""
    import dataclasses

    from posthoc.study import plan_study, read_study_inputs, sample_study_config
    from posthoc.study.plan.manifest import Manifest

    config = dataclasses.replace(sample_study_config(name=name, seed=seed, n_workers=n_workers),
                                 tasks_per_batch=tasks_per_batch, control_tasks=control_tasks)
    documents, mentions = read_study_inputs(config)
    keep = documents.head(n_documents)[["dataset", "doc_id"]]
    documents = documents.merge(keep, on=["dataset", "doc_id"])
    mentions = mentions.merge(keep, on=["dataset", "doc_id"])
    return Manifest.create(path, plan_study(documents, mentions, config))


CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's chromium driven by Playwright (loopback only; the flags keep it off the network)."""
    if not CHROMIUM.is_file():
        pytest.skip("Debian chromium (/usr/bin/chromium) is not installed - browser tests skipped")
    sync_api = pytest.importorskip("playwright.sync_api", reason="python playwright is not installed")
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield launched
        launched.close()


def require_postgresql() -> None:
    """Skip the calling test when Debian's PostgreSQL server binaries are not installed (an optional resource;
    ``scripts/test.sh`` installs them)."""
    from posthoc.errors import PosthocServiceError
    from posthoc.labelstudio.database import postgres_bin_dir

    try:
        postgres_bin_dir()
    except PosthocServiceError as exc:
        pytest.skip(f"PostgreSQL is not installed (apt-get install postgresql): {exc}")


def process_alive(pid: int) -> bool:
    """Whether ``pid`` runs and is not a zombie (``/proc``)."""
    try:
        return "\nState:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
