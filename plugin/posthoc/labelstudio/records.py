"""Label Studio's task, annotation, region and webhook JSON, read: the one place that knows its keys.

Every reader of Label Studio JSON outside ``posthoc.labelstudio`` (export flattening, CrowdTruth and
rating exports, Eaglet review, study progress and the webhook store) goes through these accessors; the
writing side (prediction result lists) is :mod:`posthoc.labelstudio.payloads`. The accessors read, they do
not validate: each returns the value as Label Studio stored it (or the stated empty default), and the
readers keep their own checks and error messages at the edge. tests/architecture checks that no module
outside ``posthoc/labelstudio`` indexes these keys itself.

The shapes, as Label Studio 1.23 answers them (docs/label-studio-1.23.md, "Export"):

- a **task** (JSON export ``/api/projects/<id>/export?exportType=JSON``, snapshot export, ``/api/tasks``):
  ``{id, data: {...}, project, annotations: [...], predictions: [...], drafts: [...], ...}``; the plain
  export lists prediction ids only, the snapshot export full predictions, expanded users and drafts;
- an **annotation**: ``{id, result: [...], completed_by, was_cancelled, lead_time, created_at,
  updated_at, draft_created_at, parent_prediction, prediction: {...}, task, project, ...}`` where
  ``completed_by`` is a user id, or ``{id, email, username, first_name, ...}`` when the export expands
  users (``annotations__completed_by: {only_id: false}``);
- a **prediction** ``{id, result: [...], model_version, score, task, ...}`` and a **draft**
  ``{id, user, result: [...], ...}``;
- a **result item** (a region, or one control's value on it; items of one region share its ``id``):
  ``{id, type: "labels" | "choices" | "textarea" | "number" | "relation" | ..., from_name, to_name,
  origin, value: {start, end, text, labels | choices | text | number}, meta}``;
- a **webhook payload** posted to ``<backend>/webhook``: ``{action: "ANNOTATION_CREATED" |
  "ANNOTATION_UPDATED", annotation: {...}, task: {id, data, ...}, project: {id, title, ...}}`` or
  ``{action: "ANNOTATIONS_DELETED", annotations: [{id}], project}``.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from typing import Any

Record = Mapping[str, Any]

# ---- any record (task, annotation, prediction, draft, region, project) ---------------------------------------


def record_id(record: Record) -> Any:
    """The ``id`` of a task, annotation, prediction, draft, project or result item (``None`` if absent)."""
    return record.get("id")


# ---- tasks ----------------------------------------------------------------------------------------------------


def task_data(task: Record) -> Any:
    """A task's ``data`` object (the imported fields, e.g. ``task_key``, ``text``); ``{}`` when absent or empty.

    Returned as stored: a reader that needs a mapping checks the type itself."""
    return task.get("data") or {}


def task_annotations(task: Record) -> Any:
    """A task's ``annotations`` list (submitted and skipped), ``[]`` when absent or ``null``."""
    return task.get("annotations") or []


def task_predictions(task: Record) -> Any:
    """A task's ``predictions`` list (full objects in a snapshot export, ids in the plain one), ``[]`` if none."""
    return task.get("predictions") or []


def listed_predictions(task: Record) -> list[Any] | None:
    """A task's ``predictions`` as a listing gave them, ``None`` when the listing left them out (no ``include=``)."""
    listed = task.get("predictions")
    return listed if isinstance(listed, list) else None


def task_drafts(task: Record) -> Any:
    """A task's ``drafts`` list (unsubmitted work; the snapshot export with ``drafts: {only_id: false}``)."""
    return task.get("drafts") or []


def task_project(task: Record, default: Any = None) -> Any:
    """The project id of a task (``project``), ``default`` when the answer has none."""
    return task.get("project", default)


# ---- annotations, predictions and drafts ----------------------------------------------------------------------


def result_items(record: Record) -> Any:
    """The ``result`` list of an annotation, prediction or draft (its result items), ``[]`` if absent or ``null``."""
    return record.get("result") or []


def completed_by(annotation: Record) -> Any:
    """An annotation's ``completed_by``: a user id, or the user object when the export expands users."""
    return annotation.get("completed_by")


def user_id(user: Any) -> Any:
    """The id of a ``completed_by`` value: ``user["id"]`` of an expanded user, else the value itself."""
    return user.get("id") if isinstance(user, Mapping) else user


def user_email(user: Any) -> Any:
    """The ``email`` of an expanded ``completed_by`` user; ``None`` for a bare id."""
    return user.get("email") if isinstance(user, Mapping) else None


def user_name(user: Any) -> str:
    """The first non-empty of an expanded user's ``email``, ``username``, ``id``; else ``str(user)``."""
    if isinstance(user, Mapping):
        for key in ("email", "username", "id"):
            if user.get(key) not in (None, ""):
                return str(user[key])
    return str(user)


def expand_completed_by(annotation: MutableMapping[str, Any], emails: Mapping[int, str]) -> None:
    """Replace a bare integer ``completed_by`` known in ``emails`` by ``{id, email}``, as an export with
    expanded users has it (so one reader serves both exports)."""
    who = annotation.get("completed_by")
    if isinstance(who, int) and who in emails:
        annotation["completed_by"] = {"id": who, "email": emails[who]}


