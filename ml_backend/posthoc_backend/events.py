"""The webhook event store: an append-only SQLite table of annotation events.

Label Studio posts ``ANNOTATION_CREATED`` / ``ANNOTATION_UPDATED`` (``{"action", "annotation":
{id, result, completed_by, created_at, updated_at, lead_time, was_cancelled, task, ...}, "task":
{id, data, ...}, "project": {id, title, ...}}``) and ``ANNOTATIONS_DELETED`` (``{"action",
"annotations": [{"id"}], "project"}``) to ``<backend>/webhook`` once the backend is connected.
One row is stored per annotation event, idempotent on ``(action, annotation_id, updated_at)``
(a retried webhook is stored once). Only the fields below are kept: never the payload itself,
so no token, password or user e-mail of the project serializer ends up in the store.

Columns of :meth:`EventStore.events`
------------------------------------
``seq, received_at, action, project_id, project_title, task_id, task_key, annotation_id,
completed_by, created_at, updated_at, lead_time, was_cancelled, regions`` where ``regions`` is a
JSON list of ``{id, start, end, labels, decision, choices: {from_name: [...]}, texts:
{from_name: [...]}}``, one element per result id (a pre-filled region's id is the manifest's
``mention_id``); ``decision`` is the region's verify / edit / remove choice (``None`` if unset).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

import pandas as pd

from posthoc.errors import PosthocInputError
from posthoc.tables import OUTCOMES
from posthoc_backend.protocol import TASK_KEY_FIELD, RequestError

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
"""


def _int_or_none(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, dict):  # an expanded user / task / project
        return _int_or_none(value.get("id"))
    return None


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def regions_of(result: Any) -> list[dict[str, Any]]:
    """Per-region decisions of an annotation's result list (see the module docstring)."""
    if not isinstance(result, list):
        return []
    regions: dict[str, dict[str, Any]] = {}
    for item in result:
        if not isinstance(item, dict) or item.get("type") == "relation":
            continue
        region_id = item.get("id")
        value = item.get("value")
        if region_id is None or not isinstance(value, dict):
            continue
        region = regions.setdefault(
            str(region_id),
            {"id": str(region_id), "start": None, "end": None, "labels": [], "decision": None,
             "choices": {}, "texts": {}},
        )
        for bound in ("start", "end"):
            if isinstance(value.get(bound), int) and not isinstance(value.get(bound), bool):
                region[bound] = value[bound]
        kind, from_name = item.get("type"), str(item.get("from_name", ""))
        if kind == "labels" and isinstance(value.get("labels"), list):
            region["labels"] = [str(v) for v in value["labels"]]
        elif kind == "choices" and isinstance(value.get("choices"), list):
            choices = [str(v) for v in value["choices"]]
            region["choices"][from_name] = choices
            decided = [c for c in choices if c in OUTCOMES]
            if decided and region["decision"] is None:
                region["decision"] = decided[0]
        elif kind == "textarea":
            text = value.get("text")
            region["texts"][from_name] = [str(v) for v in text] if isinstance(text, list) else [str(text)]
    for region in regions.values():  # entity_verification.xml: the decision is the region's label
        if region["decision"] is None:
            region["decision"] = next((v for v in region["labels"] if v in OUTCOMES), None)
    return list(regions.values())


def _now() -> str:
    return datetime.now(UTC).isoformat()


class EventStore:
    """The SQLite event store at ``path`` (created on first use; WAL, safe for several gunicorn workers)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
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

    def record(self, payload: Mapping[str, Any]) -> int:
        """Store the annotation events of one webhook payload; the number of new rows (0 for other actions).

        Raises :class:`RequestError` (a 400 reply) when an annotation event lacks its annotation id.
        """
        action = payload.get("action")
        if not isinstance(action, str):
            raise RequestError("webhook payload needs an 'action' string", field="action")
        if action not in RECORDED_ACTIONS:
            return 0
        project = payload.get("project")
        project_id = _int_or_none(project)
        project_title = _str_or_none(project.get("title")) if isinstance(project, dict) else None
        received = _now()
        rows: list[tuple[Any, ...]] = []
        if action == "ANNOTATIONS_DELETED":
            deleted = payload.get("annotations")
            if not isinstance(deleted, list):
                raise RequestError("ANNOTATIONS_DELETED needs an 'annotations' list", field="annotations")
            for index, item in enumerate(deleted):
                annotation_id = _int_or_none(item)
                if annotation_id is None:
                    raise RequestError(f"annotations[{index}] needs an integer id", field=f"annotations[{index}].id")
                rows.append((received, action, project_id, project_title, None, None, annotation_id,
                             None, None, "", None, 0, "[]"))
        else:
            annotation = payload.get("annotation")
            if not isinstance(annotation, dict) or _int_or_none(annotation.get("id")) is None:
                raise RequestError(f"{action} needs an 'annotation' object with an integer id", field="annotation.id")
            task = payload.get("task") if isinstance(payload.get("task"), dict) else {}
            assert isinstance(task, dict)
            data = task.get("data") if isinstance(task.get("data"), dict) else {}
            assert isinstance(data, dict)
            lead_time = annotation.get("lead_time")
            rows.append((
                received, action,
                project_id if project_id is not None else _int_or_none(annotation.get("project")),
                project_title,
                _int_or_none(task) if task else _int_or_none(annotation.get("task")),
                _str_or_none(data.get(TASK_KEY_FIELD)),
                _int_or_none(annotation.get("id")),
                _int_or_none(annotation.get("completed_by")),
                _str_or_none(annotation.get("created_at")),
                _str_or_none(annotation.get("updated_at")) or _str_or_none(annotation.get("created_at")) or "",
                float(lead_time) if isinstance(lead_time, int | float) and not isinstance(lead_time, bool) else None,
                1 if annotation.get("was_cancelled") is True else 0,
                json.dumps(regions_of(annotation.get("result")), ensure_ascii=False),
            ))
        with self._connect() as connection:
            before = connection.total_changes
            connection.executemany(
                "INSERT OR IGNORE INTO events (received_at, action, project_id, project_title, task_id, task_key, "
                "annotation_id, completed_by, created_at, updated_at, lead_time, was_cancelled, regions) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
            return connection.total_changes - before

    def events(self) -> pd.DataFrame:
        """Every stored event, in arrival order (columns: :data:`EVENT_COLUMNS`)."""
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
