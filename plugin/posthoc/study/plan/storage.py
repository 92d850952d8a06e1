"""The one module that knows how a study manifest is stored: a single SQLite file (stdlib ``sqlite3``).

The file is written once, atomically and deterministically: a fresh file in a temporary folder
beside the target gets the tables (rows in a fixed order, without a rollback journal), then the
indexes (built after the rows: one sort instead of random inserts), and is renamed over the target.
No timestamps are stored in a plan, so the same plan gives a byte-identical file (with the same SQLite
library). A revision (``posthoc study extend`` / ``reassign``) writes the whole file again the same way, its
``revisions`` row holding its UTC time. Readers open it read-only, one connection per thread.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from posthoc.lazy import PerThread

if TYPE_CHECKING:  # pandas is imported where a table is read or written: opening a manifest needs none (issue 24)
    import pandas as pd

FORMAT = "posthoc-study-manifest"
VERSION = "1"

#: the SQL types of the columns of :data:`TABLES`, by their short names
_KINDS = {"key": "TEXT NOT NULL PRIMARY KEY", "text": "TEXT NOT NULL", "text?": "TEXT", "int": "INTEGER NOT NULL",
          "int?": "INTEGER"}


def _columns(spec: str) -> tuple[tuple[str, str], ...]:
    """``"name:kind name:kind ..."`` (kinds of :data:`_KINDS`) as ``(column, SQL type)`` pairs."""
    return tuple((name, _KINDS[kind]) for name, kind in (item.split(":") for item in spec.split()))


#: table name -> (column, SQL type) in storage order; booleans are INTEGER 0/1
TABLES: dict[str, tuple[tuple[str, str], ...]] = {
    "workers": _columns("worker:key ord:int"),
    "documents": _columns("dataset:text doc_id:text text:text"),
    "source_mentions": _columns("dataset:text doc_id:text system:text start:int end:int surface:text? link:text? "
                                "link_original:text? is_nil:int"),
    "chunks": _columns("chunk_id:key dataset:text doc_id:text chunk_index:int chunk_start:int chunk_end:int "
                       "text:text cut:text oversized:int"),
    "items": _columns("item_id:key chunk_id:text system:text replicates:int n_mentions:int is_control:int"),
    "tasks": _columns("task_key:key worker:text position:int batch:int item_id:text replicate:int chunk_id:text "
                      "system:text is_control:int"),
    "prefill": _columns("task_key:text ord:int mention_id:text start:int end:int doc_start:int doc_end:int "
                        "surface:text? link:text? is_nil:int expected_outcome:text? expected_link:text?"),
    # revisions after the plan (posthoc.study.plan.revision): none in a fresh plan, so a plan's bytes do not
    # depend on when it was made; a manifest written before these tables existed reads as revision 0 throughout
    "revisions": _columns("number:key kind:text created:text parameters:text digest:text"),
    # only the tasks that differ from the plan's defaults (revision 0, not withdrawn)
    "task_revisions": _columns("task_key:key revision:int withdrawn_in:int? withdrawn_reason:text?"),
    # every annotation of a system added after the plan (posthoc study add-system, issue 46): document offsets,
    # its chunk (none when it lies in no stored chunk), reused / sampled / unsampled / unplaced, the study systems
    # whose judged annotation it equals, whether its chunk was sampled
    "added_annotations": _columns("revision:int system:text dataset:text doc_id:text start:int end:int surface:text? "
                                  "link:text? link_original:text? is_nil:int chunk_id:text? status:text "
                                  "reused_from:text? chunk_sampled:int"),
}

#: tables a manifest written before revisions (or added systems) existed lacks (read as empty)
REVISION_TABLES = ("revisions", "task_revisions", "added_annotations")

INDEXES = (
    "CREATE UNIQUE INDEX documents_key ON documents(dataset, doc_id)",
    "CREATE UNIQUE INDEX tasks_order ON tasks(worker, position)",
    "CREATE INDEX tasks_item ON tasks(item_id)",
    "CREATE UNIQUE INDEX prefill_task ON prefill(task_key, ord)",
)

BOOLEAN_COLUMNS = frozenset({"is_nil", "oversized", "is_control", "chunk_sampled"})


def _schema() -> tuple[list[str], list[str]]:
    """``(CREATE TABLE statements, CREATE INDEX statements)``; keys become unique indexes made after the rows."""
    statements = ["CREATE TABLE meta (key TEXT NOT NULL PRIMARY KEY, value TEXT NOT NULL)"]
    indexes: list[str] = []
    for name, columns in TABLES.items():
        body = ", ".join(f'"{column}" {kind.replace(" PRIMARY KEY", "").replace(" UNIQUE", "")}'
                         for column, kind in columns)
        statements.append(f"CREATE TABLE {name} ({body})")
        for column, kind in columns:
            if "PRIMARY KEY" in kind or "UNIQUE" in kind:
                indexes.append(f'CREATE UNIQUE INDEX {name}_{column} ON {name}("{column}")')
    return statements, [*indexes, *INDEXES]


def _column(frame: pd.DataFrame, name: str, kind: str) -> list[Any]:
    """One column as a list of Python values sqlite3 binds directly (NA -> None, booleans -> 0/1)."""
    from posthoc.study.plan._columns import object_values

    series = frame[name]
    if kind.startswith("INTEGER"):
        if series.dtype == bool or name in BOOLEAN_COLUMNS:
            return series.astype(bool).astype("int64").tolist()
        if "NOT NULL" not in kind:
            return [None if v is None or v != v else int(v) for v in series.astype(object).tolist()]
        return series.astype("int64").tolist()
    return [None if v is None else str(v) for v in object_values(series)]


def _rows(frame: pd.DataFrame, columns: Sequence[tuple[str, str]]) -> Iterator[tuple[Any, ...]]:
    return zip(*(_column(frame, name, kind) for name, kind in columns), strict=True)


def file_sha256(path: Path) -> str:
    """SHA-256 of a file's bytes (hex)."""
    hasher = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            hasher.update(block)
    return hasher.hexdigest()


