"""The NIF 2.0 reader (posthoc.readers.nif) and writer (posthoc.writers.write_nif) on handwritten files."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from posthoc.errors import PosthocInputError
from posthoc.links import normalise_link
from posthoc.readers import Corpus, read_mentions
from posthoc.readers.corpus import documents_frame, mentions_frame
from posthoc.sample import sample_corpus
from posthoc.writers import write_jsonl, write_nif

DATA = Path(__file__).parent / "data"
HEAD = """@prefix nif: <http://persistence.uni-leipzig.org/nlp2rdf/ontologies/nif-core#> .
@prefix itsrdf: <http://www.w3.org/2005/11/its/rdf#> .
<http://ex.org/d#char=0,11> a nif:Context ; nif:isString "Tokyo 東京 ok" .
"""


def test_reads_the_handwritten_file() -> None:
    corpus = read_mentions(DATA / "small.ttl")
    assert corpus.documents["doc_id"].tolist() == ["http://example.org/news/2", "http://example.org/news/10"]
    m = corpus.mentions
    assert m["surface"].tolist() == ["Zoë", "Kim", "東京", "Paris, Texas", "Paris, Texas"]
    assert m["start"].tolist() == [0, 8, 15, 0, 0]
    assert m["is_nil"].tolist() == [True, True, False, False, False]
    assert m["link"].tolist() == [
        "nil:Zo%C3%AB_Example",
        "nil:",
        "https://en.wikipedia.org/wiki/Tokyo",
        "https://en.wikipedia.org/wiki/Paris,_Texas",
        "https://en.wikipedia.org/wiki/Paris,_Texas_(film)",
    ]
    assert m["link_original"].iloc[0] == "http://aksw.org/notInWiki/Zoë_Example"
    # the second document gives no beginIndex/endIndex: they come from the #char= fragment
    assert set(m["dataset"]) == {"small"}


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ('<http://ex.org/d#char=0,5> nif:referenceContext <http://ex.org/d#char=0,11> ; nif:anchorOf "Tokio" .',
         "does not match the text"),
        ("<http://ex.org/d#char=6,20> nif:referenceContext <http://ex.org/d#char=0,11> .",
         "offsets outside the text"),
        ("<http://ex.org/d#char=6,6> nif:referenceContext <http://ex.org/d#char=0,11> .", "end <= start"),
        ("<http://ex.org/d#x> nif:referenceContext <http://ex.org/d#char=0,11> ; nif:beginIndex 6 .",
         "must be integers"),
        ("<http://ex.org/e#char=0,1> nif:referenceContext <http://ex.org/e#char=0,9> .", "has no nif:isString"),
        ("<http://ex.org/d#char=0,5> nif:referenceContext <http://ex.org/d#char=0,11> ; nif:anchorOf ",
         "not valid NIF"),
    ],
    ids=["anchor not the text", "offsets outside the text", "empty span", "offsets not integers",
         "context without text", "truncated turtle"],
)
def test_bad_nif_names_file_document_and_mention(tmp_path: Path, body: str, expected: str) -> None:
    path = tmp_path / "bad.ttl"
    path.write_text(HEAD + body + "\n", encoding="utf-8")
    with pytest.raises(PosthocInputError, match=expected) as raised:
        read_mentions(path)
    message = str(raised.value)
    assert message.startswith(str(path))
    assert "\n" not in message
    if "isString" not in expected and "NIF" not in expected:
        assert "document 'http://ex.org/d'" in message
        assert "mention <http://ex.org/d#" in message


def test_duplicate_context_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "dup.ttl"
    path.write_text(HEAD + '<http://ex.org/d#char=0,3> a nif:Context ; nif:isString "abc" .\n', encoding="utf-8")
    with pytest.raises(PosthocInputError, match=r"document 'http://ex\.org/d'.*duplicate document id"):
        read_mentions(path)


UNICODE_TEXT = "👩🏽‍🚀 Zoë 🇯🇵 東京 𠮷野家 cafe\u0301 Z\u0308o\u0308 \"quoted\" \\ back\nline\ttab."


def test_unicode_round_trip_through_nif_and_jsonl(tmp_path: Path) -> None:
    spans = []
    cursor = 0
    for token in UNICODE_TEXT.split(" "):
        spans.append((cursor, cursor + len(token)))
        cursor += len(token) + 1
    rows = [("u", "doc/1 ü", "GT", s, e, UNICODE_TEXT[s:e], f"https://en.wikipedia.org/wiki/T{i}", "x", False)
            for i, (s, e) in enumerate(spans)]
    (s0, e0), (s1, e1) = spans[0], spans[1]
    assert (UNICODE_TEXT[s0:e0], UNICODE_TEXT[s1:e1]) == ("👩🏽‍🚀", "Zoë")
    rows.append(("u", "doc/1 ü", "GT", s0, e0, UNICODE_TEXT[s0:e0], "nil:", "", True))
    rows.append(("u", "doc/1 ü", "GT", s1, e1, "Zoë", "nil:Zo%C3%AB_X", "", True))
    corpus = Corpus(documents_frame([("u", "doc/1 ü", UNICODE_TEXT)]), mentions_frame(rows))
    nif_path = tmp_path / "u.ttl"
    write_nif(corpus, nif_path)
    from_nif = read_mentions(nif_path, dataset="u")
    assert from_nif.documents.equals(corpus.documents)
    cols = ["dataset", "doc_id", "system", "start", "end", "surface", "link", "is_nil"]
    key = ["start", "end", "link"]
    expected = corpus.mentions.sort_values(key)[cols].reset_index(drop=True)
    assert from_nif.mentions.sort_values(key)[cols].reset_index(drop=True).equals(expected)
    jsonl_path = tmp_path / "u.jsonl"
    write_jsonl(from_nif, jsonl_path)
    again = read_mentions(jsonl_path)
    assert again.documents.equals(corpus.documents)
    assert again.mentions.sort_values(key)[cols].reset_index(drop=True).equals(expected)


def test_sample_gt_round_trips_through_nif(tmp_path: Path) -> None:
    sample = sample_corpus()
    gt = Corpus(sample.documents, sample.system("GT"))
    path = tmp_path / "gt.ttl"
    write_nif(gt, path)
    back = read_mentions(path, dataset="sample-news")
    assert back.documents.equals(gt.documents)
    cols = ["doc_id", "start", "end", "surface", "link", "is_nil"]
    assert back.mentions[cols].equals(gt.mentions[cols])


def test_write_nif_needs_one_system(tmp_path: Path) -> None:
    with pytest.raises(PosthocInputError, match="NIF holds one system"):
        write_nif(sample_corpus(), tmp_path / "all.ttl")
    assert not (tmp_path / "all.ttl").exists()
    with pytest.raises(PosthocInputError, match="system 'NOPE' is not in the corpus"):
        write_nif(sample_corpus(), tmp_path / "all.ttl", system="NOPE")


_texts = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=30)


@st.composite
def _one_document(draw: st.DrawFn) -> Corpus:
    text = draw(_texts)
    rows = []
    for _ in range(draw(st.integers(0, 3))):
        start = draw(st.integers(0, len(text) - 1))
        end = draw(st.integers(start + 1, len(text)))
        title = draw(st.sampled_from(["Paris", "Côte d'Ivoire", "東京", "AT&T", "nil:", "nil:Zoë X"]))
        normal = normalise_link(title)
        rows.append(("h", "doc", "GT", start, end, text[start:end], normal.link, title, normal.is_nil))
    rows = sorted(set(rows), key=lambda r: (r[3], r[4], r[6]))
    return Corpus(documents_frame([("h", "doc", text)]), mentions_frame(rows))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(corpus=_one_document())
def test_nif_round_trip_property(tmp_path: Path, corpus: Corpus) -> None:
    path = tmp_path / "rt.ttl"
    write_nif(corpus, path)
    back = read_mentions(path, dataset="h")
    assert back.documents.equals(corpus.documents)
    cols = ["start", "end", "surface", "link", "is_nil"]
    assert back.mentions[cols].equals(corpus.mentions[cols])


def test_writers_refuse_what_they_cannot_write_faithfully(tmp_path: Path) -> None:
    two_datasets = Corpus(documents_frame([("a", "1", "x"), ("b", "1", "y")]), mentions_frame())
    with pytest.raises(PosthocInputError, match="would share the NIF URI"):
        write_nif(two_datasets, tmp_path / "two.ttl")
    assert not (tmp_path / "two.ttl").exists()
    write_jsonl(two_datasets, tmp_path / "two.jsonl")  # JSONL keeps the dataset: fine
    assert read_mentions(tmp_path / "two.jsonl").documents["dataset"].tolist() == ["a", "b"]
    orphan = Corpus(documents_frame([("a", "1", "x")]),
                    mentions_frame([("a", "2", "GT", 0, 1, "y", "nil:", pd.NA, True)]))
    for writer, name in ((write_jsonl, "o.jsonl"), (write_nif, "o.ttl")):
        with pytest.raises(PosthocInputError, match=r"not in the documents table, e\.g\. '2'"):
            writer(orphan, tmp_path / name)
        assert not (tmp_path / name).exists()
