"""Label Studio served for production: its WSGI app under gunicorn with N worker processes, on PostgreSQL.

``label-studio start`` (:class:`~posthoc.labelstudio.server.LabelStudioServer`) is Django's ``runserver`` in
one process: the embedded default, on SQLite. :class:`AppServer` serves the same data directory the way Label
Studio's own Docker image does (there: uWSGI behind nginx): the WSGI app the wheel ships,
``label_studio.core.wsgi:application``, under gunicorn (a dependency of this project) with ``workers`` processes
on loopback. It is a :class:`LabelStudioServer` (its environment, credentials, database and stop are inherited,
not copied) whose process is gunicorn. Before gunicorn starts, one ``label-studio start`` on the data dir
migrates the database, makes the admin and starts the data dir's local PostgreSQL cluster; that process is then
stopped and the cluster kept.

Facts of Label Studio 1.23 this relies on (its ``core/settings/base.py`` and ``core/urls.py``):

* **Static files** are served by the app itself: ``urls.py`` routes ``/static/``, ``/react-app/``,
  ``/label-studio-frontend/`` and ``/dm/`` to its ``core.utils.static_serve.serve`` view over folders the wheel
  ships built (``STATIC_ROOT`` is ``label_studio/core/static_build``), whatever ``DEBUG`` says; whitenoise is
  not in its ``MIDDLEWARE``, and no ``collectstatic`` is needed. A front nginx may serve ``STATIC_ROOT`` itself
  (:func:`static_root`) to spare the workers (``bench/load_bench.py`` does, and checks a bundle loads).
* **No Redis**: the open-source settings hard-code ``REDIS_ENABLED = False`` ("OSS version does not support
  Redis"), so ``core.redis.start_job_async_or_sync`` runs every job (imports, exports, stats) synchronously in
  the request whatever Redis runs; ``django_rq`` is installed but never queued to. Nothing to start.
* **SQLite** takes one writer at a time for the whole database; several processes writing it answer 500
  ("database is locked") under load, so N > 1 on SQLite is refused here; SQLite stays the one-process default.
  Even one process meets the lock under load, and Label Studio's ``DatabaseIsLockedRetryMiddleware`` (SQLite
  only) then replays the whole request: ``bench/load_bench.py`` found Submits stored twice (docs/deployment.md).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from pathlib import Path

from posthoc.errors import PosthocInputError, PosthocServiceError
from posthoc.labelstudio.credentials import Credentials
from posthoc.labelstudio.database import DatabaseSettings, choose_database
from posthoc.labelstudio.environment import label_studio_version
from posthoc.labelstudio.ports import LOOPBACK
from posthoc.labelstudio.server import START_TIMEOUT, LabelStudioServer, stop_process_group
from posthoc.processes import die_with_parent, pid_alive

#: Label Studio's own settings with persistent database connections (:mod:`posthoc.labelstudio.deployment_settings`)
SETTINGS_MODULE = "posthoc.labelstudio.deployment_settings"
WSGI_APP = "label_studio.core.wsgi:application"
APP_LOG = "gunicorn.log"
#: gunicorn's default is 30 s; an export of a large project runs inside the request (no Redis, above)
REQUEST_TIMEOUT = 300
#: gunicorn's access-log fields: the worker's pid, the method and path (no query string: the sign-up link's holds the
#: organisation's invite token), the status, the time taken in microseconds
ACCESS_FORMAT = '%(p)s "%(m)s %(U)s" %(s)s %(D)s'


def label_studio_root() -> Path:
    """The installed ``label_studio`` package folder (its modules import each other as top-level ``core``...); exit 2
    with how to install it on the lean install (:func:`~posthoc.labelstudio.environment.label_studio_version`)."""
    label_studio_version("Label Studio under gunicorn")
    import label_studio

    return Path(label_studio.__file__).resolve().parent


def static_root() -> Path:
    """Label Studio's ``STATIC_ROOT``: ``core/static_build`` in the wheel, served under ``/static/``."""
    return label_studio_root() / "core" / "static_build"


