"""Label Studio's task, annotation, region and webhook JSON, read: the one place that knows its keys.

Every reader of Label Studio JSON (the region parser :mod:`posthoc.labelstudio.regions`, the client's calls,
export flattening, CrowdTruth and rating exports, Eaglet review, study progress, the webhook store) goes through
these accessors and takes these types; the writing side is :mod:`posthoc.labelstudio.payloads`. The accessors
read, they do not validate: each returns the value as stored (or the stated empty default), and the readers
keep their own checks and error messages at the edge. tests/architecture checks that no other module (the rest
of ``posthoc/labelstudio`` included) indexes these keys itself.

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

from collections.abc import Iterable, Mapping, MutableMapping
from typing import Any, TypedDict, cast

Record = Mapping[str, Any]

# ---- the shapes (total=False: every key may be absent from one answer or another) ------------------------------


class User(TypedDict, total=False):
    """An expanded user (``completed_by`` of an export with ``annotations__completed_by: {only_id: false}``)."""

    id: int
    email: str
    username: str
    first_name: str
    last_name: str


#: ``completed_by``: a user id, or the expanded user
UserRef = int | User


class RegionValue(TypedDict, total=False):
    """A result item's ``value``: the span and one control's answer on it."""

    start: int
    end: int
    text: str | list[str]  # the marked span (labels), the typed lines (textarea)
    labels: list[str]
    choices: list[str]
    number: float


class ResultItem(TypedDict, total=False):
    """A result item: one region, or one control's value on it (the items of one region share ``id``)."""

    id: str
    type: str
    from_name: str
    to_name: str
    origin: str
    value: RegionValue
    meta: dict[str, Any]
    score: float


class Prediction(TypedDict, total=False):
    """A prediction (``model_version``, no score in ours)."""

    id: int
    result: list[ResultItem]
    model_version: str
    score: float
    task: int
    project: int


class Draft(TypedDict, total=False):
    """A draft: unsubmitted work of one ``user``."""

    id: int
    user: int
    result: list[ResultItem]
    task: int
    annotation: int | None


class Annotation(TypedDict, total=False):
    """A submitted or skipped (``was_cancelled``) annotation."""

    id: int
    result: list[ResultItem]
    completed_by: UserRef
    was_cancelled: bool
    lead_time: float
    created_at: str
    updated_at: str
    draft_created_at: str | None
    parent_prediction: int | None
    prediction: Prediction
    task: int | Task
    project: int


class Task(TypedDict, total=False):
    """A task (``data``: the imported fields; the plain export lists prediction ids, the snapshot objects)."""

    id: int
    data: dict[str, Any]
    project: int
    annotations: list[Annotation]
    predictions: list[Prediction | int]
    drafts: list[Draft]
    total_annotations: int  # the task listing's counts (submitted, skipped)
    cancelled_annotations: int


class Project(TypedDict, total=False):
    """A project object (``/api/projects/<id>``, the project listing, a webhook's ``project``)."""

    id: int
    title: str
    description: str
    expert_instruction: str
    label_config: str
    model_version: str
    task_number: int  # the listing's counts
    total_predictions_number: int


class WebhookPayload(TypedDict, total=False):
    """A webhook payload: ``action`` and ``annotation`` / ``task`` / ``project``, or the deleted ``annotations``."""

    action: str
    annotation: Annotation
    annotations: list[Annotation]
    task: Task
    project: Project


#: an ``id`` as Label Studio gives it: an int for tasks, annotations, predictions, projects, users; a string for
#: result items
RecordId = int | str

# ---- any record (task, annotation, prediction, draft, region, project) ---------------------------------------


def record_id(record: Record) -> RecordId | None:
    """The ``id`` of a task, annotation, prediction, draft, project or result item (``None`` if absent)."""
    return record.get("id")


def int_id(record: Record) -> int:
    """The ``id`` of a task, annotation, prediction, project, user, webhook, ML backend or Data Manager tab as an int
    (``KeyError`` if absent, ``ValueError`` / ``TypeError`` if no number: a reader that needs one fails at once)."""
    return int(record["id"])


# ---- tasks ----------------------------------------------------------------------------------------------------


def task_data(task: Record) -> dict[str, Any]:
    """A task's ``data`` object (the imported fields, e.g. ``task_key``, ``text``); ``{}`` when absent or empty.
    Returned as stored: a reader that needs a mapping checks the type itself."""
    return task.get("data") or {}


def stored_task_data(task: Record) -> object:
    """A task's ``data`` as sent (``None`` when absent), for a reader that checks it is an object and says so."""
    return task.get("data")


def task_annotations(task: Record) -> list[Annotation]:
    """A task's ``annotations`` list (submitted and skipped), ``[]`` when absent or ``null``."""
    return task.get("annotations") or []


