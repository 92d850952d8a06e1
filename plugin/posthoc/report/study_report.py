"""The study report: paper 000's Figures 3-6, the metric tables, controls and exclusions in one HTML file.

:func:`build_report` renders a :class:`posthoc.scores.Scores` with the shared shell
(:mod:`posthoc.html`): every value escaped, figures embedded as PNG data URIs, no external
resource, no timestamp, so the same scores give byte-identical HTML. Other areas (CrowdTruth, Eaglet
flags, sequence effects) append their own :class:`~posthoc.html.Section` objects through
``extra_sections``.

Order (issue 45): what was found first (:mod:`posthoc.report.findings`: per dataset the best system strict and
posthoc, the ground truth's verification rate against the best system's, the share of strict errors verified as
right), then :data:`STUDY_SECTIONS`, the ``extra_sections``, and the settings table last. Scores of no judgement
at all (``summary["n_judgements"] == 0``: everything excluded) give one line saying so, the exclusions and the
settings, not a report of empty tables.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Final

import pandas as pd

from posthoc.export.checks import summarise_exclusions
from posthoc.html import Section, figure_html, page, paragraph, table_html, with_intervals
from posthoc.report import figures
from posthoc.report.categories_section import error_categories_section
from posthoc.report.explorer import NO_LINKS, CellLinks
from posthoc.report.findings import findings_section
from posthoc.scores import Scores


def _summary_table(summary: dict[str, object]) -> str:
    simple = {k: v for k, v in sorted(summary.items()) if isinstance(v, (str, int, float, bool)) or v is None}
    frame = pd.DataFrame({"setting": list(simple), "value": [str(v) for v in simple.values()]})
    return table_html(frame)


def _method_note(summary: dict[str, object]) -> str:
    unit = summary.get("resample_unit", "doc_id")
    n = summary.get("n_resamples", "?")
    seed = summary.get("seed", "?")
    method = ("BCa (bias-corrected and accelerated, small-sample expanded; docs/metrics.md)"
              if summary.get("interval", "bca") == "bca" else "percentile")
    return paragraph(
        f"Intervals are 95% {method} bootstrap intervals from {n} resamples of {unit} "
        f"(resampling unit: {unit}; seed {seed}). Posthoc precision is the verification rate "
        "|V(m,d)| / |N(m,d)|; posthoc recall is |V(m,d)| / |V(d)| with V(d) the union over systems "
        "of verified annotations (paper 000, section 3.2)."
    ) + _union_note(summary)


def _union_note(summary: dict[str, object]) -> str:
    """Which reading of the verification union the scores use, and what the mention rate is (paper 000)."""
    reading = ("overlap: verified annotations with the same link whose spans overlap are one member of V(d) (the "
               "paper's 'union of all non-exact, non-overlapping annotations')" if summary.get("union") == "overlap"
               else "exact: one member of V(d) per distinct verified span and link (the formal definition)")
    return paragraph(f"Verification union: {reading}. The mention rate is the share of annotations whose mention "
                     "was right, verified or edited (paper 000 section 4: an edit means the mention was detected "
                     "but not linked to a verifiable entity).")


def overview_section(scores: Scores, links: CellLinks = NO_LINKS) -> Section:
    """How the figures were computed: the intervals, the resampling unit, the union (the settings table is
    :func:`settings_section`, at the end of the report)."""
    return Section("Overview", _method_note(scores.summary), anchor="overview")


def settings_section(scores: Scores) -> Section:
    """Every setting and count of the summary, one row each: the report's last section."""
    return Section("Settings", _summary_table(scores.summary), anchor="settings")


def no_judgements_line(summary: dict[str, object], exclusions: pd.DataFrame) -> str | None:
    """The one line of scores with no judgement (``summary["n_judgements"] == 0``), naming what was excluded and
    why (``exclusions``: the scores' table), else None.

    Examples:
        >>> from posthoc.export.checks import exclusions_frame
        >>> from posthoc.report.study_report import no_judgements_line
        >>> skipped = exclusions_frame([("skipped", "w1", "t1", "", 2), ("draft", "w2", "t2", "", 1)])
        >>> no_judgements_line({"n_judgements": 0}, skipped)
        'No judgements to score: 0 judgements; 3 left out (draft 1, skipped 2; see Exclusions).'
        >>> no_judgements_line({"n_judgements": 12}, skipped) is None
        True
    """
    if summary.get("n_judgements") != 0:
        return None
    excluded = summarise_exclusions(exclusions)
    kinds = ", ".join(f"{kind} {count}" for kind, count in zip(excluded["kind"], excluded["count"], strict=True))
    left_out = f"{int(excluded['count'].sum())} left out ({kinds}; see Exclusions)" if kinds else "nothing excluded"
    return f"No judgements to score: 0 judgements; {left_out}."


