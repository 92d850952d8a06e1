"""The report's "Errors against verified truth" section: the strict error categories and who was wrong (issue 45).

Renders :class:`~posthoc.scores.Scores`' ``error_category_summary`` (:mod:`posthoc.metrics.verified_categories`):
first the headline per dataset and system, the share of strict errors the annotators verified as right, then the
categories of each side with their counts, shares and shares overturned, each with its interval. The table of
every annotation is ``tables/error_categories.csv`` beside the report.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import pandas as pd

from posthoc.html import Section, paragraph, table_html, with_intervals
from posthoc.report.explorer import NO_LINKS, CellLinks
from posthoc.report.explorer_data import AnnotationTable, annotation_cell_id
from posthoc.scores import Scores

ANCHOR: Final = "error-categories"
#: the explorer's name of the categories table, and the columns it filters by (:func:`categories_for_explorer`)
EXPLORER_TABLE: Final = "categories"
EXPLORER_COLUMNS: Final = ("strict", "category", "case", "verdict")
_STRICT_ERRORS: Final = ("disambiguation_wrong", "false_positive", "false_negative")
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


def _headline(rows: pd.DataFrame) -> pd.DataFrame:
    """Per dataset and system (``rows``: the summary's system-side ``strict_error`` rows): strict errors, how many
    were judged, the share verified as right."""
    return rows[["dataset", "system", "count", "n_judged", "n_overturned", "overturned_share", "overturned_low",
                 "overturned_high"]].rename(columns={
                     "count": "strict errors", "n_judged": "judged", "n_overturned": "verified as right",
                     "overturned_share": "share right", "overturned_low": "low", "overturned_high": "high"})


def categories_for_explorer(scores: Scores) -> AnnotationTable | None:
    """The scores' per-annotation categories as a table the study explorer filters by and lists the cells of
    (:class:`~posthoc.report.explorer_data.AnnotationTable`): ``strict`` (``error`` for every strict error, else
    the category), ``category``, ``case`` (``category: kind``, the verdict as the kind of the ground truth's own
    annotations, as the summary has it) and ``verdict``; None without categories.

    Examples:
        >>> import pandas as pd
        >>> from posthoc.scores import Scores
        >>> rows = pd.DataFrame({"dataset": "d", "doc_id": "1", "system": "A", "start": 0, "end": 4, "link": "Nice",
        ...                      "category": ["false_positive"], "kind": ["other"], "verdict": ["verified"]})
        >>> table = categories_for_explorer(Scores(*[pd.DataFrame()] * 10, error_categories=rows))
        >>> table.frame[["strict", "case"]].to_dict("records")
        [{'strict': 'error', 'case': 'false_positive: other'}]
    """
    rows = scores.error_categories
    if rows.empty:
        return None
    category, verdict = rows["category"].astype(str), rows["verdict"].astype(str)
    kind = rows["kind"].astype(str).where(category != "gt_annotation", verdict)  # the summary's kind of GT's own
    frame = rows[["dataset", "doc_id", "system", "start", "end", "link"]].assign(
        strict=np.where(category.isin(_STRICT_ERRORS), "error", category), category=category,
        case=category + ": " + kind, verdict=verdict)
    return AnnotationTable(EXPLORER_TABLE, frame, EXPLORER_COLUMNS)


def _row_links(part: pd.DataFrame, links: CellLinks) -> list[str | None] | None:
    """Each summary row's explorer cell: its category (kind ``all``), or its category and kind, in its dataset
    and system; the strict errors' row: every strict error of the system."""
    if links.page is None:
        return None
    hrefs: list[str | None] = []
    for dataset, system, category, kind, count in zip(
            part["dataset"].astype(str), part["system"].astype(str), part["category"].astype(str),
            part["kind"].astype(str), part["count"], strict=True):
        if not count:  # an empty cell: nothing behind it to list
            hrefs.append(None)
            continue
        column, value = (("strict", "error") if category == "strict_error" else ("category", category)
                         if kind == "all" else ("case", f"{category}: {kind}"))
        hrefs.append(links.href(annotation_cell_id(EXPLORER_TABLE, column, value, dataset=dataset, system=system)))
    return hrefs


def error_categories_section(scores: Scores, links: CellLinks = NO_LINKS) -> Section:
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
    headline = summary.loc[(summary["side"] == "system") & (summary["category"] == "strict_error")
                           & (summary["kind"] == "all")]
    body = paragraph(_DEFINITIONS) + table_html(
        _headline(headline), caption="Share of each system's strict errors that the annotators verified as right "
                                     "(CleanCoNLL found 47% on CoNLL)", row_links=_row_links(headline, links))
    for side, caption in (("system", "The systems' annotations (precision side), by category and kind"),
                          ("ground_truth", "The ground truth's annotations (recall side; GT's own: its verdicts)")):
        part = summary.loc[summary["side"] == side, columns]
        shown = with_intervals(part, [("share", "share_low", "share_high"),
                                      ("overturned_share", "overturned_low", "overturned_high")])
        body += table_html(shown, caption=caption, collapse_after=0, row_links=_row_links(part, links))
    return Section(TITLE, body, anchor=ANCHOR)