def task_predictions(task: Record) -> list[Prediction | int]:
    """A task's ``predictions`` list (full objects in a snapshot export, ids in the plain one), ``[]`` if none."""
    return task.get("predictions") or []


def listed_predictions(task: Record) -> list[Prediction] | None:
    """A task's ``predictions`` as a listing gave them, ``None`` when the listing left them out (no ``include=``)."""
    listed = task.get("predictions")
    return listed if isinstance(listed, list) else None


def task_drafts(task: Record) -> list[Draft]:
    """A task's ``drafts`` list (unsubmitted work; the snapshot export with ``drafts: {only_id: false}``)."""
    return task.get("drafts") or []


def task_project(task: Record, default: int | str | None = None) -> int | str | None:
    """The project id of a task (``project``), ``default`` when the answer has none."""
    project: int | str | None = task.get("project", default)
    return project


def set_task_predictions(task: Task, predictions: Iterable[Prediction]) -> None:
    """Give a task listed without them its full ``predictions`` (as a snapshot export has them)."""
    task["predictions"] = [*predictions]


def view_data(view: Record) -> dict[str, Any]:
    """A Data Manager tab's ``data`` object (``{title, hiddenColumns, filters, ordering, ...}``); ``{}`` when absent."""
    return view.get("data") or {}


# ---- annotations, predictions and drafts ----------------------------------------------------------------------


def result_items(record: Record) -> list[ResultItem]:
    """The ``result`` list of an annotation, prediction or draft (its result items), ``[]`` if absent or ``null``."""
    return record.get("result") or []


def stored_result(record: Record) -> object:
    """The ``result`` of an annotation, prediction or draft as stored (``[]`` when absent), for a list check."""
    return record.get("result", [])


def completed_by(annotation: Record) -> UserRef | None:
    """An annotation's ``completed_by``: a user id, or the user object when the export expands users."""
    return annotation.get("completed_by")


def user_id(user: UserRef | None) -> int | None:
    """The id of a ``completed_by`` value: ``user["id"]`` of an expanded user, else the value itself."""
    return user.get("id") if isinstance(user, Mapping) else user


def user_email(user: UserRef | None) -> str | None:
    """The ``email`` of an expanded ``completed_by`` user; ``None`` for a bare id."""
    return user.get("email") if isinstance(user, Mapping) else None


def user_name(user: object) -> str:
    """The first non-empty of an expanded user's ``email``, ``username``, ``id``; else ``str(user)``."""
    named = (user.get(key) for key in ("email", "username", "id")) if isinstance(user, Mapping) else iter(())
    return str(next((name for name in named if name not in (None, "")), user))


def expand_completed_by(annotation: MutableMapping[str, Any] | Annotation, emails: Mapping[int, str]) -> None:
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


def lead_time(annotation: Record) -> float | None:
    """An annotation's ``lead_time`` (seconds spent, a float in Label Studio's answers), ``None`` if absent."""
    return annotation.get("lead_time")


def created_at(record: Record) -> str | None:
    """``created_at`` of an annotation (ISO 8601 text, e.g. ``2026-01-01T00:00:00.123456Z``), ``None`` if absent."""
    return record.get("created_at")


def updated_at(record: Record) -> str | None:
    """``updated_at`` of an annotation (ISO 8601 text), ``None`` if absent."""
    return record.get("updated_at")


def last_changed_at(annotation: Record) -> str | None:
    """``updated_at``, else ``created_at`` (an annotation never updated may lack the first), else ``None``."""
    return annotation.get("updated_at") or annotation.get("created_at")


def annotation_prediction(annotation: Record) -> Prediction | None:
    """The prediction object an exported annotation embeds (``prediction``: what it started from), or ``None``."""
    return annotation.get("prediction")


def parent_prediction(annotation: Record) -> int | None:
    """The id of the prediction an annotation started from (``parent_prediction``), or ``None``."""
    return annotation.get("parent_prediction")


def annotation_task(annotation: Record) -> int | Task | None:
    """The ``task`` of an annotation (an id, or the task object in some webhook payloads), or ``None``."""
    return annotation.get("task")


def annotation_project(annotation: Record) -> int | None:
    """The ``project`` of an annotation (an id), or ``None``."""
    return annotation.get("project")


def model_version(record: Record) -> str | None:
    """The ``model_version`` of a prediction, or of a project (the version whose predictions it shows), ``None``
    if absent."""
    return record.get("model_version")


def draft_user(draft: Record) -> int | None:
    """The ``user`` (id) a draft belongs to."""
    return draft.get("user")


# ---- result items (regions) ---------------------------------------------------------------------------------


