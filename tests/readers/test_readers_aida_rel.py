"""The AIDA-CoNLL TSV reader (text rebuilt from tokens) and the REL output reader, on handwritten files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from posthoc.errors import PosthocInputError
from posthoc.readers import detect_format, read_mentions
from posthoc.readers.corpus import documents_frame

DATA = Path(__file__).parent / "data"


def test_aida_rebuilds_text_and_offsets() -> None:
    corpus = read_mentions(DATA / "small-aida.tsv")
    assert corpus.documents["doc_id"].tolist() == ["1 TRADE", "2 SPORT"]
    assert corpus.documents["text"].tolist() == [
        "Zoë Martin flew to 東京 .\nThe Bank of Japan met José Mourinho .",
        "Chelsea Arsenal drew 1-1 🙂 .",
    ]
    m = corpus.mentions
    assert m["surface"].tolist() == ["Zoë Martin", "東京", "Bank of Japan", "José Mourinho", "Chelsea", "Arsenal"]
    assert m[["start", "end"]].values.tolist() == [[0, 10], [19, 21], [28, 41], [46, 59], [0, 7], [8, 15]]
    assert m["is_nil"].tolist() == [True, False, False, False, False, False]
    assert m["link_original"].iloc[0] == "--NME--"
    assert m["link"].tolist()[1:4] == [
        "https://en.wikipedia.org/wiki/Tokyo",
        "https://en.wikipedia.org/wiki/Bank_of_Japan",
        "https://en.wikipedia.org/wiki/Jos%C3%A9_Mourinho",  # YAGO2 name with a \\u00e9 escape, no URL
    ]


TAB = "\t"


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        (["Paris"], "line 1: a token before the first -DOCSTART-"),
        (["-DOCSTART- (7 X)", "of" + TAB + "I" + TAB + "of" + TAB + "--NME--"], "document '7 X', line 2: an I tag"),
        (["-DOCSTART- (7 X)", "Paris" + TAB + "B", "", "Texas" + TAB + "I"], "line 4: an I tag"),
        (["-DOCSTART- (7 X)", "Paris" + TAB + "X"], "unknown tag 'X'"),
        (["-DOCSTART- (7 X)", "New York" + TAB + "B"], "holds whitespace"),
        (["-DOCSTART- (7 X)", "Paris" + TAB + "B" + TAB + "Pariss" + TAB + "Paris"],
         "document '7 X', mention on line 2 \\(0-5 'Pariss'\\): the surface form does not match"),
        (["-DOCSTART- (7 X)", "a", "-DOCSTART- (7 X)", "b"], "document '7 X', line 3: duplicate document id"),
    ],
    ids=["token before DOCSTART", "I tag first in a document", "I tag after a blank line", "unknown tag",
         "token with whitespace", "surface not the text", "duplicate document"],
)
def test_bad_aida(tmp_path: Path, lines: list[str], expected: str) -> None:
    path = tmp_path / "bad.tsv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(PosthocInputError, match=expected) as raised:
        read_mentions(path)
    assert str(path) in str(raised.value)


def test_aida_docstart_without_parentheses_and_crlf(tmp_path: Path) -> None:
    path = tmp_path / "conll.tsv"
    path.write_bytes(b"-DOCSTART- -X- -X- O\r\nRome\tB\tRome\tRome\r\n\r\n-DOCSTART-\r\nOslo\r\n")
    corpus = read_mentions(path)
    assert corpus.documents["doc_id"].tolist() == ["-X- -X- O", "doc-2"]
    assert corpus.documents["text"].tolist() == ["Rome", "Oslo"]
    assert corpus.mentions["link"].tolist() == ["https://en.wikipedia.org/wiki/Rome"]


@pytest.fixture
def small_documents():  # type: ignore[no-untyped-def]
    texts = read_mentions(DATA / "small.jsonl").documents
    return texts.assign(dataset="small")


def test_rel_lists_and_dicts(small_documents) -> None:  # type: ignore[no-untyped-def]
    corpus = read_mentions(DATA / "small-rel.json", documents=small_documents, system="REL")
    assert set(corpus.documents["dataset"]) == {"small"}  # the only dataset of documents=
    assert corpus.documents["doc_id"].tolist() == ["d1", "d2", "d3"]
    m = corpus.mentions
    assert set(m["system"]) == {"REL"}
    assert m["surface"].tolist() == ["Angela Merkel", "Emmanuel Macron", "Paris", "Zoë", "東京"]
    assert m["link"].tolist()[2] == "https://en.wikipedia.org/wiki/Paris_Saint-Germain_F.C."
    assert m["is_nil"].tolist() == [False, False, False, True, False]


def test_rel_bare_list_for_a_single_document(tmp_path: Path) -> None:
    documents = documents_frame([("news", "only", "Lagarde spoke in Frankfurt.")])
    path = tmp_path / "answer.json"
    path.write_text(json.dumps([[17, 9, "Frankfurt", "Frankfurt", 0.8, 0.9, "LOC"]]))
    corpus = read_mentions(path, documents=documents)
    assert corpus.mentions[["doc_id", "start", "end", "surface"]].values.tolist() == [["only", 17, 26, "Frankfurt"]]


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ({"nope": []}, "document 'nope': is not among the documents"),
        ({"d1": [[0, 13, "Angela", "Angela_Merkel"]]}, "document 'd1', prediction 0 .*does not match the text"),
        ({"d1": [[40, 13, "x", "X"]]}, "offsets outside the text"),
        ({"d1": [[0, 0, "", "X"]]}, "end <= start"),
        ({"d1": [[0, 13]]}, "needs at least"),
        ({"d1": [{"start": 0}]}, 'needs "start" and "length"'),
        ({"d1": "x"}, "must be a list"),
    ],
    ids=["unknown document", "surface not the text", "offsets outside the text", "empty span", "short prediction",
         "prediction without length", "predictions not a list"],
)
def test_bad_rel(tmp_path: Path, small_documents, content: object, expected: str) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "rel.json"
    path.write_text(json.dumps(content))
    with pytest.raises(PosthocInputError, match=expected) as raised:
        read_mentions(path, documents=small_documents)
    assert str(path) in str(raised.value)


def test_rel_needs_documents(tmp_path: Path) -> None:
    with pytest.raises(PosthocInputError, match="pass documents="):
        read_mentions(DATA / "small-rel.json")
    broken = tmp_path / "b.json"
    broken.write_text("{")
    with pytest.raises(PosthocInputError, match="not valid JSON"):
        read_mentions(broken, documents=documents_frame([("b", "x", "y")]))


@pytest.mark.parametrize(
    ("name", "content", "fmt"),
    [
        ("a.ttl", "", "nif"),
        ("a.nt", "", "nif"),
        ("a.xml", "", "wned"),
        ("a.jsonl", "", "jsonl"),
        ("a.tsv", "", "aida"),
        ("a.json", "", "rel"),
        ("a.data", "-DOCSTART- (1)\nx\n", "aida"),
        ("a.data", "@prefix nif: <http://x#> .\n", "nif"),
        ("a.data", '{"id": "a", "text": "x", "mentions": []}\n', "jsonl"),
        ("a.data", '{"id": "a", "text": "x"}\n', "jsonl"),
        ("a.data", '{ "id" : "a"}\n', "jsonl"),
        ("a.data", '{"a": [[0, 1, "x", "X"]]}', "rel"),
        ("a.data", "<?xml version='1.0'?><a/>", "wned"),
    ],
    ids=["ttl", "nt", "xml", "jsonl", "tsv", "json", "DOCSTART is aida", "@prefix is nif",
         "line with mentions is jsonl", "line with text is jsonl", "line with id is jsonl", "object of lists is rel",
         "xml declaration is wned"],
)
def test_detect_format(tmp_path: Path, name: str, content: str, fmt: str) -> None:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    assert detect_format(path) == fmt


def test_unreadable_path(tmp_path: Path) -> None:
    folder = tmp_path / "looks_like_a_file.jsonl"
    folder.mkdir()
    with pytest.raises(PosthocInputError, match="is a folder, not a jsonl file"):
        read_mentions(folder, fmt="jsonl")
    with pytest.raises(PosthocInputError, match="a folder that is not a WNED corpus"):
        read_mentions(folder)
    binary = tmp_path / "binary.tsv"
    binary.write_bytes(b"-DOCSTART-\n\xff\xfe\n")
    with pytest.raises(PosthocInputError, match="not UTF-8 text"):
        read_mentions(binary)
