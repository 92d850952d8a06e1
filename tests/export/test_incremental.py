"""Per-project flattening joined by ``combine`` (and read back from the cache) is exactly one flattener's output."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from test_streaming import TEXT, big_index

from posthoc.export.flatten import ExportFlattener, iter_export_tasks
from posthoc.export.incremental import JudgementCache, combine, flatten_part, overlapping
from posthoc.export.synthetic import write_synthetic_export
from posthoc.labelstudio.label_config import verification_tags
from posthoc.paths import label_config


def _split_by_worker(path: Path, folder: Path) -> dict[str, Path]:
    """The synthetic export split into one file per worker (as one project per worker exports), with anomalies:
    one task submitted twice, one task of an unknown key, one draft, one skipped task."""
    tasks: dict[str, list[dict]] = {}
    for task in iter_export_tasks(path):
        tasks.setdefault(str(task["annotations"][0]["completed_by"]["email"]).split("@")[0], []).append(task)
    first = sorted(tasks)[0]
    twice = json.loads(json.dumps(tasks[first][0]))
    twice["annotations"].append({**twice["annotations"][0], "id": 99_999, "created_at": "2026-02-01T00:00:00Z"})
    tasks[first][0] = twice
    tasks[first].append({**tasks[first][1], "id": 88_888, "data": {**tasks[first][1]["data"], "task_key": "nope"}})
    second = sorted(tasks)[1]
    tasks[second][0] = {**tasks[second][0], "drafts": [{"id": 5, "user": "w001@posthoc.local", "result": []}]}
    tasks[second][1] = {**tasks[second][1], "annotations": [{**tasks[second][1]["annotations"][0],
                                                             "was_cancelled": True}]}
    files = {}
    for worker, items in sorted(tasks.items()):
        files[worker] = folder / f"{worker}.json"
        files[worker].write_text(json.dumps(items, ensure_ascii=False), encoding="utf-8")
    return files


@pytest.fixture(scope="module")
def exports(tmp_path_factory: pytest.TempPathFactory) -> tuple[object, object, dict[str, Path]]:
    folder = tmp_path_factory.mktemp("incremental")
    index = big_index(300)
    tags = verification_tags(label_config("entity_verification"))
    write_synthetic_export(folder / "all.json", index, tags, texts=dict.fromkeys(index.tasks, TEXT), seed=5)
    return index, tags, _split_by_worker(folder / "all.json", folder)


def _csv(frame: pd.DataFrame) -> bytes:
    return frame.to_csv(index=False, lineterminator="\n").encode("utf-8")


def test_per_project_parts_combined_equal_one_flattener_byte_for_byte(exports: tuple, tmp_path: Path) -> None:
    index, tags, files = exports
    users = {f"{w}@posthoc.local": w for w in index.workers}
    whole = ExportFlattener(index, tags, user_workers=users)
    for number, (worker, path) in enumerate(files.items()):
        whole.add_export(path, worker=worker, source=f"project {number}")
    expected = whole.result()
    parts = [flatten_part(path, index, tags, user_workers=users, worker=worker, source=f"project {number}")
             for number, (worker, path) in enumerate(files.items())]
    assert not overlapping(parts)
    joined = combine(parts)
    pd.testing.assert_frame_equal(joined.judgements, expected.judgements)
    pd.testing.assert_frame_equal(joined.exclusions, expected.exclusions)
    assert joined.n_tasks == expected.n_tasks
    assert _csv(joined.judgements) == _csv(expected.judgements)
    assert {"annotated_twice", "unknown_task", "draft", "skipped"} <= set(expected.exclusions["kind"])
    assert "project 0" in " ".join(expected.exclusions["detail"])  # named by project, not by a temporary path

    # staged, committed and read back from the cache: still the same bytes; a wrong key is a miss
    cache = JudgementCache(tmp_path / "cache", tmp_path / "staging")
    for number, part in enumerate(parts):
        cache.stage(number, f"key{number}", part)
    cache.commit(list(range(len(parts))), {"fingerprint": "x"})
    assert not list((tmp_path / "staging").glob("project-*"))
    loaded = [cache.load(number, f"key{number}") for number in range(len(parts))]
    assert all(part is not None for part in loaded)
    again = combine([part for part in loaded if part is not None])
    pd.testing.assert_frame_equal(again.judgements, expected.judgements)
    assert _csv(again.judgements) == _csv(expected.judgements)
    assert _csv(again.exclusions) == _csv(expected.exclusions)
    assert cache.load(0, "another key") is None
    assert cache.state() == {"fingerprint": "x"}

    # a project gone from the study loses its entry; a damaged entry is a miss, not an error
    cache.commit([0, 1], None)
    assert sorted(p.name for p in (tmp_path / "cache").glob("project-*.json")) == ["project-0.json",
                                                                                   "project-1.json"]
    (tmp_path / "cache" / "project-1.json").write_text("{not json", encoding="utf-8")
    assert cache.load(1, "key1") is None


def test_a_task_in_two_exports_is_seen_as_overlapping(exports: tuple) -> None:
    index, tags, files = exports
    users = {f"{w}@posthoc.local": w for w in index.workers}
    path = next(iter(files.values()))
    parts = [flatten_part(path, index, tags, user_workers=users, worker=None, source=f"project {n}") for n in (1, 2)]
    assert overlapping(parts)
