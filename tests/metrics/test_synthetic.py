"""The synthetic study generator: valid code-point offsets, known structure, seeded."""

from __future__ import annotations

import pandas as pd
import pytest

from posthoc.synthetic import PAPER_JUDGEMENTS, PAPER_TABLE1, paper_sized_study, synthetic_study
from posthoc.tables import DOCUMENT_COLUMNS, JUDGEMENT_COLUMNS, MENTION_COLUMNS


def test_offsets_are_code_points_into_the_text():
    documents, mentions, judgements = synthetic_study(6, seed=3)
    texts = documents.set_index(["dataset", "doc_id"])["text"]
    for row in mentions.itertuples():
        assert texts[(row.dataset, row.doc_id)][row.start : row.end] == row.surface
    assert any(not text.isascii() for text in texts)  # accents, CJK, an emoji, a combining mark
    assert list(documents.columns) == list(DOCUMENT_COLUMNS)
    assert list(mentions.columns) == list(MENTION_COLUMNS)
    assert list(judgements.columns) == list(JUDGEMENT_COLUMNS)


def test_same_seed_same_tables():
    first, second = synthetic_study(4, seed=9, k=2), synthetic_study(4, seed=9, k=2)
    for a, b in zip(first, second, strict=True):
        pd.testing.assert_frame_equal(a, b)
    assert not synthetic_study(4, seed=10, k=2)[1].equals(first[1])


def test_k_judges_per_annotation_and_nobody_judges_an_item_twice():
    _, mentions, judgements = synthetic_study(5, seed=2, k=3)
    real = judgements.loc[~judgements["is_control"]]
    assert len(real) == 3 * len(mentions)
    assert real.groupby("mention_id")["worker"].nunique().eq(3).all()
    assert not real.duplicated(["item_id", "worker", "mention_id"]).any()
    assert real.groupby(["item_id", "worker"])["mention_id"].nunique().max() >= 1


def test_controls_and_click_through_workers():
    _, _, judgements = synthetic_study(10, seed=4, failing_worker_share=0.5, n_control=3)
    controls = judgements.loc[judgements["is_control"]]
    assert controls.groupby("worker").size().eq(3).all()
    passed = (controls["outcome"] == controls["expected_outcome"]).groupby(controls["worker"]).all()
    real = judgements.loc[~judgements["is_control"]]
    always_verify = real.groupby("worker")["outcome"].apply(lambda s: (s == "verify").all())
    # every worker who failed a control is a click-through worker (verifies everything)
    assert always_verify.reindex(passed.index[~passed]).fillna(True).all()


def test_paper_sized_study_keeps_table1_proportions():
    _, mentions, judgements = paper_sized_study(scale=0.02, seed=1, n_control=0)
    counts = mentions.groupby(["dataset", "system"]).size()
    for dataset, (_, per_system) in PAPER_TABLE1.items():
        for system, n in per_system.items():
            assert counts[(dataset, system)] == max(1, round(n * 0.02))
    assert len(judgements) == len(mentions)


@pytest.mark.slow
def test_paper_sized_study_has_the_papers_judgement_count():
    _, _, judgements = paper_sized_study(seed=0)
    assert int((~judgements["is_control"]).sum()) == PAPER_JUDGEMENTS == 167_432
