"""Error categories (issue 45): hand-worked cases, ELEVANT's own definitions on a benchmark excerpt, exact sums.

The hand-worked document holds emoji, CJK and combining marks, nested, touching and overlapping spans and NIL
links; every expected category below is worked from the definitions in posthoc.metrics.strict_categories. The
reference (tests/metrics/elevant_reference.py) is ELEVANT's code transcribed from its source and applied to
Reuters-128 (../shared/data) with a seeded system derived from its gold standard.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import numpy as np
import pandas as pd
import pytest
from elevant_reference import evaluation_cases, label_errors

from posthoc.metrics import score_judgements
from posthoc.metrics.disambiguation_kinds import disambiguation_kinds
from posthoc.metrics.strict_categories import (
    CATEGORY_COLUMNS,
    FALSE_NEGATIVE_KINDS,
    FALSE_POSITIVE_KINDS,
    error_categories,
)
from posthoc.metrics.verified_categories import category_summary, strict_errors_verified
from posthoc.synthetic import synthetic_study

WIKI = "https://en.wikipedia.org/wiki/"
TEXT = "👋 Barack Obama met 習近平 in Paris; the e\u0301cole of Zürich 🎉 read the New York Times Square."


def _at(surface: str, after: int = 0) -> tuple[int, int]:
    start = TEXT.index(surface, after)
    return start, start + len(surface)


def _row(system: str, surface: str, link: str, after: int = 0) -> tuple[object, ...]:
    start, end = _at(surface, after)
    assert TEXT[start:end] == surface
    return ("doc", "1", system, start, end, surface, link)


def _hand_worked() -> pd.DataFrame:
    rows = [
        _row("GT", "Barack Obama", WIKI + "Barack_Obama"),
        _row("GT", "習近平", WIKI + "Xi_Jinping"),
        _row("GT", "Paris", WIKI + "Paris"),
        _row("GT", "e\u0301cole", WIKI + "%C3%89cole"),
        _row("GT", "Zürich", "nil:"),
        _row("GT", "New York Times", WIKI + "The_New_York_Times"),
        _row("GT", "New York", WIKI + "New_York_City"),  # nested in the one above
        _row("A", "Obama", WIKI + "Barack_Obama"),  # inside GT's Barack Obama, same entity
        _row("A", "習近平", WIKI + "Xi_Jinping_(other)"),
        _row("A", "Paris", WIKI + "Paris"),
        _row("A", "; the", WIKI + "The"),  # touches Paris's end: no overlap; lower-case
        _row("A", "Zürich", WIKI + "Z%C3%BCrich"),  # GT says NIL at this span
        _row("A", "🎉", "nil:"),  # no letter: not a named entity
        _row("A", "Times Square", WIKI + "Times_Square"),  # overlaps New York Times, another entity
        _row("A", "New York", WIKI + "New_York_City"),
        _row("B", "Paris", "nil:"),  # a known entity called NIL: undetected (ELEVANT "ent / unk")
        _row("B", "Obama met", WIKI + "Obama"),  # overlaps Barack Obama, not inside it
    ]
    return pd.DataFrame(rows, columns=["dataset", "doc_id", "system", "start", "end", "surface", "link"])


EXPECTED = {
    ("A", "system", "Obama"): ("false_positive", "wrong_span"),
    ("A", "ground_truth", "Barack Obama"): ("false_negative", "partially_included"),
    ("A", "system", "習近平"): ("disambiguation_wrong", "not_classified"),
    ("A", "ground_truth", "習近平"): ("disambiguation_wrong", "not_classified"),
    ("A", "system", "Paris"): ("correct", ""),
    ("A", "ground_truth", "Paris"): ("correct", ""),
    ("A", "system", "; the"): ("false_positive", "lowercased"),
    ("A", "ground_truth", "e\u0301cole"): ("false_negative", "lowercased"),
    ("A", "system", "Zürich"): ("false_positive", "ground_truth_unknown"),
    ("A", "ground_truth", "Zürich"): ("disambiguation_wrong", "not_classified"),
    ("A", "system", "🎉"): ("false_positive", "lowercased"),
    ("A", "system", "Times Square"): ("false_positive", "other"),
    ("A", "ground_truth", "New York Times"): ("false_negative", "partial_overlap"),
    ("A", "system", "New York"): ("correct", ""),
    ("A", "ground_truth", "New York"): ("correct", ""),
    ("B", "system", "Paris"): ("disambiguation_wrong", "not_classified"),
    ("B", "ground_truth", "Paris"): ("false_negative", "other"),
    ("B", "system", "Obama met"): ("false_positive", "other"),
    ("B", "ground_truth", "Barack Obama"): ("false_negative", "partial_overlap"),
    ("B", "ground_truth", "習近平"): ("false_negative", "lowercased"),  # no upper-case letter: ELEVANT's rule
    ("B", "ground_truth", "e\u0301cole"): ("false_negative", "lowercased"),
    ("B", "ground_truth", "Zürich"): ("false_negative", "other"),
    ("B", "ground_truth", "New York"): ("false_negative", "other"),
}


def test_every_category_and_kind_on_the_hand_worked_document() -> None:
    table = error_categories(_hand_worked())
    assert tuple(table.columns) == CATEGORY_COLUMNS
    found = {(str(s), str(side), str(surface)): (str(c), str(k)) for s, side, surface, c, k in
             table[["system", "side", "surface", "category", "kind"]].itertuples(index=False)}
    for key, expected in EXPECTED.items():
        assert found[key] == expected, key
    # every row of A and B is one of the expected; GT's own seven annotations once each
    assert {k for k in found if k[0] != "GT"} == set(EXPECTED) | {("B", "ground_truth", "New York Times")}
    assert (table["system"] == "GT").sum() == 7
    # offsets are code points: every surface is its span of the text
    assert all(TEXT[s:e] == str(t) for s, e, t in table[["start", "end", "surface"]].itertuples(index=False))


def test_the_partner_links_and_nil_flags() -> None:
    table = error_categories(_hand_worked())
    zurich = table[(table["surface"] == "Zürich") & (table["system"] == "A") & (table["side"] == "system")].iloc[0]
    assert (zurich["gt_link"], zurich["system_link"], bool(zurich["is_nil"])) == ("nil:", WIKI + "Z%C3%BCrich", False)
    missed = table[(table["surface"] == "Barack Obama") & (table["system"] == "A")].iloc[0]
    assert (missed["gt_link"], missed["system_link"]) == (WIKI + "Barack_Obama", "")


def test_contains_unknowns_decides_an_unlabelled_named_entity() -> None:
    mentions = pd.DataFrame([("d", "1", "GT", 0, 5, "Paris", WIKI + "Paris"), ("d", "1", "A", 10, 14, "Lyon",
                                                                              WIKI + "Lyon")],
                            columns=["dataset", "doc_id", "system", "start", "end", "surface", "link"])
    kind = {flag: error_categories(mentions, contains_unknowns=flag).query("system == 'A' and side == 'system'")[
        "kind"].astype(str).tolist() for flag in (False, True)}
    assert kind == {False: ["ground_truth_unknown"], True: ["other"]}


class _KB:
    """A small knowledge base, for the kinds ELEVANT reads from its entity database (the most popular candidate of
    a mention is the page of its own title)."""

    types_of: ClassVar[dict[str, set[str]]] = {
        WIKI + "Germany": {"location"}, WIKI + "Germany_national_football_team": set(),
        WIKI + "German_language": {"languoid"}, WIKI + "Jordan": {"location"}, WIKI + "Michael_Jordan": {"person"},
        WIKI + "Troy": {"location"}, WIKI + "Troy_(city)": {"location"}}

    def types(self, link: str) -> frozenset[str]:
        return frozenset(self.types_of.get(link, set()))

    def is_demonym(self, surface: str) -> bool:
        return surface == "German"

    def most_popular(self, surface: str) -> frozenset[str]:
        return frozenset({WIKI + surface})

    def name(self, link: str) -> str | None:
        return None


def test_the_knowledge_base_kinds_follow_elevants_chain() -> None:
    # German (a languoid): demonym; Germany the team, predicted the country, most popular a location: metonymy;
    # Jordan the person: partial name (before rare); Troy the city predicted as the most popular Troy: rare;
    # predicted as the film, not the most popular: other
    surface = np.array(["German", "Germany", "Jordan", "Troy", "Troy"])
    gt = np.array([WIKI + "German_language", WIKI + "Germany_national_football_team", WIKI + "Michael_Jordan",
                   WIKI + "Troy_(city)", WIKI + "Troy_(city)"])
    predicted = np.array([WIKI + "Germany", WIKI + "Germany", WIKI + "Jordan", WIKI + "Troy", WIKI + "Troy_(film)"])
    assert disambiguation_kinds(surface, gt, predicted, kb=_KB()).tolist() == [
        "demonym", "metonymy", "partial_name", "rare", "other"]
    # without a KB: partial name where the name holds the mention ("German" in "German language", "Germany" in the
    # team's name: the KB showed a demonym and a metonymy first), the rest cannot be told apart
    assert disambiguation_kinds(surface, gt, predicted).tolist() == [
        "partial_name", "partial_name", "partial_name", "not_classified", "not_classified"]


# ELEVANT's own definitions on a benchmark excerpt ------------------------------------------------------------------

def _system_from(gt: pd.DataFrame, text: str, rng: np.random.Generator) -> dict[tuple[int, int], str]:
    """A seeded linker's output on one document: GT kept, dropped, relinked, cut to a word or widened by one, and
    extra words linked (capitalised or not)."""
    links = gt["link"].tolist()
    out: dict[tuple[int, int], str] = {}
    for start, end, link in gt[["start", "end", "link"]].itertuples(index=False):
        action = rng.choice(6, p=[0.5, 0.1, 0.15, 0.1, 0.1, 0.05])
        words = text[start:end].split(" ")
        if action == 0:
            out[(start, end)] = link
        elif action == 2:
            out[(start, end)] = links[int(rng.integers(len(links)))] + "_(other)"
        elif action == 3 and len(words) > 1:
            out[(start, start + len(words[0]))] = link
        elif action == 4:
            following = text.find(" ", end + 1)
            if text[end:end + 1] == " " and following > end + 1 and text[end + 1:following].isalpha():
                out[(start, following)] = WIKI + "Something_else"
        elif action == 5:
            out[(start, end)] = link if not str(link).startswith("nil:") else WIKI + "Named"
    for match in rng.choice(len(text.split(" ")), size=3, replace=False):
        words = text.split(" ")
        start = len(" ".join(words[:match])) + (1 if match else 0)
        word = words[match]
        if word.isalpha() and not any(s < start + len(word) and start < e for s, e in out):
            out[(start, start + len(word))] = WIKI + word
    return out


def _label(labels: set[str]) -> tuple[str, str] | None:
    if "NER_FN" in labels:
        kind = next(k for k in FALSE_NEGATIVE_KINDS if f"NER_FN_{k.upper()}" in labels)
        return ("false_negative", kind)
    if "DISAMBIGUATION_WRONG" in labels:
        return ("disambiguation_wrong", "partial_name" if "DISAMBIGUATION_PARTIAL_NAME_WRONG" in labels
                else "not_classified")
    if "NER_FP" in labels:
        for elevant, ours in (("GROUNDTRUTH_UNKNOWN", "ground_truth_unknown"), ("LOWERCASED", "lowercased"),
                              ("WRONG_SPAN", "wrong_span")):
            if f"NER_FP_{elevant}" in labels:
                return ("false_positive", ours)
        assert "NER_FP_OTHER" in labels
        return ("false_positive", FALSE_POSITIVE_KINDS[-1])
    return None


def test_elevants_own_labels_agree_on_every_mention_it_classifies(shared_data: Path) -> None:
    from posthoc.readers import read_mentions

    corpus = read_mentions(str(shared_data / "nif" / "Reuters-128.ttl"))
    rng = np.random.default_rng(45)
    documents = corpus.documents.head(40)
    texts = dict(zip(documents["doc_id"], documents["text"], strict=True))
    gt = corpus.mentions[corpus.mentions["doc_id"].isin(texts)].assign(system="GT")
    rows, reference = [], {}
    for doc_id, text in texts.items():
        here = gt[gt["doc_id"] == doc_id]
        system = _system_from(here, text, rng)
        rows += [("R", doc_id, "S", s, e, text[s:e], link) for (s, e), link in system.items()]
        cases = evaluation_cases(text, {(s, e): link for s, e, link in here[["start", "end", "link"]].itertuples(
            index=False)}, system)
        label_errors(cases, contains_unknowns=True)
        for case in cases:
            label = _label(case.labels)
            if label is not None:
                reference[(doc_id, "system" if case.true_entity is None or label[1] in (
                    "ground_truth_unknown",) or label[0] == "false_positive" else "ground_truth", *case.span)] = label
    mentions = pd.concat([gt[["dataset", "doc_id", "system", "start", "end", "surface", "link", "is_nil"]].assign(
        dataset="R"), pd.DataFrame(rows, columns=["dataset", "doc_id", "system", "start", "end", "surface", "link"])])
    table = error_categories(mentions)
    ours = {(str(d), str(side), int(s), int(e)): (str(c), str(k)) for d, side, s, e, c, k in
            table.loc[table["system"] == "S", ["doc_id", "side", "start", "end", "category", "kind"]].itertuples(
                index=False)}
    disagreements = {key: (label, ours.get(key)) for key, label in reference.items() if ours.get(key) != label}
    assert not disagreements
    kinds = {label for label in reference.values()}
    assert len(reference) >= 100 and len(kinds) >= 6  # a real comparison: many mentions, many kinds


# Exact sums --------------------------------------------------------------------------------------------------------

def test_categories_and_verdicts_add_up_to_the_rates_they_refine() -> None:
    _, mentions, judgements = synthetic_study(25, verify_prob={"GT": 0.85, "E2E": 0.7, "REL": 0.6}, seed=3)
    scores = score_judgements(judgements, mentions)
    summary, table = scores.error_category_summary, scores.error_categories
    strict = scores.preannotation.query("matching == 'strict' and averaging == 'micro'")
    for dataset, system, precision, recall in strict[["dataset", "system", "precision", "recall"]].itertuples(
            index=False):
        cell = summary[(summary["dataset"] == dataset) & (summary["system"] == system)]
        correct = cell[cell["category"] == "correct"].set_index("side")["share"]
        assert correct["system"] == pytest.approx(precision, abs=1e-12)
        assert correct["ground_truth"] == pytest.approx(recall, abs=1e-12)
        for side, rows in cell.groupby("side"):
            totals = rows[rows["kind"] == "all"].set_index("category")["count"]
            assert totals.drop("strict_error").sum() == rows["n"].iloc[0]
            assert totals["strict_error"] == totals.drop(["strict_error", "correct"]).sum()
            for category, parts in rows[rows["kind"] != "all"].groupby("category"):
                assert parts["count"].sum() == totals[category], (side, category)
    rates = scores.rates.query("metric == 'verification_rate'").set_index(["dataset", "system"])
    own = table[table["side"].astype(str).eq("system") | table["category"].astype(str).eq("gt_annotation")]
    judged = own[own["verdict"].astype(str) != "not_judged"]
    for (dataset, system), group in judged.groupby(["dataset", "system"], observed=True):
        verified = (group["verdict"].astype(str) == "verified").sum()
        assert verified / len(group) == pytest.approx(rates.loc[(dataset, system), "value"], abs=1e-12)
        assert len(group) == rates.loc[(dataset, system), "n"]


@pytest.mark.parametrize("interval", ["bca", "percentile"])
def test_the_pooled_share_is_the_pooled_summarys_strict_error_cell(interval: str) -> None:
    # the report's cheap pass against the definition it replaces: category_summary of the systems' rows pooled
    _, mentions, judgements = synthetic_study(30, verify_prob={"GT": 0.85, "E2E": 0.7, "REL": 0.6}, seed=5)
    crossed = score_judgements(judgements, mentions).error_categories
    chosen = crossed[crossed["side"].astype(str).eq("system") & crossed["system"].astype(str).ne("GT")]
    summary = category_summary(chosen.assign(system="all systems"), n_resamples=300, seed=4, interval=interval)
    cell = summary[(summary["category"] == "strict_error") & (summary["kind"] == "all")
                   & (summary["n_judged"] > 0)].reset_index(drop=True)
    pooled = strict_errors_verified(crossed, n_resamples=300, seed=4, interval=interval)
    assert len(pooled) == len(cell) > 1
    assert pooled["dataset"].tolist() == cell["dataset"].tolist()
    assert pooled["n"].tolist() == cell["n_judged"].astype(float).tolist()
    for ours, theirs in (("value", "overturned_share"), ("low", "overturned_low"), ("high", "overturned_high")):
        assert pooled[ours].tolist() == cell[theirs].tolist(), ours
    assert (pooled["low"] < pooled["value"]).any()


@pytest.mark.slow
def test_overturned_shares_cover_the_simulated_truth_at_their_level() -> None:
    """The verdicts are drawn independently of the categories, so the true share of a system's strict errors
    verified is its verify probability, and of GT's annotations not verified, 1 - GT's."""
    from posthoc.metrics.inputs import judged_rows, mention_rows
    from posthoc.metrics.verification import verdicts_of
    from posthoc.metrics.verified_categories import verified_category_tables

    truth = {"GT": 0.8, "E2E": 0.6, "REL": 0.7}
    covered = {"system": [], "ground_truth": []}
    for seed in range(100):
        _, mentions, judgements = synthetic_study(30, verify_prob=truth, edit_prob={m: 0.1 for m in truth},
                                                  seed=1000 + seed)
        rows = judged_rows(judgements[~judgements["is_control"]])
        verdicts, codes = verdicts_of(rows)
        summary = verified_category_tables(mention_rows(mentions), rows, verdicts, codes, n_resamples=400,
                                           seed=seed)[1]
        errors = summary[(summary["category"] == "strict_error") & (summary["system"] != "GT")]
        for side, system, low, high in errors[["side", "system", "overturned_low", "overturned_high"]].itertuples(
                index=False):
            value = truth[system] if side == "system" else 1 - truth["GT"]
            covered[side].append(low <= value <= high)
    assert np.mean(covered["system"]) >= 0.91 and np.mean(covered["ground_truth"]) >= 0.91, {
        side: np.mean(hits) for side, hits in covered.items()}


# Eaglet's flags measured by the annotators ---------------------------------------------------------------------------

def test_each_eaglet_rules_precision_is_the_share_of_its_judged_flags_the_annotators_upheld() -> None:
    from posthoc.metrics.flag_verdicts import flag_precision

    columns = ["dataset", "doc_id", "start", "end", "link", "rule", "suggestion", "system"]
    flags = pd.DataFrame([
        ("d", "1", 0, 5, "Paris", "overlapping", "check", "GT"),  # GT's Paris removed: right
        ("d", "1", 9, 14, "Seine", "overlapping", "check", "GT"),  # verified: wrong
        ("d", "2", 0, 4, "Nice", "overlapping", "delete", "GT"),  # edited: right
        ("d", "2", 5, 9, "Lyon", "overlapping", "check", "GT"),  # nobody judged it
        ("d", "2", 10, 14, "Rome", "missing", "insert", "GT"),  # system A's identical annotation verified: right
        ("d", "3", 0, 3, "Oslo", "missing", "insert", "GT"),  # system A's identical annotation removed: wrong
        ("d", "3", 5, 8, "Bern", "overlapping", "check", "A"),  # another system's flag: left out
    ], columns=columns)
    judgements = pd.DataFrame([
        ("d", "1", "GT", 0, 5, "Paris", "w1", "remove"), ("d", "1", "GT", 9, 14, "Seine", "w1", "verify"),
        ("d", "2", "GT", 0, 4, "Nice", "w1", "edit"), ("d", "2", "A", 10, 14, "Rome", "w2", "verify"),
        ("d", "3", "A", 0, 3, "Oslo", "w2", "remove"), ("d", "3", "GT", 5, 8, "Bern", "w1", "verify"),
    ], columns=["dataset", "doc_id", "system", "start", "end", "link", "worker", "outcome"])
    table = flag_precision(flags, judgements, n_resamples=200, interval="percentile").set_index("rule")
    assert table.loc["overlapping", ["n_flags", "n_judged", "n_right"]].tolist() == [4, 3, 2]
    assert table.loc["overlapping", "precision"] == pytest.approx(2 / 3)
    assert table.loc["missing", ["n_flags", "n_judged", "n_right"]].tolist() == [2, 2, 1]
    assert 0 <= table.loc["missing", "low"] <= 0.5 <= table.loc["missing", "high"] <= 1
