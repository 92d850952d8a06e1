"""What a local Label Studio's own log says about a call that failed: SQLite's ``database is locked``.

Label Studio 1.23 on its embedded SQLite database (one ``label-studio start`` process) serialises every write
behind one file lock. When more writes arrive at once than that takes (measured in issue 30: 10 annotators at
one task a second, the pace of about 250 annotators at the paper's ~75 s a task), Django raises
``sqlite3.OperationalError: database is locked`` and the request ends as

- a ``500`` HTML page titled "500 | Label Studio" after ~6 s (Django's SQLite timeout), whose body says nothing
  about the lock (a PATCH of a project, a sign-up, next-task), or
- no answer in time: Label Studio's ``DatabaseIsLockedRetryMiddleware`` (active on SQLite) retries the request
  up to 15 times with a backoff of 1.5x, longer than a client waits (an import).

Only the server's log names the cause. For a server this project started (:class:`LabelStudioServer`, ``posthoc
ls start``) the log is ``<data dir>/labelstudio.log``: :func:`remember_log` records it for its URL (the
server's ``start`` and :func:`read_state` call it). The client takes a
:func:`log_mark` before each call; when the call fails with a 5xx, :func:`locked_since` answers whether the log
said ``database is locked`` meanwhile, and the failure becomes one line that names the lock and the way out
(:func:`failure_reason`) instead of "answered 500: an HTML page"; a write that got no answer in time from a
server on SQLite says how SQLite makes writes wait. For a server elsewhere nothing is known and a failure is
reported as it came. The server's state file (:func:`read_state`) and log names live here too, so that this
module, which the client imports, imports nothing of the server's lifecycle.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

__all__ = ["DEFAULT_DATA_DIR", "LOCKED", "LOG_FILE", "STATE_FILE", "LogMark", "failure_reason", "known_log",
           "local_engine", "locked_since", "log_mark", "read_state", "remember_log"]

DEFAULT_DATA_DIR = Path(".posthoc") / "labelstudio"
STATE_FILE = "server.json"  # a detached server's pid, port and URL, in its data dir
LOG_FILE = "labelstudio.log"  # in the data dir: Label Studio's stdout and stderr
LOCKED = "database is locked"
_TAIL_BYTES = 256 * 1024
_logs: dict[str, Path] = {}
_guard = threading.Lock()


def _key(url: str) -> str:
    return url.rstrip("/").lower()


def remember_log(url: str, log_path: Path) -> None:
    """Record that the Label Studio at ``url`` writes its log to ``log_path`` (for the rest of this process)."""
    with _guard:
        _logs[_key(url)] = Path(log_path)


def read_state(data_dir: Path) -> dict[str, Any] | None:
    """The ``server.json`` of a detached server (pid, port, url), or ``None``; remembers the server's log for
    the messages of its failed calls (:func:`remember_log`)."""
    path = Path(data_dir) / STATE_FILE
    if not path.is_file():
        return None
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        return None
    if not isinstance(state, dict) or type(state.get("pid")) is not int or state["pid"] <= 0 \
            or not isinstance(state.get("url"), str):
        return None  # not a state file this program wrote: no server is known to run there
    remember_log(state["url"], Path(data_dir).resolve() / LOG_FILE)
    return state


def known_log(url: str) -> Path | None:
    """The log file of the Label Studio at ``url``, when this process knows it (:func:`remember_log`, or the
    default data dir's ``server.json`` in the current folder naming that URL)."""
    with _guard:
        known = _logs.get(_key(url))
    if known is not None:
        return known
    # `posthoc ls start` with the default data dir, run from this folder: its server.json names the URL
    state = read_state(DEFAULT_DATA_DIR)
    if state is not None and _key(str(state["url"])) == _key(url):
        return DEFAULT_DATA_DIR.resolve() / LOG_FILE
    return None


LogMark = tuple[Path, int]


def log_mark(log: Path | None) -> LogMark | None:
    """Where ``log`` (a :func:`known_log`) ends now, its path and size: taken before a call so that
    :func:`locked_since` reads only what was logged during it; ``None`` when the log is unknown."""
    if log is None:
        return None
    try:
        return log, log.stat().st_size
    except OSError:
        return None


def locked_since(mark: LogMark | None) -> Path | None:
    """The log of ``mark`` when what it logged since (at most the last 256 KiB) holds SQLite's ``database is
    locked``: Label Studio met the lock while serving the call (or a call beside it, which then explains this
    one's 500 or time-out as well); ``None`` otherwise."""
    if mark is None:
        return None
    log, size = mark
    try:
        with log.open("rb") as stream:
            end = stream.seek(0, 2)
            if end < size:  # rotated or truncated: read what is there
                size = 0
            stream.seek(max(size, end - _TAIL_BYTES))
            written = stream.read()
    except OSError:
        return None
    return log if LOCKED.encode() in written else None


def _sqlite_data_dir(log: Path) -> Path | None:
    """The data dir of the server that writes ``log`` when it runs on SQLite (its ``database.json`` says so, or
    it has none), ``None`` on PostgreSQL or when unreadable."""
    from posthoc.errors import PosthocInputError
    from posthoc.labelstudio.database import read_database

    try:
        return log.parent if read_database(log.parent).engine == "sqlite" else None
    except (OSError, PosthocInputError):
        return None


def local_engine(url: str) -> str | None:
    """The database engine (``"sqlite"``, ``"postgresql"``) of the Label Studio at ``url`` when this process knows
    its data dir (:func:`known_log`), else ``None``."""
    log = known_log(url)
    if log is None:
        return None
    return "sqlite" if _sqlite_data_dir(log) is not None else "postgresql"


def failure_reason(mark: LogMark | None, *, write_timed_out: bool = False) -> str | None:
    """Why a call that started at ``mark`` failed, in words for after "Label Studio METHOD PATH answered 5xx:" or
    "... got no answer in N s:", when the server's log tells (:func:`locked_since`) or, for a write that timed
    out, when the server runs on SQLite; ``None`` when nothing is known (then report the failure as it came)."""
    locked = locked_since(mark)
    if locked is not None:
        return _locked_advice(locked)
    data_dir = _sqlite_data_dir(mark[0]) if mark is not None and write_timed_out else None
    return None if data_dir is None else _slow_write_advice(data_dir)


_WAY_OUT = ("more writes at once than SQLite under one Label Studio process takes. Retry when fewer annotators "
            "work, or move the study to PostgreSQL (posthoc ls start --database postgresql; docs/labelstudio.md, "
            "'How many at once')")


def _locked_advice(log: Path) -> str:
    """The words after "Label Studio METHOD PATH answered 500:" for a failure that the log ``log`` explains."""
    return f"Label Studio's SQLite database is locked (its log {log} says '{LOCKED}'): {_WAY_OUT}"


def _slow_write_advice(data_dir: Path) -> str:
    """The words after "Label Studio METHOD PATH got no answer in N s:" for a server on SQLite. A write that
    meets the lock there may wait longer than any client: Label Studio's ``DatabaseIsLockedRetryMiddleware``
    retries it up to 15 times, 1 s growing by 1.5x (``label_studio/core/middleware.py``), and logs nothing
    meanwhile (measured: an import under a held lock answered only when the lock went, and was then applied, so
    rerun the command rather than repeat the call by hand)."""
    return (f"it runs on SQLite ({data_dir}), where a write waits while another holds the database, and Label "
            f"Studio retries a locked request for up to a few minutes; if many annotators work at once, that is "
            f"{_WAY_OUT}")
