"""The project's sample corpus (posthoc.sample): its shape and the realistic differences between systems."""

from __future__ import annotations

import pandas as pd
import pytest

from posthoc.sample import DATASET, sample_corpus, sample_paths


@pytest.fixture(scope="module")
def corpus():  # type: ignore[no-untyped-def]
    return sample_corpus()


def test_paths_exist() -> None:
    paths = sample_paths()
    assert set(paths) == {"GT", "E2E", "REL"}
    assert all(path.is_file() for path in paths.values())


def test_shape(corpus) -> None:  # type: ignore[no-untyped-def]
    assert len(corpus.documents) == 20
    assert set(corpus.documents["dataset"]) == {DATASET}
    lengths = corpus.documents["text"].str.len()
    assert lengths.min() >= 100 and lengths.max() <= 700
    assert (lengths > 300).sum() >= 5  # some documents need more than one 300-character chunk
    per_doc = corpus.system("GT").groupby("doc_id").size()
    assert per_doc.min() >= 3 and per_doc.median() >= 8
    assert corpus.systems == ["GT", "E2E", "REL"]


def test_every_surface_matches_its_text(corpus) -> None:  # type: ignore[no-untyped-def]
    texts = dict(zip(corpus.documents["doc_id"], corpus.documents["text"], strict=True))
    for doc_id, start, end, surface in corpus.mentions[["doc_id", "start", "end", "surface"]].itertuples(index=False):
        assert texts[doc_id][start:end] == surface


def test_texts_hold_hard_unicode(corpus) -> None:  # type: ignore[no-untyped-def]
    joined = "".join(corpus.documents["text"])
    for needle in ["Zoë", "\u0301", "東京", "🇺🇦", "\u200d", "𠮷", "서울", "चंद्रयान"]:
        assert needle in joined


@pytest.mark.parametrize("system", ["E2E", "REL"])
def test_systems_differ_from_gt_realistically(corpus, system: str) -> None:  # type: ignore[no-untyped-def]
    gt = corpus.system("GT")
    sys = corpus.system(system)
    key = ["doc_id", "start", "end"]
    both = sys.merge(gt, on=key, suffixes=("", "_gt"), how="outer", indicator=True)
    exact = both[both["_merge"] == "both"]
    assert (exact["link"] != exact["link_gt"]).sum() >= 3  # other links on the same span
    assert (both["_merge"] == "right_only").sum() >= 5  # GT mentions the system has not at that span
    extra = both[both["_merge"] == "left_only"]
    assert len(extra) >= 5
    overlaps = 0
    for row in extra.itertuples():
        same_doc = gt[gt["doc_id"] == row.doc_id]
        hit = same_doc[(same_doc["start"] < row.end) & (row.start < same_doc["end"])]
        if not hit.empty:
            overlaps += 1
            shifted = ((hit["start"] != row.start) | (hit["end"] != row.end)).all()
            assert shifted
    assert overlaps >= 3  # shifted boundaries and nested mentions overlap a GT mention
    assert sys["is_nil"].sum() >= 1
    assert not sys.duplicated(["doc_id", "start", "end"]).any()
    assert isinstance(sys, pd.DataFrame)


def test_gt_has_an_emerging_entity(corpus) -> None:  # type: ignore[no-untyped-def]
    gt = corpus.system("GT")
    assert gt.loc[gt["is_nil"], "surface"].tolist() == ["Zoë Adams"]
