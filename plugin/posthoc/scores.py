"""The result of scoring a study: tidy tables, the contract between metrics and reports.

Produced by :func:`posthoc.metrics.score_judgements` (seed 000 sections 3 and 4), rendered by
:mod:`posthoc.report`, written as CSV / Parquet and a JSON summary by ``posthoc score``.

Tables (all long / tidy; ``low`` and ``high`` are 95% bootstrap bounds, BCa by default or percentile; see
:mod:`posthoc.metrics.intervals`):

rates
    ``dataset, system, metric, value, low, high, n``. ``metric`` is one of
    ``verification_rate, posthoc_precision, posthoc_recall, posthoc_f1, verify_share, edit_share,
    remove_share``; ``n`` the denominator (annotations judged).
preannotation
    ``dataset, system, matching, averaging, precision, recall, f1, low_precision, high_precision,
    low_recall, high_recall``: pre-annotation evaluation against GT; ``matching`` is ``strict`` or
    ``overlap``, ``averaging`` is ``micro`` or ``macro`` (seed 000 section 3.1).
outcome_counts
    ``dataset, system, outcome, count, share`` (Figure 4).
agreement
    ``dataset, n_judges, n_verified, count``: annotations in the intersection of all systems, by how
    many of their judges verified them (Figure 5).
union_outcomes
    ``dataset, outcome, count, share`` with outcome ``A``..``E``: the verification union against the
    ground truth (Figure 6).
controls
    ``worker, n_control, n_passed, pass_rate, excluded``.
exclusions
    ``kind, worker, task_key, detail, count``: everything left out of the metrics and why.
reliability
    ``dataset, measure, value, n_items``: Fleiss' kappa, Krippendorff's alpha (k > 1).
aggregated
    ``mention_id, dataset, system, n_judges, majority, dawid_skene``: per-annotation labels (k > 1).
corrected_gold
    a mentions table (:mod:`posthoc.tables`) of the edited links as a corrected gold standard.
comparisons
    ``dataset, system_a, system_b, metric, value_a, value_b, difference, ci_low, ci_high, p_value, p_holm,
    significant, method``: paired differences of every pair of systems of a dataset (seed 000 RQ1;
    :func:`posthoc.metrics.comparisons.paired_comparisons`).
rankings
    ``dataset, metric, system, strict_value, strict_rank, posthoc_value, posthoc_rank, rank_change, changed,
    flipped_with, significant``: strict against posthoc ranks (:func:`posthoc.metrics.comparisons.ranking_changes`).
reuse
    ``dataset, n_shared, cross_pairs, cross_agreement, baseline, within_pairs, within_agreement, difference, ci_low,
    ci_high, shift_pair, shift, shift_low, shift_high, margin, decision``: the reuse check (issue 46): the verdicts of
    annotations shared by systems, agreement across tasks against within one task, the largest shift of the verify
    share between two systems' tasks, and whether a verdict may be reused (:func:`posthoc.metrics.reuse.reuse_check`).
error_categories
    one row an annotation per comparison with GT: ``dataset, doc_id, system, side, start, end, surface, link, is_nil,
    gt_link, system_link, category, kind`` (ELEVANT's strict categories, :mod:`posthoc.metrics.strict_categories`)
    and ``verdict, n_judges, n_verify, n_edit, n_remove, new_link, in_union, overturned`` (the annotators'
    verdict on it, :mod:`posthoc.metrics.verified_categories`; issue 45).
error_category_summary
    ``dataset, system, side, category, kind, count, n, share, share_low, share_high, n_judged, n_overturned,
    overturned_share, overturned_low, overturned_high``: per cell, how many, and how many the annotators
    overturned (:func:`posthoc.metrics.verified_categories.category_summary`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Final

import pandas as pd

from posthoc.tables import empty_table

COMPARISON_COLUMNS: Final = [
    "dataset", "system_a", "system_b", "metric", "value_a", "value_b", "difference", "ci_low", "ci_high",
    "p_value", "p_holm", "significant", "method",
]  # fmt: skip
REUSE_COLUMNS: Final = [
    "dataset", "n_shared", "cross_pairs", "cross_agreement", "baseline", "within_pairs", "within_agreement",
    "difference", "ci_low", "ci_high", "shift_pair", "shift", "shift_low", "shift_high", "margin", "decision",
]  # fmt: skip
RANKING_COLUMNS: Final = [
    "dataset", "metric", "system", "strict_value", "strict_rank", "posthoc_value", "posthoc_rank", "rank_change",
    "changed", "flipped_with", "significant",
]  # fmt: skip


def typed_comparisons(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` (:data:`COMPARISON_COLUMNS`) with its text and flag columns typed."""
    text = ["dataset", "system_a", "system_b", "metric", "method"]
    return table.astype({**dict.fromkeys(text, "str"), "significant": "bool"})


def typed_rankings(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` (:data:`RANKING_COLUMNS`) with every column typed."""
    return table.astype({"dataset": "str", "metric": "str", "system": "str", "strict_value": "float64",
                         "strict_rank": "float64", "posthoc_value": "float64", "posthoc_rank": "float64",
                         "rank_change": "float64", "changed": "bool", "flipped_with": "str", "significant": "bool"})


def empty_comparisons() -> pd.DataFrame:
    """The comparisons table of fewer than two systems per dataset."""
    return typed_comparisons(empty_table(dict.fromkeys(COMPARISON_COLUMNS, "float64")))


def typed_reuse(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` (:data:`REUSE_COLUMNS`) with every column typed."""
    numbers = ["cross_pairs", "cross_agreement", "within_pairs", "within_agreement", "difference", "ci_low", "ci_high",
               "shift", "shift_low", "shift_high", "margin"]
    return table.astype({"dataset": "str", "n_shared": "int64", "baseline": "str", "decision": "str",
                         "shift_pair": "str", **dict.fromkeys(numbers, "float64")})


def _empty(name: str) -> pd.DataFrame:
    if name == "comparisons":
        return empty_comparisons()
    if name == "reuse":
        return typed_reuse(pd.DataFrame.from_records([], columns=REUSE_COLUMNS))
    return typed_rankings(pd.DataFrame.from_records([], columns=RANKING_COLUMNS))


@dataclass
class Scores:
    """Every table of a scored study plus a JSON-able summary (no timestamps, so reruns are identical)."""

    rates: pd.DataFrame
    preannotation: pd.DataFrame
    outcome_counts: pd.DataFrame
    agreement: pd.DataFrame
    union_outcomes: pd.DataFrame
    controls: pd.DataFrame
    exclusions: pd.DataFrame
    reliability: pd.DataFrame
    aggregated: pd.DataFrame
    corrected_gold: pd.DataFrame
    summary: dict[str, Any] = field(default_factory=dict)
    comparisons: pd.DataFrame = field(default_factory=lambda: _empty("comparisons"))
    rankings: pd.DataFrame = field(default_factory=lambda: _empty("rankings"))
    reuse: pd.DataFrame = field(default_factory=lambda: _empty("reuse"))
    error_categories: pd.DataFrame = field(default_factory=pd.DataFrame)
    error_category_summary: pd.DataFrame = field(default_factory=pd.DataFrame)

    def tables(self) -> dict[str, pd.DataFrame]:
        """The tables by name, in :data:`TABLE_NAMES` order."""
        return {name: getattr(self, name) for name in TABLE_NAMES}


#: The score tables, in the order of :class:`Scores`' fields (a new table is a new field, documented above).
TABLE_NAMES: Final = tuple(item.name for item in fields(Scores) if item.name != "summary")
