"""Each rule module on small, hand-checked cases (paper 003 Sect. 3.4), Unicode included."""

from __future__ import annotations

import pandas as pd
import pytest
from tests.eaglet.helpers import build_corpus

from posthoc.eaglet.kb import KbSnapshot
from posthoc.eaglet.pipeline import Pipeline, default_pipeline
from posthoc.eaglet.rules.combined_marking import CombinedMarkingRule
from posthoc.eaglet.rules.inconsistent_marking import InconsistentMarkingRule
from posthoc.eaglet.rules.long_description import LongDescriptionRule
from posthoc.eaglet.rules.missing_entities import MissingEntitiesRule
from posthoc.eaglet.rules.overlapping import OverlappingRule
from posthoc.eaglet.rules.positioning import PositioningRule
from posthoc.eaglet.rules.uri import UriRule
from posthoc.errors import PosthocInputError
from posthoc.readers.corpus import Corpus


def run(rule: object, corpus: Corpus, system: str = "GT") -> pd.DataFrame:
    return Pipeline((rule,)).run(corpus.documents, corpus.mentions, system=system)  # type: ignore[arg-type]


def spans(flags: pd.DataFrame, suggestion: str | None = None) -> set[tuple[str, int, int]]:
    chosen = flags if suggestion is None else flags[flags["suggestion"] == suggestion]
    return {(str(r.rule), int(r.start), int(r.end)) for r in chosen.itertuples()}


# ---- positioning -----------------------------------------------------------------------------------------------

def test_positioning_flags_a_span_ending_inside_a_word() -> None:
    corpus = build_corpus({"1": ("John played football for Seattle.", [("foot", "Foot"), ("Seattle", "Seattle")])})
    flags = run(PositioningRule(), corpus)
    assert spans(flags) == {("positioning", 12, 16)}
    assert flags["suggestion"].tolist() == ["delete"]
    assert "'football'" in flags["detail"].iloc[0]


def test_positioning_is_unicode_aware() -> None:
    text = "Cafe\u0301 in 東京タワー and 👩‍👩‍👧 fans of Zoë"
    corpus = build_corpus({"1": (text, [
        ("Cafe", "Cafe"),            # ends before a combining acute accent: inside the word
        ("東京", "Tokyo"),            # ends before タ: inside the (unsegmented) CJK word
        ("👩‍👩‍👧", None),               # emoji are not word characters: fine
        ("Zoë", "Zoë"),              # whole word: fine
    ])})
    flags = run(PositioningRule(), corpus)
    assert spans(flags) == {("positioning", 0, 4), ("positioning", 9, 11)}


def test_positioning_accepts_spans_bounded_by_punctuation() -> None:
    corpus = build_corpus({"1": ("(Seattle)-based, U.S.", [("Seattle", "Seattle"), ("U.S", "United_States")])})
    assert run(PositioningRule(), corpus).empty


def test_positioning_flags_trailing_space_and_trailing_punctuation_but_not_abbreviations() -> None:
    text = ("Merck and Co Inc said; Japans Ministry (MITI), met U.S. and Apple Inc. and Yahoo! and (Seattle) "
            "and Jr. Smith, in Bonn. ,Paris")
    corpus = build_corpus({"1": (text, [
        (0, 17, "Merck"),                    # trailing space
        ("Japans Ministry (MITI),", "MITI"),  # trailing comma
        ("U.S.", "US"), ("Apple Inc.", "Apple"), ("Yahoo!", "Yahoo"), ("(Seattle)", "Seattle"),
        ("Smith,", "Smith"),                 # trailing comma
        ("Bonn.", "Bonn"),                   # a sentence's full stop, not an abbreviation
        (" ,Paris", "Paris"),                # leading space and comma
    ])})
    flags = run(PositioningRule(), corpus).set_index("surface")
    assert set(flags.index) == {"Merck and Co Inc ", "Japans Ministry (MITI),", "Smith,", "Bonn.", " ,Paris"}
    assert flags.loc["Merck and Co Inc ", "detail"] == ("ends with white space, which Rule 2 leaves outside a "
                                                       "word; trimmed: [0,16) 'Merck and Co Inc'")
    assert "ends with ','" in flags.loc["Japans Ministry (MITI),", "detail"]
    assert "trimmed: " in flags.loc[" ,Paris", "detail"] and "'Paris'" in flags.loc[" ,Paris", "detail"]
    assert (flags["suggestion"] == "update-span").all()
    merck = flags.loc["Merck and Co Inc "]
    assert (merck["partner_start"], merck["partner_end"], merck["partner_link"]) == (0, 16, merck["link"])
    only_punctuation = run(PositioningRule(), build_corpus({"1": ("a , b", [(2, 3, "Comma")])}))
    assert only_punctuation[["suggestion", "detail"]].values.tolist() == [
        ["delete", "starts with ',', which Rule 2 leaves outside a word; nothing is left"]]
    assert run(PositioningRule(edges=False), corpus).empty


