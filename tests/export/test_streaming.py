"""A large export is flattened task by task: peak memory stays far below the file size (tracemalloc)."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pandas as pd
import pytest

from posthoc.export.flatten import ExportFlattener, iter_export_tasks
from posthoc.export.synthetic import write_synthetic_export
from posthoc.labelstudio.label_config import verification_tags
from posthoc.links import normalise_link
from posthoc.paths import label_config
from posthoc.study.plan.index import ManifestIndex

N_TASKS = 800
PER_TASK = 10
TEXT = ("Die Zürcher Straße 🇨🇭 liegt am See; 東京 and Paris are far. " * 6)[:300]


def big_index(n_tasks: int) -> ManifestIndex:
    """A manifest index of ``n_tasks`` tasks of ``PER_TASK`` mentions each (50 workers, 3 systems)."""
    keys = [f"t{i:07d}" for i in range(n_tasks)]
    tasks = pd.DataFrame({
        "task_key": keys, "worker": [f"w{i % 50:03d}" for i in range(n_tasks)],
        "position": [i // 50 for i in range(n_tasks)], "item_id": [f"i{i:07d}" for i in range(n_tasks)],
        "chunk_id": [f"c{i // 3:07d}" for i in range(n_tasks)], "dataset": "big",
        "doc_id": [f"d{i // 9:07d}" for i in range(n_tasks)],
        "system": [("GT", "E2E", "REL")[i % 3] for i in range(n_tasks)],
        "is_control": False})
    rows = [(key, f"m{key}{j}", 27 * j, 27 * j + 5, 1000 + 27 * j, 1005 + 27 * j, TEXT[27 * j:27 * j + 5],
             f"https://en.wikipedia.org/wiki/E{j}", None) for key in keys for j in range(PER_TASK)]
    mentions = pd.DataFrame(rows, columns=["task_key", "mention_id", "start", "end", "doc_start", "doc_end",
                                           "surface", "link", "expected_outcome"])
    return ManifestIndex.from_frames("big", tasks, mentions)


@pytest.mark.slow
def test_flattening_a_large_export_needs_far_less_memory_than_the_file(tmp_path: Path) -> None:
    index = big_index(N_TASKS)
    tags = verification_tags(label_config("entity_verification"))
    path = tmp_path / "export.json"
    written = write_synthetic_export(path, index, tags, texts=dict.fromkeys(index.tasks, TEXT), seed=3)
    size = path.stat().st_size
    assert written.n_judgements == N_TASKS * PER_TASK

    tracemalloc.start()
    try:
        assert sum(1 for _ in iter_export_tasks(path)) == N_TASKS
        _, iterate_peak = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        flattener = ExportFlattener(index, tags)
        flattener.add_export(path)
        result = flattener.result()
        _, flatten_peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    print(f"peaks: iterate {iterate_peak / size:.3f}, flatten {flatten_peak / size:.3f} of {size} bytes")
    assert iterate_peak < 0.1 * size, f"iterating held {iterate_peak} bytes of a {size}-byte file"
    assert flatten_peak < 0.3 * size, f"flattening peaked at {flatten_peak} bytes for a {size}-byte file"
    # and the rows are the ones written (known true counts of the seeded generator)
    judgements = result.judgements
    assert len(judgements) == written.n_judgements
    counts = judgements.assign(kind=judgements["outcome"].where(~judgements["deleted_region"], "deleted"))
    assert counts["kind"].value_counts().to_dict() == dict(written.decisions)
    edits = judgements[judgements["outcome"] == "edit"]
    assert (edits["new_link"] == [normalise_link(f"Corrected {s}").link for s in edits["surface"]]).all()
    assert result.exclusions.empty