def was_cancelled(annotation: Record, *, strict: bool = False) -> bool:
    """Whether an annotation was skipped (``was_cancelled``): any true value, or only JSON ``true`` with
    ``strict`` (the webhook store's reading)."""
    value = annotation.get("was_cancelled")
    return value is True if strict else bool(value)


def lead_time(annotation: Record) -> Any:
    """An annotation's ``lead_time`` (seconds spent, a float in Label Studio's answers), ``None`` if absent."""
    return annotation.get("lead_time")


def created_at(record: Record) -> Any:
    """``created_at`` of an annotation (ISO 8601 text, e.g. ``2026-01-01T00:00:00.123456Z``), ``None`` if absent."""
    return record.get("created_at")


def updated_at(record: Record) -> Any:
    """``updated_at`` of an annotation (ISO 8601 text), ``None`` if absent."""
    return record.get("updated_at")


def last_changed_at(annotation: Record) -> Any:
    """``updated_at``, else ``created_at`` (an annotation never updated may lack the first), else ``None``."""
    return annotation.get("updated_at") or annotation.get("created_at")


def annotation_prediction(annotation: Record) -> Any:
    """The prediction object an exported annotation embeds (``prediction``: what it started from), or ``None``."""
    return annotation.get("prediction")


def parent_prediction(annotation: Record) -> Any:
    """The id of the prediction an annotation started from (``parent_prediction``), or ``None``."""
    return annotation.get("parent_prediction")


def annotation_task(annotation: Record) -> Any:
    """The ``task`` of an annotation (an id, or the task object in some webhook payloads), or ``None``."""
    return annotation.get("task")


def annotation_project(annotation: Record) -> Any:
    """The ``project`` of an annotation (an id), or ``None``."""
    return annotation.get("project")


def draft_user(draft: Record) -> Any:
    """The ``user`` (id) a draft belongs to."""
    return draft.get("user")


# ---- result items (regions) ---------------------------------------------------------------------------------


def region_id(item: Record) -> Any:
    """The ``id`` of a result item: shared by all items of one region (a pre-filled region's: the mention id)."""
    return item.get("id")


def region_type(item: Record) -> Any:
    """The ``type`` of a result item: ``labels``, ``choices``, ``textarea``, ``number``, ``relation``, ..."""
    return item.get("type")


def region_from_name(item: Record, default: Any = None) -> Any:
    """The ``from_name`` of a result item: the control tag (``Labels``, ``Choices``, ``TextArea``) that made it;
    ``default`` when the item has none."""
    return item.get("from_name", default)


def region_to_name(item: Record) -> Any:
    """The ``to_name`` of a result item: the object tag (``Text``) it marks."""
    return item.get("to_name")


def region_value(item: Record) -> Any:
    """The ``value`` object of a result item (``{start, end, text, labels | choices | text | number}``),
    ``None`` if absent (a reader checks its type)."""
    return item.get("value")


def _value(item: Record) -> Any:
    return region_value(item) or {}


def region_labels(item: Record) -> list[Any]:
    """``value.labels`` of a ``labels`` item (``[]`` when absent)."""
    return list(_value(item).get("labels") or [])


def region_choices(item: Record) -> list[Any]:
    """``value.choices`` of a ``choices`` item (``[]`` when absent)."""
    return list(_value(item).get("choices") or [])


def region_texts(item: Record) -> Any:
    """``value.text`` of an item: a list of strings for a ``textarea``, the marked span (a string) for
    ``labels``; ``[]`` when absent."""
    return _value(item).get("text") or []


def region_number(item: Record) -> Any:
    """``value.number`` of a ``number`` item (a rating), ``None`` when absent."""
    return _value(item).get("number")


def answer_predictions(answer: Record) -> Any:
    """The prediction list of an ML backend's ``predict`` answer given as a mapping: ``predictions``
    (label-studio-ml 2's ``ModelResponse`` as a dict), else ``results`` (the ``/predict`` reply), else ``None``."""
    return answer.get("predictions", answer.get("results"))


# ---- webhook payloads -----------------------------------------------------------------------------------------


def webhook_action(payload: Record) -> Any:
    """A webhook payload's ``action`` (``ANNOTATION_CREATED``, ``ANNOTATION_UPDATED``, ``ANNOTATIONS_DELETED``, ...)."""
    return payload.get("action")


def webhook_annotation(payload: Record) -> Any:
    """The ``annotation`` object of an ``ANNOTATION_CREATED`` / ``ANNOTATION_UPDATED`` payload."""
    return payload.get("annotation")


def webhook_deleted_annotations(payload: Record) -> Any:
    """The ``annotations`` list (``[{id}]``) of an ``ANNOTATIONS_DELETED`` payload."""
    return payload.get("annotations")


def webhook_task(payload: Record) -> Any:
    """The ``task`` object (``{id, data, ...}``) of an annotation payload."""
    return payload.get("task")


def webhook_project(payload: Record) -> Any:
    """The ``project`` object (``{id, title, ...}``) of a payload."""
    return payload.get("project")


def project_title(project: Record) -> Any:
    """A project object's ``title``."""
    return project.get("title")
