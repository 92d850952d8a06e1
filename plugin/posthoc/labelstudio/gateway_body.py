"""What a worker's annotation and draft bodies may set through the study gateway (issue 47): a pure check.

Label Studio 1.23 stores what an annotation body says (``ground_truth``, another user in ``completed_by``, the ids
of other projects' annotations and predictions in ``parent_annotation`` / ``parent_prediction``), and a
``PATCH`` moves an annotation or a draft to the task its body names. A worker's writes of annotations and drafts
(:data:`posthoc.labelstudio.gateway_rules.BODY_RETARGETS` and the routes answered ``body``) are therefore read by
the authoriser (:mod:`posthoc_backend.gateway_answers`), checked here, and forwarded with the same bytes.

The fields the labelling UI sets, read from Label Studio 1.23's frontend (``web/dist/apps/labelstudio``:
``prepareData`` sends ``lead_time``, ``result``, ``draft_id``, ``parent_prediction``, ``parent_annotation`` and
``started_at``; a task lock adds ``unique_id``; Skip adds ``was_cancelled`` and a ``comment``; turning a draft
back, ``annotation: null``; the Data Manager adds ``project`` to every body, seen in chromium), are
:data:`UI_FIELDS`, each with the type it must have; an id must name an object of the worker's own project and
``project`` must be that project. Anything else is refused, naming the field.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from posthoc.labelstudio.gateway_rules import Lookup


def _number(value: object) -> bool:
    return value is None or (isinstance(value, (int, float)) and not isinstance(value, bool))


def _text(value: object) -> bool:
    return value is None or isinstance(value, str)


#: the fields a worker's annotation or draft body may carry, and what each value must be (ids: :data:`ID_FIELDS`)
UI_FIELDS: dict[str, Callable[[object], bool]] = {
    "result": lambda value: isinstance(value, list),
    "lead_time": _number,
    "started_at": _text,
    "unique_id": _text,
    "comment": _text,
    "was_cancelled": lambda value: isinstance(value, bool),
}
#: the fields that name an object: each ``null`` (``draft_id`` also ``0``, the UI's "no draft yet") or an id of
#: that kind in the worker's project
ID_FIELDS = {"draft_id": "draft", "parent_prediction": "prediction", "parent_annotation": "annotation",
             "annotation": "annotation"}
#: a body larger than this is refused unread (a labelling page's largest is a few hundred kilobytes)
MAX_BODY_BYTES = 20 * 1024 * 1024


@dataclass(frozen=True)
class BodyRefusal:
    """Why a body is refused: the field (``""``: the body as a whole) and what is wrong with it."""

    field: str
    reason: str

    def message(self) -> str:
        return f"{self.field}: {self.reason}" if self.field else self.reason


def _id_refusal(name: str, value: object, project: int, lookup: Lookup) -> BodyRefusal | None:
    if value is None or (name == "draft_id" and value == 0 and not isinstance(value, bool)):
        return None  # the UI sends draft_id 0 for "no draft yet"
    kind = ID_FIELDS[name]
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        return BodyRefusal(name, f"must be null or the id of a {kind}")
    if lookup.project_of(kind, value) != project:
        return BodyRefusal(name, f"{kind} {value} is not of the worker's project")
    return None


def body_refusal(body: bytes, *, project: int, lookup: Lookup) -> BodyRefusal | None:
    """Why a worker of ``project`` may not send ``body`` as an annotation or draft (``None``: they may): it must be
    one JSON object of :data:`UI_FIELDS` and :data:`ID_FIELDS` with values of their kind.

    Examples
    --------
    >>> class NoObjects:
    ...     def project_of(self, kind, object_id):
    ...         return 7 if (kind, object_id) == ("prediction", 70) else None
    >>> body_refusal(b'{"result": [], "lead_time": 3.5, "parent_prediction": 70}', project=7, lookup=NoObjects())
    >>> body_refusal(b'{"result": [], "ground_truth": true}', project=7, lookup=NoObjects()).message()
    'ground_truth: is not a field the labelling page sets'
    >>> body_refusal(b'{"parent_prediction": 80}', project=7, lookup=NoObjects()).field
    'parent_prediction'
    >>> body_refusal(b'{"result": [], "project": "7"}', project=7, lookup=NoObjects())
    """
    if len(body) > MAX_BODY_BYTES:
        return BodyRefusal("", f"the body is larger than {MAX_BODY_BYTES} bytes")
    try:
        record = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return BodyRefusal("", "the body is not JSON (UTF-8)")
    if not isinstance(record, dict):
        return BodyRefusal("", "the body is not a JSON object")
    for name, value in record.items():
        if name == "project":
            if str(value) != str(project) or isinstance(value, bool):
                return BodyRefusal(name, "is not the worker's project")
        elif name in ID_FIELDS:
            refusal = _id_refusal(name, value, project, lookup)
            if refusal is not None:
                return refusal
        elif name not in UI_FIELDS:
            return BodyRefusal(name[:80], "is not a field the labelling page sets")
        elif not UI_FIELDS[name](value):
            return BodyRefusal(name, "has a value of the wrong type")
    return None
