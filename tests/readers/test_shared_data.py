"""The real reference corpora in ../shared/data read with zero errors and the documented counts.

One test per file (parametrized), never a loop over files inside a test; each skips when
../shared/data is absent (a user's clone).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from posthoc.readers import Corpus, read_mentions
from sharedparams import shared_params

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data"
NIF_FILES = shared_params(sorted(p.name for p in (SHARED / "nif").glob("*.ttl")), what="nif/*.ttl files")
# documents, mentions, NIL (notInWiki) mentions; see the docstring of posthoc.readers.nif for 880 vs 881
NIF_COUNTS = {"Reuters-128.ttl": (128, 880, 230), "RSS-500.ttl": (500, 1000, 476)}


@cache
def _read(path: str) -> Corpus:
    return read_mentions(path)


def _surfaces_match(corpus: Corpus) -> int:
    texts = {(d, i): t for d, i, t in corpus.documents[["dataset", "doc_id", "text"]].itertuples(index=False)}
    rows = corpus.mentions[["dataset", "doc_id", "start", "end", "surface"]].itertuples(index=False)
    return sum(texts[(d, i)][s:e] == surface for d, i, s, e, surface in rows)


@pytest.mark.parametrize("name", NIF_FILES)
def test_nif_file_reads_with_expected_counts(shared_data: Path, name: str) -> None:
    corpus = _read(str(shared_data / "nif" / name))
    counts = (len(corpus.documents), len(corpus.mentions), int(corpus.mentions["is_nil"].sum()))
    assert counts == NIF_COUNTS.get(name, counts)
    assert corpus.documents["doc_id"].is_unique
    assert len(corpus.mentions) > 0


@pytest.mark.parametrize("name", NIF_FILES)
def test_nif_every_surface_equals_text_at_offsets(shared_data: Path, name: str) -> None:
    corpus = _read(str(shared_data / "nif" / name))
    assert _surfaces_match(corpus) == len(corpus.mentions)


def test_nif_emerging_entities_are_kept_and_marked(shared_data: Path) -> None:
    corpus = _read(str(shared_data / "nif" / "Reuters-128.ttl"))
    nil = corpus.mentions[corpus.mentions["is_nil"]]
    assert nil["link_original"].str.startswith("http://aksw.org/notInWiki").all()
    assert nil["link"].str.startswith("nil:").all()
    assert (nil["link"] == "nil:Motorola_Inc").any()


def test_wned_wikipedia_counts(shared_data: Path) -> None:
    corpus = _read(str(shared_data / "wned-wikipedia"))
    assert len(corpus.documents) == 345
    assert len(corpus.mentions) == 6821
    assert set(corpus.documents["dataset"]) == {"wned-wikipedia"}
    # Jiří_Třanovský is in the XML twice; 28 annotations repeat exactly (kept, as in the file)
    assert int(corpus.mentions.duplicated().sum()) == 28
    # the raw texts keep HTML escapes; 12 spans contain "&amp;" where the XML mention has "&"
    assert int(corpus.mentions["surface"].str.contains("&amp;", regex=False).sum()) == 12


def test_wned_every_surface_equals_text_at_offsets(shared_data: Path) -> None:
    corpus = _read(str(shared_data / "wned-wikipedia"))
    assert _surfaces_match(corpus) == 6821


def test_eaglet_examples_read(shared_data: Path) -> None:
    corpus = _read(str(shared_data / "eaglet" / "paper_examples.ttl"))
    assert corpus.documents["doc_id"].tolist() == ["http://example.org/Example1FromThePaper",
                                                   "http://example.org/Example2FromThePaper"]
    foot = corpus.mentions[corpus.mentions["surface"] == "foot"]
    assert foot[["start", "end"]].values.tolist() == [[12, 16]]
