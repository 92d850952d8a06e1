"""The webhook event store: an append-only SQLite table of annotation events.

Label Studio posts ``ANNOTATION_CREATED`` / ``ANNOTATION_UPDATED`` (``{"action", "annotation":
{id, result, completed_by, created_at, updated_at, lead_time, was_cancelled, task, ...}, "task":
{id, data, ...}, "project": {id, title, ...}}``) and ``ANNOTATIONS_DELETED`` (``{"action",
"annotations": [{"id"}], "project"}``) to ``<backend>/webhook`` once the backend is connected, when the study
keeps the webhook (``posthoc study create --webhook``; by default it has none, and ``posthoc study status`` reads
Label Studio's API instead).
One row is stored per annotation event, idempotent on ``(action, annotation_id, updated_at)``
(a retried webhook is stored once). Only the fields below are kept: never the payload itself,
so no token, password or user e-mail of the project serializer ends up in the store.

Label Studio sends a webhook inside the annotator's Submit request (no Redis in the open-source server), so
``/webhook`` does no database work: :meth:`EventStore.append` checks the payload, extracts its rows and
appends them as one JSON line to the *inbox* beside the database (``<db>.inbox``, one ``write`` with
``O_APPEND``: well under a millisecond). Readers call :meth:`EventStore.events`, which first moves the
inbox's complete lines into SQLite (:meth:`EventStore.ingest`, one transaction, the read offset kept in the
database, so each line is ingested once even with several readers) and empties the inbox once all of it is
in. A line a writer has not finished is left for the next reader.

Columns of :meth:`EventStore.events`
------------------------------------
``seq, received_at, action, project_id, project_title, task_id, task_key, annotation_id,
completed_by, created_at, updated_at, lead_time, was_cancelled, regions`` where ``regions`` is a
JSON list of ``{id, start, end, labels, decision, choices: {from_name: [...]}, texts:
{from_name: [...]}}``, one element per result id (a pre-filled region's id is the manifest's
``mention_id``); ``decision`` is the region's verify / edit / remove choice (``None`` if unset).
"""

from __future__ import annotations

import fcntl
import json
import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

import pandas as pd

from posthoc.errors import PosthocInputError
from posthoc.labelstudio import records as ls
from posthoc.labelstudio.payloads import TASK_KEY_FIELD, RequestError
from posthoc.labelstudio.regions import parse_regions

RECORDED_ACTIONS: Final = ("ANNOTATION_CREATED", "ANNOTATION_UPDATED", "ANNOTATIONS_DELETED")
EVENT_COLUMNS: Final = (
    "seq", "received_at", "action", "project_id", "project_title", "task_id", "task_key", "annotation_id",
    "completed_by", "created_at", "updated_at", "lead_time", "was_cancelled", "regions",
)
_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    received_at TEXT NOT NULL,
    action TEXT NOT NULL,
    project_id INTEGER,
    project_title TEXT,
    task_id INTEGER,
    task_key TEXT,
    annotation_id INTEGER NOT NULL,
    completed_by INTEGER,
    created_at TEXT,
    updated_at TEXT NOT NULL,
    lead_time REAL,
    was_cancelled INTEGER NOT NULL DEFAULT 0,
    regions TEXT NOT NULL DEFAULT '[]',
    UNIQUE (action, annotation_id, updated_at)
);
CREATE INDEX IF NOT EXISTS events_annotation ON events (annotation_id);
CREATE TABLE IF NOT EXISTS inbox_offset (id INTEGER PRIMARY KEY CHECK (id = 1), offset INTEGER NOT NULL);
INSERT OR IGNORE INTO inbox_offset (id, offset) VALUES (1, 0);
"""
_INSERT: Final = (
    "INSERT OR IGNORE INTO events (received_at, action, project_id, project_title, task_id, task_key, "
    "annotation_id, completed_by, created_at, updated_at, lead_time, was_cancelled, regions) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def _int_or_none(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, dict):  # an expanded user / task / project
        return _int_or_none(ls.record_id(value))
    return None


def _str_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None


def regions_of(result: object) -> list[dict[str, Any]]:
    """Per-region decisions of an annotation's result list (see the module docstring)."""
    return [{"id": region.id, "start": region.start, "end": region.end, "labels": list(region.labels),
             "decision": region.decision, "choices": {tag: list(values) for tag, values in region.choices.items()},
             "texts": {tag: list(values) for tag, values in region.texts.items()}}
            for region in parse_regions(result) if region.id is not None and region.has_value]


