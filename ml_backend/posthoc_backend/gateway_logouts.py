"""The logouts the gateway's authoriser remembers, kept on disk (issue 47): a restart of the authoriser must not
let a logged-out session's copied cookie in again.

Label Studio 1.23 keeps sessions in signed cookies: a copy of a logged-out session's cookie stays valid until it
expires (``MAX_SESSION_AGE``), unless the gateway remembers the logout
(:meth:`posthoc_backend.gateway.Authority.revoke`). :class:`LogoutStore` is a small SQLite file, the owner's
alone (0600), holding each logout's payload digest (never the cookie itself) and the wall-clock time it was made;
entries older than the session age are dropped when it is opened.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from pathlib import Path


class LogoutStore:
    """Logged-out session digests in the SQLite file ``path`` (made 0600 in a folder it makes 0700 if new)."""

    def __init__(self, path: Path, *, max_age: float) -> None:
        self.path = path
        self.max_age = max_age
        self._lock = threading.Lock()
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        if not path.exists():
            os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
        os.chmod(path, 0o600)
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._db.execute("CREATE TABLE IF NOT EXISTS logouts (session TEXT PRIMARY KEY, at REAL NOT NULL)")
        self._db.execute("DELETE FROM logouts WHERE at < ?", (time.time() - max_age,))

    def ages(self) -> dict[str, float]:
        """Each remembered logout's digest -> how many seconds ago it was made (oldest first).

        Examples
        --------
        >>> import tempfile
        >>> store = LogoutStore(Path(tempfile.mkdtemp()) / "logouts.sqlite", max_age=60)
        >>> store.add("abc")
        >>> list(store.ages()), oct(store.path.stat().st_mode & 0o777)
        (['abc'], '0o600')
        """
        with self._lock:
            rows = self._db.execute("SELECT session, at FROM logouts ORDER BY at").fetchall()
        now = time.time()
        return {str(session): max(0.0, now - float(at)) for session, at in rows}

    def add(self, session: str) -> None:
        """Remember the logout of the session whose payload digest is ``session``, now."""
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO logouts VALUES (?, ?)", (session, time.time()))
            self._db.execute("DELETE FROM logouts WHERE at < ?", (time.time() - self.max_age,))
