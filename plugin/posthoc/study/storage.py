"""The one module that knows how a study manifest is stored: a single SQLite file (stdlib ``sqlite3``).

The file is written once, atomically and deterministically: tables are filled in a fixed row
order in a temporary file, compacted with ``VACUUM INTO`` into a second temporary file beside the
target, and that file is renamed over the target. No timestamps are stored, so the same plan gives a
byte-identical file (with the same SQLite library). Readers open it read-only, one connection per
thread.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import tempfile
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

FORMAT = "posthoc-study-manifest"
VERSION = "1"

#: table name -> (column, SQL type) in storage order; booleans are INTEGER 0/1
TABLES: dict[str, tuple[tuple[str, str], ...]] = {
    "workers": (("worker", "TEXT NOT NULL PRIMARY KEY"), ("ord", "INTEGER NOT NULL")),
    "documents": (("dataset", "TEXT NOT NULL"), ("doc_id", "TEXT NOT NULL"), ("text", "TEXT NOT NULL")),
    "source_mentions": (
        ("dataset", "TEXT NOT NULL"), ("doc_id", "TEXT NOT NULL"), ("system", "TEXT NOT NULL"),
        ("start", "INTEGER NOT NULL"), ("end", "INTEGER NOT NULL"), ("surface", "TEXT"), ("link", "TEXT"),
        ("link_original", "TEXT"), ("is_nil", "INTEGER NOT NULL"),
    ),
    "chunks": (
        ("chunk_id", "TEXT NOT NULL PRIMARY KEY"), ("dataset", "TEXT NOT NULL"), ("doc_id", "TEXT NOT NULL"),
        ("chunk_index", "INTEGER NOT NULL"), ("chunk_start", "INTEGER NOT NULL"), ("chunk_end", "INTEGER NOT NULL"),
        ("text", "TEXT NOT NULL"), ("cut", "TEXT NOT NULL"), ("oversized", "INTEGER NOT NULL"),
    ),
    "items": (
        ("item_id", "TEXT NOT NULL PRIMARY KEY"), ("chunk_id", "TEXT NOT NULL"), ("system", "TEXT NOT NULL"),
        ("replicates", "INTEGER NOT NULL"), ("n_mentions", "INTEGER NOT NULL"), ("is_control", "INTEGER NOT NULL"),
    ),
    "tasks": (
        ("task_key", "TEXT NOT NULL PRIMARY KEY"), ("worker", "TEXT NOT NULL"), ("position", "INTEGER NOT NULL"),
        ("batch", "INTEGER NOT NULL"), ("item_id", "TEXT NOT NULL"), ("replicate", "INTEGER NOT NULL"),
        ("chunk_id", "TEXT NOT NULL"), ("system", "TEXT NOT NULL"), ("is_control", "INTEGER NOT NULL"),
    ),
    "prefill": (
        ("task_key", "TEXT NOT NULL"), ("ord", "INTEGER NOT NULL"), ("mention_id", "TEXT NOT NULL UNIQUE"),
        ("start", "INTEGER NOT NULL"), ("end", "INTEGER NOT NULL"), ("doc_start", "INTEGER NOT NULL"),
        ("doc_end", "INTEGER NOT NULL"), ("surface", "TEXT"), ("link", "TEXT"), ("is_nil", "INTEGER NOT NULL"),
        ("expected_outcome", "TEXT"), ("expected_link", "TEXT"),
    ),
}

INDEXES = (
    "CREATE UNIQUE INDEX documents_key ON documents(dataset, doc_id)",
    "CREATE INDEX source_mentions_doc ON source_mentions(dataset, doc_id, system)",
    "CREATE UNIQUE INDEX tasks_order ON tasks(worker, position)",
    "CREATE INDEX tasks_item ON tasks(item_id)",
    "CREATE UNIQUE INDEX prefill_task ON prefill(task_key, ord)",
)

BOOLEAN_COLUMNS = frozenset({"is_nil", "oversized", "is_control"})


def _schema() -> list[str]:
    statements = ["CREATE TABLE meta (key TEXT NOT NULL PRIMARY KEY, value TEXT NOT NULL)"]
    for name, columns in TABLES.items():
        body = ", ".join(f'"{column}" {kind}' for column, kind in columns)
        statements.append(f"CREATE TABLE {name} ({body})")
    return [*statements, *INDEXES]


def _python(value: Any) -> Any:
    """A value sqlite3 can bind: numpy scalars to Python, NA to None."""
    if value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value)):
        return None
    if isinstance(value, np.bool_ | bool):
        return int(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    return value


def _rows(frame: pd.DataFrame, columns: Sequence[str]) -> Iterator[tuple[Any, ...]]:
    arrays = [frame[c].to_numpy(dtype=object) for c in columns]
    for values in zip(*arrays, strict=True):
        yield tuple(_python(v) for v in values)


def write_database(path: str | os.PathLike[str], meta: Mapping[str, str], tables: Mapping[str, pd.DataFrame]) -> None:
    """Write ``meta`` and every table of :data:`TABLES` (rows in the frames' order) to ``path`` atomically."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f".{target.name}.", dir=target.parent) as scratch:
        build = Path(scratch) / "build.sqlite"
        final = Path(scratch) / "final.sqlite"
        connection = sqlite3.connect(build)
        try:
            connection.execute("PRAGMA journal_mode = OFF")
            connection.execute("PRAGMA synchronous = OFF")
            for statement in _schema():
                connection.execute(statement)
            connection.executemany("INSERT INTO meta VALUES (?, ?)", sorted(meta.items()))
            for name, columns in TABLES.items():
                names = [c for c, _ in columns]
                marks = ", ".join("?" * len(names))
                quoted = ", ".join(f'"{c}"' for c in names)
                connection.executemany(f"INSERT INTO {name} ({quoted}) VALUES ({marks})",  # noqa: S608
                                       _rows(tables[name], names))
            connection.commit()
            connection.execute("VACUUM INTO ?", (str(final),))
        finally:
            connection.close()
        with open(final, "rb+") as handle:
            os.fsync(handle.fileno())
        os.replace(final, target)


class Reader:
    """Read-only access to a manifest file: one ``sqlite3`` connection per thread."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()

    def connection(self) -> sqlite3.Connection:
        connection = getattr(self._local, "connection", None)
        if connection is None:
            connection = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True,
                                         check_same_thread=False)
            self._local.connection = connection
        return connection

    def close(self) -> None:
        connection = getattr(self._local, "connection", None)
        if connection is not None:
            connection.close()
            self._local.connection = None

    def meta(self) -> dict[str, str]:
        return dict(self.connection().execute("SELECT key, value FROM meta").fetchall())

    def frame(self, query: str, params: Sequence[Any] = ()) -> pd.DataFrame:
        """The result of ``query`` as a DataFrame; boolean columns as ``bool``, integers as ``int64``."""
        cursor = self.connection().execute(query, tuple(params))
        names = [d[0] for d in cursor.description]
        rows = cursor.fetchall()
        frame = pd.DataFrame.from_records(rows, columns=names, coerce_float=False)
        for name in names:
            if name in BOOLEAN_COLUMNS:
                frame[name] = frame[name].astype(bool)
            elif len(frame) == 0:
                frame[name] = frame[name].astype(object)
            elif frame[name].dtype.kind in "iu":
                frame[name] = frame[name].astype("int64")
            else:
                frame[name] = frame[name].astype(object).where(frame[name].notna(), None)
        return frame

    def row(self, query: str, params: Sequence[Any] = ()) -> dict[str, Any] | None:
        cursor = self.connection().execute(query, tuple(params))
        found = cursor.fetchone()
        if found is None:
            return None
        return {d[0]: (bool(v) if d[0] in BOOLEAN_COLUMNS else v) for d, v in zip(cursor.description, found,
                                                                                   strict=True)}


def is_sqlite(path: Path) -> bool:
    """Whether ``path`` starts with the SQLite header."""
    with contextlib.suppress(OSError), path.open("rb") as handle:
        return handle.read(16) == b"SQLite format 3\x00"
    return False