def _now() -> str:
    return datetime.now(UTC).isoformat()


def event_rows(payload: ls.WebhookPayload, *, received: str) -> list[tuple[Any, ...]]:
    """The rows of one webhook payload (none for actions that are not annotation events), checked.

    Raises :class:`RequestError` (a 400 reply) when an annotation event lacks its annotation id.
    """
    action = ls.webhook_action(payload)
    if not isinstance(action, str):
        raise RequestError("webhook payload needs an 'action' string", field="action")
    if action not in RECORDED_ACTIONS:
        return []
    project = ls.webhook_project(payload)
    project_id = _int_or_none(project)
    project_title = _str_or_none(ls.project_title(project)) if isinstance(project, dict) else None
    rows: list[tuple[Any, ...]] = []
    if action == "ANNOTATIONS_DELETED":
        deleted = ls.webhook_deleted_annotations(payload)
        if not isinstance(deleted, list):
            raise RequestError("ANNOTATIONS_DELETED needs an 'annotations' list", field="annotations")
        for index, item in enumerate(deleted):
            annotation_id = _int_or_none(item)
            if annotation_id is None:
                raise RequestError(f"annotations[{index}] needs an integer id", field=f"annotations[{index}].id")
            rows.append((received, action, project_id, project_title, None, None, annotation_id,
                         None, None, "", None, 0, "[]"))
    else:
        annotation = ls.webhook_annotation(payload)
        if not isinstance(annotation, dict) or _int_or_none(ls.record_id(annotation)) is None:
            raise RequestError(f"{action} needs an 'annotation' object with an integer id", field="annotation.id")
        task = ls.webhook_task(payload) if isinstance(ls.webhook_task(payload), dict) else {}
        assert isinstance(task, dict)
        data = ls.task_data(task) if isinstance(ls.task_data(task), dict) else {}
        assert isinstance(data, dict)
        lead_time = ls.lead_time(annotation)
        rows.append((
            received, action,
            project_id if project_id is not None else _int_or_none(ls.annotation_project(annotation)),
            project_title,
            _int_or_none(task) if task else _int_or_none(ls.annotation_task(annotation)),
            _str_or_none(data.get(TASK_KEY_FIELD)),
            _int_or_none(ls.record_id(annotation)),
            _int_or_none(ls.completed_by(annotation)),
            _str_or_none(ls.created_at(annotation)),
            _str_or_none(ls.updated_at(annotation)) or _str_or_none(ls.created_at(annotation)) or "",
            float(lead_time) if isinstance(lead_time, int | float) and not isinstance(lead_time, bool) else None,
            1 if ls.was_cancelled(annotation, strict=True) else 0,
            json.dumps(regions_of(ls.result_items(annotation)), ensure_ascii=False),
        ))
    return rows