# ---- overlapping ---------------------------------------------------------------------------------------------

def test_overlapping_flags_both_partners_strictly() -> None:
    text = "the MLS Cup Playoffs and New York"
    corpus = build_corpus({"1": (text, [("MLS Cup", "MLS_Cup"), ("Cup Playoffs", "Playoffs"), ("New", "New"),
                                        ("York", "York")])})
    flags = run(OverlappingRule(), corpus)
    assert spans(flags) == {("overlapping", 4, 11), ("overlapping", 8, 20)}
    first = flags[flags["start"] == 4].iloc[0]
    assert (first["partner_start"], first["partner_end"]) == (8, 20)


def test_overlapping_touching_is_eaglets_variant_and_same_span_is_no_overlap() -> None:
    text = "NewYork is big"
    corpus = build_corpus({"1": (text, [(0, 3, "New"), (3, 7, "York"), (0, 3, "New_(x)")])})
    assert run(OverlappingRule(), corpus).empty
    touching = run(OverlappingRule(touching=True), corpus)
    assert spans(touching) == {("overlapping", 0, 3), ("overlapping", 3, 7)}


# ---- combined marking --------------------------------------------------------------------------------------------

def test_combined_marking_flags_parts_and_proposes_the_union() -> None:
    text = "In December 2012, Seattle won."
    corpus = build_corpus({"1": (text, [("December", "December"), ("2012", "2012"), ("Seattle", "Seattle")])})
    flags = run(CombinedMarkingRule(), corpus)
    assert spans(flags, "check") == {("combined_marking", 3, 11), ("combined_marking", 12, 16)}
    assert spans(flags, "insert") == {("combined_marking", 3, 16)}
    assert flags[flags["suggestion"] == "insert"]["surface"].tolist() == ["December 2012"]


def test_combined_marking_paper_module_chains_three_and_stops_at_punctuation_and_line_breaks() -> None:
    text = "New York City Police, Steve Pagani\nVIENNA"
    corpus = build_corpus({"1": (text, [("New", "a"), ("York", "b"), ("City Police", "c"), ("Steve Pagani", "d"),
                                        ("VIENNA", "Vienna")])})
    assert run(CombinedMarkingRule(), corpus).empty  # no evidence that any union names one entity
    paper = run(CombinedMarkingRule(require_evidence=False), corpus)
    assert spans(paper, "insert") == {("combined_marking", 0, 20)}
    eaglet_like = run(CombinedMarkingRule(require_evidence=False, cross_line_breaks=True), corpus)
    assert spans(eaglet_like, "insert") == {("combined_marking", 0, 20), ("combined_marking", 22, 41)}


def test_combined_marking_needs_evidence_and_names_it() -> None:
    corpus = build_corpus({
        "1": ("Securities and Exchange Commission John Shad said. Morgan Stanley rose.",
              [("Securities and Exchange Commission", "SEC"), ("John Shad", "John_Shad"), ("Morgan", "Morgan"),
               ("Stanley", "Stanley")]),
        "2": ("Shares of Morgan Stanley fell on 3 March 1987.", [("Morgan Stanley", "Morgan_Stanley"),
                                                                ("3 March", "March_3"), ("1987", "1987")]),
    })
    flags = run(CombinedMarkingRule(), corpus)
    inserts = flags[flags["suggestion"] == "insert"].set_index("surface")
    assert set(inserts.index) == {"Morgan Stanley", "3 March 1987"}  # employer + person is not proposed
    assert "annotated as one mention 1 time(s)" in inserts.loc["Morgan Stanley", "detail"]
    assert inserts.loc["Morgan Stanley", "link"] == "https://en.wikipedia.org/wiki/Morgan_Stanley"
    assert "is a date" in inserts.loc["3 March 1987", "detail"] and inserts.loc["3 March 1987", "link"] == ""
    parts = flags[flags["suggestion"] == "check"]
    assert len(parts) == 4 and parts["detail"].str.contains("may need pairing: ").all()