def precision_recall_section(scores: Scores, links: CellLinks = NO_LINKS) -> Section:
    """Figure 3 with the rates and pre-annotation tables."""
    rates = scores.rates
    shown = rates[rates["metric"].isin(["posthoc_precision", "posthoc_recall", "posthoc_f1",
                                        "verification_rate", "mention_rate"])] if not rates.empty else rates
    body = (
        figure_html(figures.precision_recall_figure(scores.rates, scores.preannotation),
                    caption="Figure 3: pre-annotation evaluation against the ground truth (left) and posthoc "
                            "verification (right); error bars are 95% bootstrap intervals.",
                    alt="Figure 3: precision and recall, pre-annotation vs posthoc")
        + table_html(shown, caption="Posthoc rates per dataset and system", row_links=links.rows("rates", shown))
        + table_html(scores.preannotation, caption="Pre-annotation precision, recall and F1 against GT (matching "
                     "strict_kb, when present: strict with links compared through a KB index's redirects and "
                     "Wikidata ids, beside the plain strict)",
                     row_links=links.rows("preannotation", scores.preannotation))
    )
    return Section("Precision and recall (Figure 3)", body, anchor="figure-3")


def comparison_section(scores: Scores, links: CellLinks = NO_LINKS) -> Section:
    """RQ1 of paper 000: which system is better on each dataset, and does the ranking change (strict vs posthoc)?"""
    comparisons, rankings = scores.comparisons, scores.rankings
    if comparisons.empty:
        return Section("Which system is better (RQ1)", paragraph("Comparisons need two systems or more in a "
                                                                 "dataset."), anchor="comparisons")
    method = str(comparisons["method"].iloc[0])
    note = paragraph(
        "Every pair of systems of a dataset (the ground truth included): the difference a - b of posthoc precision, "
        "recall, F1 and verification rate, with a 95% paired interval over the same documents for both systems "
        f"(interval method: {method}; jackknife_t, the default: the cluster jackknife t over documents, which holds "
        "its level with few documents that differ, where the paired bootstrap of the rates' draws does not) and a "
        "two-sided p-value, "
        "Holm-adjusted over the pairs of the dataset for each metric (p_holm; significant: p_holm < 0.05). "
        "The ranking compares the pre-annotation evaluation against the ground truth (strict, micro; the ground "
        "truth, the reference, scores 1) with the posthoc evaluation; rank_change is strict rank minus posthoc "
        "rank (positive: moved up), flipped_with the systems whose order changed, significant whether a posthoc "
        "difference with one of them is significant."
    )
    changed = rankings[rankings["changed"]] if len(rankings) else rankings
    moved = paragraph(f"{len(changed)} of {len(rankings)} ranks change between strict and posthoc evaluation, "
                      f"{int(changed['significant'].sum()) if len(changed) else 0} of them with a significant "
                      "posthoc difference behind the change.")
    body = (
        note
        + figure_html(figures.comparison_figure(comparisons),
                      caption="Paired differences (system a - system b) in Figure 3's layout; error bars are 95% "
                              f"paired intervals ({method}); * marks a difference significant after Holm.",
                      alt="Paired differences of posthoc precision, recall and F1 between systems")
        + moved
        + table_html(rankings, caption="Rankings, strict against posthoc, with rank changes",
                     row_links=links.rows("rankings", rankings))
        + table_html(comparisons, caption="Paired differences between systems", float_format="{:.4f}",
                     row_links=links.rows("comparisons", comparisons))
    )
    return Section("Which system is better (RQ1)", body, anchor="comparisons")


