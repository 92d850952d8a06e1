"""The project's own sample corpus: 20 short news-like stories written for posthoc-review.

Dataset ``sample-news``: a ground truth (``GT``, links to real Wikipedia titles, one emerging
entity as NIL) and two systems' outputs named after the systems of paper 000, ``E2E`` and ``REL``,
which differ from it the way real linkers do (missed mentions, other links, shifted boundaries,
extra nested mentions, NILs, false positives). Texts include emoji, a ZWJ sequence, flags, CJK
(one astral character), Hangul, Devanagari and combining accents. The demo and the tests use it;
``build_sample.py`` rebuilds the files (seeded).
"""

from __future__ import annotations

from pathlib import Path

from posthoc.readers.corpus import Corpus

HERE = Path(__file__).resolve().parent
DATASET = "sample-news"


def sample_paths() -> dict[str, Path]:
    """Paths of the sample files by system name: ``GT``, ``E2E``, ``REL`` (all JSONL)."""
    return {"GT": HERE / "gt.jsonl", "E2E": HERE / "e2e.jsonl", "REL": HERE / "rel.jsonl"}


def sample_corpus() -> Corpus:
    """The sample documents with the mentions of ``GT``, ``E2E`` and ``REL`` merged in one Corpus."""
    from posthoc.readers import read_mentions

    corpus: Corpus | None = None
    for system, path in sample_paths().items():
        part = read_mentions(path, fmt="jsonl", dataset=DATASET, system=system)
        corpus = part if corpus is None else corpus.merge(part)
    assert corpus is not None
    return corpus