def region_id(item: Record) -> str | None:
    """The ``id`` of a result item: shared by all items of one region (a pre-filled region's: the mention id)."""
    return item.get("id")


def region_type(item: Record) -> str | None:
    """The ``type`` of a result item: ``labels``, ``choices``, ``textarea``, ``number``, ``relation``, ..."""
    return item.get("type")


def region_from_name(item: Record, default: str | None = None) -> str | None:
    """A result item's ``from_name``: the control tag (``Labels``, ``Choices``, ``TextArea``) that made it."""
    return cast("str | None", item.get("from_name", default))


def region_to_name(item: Record) -> str | None:
    """The ``to_name`` of a result item: the object tag (``Text``) it marks."""
    return item.get("to_name")


def region_value(item: Record) -> RegionValue | None:
    """A result item's ``value`` (``{start, end, text, labels | choices | number}``), ``None`` if absent."""
    return item.get("value")


def _value(item: Record) -> Record:
    return value if isinstance(value := region_value(item), Mapping) else {}


def region_start(item: Record) -> object:
    """``value.start`` of a result item as stored (a code point offset in the task's text), ``None`` if absent."""
    return _value(item).get("start")


def region_end(item: Record) -> object:
    """``value.end`` of a result item as stored (the offset after the span), ``None`` if absent."""
    return _value(item).get("end")


def _strings(values: object) -> list[str]:
    return [str(v) for v in values] if isinstance(values, list) else []


def region_labels(item: Record) -> list[str]:
    """``value.labels`` of a ``labels`` item as strings (``[]`` when absent or no list)."""
    return _strings(_value(item).get("labels"))


def region_choices(item: Record) -> list[str]:
    """``value.choices`` of a ``choices`` item as strings (``[]`` when absent or no list)."""
    return _strings(_value(item).get("choices"))


def region_texts(item: Record) -> list[str] | str | None:
    """``value.text`` as stored: a ``textarea``'s lines (a list), the marked span (a string); ``[]`` if absent."""
    return cast("list[str] | str | None", _value(item).get("text", []))


def region_number(item: Record) -> float | None:
    """``value.number`` of a ``number`` item (a rating), ``None`` when absent."""
    return _value(item).get("number")


def region_origin(item: Record) -> str | None:
    """The ``origin`` of a result item (``prediction``, ``prediction-changed``, ``manual``), ``None`` if absent."""
    return item.get("origin")


def meta_link(item: Record) -> str | None:
    """``meta.text[0]`` of a result item (the link a pre-filled ``labels`` item shows), ``None`` without one."""
    meta = item.get("meta")
    texts = meta.get("text") if isinstance(meta, Mapping) else None
    return str(texts[0]) if isinstance(texts, list) and texts else None


def record_score(record: Record) -> object:
    """The ``score`` of a prediction or of one of its result items as stored (``None`` if absent)."""
    return record.get("score")


def answer_predictions(answer: Record) -> list[Prediction] | None:
    """An ML backend's ``predict`` answer's ``predictions`` (label-studio-ml 2's ``ModelResponse`` as a dict),
    else ``results`` (the ``/predict`` reply), else ``None``."""
    predictions: list[Prediction] | None = answer.get("predictions", answer.get("results"))
    return predictions


# ---- webhook payloads -----------------------------------------------------------------------------------------


def webhook_action(payload: Record) -> str | None:
    """A webhook payload's ``action`` (``ANNOTATION_CREATED``, ``ANNOTATION_UPDATED``, ``ANNOTATIONS_DELETED``, ...)."""
    return payload.get("action")


def webhook_annotation(payload: Record) -> Annotation | None:
    """The ``annotation`` object of an ``ANNOTATION_CREATED`` / ``ANNOTATION_UPDATED`` payload."""
    return payload.get("annotation")


def webhook_deleted_annotations(payload: Record) -> list[Annotation] | None:
    """The ``annotations`` list (``[{id}]``) of an ``ANNOTATIONS_DELETED`` payload."""
    return payload.get("annotations")


def webhook_task(payload: Record) -> Task | None:
    """The ``task`` object (``{id, data, ...}``) of an annotation payload."""
    return payload.get("task")


def webhook_project(payload: Record) -> Project | None:
    """The ``project`` object (``{id, title, ...}``) of a payload."""
    return payload.get("project")


def project_title(project: Record) -> str | None:
    """A project object's ``title``."""
    return project.get("title")


def project_task_number(project: Record) -> int | None:
    """``task_number`` of a project in Label Studio's project listing (its tasks), ``None`` if absent."""
    return project.get("task_number")


def project_prediction_number(project: Record) -> int | None:
    """``total_predictions_number`` of a project in the project listing (its predictions), ``None`` if absent."""
    return project.get("total_predictions_number")
