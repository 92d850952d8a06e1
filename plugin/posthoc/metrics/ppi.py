"""Prediction-powered inference of a mean verdict: PPI and PPI++, with the interval clustered over documents.

A new system's novel annotations (issue 46) have a predicted verdict each (from the strict-comparison category)
and a real one only where a random sample was judged. Prediction-powered inference (Angelopoulos, Bates, Fannjiang,
Jordan and Zrnic, "Prediction-powered inference", Science 382, 2023) estimates the mean verdict ``theta = E[Y]``
from ``n`` judged items ``(Y_i, f_i)`` and ``N`` unjudged items' predictions ``f~_j`` by the predictions' mean,
rectified by the judged items' mean error; PPI++ (Angelopoulos, Duchi and Zrnic, "PPI++: efficient
prediction-powered inference", 2023/2024, arXiv:2311.01453, section 2 and Example 6.1) weights the predictions by a
power-tuning ``lam`` estimated from the data, so the estimate is never worse than the judged items' mean:

``theta_hat = lam mean(f~) + mean(Y - lam f)``

Its variance sums, over *sampling units* (clusters: documents or chunks; every item its own unit without them), the
squared unit totals of the influence ``psi_i``: ``lam (f~_j - mean(f~)) / N`` of an unjudged item and
``((Y_i - lam f_i) - mean(Y - lam f)) / n`` of a judged one, ``se^2 = sum_g (sum_{i in g} psi_i)^2`` (the
cluster-robust sandwich, CR0; a unit holding judged and unjudged items adds their covariance). The interval is
``theta_hat -+ z_{1 - alpha/2} se`` (normal, as the papers'). The tuned ``lam`` is the papers' estimate with its
sums taken per unit: ``lam = C / ((1 + n/N) V)``, ``C = (1/n) sum_g (sum_{i in g} (Y_i - mean Y))(sum_{i in g}
(f_i - mean f))`` over the judged units and ``V`` the ``ddof = 1`` variance of the unit totals of ``f - mean(f)``
over the judged and unjudged items together, clipped to ``[0, 1]``. Without clusters every sum is over items, and
estimate, ``lam`` and bounds are ``ppi_py``'s ``ppi_mean_pointestimate`` / ``ppi_mean_ci`` (PyPI ``ppi-python``,
the authors' package; ``tests/metrics/test_ppi.py`` checks them to 1e-9). ``lam = 1`` is plain PPI and ``lam = 0``
the judged items' mean alone (the classical interval).
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
import numpy.typing as npt
import pandas as pd

from posthoc.arrays import Floats, Ints
from posthoc.errors import PosthocInputError

__all__ = ["PPIEstimate", "ppi_mean", "ppi_power_tuning"]


@dataclass(frozen=True)
class PPIEstimate:
    """A prediction-powered mean: ``estimate`` with its ``low, high`` bounds and standard error ``se``; ``lam``
    the weight of the predictions (1: PPI, 0: the judged items alone), ``n`` judged and ``n_unlabeled`` unjudged
    items, ``n_units`` the sampling units behind them."""

    estimate: float
    low: float
    high: float
    se: float
    lam: float
    n: int
    n_unlabeled: int
    n_units: int


def _vector(values: npt.ArrayLike, name: str) -> Floats:
    array = np.asarray(values, dtype=float).ravel()
    if not np.isfinite(array).all():
        raise PosthocInputError(f"prediction-powered mean: {name} holds a missing or infinite value")
    return array


def _unit_codes(clusters: npt.ArrayLike | None, clusters_unlabeled: npt.ArrayLike | None, n: int,
                big_n: int) -> Ints:
    """Each item's unit index, judged items first; without clusters every item its own unit."""
    if clusters is None and clusters_unlabeled is None:
        return np.arange(n + big_n, dtype=np.int64)
    parts = []
    for labels, size, name, offset in ((clusters, n, "clusters", 0), (clusters_unlabeled, big_n,
                                                                        "clusters_unlabeled", n)):
        if labels is None:  # this side unclustered: every item a unit of its own
            parts.append(pd.Series([f"\0item {offset + i}" for i in range(size)], dtype=object))
            continue
        series = pd.Series(np.asarray(labels, dtype=object).ravel()).astype(str)
        if len(series) != size:
            raise PosthocInputError(f"prediction-powered mean: {name} needs one unit per item ({size}), "
                                    f"not {len(series)}")
        parts.append(series)
    return pd.factorize(pd.concat(parts, ignore_index=True))[0].astype(np.int64)


def _unit_totals(values: Floats, codes: Ints, n_units: int) -> Floats:
    return np.asarray(np.bincount(codes, weights=values, minlength=n_units), dtype=float)


