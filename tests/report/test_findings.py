"""The report's first screen (issue 45): what was found, per dataset, equal to the tables' own figures; "tied" when a
paired interval holds 0; the settings at the end; a study of no judgement in one line."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from report_scores_data import small_scores

from posthoc.html import Section, paragraph
from posthoc.metrics import ScoringOptions, score_judgements
from posthoc.report.findings import finding_sentence, study_findings
from posthoc.report.study_report import build_report
from posthoc.scores import Scores
from posthoc.synthetic import synthetic_study


@pytest.fixture(scope="module")
def study() -> tuple[pd.DataFrame, pd.DataFrame, Scores]:
    """12 documents a dataset, GT, E2E and REL, k = 1, scored with 200 resamples."""
    _, mentions, judgements = synthetic_study(12, seed=4, verify_prob={"GT": 0.80, "E2E": 0.95, "REL": 0.90})
    return mentions, judgements, score_judgements(judgements, mentions, options=ScoringOptions(n_resamples=200))


def _sections(html: str) -> list[str]:
    return re.findall(r'<section id="([^"]+)">', html)


def _strict_f1(mentions: pd.DataFrame, dataset: str, system: str) -> float:
    """Strict micro F1 against GT worked from the mentions: same document, span and link."""
    key = ["doc_id", "start", "end", "link"]
    mine = mentions[(mentions["dataset"] == dataset)]
    found = set(mine.loc[mine["system"] == system, key].itertuples(index=False))
    gold = set(mine.loc[mine["system"] == "GT", key].itertuples(index=False))
    hits = len(found & gold)
    precision, recall = hits / len(found), hits / len(gold)
    return 2 * precision * recall / (precision + recall) if hits else 0.0


def test_first_screen_figures_equal_the_tables_and_the_judgements(study: tuple[pd.DataFrame, pd.DataFrame,
                                                                                Scores]) -> None:
    mentions, judgements, scores = study
    findings = study_findings(scores.rates, scores.preannotation, scores.comparisons)
    judged = judgements[~judgements["is_control"].astype(bool)]
    assert sorted(findings["dataset"].unique()) == ["SYN-A", "SYN-B"]
    for dataset, rows in findings.groupby("dataset"):
        found = rows.set_index("finding")
        assert list(found.index) == ["best_strict", "best_posthoc", "gt_verification_gap"]
        # best strict: the highest strict F1 worked from the mentions themselves
        f1 = {system: _strict_f1(mentions, str(dataset), system) for system in ("E2E", "REL")}
        assert found.loc["best_strict", "system"] == max(f1, key=lambda s: f1[s])
        assert found.loc["best_strict", "value"] == pytest.approx(max(f1.values()), abs=1e-12)
        # best posthoc: the rates table's own F1 and interval
        posthoc = scores.rates[(scores.rates["dataset"] == dataset) & (scores.rates["metric"] == "posthoc_f1")
                               & (scores.rates["system"] != "GT")].set_index("system")
        leader = str(posthoc["value"].idxmax())
        assert found.loc["best_posthoc", "system"] == leader
        assert tuple(found.loc["best_posthoc", ["value", "low", "high"]]) == tuple(
            posthoc.loc[leader, ["value", "low", "high"]])
        # the ground truth's gap: verification rates counted from the judgements, the interval the comparison's
        mine = judged[judged["dataset"] == dataset]
        rate = (mine["outcome"] == "verify").groupby(mine["system"]).mean()
        best = str(rate.drop("GT").idxmax())
        assert found.loc["gt_verification_gap", "system"] == best
        assert found.loc["gt_verification_gap", "value"] == pytest.approx(rate["GT"] - rate[best], abs=1e-12)
        pair = scores.comparisons[(scores.comparisons["dataset"] == dataset)
                                  & (scores.comparisons["metric"] == "verification_rate")
                                  & (scores.comparisons["system_a"] == "GT")
                                  & (scores.comparisons["system_b"] == best)].iloc[0]
        assert (found.loc["gt_verification_gap", "low"], found.loc["gt_verification_gap", "high"]) == (
            pair["ci_low"], pair["ci_high"])
        assert found.loc["gt_verification_gap", "high"] < 0  # GT verified 0.80, the best system 0.95 or 0.90


def _two_systems(low: float, high: float) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    rates = pd.DataFrame([("d", s, m, v, v - 0.05, v + 0.05, 50) for s, v in (("GT", 0.7), ("A", 0.8), ("B", 0.75))
                          for m in ("posthoc_f1", "verification_rate")],
                         columns=["dataset", "system", "metric", "value", "low", "high", "n"])
    strict = pd.DataFrame([("d", "A", "strict", "micro", 0.5), ("d", "B", "strict", "micro", 0.5)],
                          columns=["dataset", "system", "matching", "averaging", "f1"])
    pairs = pd.DataFrame([("d", "A", "B", metric, 0.05, low, high) for metric in ("posthoc_f1", "verification_rate")]
                         + [("d", "GT", "A", "verification_rate", -0.1, -0.15, -0.05)],
                         columns=["dataset", "system_a", "system_b", "metric", "difference", "ci_low", "ci_high"])
    return rates, strict, pairs


@pytest.mark.parametrize(("low", "high", "tied"), [(-0.01, 0.11, "B"), (0.0, 0.1, "B"), (0.01, 0.09, "")],
                         ids=["interval crosses 0", "interval touches 0", "interval above 0"])
def test_best_posthoc_is_tied_when_the_paired_interval_holds_zero(low: float, high: float, tied: str) -> None:
    rates, strict, pairs = _two_systems(low, high)
    table = study_findings(rates, strict, pairs)
    findings = table.set_index("finding")
    assert findings.loc["best_posthoc", "system"] == "A" and findings.loc["best_posthoc", "tied_with"] == tied
    sentence = finding_sentence(table.loc[table["finding"] == "best_posthoc"].iloc[0])
    assert sentence.startswith("best posthoc (F1): tied, A") == bool(tied), sentence
    # strict F1 equal (0.5 each): tied by the same value, the first by name leads
    assert findings.loc["best_strict", "system"] == "A" and findings.loc["best_strict", "tied_with"] == "B"


def test_a_pair_held_the_other_way_round_is_turned_and_its_interval_kept() -> None:
    rates, strict, pairs = _two_systems(-0.02, 0.12)
    turned = pairs.assign(system_a=pairs["system_b"], system_b=pairs["system_a"], difference=-pairs["difference"],
                          ci_low=-pairs["ci_high"], ci_high=-pairs["ci_low"])
    assert study_findings(rates, strict, turned).equals(study_findings(rates, strict, pairs))


def test_the_verified_errors_line_is_shown_with_its_table_and_left_out_without() -> None:
    scores = small_scores()
    share = pd.DataFrame({"dataset": ["aida"], "value": [0.47], "low": [0.41], "high": [0.53], "n": [120]})
    html = build_report(scores, strict_errors_verified=share)
    first = html[html.index('id="findings"'):html.index("</section>")]
    assert "strict errors the annotators verified as right: 0.470 [0.410, 0.530] of 120" in first
    assert first.count("strict errors the annotators verified") == 1  # kore50 has no row: no line
    assert "strict errors the annotators verified" not in build_report(scores)


def test_findings_come_first_and_the_settings_last(study: tuple[pd.DataFrame, pd.DataFrame, Scores]) -> None:
    scores = study[2]
    html = build_report(scores, extra_sections=[Section("CrowdTruth", paragraph("units"), "ct")])
    sections = _sections(html)
    assert sections[0] == "findings" and sections[-1] == "settings" and sections[-2] == "ct"
    assert html.index('id="findings"') < html.index("<nav>")  # on the first screen, before the contents
    assert "n_resamples" in html[html.index('id="settings"'):]
    assert "n_resamples" not in html[:html.index('id="settings"')]  # the settings table is no longer on top
    first = html[html.index('id="findings"'):html.index('id="overview"')]
    best = study_findings(scores.rates, scores.preannotation, scores.comparisons)
    for row in best.itertuples():
        assert f"{row.value:.3f}" in first or f"{row.value:+.3f}" in first


def test_scores_of_no_judgement_give_one_line_the_exclusions_and_the_settings() -> None:
    scores = small_scores()
    scores.summary = {**scores.summary, "n_judgements": 0}
    html = build_report(scores, extra_sections=[Section("CrowdTruth", paragraph("units"), "ct")])
    assert "No judgements to score: 0 judgements; 2 left out (draft 1, skipped 1; see Exclusions)." in html
    assert _sections(html) == ["exclusions", "settings"]
    assert "<img" not in html and "What was found" not in html


def test_empty_tables_give_an_empty_findings_table_and_a_sentence() -> None:
    empty = small_scores()
    for name in ("rates", "preannotation"):
        setattr(empty, name, getattr(empty, name).iloc[0:0])
    assert study_findings(empty.rates, empty.preannotation, empty.comparisons).empty
    assert "Nothing to compare" in build_report(empty)
    assert np.isnan(study_findings(*_two_systems(0.0, 0.1)).set_index("finding").loc["best_strict", "low"])


def test_the_verified_errors_line_comes_from_the_scores_own_categories(study: tuple[pd.DataFrame, pd.DataFrame,
                                                                                     Scores]) -> None:
    """Without a table given, the line is the systems' judged strict errors (a system's annotation with no GT
    annotation of the same document, span and link) that the annotator verified, worked from the judgements."""
    mentions, judgements, scores = study
    html = build_report(scores)
    first = html[html.index('id="findings"'):html.index('id="overview"')]
    key = ["dataset", "doc_id", "start", "end", "link"]
    gold = set(mentions.loc[mentions["system"] == "GT", key].itertuples(index=False, name=None))
    judged = judgements[~judgements["is_control"].astype(bool) & (judgements["system"] != "GT")]
    errors = judged[[row not in gold for row in judged[key].itertuples(index=False, name=None)]]
    assert len(errors) > 0
    for dataset, rows in errors.groupby("dataset"):
        share = float((rows["outcome"] == "verify").mean())
        assert f"strict errors the annotators verified as right: {share:.3f}" in first, dataset
        assert f"of {len(rows)}" in first