def reuse_section(scores: Scores, links: CellLinks = NO_LINKS) -> Section:
    """The reuse check (issue 46): may an annotation's verdict be reused in another task? The rule, then the table."""
    reuse = scores.reuse
    if reuse.empty:
        return Section("Reusing verdicts across tasks", paragraph(
            "No annotation was judged in the tasks of two systems, so the reuse check has nothing to compare."),
            anchor="reuse")
    allowed = reuse.loc[reuse["decision"] == "reuse", "dataset"].tolist()
    note = paragraph(
        "An annotation pre-filled by several systems (same document, span and link) was judged in each system's "
        "task, blind. Cross-context agreement: the share of pairs of its judgements from two systems' tasks (two "
        "workers) with the same outcome; the baseline: the same share for two workers in one task (k > 1; the "
        "control annotations are shown without replicates, never decisive: kept workers passed them). The shift: "
        "the largest difference of the verify share between two systems' tasks on the same annotations. Rule: "
        "a verdict is reused only where every shift's 90% interval (over documents) lies within five points and, "
        "with replicates, the upper bound of within - cross agreement is at most five points; "
        f"reuse allowed for: {', '.join(allowed) if allowed else 'no dataset'}.")
    shown = with_intervals(reuse.drop(columns=["margin"]), [("difference", "ci_low", "ci_high"),
                                                              ("shift", "shift_low", "shift_high")],
                           float_format="{:.4f}")
    return Section("Reusing verdicts across tasks", note + table_html(
        shown, caption="Agreement across tasks against within one task (difference: within - cross, with its 90% "
                       "interval), and the reuse decision; every column in tables/reuse", float_format="{:.4f}"),
        anchor="reuse")


def outcome_section(scores: Scores, links: CellLinks = NO_LINKS) -> Section:
    """Figure 4 with the outcome counts."""
    body = (
        figure_html(figures.outcome_figure(scores.outcome_counts),
                    caption="Figure 4: shares of verify, edit and remove per dataset and system (hatching: "
                            "system).", alt="Figure 4: outcome breakdown")
        + table_html(scores.outcome_counts, caption="Outcomes per dataset and system",
                     row_links=links.rows("outcome_counts", scores.outcome_counts))
    )
    return Section("Outcome breakdown (Figure 4)", body, anchor="figure-4")


def agreement_section(scores: Scores, links: CellLinks = NO_LINKS) -> Section:
    """Figure 5 with the agreement counts and reliability measures."""
    body = (
        figure_html(figures.agreement_figure(scores.agreement),
                    caption="Figure 5: annotations found by every system, by how many of their judges verified "
                            "them (i = judges who verified).", alt="Figure 5: agreement counts")
        + table_html(scores.agreement, caption="Agreement on the intersection of all systems",
                     row_links=links.rows("agreement", scores.agreement))
        + (table_html(scores.reliability, caption="Inter-annotator reliability",
                      row_links=links.rows("reliability", scores.reliability)) if not scores.reliability.empty
           else paragraph("Reliability measures need more than one judge per annotation (k > 1)."))
    )
    return Section("Agreement (Figure 5)", body, anchor="figure-5")


def union_section(scores: Scores, links: CellLinks = NO_LINKS) -> Section:
    """Figure 6 with the union outcome counts."""
    body = (
        figure_html(figures.union_outcomes_figure(scores.union_outcomes),
                    caption="Figure 6: the union of verified annotations against the ground truth: (A) same "
                            "mention, same link; (B) same mention, other link; (C) overlapping mention, same "
                            "link; (D) overlapping mention, other link; (E) no overlap with any GT mention.",
                    alt="Figure 6: outcomes A to E")
        + table_html(scores.union_outcomes, caption="Verification union against the ground truth",
                     row_links=links.rows("union_outcomes", scores.union_outcomes))
    )
    return Section("Coverage of the ground truth (Figure 6)", body, anchor="figure-6")


def controls_section(scores: Scores, links: CellLinks = NO_LINKS) -> Section:
    """Control task results per worker."""
    if scores.controls.empty:
        return Section("Control tasks", paragraph("No control tasks were judged."), anchor="controls")
    return Section("Control tasks", table_html(scores.controls, caption="Control annotations per worker",
                                                  row_links=links.rows("controls", scores.controls)),
                   anchor="controls")


