"""How a study is scored: the settings of :func:`posthoc.metrics.score_judgements` as one value.

Defaults are the paper's (seed 000 sections 3-4): 1,000 bootstrap resamples of documents, seed 0, 95%
intervals (BCa), failing workers dropped at a control pass rate below 1, GT under ``GT``, a tie not verified,
the verified annotations missing from GT added to the corrected gold, the exact verification union.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from posthoc.metrics.intervals import DEFAULT_INTERVAL
from posthoc.tables import GT_SYSTEM


@dataclass(frozen=True, kw_only=True)
class ScoringOptions:
    """The settings of :func:`~posthoc.metrics.score_judgements` (checked there, PosthocInputError).

    ``n_resamples`` bootstrap resamples of ``resample_unit`` (one of ``doc_id, task, annotation, worker``;
    pre-annotation intervals always resample documents), seeded by ``seed``; ``confidence`` of the intervals;
    failing workers (control pass rate below ``control_pass_threshold``) are dropped when
    ``exclude_failing_workers``; ``study``: the name the summary gives (default: the judgements' studies);
    ``gt_system``: the ground truth's system name; ``ties_verified`` counts a k-judge tie as verified;
    ``add_missing_to_gold`` adds verified annotations missing from GT (outcome E) to the corrected gold;
    ``union``: the verification union, ``exact`` (paper 000's V(d)) or ``overlap``; ``interval``: ``bca`` or
    ``percentile`` (:mod:`posthoc.metrics.intervals`).
    """

    n_resamples: int = 1000
    seed: int = 0
    resample_unit: str = "doc_id"
    confidence: float = 0.95
    exclude_failing_workers: bool = True
    control_pass_threshold: float = 1.0
    study: str | None = None
    gt_system: str = GT_SYSTEM
    ties_verified: bool = False
    add_missing_to_gold: bool = True
    union: str = "exact"
    interval: str = DEFAULT_INTERVAL

    def summary_entries(self) -> dict[str, Any]:
        """The settings as the summary holds them (every one but ``study``, which the summary names itself), in
        the summary's order."""
        chosen = asdict(self)
        order = ("resample_unit", "n_resamples", "seed", "confidence", "exclude_failing_workers",
                 "control_pass_threshold", "ties_verified", "gt_system", "union", "interval")
        entries = {key: chosen[key] for key in order}
        return {"resample_unit": entries.pop("resample_unit"), "preannotation_resample_unit": "doc_id", **entries}