def test_combined_marking_never_joins_touching_annotations_by_default() -> None:
    text = "MorganMoody's Investors Service and December 2012"
    corpus = build_corpus({"1": (text, [(0, 6, "Morgan_Stanley"), (6, 31, "Moody's"), ("December", "December"),
                                        ("2012", "2012")]),
                           "2": ("MorganMoody's Investors Service", [(0, 31, "X")])})
    assert spans(run(CombinedMarkingRule(), corpus), "insert") == {("combined_marking", 36, 49)}
    eaglet = run(CombinedMarkingRule(touching=True), corpus)
    assert ("combined_marking", 0, 31) in spans(eaglet, "insert")


def test_combined_marking_city_followed_by_its_state_or_country() -> None:
    text = ("Grosse Pointe Park, Mich, Salem,Ore and Osaka, Japan; Canada, Australia; Portland, Maine; "
            "Cordoba, La Pampa; N.J. American Midland")
    corpus = build_corpus({"1": (text, [
        ("Grosse Pointe Park", None), ("Mich", "Michigan"), ("Salem", "Salem,_Oregon"), ("Ore", "Oregon"),
        ("Osaka", "Osaka"), ("Japan", "Japan"), ("Canada", "Canada"), ("Australia", "Australia"),
        ("Portland", "Portland,_Oregon"), ("Maine", "Maine"), ("Cordoba", "Córdoba_Province,_Argentina"),
        ("La Pampa", "La_Pampa_Province"), ("N.J.", "New_Jersey"), ("American Midland", None)])})
    flags = run(CombinedMarkingRule(), corpus)
    inserts = flags[flags["suggestion"] == "insert"]
    assert inserts["surface"].tolist() == ["Grosse Pointe Park, Mich", "Salem,Ore", "Osaka, Japan"]
    assert "'Grosse Pointe Park' is a place followed by its state or country 'Mich' (Michigan)" in \
        inserts["detail"].iloc[0]


def test_combined_marking_parts_with_one_link_and_kb_evidence() -> None:
    text = "International Business Machines Corp IBM and Bank Leumi"
    corpus = build_corpus({"1": (text, [("International Business Machines Corp", "IBM"), ("IBM", "IBM"),
                                        ("Bank", "Bank"), ("Leumi", "Leumi")]),
                           "2": ("International Business Machines Corp IBM", [(0, 40, None)])})
    assert run(CombinedMarkingRule(), corpus).empty  # same link on both parts: nothing more specific
    kb = KbSnapshot(redirects={"https://en.wikipedia.org/wiki/Bank_Leumi": "https://en.wikipedia.org/wiki/Leumi"})
    flags = run(CombinedMarkingRule(kb=kb), corpus)
    insert = flags[flags["suggestion"] == "insert"].iloc[0]
    assert (insert["surface"], insert["link"]) == ("Bank Leumi", "https://en.wikipedia.org/wiki/Leumi")
    assert "resolves in the KB" in insert["detail"]


# ---- long description ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("tagger", ["rules", "pattern"])
def test_long_description_flags_the_relative_clause_only(tagger: str) -> None:
    text = "Such a team that won Supporters' Shield in 2014 and The Man Who Knew Too Much."
    corpus = build_corpus({"1": (text, [("team that won Supporters' Shield in 2014", "Seattle_Sounders_FC"),
                                        ("The Man Who Knew Too Much", "The_Man_Who_Knew_Too_Much")])})
    flags = run(LongDescriptionRule(tagger=tagger), corpus)
    assert spans(flags) == {("long_description", 7, 47)}
    assert f"tagger {tagger}" in flags["detail"].iloc[0]


def test_unknown_tagger_is_an_input_error() -> None:
    corpus = build_corpus({"1": ("a b c", [("a", "A")])})
    with pytest.raises(PosthocInputError, match="tagger"):
        run(LongDescriptionRule(tagger="stanford"), corpus)


# ---- URI errors ---------------------------------------------------------------------------------------------------

