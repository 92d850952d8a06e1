"""Vectorised bootstrap of ratio-of-sums statistics (seed 000 section 4, Figure 3 error bars).

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
:func:`bootstrap_intervals` reads BCa (default) or percentile bounds off the resamples
(:mod:`posthoc.metrics.intervals`); :func:`~posthoc.metrics.intervals.percentile_interval`'s bounds are the
``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` quantiles of the resampled statistic
(``numpy.nanquantile``, linear interpolation); a resample where a denominator is 0 gives NaN and is skipped.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any, Final, TypeAlias

import numpy as np
import numpy.typing as npt
import pandas as pd
from threadpoolctl import ThreadpoolController

from posthoc.arrays import Floats, Ints, weighted_bincount
from posthoc.errors import PosthocInputError
from posthoc.metrics.codes import factorize
from posthoc.metrics.inputs import ANNOTATION
from posthoc.metrics.intervals import DEFAULT_INTERVAL, StratumMask, interval
from posthoc.metrics.tuple_codes import sorted_codes
from posthoc.tables import Judgements

UNITS: Final = ("doc_id", "task", "annotation", "worker")
#: Cells (resamples x units) of one weight block: 64 Ki cells keep a block's draws (int32) and weights
#: (float64) in the CPU's L2 cache (measured: faster than one block of all resamples at paper size).
BLOCK_CELLS: Final = 65_536
#: A block of draws: int32 while the positions fit, else int64 (:func:`stratum_draws`).
Draws: TypeAlias = npt.NDArray[np.integer[Any]]


def unit_codes(rows: Judgements, unit: str) -> tuple[Ints, Ints]:
    """``(codes, strata)``: each row's unit index and each unit's stratum index, for ``unit`` in :data:`UNITS`.

    Units are numbered in the sort order of their keys (as ``groupby(sort=True)``); strata are the
    sorted datasets (one stratum for ``worker``).

    Examples:
        Rows of documents ``b``, ``a``, ``b`` of dataset ``d1`` and ``a`` of ``d2``: units are the sorted
        ``(dataset, doc_id)`` pairs ``(d1, a), (d1, b), (d2, a)``, in strata 0, 0, 1.

        >>> import pandas as pd
        >>> from posthoc.metrics.bootstrap import unit_codes
        >>> rows = pd.DataFrame({"dataset": ["d1", "d1", "d1", "d2"], "doc_id": ["b", "a", "b", "a"]})
        >>> codes, strata = unit_codes(rows, "doc_id")
        >>> codes.tolist(), strata.tolist()
        ([1, 0, 1, 2], [0, 0, 1])
    """
    if unit not in UNITS:
        raise PosthocInputError(f"resample_unit must be one of {', '.join(UNITS)}, not {unit!r}")
    if unit == "worker":
        workers = factorize(rows["worker"], sort=True)[0]
        return workers, np.zeros(workers.max() + 1 if len(workers) else 0, dtype=np.int64)
    if unit == "task":
        if "chunk_id" not in rows.columns or rows["chunk_id"].isna().any():
            raise PosthocInputError("judgements table: resample_unit 'task' needs a filled chunk_id column")
        keys = ["dataset", "doc_id", "chunk_id"]
    else:
        keys = ["dataset", "doc_id"] if unit == "doc_id" else list(ANNOTATION)
    factorized = [
        rows[key].to_numpy(np.int64) if key in ("start", "end") else factorize(rows[key], sort=True)[0]
        for key in keys
    ]
    codes, first = sorted_codes(*factorized)
    return codes, factorized[0][first].astype(np.int64)


def unit_matrix(
    codes: Ints, columns: Ints, weights: Floats, n_units: int, n_columns: int
) -> Floats:
    """Dense ``(n_units, n_columns)`` matrix of ``weights`` summed at ``(codes, columns)``.

    Examples:
        >>> import numpy as np
        >>> from posthoc.metrics.bootstrap import unit_matrix
        >>> unit_matrix(np.array([0, 1, 0]), np.array([1, 0, 1]), np.array([1.0, 2.0, 3.0]), 2, 2).tolist()
        [[0.0, 4.0], [2.0, 0.0]]
    """
    flat = codes.astype(np.int64) * n_columns + columns.astype(np.int64)
    return weighted_bincount(flat, weights, minlength=n_units * n_columns).reshape(n_units, n_columns)


def stratum_draws(
    strata: Ints, *, n_resamples: int, rng: np.random.Generator
) -> Iterator[tuple[Ints, int, Draws]]:
    """The resampling draws, stratum by stratum: ``(members, first, draws)``.

    ``members`` are the units of one stratum (``n`` of them); ``draws`` is a ``(b, n)`` int array of
    positions into ``members`` for resamples ``first .. first + b - 1``: each resample draws ``n``
    units with replacement (``rng.integers``). Blocks of resamples bound the memory
    (:data:`BLOCK_CELLS`); the draws are consumed in the same order whatever the block size.
    Every consumer of these draws (:func:`resampled_sums`, a reference loop) sees the same resamples.

    Examples:
        Units 0 and 2 form stratum 0, unit 1 stratum 1: each resample draws 2 positions among the first and 1
        among the second.

        >>> import numpy as np
        >>> from posthoc.metrics.bootstrap import stratum_draws
        >>> blocks = list(stratum_draws(np.array([0, 1, 0]), n_resamples=3, rng=np.random.default_rng(0)))
        >>> [(members.tolist(), first, draws.shape) for members, first, draws in blocks]
        [([0, 2], 0, (3, 2)), ([1], 0, (3, 1))]
    """
    for stratum in np.unique(strata):
        members = np.flatnonzero(strata == stratum)
        n = len(members)
        step = max(1, BLOCK_CELLS // n)
        for first in range(0, n_resamples, step):
            b = min(step, n_resamples - first)
            # int32 draws are the same stream as int64 ones for these bounds, and half the memory
            yield members, first, rng.integers(0, n, size=(b, n), dtype=np.int32 if n * b < 2**31 else np.int64)


def count_weights(draws: Draws) -> Floats:
    """``(b, n)`` float weights: how often each of the ``n`` units is drawn in each of ``b`` resamples.

    One ``np.bincount`` of the offset draws: each row is a multinomial draw of ``n`` over ``n`` equal cells.

    Examples:
        Resample 0 drew unit 0 twice and unit 2 once; resample 1 each unit once.

        >>> import numpy as np
        >>> from posthoc.metrics.bootstrap import count_weights
        >>> count_weights(np.array([[0, 2, 0], [1, 0, 2]])).tolist()
        [[2.0, 0.0, 1.0], [1.0, 1.0, 1.0]]
    """
    b, n = draws.shape
    flat = (draws + (np.arange(b, dtype=draws.dtype) * n)[:, None]).ravel()
    return np.bincount(flat, minlength=b * n).reshape(b, n).astype(float)


@functools.cache
def _blas() -> ThreadpoolController:
    return ThreadpoolController()


def resampled_sums(counts: Floats, strata: Ints, *, n_resamples: int, rng: np.random.Generator) -> Floats:
    """Column sums of ``counts`` (units x columns) in each of ``n_resamples`` stratified resamples of units.

    Returns ``(n_resamples, n_columns)``. The draws of :func:`stratum_draws` become per-unit count
    weights (:func:`count_weights`) and the sums one matrix product ``weights @ counts`` per stratum
    and block; only the columns a stratum touches are multiplied, on one BLAS thread.

    Examples:
        Three units; column 0 counts 1 for each, so every resample of 3 units sums to 3. With strata ``0, 1, 1``
        unit 0 is always drawn once and the other two draws come from units 1 and 2, so column 1 sums to
        ``0 + {1, 2} + {1, 2}``: 2, 3 or 4.

        >>> import numpy as np
        >>> from posthoc.metrics import resampled_sums
        >>> counts = np.array([[1, 0], [1, 1], [1, 2]])
        >>> sums = resampled_sums(counts, np.array([0, 1, 1]), n_resamples=5, rng=np.random.default_rng(0))
        >>> sums.shape, sums[:, 0].tolist()
        ((5, 2), [3.0, 3.0, 3.0, 3.0, 3.0])
        >>> set(sums[:, 1].tolist()) <= {2.0, 3.0, 4.0}
        True
    """
    n_units, n_columns = counts.shape
    if len(strata) != n_units:
        raise ValueError("strata must give one stratum per unit")
    sums = np.zeros((n_resamples, n_columns))
    touched_of: dict[int, tuple[Ints, Floats]] = {}
    with _blas().limit(limits=1, user_api="blas"):  # small products: a second BLAS thread only spins
        for members, first, draws in stratum_draws(strata, n_resamples=n_resamples, rng=rng):
            key = int(members[0])
            if key not in touched_of:
                block = counts[members]
                touched = np.flatnonzero(np.any(block != 0, axis=0))
                touched_of[key] = (touched, np.ascontiguousarray(block[:, touched]))
            touched, block = touched_of[key]
            if len(touched):
                sums[first : first + len(draws), touched] += count_weights(draws) @ block
    return sums


def ratio(numerator: Floats, denominator: Floats) -> Floats:
    """``numerator / denominator`` with NaN where the denominator is 0.

    Examples:
        >>> import numpy as np
        >>> from posthoc.metrics.bootstrap import ratio
        >>> ratio(np.array([2.0, 1.0]), np.array([3.0, 0.0])).round(6).tolist()
        [0.666667, nan]
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denominator > 0, numerator / np.where(denominator > 0, denominator, 1), np.nan)


