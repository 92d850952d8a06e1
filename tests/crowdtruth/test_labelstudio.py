"""The RelEx and multiple-choice configs in a real Label Studio: validate, annotate as 3 users, export, score."""

from __future__ import annotations

from typing import Any

import pytest
import requests
from ct_helpers import max_abs_diff, peer_on_table

from posthoc.crowdtruth.io import (
    RELEX_RELATIONS,
    judgements_from_label_studio,
    multiple_choice_task,
    relation_extraction_task,
)
from posthoc.crowdtruth.metrics import crowdtruth_metrics
from posthoc.crowdtruth.vectors import build_vectors
from posthoc.errors import PosthocInputError
from posthoc.paths import label_config

pytestmark = pytest.mark.labelstudio

SENTENCES = [
    ("s1", "Aspirin treats headache in adults.", (0, 7), (15, 23)),
    ("s2", "Smoking 🚬 causes lung cancer.", (0, 7), (17, 28)),
    ("s3", "糖尿病 may come with fatigue and thirst.", (0, 3), (18, 25)),
]
#: worker -> unit -> chosen relations
CHOICES = {
    0: {"s1": ["treats"], "s2": ["causes"], "s3": ["symptom", "associated_with"]},
    1: {"s1": ["treats"], "s2": ["causes", "associated_with"], "s3": ["symptom"]},
    2: {"s1": ["treats", "prevents"], "s2": ["none"], "s3": ["manifestation"]},
}


def _api(server: Any, method: str, path: str, token: str | None = None, **kwargs: Any) -> requests.Response:
    headers = {"Authorization": f"Token {token or server.token}"}
    return requests.request(method, f"{server.url}{path}", headers=headers, timeout=60, **kwargs)


def test_task_builder_escapes_and_marks_both_terms() -> None:
    task = relation_extraction_task("u<1>", "A <b> 😀 causes C & D", (0, 1), (8, 14))
    assert task["term1"] == "A" and task["term2"] == "causes"
    assert "&lt;b&gt;" in task["sentence_html"] and "<b>causes</b>" in task["sentence_html"]
    with pytest.raises(PosthocInputError, match="overlap"):
        relation_extraction_task("u", "abcdef", (0, 3), (2, 5))
    with pytest.raises(PosthocInputError, match="outside"):
        relation_extraction_task("u", "abc", (0, 1), (2, 9))


@pytest.mark.parametrize("name", ["relation_extraction", "multiple_choice"])
def test_configs_validate_in_label_studio(ls_server: Any, name: str) -> None:
    from label_studio_sdk.label_interface import LabelInterface

    response = _api(ls_server, "POST", "/api/projects/validate/", json={"label_config": label_config(name)})
    assert response.status_code in (200, 204), response.text
    interface = LabelInterface(label_config(name))
    control = next(iter(interface.controls))
    assert control.tag == "Choices"
    if name == "relation_extraction":
        assert list(control.labels) == list(RELEX_RELATIONS)


def test_relation_extraction_round_trip_scores_like_the_peer(ls_server: Any, ls_project: Any,
                                                             ls_annotator: Any) -> None:
    project = ls_project(label_config("relation_extraction"), title="crowdtruth relex")
    tasks = [relation_extraction_task(unit, text, t1, t2) for unit, text, t1, t2 in SENTENCES]
    assert _api(ls_server, "POST", f"/api/projects/{project.id}/import", json=tasks).status_code in (200, 201)
    listed = _api(ls_server, "GET", "/api/tasks", params={"project": project.id, "page_size": 100}).json()
    task_ids = {t["data"]["unit_id"]: t["id"] for t in (listed["tasks"] if isinstance(listed, dict) else listed)}
    assert set(task_ids) == {"s1", "s2", "s3"}
    for worker, per_unit in CHOICES.items():
        account = ls_annotator()
        for unit, relations in per_unit.items():
            result = [{"from_name": "relation", "to_name": "sentence", "type": "choices",
                       "value": {"choices": relations}}]
            posted = _api(ls_server, "POST", f"/api/tasks/{task_ids[unit]}/annotations/", token=account.token,
                          json={"result": result})
            assert posted.status_code == 201, (worker, posted.text)
    export = _api(ls_server, "GET", f"/api/projects/{project.id}/export", params={"exportType": "JSON"}).json()
    table = judgements_from_label_studio(export, from_name="relation", unit_field="unit_id")
    assert table.groupby("unit")["worker"].nunique().to_dict() == {"s1": 3, "s2": 3, "s3": 3}
    vectors = build_vectors(table, annotation_vector=RELEX_RELATIONS, open_ended=False)
    scores = crowdtruth_metrics(vectors)
    uas = scores.unit_annotations.set_index(["unit", "annotation"])["uas_initial"]
    assert uas[("s1", "treats")] == pytest.approx(1.0)
    assert uas[("s2", "causes")] == pytest.approx(2 / 3)
    peer = peer_on_table(table, open_ended=False, vector=list(RELEX_RELATIONS))
    assert max_abs_diff(scores.workers.set_index("worker")["wqs"], peer["workers"]["wqs"]) < 1e-9
    assert max_abs_diff(scores.units.set_index("unit")["uqs"], peer["units"]["uqs"]) < 1e-9


def test_multiple_choice_project_accepts_dynamic_options(ls_server: Any, ls_project: Any) -> None:
    project = ls_project(label_config("multiple_choice"), title="crowdtruth multiple choice")
    task = multiple_choice_task("q1", "Paris is the capital of France.", "Is this statement true?",
                                ["true", "false", "unsure"])
    assert _api(ls_server, "POST", f"/api/projects/{project.id}/import", json=[task]).status_code in (200, 201)
    listed = _api(ls_server, "GET", "/api/tasks", params={"project": project.id}).json()
    stored = (listed["tasks"] if isinstance(listed, dict) else listed)[0]
    assert stored["data"]["options"] == [{"value": "true"}, {"value": "false"}, {"value": "unsure"}]
    result = [{"from_name": "answer", "to_name": "item", "type": "choices", "value": {"choices": ["true"]}}]
    posted = _api(ls_server, "POST", f"/api/tasks/{stored['id']}/annotations/", json={"result": result})
    assert posted.status_code == 201, posted.text
    export = _api(ls_server, "GET", f"/api/projects/{project.id}/export", params={"exportType": "JSON"}).json()
    table = judgements_from_label_studio(export, from_name="answer", unit_field="unit_id")
    assert table[["unit", "annotation"]].values.tolist() == [["q1", "true"]]