def test_uri_rule_invalid_outdated_and_disambiguation() -> None:
    text = "China, Seattle, Paris, Foo, Bar and Motorola."
    corpus = build_corpus({"1": (text, [
        ("China", "http://dbpedia.org/resource/People's_Republic_of_China"),
        ("Seattle", "http://dbpedia.org/resource/Seattle_(disambiguation)"),
        ("Paris", "http://dbpedia.org/resource/Paris"),
        ("Foo", "http://dbpedia.org/resource/"),
        ("Bar", "http://example.org/a b"),
        ("Motorola", "http://aksw.org/notInWiki/Motorola_Inc"),
    ])})
    kb = KbSnapshot(redirects={"https://en.wikipedia.org/wiki/People%27s_Republic_of_China":
                               "https://en.wikipedia.org/wiki/China"},
                    disambiguations={"https://en.wikipedia.org/wiki/Seattle_(disambiguation)":
                                     ["https://en.wikipedia.org/wiki/Seattle"]})
    flags = run(UriRule(kb=kb), corpus)
    assert spans(flags) == {("outdated_uri", 0, 5), ("disambiguation_uri", 7, 14), ("invalid_uri", 23, 26),
                            ("invalid_uri", 28, 31)}
    outdated = flags[flags["rule"] == "outdated_uri"].iloc[0]
    assert (outdated["suggestion"], outdated["partner_link"]) == ("update-uri", "https://en.wikipedia.org/wiki/China")


def test_uri_rule_empty_link_is_invalid_and_kb_titles_find_missing_pages() -> None:
    corpus = build_corpus({"1": ("Alpha Beta", [("Alpha", ""), ("Beta", "Beta_(letter)")])})
    kb = KbSnapshot(titles={"https://en.wikipedia.org/wiki/Gamma"})
    flags = run(UriRule(kb=kb), corpus)
    assert flags[["start", "detail"]].values.tolist() == [[0, "empty URI"], [6, "title not in the KB"]]


# ---- inconsistent marking -------------------------------------------------------------------------------

def test_inconsistent_marking_proposes_unmarked_occurrences_in_the_dataset() -> None:
    corpus = build_corpus({
        "1": ("Seattle Sounders beat Portland Timbers.", [("Seattle Sounders", "Seattle_Sounders_FC"),
                                                      ("Portland Timbers", "Portland_Timbers")]),
        "2": ("The Seattle Sounders and the Portland Timbers met; Seattle won.", [("Portland", "Portland")]),
    })
    flags = run(InconsistentMarkingRule(), corpus)
    assert spans(flags) == {("inconsistent_marking", 4, 20)}  # Portland Timbers intersects a marked "Portland"
    assert "marked 1 time(s) elsewhere in d, all linked to" in flags["detail"].iloc[0]
    row = flags.iloc[0]
    assert (row["doc_id"], row["suggestion"], row["link"]) == ("2", "insert", "https://en.wikipedia.org/wiki/"
                                                                             "Seattle_Sounders_FC")
    assert "proposal" in row["detail"]


def test_inconsistent_marking_skips_faulty_annotations_and_respects_datasets() -> None:
    first = build_corpus({"1": ("foo football Foo", [("foot", "Foot"), ("Foo", "Foo")])}, dataset="a")
    second = build_corpus({"2": ("Foo again", [])}, dataset="b")
    corpus = first.merge(second)
    flags = default_pipeline(only=["positioning", "inconsistent_marking"]).run(
        corpus.documents, corpus.mentions)
    # "foot" is faulty (positioning) so not indexed; "Foo" is proposed nowhere: case differs in doc 1, other dataset
    assert spans(flags) == {("positioning", 4, 8)}
    casefold = Pipeline((InconsistentMarkingRule(normalise="casefold"),)).run(corpus.documents, corpus.mentions)
    assert casefold.empty  # case-folded, "foo" matches "Foo", but a lower-case use is no name (common_words)
    casefold = Pipeline((InconsistentMarkingRule(normalise="casefold", common_words=True),)).run(
        corpus.documents, corpus.mentions)
    # case-folded, "foo" matches "Foo"; "foot" never matches inside the one token "football"
    assert spans(casefold) == {("inconsistent_marking", 0, 3)}