def ppi_power_tuning(y: Floats, predicted: Floats, predicted_unlabeled: Floats, *, codes: Ints,
                     codes_unlabeled: Ints, n_units: int) -> float:
    """PPI++'s ``lam`` (module docstring) from the judged items' verdicts and predictions and the unjudged items'
    predictions, sums per unit (``codes`` index the units ``0 .. n_units - 1``), clipped to ``[0, 1]``.

    Examples:
        Two judged items of their own units, ``Y = 0, 1`` and ``f = 0, 1``, and two unjudged ``f~ = 0, 1``:
        ``C = (1/2)(1/4 + 1/4) = 1/4``; ``f`` over all four has variance ``1/3`` (``ddof = 1``), so
        ``lam = (1/4) / ((1 + 2/2)(1/3)) = 3/8``.

        >>> ppi_power_tuning(np.array([0.0, 1.0]), np.array([0.0, 1.0]), np.array([0.0, 1.0]),
        ...                  codes=np.array([0, 1]), codes_unlabeled=np.array([2, 3]), n_units=4)
        0.375
    """
    n, big_n = len(y), len(predicted_unlabeled)
    centred_y = _unit_totals(y - y.mean(), codes, n_units)
    centred_f = _unit_totals(predicted - predicted.mean(), codes, n_units)
    covariance = float(centred_y @ centred_f) / n
    pooled = np.concatenate([predicted, predicted_unlabeled])
    totals = _unit_totals(pooled - pooled.mean(), np.concatenate([codes, codes_unlabeled]), n_units)
    used = np.bincount(np.concatenate([codes, codes_unlabeled]), minlength=n_units) > 0
    variance = float(totals[used] @ totals[used]) / max(int(used.sum()) - 1, 1)
    if variance <= 0:
        return 0.0
    return float(np.clip(covariance / ((1 + n / big_n) * variance), 0.0, 1.0))


def ppi_mean(y: npt.ArrayLike, predicted: npt.ArrayLike, predicted_unlabeled: npt.ArrayLike, *,
             lam: float | None = None, clusters: npt.ArrayLike | None = None,
             clusters_unlabeled: npt.ArrayLike | None = None, confidence: float = 0.95) -> PPIEstimate:
    """The prediction-powered mean of a verdict with its interval (module docstring; PPI++ by default).

    ``y``: the judged items' verdicts (1 verified, 0 not, or any real value); ``predicted``: their predictions
    (a probability of a verdict); ``predicted_unlabeled``: the unjudged items' predictions. ``lam``: None tunes
    it (PPI++), 1 is PPI, 0 the judged mean alone. ``clusters`` / ``clusters_unlabeled``: each item's sampling
    unit (a document or chunk id; the same id in both when a unit holds judged and unjudged items); without them
    every item is its own unit. ``confidence`` of the normal interval.

    Examples:
        Judged ``Y = 1, 1, 0, 1`` with predictions ``f = 1, 1, 1, 1`` (errors ``0, 0, -1, 0``, mean ``-1/4``) and four
        unjudged predictions ``1``: PPI (``lam = 1``) gives ``1 - 1/4 = 0.75``; the unjudged predictions do not vary,
        so ``se^2`` is the judged errors' ``sum (r - mean r)^2 / n^2 = (3/16 + 9/16) / 16 = 3/64``.

        >>> result = ppi_mean([1, 1, 0, 1], [1, 1, 1, 1], [1, 1, 1, 1], lam=1)
        >>> result.estimate, round(result.se**2, 6), round(3 / 64, 6)
        (0.75, 0.046875, 0.046875)

        Two documents of two judged items each, their verdicts equal within a document: clustered, each document's
        total counts once, so the standard error is larger than the items' (``lam = 0``: the judged mean alone).

        >>> alone = ppi_mean([1, 1, 0, 0], [0.5] * 4, [0.5] * 4, lam=0)
        >>> clustered = ppi_mean([1, 1, 0, 0], [0.5] * 4, [0.5] * 4, lam=0, clusters=["d1", "d1", "d2", "d2"],
        ...                      clusters_unlabeled=["d3"] * 4)
        >>> round(alone.se, 6), round(clustered.se, 6), clustered.n_units
        (0.25, 0.353553, 3)
    """
    if not 0 < confidence < 1:
        raise PosthocInputError(f"confidence must be between 0 and 1, not {confidence}")
    judged, fitted, unjudged = _vector(y, "y"), _vector(predicted, "predicted"), _vector(predicted_unlabeled,
                                                                                       "predicted_unlabeled")
    if len(judged) != len(fitted):
        raise PosthocInputError(f"prediction-powered mean: y has {len(judged)} items, predicted {len(fitted)}")
    if len(judged) < 2 or len(unjudged) < 1:
        raise PosthocInputError("prediction-powered mean: needs at least 2 judged items and 1 unjudged item")
    if lam is not None and not np.isfinite(lam):
        raise PosthocInputError(f"prediction-powered mean: lam must be a number, not {lam}")
    codes_all = _unit_codes(clusters, clusters_unlabeled, len(judged), len(unjudged))
    n_units = int(codes_all.max()) + 1
    codes, codes_unlabeled = codes_all[: len(judged)], codes_all[len(judged):]
    n, big_n = len(judged), len(unjudged)
    weight = ppi_power_tuning(judged, fitted, unjudged, codes=codes, codes_unlabeled=codes_unlabeled,
                              n_units=n_units) if lam is None else float(lam)
    residual = judged - weight * fitted
    estimate = float(weight * unjudged.mean() + residual.mean())
    influence = np.concatenate([(residual - residual.mean()) / n, weight * (unjudged - unjudged.mean()) / big_n])
    totals = _unit_totals(influence, codes_all, n_units)
    se = float(np.sqrt(totals @ totals))
    half = NormalDist().inv_cdf((1 + confidence) / 2) * se
    return PPIEstimate(estimate=estimate, low=estimate - half, high=estimate + half, se=se, lam=weight, n=n,
                       n_unlabeled=big_n, n_units=n_units)
