"""The JSONL reader (posthoc.readers.jsonl), the Corpus contract and the JSONL writer round trip."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from posthoc.errors import PosthocInputError
from posthoc.readers import Corpus, read_mentions
from posthoc.readers.corpus import documents_frame, mentions_frame
from posthoc.tables import DOCUMENT_COLUMNS, MENTION_COLUMNS
from posthoc.writers import write_jsonl

DATA = Path(__file__).parent / "data"


def test_reads_the_handwritten_file() -> None:
    corpus = read_mentions(DATA / "small.jsonl")
    assert tuple(corpus.documents.columns) == DOCUMENT_COLUMNS
    assert tuple(corpus.mentions.columns) == MENTION_COLUMNS
    assert corpus.documents[["dataset", "doc_id"]].values.tolist() == [["small", "d1"], ["other", "d2"],
                                                                       ["small", "d3"]]
    m = corpus.mentions
    assert m["system"].tolist() == ["GT", "GT", "GT", "sysX", "sysX"]
    assert m["surface"].tolist() == ["Angela Merkel", "Emmanuel Macron", "Paris", "Zoë", "東京"]
    assert m["link"].tolist() == [
        "https://en.wikipedia.org/wiki/Angela_Merkel",
        "https://en.wikipedia.org/wiki/Emmanuel_Macron",
        "https://en.wikipedia.org/wiki/Paris",
        "nil:",
        "https://en.wikipedia.org/wiki/Tokyo",
    ]
    assert m["link_original"].iloc[0] == "http://dbpedia.org/resource/Angela_Merkel"
    assert pd.isna(m["link_original"].iloc[3])
    assert m["is_nil"].tolist() == [False, False, False, True, False]


def test_system_and_dataset_arguments_are_defaults() -> None:
    corpus = read_mentions(DATA / "small.jsonl", dataset="news", system="E2E")
    assert sorted(set(corpus.mentions["system"])) == ["E2E", "sysX"]
    assert sorted(set(corpus.documents["dataset"])) == ["news", "other"]


def test_text_may_come_from_documents(tmp_path: Path) -> None:
    documents = documents_frame([("ds", "a", "Paris is in France.")])
    path = tmp_path / "sys.jsonl"
    path.write_text(json.dumps({"id": "a", "mentions": [{"start": 12, "end": 18, "link": "France"}]}) + "\n")
    corpus = read_mentions(path, dataset="ds", system="S", documents=documents)
    assert corpus.mentions["surface"].tolist() == ["France"]
    assert corpus.documents["text"].tolist() == ["Paris is in France."]


def _write_lines(path: Path, *records: object) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


TEXT = "Zoë visited 東京 and Paris."


@pytest.mark.parametrize(
    ("mention", "expected"),
    [
        ({"start": 20, "end": 30, "link": "Paris"}, "offsets outside the text"),
        ({"start": -1, "end": 3, "link": "X"}, "offsets outside the text"),
        ({"start": 5, "end": 5, "link": "X"}, "end <= start"),
        ({"start": 7, "end": 4, "link": "X"}, "end <= start"),
        ({"start": 12, "end": 14, "surface": "Tokyo", "link": "Tokyo"}, "does not match the text"),
        ({"start": 12, "end": 16, "surface": "東京", "link": "Tokyo"}, "does not match the text"),
        ({"start": "12", "end": 14, "link": "Tokyo"}, "must be integers"),
        ({"start": 1.0, "end": 14, "link": "Tokyo"}, "must be integers"),
        ({"end": 14, "link": "Tokyo"}, 'with "start" and "end"'),
        ({"start": 12, "end": 14, "link": 5}, '"link" must be a string'),
    ],
    ids=["end after the text", "start before the text", "empty span", "end before start", "surface not the text",
         "span longer than the surface", "start a string", "start a float", "no start", "link a number"],
)
def test_bad_mentions_name_file_document_and_mention(tmp_path: Path, mention: dict[str, object],
                                                      expected: str) -> None:
    ok = {"start": 0, "end": 3, "surface": "Zoë", "link": None}
    path = _write_lines(tmp_path / "bad.jsonl", {"id": "doc-7", "text": TEXT, "mentions": [ok, mention]})
    with pytest.raises(PosthocInputError) as raised:
        read_mentions(path)
    message = str(raised.value)
    assert str(path) in message
    assert "'doc-7'" in message
    assert "mention 1" in message
    assert expected in message
    assert "\n" not in message


def test_duplicate_document_ids_are_an_error(tmp_path: Path) -> None:
    record = {"id": "a", "text": "x", "mentions": []}
    path = _write_lines(tmp_path / "dup.jsonl", record, record)
    with pytest.raises(PosthocInputError, match=r"dup\.jsonl, document 'a', line 2: duplicate document id"):
        read_mentions(path)


def test_same_document_with_other_text_is_an_error(tmp_path: Path) -> None:
    path = _write_lines(tmp_path / "t.jsonl", {"id": "a", "system": "A", "text": "x"},
                        {"id": "a", "system": "B", "text": "y"})
    with pytest.raises(PosthocInputError, match="different text"):
        read_mentions(path)


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b'{"id": "a", "text": "x"\n', "line 1: not valid JSON"),
        (b'["a"]\n', "line 1: each line must be a JSON object"),
        (b'{"text": "x"}\n', 'no string "id"'),
        (b'{"id": "a"}\n', 'no "text"'),
        (b'{"id": "a", "text": 3}\n', '"text" must be a string'),
        (b'{"id": "a", "text": "x", "mentions": {}}\n', '"mentions" must be a list'),
        (b'{"id": "a", "text": "caf\xe9"}\n', "not UTF-8"),
    ],
    ids=["not JSON", "not an object", "no id", "no text", "text a number", "mentions not a list", "latin-1 bytes"],
)
def test_malformed_lines(tmp_path: Path, content: bytes, expected: str) -> None:
    path = tmp_path / "m.jsonl"
    path.write_bytes(content)
    with pytest.raises(PosthocInputError, match=expected) as raised:
        read_mentions(path)
    assert str(path) in str(raised.value)


def test_unknown_format_and_missing_file(tmp_path: Path) -> None:
    odd = tmp_path / "notes.txt"
    odd.write_text("just some words\n")
    with pytest.raises(PosthocInputError, match="unknown format"):
        read_mentions(odd)
    with pytest.raises(PosthocInputError, match="unknown format 'csv'"):
        read_mentions(DATA / "small.jsonl", fmt="csv")
    with pytest.raises(PosthocInputError, match="no such file"):
        read_mentions(tmp_path / "absent.jsonl")
    with pytest.raises(PosthocInputError, match="not a WNED corpus"):
        read_mentions(tmp_path)


def test_errors_are_value_errors() -> None:
    assert issubclass(PosthocInputError, ValueError)


def test_merge_unions_and_checks_texts() -> None:
    a = read_mentions(DATA / "small.jsonl")
    b = read_mentions(DATA / "small.jsonl", system="E2E")
    merged = a.merge(b)
    assert len(merged.documents) == 3
    assert len(merged.mentions) == len(a.mentions) + 3  # sysX rows are identical in both, kept once
    assert merged.merge(a).mentions.equals(merged.mentions)
    clash = Corpus(documents_frame([("small", "d1", "other text")]), mentions_frame())
    with pytest.raises(PosthocInputError, match="'d1' of dataset 'small' has different texts"):
        a.merge(clash)


UNICODE_TEXT = "👩‍👩‍👧 🇺🇦🇵🇱 Zoë cafe\u0301 東京 𠮷野家 서울 चंद्रयान e\u0301\u0323 done."


def _unicode_corpus() -> Corpus:
    spans, cursor = [], 0
    for token in UNICODE_TEXT.split(" ")[:-1]:
        spans.append((cursor, cursor + len(token)))
        cursor += len(token) + 1
    documents = documents_frame([("u", "doc 1", UNICODE_TEXT)])
    rows = [("u", "doc 1", "GT", s, e, UNICODE_TEXT[s:e], f"https://en.wikipedia.org/wiki/T{i}", f"T{i}", False)
            for i, (s, e) in enumerate(spans)]
    return Corpus(documents, mentions_frame(rows))


def test_unicode_round_trip_through_jsonl(tmp_path: Path) -> None:
    corpus = _unicode_corpus()
    assert corpus.mentions["surface"].tolist() == [
        "👩‍👩‍👧", "🇺🇦🇵🇱", "Zoë", "cafe\u0301", "東京", "𠮷野家", "서울", "चंद्रयान", "e\u0301\u0323"
    ]
    assert len("𠮷野家") == 3  # one astral code point: offsets are code points, not UTF-16 units
    path = tmp_path / "u.jsonl"
    write_jsonl(corpus, path)
    back = read_mentions(path)
    assert back.documents["text"].iloc[0] == UNICODE_TEXT
    cols = ["doc_id", "system", "start", "end", "surface", "link", "is_nil"]
    assert back.mentions[cols].equals(corpus.mentions[cols])


_texts = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=40)


@st.composite
def _corpora(draw: st.DrawFn) -> Corpus:
    docs, rows = [], []
    for index in range(draw(st.integers(1, 3))):
        text = draw(_texts)
        doc_id = f"d{index}-" + draw(st.text(min_size=0, max_size=5))
        docs.append(("ds", doc_id, text))
        for _ in range(draw(st.integers(0, 4))):
            start = draw(st.integers(0, len(text) - 1))
            end = draw(st.integers(start + 1, len(text)))
            title = draw(st.one_of(st.none(), st.sampled_from(["Paris", "Côte d'Ivoire", "東京", "AT&T"])))
            link = "nil:" if title is None else "https://en.wikipedia.org/wiki/" + title
            from posthoc.links import normalise_link

            normal = normalise_link(link)
            rows.append(("ds", doc_id, "GT", start, end, text[start:end], normal.link, link, normal.is_nil))
    rows.sort(key=lambda r: (r[1], r[3], r[4], r[6]))
    docs_sorted = docs
    return Corpus(documents_frame(docs_sorted), mentions_frame(rows))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(corpus=_corpora())
def test_jsonl_round_trip_property(tmp_path: Path, corpus: Corpus) -> None:
    path = tmp_path / "rt.jsonl"
    write_jsonl(corpus, path)
    back = read_mentions(path, dataset="ds")
    assert back.documents.equals(corpus.documents)
    cols = ["dataset", "doc_id", "system", "start", "end", "surface", "link", "is_nil"]
    expected = corpus.mentions.sort_values(["doc_id", "start", "end", "link"], kind="stable")[cols]
    got = back.mentions.sort_values(["doc_id", "start", "end", "link"], kind="stable")[cols]
    assert got.reset_index(drop=True).equals(expected.reset_index(drop=True))


def test_line_separators_inside_text_survive(tmp_path: Path) -> None:
    text = "one\u2028two\u0085three\u2029four\r\nfive"
    corpus = Corpus(documents_frame([("ds", "a", text)]),
                    mentions_frame([("ds", "a", "GT", 4, 7, "two", "nil:", pd.NA, True)]))
    path = tmp_path / "sep.jsonl"
    write_jsonl(corpus, path)
    assert len(path.read_bytes().split(b"\n")) == 2  # one line and the final newline
    back = read_mentions(path)
    assert back.documents["text"].iloc[0] == text
    assert back.mentions["surface"].tolist() == ["two"]


def test_validate_corpus_checks_in_memory_tables() -> None:
    from posthoc.readers import validate_corpus

    good = read_mentions(DATA / "small.jsonl")
    validate_corpus(good)
    shifted = good.mentions.assign(start=good.mentions["start"] + 1)
    with pytest.raises(PosthocInputError, match=r"chunks, document 'd1', mention 0 .*the text at the offsets"):
        validate_corpus(Corpus(good.documents, shifted), source="chunks")
    beyond = good.mentions.assign(end=good.mentions["end"] + 100)
    with pytest.raises(PosthocInputError, match="offsets must satisfy"):
        validate_corpus(Corpus(good.documents, beyond))
    orphan = good.mentions.assign(doc_id="zz")
    with pytest.raises(PosthocInputError, match="not in the documents table"):
        validate_corpus(Corpus(good.documents, orphan))
    twice = pd.concat([good.documents, good.documents.iloc[:1]], ignore_index=True)
    with pytest.raises(PosthocInputError, match="duplicate document id"):
        validate_corpus(Corpus(twice, good.mentions))
    wrong_nil = good.mentions.assign(is_nil=False)
    with pytest.raises(PosthocInputError, match="is_nil is False"):
        validate_corpus(Corpus(good.documents, wrong_nil))
