"""Metrics of a posthoc verification study (seed 000 sections 3 and 4), pure functions of tidy tables.

``score_judgements(judgements, mentions, ...)`` computes everything into a :class:`posthoc.scores.Scores`;
the functions below are its parts, each usable on its own (see each docstring for the columns it
reads and returns and the paper's section it implements).
"""

from __future__ import annotations

from posthoc.metrics.agreement import agreement_on_intersection
from posthoc.metrics.bootstrap import UNITS, bootstrap_intervals, resampled_sums
from posthoc.metrics.controls import control_results
from posthoc.metrics.flag_verdicts import flag_precision
from posthoc.metrics.gold import corrected_gold
from posthoc.metrics.matching import match_flags, spans_overlap
from posthoc.metrics.new_system import (
    NewSystemPrecision,
    cross_fitted_predictions,
    new_system_precision,
    strict_match_class,
)
from posthoc.metrics.options import ScoringOptions
from posthoc.metrics.ppi import PPIEstimate, ppi_mean
from posthoc.metrics.preannotation import document_counts, preannotation_scores
from posthoc.metrics.reliability import dawid_skene, fleiss_kappa_table, krippendorff_alpha, majority_vote
from posthoc.metrics.reuse import reuse_check
from posthoc.metrics.score import RATE_METRICS, compare_systems, rates_with_intervals, score_judgements
from posthoc.metrics.strict_categories import error_categories
from posthoc.metrics.union import UNION_OUTCOMES, classify_against_gt, union_outcomes_against_gt
from posthoc.metrics.verification import (
    annotation_verdicts,
    outcome_shares,
    posthoc_precision_recall,
    verification_rates,
    verification_union,
)
from posthoc.metrics.verified_categories import categories_with_verdicts, category_summary

__all__ = [
    "RATE_METRICS",
    "UNION_OUTCOMES",
    "UNITS",
    "NewSystemPrecision",
    "PPIEstimate",
    "ScoringOptions",
    "agreement_on_intersection",
    "annotation_verdicts",
    "bootstrap_intervals",
    "categories_with_verdicts",
    "category_summary",
    "classify_against_gt",
    "compare_systems",
    "control_results",
    "corrected_gold",
    "cross_fitted_predictions",
    "dawid_skene",
    "document_counts",
    "error_categories",
    "flag_precision",
    "fleiss_kappa_table",
    "krippendorff_alpha",
    "majority_vote",
    "match_flags",
    "new_system_precision",
    "outcome_shares",
    "posthoc_precision_recall",
    "ppi_mean",
    "preannotation_scores",
    "rates_with_intervals",
    "resampled_sums",
    "reuse_check",
    "score_judgements",
    "spans_overlap",
    "strict_match_class",
    "union_outcomes_against_gt",
    "verification_rates",
    "verification_union",
]