class EventStore:
    """The SQLite event store at ``path`` (created on first use; WAL, safe for several gunicorn workers)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._handle: int | None = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self._connect() as connection:
                connection.executescript(_SCHEMA)
        except (OSError, sqlite3.DatabaseError) as exc:
            raise PosthocInputError(
                f"event store {self.path}: cannot use it ({exc}); give a writable path for a new or existing "
                "posthoc events database"
            ) from None

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        connection = sqlite3.connect(self.path, timeout=30)
        try:
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA busy_timeout=30000")
            with connection:
                yield connection
        finally:
            connection.close()

    @property
    def inbox(self) -> Path:
        """The append-only file ``/webhook`` writes to (``<db>.inbox``)."""
        return self.path.with_name(self.path.name + ".inbox")

    def record(self, payload: ls.WebhookPayload) -> int:
        """Store the annotation events of one webhook payload now; the number of new rows (0 for other actions).

        Raises :class:`RequestError` (a 400 reply) when an annotation event lacks its annotation id.
        """
        rows = event_rows(payload, received=_now())
        if not rows:
            return 0
        with self._connect() as connection:
            before = connection.total_changes
            connection.executemany(_INSERT, rows)
            return connection.total_changes - before

    def append(self, payload: ls.WebhookPayload) -> int:
        """Check one webhook payload and append its rows to the inbox (no database work); the rows queued.

        Raises :class:`RequestError` like :meth:`record`. Safe from several threads and processes.
        """
        rows = event_rows(payload, received=_now())
        if not rows:
            return 0
        line = (json.dumps(rows, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
        handle = self._inbox_handle()
        fcntl.flock(handle, fcntl.LOCK_SH)  # shared among writers; the ingester empties the inbox exclusively
        try:
            os.write(handle, line)  # one write with O_APPEND: lines of concurrent writers never interleave
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
        return len(rows)

    def _inbox_handle(self) -> int:
        with self._lock:
            if self._handle is None:
                self._handle = os.open(self.inbox, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            return self._handle

    def ingest(self) -> int:
        """Move the inbox's complete lines into the database; the number of new rows. The inbox is emptied when
        everything in it is in the database and no writer is appending."""
        if not self.inbox.is_file():
            return 0
        with self._connect() as connection:
            connection.execute("BEGIN IMMEDIATE")  # one ingester at a time
            offset = int(connection.execute("SELECT offset FROM inbox_offset WHERE id = 1").fetchone()[0])
            with self.inbox.open("rb") as handle:
                size = os.fstat(handle.fileno()).st_size
                if offset > size:  # emptied after the offset was committed, before it was reset
                    offset = 0
                handle.seek(offset)
                chunk = handle.read(size - offset)
            complete = chunk[:chunk.rfind(b"\n") + 1]
            before = connection.total_changes
            for line in complete.splitlines():
                try:
                    rows = json.loads(line)
                except ValueError:
                    continue  # not a line this store wrote; skipped, never fatal
                connection.executemany(_INSERT, [tuple(row) for row in rows])
            added = connection.total_changes - before
            offset += len(complete)
            connection.execute("UPDATE inbox_offset SET offset = ? WHERE id = 1", (offset,))
        self._empty_inbox(offset)
        return added

    def _empty_inbox(self, offset: int) -> None:
        """Truncate the inbox if all of it (``offset`` bytes) is in the database and no writer holds it."""
        try:
            descriptor = os.open(self.inbox, os.O_RDWR)
        except OSError:
            return
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(descriptor)
            return
        try:
            if os.fstat(descriptor).st_size == offset and offset > 0:
                os.ftruncate(descriptor, 0)
                with self._connect() as connection:
                    connection.execute("UPDATE inbox_offset SET offset = 0 WHERE id = 1")
        finally:
            fcntl.flock(descriptor, fcntl.LOCK_UN)
            os.close(descriptor)

    def events(self) -> pd.DataFrame:
        """Every stored event, in arrival order (columns: :data:`EVENT_COLUMNS`); the inbox is ingested first."""
        self.ingest()
        with self._connect() as connection:
            query = f"SELECT {', '.join(EVENT_COLUMNS)} FROM events ORDER BY seq"  # noqa: S608 (constant names)
            rows = connection.execute(query).fetchall()
        return pd.DataFrame(rows, columns=list(EVENT_COLUMNS))


def current_annotations(events: pd.DataFrame) -> pd.DataFrame:
    """The annotations that exist now: the last create / update event of each annotation not deleted since.

    Columns: ``annotation_id, project_id, project_title, task_id, task_key, completed_by, created_at,
    updated_at, lead_time, was_cancelled, regions`` (``regions`` decoded to a list).
    """
    columns = ["annotation_id", "project_id", "project_title", "task_id", "task_key", "completed_by",
               "created_at", "updated_at", "lead_time", "was_cancelled", "regions"]
    if events.empty:
        return pd.DataFrame({c: pd.Series(dtype="object") for c in columns})
    deleted_at = events[events["action"] == "ANNOTATIONS_DELETED"].groupby("annotation_id")["seq"].max()
    writes = events[events["action"] != "ANNOTATIONS_DELETED"].sort_values(["updated_at", "seq"])
    latest = writes.groupby("annotation_id", sort=False).tail(1)
    alive = latest[latest["seq"] > latest["annotation_id"].map(deleted_at).fillna(-1)]
    alive = alive.assign(regions=alive["regions"].map(json.loads), was_cancelled=alive["was_cancelled"].astype(bool))
    return alive[columns].sort_values("annotation_id").reset_index(drop=True)
