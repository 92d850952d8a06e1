"""The backend through Flask's test client, with requests shaped as Label Studio 1.23 sends them."""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

import pytest
from flask.testing import FlaskClient
from label_studio_sdk.label_interface import LabelInterface

from backend.payloads import ls_task, predict_payload
from posthoc.study.plan.manifest import Manifest
from posthoc_backend.auth import webhook_token
from posthoc_backend.protocol import MODEL_VERSION


def _tasks(manifest: Manifest, n: int | None = None, **query: Any) -> list[dict[str, Any]]:
    frame = manifest.tasks(**query)
    records = frame.to_dict("records")
    return records if n is None else records[:n]


def test_health_setup_and_versions_agree_on_one_model_version(client: FlaskClient, config: str) -> None:
    health = client.get("/health")
    assert health.status_code == 200 and health.json["status"] == "UP"
    setup = client.post("/setup", json={"project": "3.1796005017", "schema": config, "hostname": "http://x",
                                        "access_token": "abc123", "extra_params": None})
    assert setup.status_code == 200
    assert setup.json == {"model_version": MODEL_VERSION}
    assert client.get("/versions").json["versions"] == [MODEL_VERSION]


def test_predict_returns_the_manifest_mentions_as_valid_results(client: FlaskClient, manifest: Manifest,
                                                                config: str) -> None:
    records = _tasks(manifest)
    tasks = [ls_task(r, task_id=i + 1) for i, r in enumerate(records)]
    reply = client.post("/predict", json=predict_payload(tasks, config))
    assert reply.status_code == 200
    results = reply.json["results"]
    assert len(results) == len(tasks)
    interface = LabelInterface(config)
    for record, prediction in zip(records, results, strict=True):
        assert "score" not in prediction
        assert prediction["model_version"] == MODEL_VERSION
        assert interface.validate_prediction(prediction, return_errors=True) == []
        expected = manifest.prefill(record["task_key"])
        labels = [item for item in prediction["result"] if item["type"] == "labels"]
        links = {item["id"]: item for item in prediction["result"] if item["type"] == "textarea"}
        assert [item["id"] for item in labels] == list(expected["mention_id"])
        for item, mention in zip(labels, expected.to_dict("records"), strict=True):
            value = item["value"]
            assert (value["start"], value["end"]) == (mention["start"], mention["end"])
            assert value["text"] == record["text"][value["start"]:value["end"]] == mention["surface"]
            assert value["labels"] == ["undecided"]
            twin = links[item["id"]]
            assert (twin["value"]["start"], twin["value"]["end"]) == (value["start"], value["end"])
            assert twin["value"]["text"] == [mention["link"]]
            assert (item["from_name"], twin["from_name"], item["to_name"]) == ("mention", "link", "text")


def test_every_system_gets_the_same_neutral_version(client: FlaskClient, manifest: Manifest, config: str) -> None:
    records = _tasks(manifest)
    by_system: dict[str, set[str]] = {}
    reply = client.post("/predict", json=predict_payload([ls_task(r) for r in records], config)).json
    for record, prediction in zip(records, reply["results"], strict=True):
        by_system.setdefault(record["system"], set()).add(prediction["model_version"])
        assert record["system"] not in str(prediction)  # nothing names the system
    assert len(by_system) >= 3  # GT, E2E, REL (controls too)
    assert all(versions == {MODEL_VERSION} for versions in by_system.values())


def test_unicode_offsets_are_code_points(client: FlaskClient, manifest: Manifest, config: str) -> None:
    records = [r for r in _tasks(manifest) if any(ord(ch) > 0xFFFF or 0x300 <= ord(ch) <= 0x36F
                                                  or 0x4E00 <= ord(ch) <= 0x9FFF for ch in r["text"])]
    assert records, "the sample corpus has emoji / CJK / combining marks"
    reply = client.post("/predict", json=predict_payload([ls_task(r) for r in records], config)).json
    astral_before = 0
    for record, prediction in zip(records, reply["results"], strict=True):
        for item in prediction["result"]:
            value = item["value"]
            if item["type"] == "labels":
                assert value["text"] == record["text"][value["start"]:value["end"]]
                astral_before += any(ord(ch) > 0xFFFF for ch in record["text"][:value["start"]])
    assert astral_before > 0  # some region follows an astral character: UTF-16 offsets would differ


def test_same_prediction_twice(client: FlaskClient, manifest: Manifest, config: str) -> None:
    task = ls_task(_tasks(manifest, 1)[0])
    first = client.post("/predict", json=predict_payload([task], config)).json
    second = client.post("/predict", json=predict_payload([task], config)).json
    assert first == second


def test_text_differing_from_the_manifest_is_refused(client: FlaskClient, manifest: Manifest, config: str) -> None:
    record = _tasks(manifest, 1)[0]
    task = ls_task({**record, "text": record["text"].strip() + " (edited)"})
    reply = client.post("/predict", json=predict_payload([task], config))
    assert reply.status_code == 422
    assert reply.json["field"] == "tasks[0].data.text"


def test_a_bad_task_in_a_batch_gets_an_error_entry_in_its_place(client: FlaskClient, manifest: Manifest,
                                                                config: str) -> None:
    good = [ls_task(r, task_id=i) for i, r in enumerate(_tasks(manifest, 2))]
    bad = ls_task({"text": "no such task", "task_key": "t-not-in-the-manifest"}, task_id=99)
    reply = client.post("/predict", json=predict_payload([good[0], bad, good[1]], config))
    assert reply.status_code == 200
    results = reply.json["results"]
    assert len(results) == 3
    assert "result" in results[0] and "result" in results[2]
    assert "result" not in results[1]  # Label Studio stores no prediction for it and logs the error
    assert results[1]["task"] == 99 and results[1]["field"] == "tasks[1].data.task_key"
    assert [e["task"] for e in reply.json["errors"]] == [99]


