"""Properties of the flattener on seeded synthetic exports: every pre-filled annotation becomes one row."""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from posthoc.export.flatten import ExportFlattener
from posthoc.export.synthetic import write_synthetic_export
from posthoc.labelstudio.label_config import verification_tags
from posthoc.paths import label_config
from posthoc.study.plan.index import ManifestIndex

TEXT = "👩‍👩‍👧 Zoë met Jose\u0301 in 東京 and 🇫🇷 Paris yesterday."
SPANS = [(TEXT.index(w), TEXT.index(w) + len(w)) for w in ("Zoë", "Jose\u0301", "東京", "Paris")]
TAGS = verification_tags(label_config("entity_verification"))


def _index(n_tasks: int, chunk_start: int) -> ManifestIndex:
    numbers = range(n_tasks)
    tasks = pd.DataFrame({
        "task_key": [f"k{i}" for i in numbers], "worker": [f"w{i % 3}" for i in numbers],
        "position": [i // 3 for i in numbers], "item_id": [f"i{i}" for i in numbers],
        "chunk_id": "c0", "dataset": "d", "doc_id": "doc", "system": "GT", "is_control": False})
    rows = [(f"k{i}", f"m{i}-{j}", s, e, chunk_start + s, chunk_start + e, TEXT[s:e],
             f"https://en.wikipedia.org/wiki/E{j}", None) for i in numbers for j, (s, e) in enumerate(SPANS)]
    mentions = pd.DataFrame(rows, columns=["task_key", "mention_id", "start", "end", "doc_start", "doc_end",
                                           "surface", "link", "expected_outcome"])
    return ManifestIndex.from_frames("p", tasks, mentions)


@settings(max_examples=15, deadline=None)
@given(n_tasks=st.integers(1, 12), seed=st.integers(0, 2**16), chunk_start=st.integers(0, 500),
       weights=st.tuples(*(st.integers(0, 5) for _ in range(4))).filter(lambda w: sum(w) > 0))
def test_rows_match_the_written_decisions(tmp_path_factory: pytest.TempPathFactory, n_tasks: int, seed: int,
                                          chunk_start: int, weights: tuple[int, int, int, int]) -> None:
    index = _index(n_tasks, chunk_start)
    total = sum(weights)
    probabilities = (weights[0] / total, weights[1] / total, weights[2] / total, weights[3] / total)
    written = write_synthetic_export(tmp_path_factory.mktemp("prop") / "e.json", index, TAGS,
                                     texts=dict.fromkeys(index.tasks, TEXT), seed=seed, probabilities=probabilities)
    flattener = ExportFlattener(index, TAGS)
    flattener.add_export(written.path)
    rows = flattener.result().judgements
    assert len(rows) == n_tasks * len(SPANS) == written.n_judgements
    kinds = rows["outcome"].where(~rows["deleted_region"], "deleted").value_counts().to_dict()
    assert kinds == dict(written.decisions)
    assert (rows.loc[rows["deleted_region"], "outcome"] == "remove").all()
    assert (rows["new_link"].notna() == (rows["outcome"] == "edit")).all()
    assert (rows["start"] - chunk_start).tolist() == [SPANS[int(m.split("-")[1])][0] for m in rows["mention_id"]]
    assert (rows["end"] - rows["start"] == rows["surface"].str.len()).all()