def test_inconsistent_marking_with_cjk_emoji_and_combining_marks() -> None:
    text_1 = "東京 タワー 👍 Cafe\u0301 Noir"
    text_2 = "Cafe\u0301 Noir と 東京 タワー、Cafe Noir"
    corpus = build_corpus({"1": (text_1, [("東京 タワー", "Tokyo_Tower"), ("Cafe\u0301 Noir", "Café_Noir")]),
                           "2": (text_2, [])})
    flags = run(InconsistentMarkingRule(), corpus)
    got = {(int(r.start), int(r.end), r.surface) for r in flags.itertuples()}
    assert got == {(0, 10, "Cafe\u0301 Noir"), (13, 19, "東京 タワー")}


# ---- missing entities ------------------------------------------------------------------------------------------------

def test_missing_entities_majority_of_systems() -> None:
    text = "Angela Merkel met Macron in Berlin."
    gt = build_corpus({"1": (text, [("Berlin", "Berlin")])})
    a = build_corpus({"1": (text, [("Angela Merkel", "Angela_Merkel"), ("Macron", "Emmanuel_Macron")])}, system="A")
    b = build_corpus({"1": (text, [("Angela Merkel", "Angela_Merkel"), ("Berlin", "Berlin_(band)")])}, system="B")
    c = build_corpus({"1": (text, [("Angela Merkel", "Merkel"), ("Macron", "Macron_(surname)")])}, system="C")
    corpus = gt.merge(a).merge(b).merge(c)
    flags = run(MissingEntitiesRule(), corpus)
    # span vote: Angela Merkel 3/3, Macron 2/3 (majority 2), Berlin: GT has it
    assert spans(flags) == {("missing_entity", 0, 13), ("missing_entity", 18, 24)}
    assert flags.iloc[0]["link"] == "https://en.wikipedia.org/wiki/Angela_Merkel"
    strict = run(MissingEntitiesRule(match="span_link"), corpus)
    assert spans(strict) == {("missing_entity", 0, 13)}
    assert run(MissingEntitiesRule(min_votes=3), corpus)["start"].tolist() == [0]


def test_pipeline_rejects_unknown_rules_and_systems() -> None:
    corpus = build_corpus({"1": ("a b", [("a", "A")])})
    with pytest.raises(PosthocInputError, match="unknown rule"):
        default_pipeline(only=["spelling"])
    with pytest.raises(PosthocInputError, match="no annotations"):
        default_pipeline().run(corpus.documents, corpus.mentions, system="REL")


def test_inconsistent_marking_lemma_mode_matches_plural_forms() -> None:
    corpus = build_corpus({"1": ("Two Americans and one American.", [("American", "United_States", 1)])})
    assert run(InconsistentMarkingRule(), corpus).empty
    flags = run(InconsistentMarkingRule(normalise="lemma"), corpus)
    assert spans(flags) == {("inconsistent_marking", 4, 13)}


def test_inconsistent_marking_skips_parts_of_longer_unmarked_names() -> None:
    corpus = build_corpus({
        "1": ("Ireland and New York and U.S. and Bureau", [("Ireland", "Ireland"), ("New York", "New_York"),
                                                      ("U.S.", "United_States"), ("Bureau", "Bureau")]),
        "2": ("The Republic of Ireland, New York City and the U.S. Bureau of Land Management; the U.S. economy. "
              "Mr Ireland. New York Stock Exchange", [("New York Stock Exchange", "NYSE")]),
        "3": ("Ireland won. The U.S. said. New York City Police", [("New York City", "New_York_City")]),
    })
    flags = run(InconsistentMarkingRule(), corpus)
    got = {(str(r.doc_id), str(r.surface)) for r in flags.itertuples()}
    # "New York City" is marked in document 3, so it is proposed whole in document 2
    assert got == {("2", "New York City"), ("2", "U.S."), ("2", "Ireland"), ("3", "Ireland"), ("3", "U.S.")}
    text = corpus.text_of("d", "2")
    assert flags[flags["doc_id"] == "2"]["start"].tolist() == [text.index("New York City"),
                                                               text.index("U.S. economy"), text.index("Ireland.")]
    paper = run(InconsistentMarkingRule(inside_names=True), corpus)
    assert len(paper) == len(flags) + 3  # Ireland (Republic of), U.S. and Bureau (U.S. Bureau of Land Management)


