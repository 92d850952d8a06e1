"""The report's "Errors against verified truth" section: the strict error categories and who was wrong (issue 45).

Renders :class:`~posthoc.scores.Scores`' ``error_category_summary`` (:mod:`posthoc.metrics.verified_categories`):
first the headline per dataset and system, the share of strict errors the annotators verified as right, then the
categories of each side with their counts, shares and shares overturned, each with its interval. The table of
every annotation is ``tables/error_categories.csv`` beside the report.
"""

from __future__ import annotations

from typing import Final

import pandas as pd

from posthoc.html import Section, paragraph, table_html
from posthoc.scores import Scores

ANCHOR: Final = "error-categories"
TITLE: Final = "Errors against verified truth"
_DEFINITIONS: Final = (
    "Each system is compared with the ground truth as the strict scores compare them (same document, identical "
    "span, identical link); every annotation gets a category with ELEVANT's definitions (Bast et al., EMNLP 2022: "
    "detection false negative lowercased / partially included / partial overlap / other; false positive "
    "lowercased / ground truth unknown / wrong span / other; disambiguation wrong partial name, or not classified "
    "when the demonym, metonymy and rare kinds would need a knowledge base). The annotators' verdict on the "
    "annotation then says who was wrong: a system's strict error they verified is an error of the ground truth "
    "(overturned); on the ground-truth side, an error counted against the system is overturned when the ground "
    "truth's annotation was not verified (removed: a false mention; edited: a wrong link). Shares of correct rows "
    "are the strict micro precision (system side) and recall (ground-truth side). Intervals: the report's "
    "bootstrap over documents. Every annotation, with its category and verdict: tables/error_categories.csv."
)


def _headline(summary: pd.DataFrame) -> pd.DataFrame:
    """Per dataset and system: strict errors, how many were judged, the share verified as right."""
    rows = summary.loc[(summary["side"] == "system") & (summary["category"] == "strict_error")]
    return rows[["dataset", "system", "count", "n_judged", "n_overturned", "overturned_share", "overturned_low",
                 "overturned_high"]].rename(columns={
                     "count": "strict errors", "n_judged": "judged", "n_overturned": "verified as right",
                     "overturned_share": "share right", "overturned_low": "low", "overturned_high": "high"})


def error_categories_section(scores: Scores) -> Section:
    """The section of the error categories crossed with the verdicts; one line when there is nothing to show.

    Examples:
        Scores without categories (no ground truth, or no mention) say so in one line.

        >>> from posthoc.scores import Scores
        >>> import pandas as pd
        >>> empty = pd.DataFrame()
        >>> section = error_categories_section(Scores(*[empty] * 10))
        >>> "No annotation to categorise" in section.body_html
        True
    """
    summary = scores.error_category_summary
    if summary.empty:
        return Section(TITLE, paragraph("No annotation to categorise: the study has no ground truth or no "
                                        "system annotation."), anchor=ANCHOR)
    columns = ["dataset", "system", "category", "kind", "count", "n", "share", "share_low", "share_high",
               "n_judged", "overturned_share", "overturned_low", "overturned_high"]
    body = paragraph(_DEFINITIONS) + table_html(
        _headline(summary), caption="Share of each system's strict errors that the annotators verified as right "
                                    "(CleanCoNLL found 47% on CoNLL)")
    for side, caption in (("system", "The systems' annotations (precision side), by category and kind"),
                          ("ground_truth", "The ground truth's annotations (recall side; GT's own: its verdicts)")):
        part = summary.loc[summary["side"] == side, columns]
        body += table_html(part, caption=caption, collapse_after=0)
    return Section(TITLE, body, anchor=ANCHOR)
