"""A small, hand-made Scores object (tables with the documented columns) for report tests."""

from __future__ import annotations

import pandas as pd

from posthoc.export.checks import exclusions_frame
from posthoc.scores import Scores


def small_scores(*, gold_link: str = "https://en.wikipedia.org/wiki/Paris") -> Scores:
    """Two datasets, three systems; values chosen so every figure has something to draw."""
    rates_rows = []
    for dataset, base in (("aida", 0.9), ("kore50", 0.8)):
        for offset, system in enumerate(("GT", "E2E", "REL")):
            for metric, value in (("posthoc_precision", base - 0.05 * offset), ("posthoc_recall", base - 0.1 * offset),
                                  ("verification_rate", base - 0.05 * offset)):
                rates_rows.append((dataset, system, metric, value, value - 0.04, min(value + 0.03, 1.0), 40))
    rates = pd.DataFrame(rates_rows, columns=["dataset", "system", "metric", "value", "low", "high", "n"])
    pre_rows = []
    for dataset in ("aida", "kore50"):
        for system, p, r in (("E2E", 0.6, 0.5), ("REL", 0.55, 0.45)):
            for matching in ("strict", "overlap"):
                pre_rows.append((dataset, system, matching, "micro", p, r, 2 * p * r / (p + r), p - 0.05, p + 0.05,
                                 r - 0.05, r + 0.05))
    preannotation = pd.DataFrame(pre_rows, columns=["dataset", "system", "matching", "averaging", "precision", "recall",
                                                    "f1", "low_precision", "high_precision", "low_recall",
                                                    "high_recall"])
    outcome_rows = []
    for dataset in ("aida", "kore50"):
        for system, counts in (("GT", (30, 6, 4)), ("E2E", (34, 4, 2)), ("REL", (33, 5, 2))):
            total = sum(counts)
            for outcome, count in zip(("verify", "edit", "remove"), counts, strict=True):
                outcome_rows.append((dataset, system, outcome, count, count / total))
    outcome_counts = pd.DataFrame(outcome_rows, columns=["dataset", "system", "outcome", "count", "share"])
    agreement = pd.DataFrame([("aida", 3, 3, 20), ("aida", 3, 2, 5), ("aida", 3, 1, 1), ("kore50", 3, 3, 12),
                              ("kore50", 3, 2, 2)], columns=["dataset", "n_judges", "n_verified", "count"])
    union_outcomes = pd.DataFrame([(d, o, c, c / 50) for d in ("aida", "kore50")
                                   for o, c in zip("ABCDE", (30, 8, 2, 1, 9), strict=True)],
                                  columns=["dataset", "outcome", "count", "share"])
    controls = pd.DataFrame([("w001", 3, 3, 1.0, False), ("w002", 3, 1, 1 / 3, True)],
                            columns=["worker", "n_control", "n_passed", "pass_rate", "excluded"])
    exclusions = exclusions_frame([("skipped", "w001", "t-abc", "annotation 7 by w001@posthoc.local", 1),
                                   ("draft", "w002", "t-def", "1 draft(s) by w002@posthoc.local", 1)])
    reliability = pd.DataFrame([("aida", "fleiss_kappa", 0.61, 26)], columns=["dataset", "measure", "value", "n_items"])
    aggregated = pd.DataFrame(columns=["mention_id", "dataset", "system", "n_judges", "majority", "dawid_skene"])
    corrected_gold = pd.DataFrame([("aida", "doc1", "GT", 0, 5, "Paris", gold_link, gold_link, False)],
                                  columns=["dataset", "doc_id", "system", "start", "end", "surface", "link",
                                           "link_original", "is_nil"])
    return Scores(rates=rates, preannotation=preannotation, outcome_counts=outcome_counts, agreement=agreement,
                  union_outcomes=union_outcomes, controls=controls, exclusions=exclusions, reliability=reliability,
                  aggregated=aggregated, corrected_gold=corrected_gold,
                  summary={"study": "tiny", "resample_unit": "doc_id", "n_resamples": 1000, "seed": 0})
