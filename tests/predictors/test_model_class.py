"""A label-studio-ml-style model class named by import path: through `posthoc predict` and the backend."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from posthoc.errors import PosthocInputError
from posthoc.paths import label_config
from posthoc.predictors.registry import PredictorSpec, load_class
from posthoc_backend.app import create_app
from posthoc_backend.protocol import MODEL_VERSION
from predictors.conftest import TEXT, TEXT2, TEXT2_MENTIONS, TEXT_MENTIONS, run_posthoc
from predictors.lsml_models import HandWrittenModel

CLASS = "predictors.lsml_models:HandWrittenModel"
REAL = "predictors.lsml_models:RealLSMLModel"


def _predict(client, texts: list[str]) -> dict:
    tasks = [{"id": n + 1, "data": {"text": t}} for n, t in enumerate(texts)]
    reply = client.post("/predict", json={"tasks": tasks, "label_config": label_config("entity_verification"),
                                          "project": "1.1", "params": {"context": None}})
    return {"status": reply.status_code, **reply.get_json()}


def _labels(prediction: dict) -> list[tuple[int, int, str]]:
    return [(i["value"]["start"], i["value"]["end"], i["value"]["text"]) for i in prediction["result"]
            if i["type"] == "labels"]


@pytest.mark.parametrize(("path", "message"), [
    ("no_such_module_xyz:Model", "cannot import no_such_module_xyz"),
    ("predictors.lsml_models:Missing", "has no Missing"),
    ("predictors.lsml_models:regions", "not a class with a predict"),
    ("not a path", "not a built-in"),
])
def test_bad_class_paths_are_one_clear_error(path: str, message: str) -> None:
    with pytest.raises(PosthocInputError, match=message):
        load_class(path)


def test_a_model_class_pre_fills_live_tasks_blind_through_the_backend() -> None:
    client = create_app(None, predictor=PredictorSpec(CLASS)).test_client()
    body = _predict(client, [TEXT, TEXT2])
    assert body["status"] == 200 and "errors" not in body
    first, second = body["results"]
    assert _labels(first) == TEXT_MENTIONS and _labels(second) == TEXT2_MENTIONS
    for prediction in (first, second):
        assert prediction["model_version"] == MODEL_VERSION  # not the model's own "alias-model-0.3"
        assert "score" not in prediction and all("score" not in item for item in prediction["result"])
    links = [i["value"]["text"][0] for i in first["result"] if i["type"] == "textarea"]
    assert links == ["Zoë_Saldaña", "Yoshinoya", "Tokyo"]
    assert client.get("/health").get_json()["live_mode"] is True


def test_a_model_whose_regions_leave_the_text_fails_its_tasks_only() -> None:
    client = create_app(None, predictor=PredictorSpec("predictors.lsml_models:OffTextModel")).test_client()
    body = _predict(client, [TEXT])
    assert body["status"] == 502 and "outside the text" in body["error"]


def test_posthoc_predict_runs_a_model_class(astral_corpus: Path, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "model.jsonl"
    HandWrittenModel.calls.clear()
    code = run_posthoc(["predict", "--predictor", CLASS, str(astral_corpus), "--out", str(out), "--no-progress"])
    assert code == 0, capsys.readouterr().err
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [line["system"] for line in lines] == ["HandWrittenModel"] * 4
    assert [(m["start"], m["end"], m["surface"]) for m in lines[0]["mentions"]] == TEXT_MENTIONS
    assert lines[0]["mentions"][2]["link"] == "https://en.wikipedia.org/wiki/Tokyo"
    assert HandWrittenModel.calls == [4]  # one batch of the default size 8


def test_a_real_label_studio_ml_subclass_runs_behind_flask_3(astral_corpus: Path, tmp_path: Path) -> None:
    pytest.importorskip("label_studio_ml.model", reason="label-studio-ml is installed only with --no-deps "
                        "(scripts/test.sh); its own pins would downgrade Flask")
    from importlib.metadata import version

    assert int(version("flask").split(".")[0]) >= 3  # beside Flask 3, not label-studio-ml's pinned Flask 1
    client = create_app(None, predictor=PredictorSpec(REAL)).test_client()
    body = _predict(client, [TEXT2])
    (prediction,) = body["results"]
    assert _labels(prediction) == TEXT2_MENTIONS and prediction["model_version"] == MODEL_VERSION
    out = tmp_path / "real.jsonl"
    assert run_posthoc(["predict", "--predictor", REAL, str(astral_corpus), "--out", str(out), "--no-progress",
                        "--system", "real-model"]) == 0
    assert json.loads(out.read_text(encoding="utf-8").splitlines()[1])["mentions"][0]["surface"] == "Angela Merkel"


@pytest.mark.parametrize(("model", "score"), [("SDKUnscoredModel", None), ("SDKScoredModel", 0.0)])
def test_a_score_is_written_only_when_the_model_gave_one(model: str, score: float | None, astral_corpus: Path,
                                                         tmp_path: Path) -> None:
    """PredictionValue's default ``score`` 0.0 (label-studio-sdk 2.1.2) is not a score the model gave."""
    out = tmp_path / "model.jsonl"
    assert run_posthoc(["predict", "--predictor", f"predictors.lsml_models:{model}", str(astral_corpus), "--out",
                        str(out), "--no-progress"]) == 0
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    mentions = [m for line in lines for m in line["mentions"]]
    assert [(m["start"], m["end"], m["surface"]) for m in lines[0]["mentions"]] == TEXT_MENTIONS
    assert len(mentions) == 6 and [m.get("score") for m in mentions] == [score] * 6
    assert all(("score" in m) == (score is not None) for m in mentions)
