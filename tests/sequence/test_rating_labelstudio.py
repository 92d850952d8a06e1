"""The rating interface in a real Label Studio: validated, annotated by two users, exported, analysed."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import requests

from posthoc.paths import label_config
from posthoc.sequence import audit_orders
from posthoc.sequence.labelstudio import sequence_table_from_rating_export

pytestmark = pytest.mark.labelstudio

ITEMS = [("r1", "the cat sat", "le chat assis", 80.0), ("r2", "it rains", "il pleut", 95.0),
         ("r3", "good morning", "bonne nuit", 20.0), ("r4", "🙂 thanks", "merci 🙂", 70.0)]


def _post(server: Any, path: str, body: dict[str, Any], token: str) -> Any:
    response = requests.post(f"{server.url}{path}", json=body, headers={"Authorization": f"Token {token}"},
                             timeout=30)
    assert response.status_code in (200, 201, 204), response.text
    return response.json() if response.content else None


def test_rating_config_validates(ls_server: Any) -> None:
    from label_studio_sdk.label_interface import LabelInterface

    config = label_config("rating")
    response = requests.post(f"{ls_server.url}/api/projects/validate/", json={"label_config": config},
                             headers={"Authorization": f"Token {ls_server.token}"}, timeout=30)
    assert response.status_code in (200, 204), response.text
    interface = LabelInterface(config)
    assert interface.get_control("score").tag.lower() == "number"


def test_ratings_round_trip_into_a_sequence_table(ls_server: Any, ls_project: Any, ls_annotator: Any) -> None:
    rng = np.random.default_rng(3)
    workers = [ls_annotator(), ls_annotator()]
    expected: dict[tuple[str, str], tuple[int, float]] = {}
    exported = []
    for worker in workers:
        project = ls_project(label_config("rating"), title=f"rating {worker.email}")
        order = rng.permutation(len(ITEMS))
        tasks = [{"item": ITEMS[i][0], "reference": ITEMS[i][1], "candidate": ITEMS[i][2], "gold": ITEMS[i][3],
                  "position": position} for position, i in enumerate(order)]
        _post(ls_server, f"/api/projects/{project.id}/import", tasks, ls_server.token)  # type: ignore[arg-type]
        listed = requests.get(f"{ls_server.url}/api/tasks/", params={"project": project.id},
                              headers={"Authorization": f"Token {ls_server.token}"}, timeout=30).json()
        for task in sorted(listed["tasks"], key=lambda t: t["id"]):
            score = float(rng.integers(0, 101))
            result = [{"from_name": "score", "to_name": "candidate", "type": "number", "value": {"number": score}}]
            _post(ls_server, f"/api/tasks/{task['id']}/annotations/", {"result": result}, worker.token)
            expected[(str(worker.user_id), task["data"]["item"])] = (task["data"]["position"], score)
        export = requests.get(f"{ls_server.url}/api/projects/{project.id}/export", params={"exportType": "JSON"},
                              headers={"Authorization": f"Token {ls_server.token}"}, timeout=60)
        assert export.status_code == 200, export.text
        exported.extend(export.json())
    table = sequence_table_from_rating_export(exported)
    assert len(table) == len(workers) * len(ITEMS)
    # the plain export names the annotator by user id; every (worker, item) has its planned position and score
    got = {(str(r.worker), str(r.item)): (int(r.position), float(r.label)) for r in table.itertuples()}
    assert got == expected
    assert set(table["gold"]) == {item[3] for item in ITEMS}
    audit = audit_orders(table)
    assert audit.per_worker["served_vs_planned_tau"].round(9).eq(1.0).all()
