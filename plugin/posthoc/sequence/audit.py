"""Order audit: were workers' orders really their own (seed 004 section 4's remedy)?

Input: one row a judgement with ``worker, item, position`` (the planned 0-based position) and optionally
``created_at`` (when the worker submitted it). For each worker the order actually served is the order of
``created_at``; it is compared with the planned positions (Kendall tau, share of judgements in planned order).
Across workers, the orders of the items two workers share are compared (mean Kendall tau over pairs): near 0
means independent orders, near 1 one shared order, the situation seed 004 shows to bias item scores.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from posthoc.arrays import Floats
from posthoc.sequence.table import Sequences
from posthoc.tables import require_columns


@dataclass(frozen=True)
class OrderAudit:
    """``per_worker`` columns: ``worker, n, served_vs_planned_tau, share_in_planned_order``."""

    per_worker: pd.DataFrame
    mean_pairwise_tau: float
    n_pairs: int
    shared_order_warning: bool
    message: str


def _tau(a: Floats, b: Floats) -> float:
    if len(a) < 2:
        return float("nan")
    return float(stats.kendalltau(a, b).statistic)


def audit_orders(judgements: Sequences, *, min_shared: int = 3, max_pairs: int = 5000,
                 warn_tau: float = 0.9, seed: int = 0) -> OrderAudit:
    """Audit served and planned orders; see the module docstring.

    Options: ``min_shared`` items two workers must share to be compared; ``max_pairs`` caps the pairs compared
    (a seeded sample beyond it); ``warn_tau`` is the mean pairwise tau above which workers are said to have
    seen one order.

    Examples:
        Both workers were served in their planned order (tau 1); w2's plan is w1's reversed, so their orders of
        the three shared items disagree on every pair (tau -1): independent orders, no warning.

        >>> import pandas as pd
        >>> from posthoc.sequence import audit_orders
        >>> judgements = pd.DataFrame({"worker": ["w1"] * 3 + ["w2"] * 3, "item": list("abccba"),
        ...                            "position": [0, 1, 2, 0, 1, 2],
        ...                            "created_at": ["2024-01-01T10:00", "2024-01-01T10:01", "2024-01-01T10:02"] * 2})
        >>> audit = audit_orders(judgements)
        >>> audit.per_worker
          worker  n  served_vs_planned_tau  share_in_planned_order
        0     w1  3                    1.0                     1.0
        1     w2  3                    1.0                     1.0
        >>> audit.mean_pairwise_tau, audit.n_pairs, audit.shared_order_warning
        (-1.0, 1, False)
    """
    require_columns(judgements, ("worker", "item", "position"), message="order audit needs column(s) {missing}")
    data = judgements.drop_duplicates(["worker", "item"]).copy()
    rows = []
    for worker, part in data.groupby("worker", sort=True):
        planned = part["position"].to_numpy(dtype=float)
        if "created_at" in part.columns and part["created_at"].notna().all():
            served_order = pd.to_datetime(part["created_at"], utc=True, format="mixed").rank(method="first")
            # pandas-stubs: floating[Any] for dtype=float
            served: Floats = served_order.to_numpy(dtype=float)  # type: ignore[assignment]
            tau = _tau(planned, served)
            planned_rank = pd.Series(planned).rank(method="first").to_numpy()
            share = float(np.mean(planned_rank == served))
        else:
            tau, share = float("nan"), float("nan")
        rows.append({"worker": str(worker), "n": len(part), "served_vs_planned_tau": tau,
                     "share_in_planned_order": share})
    per_worker = pd.DataFrame(rows, columns=["worker", "n", "served_vs_planned_tau", "share_in_planned_order"])
    positions = {str(w): dict(zip(p["item"], p["position"], strict=True))
                 for w, p in data.groupby("worker", sort=True)}
    pairs = list(itertools.combinations(sorted(positions), 2))
    if len(pairs) > max_pairs:
        rng = np.random.default_rng(seed)
        pairs = [pairs[i] for i in sorted(rng.choice(len(pairs), size=max_pairs, replace=False))]
    taus = []
    for first, second in pairs:
        shared = sorted(set(positions[first]) & set(positions[second]))
        if len(shared) < min_shared:
            continue
        a = np.array([positions[first][item] for item in shared], dtype=float)
        b = np.array([positions[second][item] for item in shared], dtype=float)
        tau = _tau(a, b)
        if not np.isnan(tau):
            taus.append(tau)
    mean_tau = float(np.mean(taus)) if taus else float("nan")
    warning = bool(taus) and mean_tau > warn_tau
    if not taus:
        message = f"no two workers share {min_shared} or more items: cross-worker order similarity not measurable"
    elif warning:
        message = (f"workers saw one order: mean Kendall tau {mean_tau:.3f} over {len(taus)} pairs; "
                   "sequence effects will bias item scores (seed 004 section 4)")
    else:
        message = f"orders differ across workers: mean Kendall tau {mean_tau:.3f} over {len(taus)} pairs"
    return OrderAudit(per_worker=per_worker, mean_pairwise_tau=mean_tau, n_pairs=len(taus),
                      shared_order_warning=warning, message=message)