def bootstrap_intervals(
    numerators: Floats | Ints,
    denominators: Floats | Ints,
    *,
    strata: Ints | None = None,
    n_resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    method: str | None = None,
) -> pd.DataFrame:
    """Bootstrap intervals of ratio-of-sums statistics (seed 000 section 4), BCa or percentile.

    ``numerators`` and ``denominators`` are ``(units, statistics)`` arrays of per-unit counts;
    statistic ``j`` is ``numerators[:, j].sum() / denominators[:, j].sum()``. ``strata`` (one int
    per unit, default one stratum) restricts resampling to within a stratum. Returns one row per
    statistic: ``estimate, low, high``. Seeded: the same inputs and ``seed`` give the same bounds. ``method``:
    ``bca`` (its acceleration from the within-stratum jackknife: the totals minus one unit) or ``percentile``;
    default :data:`posthoc.metrics.intervals.DEFAULT_INTERVAL` (:mod:`posthoc.metrics.intervals`).

    Examples:
        Statistic 0: three units verified 1, 0 and 1 of 1 annotation (``2/3``); a resample draws three 0s with
        probability ``1/27`` (3.7%) and three 1s with ``8/27``, so the 95% bounds are 0 and 1. Statistic 1:
        every unit 2 of 2, so every resample gives 1.

        >>> import numpy as np
        >>> from posthoc.metrics import bootstrap_intervals
        >>> numerators = np.array([[1, 2], [0, 2], [1, 2]])
        >>> denominators = np.array([[1, 2], [1, 2], [1, 2]])
        >>> bootstrap_intervals(numerators, denominators, n_resamples=200, method="percentile")
           estimate  low  high
        0  0.666667  0.0   1.0
        1  1.000000  1.0   1.0
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
    estimate = ratio(numerators.sum(axis=0), denominators.sum(axis=0))
    both = np.hstack([numerators, denominators])
    left_out = both.sum(axis=0)[None, :] - both
    touched = denominators != 0
    stratum_of = np.array([strata[np.flatnonzero(touched[:, j])[0]] if touched[:, j].any() else -1
                           for j in range(width)])
    low, high = interval(ratio(sums[:, :width], sums[:, width:]), estimate, method=method or DEFAULT_INTERVAL,
                         jackknife=ratio(left_out[:, :width], left_out[:, width:]),
                         mask=StratumMask(units=strata, columns=stratum_of), confidence=confidence,
                         n_units=StratumMask(units=strata, columns=stratum_of).sizes())
    return pd.DataFrame({"estimate": estimate, "low": low, "high": high})
