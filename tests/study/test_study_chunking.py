"""Chunking (paper 000, section 2.1): mentions never cut, offsets map back, the limit holds or is reported."""

from __future__ import annotations

import bisect

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from posthoc.errors import PosthocInputError
from posthoc.study.plan.chunking import _grapheme_safe, _merge_blocks, chunk_documents, split_text
from posthoc.tables import MENTION_COLUMNS

# letters, CJK, emoji (astral, ZWJ sequence parts, skin tone), combining marks, spaces and sentence ends
ALPHABET = st.sampled_from(
    ["a", "b", "Z", "é", "東", "京", "😀", "👩", "\u200d", "💻", "\U0001F3FD", "\u0301", "\u0308", " ", " ", " ",
     "\n", ".", "!", "。", "ß", "🇫", "🇷"]
)


def _mentions_frame(text: str, spans: list[tuple[int, int]], *, doc_id: str = "d1") -> pd.DataFrame:
    rows = [("ds", doc_id, "GT", s, e, text[s:e], "L", "L", False) for s, e in spans]
    return pd.DataFrame(rows, columns=list(MENTION_COLUMNS))


@st.composite
def documents_with_mentions(draw: st.DrawFn) -> tuple[str, list[tuple[int, int]], int]:
    text = "".join(draw(st.lists(ALPHABET, min_size=0, max_size=240)))
    spans: list[tuple[int, int]] = []
    if len(text) >= 1:
        n = draw(st.integers(0, 12))
        for _ in range(n):
            start = draw(st.integers(0, len(text) - 1))
            end = draw(st.integers(start + 1, min(len(text), start + draw(st.sampled_from([3, 8, 40, 120])))))
            spans.append((start, end))
    max_chars = draw(st.integers(4, 80))
    return text, spans, max_chars


def _check(text: str, spans: list[tuple[int, int]], max_chars: int) -> None:
    documents = pd.DataFrame({"dataset": ["ds"], "doc_id": ["d1"], "text": [text]})
    chunking = chunk_documents(documents, _mentions_frame(text, spans), max_chars=max_chars)
    chunks = chunking.chunks
    starts = chunks["chunk_start"].tolist()
    ends = chunks["chunk_end"].tolist()
    # exact text, in order, non-empty, disjoint; what lies between chunks is whitespace only
    covered = 0
    for start, end, chunk_text in zip(starts, ends, chunks["text"], strict=True):
        assert chunk_text == text[start:end]
        assert end > start >= covered
        assert text[covered:start].strip() == ""
        covered = end
    assert text[covered:].strip() == ""
    # a mention is never cut: no boundary falls strictly inside one
    for start, end in spans:
        for boundary in [*starts, *ends]:
            assert not start < boundary < end, (start, end, boundary)
    # every mention maps back exactly
    mentions = chunking.mentions
    assert len(mentions) == len(spans)
    by_id = dict(zip(chunks["chunk_id"], zip(starts, chunks["text"], strict=True), strict=True))
    for row in mentions.itertuples():
        chunk_start, chunk_text = by_id[row.chunk_id]
        assert row.doc_start == chunk_start + row.start and row.doc_end == chunk_start + row.end
        assert chunk_text[row.start:row.end] == text[row.doc_start:row.doc_end] == row.surface
    # the limit holds unless no legal cut existed in the window: then the chunk grows, and says so
    block_starts, block_ends = _merge_blocks(spans)

    def inside(p: int) -> bool:
        i = bisect.bisect_right(block_starts, p - 1) - 1
        return i >= 0 and block_ends[i] > p

    for start, end, cut, oversized in zip(starts, ends, chunks["cut"], chunks["oversized"], strict=True):
        assert oversized == (end - start > max_chars)
        if oversized:
            assert cut == "grown"
            window = range(start + 1, start + max_chars + 1)
            assert all(inside(p) or not _grapheme_safe(text, p) for p in window)
            first_legal = next(p for p in range(start + max_chars + 1, len(text) + 1)
                               if p == len(text) or (not inside(p) and _grapheme_safe(text, p)))
            assert end - first_legal <= 20  # grows just enough (at most to the end of the word it is in)


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents_with_mentions())
def test_chunking_properties(case: tuple[str, list[tuple[int, int]], int]) -> None:
    text, spans, max_chars = case
    _check(text, spans, max_chars)


