"""Label Studio's database: embedded SQLite (the default), a PostgreSQL server the user names, or a local
PostgreSQL cluster this project initialises and runs in the data directory.

When to choose PostgreSQL: Label Studio's own guidance is SQLite for tens of thousands of tasks and one or a
few annotators at a time, PostgreSQL above about 100,000 tasks or with five or more concurrent annotators, and
for a server kept for months (backups with ``pg_dump``, no database-wide write lock). The study manifest stays a
SQLite file either way: it is an artefact of the plan, not a server.

Label Studio (1.23) reads ``DJANGO_DB=postgresql`` and ``POSTGRE_NAME``, ``POSTGRE_USER``, ``POSTGRE_PASSWORD``,
``POSTGRE_HOST``, ``POSTGRE_PORT`` (also with a ``LABEL_STUDIO_`` prefix). :class:`DatabaseSettings` is what a data
directory uses; it is written to ``<data dir>/database.json`` (0600: it holds the password) by
``posthoc ls start`` so that ``posthoc ls stop``, management commands (``reset_password``, ``export``) and the
tests reach the same database.

A local cluster (``posthoc ls start --database postgresql`` with no DSN and no ``POSTGRE_*`` variables) lives in
``<data dir>/postgres``: ``initdb`` with a generated password (scram-sha-256), ``postgres`` listening on
127.0.0.1 only (its Unix socket in the cluster folder), one database ``labelstudio``. PostgreSQL refuses to run
as root, so when this runs as root the cluster belongs to, and runs as, an unprivileged user (``postgres`` from
Debian's package, or ``POSTHOC_PG_USER``); every folder above the data directory must then be searchable by
that user.
"""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import secrets
import shutil
import signal
import subprocess
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import IO, TYPE_CHECKING, TypedDict
from urllib.parse import unquote, urlsplit

from posthoc.atomic import write_text_atomic
from posthoc.errors import PosthocInputError, PosthocServiceError
from posthoc.labelstudio.ports import LOOPBACK
from posthoc.processes import die_with_parent, pid_alive

if TYPE_CHECKING:
    from psycopg import Connection
    from psycopg.rows import TupleRow

DATABASE_FILE = "database.json"
CLUSTER_DIR = "postgres"
CLUSTER_LOG = "postgres.log"
LOCAL_DB_NAME = "labelstudio"
LOCAL_DB_USER = "posthoc"
ENGINES = ("sqlite", "postgresql")
#: every variable through which Label Studio could pick a database (removed before ours are set)
_LS_DB_VARIABLES = tuple(
    prefix + name
    for name in ("DJANGO_DB", "POSTGRE_NAME", "POSTGRE_USER", "POSTGRE_PASSWORD", "POSTGRE_HOST", "POSTGRE_PORT",
                 "DATABASE_NAME")
    for prefix in ("", "LABEL_STUDIO_", "HEARTEX_")
)



class _Owner(TypedDict, total=False):
    """The keyword arguments that run a PostgreSQL command as the cluster's unprivileged owner."""

    user: int
    group: int


@dataclass(frozen=True)
class DatabaseSettings:
    """Where a Label Studio keeps its data. ``engine`` is ``sqlite`` (the other fields unused) or
    ``postgresql``; ``local_cluster`` marks a cluster in the data dir that ``posthoc ls`` starts and stops."""

    engine: str = "sqlite"
    host: str = ""
    port: int = 0
    name: str = ""
    user: str = ""
    password: str = ""
    local_cluster: bool = False

    def __repr__(self) -> str:  # never print the password by accident
        if self.engine == "sqlite":
            return "DatabaseSettings(engine='sqlite')"
        return (f"DatabaseSettings(engine='postgresql', host={self.host!r}, port={self.port}, name={self.name!r}, "
                f"user={self.user!r}, password=***, local_cluster={self.local_cluster})")

    def describe(self) -> str:
        """One line for a console: no password."""
        if self.engine == "sqlite":
            return "SQLite (embedded, in the data dir)"
        where = "local cluster in the data dir" if self.local_cluster else "server"
        return f"PostgreSQL {self.user}@{self.host}:{self.port}/{self.name} ({where})"

    def apply(self, env: dict[str, str]) -> dict[str, str]:
        """``env`` with every database variable of Label Studio replaced by these settings (in place)."""
        for key in _LS_DB_VARIABLES:
            env.pop(key, None)
        if self.engine == "postgresql":
            env.update({"DJANGO_DB": "postgresql", "POSTGRE_NAME": self.name, "POSTGRE_USER": self.user,
                        "POSTGRE_PASSWORD": self.password, "POSTGRE_HOST": self.host,
                        "POSTGRE_PORT": str(self.port)})
        return env


