"""The WNED reader (posthoc.readers.wned) on a handwritten XML + RawText folder."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from posthoc.errors import PosthocInputError
from posthoc.readers import read_mentions

DATA = Path(__file__).parent / "data" / "wned"


def test_reads_folder_and_xml_file_alike() -> None:
    by_folder = read_mentions(DATA)
    by_file = read_mentions(DATA / "wned-small.xml")
    assert by_folder.documents.equals(by_file.documents)
    assert by_folder.mentions.equals(by_file.mentions)
    assert by_folder.documents["doc_id"].tolist() == ["Cup_&_Co", "Empty_doc"]  # unannotated RawText counts too
    assert set(by_folder.documents["dataset"]) == {"wned"}


def test_offsets_count_html_escapes_and_code_points() -> None:
    corpus = read_mentions(DATA)
    m = corpus.mentions
    # the raw text keeps "&amp;": the span covers it, the XML mention is its unescaped form
    assert m["surface"].tolist() == ["Benson &amp; Hedges", "Zürich", "東京", "e\u0301té"]
    assert m["link_original"].tolist()[:2] == ["Benson & Hedges", "Zürich"]
    assert m["link"].iloc[0] == "https://en.wikipedia.org/wiki/Benson_%26_Hedges"
    assert m["is_nil"].tolist() == [False, False, True, True]
    text = corpus.documents["text"].iloc[0]
    assert text == (DATA / "RawText" / "Cup_&_Co").read_bytes().decode("utf-8")


def _copy(tmp_path: Path) -> Path:
    target = tmp_path / "wned"
    shutil.copytree(DATA, target)
    return target


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("<offset>27</offset>", "<offset>28</offset>", "annotation 1 \\(28-34 'Zürich'\\): the surface form does not"),
        ("<length>2</length>", "<length>200</length>", "offsets outside the text"),
        ("<length>2</length>", "<length>0</length>", "end <= start"),
        ("<offset>45</offset>", "<offset>x</offset>", "must be integers"),
        ('docName="Cup_&amp;_Co"', 'docName="Missing"', "document 'Missing'.*no text file"),
        ("</wikipediaData.entityAnnotation>", "", "not well-formed XML"),
    ],
    ids=["offset moved", "length past the text", "length 0", "offset not a number", "document without text file",
         "unclosed element"],
)
def test_bad_wned_input(tmp_path: Path, old: str, new: str, expected: str) -> None:
    folder = _copy(tmp_path)
    xml = folder / "wned-small.xml"
    content = xml.read_text(encoding="utf-8")
    assert old in content
    xml.write_text(content.replace(old, new, 1), encoding="utf-8")
    with pytest.raises(PosthocInputError, match=expected) as raised:
        read_mentions(folder)
    assert str(xml) in str(raised.value)


def test_folder_needs_one_xml_and_rawtext(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    (folder / "second.xml").write_text("<a/>")
    with pytest.raises(PosthocInputError, match=r"exactly one \.xml"):
        read_mentions(folder, fmt="wned")
    lone = tmp_path / "lone"
    lone.mkdir()
    (lone / "x.xml").write_text("<a/>")
    with pytest.raises(PosthocInputError, match="no RawText/ folder"):
        read_mentions(lone / "x.xml")
