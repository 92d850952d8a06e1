"""The nif predictor against a stand-in NIF web service, called the way GERBIL calls annotators
(github.com/dice-group/gerbil NIFBasedAnnotatorWebservice; NIF 2.0 Core): code point and UTF-16 offsets,
with and without nif:anchorOf; empty, malformed, wrong, slow and failing answers."""

from __future__ import annotations

from pathlib import Path

import pytest

from posthoc.errors import PosthocInputError
from posthoc.predictors.base import PredictorAnswerError, PredictorServiceError
from posthoc.predictors.nif import NIFLinker, request_document, utf16_to_codepoints
from posthoc.readers import read_mentions
from predictors.conftest import ALIASES, PLAIN, TEXT, TEXT2, TEXT2_MENTIONS, TEXT_MENTIONS
from predictors.standins import StandInNIF, utf16_offset


def _spans(mentions: list) -> list[tuple[int, int, str]]:
    return [(m.start, m.end, m.surface) for m in mentions]


def test_nif_request_is_a_nif_document_the_readers_read(tmp_path: Path) -> None:
    path = tmp_path / "request.ttl"
    path.write_bytes(request_document(TEXT2, "http://www.aksw.org/gerbil/NifWebService/request_0#char=0,66"))
    corpus = read_mentions(path)
    assert list(corpus.documents["text"]) == [TEXT2] and corpus.mentions.empty


def test_nif_mentions_have_code_point_offsets_and_canonical_links(nif_service: StandInNIF) -> None:
    first, second, plain, empty = NIFLinker(nif_service.url).link_texts([TEXT, TEXT2, PLAIN, ""])
    assert _spans(first) == TEXT_MENTIONS and _spans(second) == TEXT2_MENTIONS
    assert plain == [] and empty == []
    assert {m.link for m in first} == {"https://en.wikipedia.org/wiki/Zo%C3%AB_Salda%C3%B1a",
                                       "https://en.wikipedia.org/wiki/Yoshinoya", "https://en.wikipedia.org/wiki/Tokyo"}
    assert {m.link_original for m in first} >= {"http://dbpedia.org/resource/Tokyo"}
    assert set(nif_service.content_types) == {"application/x-turtle; charset=utf-8"}
    assert sorted(nif_service.texts) == sorted([TEXT, TEXT2, PLAIN])


def test_utf16_table_matches_java_string_indices() -> None:
    table = utf16_to_codepoints(TEXT)
    for index in range(len(TEXT) + 1):
        assert table[utf16_offset(TEXT, index)] == index
    assert table[22] == 19  # 東 after three astral characters (👩, 💻, 𠮷): hand-counted


def test_nif_utf16_offsets_of_a_java_annotator_are_mapped_to_code_points() -> None:
    with StandInNIF(ALIASES, utf16=True).serve() as service:
        first, second = NIFLinker(service.url).link_texts([TEXT, TEXT2])
        assert _spans(first) == TEXT_MENTIONS and _spans(second) == TEXT2_MENTIONS
        assert _spans(NIFLinker(service.url, offsets="utf16").link_texts([TEXT])[0]) == TEXT_MENTIONS
        with pytest.raises(PredictorAnswerError, match="but the text there is"):
            NIFLinker(service.url, offsets="codepoints").link_texts([TEXT])


def test_nif_empty_answer_is_no_mentions() -> None:
    with StandInNIF(ALIASES, mode="empty").serve() as service:
        assert NIFLinker(service.url).link_texts([TEXT, TEXT2]) == [[], []]


def test_nif_malformed_answer_is_an_answer_error() -> None:
    with StandInNIF(ALIASES, mode="malformed").serve() as service, \
            pytest.raises(PredictorAnswerError, match="not NIF Turtle"):
        NIFLinker(service.url).link_texts([TEXT])


def test_nif_offsets_that_miss_the_mention_are_refused() -> None:
    with StandInNIF(ALIASES, mode="wrong-offsets").serve() as service, \
            pytest.raises(PredictorAnswerError, match="NIF annotator"):
        NIFLinker(service.url).link_texts([TEXT])


def test_nif_slow_answer_times_out() -> None:
    with StandInNIF(ALIASES, mode="slow", delay=3.0).serve() as service, \
            pytest.raises(PredictorServiceError, match=r"no answer within 0\.3 s \(after 1 attempt"):
        NIFLinker(service.url, timeout=0.3, retries=0).link_texts([TEXT])


def test_nif_5xx_is_retried_then_reported() -> None:
    with StandInNIF(ALIASES, mode="5xx").serve() as service:
        with pytest.raises(PredictorServiceError, match="answered 503"):
            NIFLinker(service.url, retries=1, backoff=0.01).link_texts([TEXT])
        assert service.requests == 2


MERKEL = "😀 Angela Merkel visited Paris."
MERKEL_ALIASES = {"Angela Merkel": "Angela_Merkel", "Paris": "Paris"}


@pytest.mark.parametrize("utf16", [True, False], ids=["utf16", "codepoints"])
def test_nif_without_anchors_is_read_the_way_that_puts_spans_on_word_boundaries(utf16: bool) -> None:
    with StandInNIF(MERKEL_ALIASES, utf16=utf16, anchors=False).serve() as service:
        (found,) = NIFLinker(service.url).link_texts([MERKEL])
    assert _spans(found) == [(2, 15, "Angela Merkel"), (24, 29, "Paris")]


def test_nif_without_anchors_on_word_boundaries_neither_way_is_refused_clearly() -> None:
    with StandInNIF(MERKEL_ALIASES, utf16=True, anchors=False, mode="wrong-offsets").serve() as service, \
            pytest.raises(PosthocInputError, match=r"mentions without nif:anchorOf \(4\.\.17 .* neither as code "
                                                   r"points nor as UTF-16 units; give --nif-offsets"):
        NIFLinker(service.url).link_texts([MERKEL])


def test_nif_without_anchors_on_bmp_text_needs_no_choice() -> None:
    """Without an astral character both readings are one: a span inside a word is the annotator's to give."""
    text = "Merkels visit to Paris."
    with StandInNIF({"Merkel": "Angela_Merkel"}, anchors=False).serve() as service:
        (found,) = NIFLinker(service.url).link_texts([text])
    assert _spans(found) == [(0, 6, "Merkel")]
