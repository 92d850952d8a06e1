"""CrowdTruth 2.0 disagreement metrics (seed 002), vectorised, with the paper's evaluation.

* :mod:`~posthoc.crowdtruth.io` -- judgement tables from CrowdTruth CSVs, posthoc judgements (k > 1)
  and Label Studio exports; task builders for ``label_configs/relation_extraction.xml`` and
  ``multiple_choice.xml``.
* :mod:`~posthoc.crowdtruth.vectors` -- worker and unit annotation vectors.
* :mod:`~posthoc.crowdtruth.metrics` -- UQS, WUA, WWA, WQS, AQS, UAS by the peer's fixed-point iteration.
* :mod:`~posthoc.crowdtruth.evaluation` -- sentence-relation score, clarity, filtering, weighted P/R/F1,
  threshold sweeps, McNemar's test, weighted training labels.
* :mod:`~posthoc.crowdtruth.pipeline` / :mod:`~posthoc.crowdtruth.report` -- one run to tables and a report section.
"""

from posthoc.crowdtruth.io import CrowdTruthConfig, read_crowdtruth_csv
from posthoc.crowdtruth.metrics import CrowdTruthResult, crowdtruth_metrics
from posthoc.crowdtruth.vectors import JudgementVectors, build_vectors

__all__ = [
    "CrowdTruthConfig",
    "CrowdTruthResult",
    "JudgementVectors",
    "build_vectors",
    "crowdtruth_metrics",
    "read_crowdtruth_csv",
]
