"""Vectorised percentile bootstrap of ratio-of-sums statistics (seed 000 section 4, Figure 3 error bars).

The paper's error bars are "the empirical 95% confidence intervals drawn from 1000 bootstrap samples
of the data". Here the data are cut into *resampling units* (documents by default) and every
statistic is a ratio of sums of per-unit counts (a verification rate is verified / judged, summed
over units). One resample draws ``n`` units with replacement from the ``n`` units of a stratum;
the number of times each unit is drawn is its weight, and the resample's sums are ``weights @
counts``. So all ``B`` resamples are one integer draw, one ``np.bincount`` and one matrix product
per stratum (in blocks of resamples to bound memory) — no per-resample pandas.

Units (:data:`UNITS`) and strata:

``doc_id``      a document ``(dataset, doc_id)``; resampled within its dataset (stratified).
``task``        a chunk ``(dataset, doc_id, chunk_id)``: all systems' items of one text chunk; within dataset.
``annotation``  an annotation ``(dataset, doc_id, start, end, link)`` with all systems' judgements of it;
                within dataset.
``worker``      a worker with all their judgements, across datasets (one stratum).

Stratifying by dataset keeps each dataset's size fixed, as every statistic is per dataset.
Intervals are the ``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` quantiles of the
resampled statistic (``numpy.nanquantile``, linear interpolation); a resample where a
denominator is 0 gives NaN and is skipped.
"""

from __future__ import annotations

import warnings
from typing import Final

import numpy as np
import pandas as pd

from posthoc.errors import PosthocInputError
from posthoc.metrics.inputs import ANNOTATION

UNITS: Final = ("doc_id", "task", "annotation", "worker")
#: Cells (resamples x units) of one weight block; bounds the memory of a block to ~32 MB.
BLOCK_CELLS: Final = 4_000_000


def unit_codes(rows: pd.DataFrame, unit: str) -> tuple[np.ndarray, np.ndarray]:
    """``(codes, strata)``: each row's unit index and each unit's stratum index, for ``unit`` in :data:`UNITS`."""
    if unit not in UNITS:
        raise PosthocInputError(f"resample_unit must be one of {', '.join(UNITS)}, not {unit!r}")
    if unit == "worker":
        workers = pd.factorize(rows["worker"], sort=True)[0]
        return workers, np.zeros(workers.max() + 1 if len(workers) else 0, dtype=np.int64)
    if unit == "task":
        if "chunk_id" not in rows.columns or rows["chunk_id"].isna().any():
            raise PosthocInputError("judgements table: resample_unit 'task' needs a filled chunk_id column")
        keys = ["dataset", "doc_id", "chunk_id"]
    else:
        keys = ["dataset", "doc_id"] if unit == "doc_id" else list(ANNOTATION)
    grouped = rows.groupby(keys, sort=True)
    codes = grouped.ngroup().to_numpy()
    datasets = grouped.size().index.get_level_values("dataset")
    strata = pd.factorize(datasets, sort=True)[0]
    return codes, strata.astype(np.int64)


def unit_matrix(
    codes: np.ndarray, columns: np.ndarray, weights: np.ndarray, n_units: int, n_columns: int
) -> np.ndarray:
    """Dense ``(n_units, n_columns)`` matrix of ``weights`` summed at ``(codes, columns)``."""
    flat = codes.astype(np.int64) * n_columns + columns.astype(np.int64)
    return np.bincount(flat, weights=weights, minlength=n_units * n_columns).reshape(n_units, n_columns)


def resampled_sums(counts: np.ndarray, strata: np.ndarray, *, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Column sums of ``counts`` (units x columns) in each of ``n_resamples`` stratified resamples of units.

    Returns ``(n_resamples, n_columns)``. Units of stratum ``s`` are drawn ``n_s`` times with
    replacement (``rng.integers``), turned into per-unit weights by ``np.bincount`` and applied as
    ``weights @ counts``; only the columns a stratum touches are multiplied.
    """
    n_units, n_columns = counts.shape
    if len(strata) != n_units:
        raise ValueError("strata must give one stratum per unit")
    sums = np.zeros((n_resamples, n_columns))
    for stratum in np.unique(strata):
        members = np.flatnonzero(strata == stratum)
        block = counts[members]
        touched = np.flatnonzero(np.any(block != 0, axis=0))
        block = block[:, touched]
        n = len(members)
        step = max(1, BLOCK_CELLS // n)
        for first in range(0, n_resamples, step):
            b = min(step, n_resamples - first)
            draws = rng.integers(0, n, size=(b, n)) + (np.arange(b) * n)[:, None]
            weights = np.bincount(draws.ravel(), minlength=b * n).reshape(b, n).astype(float)
            if len(touched):
                sums[first : first + b, touched] += weights @ block
    return sums


def percentile_interval(samples: np.ndarray, *, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bounds over axis 0 of ``samples`` (resamples x statistics), NaN resamples skipped."""
    if not 0 < confidence < 1:
        raise PosthocInputError(f"confidence must be between 0 and 1, not {confidence}")
    tail = (1 - confidence) / 2
    if samples.shape[0] == 0:
        nan = np.full(samples.shape[1:], np.nan)
        return nan, nan.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        low, high = np.nanquantile(samples, [tail, 1 - tail], axis=0)
    return low, high


def ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """``numerator / denominator`` with NaN where the denominator is 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denominator > 0, numerator / np.where(denominator > 0, denominator, 1), np.nan)


def bootstrap_intervals(
    numerators: np.ndarray,
    denominators: np.ndarray,
    *,
    strata: np.ndarray | None = None,
    n_resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Percentile-bootstrap intervals of ratio-of-sums statistics (seed 000 section 4).

    ``numerators`` and ``denominators`` are ``(units, statistics)`` arrays of per-unit counts;
    statistic ``j`` is ``numerators[:, j].sum() / denominators[:, j].sum()``. ``strata`` (one int
    per unit, default one stratum) restricts resampling to within a stratum. Returns one row per
    statistic: ``estimate, low, high``. Seeded: the same inputs and ``seed`` give the same bounds.
    """
    numerators = np.asarray(numerators, dtype=float)
    denominators = np.asarray(denominators, dtype=float)
    if numerators.ndim == 1:
        numerators, denominators = numerators[:, None], denominators[:, None]
    if numerators.shape != denominators.shape:
        raise ValueError("numerators and denominators must have the same shape")
    strata = np.zeros(len(numerators), dtype=np.int64) if strata is None else np.asarray(strata)
    width = numerators.shape[1]
    rng = np.random.default_rng(seed)
    sums = resampled_sums(np.hstack([numerators, denominators]), strata, n_resamples=n_resamples, rng=rng)
    low, high = percentile_interval(ratio(sums[:, :width], sums[:, width:]), confidence=confidence)
    estimate = ratio(numerators.sum(axis=0), denominators.sum(axis=0))
    return pd.DataFrame({"estimate": estimate, "low": low, "high": high})
