"""What inconsistent marking leaves out by default (issue 17), on hand-checked cases.

Each case is a pair: the default rule does not propose it, the paper's setting of the same option
does, so every assertion could fail in both directions.
"""

from __future__ import annotations

import pytest
from tests.eaglet.helpers import build_corpus

from posthoc.eaglet.pipeline import Pipeline
from posthoc.eaglet.rules.inconsistent_filters import adjectives, not_a_name
from posthoc.eaglet.rules.inconsistent_marking import InconsistentMarkingRule, short_form
from posthoc.links import normalise_link
from posthoc.readers.corpus import Corpus


def proposals(corpus: Corpus, **options: object) -> set[tuple[str, str]]:
    rule = InconsistentMarkingRule(**options)  # type: ignore[arg-type]
    flags = Pipeline((rule,)).run(corpus.documents, corpus.mentions)
    return {(str(r.doc_id), str(r.surface)) for r in flags.itertuples()}


def starts(corpus: Corpus, **options: object) -> list[int]:
    rule = InconsistentMarkingRule(**options)  # type: ignore[arg-type]
    return [int(s) for s in Pipeline((rule,)).run(corpus.documents, corpus.mentions)["start"]]


@pytest.mark.parametrize(("surface", "why"), [
    ("1986", "a number"), ("64", "a number"), ("rivals", "a lower-case word"),
    ("his first season", "a lower-case word"), ("October", "a month or weekday"), ("Monday", "a month or weekday"),
    ("Dutch", "an adjective"), ("Japanese", "an adjective"),
    ("U.S.", None), ("eBay", None), ("東京", None), ("Café", None), ("Ryan", None), ("October Revolution", None),
    ("American", None),  # the Brill lexicon tags it NNP
])
def test_what_is_not_a_name(surface: str, why: str | None) -> None:
    assert not_a_name(surface, surface.split()) == why


def test_the_adjectives_come_from_the_shipped_lexicon() -> None:
    words = adjectives()
    assert {"Dutch", "Japanese", "Brazilian"} <= words and not {"China", "Federal", "Treasury"} & words


def test_numbers_lower_case_words_months_and_adjectives_are_left_to_the_paper_setting() -> None:
    corpus = build_corpus({
        "1": ("In 1986 his rivals met in October; Dutch firms and Reuter.",
              [("1986", "1986"), ("rivals", "Rivalry"), ("October", "October"), ("Dutch", "Dutch"),
               ("Reuter", "Reuter")]),
        "2": ("By 1986 the rivals left in October. Dutch banks and Reuter.", []),
    })
    assert proposals(corpus) == {("2", "Reuter")}
    assert proposals(corpus, common_words=True) == {("2", s) for s in ("1986", "rivals", "October", "Dutch",
                                                                      "Reuter")}


def test_a_region_after_a_place_and_a_comma_is_not_proposed_alone() -> None:
    corpus = build_corpus({
        "1": ("California and Argentina grew.", [("California", "California"), ("Argentina", "Argentina")]),
        "2": ("He works in Pasadena, California, and Buenos Aires , Argentina. France, Argentina and "
              "California signed.", []),
    })
    text = corpus.text_of("d", "2")
    # after a city: left out; after a country in a list ("France, Argentina"): proposed
    assert starts(corpus) == [text.index("Argentina and"), text.index("California signed")]
    assert len(starts(corpus, inside_names=True)) == 4


def test_a_name_before_a_currency_or_a_security_is_not_proposed() -> None:
    corpus = build_corpus({
        "1": ("The U.S. and the Treasury agreed.", [("U.S.", "United_States"), ("Treasury", "Treasury")]),
        "2": ("The strong U.S. dollar, a 10 mln U.S.-dlr bid, five-year Treasury notes and U.S. firms; "
              "the Treasury said. U.S.\ndollar", []),
    })
    text = corpus.text_of("d", "2")
    assert starts(corpus) == [text.index("U.S. firms"), text.index("Treasury said"),
                              text.index("U.S.\ndollar")]  # a line break ends the compound
    assert len(starts(corpus, inside_names=True)) == 6


def test_a_short_form_link_is_copied_only_into_a_document_that_uses_it() -> None:
    corpus = build_corpus({
        "1": ("Paul Ryan spoke. Ryan left. Lee smiled.", [("Paul Ryan", "Paul_Ryan"), ("Ryan", "Paul_Ryan", 1),
                                                        ("Lee", "nil:Lee")]),
        "2": ("Ryan won the race; Lee cheered.", []),
        "3": ("Paul Ryan and Lee Smith; later Ryan said.", [("Paul Ryan", "Paul_Ryan"), ("Lee Smith", "nil:Lee")]),
    })
    flags = Pipeline((InconsistentMarkingRule(),)).run(corpus.documents, corpus.mentions)
    got = {(str(r.doc_id), str(r.surface)): str(r.link) for r in flags.itertuples()}
    ryan = normalise_link("Paul_Ryan").link
    assert got == {("2", "Ryan"): "", ("2", "Lee"): "", ("3", "Ryan"): ryan}
    detail = flags.set_index(["doc_id", "surface"]).loc[("2", "Ryan"), "detail"]
    assert f"linked to {ryan} there; not copied: a short form" in detail
    agreed = Pipeline((InconsistentMarkingRule(links="agreed"),)).run(corpus.documents, corpus.mentions)
    assert set(agreed["link"]) == {ryan, normalise_link("nil:Lee").link}


@pytest.mark.parametrize(("surface", "link", "short"), [
    ("Ryan", "Paul_Ryan", True), ("Holloway", "nil:Corrie_Holloway", True), ("Lee", "nil:Lee", True),
    ("Senate", "United_States_Senate", True), ("Orange County", "nil:Orange_County", False),
    ("Detroit", "Detroit", False), ("Washington", "Washington,_D.C.", False),
    ("FBI", "Federal_Bureau_of_Investigation", False), ("Paul Ryan", "Paul_Ryan", False),
])
def test_short_forms(surface: str, link: str, short: bool) -> None:
    assert short_form(surface, normalise_link(link).link) is short
