"""Follow a study's revisions while serving: notice changed files cheaply, reload, keep the old view on failure.

``posthoc study extend`` and ``reassign`` (issue 28) never change the manifest in place: the revised file is
built beside it and renamed over it (:meth:`posthoc.study.plan.manifest.Manifest.revise`, through
:func:`posthoc.study.plan.storage.write_database`), and the same setup then writes the accounts file and the
setup record beside it. A renamed-over file has a new inode, and a rewritten one a new modification time or
size, so :class:`FileWatch` compares each watched file's ``(st_ino, st_mtime_ns, st_size)`` (``None`` while it
is missing), at most once per ``interval`` seconds: a few ``stat`` calls a second, nothing on the requests in
between.

:class:`Reloading` holds a value loaded from watched files (the ML backend's
:class:`~posthoc.study.plan.index.ManifestIndex`): :meth:`Reloading.get` returns it and, when the files changed,
the one caller that noticed loads the new value under a lock while the others go on with the old one; a load
that fails keeps the old value and logs one line (for that state of the files: it is tried again when they
change again).
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Generic, TypeVar

from posthoc.errors import PosthocInputError, PosthocServiceError

logger = logging.getLogger("posthoc_backend")

T = TypeVar("T")
#: seconds between two looks at the watched files
CHECK_SECONDS = 1.0
#: what a load that failed may raise and be survived (the old value kept): not a manifest, a locked or broken
#: SQLite file, a missing or unreadable file, Label Studio not answering
LOAD_ERRORS: tuple[type[Exception], ...] = (PosthocInputError, PosthocServiceError, OSError, sqlite3.Error,
                                            ValueError, KeyError)

Stamp = tuple[tuple[int, int, int] | None, ...]


def file_stamp(paths: Iterable[Path]) -> Stamp:
    """``(st_ino, st_mtime_ns, st_size)`` of each path, ``None`` for one that is missing or unreadable."""
    stamps: list[tuple[int, int, int] | None] = []
    for path in paths:
        try:
            status = os.stat(path)
        except OSError:
            stamps.append(None)
            continue
        stamps.append((status.st_ino, status.st_mtime_ns, status.st_size))
    return tuple(stamps)


class FileWatch:
    """Tells whether any of ``paths`` changed since the last look, looking at most once per ``interval`` seconds
    (module docstring). Thread-safe: one change is reported to one caller."""

    def __init__(self, paths: Iterable[Path], *, interval: float = CHECK_SECONDS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.paths = tuple(Path(p) for p in paths)
        self.interval = interval
        self.clock = clock
        self._lock = threading.Lock()
        self._stamp = file_stamp(self.paths)
        self._looked = clock()

    def changed(self) -> bool:
        """``True`` once after the files changed (seen at most ``interval`` seconds late), else ``False``."""
        now = self.clock()
        with self._lock:
            if now - self._looked < self.interval:
                return False
            self._looked = now
            stamp = file_stamp(self.paths)
            if stamp == self._stamp:
                return False
            self._stamp = stamp
            return True


class Reloading(Generic[T]):
    """A value loaded by ``load`` from the files ``watch`` looks at, loaded again when they change (module
    docstring). The first load happens here and its error is raised: a service does not start on a broken file.
    ``what`` names the value in the log line."""

    def __init__(self, load: Callable[[], T], watch: FileWatch, *, what: str) -> None:
        self.load = load
        self.watch = watch
        self.what = what
        self.reloads = 0
        self.failures = 0
        self._lock = threading.Lock()
        self._value = load()

    def get(self) -> T:
        """The value: reloaded first when the files changed, the old one when that load fails or while another
        thread reloads."""
        if not self.watch.changed():
            return self._value
        with self._lock:
            try:
                value = self.load()
            except LOAD_ERRORS as exc:
                self.failures += 1
                logger.warning("%s changed but could not be read (%s); still serving the one read before",
                               self.what, exc)
                return self._value
            self._value = value
            self.reloads += 1
            logger.info("%s changed: read again", self.what)
            return value