SQLITE = DatabaseSettings()


def settings_from_dsn(dsn: str) -> DatabaseSettings:
    """``postgresql://USER:PASSWORD@HOST:PORT/NAME`` as settings; a clear error naming the part to fix."""
    parts = urlsplit(dsn)
    if parts.scheme not in ("postgresql", "postgres"):
        raise PosthocInputError("POSTHOC_LS_DATABASE_URL: expected postgresql://USER:PASSWORD@HOST:PORT/NAME, "
                                f"got scheme {parts.scheme or '(none)'!r}")
    name = unquote(parts.path.lstrip("/"))
    try:
        port = parts.port or 5432
    except ValueError as exc:
        raise PosthocInputError(f"POSTHOC_LS_DATABASE_URL: the port is not a number ({exc})") from exc
    if not parts.hostname or not name or not parts.username:
        raise PosthocInputError("POSTHOC_LS_DATABASE_URL: give user, host and database name, as in "
                                "postgresql://USER:PASSWORD@HOST:PORT/NAME")
    return DatabaseSettings("postgresql", host=parts.hostname, port=port, name=name,
                            user=unquote(parts.username), password=unquote(parts.password or ""))


def settings_from_environment(environ: dict[str, str] | None = None) -> DatabaseSettings | None:
    """A PostgreSQL server named by the environment: ``POSTHOC_LS_DATABASE_URL`` (a DSN) or Label Studio's own
    ``POSTGRE_*`` variables (``POSTGRE_HOST`` or ``POSTGRE_NAME`` set); ``None`` when neither is set."""
    env = os.environ if environ is None else environ
    if env.get("POSTHOC_LS_DATABASE_URL"):
        return settings_from_dsn(env["POSTHOC_LS_DATABASE_URL"])
    if not (env.get("POSTGRE_HOST") or env.get("POSTGRE_NAME")):
        return None
    try:
        port = int(env.get("POSTGRE_PORT") or 5432)
    except ValueError as exc:
        raise PosthocInputError(f"POSTGRE_PORT={env.get('POSTGRE_PORT')!r}: not a port number") from exc
    return DatabaseSettings("postgresql", host=env.get("POSTGRE_HOST") or "localhost", port=port,
                            name=env.get("POSTGRE_NAME") or "postgres", user=env.get("POSTGRE_USER") or "postgres",
                            password=env.get("POSTGRE_PASSWORD") or "")


def read_database(data_dir: Path) -> DatabaseSettings:
    """The settings stored in ``data_dir/database.json``; SQLite when there is none."""
    path = Path(data_dir) / DATABASE_FILE
    if not path.is_file():
        return SQLITE
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        settings = DatabaseSettings(**raw)
    except (ValueError, TypeError) as exc:
        raise PosthocInputError(f"{path}: not a database settings file ({exc}); fix or delete it") from exc
    if settings.engine not in ENGINES:
        raise PosthocInputError(f"{path}: engine {settings.engine!r} is not one of {', '.join(ENGINES)}")
    return settings


def write_database(data_dir: Path, settings: DatabaseSettings) -> None:
    """Store ``settings`` in ``data_dir/database.json`` (0600, atomically); SQLite removes the file."""
    path = Path(data_dir) / DATABASE_FILE
    if settings.engine == "sqlite":
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        return
    write_text_atomic(path, json.dumps(asdict(settings), indent=2) + "\n", permissions=0o600)


# -- a local cluster ---------------------------------------------------------------------------------------
def postgres_bin_dir() -> Path:
    """The folder of PostgreSQL's server programs (``initdb``, ``postgres``): ``pg_config --bindir``, Debian's
    ``/usr/lib/postgresql/N/bin`` (newest), or ``PATH``."""
    candidates: list[Path] = []
    pg_config = shutil.which("pg_config")
    if pg_config:
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            out = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True, timeout=10, check=True)
            candidates.append(Path(out.stdout.strip()))
    debian = sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=lambda p: _version_key(p.parent.name))
    candidates.extend(reversed(debian))
    found = shutil.which("initdb")
    if found:
        candidates.append(Path(found).parent)
    for folder in candidates:
        if (folder / "initdb").is_file() and (folder / "postgres").is_file():
            return folder
    raise PosthocServiceError("PostgreSQL's server programs (initdb, postgres) are not installed: "
                              "apt-get install postgresql (Debian), or name a server with POSTHOC_LS_DATABASE_URL")


