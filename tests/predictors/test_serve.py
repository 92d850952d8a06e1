"""`posthoc backend serve --predictor`: gunicorn workers get the predictor through the environment."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import requests

from backend.test_http import _free_port, _wait_up
from posthoc.paths import label_config
from posthoc_backend.protocol import MODEL_VERSION
from predictors.conftest import TEXT, TEXT_MENTIONS, run_posthoc
from predictors.standins import StandInREL


@pytest.mark.slow
def test_serve_with_the_rel_predictor_and_no_manifest(rel_service: StandInREL) -> None:
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    process = subprocess.Popen(
        [sys.executable, "-m", "posthoc.cli.main", "backend", "serve", "--predictor", "rel", "--predictor-url",
         rel_service.url, "--port", str(port), "--workers", "1"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        _wait_up(url, process)
        assert requests.get(f"{url}/health", timeout=10).json()["live_mode"] is True
        body = {"tasks": [{"id": 1, "data": {"text": TEXT}}], "label_config": label_config("entity_verification")}
        reply = requests.post(f"{url}/predict", json=body, timeout=30)
        assert reply.status_code == 200, reply.text
        (prediction,) = reply.json()["results"]
        assert prediction["model_version"] == MODEL_VERSION
        assert [(i["value"]["start"], i["value"]["end"], i["value"]["text"]) for i in prediction["result"]
                if i["type"] == "labels"] == TEXT_MENTIONS
    finally:
        process.terminate()
        _, stderr = process.communicate(timeout=30)
    assert b"live mode on (rel)" in stderr


@pytest.mark.parametrize(("extra", "message"), [
    (["--predictor", "rel"], "needs --url"),
    (["--predictor", "spacy", "--spacy-model", "/no/such/pipeline"], "cannot load it"),
    (["--predictor", "rel", "--predictor-url", "http://127.0.0.1:9/", "--predict-budget", "200"],
     "must be below --timeout"),
], ids=["rel without a url", "spacy model missing", "budget above the timeout"])
def test_serve_refuses_a_bad_predictor_before_starting(extra: list[str], message: str, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    assert run_posthoc(["backend", "serve", *extra, "--port", str(_free_port())]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]