def child_pids(pid: int) -> list[int]:
    """The live (not zombie) children of ``pid``, from ``/proc``: a gunicorn master's workers."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError):
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                if fields[1] == str(pid) and fields[0] != "Z":
                    found.append(int(entry.name))
    return sorted(found)


def check_workers(workers: int, *, engine: str) -> None:
    """PosthocInputError unless ``workers`` gunicorn processes may serve a database of ``engine``: at least one,
    and only one on SQLite (one writer at a time: the module docstring)."""
    if workers < 1:
        raise PosthocInputError(f"{workers} workers: give at least one")
    if engine == "sqlite" and workers > 1:
        raise PosthocInputError(
            f"{workers} workers on SQLite: SQLite takes one writer at a time, so several Label Studio processes "
            "answer 'database is locked' under load; serve one process (`posthoc ls start`) or use PostgreSQL "
            "(`--database postgresql` or POSTHOC_LS_DATABASE_URL)")


class AppServer(LabelStudioServer):
    """Label Studio's WSGI app under gunicorn with ``workers`` processes on loopback (module docstring).

    A :class:`LabelStudioServer` (its ``url``, ``token``, ``username``, ``password``, ``data_dir``, ``database``,
    ``client()``, ``run_command()``, ``stop()`` and context manager) whose process is gunicorn instead of
    runserver. ``database``: as for :class:`LabelStudioServer` (default: the data dir's stored database, else
    SQLite); ``threads``: gunicorn threads a worker (1: its sync worker); ``access_log``: one line a request in
    :attr:`app_log`, ``<PID> "REQUEST" STATUS MICROSECONDS`` (off by default: it costs a write a request).
    SQLite with more than one worker is refused (PosthocInputError), before anything is made.
    """

    def __init__(self, data_dir: str | os.PathLike[str], *, workers: int = 2, threads: int = 1,
                 port: int | None = None, database: DatabaseSettings | None = None,
                 credentials: Credentials | None = None, request_timeout: int = REQUEST_TIMEOUT,
                 access_log: bool = False) -> None:
        if threads < 1:
            raise PosthocInputError(f"threads {threads}: give at least one")
        chosen = choose_database(Path(data_dir).resolve(), database)
        check_workers(workers, engine=chosen.engine)
        super().__init__(data_dir, port=port, database=chosen, credentials=credentials)
        self.workers = workers
        self.threads = threads
        self.request_timeout = request_timeout
        self.access_log = access_log

    @property
    def app_log(self) -> Path:
        """gunicorn's log (``log_path`` keeps the preparing ``label-studio start``'s)."""
        return self.data_dir / APP_LOG

    def environment(self) -> dict[str, str]:
        """:meth:`LabelStudioServer.environment` plus the Django settings module the WSGI app needs."""
        return {**super().environment(), "DJANGO_SETTINGS_MODULE": SETTINGS_MODULE}

    def command(self, port: int) -> list[str]:
        """The gunicorn command line (its ``--pythonpath`` lets Label Studio import its modules as ``core``...)."""
        return [sys.executable, "-m", "gunicorn", "--workers", str(self.workers), "--threads", str(self.threads),
                "--bind", f"{LOOPBACK}:{port}", "--pythonpath", str(label_studio_root()),
                "--timeout", str(self.request_timeout), "--graceful-timeout", "10", "--worker-tmp-dir", "/dev/shm",  # noqa: S108
                "--error-logfile", "-",
                *(["--access-logfile", "-", "--access-logformat", ACCESS_FORMAT] if self.access_log else []),
                WSGI_APP]

    def start(self, *, timeout: float = START_TIMEOUT, detach: bool = False) -> AppServer:
        """Prepare the data dir with :meth:`LabelStudioServer.start` (migrations, the admin, the local cluster),
        stop its runserver, start gunicorn on the same port and wait until the admin's token answers and every
        worker has booted. ``detach`` is refused: an app server lives as long as the process that started it."""
        if detach:
            raise PosthocInputError("an app server runs for the length of the command that starts it (no detach)")
        if self.process is not None:
            return self
        try:
            super().start(timeout=timeout)
            assert self.process is not None and self.port is not None
            stop_process_group(self.process.pid)  # keep the cluster, not runserver
            self.process.wait(timeout=5)
            if self._log is not None:
                self._log.close()
            self._log = open(self.app_log, "ab")  # noqa: SIM115 - closed in stop()
            self.process = subprocess.Popen(self.command(self.port), env=self.environment(), stdout=self._log,
                                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                            start_new_session=True, cwd=self.data_dir,
                                            preexec_fn=die_with_parent())
            self._wait_workers(timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def replica(self, data_dir: str | os.PathLike[str], *, workers: int = 2, threads: int = 1) -> AppServer:
        """Another app server (not started) on this one's database, admin and ``SECRET_KEY``, in its own data dir:
        two of them behind one proxy serve the same study. Call after :meth:`start` (a local cluster's port is
        known then; this server keeps running it). Label Studio 1.23 keeps sessions in signed cookies
        (``SESSION_ENGINE = signed_cookies``) and reads ``SECRET_KEY`` from the environment or ``<data dir>/.env``
        (``core/utils/secret_key.py``), so the replica gets this data dir's ``.env`` (0600): without it a
        session made by one server is refused by the other (measured: 1,397 of 1,398 next-task requests answered
        401 behind a round-robin nginx). Its ``media`` folder is this one's (a symlink): an export is written to
        the media folder of the server that made it and downloaded by a later request, which the proxy may send to
        the other (measured: 500 "No such file or directory"); across machines that folder is shared storage."""
        import dataclasses
        import shutil

        if self.database.engine == "sqlite":
            raise PosthocInputError("a replica shares the database: SQLite is one process's (use PostgreSQL)")
        if self.process is None:
            raise PosthocServiceError("start the app server before making its replica")
        target = Path(data_dir).resolve()
        target.mkdir(parents=True, exist_ok=True)
        if (self.data_dir / ".env").is_file():
            shutil.copy2(self.data_dir / ".env", target / ".env")
            (target / ".env").chmod(0o600)
        media = target / "media"
        if not media.exists():
            (self.data_dir / "media").mkdir(exist_ok=True)
            media.symlink_to(self.data_dir / "media", target_is_directory=True)
        shared = dataclasses.replace(self.database, local_cluster=False)
        return AppServer(target, workers=workers, threads=threads, database=shared, credentials=self.credentials,
                         request_timeout=self.request_timeout, access_log=self.access_log)

    def _wait_workers(self, timeout: float) -> None:
        assert self.process is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                tail = self.app_log.read_bytes()[-3000:].decode("utf-8", "replace")
                raise PosthocServiceError(f"gunicorn exited with code {self.process.returncode}; log "
                                          f"{self.app_log}:\n{tail}")
            if len(self.worker_pids()) >= self.workers and self._answers():
                return
            time.sleep(0.5)
        raise PosthocServiceError(f"Label Studio under gunicorn did not answer on {self.url} within {timeout:.0f} s; "
                                  f"log {self.app_log}")

    def worker_pids(self) -> list[int]:
        """The gunicorn workers' pids (the master's children, from ``/proc``); empty when not running."""
        return child_pids(self.process.pid) if self.process is not None else []

    def alive(self) -> bool:
        """Whether the gunicorn master still runs."""
        return self.process is not None and pid_alive(self.process.pid)

    def __enter__(self) -> AppServer:
        return self.start()
