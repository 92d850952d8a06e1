"""A local, unmodified open-source Label Studio: start, stop, status (the demo's embedded default).

Label Studio runs as ``label-studio start --no-browser --internal-host 127.0.0.1 --port PORT`` on its
embedded SQLite database in a data directory, on loopback only, with the settings that keep it
off the network (no version check, no analytics, no Sentry). Facts behind each setting are in
``../shared/docs/label-studio-1.23.md``.

Environment variables (read by :func:`resolve_credentials`):

``POSTHOC_LS_USERNAME``
    the admin's login (an e-mail address); default ``admin@posthoc.local``.
``POSTHOC_LS_PASSWORD``
    the admin's password; generated when unset.
``POSTHOC_LS_TOKEN``
    the admin's API token (legacy ``Token`` scheme, more than 5 characters); generated when unset.

Generated values are stored in ``<data dir>/credentials.json`` with permissions 0600 and reused on
the next start, so the admin of a data directory never changes.

Local only: ``ML_BLOCK_LOCAL_IP=false`` and ``SSRF_PROTECTION_ENABLED=false`` let this Label Studio
call an ML backend on 127.0.0.1. They switch off Label Studio's protection against server-side
request forgery and are set here because the server listens on loopback and serves one machine.
Never use them for a shared deployment (run the backend on a routable address there instead).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Any

from posthoc.atomic import write_text_atomic
from posthoc.errors import PosthocInputError, PosthocServiceError
from posthoc.labelstudio.database import (
    LOCAL_DB_NAME,
    LOCAL_DB_USER,
    SQLITE,
    DatabaseSettings,
    LocalCluster,
    read_database,
    write_database,
)
from posthoc.labelstudio.server_log import DEFAULT_DATA_DIR as DEFAULT_DATA_DIR  # where posthoc ls keeps it
from posthoc.labelstudio.server_log import LOG_FILE, STATE_FILE, read_state, remember_log
from posthoc.processes import die_with_parent, pid_alive

DEFAULT_USERNAME = "admin@posthoc.local"
CREDENTIALS_FILE = "credentials.json"
#: Seconds a start waits for Label Studio to answer. The first start migrates the database: ~30 s on a quiet
#: 2-core machine, 2 min 34 s to 3 min 23 s measured at load 4-10 (issue 29); later starts 5-8 s.
START_TIMEOUT = 600.0
LOOPBACK = "127.0.0.1"

#: Settings that keep Label Studio off the network and enable the legacy ``Token`` API scheme.
OFFLINE_ENV: dict[str, str] = {
    "LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN": "true",
    "LATEST_VERSION_CHECK": "false",
    "COLLECT_ANALYTICS": "false",
    "SENTRY_DSN": "",
    "FRONTEND_SENTRY_DSN": "",
}
#: Local-only: allow an ML backend / webhook receiver on 127.0.0.1 (switches off SSRF protection).
LOCAL_ML_ENV: dict[str, str] = {
    "ML_BLOCK_LOCAL_IP": "false",
    "SSRF_PROTECTION_ENABLED": "false",
}
#: How long Label Studio waits for the ML backend's ``/health`` and ``/setup`` when a project adds it (its defaults:
#: 1 s and 3 s, ``label_studio/ml/api_connector.py``). A backend worker's first answers under load took 2.3-4.8 s
#: before it warmed its parser (issue 29); these leave room for a busy machine. Set either in the environment to
#: choose another value (Label Studio also reads them with a ``LABEL_STUDIO_`` prefix).
ML_TIMEOUT_ENV: dict[str, str] = {
    "ML_TIMEOUT_HEALTH": "10",
    "ML_TIMEOUT_SETUP": "20",
}


@dataclass(frozen=True)
class Credentials:
    """The admin account of a local Label Studio: login, password and API token."""

    username: str
    password: str
    token: str

    def __repr__(self) -> str:  # never print secrets by accident
        return f"Credentials(username={self.username!r}, password=***, token=***)"


def label_studio_version() -> str:
    """The installed ``label-studio`` version (raises PosthocServiceError when it is not installed)."""
    try:
        from importlib.metadata import version

        return version("label-studio")
    except Exception as exc:  # PackageNotFoundError
        raise PosthocServiceError("label-studio is not installed: pip install label-studio") from exc


def label_studio_executable() -> str:
    """Path of the ``label-studio`` command (next to this Python first, then on PATH)."""
    beside = Path(sys.executable).with_name("label-studio")
    if beside.is_file():
        return str(beside)
    found = shutil.which("label-studio")
    if not found:
        raise PosthocServiceError("the label-studio command is not on PATH: pip install label-studio")
    return found


def read_credentials(data_dir: Path) -> Credentials | None:
    """The credentials stored in ``data_dir/credentials.json``, or ``None`` when there are none."""
    path = Path(data_dir) / CREDENTIALS_FILE
    if not path.is_file():
        return None
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        return Credentials(username=raw["username"], password=raw["password"], token=raw["token"])
    except (ValueError, KeyError, TypeError) as exc:
        raise PosthocInputError(f"{path}: not a credentials file ({exc}); delete it to generate new ones") from exc


def write_credentials(data_dir: Path, credentials: Credentials) -> Path:
    """Store ``credentials`` in ``data_dir/credentials.json`` with permissions 0600 (atomically)."""
    path = Path(data_dir) / CREDENTIALS_FILE
    write_text_atomic(path, json.dumps(asdict(credentials), indent=2) + "\n", permissions=0o600)
    return path


def resolve_credentials(data_dir: Path, *, environ: dict[str, str] | None = None) -> Credentials:
    """The admin credentials: environment first (``POSTHOC_LS_*``), then the stored file, else generated.

    Whatever is resolved is written back to ``data_dir/credentials.json`` (0600) so later commands
    (``posthoc ls status``, ``posthoc study create`` on the same data dir) find them.
    """
    env = os.environ if environ is None else environ
    stored = read_credentials(data_dir)
    username = env.get("POSTHOC_LS_USERNAME") or (stored.username if stored else DEFAULT_USERNAME)
    password = env.get("POSTHOC_LS_PASSWORD") or (stored.password if stored else secrets.token_urlsafe(18))
    token = env.get("POSTHOC_LS_TOKEN") or (stored.token if stored else secrets.token_hex(20))
    if len(token) <= 5:
        raise PosthocInputError("POSTHOC_LS_TOKEN: Label Studio ignores tokens of 5 characters or fewer; "
                                "use a longer one")
    if "@" not in username:
        raise PosthocInputError(f"POSTHOC_LS_USERNAME={username!r}: Label Studio logins are e-mail addresses")
    credentials = Credentials(username=username, password=password, token=token)
    if credentials != stored:
        Path(data_dir).mkdir(parents=True, exist_ok=True)
        write_credentials(data_dir, credentials)
    return credentials


def server_environment(data_dir: Path, credentials: Credentials, *, allow_local_ml: bool = True,
                       base: dict[str, str] | None = None, database: DatabaseSettings | None = None) -> dict[str, str]:
    """The environment for ``label-studio`` commands on ``data_dir`` (see the module docstring); the database
    is ``database``, else the one stored for the data dir (``database.json``), else SQLite."""
    env = dict(os.environ if base is None else base)
    (database or read_database(data_dir)).apply(env)
    env.update(OFFLINE_ENV)
    if allow_local_ml:
        env.update(LOCAL_ML_ENV)
    for name, seconds in ML_TIMEOUT_ENV.items():
        if name not in env and f"LABEL_STUDIO_{name}" not in env:
            env[name] = seconds
    env["LABEL_STUDIO_BASE_DATA_DIR"] = str(Path(data_dir).resolve())
    env["LABEL_STUDIO_USERNAME"] = credentials.username
    env["LABEL_STUDIO_PASSWORD"] = credentials.password
    env["LABEL_STUDIO_USER_TOKEN"] = credentials.token
    for stray in ("LABEL_STUDIO_PORT", "LABEL_STUDIO_HOST"):
        env.pop(stray, None)
    return env


def port_is_free(port: int, host: str = LOOPBACK) -> bool:
    """Whether nothing listens on ``host:port`` and it can be bound.

    The probe binds with ``SO_REUSEADDR``, as Label Studio's server does: sockets of a stopped server left in
    TIME-WAIT (about a minute after a crash) do not make the port look taken, a listener still does."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        if probe.connect_ex((host, port)) == 0:
            return False
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def free_port(host: str = LOOPBACK) -> int:
    """A port the OS reports free on ``host`` right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def run_label_studio_command(data_dir: Path, credentials: Credentials, args: list[str], *,
                             timeout: float = 180) -> str:
    """Run a ``label-studio`` management command (``user``, ``reset_password``, ``export``) on ``data_dir``.

    It opens the same SQLite database as a running server; returns stdout. Raises
    PosthocServiceError with the tail of the output when the command fails.
    """
    env = server_environment(data_dir, credentials)
    # the management commands would otherwise (re)create the admin on every call
    for key in ("LABEL_STUDIO_USERNAME", "LABEL_STUDIO_PASSWORD", "LABEL_STUDIO_USER_TOKEN"):
        env.pop(key, None)
    done = subprocess.run([label_studio_executable(), *args], env=env, capture_output=True, text=True,
                          timeout=timeout, check=False)
    if done.returncode != 0:
        tail = (done.stdout + done.stderr)[-2000:]
        raise PosthocServiceError(f"label-studio {args[0]} failed (exit {done.returncode}): {tail}")
    return done.stdout


def choose_database(data_dir: Path, requested: DatabaseSettings | None) -> DatabaseSettings:
    """The database of ``data_dir``: the stored one (``database.json``) unless another is ``requested``.

    A data dir keeps its database: asking for PostgreSQL on one that already holds a SQLite Label Studio, or the
    reverse, or another PostgreSQL database, is refused (the projects would silently be elsewhere)."""
    stored = read_database(data_dir)
    has_sqlite = (Path(data_dir) / "label_studio.sqlite3").is_file()
    if requested is None:
        return stored
    if requested.engine == "sqlite":
        if stored.engine != "sqlite":
            raise PosthocInputError(f"{data_dir}: this data dir's Label Studio runs on {stored.describe()}; "
                                    "use another --data-dir for SQLite")
        return SQLITE
    if stored.engine == "sqlite":
        if has_sqlite:
            raise PosthocInputError(f"{data_dir}: this data dir already holds a SQLite Label Studio; use a fresh "
                                    "--data-dir for PostgreSQL (Label Studio does not move data between databases)")
        if requested.local_cluster:  # a new cluster: its superuser and a generated password
            return dataclasses.replace(requested, host=LOOPBACK, name=requested.name or LOCAL_DB_NAME,
                                       user=requested.user or LOCAL_DB_USER,
                                       password=requested.password or secrets.token_urlsafe(24))
        return requested
    if requested.local_cluster and stored.local_cluster:
        return stored
    same = (requested.host, requested.port, requested.name) == (stored.host, stored.port, stored.name)
    if not same:
        raise PosthocInputError(f"{data_dir}: this data dir's Label Studio runs on {stored.describe()}, not on "
                                f"{requested.describe()}; use another --data-dir")
    return requested


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

    def client(self) -> Any:
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
        command = [label_studio_executable(), "start", "--no-browser", "--internal-host", LOOPBACK,
                   "--port", str(port)]
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
    return ServerStatus(root, True, int(state["pid"]), url, answering, username)


def start_detached(data_dir: str | os.PathLike[str], *, port: int | None = None, timeout: float = START_TIMEOUT,
                   database: DatabaseSettings | None = None) -> LabelStudioServer:
    """Start a server that outlives this process (``posthoc ls start``); refuses a second one per data dir."""
    status = server_status(data_dir)
    if status.running:
        raise PosthocInputError(f"{status.data_dir}: Label Studio already runs there (pid {status.pid}, "
                                f"{status.url}); stop it with `posthoc ls stop`")
    server = LabelStudioServer(data_dir, port=port, database=database)
    server.start(timeout=timeout, detach=True)
    # forget the handles without stopping the processes
    server.process = None
    server.cluster = None
    if server._log is not None:
        server._log.close()
        server._log = None
    return server


def is_label_studio_process(pid: int) -> bool:
    """Whether ``pid`` still runs Label Studio (a stale ``server.json`` may name a pid reused by another
    program, whose process group must not be stopped). Without ``/proc`` the pid is trusted."""
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").lower()
    except FileNotFoundError:
        return not Path("/proc/self/cmdline").exists()
    except OSError:
        return True
    return b"label-studio" in command or b"label_studio" in command


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
