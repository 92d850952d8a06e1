"""Where ``posthoc study estimate`` keeps a study's estimate, and the tag that marks the file as one.

Kept apart from :mod:`posthoc.study.planner.estimate` (which imports scipy, ~0.7 s): ``posthoc score`` digests the
estimate into its fingerprint before it knows whether anything changed. In the plan's room, beside the manifest whose
file it lies next to: the opened study (:class:`posthoc.study.plan.study.Study`) names it, and the planner imports
the plan, never the other way round.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Final

ESTIMATE_JSON: Final = "estimate.json"
ESTIMATE_CSV: Final = "estimate.csv"
FORMAT: Final = "posthoc-study-estimate/1"


def estimate_path(manifest_path: str | Path) -> Path:
    """Where the estimate of the study of ``manifest_path`` is looked for: ``estimate.json`` beside it."""
    return Path(manifest_path).parent / ESTIMATE_JSON


def estimate_digest(manifest_path: str | Path) -> str:
    """SHA-256 of the estimate beside the manifest, or ``""`` without one (part of the score job's fingerprint)."""
    path = estimate_path(manifest_path)
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else ""
