"""Link normalisation: every accepted form of a link maps to one canonical Wikipedia URL (posthoc.links)."""

from __future__ import annotations

import pytest

from posthoc.links import normalise_link, normalise_title, title_of

OBAMA = "https://en.wikipedia.org/wiki/Barack_Obama"
IVOIRE = "https://en.wikipedia.org/wiki/C%C3%B4te_d%27Ivoire"


#: every accepted form of a link and its canonical URL
CANONICAL_FORMS = [
    ("https://en.wikipedia.org/wiki/Barack_Obama", OBAMA),
    ("http://en.wikipedia.org/wiki/Barack_Obama", OBAMA),
    ("https://en.m.wikipedia.org/wiki/Barack_Obama", OBAMA),
    ("en.wikipedia.org/wiki/Barack_Obama", OBAMA),
    ("https://en.wikipedia.org/wiki/Barack_Obama#Early_life", OBAMA),
    ("https://en.wikipedia.org/w/index.php?title=Barack_Obama&oldid=1", OBAMA),
    ("http://dbpedia.org/resource/Barack_Obama", OBAMA),
    ("https://dbpedia.org/page/Barack_Obama", OBAMA),
    ("dbr:Barack_Obama", OBAMA),
    ("Barack Obama", OBAMA),
    ("  Barack   Obama ", OBAMA),
    ("barack_Obama", OBAMA),
    ("Barack%20Obama", OBAMA),
    ("Côte d'Ivoire", IVOIRE),
    ("dbr:Côte_d'Ivoire", IVOIRE),
    ("http://en.wikipedia.org/wiki/C%c3%b4te_d%27Ivoire", IVOIRE),
    ("Co\u0302te d'Ivoire", IVOIRE),  # combining circumflex: NFC
    ("AT&T", "https://en.wikipedia.org/wiki/AT%26T"),
    ("https://en.wikipedia.org/w/index.php?title=AT%26T", "https://en.wikipedia.org/wiki/AT%26T"),
    ("Paris, Texas", "https://en.wikipedia.org/wiki/Paris,_Texas"),
    ("Mission:Impossible", "https://en.wikipedia.org/wiki/Mission:Impossible"),
    ("Apple Inc.", "https://en.wikipedia.org/wiki/Apple_Inc."),
    ("Android (operating system)", "https://en.wikipedia.org/wiki/Android_(operating_system)"),
    ("100% (band)", "https://en.wikipedia.org/wiki/100%25_(band)"),
    ("東京", "https://en.wikipedia.org/wiki/%E6%9D%B1%E4%BA%AC"),
    ("𠮷野家", "https://en.wikipedia.org/wiki/%F0%A0%AE%B7%E9%87%8E%E5%AE%B6"),
    ("ßeta", "https://en.wikipedia.org/wiki/%C3%9Feta"),  # ß has no one-letter upper case: kept
    ("élan", "https://en.wikipedia.org/wiki/%C3%89lan"),
    ("http://de.dbpedia.org/resource/München", "https://de.wikipedia.org/wiki/M%C3%BCnchen"),
    ("https://de.wikipedia.org/wiki/M%C3%BCnchen", "https://de.wikipedia.org/wiki/M%C3%BCnchen"),
    ("http://www.wikidata.org/entity/Q76", "http://www.wikidata.org/entity/Q76"),
]


@pytest.mark.parametrize(("raw", "canonical"), CANONICAL_FORMS, ids=[raw for raw, _ in CANONICAL_FORMS])
def test_normalise_link_canonical_form(raw: str, canonical: str) -> None:
    result = normalise_link(raw)
    assert result.link == canonical
    assert result.original == raw
    assert result.is_nil is False


@pytest.mark.parametrize(
    ("raw", "canonical"),
    [
        (None, "nil:"),
        ("", "nil:"),
        ("NIL", "nil:"),
        ("nil", "nil:"),
        ("--NME--", "nil:"),
        ("<NIL>", "nil:"),
        ("http://aksw.org/notInWiki/Motorola_Inc", "nil:Motorola_Inc"),
        ("http://aksw.org/notInWiki", "nil:"),
        ("http://aksw.org/notInWiki/Banco_do_Brasil_SA", "nil:Banco_do_Brasil_SA"),
        ("nil:Motorola_Inc", "nil:Motorola_Inc"),
        ("nil:Motorola Inc", "nil:Motorola_Inc"),
    ],
    ids=["None", "empty", "NIL", "nil", "--NME--", "<NIL>", "notInWiki title", "notInWiki alone",
         "notInWiki title with underscores", "nil: title", "nil: title with a space"],
)
def test_nil_links_are_kept_and_marked(raw: str | None, canonical: str) -> None:
    result = normalise_link(raw)
    assert result.is_nil is True
    assert result.link == canonical
    assert result.original == ("" if raw is None else raw)


@pytest.mark.parametrize("raw", ["Barack Obama", "Côte d'Ivoire", "AT&T", "100% (band)", "東京", "nil:X y", "ßeta"])
def test_normalisation_is_idempotent(raw: str) -> None:
    once = normalise_link(raw).link
    assert normalise_link(once).link == once


def test_title_of_decodes_the_canonical_url() -> None:
    assert title_of(IVOIRE) == "Côte d'Ivoire"
    assert title_of("nil:Motorola_Inc") is None
    assert title_of("http://www.wikidata.org/entity/Q76") is None


def test_normalise_title_leaves_invalid_percent_sequences_literal() -> None:
    assert normalise_title("A%FFB") == "A%25FFB"
