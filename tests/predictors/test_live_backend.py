"""The backend's live mode with each predictor: tasks in no manifest pre-filled blind, in batches, within
the predict budget (Label Studio waits 100 s), predictor failures confined to their tasks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from posthoc.paths import label_config
from posthoc.predictors.registry import PredictorSpec
from posthoc.study.plan.manifest import Manifest
from posthoc_backend.app import create_app
from posthoc_backend.protocol import MODEL_VERSION
from predictors.conftest import ALIASES, PLAIN, TEXT, TEXT2, TEXT2_MENTIONS, TEXT_MENTIONS
from predictors.standins import StandInREL

CONFIG = label_config("entity_verification")


def _post(client: Any, tasks: list[dict[str, Any]]) -> tuple[int, dict[str, Any]]:
    reply = client.post("/predict", json={"tasks": tasks, "label_config": CONFIG, "project": "3.17"})
    return reply.status_code, reply.get_json()


def _tasks(*texts: str) -> list[dict[str, Any]]:
    return [{"id": n + 10, "data": {"text": t}} for n, t in enumerate(texts)]


def _labels(prediction: dict[str, Any]) -> list[tuple[int, int, str]]:
    return [(i["value"]["start"], i["value"]["end"], i["value"]["text"]) for i in prediction["result"]
            if i["type"] == "labels"]


@pytest.fixture(scope="module")
def small_manifest(tmp_path_factory: pytest.TempPathFactory) -> Manifest:
    from lsfixtures import small_sample_manifest

    return small_sample_manifest(tmp_path_factory.mktemp("live") / "m.sqlite", name="live", n_documents=2,
                                 n_workers=3, tasks_per_batch=40, control_tasks=False)


def test_rel_live_mode_pre_fills_new_text_blind(rel_service: StandInREL) -> None:
    client = create_app(None, predictor=PredictorSpec("rel", url=rel_service.url)).test_client()
    status, body = _post(client, _tasks(TEXT, TEXT2, PLAIN))
    assert status == 200 and "errors" not in body and body["model_version"] == MODEL_VERSION
    first, second, plain = body["results"]
    assert _labels(first) == TEXT_MENTIONS and _labels(second) == TEXT2_MENTIONS and plain["result"] == []
    assert all(p["model_version"] == MODEL_VERSION and "score" not in p for p in body["results"])
    links = [i["value"]["text"][0] for i in second["result"] if i["type"] == "textarea"]
    assert links[0] == "https://en.wikipedia.org/wiki/Angela_Merkel"
    assert [i["id"] for i in first["result"] if i["type"] == "labels"] == ["live-4-7", "live-12-15", "live-19-21"]


def test_spacy_live_mode(tmp_path: Path) -> None:
    pytest.importorskip("spacy", reason="spaCy is the optional `spacy` extra")
    from predictors.spacy_pipeline import save_pipeline

    spec = PredictorSpec("spacy", spacy_model=str(save_pipeline(tmp_path / "nlp")))
    status, body = _post(create_app(None, predictor=spec).test_client(), _tasks(TEXT2))
    assert status == 200 and _labels(body["results"][0]) == TEXT2_MENTIONS


def test_manifest_tasks_and_live_tasks_in_one_batch(small_manifest: Manifest, rel_service: StandInREL) -> None:
    client = create_app(small_manifest, predictor=PredictorSpec("rel", url=rel_service.url)).test_client()
    record = small_manifest.tasks().to_dict("records")[0]
    tasks = [{"id": 1, "data": {"text": record["text"], "task_key": record["task_key"]}}, *_tasks(TEXT)]
    status, body = _post(client, tasks)
    assert status == 200
    from_manifest, live = body["results"]
    expected = small_manifest.prefill(record["task_key"])
    assert [i["id"] for i in from_manifest["result"] if i["type"] == "labels"] == list(expected["mention_id"])
    assert _labels(live) == TEXT_MENTIONS
    assert rel_service.texts == [TEXT]  # the manifest's task never went to the predictor


def test_a_failing_predictor_fails_only_the_live_tasks(small_manifest: Manifest) -> None:
    with StandInREL(ALIASES, mode="5xx").serve() as service:
        spec = PredictorSpec("rel", url=service.url, retries=0)
        client = create_app(small_manifest, predictor=spec).test_client()
        record = small_manifest.tasks().to_dict("records")[0]
        tasks = [{"id": 1, "data": {"text": record["text"], "task_key": record["task_key"]}}, *_tasks(TEXT)]
        status, body = _post(client, tasks)
    assert status == 200 and "result" in body["results"][0]
    (error,) = body["errors"]
    assert error["status"] == 502 and error["task"] == 10 and "answered 503" in error["error"]
    assert "result" not in body["results"][1]


def test_live_tasks_past_the_budget_are_left_for_label_studio_to_ask_again() -> None:
    with StandInREL(ALIASES, mode="slow", delay=0.5).serve() as service:
        spec = PredictorSpec("rel", url=service.url, retries=0)
        client = create_app(None, predictor=spec, predict_budget=0.6, live_batch_size=1).test_client()
        status, body = _post(client, _tasks(TEXT, TEXT2, TEXT, TEXT2))
        asked = service.requests
    statuses = {e["task"]: e["status"] for e in body.get("errors", [])}
    assert len(body["results"]) == 4 and asked < 4  # not every task reached the slow service
    assert statuses[13] == 503  # the last task was never sent: out of budget
    assert all("result" not in body["results"][n] for n in range(4) if n + 10 in statuses)
    if status == 200:
        assert "result" in body["results"][0]


def test_dictionary_predictor_spec_equals_the_alias_table_option(tmp_path: Path) -> None:
    from posthoc.predictors.linker import AliasTable, frames_from_files

    csv = tmp_path / "aliases.csv"
    csv.write_text("surface,link\n" + "".join(f'"{s}",{t}\n' for s, t in ALIASES.items()), encoding="utf-8")
    by_spec = create_app(None, predictor=PredictorSpec("dictionary", alias_files=(str(csv),))).test_client()
    by_table = create_app(None, alias_table=AliasTable.from_mentions(frames_from_files([str(csv)]))).test_client()
    assert _post(by_spec, _tasks(TEXT, TEXT2)) == _post(by_table, _tasks(TEXT, TEXT2))


def test_the_spec_travels_through_the_environment(rel_service: StandInREL) -> None:
    spec = PredictorSpec("rel", url=rel_service.url, timeout=7.5, retries=1, max_chars=900, concurrency=3)
    env = spec.to_env()
    assert env["POSTHOC_PREDICTOR"] == "rel" and env["POSTHOC_PREDICTOR_MAX_CHARS"] == "900"
    assert PredictorSpec.from_env(env) == spec
    assert PredictorSpec.from_env({}) is None