def corrected_gold_section(scores: Scores, links: CellLinks = NO_LINKS) -> Section:
    """The corrected links (edits) that make the corrected gold standard."""
    gold = scores.corrected_gold
    if gold.empty:
        return Section("Corrected gold standard", paragraph("No edits were made."), anchor="corrected-gold")
    counts = gold.groupby([c for c in ("dataset", "source") if c in gold.columns], sort=True,
                          dropna=False).size().rename("annotations").reset_index()
    return Section("Corrected gold standard",
                   paragraph(f"{len(gold)} annotations; written beside this report as corrected_gold.jsonl, "
                             "corrected_gold.ttl (NIF) and tables/corrected_gold.csv.")
                   + table_html(counts, caption="Corrected gold standard, by dataset and source")
                   + table_html(gold, caption="Corrected gold standard", collapse_after=0,
                              row_links=links.rows("corrected_gold", gold)),
                   anchor="corrected-gold")


def exclusions_section(scores: Scores, links: CellLinks = NO_LINKS) -> Section:
    """Everything left out of the metrics, summarised by kind with the reason, then one row each."""
    exclusions = scores.exclusions
    if exclusions.empty:
        return Section("Exclusions", paragraph("Nothing was excluded."), anchor="exclusions")
    body = (
        table_html(summarise_exclusions(exclusions), caption="Excluded, by kind, and why")
        + table_html(exclusions, caption="Every exclusion", row_links=links.rows("exclusions", exclusions))
    )
    return Section("Exclusions", body, anchor="exclusions")


@dataclass(frozen=True)
class ReportSection:
    """One section of the study report: ``build`` renders it from the scores; ``tables``: the
    :class:`~posthoc.scores.Scores` tables it shows (a new score table gets its section here, or is named in
    :data:`FILE_ONLY_TABLES`; tests/architecture/test_extension_points.py holds every table to one of them)."""

    build: Callable[[Scores, CellLinks], Section]
    tables: tuple[str, ...] = ()


#: The report's own sections, in order: the one registration of what the report shows.
STUDY_SECTIONS: Final = (
    ReportSection(overview_section),
    ReportSection(precision_recall_section, ("rates", "preannotation")),
    ReportSection(comparison_section, ("comparisons", "rankings")),
    ReportSection(outcome_section, ("outcome_counts",)),
    ReportSection(agreement_section, ("agreement", "reliability")),
    ReportSection(reuse_section, ("reuse",)),
    ReportSection(union_section, ("union_outcomes",)),
    ReportSection(error_categories_section, ("error_categories", "error_category_summary")),
    ReportSection(controls_section, ("controls",)),
    ReportSection(corrected_gold_section, ("corrected_gold",)),
    ReportSection(exclusions_section, ("exclusions",)),
)
#: Score tables written as files only, with no section of their own.
FILE_ONLY_TABLES: Final = ("aggregated",)


def score_sections(scores: Scores, links: CellLinks = NO_LINKS) -> list[Section]:
    """The report's own sections, in :data:`STUDY_SECTIONS` order; ``links``: each table row's explorer cell."""
    return [section.build(scores, links) for section in STUDY_SECTIONS]


def build_report(scores: Scores, *, extra_sections: Iterable[Section] = (), title: str | None = None,
                 strict_errors_verified: pd.DataFrame | None = None, links: CellLinks = NO_LINKS) -> str:
    """The complete HTML report of ``scores``: the findings, the study's sections, ``extra_sections``, the settings.

    ``strict_errors_verified``: the share of strict errors the annotators verified as right, per dataset
    (:func:`posthoc.report.findings.study_findings`); without it, the share the scores' own error categories give
    (its line is left out when they have none). ``links``: the study explorer beside the report
    (:class:`~posthoc.report.explorer.CellLinks`), every row of a score table a link to the annotations behind it
    (default: no links). Scores of no judgement (:func:`no_judgements_line`) give that line, the exclusions and
    the settings only.
    """
    study = scores.summary.get("study")
    heading = title or (f"Posthoc verification report: {study}" if study else "Posthoc verification report")
    intro = ("Posthoc verification (paper 000): annotators verified, edited or removed every pre-filled entity "
             "link, blind to the system that produced it; the ground truth was judged as one more system.")
    nothing = no_judgements_line(scores.summary, scores.exclusions)
    if nothing is not None:
        return page(heading, [exclusions_section(scores), settings_section(scores)], intro=nothing)
    if links.page is not None:
        intro += (f" Every row of a table below opens its annotations in the study explorer ({links.page}): each in "
                  "its document, with every system's annotation at that place and each annotator's verdict.")
    return page(heading, [findings_section(scores, strict_errors_verified=strict_errors_verified),
                          *score_sections(scores, links), *extra_sections, settings_section(scores)], intro=intro,
                lead=1)
