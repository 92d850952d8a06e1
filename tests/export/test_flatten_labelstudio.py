"""The export reader on snapshot exports made by a real Label Studio (see conftest.py for the cases)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from ls_tiny_study import EDIT_TYPED, TinyStudy

from posthoc.export.fetch import connect, fetch_export, project_label_config
from posthoc.export.flatten import ExportFlattener, Flattened
from posthoc.labelstudio.label_config import verification_tags
from posthoc.links import normalise_link
from posthoc.study.plan.index import ManifestIndex
from posthoc.tables import JUDGEMENT_COLUMNS

pytestmark = pytest.mark.labelstudio


@pytest.fixture(scope="module")
def exported(tiny_study: TinyStudy, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    client = connect(tiny_study.url, tiny_study.token)
    folder = tmp_path_factory.mktemp("exports")
    return {worker: fetch_export(client, project_id, folder / f"{worker}.json")
            for worker, project_id in tiny_study.projects.items()}


@pytest.fixture(scope="module")
def flattened(tiny_study: TinyStudy, exported: dict[str, Path]) -> Flattened:
    client = connect(tiny_study.url, tiny_study.token)
    index = ManifestIndex.from_manifest(tiny_study.manifest)
    first = next(iter(tiny_study.projects.values()))
    flattener = ExportFlattener(index, verification_tags(project_label_config(client, first)))
    for worker, path in sorted(exported.items()):
        flattener.add_export(path, worker=worker)
    return flattener.result()


def _prefill_ids(study: TinyStudy, key: str) -> list[str]:
    return list(study.manifest.prefill(key)["mention_id"])


def test_snapshot_export_has_full_predictions_expanded_users_and_drafts(tiny_study: TinyStudy,
                                                                       exported: dict[str, Path]) -> None:
    w1, w2 = tiny_study.manifest.workers()
    tasks = json.loads(exported[w1].read_text(encoding="utf-8"))
    annotations = [a for t in tasks for a in t["annotations"]]
    assert all(isinstance(a["completed_by"], dict) and "email" in a["completed_by"] for a in annotations)
    assert all(t["predictions"] and isinstance(t["predictions"][0], dict) and t["predictions"][0]["result"]
               for t in tasks)
    drafts = [d for t in json.loads(exported[w2].read_text(encoding="utf-8")) for d in t["drafts"]]
    assert len(drafts) == 1 and isinstance(drafts[0], dict)


def test_every_judgement_row_is_the_case_that_was_posted(tiny_study: TinyStudy, flattened: Flattened) -> None:
    w1, w2 = tiny_study.manifest.workers()
    k0, k1 = tiny_study.tasks[w1]
    k3 = tiny_study.tasks[w2][1]
    p0, p1, p3 = (_prefill_ids(tiny_study, k) for k in (k0, k1, k3))
    edited = normalise_link(EDIT_TYPED).link
    expected = {
        (k0, p0[0], "verify", None, False),
        (k0, p0[1], "edit", edited, False),
        *((k0, m, "remove", None, True) for m in p0[2:]),
        (k1, p1[0], "remove", None, False),  # p1[1] was moved: an exclusion, not a row
        *((k1, m, "verify", None, False) for m in p1[2:]),
        *((k3, m, "verify", None, False) for m in p3),
    }
    rows = flattened.judgements
    got = {(r.task_key, r.mention_id, r.outcome, None if pd.isna(r.new_link) else r.new_link, bool(r.deleted_region))
           for r in rows.itertuples(index=False)}
    assert got == expected
    assert len(rows) == len(expected)
    assert edited == "https://en.wikipedia.org/wiki/Emmanuel_macron"


def test_rows_carry_document_offsets_and_the_manifest_and_annotation_fields(tiny_study: TinyStudy,
                                                                          flattened: Flattened) -> None:
    manifest = tiny_study.manifest
    texts = {(d, i): t for d, i, t in manifest.documents().itertuples(index=False)}
    mentions = manifest.mentions().set_index("mention_id")
    rows = flattened.judgements
    assert tuple(rows.columns) == JUDGEMENT_COLUMNS
    for row in rows.itertuples(index=False):
        task = manifest.task(row.task_key)
        assert texts[(row.dataset, row.doc_id)][row.start:row.end] == row.surface
        assert row.start == task.chunk_start + int(mentions.loc[row.mention_id, "start"])
        assert (row.worker, row.position, row.system, row.chunk_id, row.item_id, row.study) == (
            task.worker, task.position, task.system, task.chunk_id, task.item_id, "tiny")
        assert row.link == mentions.loc[row.mention_id, "link"]
        kept: dict[str, Any] = tiny_study.annotations[row.task_key]
        assert row.created_at == kept["created_at"]
        assert row.lead_time == pytest.approx(tiny_study.lead_times[row.task_key])
        assert not row.is_control


def test_skipped_drafts_foreign_twice_manual_and_moved_are_reported(tiny_study: TinyStudy,
                                                                     flattened: Flattened) -> None:
    w1, w2 = tiny_study.manifest.workers()
    k0, k1 = tiny_study.tasks[w1]
    k2 = tiny_study.tasks[w2][0]
    got = {(r.kind, r.worker, r.task_key) for r in flattened.exclusions.itertuples(index=False)}
    assert got == {
        ("foreign_annotator", w1, k0),
        ("manual_region", w1, k0),
        ("annotated_twice", w1, k1),
        ("offsets_changed", w1, k1),
        ("draft", w2, k2),
        ("skipped", w2, k2),
    }
    moved = flattened.exclusions.query("kind == 'offsets_changed'")["detail"].iloc[0]
    assert _prefill_ids(tiny_study, k1)[1] in moved
    twice = flattened.exclusions.query("kind == 'annotated_twice'")["detail"].iloc[0]
    assert f"kept annotation {tiny_study.annotations[k1]['id']}" in twice
    assert "handdrawn1" in flattened.exclusions.query("kind == 'manual_region'")["detail"].iloc[0]


def test_the_same_export_flattens_to_identical_tables(tiny_study: TinyStudy, exported: dict[str, Path],
                                                     flattened: Flattened) -> None:
    index = ManifestIndex.from_manifest(tiny_study.manifest)
    again = ExportFlattener(index, flattened_tags())
    for worker, path in sorted(exported.items(), reverse=True):  # other order, same tables
        again.add_export(path, worker=worker)
    result = again.result()
    pd.testing.assert_frame_equal(result.judgements, flattened.judgements)
    pd.testing.assert_frame_equal(result.exclusions, flattened.exclusions)


def flattened_tags() -> Any:
    from posthoc.paths import label_config

    return verification_tags(label_config("entity_verification"))


def test_an_export_put_in_the_wrong_worker_is_reported_not_mixed_in(tiny_study: TinyStudy,
                                                                    exported: dict[str, Path]) -> None:
    w1, w2 = tiny_study.manifest.workers()
    flattener = ExportFlattener(ManifestIndex.from_manifest(tiny_study.manifest), flattened_tags())
    flattener.add_export(exported[w1], worker=w2)
    result = flattener.result()
    assert result.judgements.empty
    assert set(result.exclusions["kind"]) == {"wrong_project"}
    assert len(result.exclusions) == len(tiny_study.tasks[w1])


def _verified_task(tiny_study: TinyStudy, exported: dict[str, Path]) -> dict[str, Any]:
    """The real exported task that w002 verified in full (position 1)."""
    key = tiny_study.tasks["w002"][1]
    tasks = json.loads(exported["w002"].read_text(encoding="utf-8"))
    return next(t for t in tasks if t["data"]["task_key"] == key)


def _flatten_one(tiny_study: TinyStudy, task: dict[str, Any]) -> Flattened:
    flattener = ExportFlattener(ManifestIndex.from_manifest(tiny_study.manifest), flattened_tags())
    flattener.add_task(task, source="edited copy of a real export")
    return flattener.result()


def test_an_annotation_without_any_prediction_is_reported(tiny_study: TinyStudy, exported: dict[str, Path]) -> None:
    task = _verified_task(tiny_study, exported)
    task["predictions"] = []
    for annotation in task["annotations"]:
        annotation["prediction"] = {}
    result = _flatten_one(tiny_study, task)
    assert result.judgements.empty
    assert list(result.exclusions["kind"]) == ["no_prediction"]


def test_prediction_regions_that_differ_from_the_manifest_are_reported(tiny_study: TinyStudy,
                                                                       exported: dict[str, Path]) -> None:
    task = _verified_task(tiny_study, exported)
    key = task["data"]["task_key"]
    ids = _prefill_ids(tiny_study, key)
    for prediction in [task["predictions"][0], *(a["prediction"] for a in task["annotations"])]:
        prediction["result"] = [r for r in prediction["result"] if r["id"] != ids[0]]
        prediction["result"].append({**prediction["result"][0], "id": "stranger"})
    result = _flatten_one(tiny_study, task)
    assert set(result.judgements["mention_id"]) == set(ids[1:])
    # the annotation still holds a region the prediction lacks: from the export's view it was drawn by hand
    assert sorted(result.exclusions["kind"]) == ["manual_region", "not_prefilled", "unknown_prediction_region"]


def test_a_kept_region_without_a_decision_is_reported(tiny_study: TinyStudy, exported: dict[str, Path]) -> None:
    task = _verified_task(tiny_study, exported)
    ids = _prefill_ids(tiny_study, task["data"]["task_key"])
    annotation = task["annotations"][0]
    annotation["result"] = [r for r in annotation["result"] if not (r["id"] == ids[0] and r["type"] == "choices")]
    result = _flatten_one(tiny_study, task)
    assert set(result.judgements["mention_id"]) == set(ids[1:])
    assert list(result.exclusions["kind"]) == ["undecided_region"]


def test_a_task_outside_the_manifest_is_reported(tiny_study: TinyStudy, exported: dict[str, Path]) -> None:
    task = _verified_task(tiny_study, exported)
    task["data"]["task_key"] = "t-not-in-this-study"
    result = _flatten_one(tiny_study, task)
    assert result.judgements.empty
    assert list(result.exclusions["kind"]) == ["unknown_task"]


def test_an_offline_label_studio_export_cli_file_flattens_like_the_snapshot(
        ls_server: Any, tiny_study: TinyStudy, flattened: Flattened, tmp_path: Path) -> None:
    """``label-studio export PROJECT JSON`` (reads the database directly) gives the same judgements."""
    w1 = tiny_study.manifest.workers()[0]
    ls_server.run_command(["export", str(tiny_study.projects[w1]), "JSON", "--export-path", str(tmp_path)])
    (path,) = tmp_path.glob("*.json")
    flattener = ExportFlattener(ManifestIndex.from_manifest(tiny_study.manifest), flattened_tags())
    flattener.add_export(path, worker=w1)
    offline = flattener.result()
    snapshot = flattened.judgements[flattened.judgements["worker"] == w1].reset_index(drop=True)
    pd.testing.assert_frame_equal(offline.judgements, snapshot)
    snapshot_exclusions = flattened.exclusions[flattened.exclusions["worker"] == w1].reset_index(drop=True)
    pd.testing.assert_frame_equal(offline.exclusions, snapshot_exclusions)