def test_unknown_key_without_live_mode_is_404(client: FlaskClient, config: str) -> None:
    task = ls_task({"text": "Paris is big.", "task_key": "t-unknown"})
    reply = client.post("/predict", json=predict_payload([task], config))
    assert reply.status_code == 404
    assert reply.json["field"] == "tasks[0].data.task_key"
    no_key = client.post("/predict", json=predict_payload([{"id": 1, "data": {"text": "Paris"}}], config))
    assert no_key.status_code == 422 and "live mode is off" in no_key.json["error"]


def test_live_mode_links_new_text(live_client: FlaskClient, sample_mentions: Any, config: str) -> None:
    gt = sample_mentions[(sample_mentions["system"] == "GT") & ~sample_mentions["is_nil"]]
    surface = str(gt["surface"].iloc[0])
    text = f"Yesterday {surface} was in the news again 🎉."
    reply = live_client.post("/predict", json=predict_payload([{"id": 7, "data": {"text": text}}], config))
    assert reply.status_code == 200
    prediction = reply.json["results"][0]
    labels = [item for item in prediction["result"] if item["type"] == "labels"]
    assert any(item["value"]["text"] == surface and item["value"]["start"] == 10 for item in labels)
    assert LabelInterface(config).validate_prediction(prediction, return_errors=True) == []
    assert prediction["model_version"] == MODEL_VERSION


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "tasks"),
        ({"tasks": "x"}, "tasks"),
        ({"tasks": []}, "tasks"),
        ({"tasks": [5]}, "tasks[0]"),
        ({"tasks": [{"id": "1", "data": {"text": "x"}}]}, "tasks[0].id"),
        ({"tasks": [{"id": 1}]}, "tasks[0].data"),
        ({"tasks": [{"id": 1, "data": {"text": 3}}]}, "tasks[0].data.text"),
        ({"tasks": [{"id": 1, "data": {"text": "x", "task_key": 4}}]}, "tasks[0].data.task_key"),
        ({"tasks": [{"id": 1, "data": {"text": "x"}}], "label_config": 1}, "label_config"),
        ({"tasks": [{"id": 1, "data": {"text": "x"}}], "label_config": "<View><Text name='t' value='$t'/></View>"},
         "label_config"),
        ([1, 2], None),
    ],
    ids=["no tasks", "tasks not a list", "no task", "task not an object", "task id a string", "task without data",
         "text not a string", "task_key not a string", "label_config not a string", "label_config without regions",
         "body a list"],
)
def test_bad_predict_requests_get_a_4xx_json_error(client: FlaskClient, body: Any, field: str | None) -> None:
    reply = client.post("/predict", json=body)
    assert 400 <= reply.status_code < 500
    assert reply.is_json and reply.json["field"] == field and reply.json["error"]


def test_non_json_and_unknown_routes_are_json_errors(client: FlaskClient) -> None:
    for reply in (client.post("/predict", data="tasks=1", content_type="application/x-www-form-urlencoded"),
                  client.post("/predict", data="{not json", content_type="application/json"),
                  client.get("/predict"), client.get("/nowhere"), client.post("/setup", json={"schema": 5})):
        assert 400 <= reply.status_code < 500
        assert reply.is_json and "error" in reply.json


def test_oversized_requests_get_413_json(make_client: Callable[..., FlaskClient]) -> None:
    client = make_client(max_body_bytes=2000)
    reply = client.post("/predict", json={"tasks": [{"id": 1, "data": {"text": "x" * 5000}}]})
    assert reply.status_code == 413 and reply.is_json and reply.json["error"]


def test_setup_refuses_a_config_without_text_regions(client: FlaskClient) -> None:
    reply = client.post("/setup", json={"project": "1.1", "schema": "<View><Image name='i' value='$i'/></View>"})
    assert reply.status_code == 422 and reply.json["field"] == "schema"


def _basic(user: str, password: str) -> dict[str, str]:
    return {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}


def test_secret_guards_every_endpoint_but_health(make_client: Callable[..., FlaskClient], manifest: Manifest,
                                                 config: str) -> None:
    client = make_client(secret="s3cret-ü")
    body = predict_payload([ls_task(_tasks(manifest, 1)[0])], config)
    assert client.get("/health").status_code == 200
    for headers in ({}, _basic("posthoc", "wrong"), {"Authorization": "Bearer nope"}, {"Authorization": "Basic !!"}):
        reply = client.post("/predict", json=body, headers=headers)
        assert reply.status_code == 401 and reply.is_json
        assert reply.headers["WWW-Authenticate"].startswith("Basic")
    assert client.post("/setup", json={}, headers=_basic("x", "wrong")).status_code == 401
    assert client.post("/webhook", json={"action": "PROJECT_UPDATED"}).status_code == 401
    assert client.post("/predict", json=body, headers=_basic("any-user", "s3cret-ü")).status_code == 200
    assert client.post("/predict", json=body, headers={"Authorization": "Bearer s3cret-ü"}).status_code == 200
    assert client.get("/versions", headers=_basic("u", "s3cret-ü")).status_code == 200
    # the derived webhook token (stored on Label Studio's webhook) opens /webhook and nothing else
    derived = {"Authorization": f"Bearer {webhook_token('s3cret-ü')}"}
    assert client.post("/webhook", json={"action": "PROJECT_UPDATED"}, headers=derived).status_code == 200
    assert client.post("/predict", json=body, headers=derived).status_code == 401
    assert client.post("/setup", json={}, headers=derived).status_code == 401
    assert webhook_token("s3cret-ü") != webhook_token("other") and "s3cret" not in webhook_token("s3cret-ü")
