"""A local, unmodified open-source Label Studio: start, stop, status (the demo's embedded default).

Label Studio runs as ``label-studio start --no-browser --internal-host 127.0.0.1 --port PORT`` on its
database in a data directory (:mod:`~posthoc.labelstudio.database`), as the admin of
:mod:`~posthoc.labelstudio.credentials`, with the environment of :mod:`~posthoc.labelstudio.environment`
(loopback only, off the network). A detached server's pid, port and URL are in its state file
(:mod:`~posthoc.labelstudio.server_log`).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING

from posthoc.atomic import write_text_atomic
from posthoc.errors import PosthocInputError, PosthocServiceError
from posthoc.labelstudio.credentials import Credentials, read_credentials, resolve_credentials
from posthoc.labelstudio.database import (
    DATA_DIR_MODE_SHARED,
    LOCAL_DB_NAME,
    DatabaseSettings,
    LocalCluster,
    choose_database,
    read_database,
    settings_from_environment,
    write_database,
)
from posthoc.labelstudio.environment import label_studio_executable, run_label_studio_command, server_environment
from posthoc.labelstudio.ports import LOOPBACK, free_port, port_is_free
from posthoc.labelstudio.server_log import LOG_FILE, STATE_FILE, read_state, remember_log
from posthoc.processes import die_with_parent, pid_alive

if TYPE_CHECKING:
    from posthoc.labelstudio.client import LabelStudio

#: Seconds a start waits for Label Studio to answer. The first start migrates the database: ~30 s on a quiet
#: 2-core machine, 2 min 34 s to 3 min 23 s measured at load 4-10 (issue 29); later starts 5-8 s.
START_TIMEOUT = 600.0


class LabelStudioServer:
    """One ``label-studio start`` process on loopback, owning a data directory.

    Use as a context manager or call :meth:`start` / :meth:`stop`. ``url``, ``token``,
    ``username`` and ``password`` describe the running server; :meth:`client` returns an SDK client.
    """

    def __init__(self, data_dir: str | os.PathLike[str], *, port: int | None = None,
                 credentials: Credentials | None = None, allow_local_ml: bool = True,
                 database: DatabaseSettings | None = None) -> None:
        self.data_dir = Path(data_dir).resolve()
        self.database = choose_database(self.data_dir, database)
        self.cluster: LocalCluster | None = None
        self.requested_port = port
        self.port: int | None = None
        self.allow_local_ml = allow_local_ml
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.credentials = credentials or resolve_credentials(self.data_dir)
        self.process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    # -- attributes used by callers -------------------------------------------------------------
    @property
    def url(self) -> str:
        if self.port is None:
            raise PosthocServiceError("Label Studio is not started")
        return f"http://{LOOPBACK}:{self.port}"

    @property
    def token(self) -> str:
        return self.credentials.token

    @property
    def username(self) -> str:
        return self.credentials.username

    @property
    def password(self) -> str:
        return self.credentials.password

    @property
    def log_path(self) -> Path:
        return self.data_dir / LOG_FILE

    def environment(self) -> dict[str, str]:
        """The environment of the server process (and of management commands on its data dir)."""
        return server_environment(self.data_dir, self.credentials, allow_local_ml=self.allow_local_ml,
                                  database=self.database)

    def client(self) -> LabelStudio:
        """The SDK's ``LabelStudio`` client for the admin (built by :mod:`posthoc.labelstudio.client`)."""
        from posthoc.labelstudio.client import LabelStudioClient

        return LabelStudioClient(self.url, self.token).sdk

    def run_command(self, args: list[str], *, timeout: float = 180) -> str:
        """Run a ``label-studio`` management command on this server's data dir (see the module function)."""
        return run_label_studio_command(self.data_dir, self.credentials, args, timeout=timeout)

    # -- lifecycle -----------------------------------------------------------------------------
    def start(self, *, timeout: float = START_TIMEOUT, detach: bool = False) -> LabelStudioServer:
        """Start the server and wait until it answers on the port asked for, as this admin.

        ``detach`` leaves it running after this Python exits (``posthoc ls start``). Raises
        PosthocServiceError when the port is taken, the process dies, or it does not answer in time.
        """
        if self.process is not None:
            return self
        port = self.requested_port or free_port()
        if not port_is_free(port):
            raise PosthocServiceError(f"port {port} on {LOOPBACK} is in use; choose another with --port")
        self.port = port
        remember_log(self.url, self.log_path)  # a 500 of SQLite's lock is then named as such (server_log)
        if self.database.local_cluster:
            self.cluster = LocalCluster(self.data_dir, settings=self.database)
            stored_port = self.database.port
            cluster_port = stored_port if stored_port and port_is_free(stored_port) else free_port()
            self.database = self.cluster.start(port=cluster_port, detach=detach)
        if self.database.engine != "sqlite":
            write_database(self.data_dir, self.database)
        self._log = open(self.log_path, "ab")  # noqa: SIM115 - closed in stop()
        # the database holds every user's API token, the log the organisation's invite link: the owner's alone,
        # also when the folder was made (or copied) under another umask (issue 47); a local PostgreSQL cluster run
        # by another account keeps it enterable (not listable) for that account
        shared = self.cluster is not None and self.cluster.owner is not None
        self.data_dir.chmod(DATA_DIR_MODE_SHARED if shared else 0o700)
        self.log_path.chmod(0o600)
        command = [label_studio_executable("a local Label Studio"), "start", "--no-browser", "--internal-host",
                   LOOPBACK, "--port", str(port)]
        # a server of this command only (not detached) dies with it, also when this process is SIGKILL-ed
        self.process = subprocess.Popen(command, env=self.environment(), stdout=self._log,
                                        stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                        start_new_session=True, cwd=self.data_dir,
                                        preexec_fn=None if detach else die_with_parent())
        try:
            self._wait_ready(timeout)
            self._ensure_admin_password()
        except BaseException:
            self.stop()
            raise
        if detach:
            write_text_atomic(self.data_dir / STATE_FILE,
                              json.dumps({"pid": self.process.pid, "port": port, "url": self.url}) + "\n")
        return self

    def _log_tail(self, size: int = 3000) -> str:
        try:
            return self.log_path.read_bytes()[-size:].decode("utf-8", "replace")
        except OSError:
            return ""

    def _wait_ready(self, timeout: float) -> None:
        assert self.process is not None
        deadline = time.monotonic() + timeout
        offset = self.log_path.stat().st_size if self.log_path.exists() else 0
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise PosthocServiceError(
                    f"label-studio exited with code {self.process.returncode}; log {self.log_path}:\n"
                    f"{self._log_tail()}")
            log = self.log_path.read_bytes()[offset:].decode("utf-8", "replace") if self.log_path.exists() else ""
            if "is in use" in log and "Trying to start at" in log:
                raise PosthocServiceError(f"port {self.port} was taken while Label Studio started "
                                          "(it moved to another port); start it again on a free port")
            if self._answers():
                return
            time.sleep(0.5)
        raise PosthocServiceError(f"Label Studio did not answer on {self.url} within {timeout:.0f} s (a first start "
                                  "migrates its database: ~30 s on a quiet machine, 2.5-3.5 min measured on a busy "
                                  "one); it was stopped: start it again with a longer --timeout SECONDS; "
                                  f"log {self.log_path}:\n{self._log_tail()}")

    def _ensure_admin_password(self) -> None:
        """Make the admin's password the resolved one (Label Studio keeps an existing user's old password)."""
        from posthoc.labelstudio.users import login

        if login(self.url, self.username, self.password) is not None:
            return
        self.run_command(["reset_password", "--username", self.username, "--password", self.password])
        if login(self.url, self.username, self.password) is None:
            raise PosthocServiceError(f"Label Studio on {self.url} refuses the admin password even after a reset")

    def _answers(self) -> bool:
        """Whether our server answers on the port, with our admin's token."""
        from posthoc.labelstudio.client import LabelStudioClient

        try:
            response = LabelStudioClient(self.url, self.token, timeout=5).send("GET", "/api/current-user/whoami",
                                                                             retry=False)
        except PosthocServiceError:
            return False
        if response.status_code == 401:
            raise PosthocServiceError(
                f"Label Studio on {self.url} refused the admin token: the data dir {self.data_dir} was created "
                "with another admin or without LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN; use a fresh --data-dir")
        return response.status_code == 200 and response.json().get("email") == self.username

    def stop(self, *, timeout: float = 20) -> None:
        """Stop the server's whole process group (SIGTERM, then SIGKILL after ``timeout``)."""
        if self.process is not None:
            stop_process_group(self.process.pid, timeout=timeout)
            with contextlib.suppress(Exception):
                self.process.wait(timeout=1)
            self.process = None
        if self._log is not None:
            self._log.close()
            self._log = None
        if self.cluster is not None:
            self.cluster.stop()
            self.cluster = None
        with contextlib.suppress(FileNotFoundError):
            state = read_state(self.data_dir)
            if state is None or not pid_alive(int(state["pid"])):
                (self.data_dir / STATE_FILE).unlink()

    def __enter__(self) -> LabelStudioServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def stop_process_group(pid: int, *, timeout: float = 20) -> None:
    """SIGTERM the process group led by ``pid``; SIGKILL it if it is still there after ``timeout``."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + (timeout if sig == signal.SIGTERM else 5)
        while time.monotonic() < deadline:
            if not pid_alive(pid):
                return
            time.sleep(0.2)


@dataclass(frozen=True)
class ServerStatus:
    """What ``posthoc ls status`` reports about a data directory."""

    data_dir: Path
    running: bool
    pid: int | None
    url: str | None
    answering: bool
    username: str | None
    gateway_url: str | None = None
    gateway_answering: bool = False


def server_status(data_dir: str | os.PathLike[str]) -> ServerStatus:
    """Status of the detached server of ``data_dir`` (from its state file and a request to it)."""
    root = Path(data_dir).resolve()
    state = read_state(root)
    credentials = read_credentials(root)
    username = credentials.username if credentials else None
    if state is None or not pid_alive(int(state.get("pid", 0)) or -1):
        return ServerStatus(root, False, None, None, False, username)
    url = str(state["url"])
    from posthoc.http import answers_ok

    answering = answers_ok(f"{url}/health", timeout=5)
    gateway = state.get("gateway_url")
    gateway_url = gateway if isinstance(gateway, str) else None
    # the gateway's login page answers 200 without a session (the rules let everyone log in)
    gateway_answering = gateway_url is not None and answers_ok(f"{gateway_url}/user/login/", timeout=5)
    return ServerStatus(root, True, int(state["pid"]), url, answering, username, gateway_url, gateway_answering)


KEEPER_MODULE = "posthoc.jobs.server_keeper"
#: the gateway's kept folder in the data dir (nginx's prefix, the authoriser's log) and the keeper's own log
GATEWAY_FOLDER = "gateway"
KEEPER_LOG = "keeper.log"


def database_choice(name: str | None) -> DatabaseSettings | None:
    """``--database`` as settings: ``None`` (what the data dir uses), SQLite, or PostgreSQL from the environment
    (a DSN or Label Studio's ``POSTGRE_*``), else a local cluster in the data dir."""
    if name == "sqlite":
        return DatabaseSettings()
    if name == "postgresql":
        return settings_from_environment() or DatabaseSettings(
            "postgresql", host=LOOPBACK, name=LOCAL_DB_NAME, local_cluster=True)
    return None


def spawn_keeper(data_dir: Path, *, port: int | None, timeout: float, database: str | None,
                 gateway_manifest: Path | None, gateway_port: int | None,
                 workers: int | None = None) -> dict[str, object]:
    """Start the keeper (:mod:`posthoc.jobs.server_keeper`) for ``data_dir`` and wait until its servers
    answer; returns the state it wrote.

    Raises the keeper's own PosthocInputError / PosthocServiceError (one line) when it could not start them; it
    has then stopped everything it started."""
    data_dir.mkdir(parents=True, exist_ok=True)
    settings = {"data_dir": str(data_dir.resolve()), "port": port, "timeout": timeout, "database": database,
                "gateway_manifest": str(gateway_manifest.resolve()) if gateway_manifest else None,
                "gateway_port": gateway_port, "workers": workers}
    with open(data_dir / KEEPER_LOG, "ab") as log:
        keeper = subprocess.Popen([sys.executable, "-m", KEEPER_MODULE, json.dumps(settings)],
                                  stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=log,
                                  start_new_session=True, preexec_fn=die_with_parent())
    assert keeper.stdout is not None
    line = keeper.stdout.readline()
    keeper.stdout.close()
    try:
        answer = json.loads(line) if line else {}
    except ValueError:
        answer = {}
    if not isinstance(answer, dict) or "error" in answer or "url" not in answer:
        keeper.wait(timeout=60)
        message = answer.get("error") if isinstance(answer, dict) else None
        tail = (data_dir / KEEPER_LOG).read_bytes()[-1500:].decode("utf-8", "replace")
        error = PosthocInputError if isinstance(answer, dict) and answer.get("kind") == "input" else PosthocServiceError
        raise error(str(message or f"the Label Studio keeper exited (code {keeper.returncode}); "
                                   f"{data_dir / KEEPER_LOG}:\n{tail}"))
    return answer


def start_detached(data_dir: str | os.PathLike[str], *, port: int | None = None, timeout: float = START_TIMEOUT,
                   database: str | None = None, gateway_manifest: Path | None = None,
                   gateway_port: int | None = None,
                   workers: int | None = None) -> tuple[LabelStudioServer, dict[str, object]]:
    """Start a server that outlives this process (``posthoc ls start``) under its keeper
    (:mod:`~posthoc.jobs.server_keeper`), with the study gateway of ``gateway_manifest`` beside it when
    given, and under gunicorn with ``workers`` processes when given (:mod:`~posthoc.labelstudio.app_server`);
    refuses a second one per data dir. Returns the server (not owned: :meth:`LabelStudioServer.stop` is
    not for it) and the state the keeper wrote (``gateway_url`` among it)."""
    status = server_status(data_dir)
    if status.running:
        raise PosthocInputError(f"{status.data_dir}: Label Studio already runs there (pid {status.pid}, "
                                f"{status.url}); stop it with `posthoc ls stop`")
    state = spawn_keeper(Path(data_dir), port=port, timeout=timeout, database=database,
                         gateway_manifest=gateway_manifest, gateway_port=gateway_port, workers=workers)
    server = LabelStudioServer(data_dir, port=port)
    port_found = state.get("port")
    server.port = port_found if isinstance(port_found, int) else None
    return server, state


def is_label_studio_process(pid: int) -> bool:
    """Whether ``pid`` still runs Label Studio (a stale ``server.json`` may name a pid reused by another
    program, whose process group must not be stopped). Without ``/proc`` the pid is trusted."""
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").lower()
    except FileNotFoundError:
        return not Path("/proc/self/cmdline").exists()
    except OSError:
        return True
    return b"label-studio" in command or b"label_studio" in command or KEEPER_MODULE.encode() in command


def stop_detached(data_dir: str | os.PathLike[str], *, timeout: float = 20) -> bool:
    """Stop the detached server of ``data_dir``; returns whether one was running."""
    root = Path(data_dir).resolve()
    state = read_state(root)
    running = state is not None and pid_alive(int(state.get("pid", 0)) or -1) \
        and is_label_studio_process(int(state["pid"]))
    if state is not None and running:
        stop_process_group(int(state["pid"]), timeout=timeout)
    database = read_database(root)
    if database.local_cluster:
        LocalCluster(root, settings=database).stop()
    with contextlib.suppress(FileNotFoundError):
        (root / STATE_FILE).unlink()
    return running