def write_database(path: str | os.PathLike[str], meta: Mapping[str, str], tables: Mapping[str, pd.DataFrame],
                   *, replace: Callable[[Path], bool] | None = None) -> bool:
    """Write ``meta`` and every table of :data:`TABLES` (rows in the frames' order) to ``path`` atomically.

    The file is built beside ``path``; ``replace(built_file)`` (if given) decides whether it is renamed
    over ``path`` (``True``) or discarded (``False``, e.g. an existing file has the same bytes). Returns
    whether ``path`` was written.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f".{target.name}.", dir=target.parent) as scratch:
        build = Path(scratch) / "build.sqlite"
        connection = sqlite3.connect(build)
        try:
            connection.execute("PRAGMA journal_mode = OFF")
            connection.execute("PRAGMA synchronous = OFF")
            connection.execute("PRAGMA cache_size = -65536")  # up to 64 MB of page cache while building
            tables_ddl, indexes_ddl = _schema()
            for statement in tables_ddl:
                connection.execute(statement)
            connection.executemany("INSERT INTO meta VALUES (?, ?)", sorted(meta.items()))
            for name, columns in TABLES.items():
                marks = ", ".join("?" * len(columns))
                quoted = ", ".join(f'"{c}"' for c, _ in columns)
                connection.executemany(f"INSERT INTO {name} ({quoted}) VALUES ({marks})",  # noqa: S608
                                       _rows(tables[name], columns))
            for statement in indexes_ddl:  # indexes after the rows: one sort instead of random inserts
                connection.execute(statement)
            connection.commit()
        finally:
            connection.close()
        if replace is not None and not replace(build):
            return False
        with open(build, "rb+") as handle:
            os.fsync(handle.fileno())
        os.replace(build, target)
        return True


class Reader:
    """Read-only access to a manifest file: one ``sqlite3`` connection per thread."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.connection = PerThread(lambda: sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True,
                                                            check_same_thread=False))

    def close(self) -> None:
        """Close this thread's connection (the next query opens another)."""
        connection = self.connection.peek()
        if connection is not None:
            connection.close()
            self.connection.forget()

    def has_table(self, name: str) -> bool:
        """Whether the file holds table ``name`` (a manifest from before :data:`REVISION_TABLES` lacks them)."""
        query = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?"
        return self.connection().execute(query, (name,)).fetchone() is not None

    def meta(self) -> dict[str, str]:
        return dict(self.connection().execute("SELECT key, value FROM meta").fetchall())

    def frame(self, query: str, params: Sequence[Any] = ()) -> pd.DataFrame:
        """The result of ``query`` as a DataFrame; boolean columns as ``bool``, integers as ``int64``."""
        import pandas as pd

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
