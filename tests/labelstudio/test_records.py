"""The accessors of Label Studio's JSON (posthoc.labelstudio.records) on the shapes Label Studio 1.23 writes.

The task below is the shape of a snapshot export with expanded users (docs/label-studio-1.23.md, "Export");
the same annotation with a bare ``completed_by`` id is what the plain export and the webhook send.
"""

from __future__ import annotations

from typing import Any

from posthoc.labelstudio import records as ls

REGION = {"id": "m1", "type": "labels", "from_name": "label", "to_name": "text", "origin": "prediction",
          "value": {"start": 4, "end": 6, "text": "東京", "labels": ["verify"]}}
LINK = {"id": "m1", "type": "textarea", "from_name": "link", "to_name": "text",
        "value": {"start": 4, "end": 6, "text": ["https://en.wikipedia.org/wiki/Tokyo"]}}
ANNOTATION: dict[str, Any] = {
    "id": 7, "result": [REGION, LINK], "was_cancelled": False, "lead_time": 12.5,
    "completed_by": {"id": 3, "email": "w01@posthoc.local", "username": "w01"},
    "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:01:00Z", "parent_prediction": 11,
    "prediction": {"id": 11, "result": [REGION], "model_version": "posthoc-v1"}, "task": 5, "project": 2,
}
TASK: dict[str, Any] = {"id": 5, "project": 2, "data": {"task_key": "t1", "text": "in 東京."},
                        "annotations": [ANNOTATION], "predictions": [ANNOTATION["prediction"]],
                        "drafts": [{"id": 1, "user": 4, "result": []}]}


def test_task_fields_and_their_empty_defaults() -> None:
    assert ls.task_data(TASK)["task_key"] == "t1"
    assert ls.task_annotations(TASK) == [ANNOTATION]
    assert [ls.record_id(p) for p in ls.task_predictions(TASK)] == [11]
    assert [ls.draft_user(d) for d in ls.task_drafts(TASK)] == [4]
    assert ls.task_project(TASK) == 2
    bare = {"id": 9, "annotations": None, "data": None}
    assert (ls.task_data(bare), ls.task_annotations(bare), ls.task_predictions(bare), ls.task_drafts(bare)) == (
        {}, [], [], [])
    assert ls.task_project(bare, 8) == 8


def test_completed_by_as_expanded_user_and_as_bare_id() -> None:
    expanded = ls.completed_by(ANNOTATION)
    assert (ls.user_id(expanded), ls.user_email(expanded), ls.user_name(expanded)) == (3, "w01@posthoc.local",
                                                                                       "w01@posthoc.local")
    bare = ls.completed_by({**ANNOTATION, "completed_by": 3})
    assert (ls.user_id(bare), ls.user_email(bare), ls.user_name(bare)) == (3, None, "3")
    assert ls.user_name({"id": 3, "email": "", "username": "w01"}) == "w01"


def test_expand_completed_by_only_replaces_known_bare_ids() -> None:
    known, unknown, expanded = {"completed_by": 3}, {"completed_by": 4}, dict(ANNOTATION)
    for annotation in (known, unknown, expanded):
        ls.expand_completed_by(annotation, {3: "w01@posthoc.local"})
    assert known == {"completed_by": {"id": 3, "email": "w01@posthoc.local"}}
    assert unknown == {"completed_by": 4}
    assert expanded["completed_by"] is ANNOTATION["completed_by"]


def test_annotation_fields() -> None:
    assert ls.result_items(ANNOTATION) == [REGION, LINK]
    assert ls.was_cancelled(ANNOTATION) is False
    assert ls.was_cancelled({"was_cancelled": 1}) is True
    assert ls.was_cancelled({"was_cancelled": 1}, strict=True) is False  # the webhook store counts only JSON true
    assert ls.was_cancelled({"was_cancelled": True}, strict=True) is True
    assert (ls.lead_time(ANNOTATION), ls.created_at(ANNOTATION), ls.updated_at(ANNOTATION)) == (
        12.5, "2026-01-01T00:00:00Z", "2026-01-01T00:01:00Z")
    assert ls.last_changed_at(ANNOTATION) == "2026-01-01T00:01:00Z"
    assert ls.last_changed_at({"created_at": "2026-01-01T00:00:00Z", "updated_at": None}) == "2026-01-01T00:00:00Z"
    assert ls.parent_prediction(ANNOTATION) == 11 and ls.record_id(ls.annotation_prediction(ANNOTATION)) == 11
    assert (ls.annotation_task(ANNOTATION), ls.annotation_project(ANNOTATION)) == (5, 2)


def test_region_fields() -> None:
    assert (ls.region_id(REGION), ls.region_type(REGION), ls.region_from_name(REGION), ls.region_to_name(REGION)) \
        == ("m1", "labels", "label", "text")
    assert ls.region_value(REGION)["start"] == 4 and ls.region_labels(REGION) == ["verify"]
    assert ls.region_texts(REGION) == "東京" and ls.region_texts(LINK) == ["https://en.wikipedia.org/wiki/Tokyo"]
    decision = {"id": "m1", "type": "choices", "from_name": "decision", "value": {"choices": ["edit"]}}
    rating = {"id": "r", "type": "number", "from_name": "score", "value": {"number": 4}}
    assert ls.region_choices(decision) == ["edit"] and ls.region_number(rating) == 4
    empty = {"id": "x"}
    assert (ls.region_value(empty), ls.region_labels(empty), ls.region_choices(empty), ls.region_texts(empty),
            ls.region_number(empty), ls.region_from_name(empty), ls.region_from_name(empty, "")) == (
        None, [], [], [], None, None, "")


def test_webhook_payload_fields() -> None:
    created = {"action": "ANNOTATION_CREATED", "annotation": ANNOTATION, "task": {"id": 5, "data": {}},
               "project": {"id": 2, "title": "posthoc w01"}}
    assert ls.webhook_action(created) == "ANNOTATION_CREATED"
    assert ls.webhook_annotation(created) is ANNOTATION and ls.record_id(ls.webhook_task(created)) == 5
    assert ls.project_title(ls.webhook_project(created)) == "posthoc w01"
    deleted = {"action": "ANNOTATIONS_DELETED", "annotations": [{"id": 7}], "project": {"id": 2}}
    assert ls.webhook_deleted_annotations(deleted) == [{"id": 7}]


def test_ml_backend_answer_predictions() -> None:
    assert ls.answer_predictions({"predictions": [1]}) == [1]
    assert ls.answer_predictions({"results": [2]}) == [2]
    assert ls.answer_predictions({}) is None
