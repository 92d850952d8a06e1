"""A study planned from a `posthoc predict` output, pre-filled through the backend in a real Label Studio;
a new task in no manifest pre-filled by the backend's live predictor (the stand-in REL) in the same project."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from werkzeug.serving import make_server

from backend.test_labelstudio import _import_worker_tasks, _retrieve_predictions, _session, _tasks_with_predictions
from posthoc.links import title_of
from posthoc.paths import label_config
from posthoc.predictors.registry import PredictorSpec
from posthoc.sample import sample_corpus, sample_paths
from posthoc.study.plan.manifest import Manifest
from posthoc_backend.app import create_app
from posthoc_backend.connect import connect_backend
from posthoc_backend.protocol import MODEL_VERSION
from predictors.conftest import TEXT, run_posthoc
from predictors.standins import StandInREL

pytestmark = [pytest.mark.labelstudio, pytest.mark.slow]

SYSTEM = "REL-service"


@pytest.fixture
def sample_rel() -> Iterator[StandInREL]:
    """A stand-in REL whose aliases are the sample ground truth's linked surfaces (and TEXT's 東京)."""
    gt = sample_corpus().system("GT")
    aliases = {str(s): str(title_of(str(link))).replace(" ", "_") for s, link, nil in
               gt[["surface", "link", "is_nil"]].itertuples(index=False) if not nil and title_of(str(link))}
    aliases["東京"] = "Tokyo"
    with StandInREL(aliases).serve() as service:
        yield service  # type: ignore[misc]


def test_a_study_of_a_predicted_system_is_pre_filled_in_label_studio(
        ls_server: Any, ls_project: Callable[..., Any], sample_rel: StandInREL, tmp_path: Path) -> None:
    gt = sample_paths()["GT"]
    predicted = tmp_path / "rel-service.jsonl"
    assert run_posthoc(["predict", "--predictor", "rel", "--url", sample_rel.url, str(gt), "--out", str(predicted),
                        "--system", SYSTEM, "--no-progress"]) == 0
    (tmp_path / "gt.jsonl").write_bytes(gt.read_bytes())
    (tmp_path / "study.toml").write_text(
        '[study]\nname = "predicted"\nseed = 7\nn_workers = 4\ntasks_per_batch = 10\n\n'
        '[[inputs]]\npath = "gt.jsonl"\nsystem = "GT"\ndataset = "sample-news"\n\n'
        f'[[inputs]]\npath = "rel-service.jsonl"\nsystem = "{SYSTEM}"\n', encoding="utf-8")
    manifest_path = tmp_path / "manifest.sqlite"
    assert run_posthoc(["study", "plan", "--config", str(tmp_path / "study.toml"), "--out", str(manifest_path),
                        "--no-progress"]) == 0
    manifest = Manifest.open(manifest_path)
    written = [json.loads(line) for line in predicted.read_text(encoding="utf-8").splitlines()]
    output = {(line["id"], m["start"], m["end"], m["link"]) for line in written for m in line["mentions"]}

    app = create_app(manifest, predictor=PredictorSpec("rel", url=sample_rel.url), events_db=tmp_path / "ev.sqlite3")
    server = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        config = label_config("entity_verification")
        worker = manifest.workers()[0]
        project = ls_project(config, title=f"predicted {worker}")
        session = _session(ls_server)
        records = _import_worker_tasks(session, ls_server.url, project.id, manifest, worker)
        new = session.post(f"{ls_server.url}/api/projects/{project.id}/import",
                           json=[{"text": TEXT, "kb_pages": ""}], timeout=60)
        assert new.status_code == 201, new.text
        connect_backend(ls_server.url, ls_server.token, project.id, f"http://127.0.0.1:{server.server_port}")
        _retrieve_predictions(session, ls_server.url, project.id)
        tasks = _tasks_with_predictions(session, ls_server.url, project.id)
    finally:
        server.shutdown()
    assert len(tasks) == len(records) + 1
    mentions = manifest.mentions()
    checked = 0
    for task in tasks:
        (prediction,) = task["predictions"]
        assert prediction["model_version"] == MODEL_VERSION and prediction["score"] is None
        labels = [i for i in prediction["result"] if i["type"] == "labels"]
        key = task["data"].get("task_key")
        if key is None:  # the new text: the live predictor (stand-in REL) pre-filled it (GT aliases and 東京)
            assert [(i["value"]["start"], i["value"]["end"], i["value"]["text"]) for i in labels] == \
                [(12, 15, "𠮷野家"), (19, 21, "東京")]
            continue
        rows = mentions[mentions["task_key"] == key]
        assert [i["id"] for i in labels] == list(manifest.prefill(key)["mention_id"])
        real = rows[(rows["system"] == SYSTEM) & ~rows["is_control"].astype(bool)]
        for doc_id, start, end, link in real[["doc_id", "doc_start", "doc_end", "link"]].itertuples(index=False):
            assert (doc_id, int(start), int(end), None if link == "nil:" else link) in output
            checked += 1
    assert checked > 0  # the worker verifies some of the predicted system's annotations
