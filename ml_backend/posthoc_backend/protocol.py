"""Validation of Label Studio's ML backend requests (the protocol of Label Studio 1.23).

What Label Studio sends (docs/label-studio-1.23.md, "ML backend protocol"):

- ``POST /setup`` ``{"project": "7.1796005017", "schema": <config>, "hostname", "access_token",
  "extra_params"}``; answered ``{"model_version": ...}``. The access token is never kept.
- ``POST /predict`` ``{"tasks": [<task>, ...], "project", "label_config", "params": {"context"}}``;
  answered ``{"results": [<prediction>, ...]}``, one element per task, in order.
  A task is ``{"id": int, "data": {"text": <chunk text>, "task_key": <opaque key>}, ...}``.
- ``POST /webhook`` ``{"action": "ANNOTATION_CREATED", "annotation": {...}, "task": {...},
  "project": {...}}``.

Every malformed request raises :class:`RequestError` (status, message, field), which the app
turns into a 4xx JSON body ``{"error": ..., "field": ...}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from posthoc.labelstudio import records as ls
from posthoc.labelstudio.payloads import MODEL_VERSION, TASK_KEY_FIELD, RequestError

__all__ = ["MODEL_VERSION", "TASK_KEY_FIELD", "RequestError"]


@dataclass(frozen=True)
class PredictRequest:
    """A ``/predict`` request: raw tasks (each checked later, one by one), project id and config."""

    tasks: list[object]
    project: str | None
    label_config: str | None
    #: ``params.context`` (interactive pre-annotation), handed to a live predictor as ``context=``
    context: object = None


@dataclass(frozen=True)
class TaskInput:
    """One task of a ``/predict`` batch: its place, Label Studio id, text and opaque key."""

    index: int
    task_id: int | None
    text: str
    task_key: str | None


def require_object(body: object) -> dict[str, object]:
    """``body`` if it is a JSON object, else :class:`RequestError`."""
    if not isinstance(body, dict):
        raise RequestError("the request body must be a JSON object", field=None)
    return body


def _optional_str(body: Mapping[str, object], key: str) -> str | None:
    value = body.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise RequestError(f"{key} must be a string", field=key)
    return str(value)


def parse_predict(body: object) -> PredictRequest:
    """Check the envelope of a ``/predict`` request (``tasks`` a non-empty list, ``label_config`` a string)."""
    payload = require_object(body)
    if "tasks" not in payload:
        raise RequestError("missing 'tasks': send {\"tasks\": [...]} as Label Studio does", field="tasks")
    tasks = payload["tasks"]
    if not isinstance(tasks, list):
        raise RequestError("'tasks' must be a list of tasks", field="tasks")
    if not tasks:
        raise RequestError("'tasks' is empty: send at least one task", field="tasks")
    config = payload.get("label_config")
    if config is not None and not isinstance(config, str):
        raise RequestError("'label_config' must be the project's label config (an XML string)", field="label_config")
    params = payload.get("params")
    context = params.get("context") if isinstance(params, dict) else None
    return PredictRequest(tasks=tasks, project=_optional_str(payload, "project"), label_config=config or None,
                          context=context)


def parse_task(task: object, index: int, *, text_key: str) -> TaskInput:
    """Check one task of a batch: ``data.<text_key>`` a string, ``data.task_key`` a string if present."""
    where = f"tasks[{index}]"
    if not isinstance(task, dict):
        raise RequestError(f"{where} must be a task object", field=where)
    task_id = ls.record_id(task)
    if task_id is not None and (isinstance(task_id, bool) or not isinstance(task_id, int)):
        raise RequestError(f"{where}.id must be an integer", field=f"{where}.id")
    data = ls.stored_task_data(task)
    if not isinstance(data, dict):
        raise RequestError(f"{where}.data must be an object holding the task data", field=f"{where}.data")
    text = data.get(text_key)
    if not isinstance(text, str):
        raise RequestError(
            f"{where}.data.{text_key} must be the text to annotate (a string)", field=f"{where}.data.{text_key}"
        )
    key = data.get(TASK_KEY_FIELD)
    if key is not None and not isinstance(key, str):
        raise RequestError(f"{where}.data.{TASK_KEY_FIELD} must be a string", field=f"{where}.data.{TASK_KEY_FIELD}")
    return TaskInput(index=index, task_id=task_id, text=text, task_key=key or None)


def parse_setup(body: object) -> tuple[str | None, str | None]:
    """``(project, schema)`` of a ``/setup`` request; the access token and hostname are ignored."""
    payload = require_object(body)
    schema = payload.get("schema")
    if schema is not None and not isinstance(schema, str):
        raise RequestError("'schema' must be the project's label config (an XML string)", field="schema")
    return _optional_str(payload, "project"), schema or None
