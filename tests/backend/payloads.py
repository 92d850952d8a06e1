"""Request bodies shaped exactly as Label Studio 1.23 sends them to an ML backend."""

from __future__ import annotations

from typing import Any


def ls_task(record: Any, *, task_id: int = 1, project: int = 1) -> dict[str, Any]:
    """A task as Label Studio 1.23 serialises it into /predict (TaskSimpleSerializer)."""
    return {
        "id": task_id,
        "data": {"text": record["text"], "task_key": record["task_key"]},
        "meta": {},
        "created_at": "2026-11-30T03:00:00.000000Z",
        "updated_at": "2026-11-30T03:00:00.000000Z",
        "is_labeled": False,
        "overlap": 1,
        "inner_id": task_id,
        "total_annotations": 0,
        "cancelled_annotations": 0,
        "total_predictions": 0,
        "comment_count": 0,
        "unresolved_comment_count": 0,
        "last_comment_updated_at": None,
        "project": project,
        "updated_by": None,
        "file_upload": None,
        "comment_authors": [],
        "annotations": [],
        "predictions": [],
    }


def predict_payload(tasks: list[dict[str, Any]], config: str, *, project: str = "1.1796005017") -> dict[str, Any]:
    """A /predict request body exactly as Label Studio 1.23 builds it (MLApi._prep_prediction_req)."""
    return {
        "tasks": tasks,
        "project": project,
        "label_config": config,
        "params": {"login": None, "password": None, "context": None},
    }


def region_decisions(prediction: list[dict[str, Any]], decisions: dict[str, str],
                     *, decision_tag: str = "decision", to_name: str = "text") -> list[dict[str, Any]]:
    """An annotation result made from a prediction: its items plus one per-region choice per region."""
    result = [dict(item, origin="prediction") for item in prediction]
    for item in prediction:
        if item["type"] != "labels" or item["id"] not in decisions:
            continue
        value = item["value"]
        result.append({
            "id": item["id"], "from_name": decision_tag, "to_name": to_name, "type": "choices",
            "origin": "manual",
            "value": {"start": value["start"], "end": value["end"], "choices": [decisions[item["id"]]]},
        })
    return result


def annotation_event(action: str, *, annotation_id: int, task_id: int, task_key: str | None, text: str,
                     result: list[dict[str, Any]], completed_by: int = 1, project_id: int = 1,
                     updated_at: str = "2026-11-30T03:10:00.000000Z", was_cancelled: bool = False) -> dict[str, Any]:
    """An ANNOTATION_CREATED / ANNOTATION_UPDATED webhook body as Label Studio 1.23 posts it."""
    data: dict[str, Any] = {"text": text}
    if task_key is not None:
        data["task_key"] = task_key
    return {
        "action": action,
        "annotation": {
            "id": annotation_id, "result": result, "created_ago": "0 minutes", "completed_by": completed_by,
            "was_cancelled": was_cancelled, "ground_truth": False, "created_at": "2026-11-30T03:09:00.000000Z",
            "updated_at": updated_at, "draft_created_at": None, "lead_time": 12.5, "import_id": None,
            "last_action": None, "bulk_created": False, "task": task_id, "project": project_id,
            "updated_by": completed_by, "parent_prediction": 1, "parent_annotation": None, "last_created_by": None,
        },
        "task": {"id": task_id, "data": data, "meta": {}, "project": project_id, "is_labeled": True, "overlap": 1},
        "project": {"id": project_id, "title": "posthoc sample w001", "label_config": "<View/>",
                    "task_data_login": None, "task_data_password": "not-a-real-password"},
    }