def test_inconsistent_marking_copies_a_link_only_when_the_marks_agree() -> None:
    corpus = build_corpus({
        "1": ("U.S. Citizenship and the U.S. and the U.S.", [("U.S.", "USCIS"), ("U.S.", "United_States", 1),
                                                             ("U.S.", "United_States", 2)]),
        "2": ("In the U.S. today, Seattle", [("Seattle", "Seattle")]),
        "3": ("Seattle again", []),
    })
    flags = run(InconsistentMarkingRule(), corpus).set_index("surface")
    assert flags.loc["U.S.", "link"] == ""
    assert "marked 3 time(s) elsewhere in d, with 2 different links (https://en.wikipedia.org/wiki/" \
           "United_States x2, https://en.wikipedia.org/wiki/USCIS x1): no link copied" in flags.loc["U.S.", "detail"]
    assert flags.loc["Seattle", "link"] == "https://en.wikipedia.org/wiki/Seattle"
    majority = run(InconsistentMarkingRule(links="majority"), corpus).set_index("surface")
    assert majority.loc["U.S.", "link"] == "https://en.wikipedia.org/wiki/United_States"
    cautious = run(InconsistentMarkingRule(min_link_marks=2), corpus).set_index("surface")
    assert cautious.loc["Seattle", "link"] == "" and "linked to https://en.wikipedia.org/wiki/Seattle there" in \
        cautious.loc["Seattle", "detail"]
    agreed = run(InconsistentMarkingRule(links="agreed"), corpus)
    assert agreed.equals(run(InconsistentMarkingRule(), corpus))  # every title here fits its surface
    with pytest.raises(PosthocInputError, match="links must be"):
        run(InconsistentMarkingRule(links="vote"), corpus)


@pytest.mark.parametrize(("surface", "link", "fits"), [
    ("Obama", "Barack_Obama", True), ("Washington", "Washington,_D.C.", True), ("Seattle", "Seattle", True),
    ("Donald Young", "Donald_Young_(tennis)", True), ("FBI", "Federal_Bureau_of_Investigation", True),
    ("U.S.", "United_States", True), ("Orange County", "nil:Orange_County", True),
    ("Baltimore", "Baltimore_Orioles", False), ("England", "England_cricket_team", False),
    ("Cincinnati", "Eric_Kearney", False), ("Federal", "nil:Federal_Paperboard_Co_Inc", False),
    ("Québec", "Qu%C3%A9bec", True), ("東京", "東京", True), ("Seattle Sounders", "Seattle_Sounders_FC", True),
    ("Apple", "Apple_Inc.", True), ("Dish", "Dish_Network", False),
])
def test_a_link_is_copied_only_when_its_title_names_the_surface(surface: str, link: str, fits: bool) -> None:
    from posthoc.eaglet.rules.inconsistent_marking import link_fits
    from posthoc.links import normalise_link

    assert link_fits(surface, normalise_link(link).link) is fits


def test_inconsistent_marking_does_not_spread_a_metonym_link() -> None:
    corpus = build_corpus({"1": ("Baltimore beat Boston. Baltimore won again.", [
        ("Baltimore", "Baltimore_Orioles"), ("Baltimore", "Baltimore_Orioles", 1)]),
        "2": ("He was born in Baltimore.", [])})
    flags = run(InconsistentMarkingRule(), corpus)
    assert flags["link"].tolist() == [""]
    assert "linked to https://en.wikipedia.org/wiki/Baltimore_Orioles there; not copied: its title does not " \
           "name the surface itself" in flags["detail"].iloc[0]
    assert run(InconsistentMarkingRule(links="agreed"), corpus)["link"].tolist() == [
        "https://en.wikipedia.org/wiki/Baltimore_Orioles"]


@pytest.mark.parametrize(("surface", "region"), [
    ("N.J.", "New Jersey"), ("N.J", "New Jersey"), ("Mich", "Michigan"), ("Kent", "Kentucky"), ("OR", "Oregon"),
    ("or", ""), ("Quebec", "Quebec"), ("West Germany", "West Germany"), ("U.S.", "United States"),
    ("La Pampa", ""), ("Seattle", ""), ("", ""),
])
def test_regions_that_follow_a_city(surface: str, region: str) -> None:
    from posthoc.eaglet.places import region_of, region_of_title, title_suffix_region

    assert region_of(surface) == region
    assert region_of_title("https://en.wikipedia.org/wiki/South_carolina") == "South Carolina"
    assert title_suffix_region("https://en.wikipedia.org/wiki/Salem,_Oregon") == "Oregon"
    assert title_suffix_region("https://en.wikipedia.org/wiki/Osaka") is None