def test_prefers_sentence_then_word_boundaries() -> None:
    text = "Alpha beta gamma. Delta epsilon zeta eta theta iota kappa."
    assert split_text(text, [], max_chars=30) == [(0, 17, "sentence"), (18, 46, "word"), (47, 58, "end")]
    # no sentence end in the window: the last word boundary
    assert split_text("aaaa bbbb cccc dddd", [], max_chars=12)[0] == (0, 9, "word")


def test_cjk_without_spaces_cuts_at_sentence_end_or_grapheme() -> None:
    text = "東京は日本の首都です。大阪は二番目に大きい都市です。"
    parts = split_text(text, [], max_chars=15)
    assert parts[0] == (0, 11, "sentence")
    assert "".join(text[s:e] for s, e, _ in parts) == text
    # one long run of CJK: a character cut, never before a combining mark
    accented = "e\u0301" * 20
    parts = split_text(accented, [], max_chars=7)
    assert all(accented[s] != "\u0301" for s, _, _ in parts)
    assert "".join(accented[s:e] for s, e, _ in parts) == accented


def test_emoji_zwj_sequence_is_not_split() -> None:
    family = "👩\u200d👩\u200d👧\u200d👦"
    text = family * 6
    parts = split_text(text, [], max_chars=5)
    assert "".join(text[s:e] for s, e, _ in parts) == text
    for s, _, _ in parts[1:]:
        assert text[s - 1] != "\u200d" and text[s] != "\u200d"


def test_mention_longer_than_limit_grows_the_chunk_and_is_reported() -> None:
    text = "Intro words here. The International Business Machines Corporation of Armonk said hello."
    start = text.index("International")
    end = text.index(" said")
    documents = pd.DataFrame({"dataset": ["ds"], "doc_id": ["d1"], "text": [text]})
    chunking = chunk_documents(documents, _mentions_frame(text, [(start, end)]), max_chars=25)
    grown = chunking.oversized
    assert len(grown) == 1
    row = grown.iloc[0]
    assert row["chunk_start"] <= start and row["chunk_end"] == end  # just enough: to the mention's end
    assert row["cut"] == "grown"
    assert chunking.mentions["chunk_id"].iloc[0] == row["chunk_id"]


def test_overlapping_mentions_across_limit_keep_together() -> None:
    text = "aa bb cc dd ee ff gg hh ii jj"
    # two overlapping mentions that together (3-17) are longer than the limit of 10: the cut falls
    # before them, and their chunk grows to the end of the second one
    spans = [(3, 11), (9, 17)]
    parts = split_text(text, spans, max_chars=10)
    assert parts[:2] == [(0, 2, "word"), (3, 17, "grown")]
    for s, e, _ in parts:
        assert not any(a < b < c for a, c in spans for b in (s, e))


def test_mentions_outside_text_or_wrong_surface_are_input_errors() -> None:
    documents = pd.DataFrame({"dataset": ["ds"], "doc_id": ["d1"], "text": ["short text"]})
    with pytest.raises(PosthocInputError, match="outside its text"):
        chunk_documents(documents, _mentions_frame("short text and more", [(6, 15)]), max_chars=300)
    bad = _mentions_frame("short text", [(0, 5)])
    bad.loc[0, "surface"] = "SHORT"
    with pytest.raises(PosthocInputError, match="surface 'SHORT'"):
        chunk_documents(documents, bad, max_chars=300)
    with pytest.raises(PosthocInputError, match="not in the documents table"):
        chunk_documents(documents, _mentions_frame("short text", [(0, 5)], doc_id="other"), max_chars=300)


def test_astral_characters_count_as_one_code_point() -> None:
    text = "😀" * 10 + " " + "𠀋" * 10
    documents = pd.DataFrame({"dataset": ["ds"], "doc_id": ["d1"], "text": [text]})
    chunking = chunk_documents(documents, _mentions_frame(text, [(11, 21)]), max_chars=12)
    assert chunking.chunks["text"].tolist() == ["😀" * 10, "𠀋" * 10]
    row = chunking.mentions.iloc[0]
    assert (row["start"], row["end"], row["doc_start"]) == (0, 10, 11)
