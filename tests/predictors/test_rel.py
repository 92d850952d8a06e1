"""The rel predictor against a stand-in REL server (REL's HTTP API: github.com/informagi/REL, README and
REL/server.py): code point offsets through emoji, ZWJ, flags, astral CJK and combining marks; long texts in
pieces with offsets mapped back; REL's ``&amp;`` rewriting and its errors inside a 200 (REL/server.py
``read_json`` and ``do_POST``, followed by the stand-in); empty, malformed, wrong, slow and failing answers."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from posthoc.predictors.base import PredictorAnswerError, PredictorServiceError
from posthoc.predictors.rel import RELLinker, original_offset, rel_rewrite, split_text
from predictors.conftest import ALIASES, PLAIN, TEXT, TEXT2, TEXT2_MENTIONS, TEXT_MENTIONS
from predictors.standins import StandInREL


def _spans(mentions: list) -> list[tuple[int, int, str]]:
    return [(m.start, m.end, m.surface) for m in mentions]


def test_rel_mentions_have_code_point_offsets_and_canonical_links(rel_service: StandInREL) -> None:
    linker = RELLinker(rel_service.url)
    first, second, plain, empty = linker.link_texts([TEXT, TEXT2, PLAIN, ""])
    assert _spans(first) == TEXT_MENTIONS
    assert _spans(second) == TEXT2_MENTIONS
    assert plain == [] and empty == []
    for text, found in ((TEXT, first), (TEXT2, second)):
        assert all(text[m.start:m.end] == m.surface for m in found)
    links = {m.surface: m.link for m in first + second}
    assert links["東京"] == "https://en.wikipedia.org/wiki/Tokyo"
    assert links["Cafe\u0301 de Flore"] == "https://en.wikipedia.org/wiki/Caf%C3%A9_de_Flore"
    assert {m.link_original for m in first} == {"Zoë_Saldaña", "Yoshinoya", "Tokyo"}
    assert all(m.score == 0.87 and not m.is_nil for m in first)
    # the empty text was never sent (REL answers it [] anyway); the others were sent whole
    assert sorted(rel_service.texts) == sorted([TEXT, TEXT2, PLAIN])


def test_rel_long_texts_go_in_pieces_and_offsets_map_back(rel_service: StandInREL) -> None:
    sentences = [TEXT, TEXT2, PLAIN, "Angela Merkel met Zoë.", "東京 again\nand 𠮷野家."]
    long_text = " ".join(sentences * 3)
    whole = RELLinker(rel_service.url).link_texts([long_text])[0]
    rel_service.texts.clear()
    pieces = RELLinker(rel_service.url, max_chars=70, concurrency=1).link_texts([long_text])[0]
    assert len(rel_service.texts) > 3 and max(len(t) for t in rel_service.texts) <= 70
    assert "".join(rel_service.texts) == long_text  # the pieces cover the text, in order (here: none blank)
    assert _spans(pieces) == _spans(whole) and len(whole) == 30
    assert all(long_text[m.start:m.end] == m.surface for m in pieces)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["a", " ", "\n", ".", "e\u0301", "👩\u200d💻", "東", "𠮷", "! "]),
                max_size=60).map("".join), st.integers(min_value=1, max_value=30))
def test_split_text_covers_the_text_within_the_limit(text: str, limit: int) -> None:
    pieces = split_text(text, limit)
    assert "".join(piece for _, piece in pieces) == text
    assert all(len(piece) <= limit for _, piece in pieces)
    assert all(text[offset:offset + len(piece)] == piece for offset, piece in pieces)
    for offset, piece in pieces[1:]:
        if len(piece) and limit > 3:  # a hard cut never separates a mark or a ZWJ sequence from its base
            assert text[offset] not in "\u0301\u200d" and text[offset - 1] != "\u200d"


def test_rel_empty_answer_is_no_mentions() -> None:
    with StandInREL(ALIASES, mode="empty").serve() as service:
        assert RELLinker(service.url).link_texts([TEXT]) == [[]]


def test_rel_malformed_answer_is_an_answer_error() -> None:
    with StandInREL(ALIASES, mode="malformed").serve() as service, \
            pytest.raises(PredictorAnswerError, match="not JSON"):
        RELLinker(service.url).link_texts([TEXT])


def test_rel_offsets_that_miss_the_mention_are_refused() -> None:
    with StandInREL(ALIASES, mode="wrong-offsets").serve() as service, \
            pytest.raises(PredictorAnswerError, match="but the text there is"):
        RELLinker(service.url).link_texts([TEXT])


def test_rel_slow_answer_times_out_after_the_retries() -> None:
    with StandInREL(ALIASES, mode="slow", delay=3.0).serve() as service:
        with pytest.raises(PredictorServiceError, match=r"no answer within 0\.3 s \(after 2 attempt"):
            RELLinker(service.url, timeout=0.3, retries=1, backoff=0.01).link_texts([TEXT])
        assert service.requests == 2


def test_rel_5xx_is_retried_then_reported() -> None:
    with StandInREL(ALIASES, mode="5xx").serve() as service:
        with pytest.raises(PredictorServiceError, match=r"answered 503 .*after 3 attempt"):
            RELLinker(service.url, backoff=0.01).link_texts([TEXT])
        assert service.requests == 3


def test_rel_recovers_from_passing_failures() -> None:
    with StandInREL(ALIASES, mode="flaky", failures=2).serve() as service:
        (found,) = RELLinker(service.url, backoff=0.01).link_texts([TEXT])
        assert _spans(found) == TEXT_MENTIONS and service.requests == 3


def test_rel_unreachable_service_is_a_service_error() -> None:
    with StandInREL(ALIASES).serve() as service:
        url = service.url
    with pytest.raises(PredictorServiceError, match="cannot connect"):
        RELLinker(url, retries=0).link_texts([TEXT])


def test_credentials_in_the_service_url_never_reach_a_message() -> None:
    with StandInREL(ALIASES, mode="5xx").serve() as service:
        url = service.url.replace("http://", "http://user:s3cret-pass@")
        with pytest.raises(PredictorServiceError) as failed:
            RELLinker(url, retries=0).link_texts([TEXT])
    assert "s3cret-pass" not in str(failed.value) and "answered 503" in str(failed.value)


def test_rel_offsets_into_its_rewritten_text_are_mapped_back_to_the_amp_text() -> None:
    text = "Tom &amp; Jerry went to Paris."
    with StandInREL({"Tom &amp; Jerry": "Tom_and_Jerry", "Paris": "Paris"}).serve() as service:
        (found,) = RELLinker(service.url).link_texts([text])
        assert service.texts == [text]  # sent as it is; the server rewrote it to "Tom & Jerry went to Paris."
    assert _spans(found) == [(0, 15, "Tom &amp; Jerry"), (24, 29, "Paris")]
    assert [m.link for m in found] == ["https://en.wikipedia.org/wiki/Tom_and_Jerry",
                                       "https://en.wikipedia.org/wiki/Paris"]


def test_rel_amp_mapping_is_exact_next_to_and_between_amps() -> None:
    text = "&amp;A&amp;&amp;amp; B&amp;"
    rewritten, positions = rel_rewrite(text)
    assert rewritten == text.replace("&amp;", "&") == "&A&&amp; B&"
    assert [original_offset(i, positions) for i in range(len(rewritten) + 1)] == [0, 5, 6, 11, 16, 17, 18, 19, 20,
                                                                                 21, 22, 27]
    with StandInREL({"A": "A", "&amp;": "Ampersand", "B&amp;": "B"}).serve() as service:
        (found,) = RELLinker(service.url).link_texts([text])
    assert all(text[m.start:m.end] == m.surface for m in found)
    assert ("B&amp;", 21, 27) in {(m.surface, m.start, m.end) for m in found}


def test_rel_answer_that_fits_the_text_as_sent_is_read_as_it_stands() -> None:
    """A REL without read_json's rewriting (the stand-in's generic path answers the text it got)."""
    text = "Tom &amp; Jerry went to Paris."
    with StandInREL({"Paris": "Paris", "Tom": "Tom"}, mode="flaky", failures=0).serve() as service:
        (found,) = RELLinker(service.url).link_texts([text])
    assert _spans(found) == [(0, 3, "Tom"), (24, 29, "Paris")]


def test_rel_error_inside_a_200_says_what_rel_said() -> None:
    with StandInREL(ALIASES, mode="error").serve() as service, \
            pytest.raises(PredictorServiceError) as failed:
        RELLinker(service.url).link_texts([TEXT])
    message = str(failed.value)
    assert "failed on this text: it answered 200, then 'HTTP/1.0 400 Bad Request' with '[]'" in message
    assert "not JSON" not in message and "REL server's log" in message
