"""Chunking documents into tasks of at most ``max_chars`` code points (paper 000, section 2.1).

The paper broke "large documents of more than 300 characters ... into smaller tasks so as to not
overwhelm the worker". :func:`chunk_documents` does that for every document of a documents table:

* a chunk ends at a **sentence** boundary if one lies in the window, else at a **word** boundary
  (whitespace), else (text without spaces, e.g. CJK, or one very long token) at a **character**
  boundary that splits no grapheme (never before a combining mark, a variation selector, an emoji
  modifier or next to a zero-width joiner);
* a **mention is never cut**: the mentions of *all* systems are merged into protected blocks and no
  cut falls strictly inside one. When a mention (or a run of overlapping mentions) reaches beyond the
  limit, the chunk **grows just enough** -- to the end of that block (then to the next word boundary
  if one follows directly) -- and the chunk is flagged ``oversized`` with ``cut = "grown"``;
* whitespace between chunks belongs to no chunk; every other character is in exactly one chunk.

Offsets are code points. ``text == document_text[chunk_start:chunk_end]`` and, for a mention,
``doc_start == chunk_start + start`` and ``doc_end == chunk_start + end``: offsets map back exactly.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from posthoc.arrays import Ints, Objects
from posthoc.errors import PosthocInputError
from posthoc.study.plan._columns import object_values
from posthoc.tables import DOCUMENT_COLUMNS, MENTION_COLUMNS, require_columns

#: columns of :attr:`Chunking.chunks`
CHUNK_COLUMNS = ("dataset", "doc_id", "chunk_id", "chunk_index", "chunk_start", "chunk_end", "text", "cut", "oversized")

_SENTENCE_END = re.compile(r"[.!?\u2026][\"'\u00bb\u201d\u2019)\]]*(?=\s)|[\u3002\uff01\uff1f\uff0e]")
_WHITESPACE = re.compile(r"\s+")
_NO_CUT_BEFORE = {"\u200d", "\u200c", "\u20e3"}
_ZWJ = "\u200d"


@dataclass(frozen=True)
class Chunking:
    """The result of :func:`chunk_documents`.

    ``chunks``: ``dataset, doc_id, chunk_id, chunk_index, chunk_start, chunk_end, text, cut,
    oversized`` -- ``chunk_id`` is ``c000000``, ``c000001``, ... in document order (documents sorted
    by ``dataset, doc_id``), ``chunk_index`` the 0-based place in its document, ``cut`` how the chunk
    ends (``sentence | word | char | grown | end``).

    ``mentions``: the input mentions (all columns) plus ``chunk_id``, ``doc_start, doc_end`` (the
    document offsets) with ``start, end`` made relative to the chunk text.
    """

    chunks: pd.DataFrame
    mentions: pd.DataFrame
    max_chars: int

    @property
    def oversized(self) -> pd.DataFrame:
        """Chunks longer than ``max_chars`` because a mention (or overlapping mentions) crossed the limit."""
        return self.chunks[self.chunks["oversized"]].reset_index(drop=True)


def _grapheme_safe(text: str, position: int) -> bool:
    """Whether a cut at ``position`` (0 < position < len) leaves every grapheme cluster whole."""
    after, before = text[position], text[position - 1]
    if before == _ZWJ or after in _NO_CUT_BEFORE:
        return False
    if unicodedata.category(after).startswith("M"):
        return False
    code = ord(after)
    if 0xFE00 <= code <= 0xFE0F or 0x1F3FB <= code <= 0x1F3FF or 0xE0020 <= code <= 0xE007F:
        return False
    # keep pairs of regional indicators (flags) together, conservatively
    return not (0x1F1E6 <= code <= 0x1F1FF and 0x1F1E6 <= ord(before) <= 0x1F1FF)


def _merge_blocks(spans: Iterable[tuple[int, int]]) -> tuple[list[int], list[int]]:
    """Merge overlapping spans into protected blocks; spans that only touch stay separate."""
    starts: list[int] = []
    ends: list[int] = []
    for start, end in sorted(spans):
        if starts and start < ends[-1]:
            ends[-1] = max(ends[-1], end)
        else:
            starts.append(start)
            ends.append(end)
    return starts, ends


def split_text(text: str, spans: Sequence[tuple[int, int]], *, max_chars: int) -> list[tuple[int, int, str]]:
    """Split one text into ``(chunk_start, chunk_end, cut)`` triples; see the module docstring.

    ``spans`` are the protected ``(start, end)`` mention spans (code points) that no cut may fall into.
    """
    if max_chars < 1:
        raise PosthocInputError(f"max_chars must be at least 1, got {max_chars}")
    n = len(text)
    block_starts, block_ends = _merge_blocks(spans)

    def inside(p: int) -> bool:
        i = bisect.bisect_right(block_starts, p - 1) - 1  # last block with start < p
        return i >= 0 and block_ends[i] > p

    sentence_cuts = [m.end() for m in _SENTENCE_END.finditer(text)]
    word_cuts = [m.start() for m in _WHITESPACE.finditer(text)]

    def last_allowed(candidates: list[int], low: int, high: int) -> int | None:
        i = bisect.bisect_right(candidates, high) - 1
        while i >= 0 and candidates[i] > low:
            if candidates[i] < n and not inside(candidates[i]):
                return candidates[i]
            i -= 1
        return None

    def skip_space(p: int) -> int:
        """Skip whitespace after a cut, never past the start of a protected block."""
        match = _WHITESPACE.match(text, p)
        if not match:
            return p
        j = bisect.bisect_left(block_starts, p)
        next_block = block_starts[j] if j < len(block_starts) else n
        return min(match.end(), next_block)

    def trim_end(start: int, end: int) -> int:
        """Drop trailing whitespace, never before the end of a protected block."""
        stripped = start + len(text[start:end].rstrip())
        j = bisect.bisect_right(block_starts, end - 1) - 1
        last_block_end = block_ends[j] if j >= 0 and block_starts[j] >= start else start
        return max(stripped, min(last_block_end, end))

    chunks: list[tuple[int, int, str]] = []
    position = skip_space(0)
    while position < n:
        end = trim_end(position, n)
        if end <= position:
            break
        if end - position <= max_chars:
            chunks.append((position, end, "end"))
            break
        limit = position + max_chars
        cut: int | None = last_allowed(sentence_cuts, position, limit)
        kind = "sentence"
        if cut is None:
            cut, kind = last_allowed(word_cuts, position, limit), "word"
        if cut is None:
            kind = "char"
            cut = next((p for p in range(limit, position, -1) if not inside(p) and _grapheme_safe(text, p)), None)
        if cut is None:
            # a protected block crosses the limit: grow just enough, to its end (and to a word boundary
            # directly after it when there is one within the next token)
            kind = "grown"
            i = bisect.bisect_right(block_starts, limit - 1) - 1
            grown = block_ends[i] if i >= 0 and block_ends[i] > limit else limit + 1
            while grown < n and (inside(grown) or not _grapheme_safe(text, grown)):
                grown += 1
            follow = bisect.bisect_left(word_cuts, grown)
            if follow < len(word_cuts):
                candidate = word_cuts[follow]
                token = text[grown:candidate]
                if candidate <= n and not _WHITESPACE.search(token) and not inside(candidate) and len(token) <= 20:
                    grown = candidate
            cut = min(grown, n)
        chunk_end = trim_end(position, cut)
        chunks.append((position, chunk_end, kind))
        position = skip_space(cut)
    return chunks


def _objects(series: pd.Series) -> Objects:
    """A column as a numpy object array of Python values (fast to iterate; pandas' Arrow strings are not)."""
    return object_values(series)


def _validate(documents: pd.DataFrame, mentions: pd.DataFrame) -> None:
    require_columns(documents, DOCUMENT_COLUMNS, table="documents")
    require_columns(mentions, ("dataset", "doc_id", "system", "start", "end"), table="mentions")
    duplicated = documents.duplicated(subset=["dataset", "doc_id"])
    if duplicated.any():
        row = documents[duplicated].iloc[0]
        raise PosthocInputError(
            f"document {row['doc_id']!r} of dataset {row['dataset']!r} appears twice in the documents table; "
            "give each (dataset, doc_id) one text"
        )


def chunk_documents(documents: pd.DataFrame, mentions: pd.DataFrame, *, max_chars: int = 300) -> Chunking:
    """Split every document into chunks of at most ``max_chars`` code points (paper 000, section 2.1).

    ``documents``: ``dataset, doc_id, text``; ``mentions``: at least ``dataset, doc_id, system, start,
    end`` (usually all of :data:`posthoc.tables.MENTION_COLUMNS`). The mentions of every system are
    protected together, so every system's chunks are the same chunks. A mention whose document is not
    in ``documents``, or whose offsets fall outside its text, or whose ``surface`` differs from the
    text, is a :class:`PosthocInputError` naming it. See the module docstring for the rules.
    """
    _validate(documents, mentions)
    order_docs = np.lexsort((_objects(documents["doc_id"]).astype(str), _objects(documents["dataset"]).astype(str)))
    doc_dataset = _objects(documents["dataset"])[order_docs]
    doc_ids = _objects(documents["doc_id"])[order_docs]
    texts = [str(t) for t in _objects(documents["text"])[order_docs]]

    ments = mentions.reset_index(drop=True)
    starts = ments["start"].to_numpy(dtype=np.int64)
    ends = ments["end"].to_numpy(dtype=np.int64)
    mention_doc = _documents_of(ments, doc_dataset, doc_ids)
    lengths = np.array([len(t) for t in texts], dtype=np.int64)
    _check_offsets(ments, texts, mention_doc, lengths)

    order = np.lexsort((ends, starts, mention_doc))
    spans_by_doc: list[list[tuple[int, int]]] = [[] for _ in texts]
    for d, s, e in zip(mention_doc[order].tolist(), starts[order].tolist(), ends[order].tolist(), strict=True):
        spans_by_doc[d].append((s, e))
    chunks, doc_of_chunk = _chunk_table(texts, spans_by_doc, doc_dataset, doc_ids, max_chars=max_chars)
    return Chunking(chunks=chunks, mentions=_mentions_in_chunks(ments, mention_doc, chunks, doc_of_chunk, lengths),
                    max_chars=max_chars)


def _documents_of(ments: pd.DataFrame, doc_dataset: Objects, doc_ids: Objects) -> Ints:
    """Each mention's row in the sorted documents; a mention of no document is a PosthocInputError naming it."""
    doc_keys = pd.Index([f"{a}\x1f{b}" for a, b in zip(doc_dataset, doc_ids, strict=True)])
    mention_keys = pd.Index([f"{a}\x1f{b}" for a, b in zip(_objects(ments["dataset"]), _objects(ments["doc_id"]),
                                                             strict=True)])
    mention_doc = np.asarray(doc_keys.get_indexer(mention_keys), dtype=np.int64)
    if (mention_doc < 0).any():
        row = ments[mention_doc < 0].iloc[0]
        raise PosthocInputError(
            f"mention {row['start']}-{row['end']} of system {row['system']!r} is in document {row['doc_id']!r} "
            f"of dataset {row['dataset']!r}, which is not in the documents table; add the document or drop the mention"
        )
    return mention_doc


def _check_offsets(ments: pd.DataFrame, texts: list[str], mention_doc: Ints, lengths: Ints) -> None:
    """A PosthocInputError naming the first mention that is empty, outside its text or whose surface differs."""
    starts = ments["start"].to_numpy(dtype=np.int64)
    ends = ments["end"].to_numpy(dtype=np.int64)
    bad = (starts < 0) | (ends <= starts) | (ends > lengths[mention_doc]) if len(ments) else np.zeros(0, bool)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        row = ments.iloc[i]
        raise PosthocInputError(
            f"mention {row['start']}-{row['end']} of system {row['system']!r} in document {row['doc_id']!r} of "
            f"dataset {row['dataset']!r} lies outside its text (length {lengths[mention_doc[i]]}) "
            "or is empty; offsets are code points with start < end <= len(text)"
        )
    if "surface" in ments.columns and len(ments):
        surfaces = _objects(ments["surface"])
        mismatch = np.fromiter(
            (texts[d][s:e] != str(b) for d, s, e, b in zip(mention_doc.tolist(), starts.tolist(), ends.tolist(),
                                                            surfaces, strict=True)),
            dtype=bool, count=len(ments),
        )
        if mismatch.any():
            i = int(np.flatnonzero(mismatch)[0])
            row = ments.iloc[i]
            actual = texts[mention_doc[i]][starts[i]:ends[i]]
            raise PosthocInputError(
                f"mention {row['start']}-{row['end']} of system {row['system']!r} in document {row['doc_id']!r} of "
                f"dataset {row['dataset']!r} has surface {row['surface']!r} but the text there is {actual!r}; "
                "offsets must be code points into the document text"
            )


def _chunk_table(texts: list[str], spans_by_doc: list[list[tuple[int, int]]], doc_dataset: Objects,
                 doc_ids: Objects, *, max_chars: int) -> tuple[pd.DataFrame, Ints]:
    """The chunks of every document (:data:`CHUNK_COLUMNS`, cut by :func:`split_text` around the spans) and
    each chunk's document row."""
    chunk_doc: list[int] = []
    chunk_index: list[int] = []
    chunk_starts: list[int] = []
    chunk_ends: list[int] = []
    chunk_texts: list[str] = []
    cuts: list[str] = []
    for d, text in enumerate(texts):
        for index, (start, end, kind) in enumerate(split_text(text, spans_by_doc[d], max_chars=max_chars)):
            chunk_doc.append(d)
            chunk_index.append(index)
            chunk_starts.append(start)
            chunk_ends.append(end)
            chunk_texts.append(text[start:end])
            cuts.append(kind)
    n_chunks = len(chunk_doc)
    doc_of_chunk = np.array(chunk_doc, dtype=np.int64)
    chunk_start_arr = np.array(chunk_starts, dtype=np.int64)
    chunk_end_arr = np.array(chunk_ends, dtype=np.int64)
    chunks = pd.DataFrame({
        "dataset": doc_dataset[doc_of_chunk] if n_chunks else np.array([], dtype=object),
        "doc_id": doc_ids[doc_of_chunk] if n_chunks else np.array([], dtype=object),
        "chunk_id": np.array([f"c{i:06d}" for i in range(n_chunks)], dtype=object),
        "chunk_index": np.array(chunk_index, dtype=np.int64),
        "chunk_start": chunk_start_arr,
        "chunk_end": chunk_end_arr,
        "text": np.array(chunk_texts, dtype=object),
        "cut": np.array(cuts, dtype=object),
        "oversized": (chunk_end_arr - chunk_start_arr) > max_chars,
    })
    return chunks, doc_of_chunk


def _mentions_in_chunks(ments: pd.DataFrame, mention_doc: Ints, chunks: pd.DataFrame,
                        doc_of_chunk: Ints, lengths: Ints) -> pd.DataFrame:
    """The mentions with their chunk and offsets in it (``start``, ``end``) and in the document (``doc_start``,
    ``doc_end``): each mention lies in the last chunk of its document that starts at or before it."""
    starts = ments["start"].to_numpy(dtype=np.int64)
    ends = ments["end"].to_numpy(dtype=np.int64)
    chunk_start_arr = chunks["chunk_start"].to_numpy()
    chunk_end_arr = chunks["chunk_end"].to_numpy()
    scale = int(lengths.max(initial=0)) + 1
    chunk_keys = doc_of_chunk * scale + chunk_start_arr
    global_index = np.searchsorted(chunk_keys, mention_doc * scale + starts, side="right") - 1
    if len(ments):
        assert (global_index >= 0).all() and (doc_of_chunk[global_index] == mention_doc).all()
        assert (ends <= chunk_end_arr[global_index]).all(), "a mention was cut: chunking invariant broken"
    chunk_start = chunk_start_arr[global_index]
    out = ments.copy()
    out["chunk_id"] = chunks["chunk_id"].to_numpy()[global_index]
    out["doc_start"] = starts
    out["doc_end"] = ends
    out["start"] = starts - chunk_start
    out["end"] = ends - chunk_start
    known = [c for c in MENTION_COLUMNS if c in out.columns]
    extra = [c for c in out.columns if c not in known and c not in ("chunk_id", "doc_start", "doc_end")]
    return out[["chunk_id", *known, "doc_start", "doc_end", *extra]].reset_index(drop=True)