def _version_key(name: str) -> tuple[int, ...]:
    return tuple(int(part) for part in name.split(".") if part.isdigit())


def _unprivileged_user() -> pwd.struct_passwd | None:
    """The user the cluster runs as: ``None`` (this user) unless this is root."""
    if os.geteuid() != 0:
        return None
    name = os.environ.get("POSTHOC_PG_USER", "postgres")
    try:
        return pwd.getpwnam(name)
    except KeyError:
        raise PosthocServiceError(f"PostgreSQL does not run as root and the user {name!r} does not exist: "
                                  "install Debian's postgresql (it adds the postgres user) or set "
                                  "POSTHOC_PG_USER to an unprivileged user") from None


#: A data dir holding a cluster run by another account (as root: ``postgres``): that account may enter it, nobody
#: may list it (the cluster's own folder is 0700 and the account's; every file beside it 0600)
DATA_DIR_MODE_SHARED = 0o711


class LocalCluster:
    """A PostgreSQL cluster in ``<data dir>/postgres`` on 127.0.0.1 (see the module docstring)."""

    def __init__(self, data_dir: str | os.PathLike[str], *, settings: DatabaseSettings | None = None) -> None:
        self.data_dir = Path(data_dir).resolve()
        self.cluster_dir = self.data_dir / CLUSTER_DIR
        self.settings = settings or DatabaseSettings("postgresql", host="127.0.0.1", port=0, name=LOCAL_DB_NAME,
                                                     user=LOCAL_DB_USER, password=secrets.token_urlsafe(24),
                                                     local_cluster=True)
        self.owner = _unprivileged_user()
        self.process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    @property
    def log_path(self) -> Path:
        return self.data_dir / CLUSTER_LOG

    def _as_owner(self) -> _Owner:
        if self.owner is None:
            return {}
        return {"user": self.owner.pw_uid, "group": self.owner.pw_gid}

    def _check_reachable(self) -> None:
        if self.owner is None:
            return
        self.data_dir.chmod(DATA_DIR_MODE_SHARED)  # made under the owner-only umask: the cluster's account enters it
        for folder in [self.data_dir, *self.data_dir.parents]:
            mode = folder.stat()
            searchable = mode.st_mode & 0o001 or (mode.st_uid == self.owner.pw_uid and mode.st_mode & 0o100)
            if not searchable:
                raise PosthocInputError(
                    f"{folder}: PostgreSQL runs as {self.owner.pw_name} (not as root) and cannot enter this folder; "
                    f"use a data dir whose parents others can search (chmod o+x), e.g. under /srv or /var/lib")

    def initialise(self) -> bool:
        """``initdb`` the cluster once (scram-sha-256, the generated password); returns whether it did."""
        if (self.cluster_dir / "PG_VERSION").is_file():
            return False
        self._check_reachable()
        bin_dir = postgres_bin_dir()
        building = self.data_dir / f"{CLUSTER_DIR}.building"
        shutil.rmtree(building, ignore_errors=True)
        building.mkdir(mode=0o700, parents=True)
        password_file = self.data_dir / ".pgpass.initdb"
        write_text_atomic(password_file, self.settings.password + "\n", permissions=0o600)
        try:
            if self.owner is not None:
                os.chown(building, self.owner.pw_uid, self.owner.pw_gid)
                os.chown(password_file, self.owner.pw_uid, self.owner.pw_gid)
            done = subprocess.run(
                [str(bin_dir / "initdb"), "-D", str(building), "-U", self.settings.user, "--pwfile", str(password_file),
                 "--auth", "scram-sha-256", "--encoding", "UTF8", "--locale", "C"],
                capture_output=True, text=True, timeout=300, check=False, **self._as_owner())
        finally:
            password_file.unlink()
        if done.returncode != 0:
            shutil.rmtree(building, ignore_errors=True)
            raise PosthocServiceError(f"initdb failed (exit {done.returncode}): {(done.stdout + done.stderr)[-1500:]}")
        building.rename(self.cluster_dir)
        return True

    def start(self, *, port: int, detach: bool = False, timeout: float = 60) -> DatabaseSettings:
        """Start ``postgres`` on ``127.0.0.1:port`` (dies with this process unless ``detach``), create the
        ``labelstudio`` database if needed; returns the settings to give Label Studio."""
        self.initialise()
        self.settings = replace(self.settings, port=port)
        self._log = open(self.log_path, "ab")  # noqa: SIM115 - closed in stop()
        if self.owner is not None:
            with contextlib.suppress(OSError):
                os.chown(self.log_path, self.owner.pw_uid, self.owner.pw_gid)
        command = [str(postgres_bin_dir() / "postgres"), "-D", str(self.cluster_dir), "-p", str(port),
                   "-c", "listen_addresses=127.0.0.1", "-c", f"unix_socket_directories={self.cluster_dir}",
                   "-c", "max_connections=100"]
        self.process = subprocess.Popen(command, stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                        start_new_session=True, cwd=self.cluster_dir,
                                        preexec_fn=None if detach else die_with_parent(signal.SIGINT),
                                        **self._as_owner())
        try:
            self._wait_ready(timeout)
            self._ensure_database()
        except BaseException:
            self.stop()
            raise
        return self.settings

    def _connect(self, dbname: str) -> Connection[TupleRow]:
        import psycopg

        return psycopg.connect(host=self.settings.host, port=self.settings.port, user=self.settings.user,
                               password=self.settings.password, dbname=dbname, connect_timeout=5, autocommit=True)

    def _wait_ready(self, timeout: float) -> None:
        assert self.process is not None
        deadline = time.monotonic() + timeout
        last: Exception | None = None
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise PosthocServiceError(f"postgres exited with code {self.process.returncode}; log "
                                          f"{self.log_path}:\n{self._log_tail()}")
            try:
                with self._connect("postgres"):
                    return
            except Exception as exc:  # psycopg.OperationalError while it starts
                last = exc
            time.sleep(0.3)
        raise PosthocServiceError(f"PostgreSQL did not accept connections on 127.0.0.1:{self.settings.port} "
                                  f"within {timeout:.0f} s ({last}); log {self.log_path}")

    def _ensure_database(self) -> None:
        with self._connect("postgres") as connection:
            found = connection.execute("SELECT 1 FROM pg_database WHERE datname = %s", (self.settings.name,)).fetchone()
            if not found:
                connection.execute(f'CREATE DATABASE "{self.settings.name}"')

    def _log_tail(self, size: int = 2000) -> str:
        try:
            return self.log_path.read_bytes()[-size:].decode("utf-8", "replace")
        except OSError:
            return ""

    def pid(self) -> int | None:
        """The running postmaster's pid from ``postmaster.pid``, or ``None``."""
        if self.process is not None and self.process.poll() is None:
            return self.process.pid
        try:
            first = (self.cluster_dir / "postmaster.pid").read_text(encoding="utf-8").splitlines()[0]
            pid = int(first)
        except (OSError, ValueError, IndexError):
            return None
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return None
        except PermissionError:
            return pid
        return pid

    def stop(self, *, timeout: float = 30) -> None:
        """Fast shutdown (``SIGINT``: clients disconnected, data safe), then ``SIGQUIT``, then ``SIGKILL``."""
        pid = self.pid()
        if pid is not None:
            for sig, wait in ((signal.SIGINT, timeout), (signal.SIGQUIT, 10.0), (signal.SIGKILL, 5.0)):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, sig)
                deadline = time.monotonic() + wait
                while time.monotonic() < deadline and _alive(pid, self.process):
                    time.sleep(0.1)
                if not _alive(pid, self.process):
                    break
        if self.process is not None:
            with contextlib.suppress(Exception):
                self.process.wait(timeout=1)
            self.process = None
        if self._log is not None:
            self._log.close()
            self._log = None


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
            return replace(requested, host=LOOPBACK, name=requested.name or LOCAL_DB_NAME,
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


def _alive(pid: int, process: subprocess.Popen[bytes] | None) -> bool:
    if process is not None and process.pid == pid:
        return process.poll() is None
    return pid_alive(pid)
