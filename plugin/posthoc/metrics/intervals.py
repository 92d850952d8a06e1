"""Bootstrap intervals and p-values from resampled statistics: BCa (the default) and percentile.

Seed 000 section 4 draws its error bars from 1,000 bootstrap resamples of the data. This module turns
``(resamples, statistics)`` arrays of resampled values into bounds and two-sided p-values, by one of
:data:`METHODS`:

``bca``         bias-corrected and accelerated (Efron 1987, "Better bootstrap confidence intervals", JASA 82;
                Efron and Tibshirani 1993 section 14.3): the percentile levels are moved by the bias correction
                ``z0 = Phi^-1(share of resamples below the estimate)`` (ties count half) and the acceleration
                ``a = sum U^3 / (6 (sum U^2)^1.5)`` from the jackknife (``U_i`` = mean of the leave-one-unit-out
                values minus the ``i``-th, over the units of the statistic's stratum). The levels are
                ``Phi(z0 + (z0 + z) / (1 - a (z0 + z)))`` for ``z`` the normal quantiles of the tails.
``percentile``  the ``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` quantiles of the resamples
                (the paper's empirical interval, and this package's method before issue 26).

Quantiles interpolate linearly between order statistics (``numpy.quantile``'s default) over the resamples
that are not NaN. A p-value is the smallest ``1 - confidence`` at which the same interval excludes 0 (the
interval inverted, so an interval and its p-value never disagree): for ``percentile``
``2 min(P*(d <= 0), P*(d >= 0))``; for ``bca`` the level of the resample share at 0 mapped back through the
BCa transformation. It is never below ``1 / B`` (the resolution of ``B`` resamples).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from statistics import NormalDist
from typing import Final, TypeAlias

import numpy as np

from posthoc.arrays import Bools, Floats, Ints
from posthoc.errors import PosthocInputError

METHODS: Final = ("bca", "percentile")
#: The method of the rates' and the comparisons' intervals by default (``posthoc score --interval``).
DEFAULT_INTERVAL: Final = "bca"
_NORMAL = NormalDist()


@dataclass(frozen=True)
class StratumMask:
    """Which units belong to each statistic, as strata: ``units`` (one stratum per unit) and ``columns`` (one per
    statistic, -1 for none). The same as the boolean mask ``units[:, None] == columns[None, :]``, but the
    acceleration is computed on each stratum's block alone (a statistic of one dataset reads its units only)."""

    units: Ints
    columns: Ints

    def sizes(self) -> Ints:
        """The units of each statistic's stratum."""
        counts = np.bincount(self.units[self.units >= 0], minlength=int(self.columns.max(initial=-1)) + 1)
        return np.where(self.columns >= 0, counts[np.maximum(self.columns, 0)] if len(counts) else 0, 0)


#: A boolean ``(units, statistics)`` mask or its stratum form.
Mask: TypeAlias = "Bools | StratumMask"


def check_method(method: str) -> None:
    """:class:`PosthocInputError` unless ``method`` is one of :data:`METHODS`.

    Examples:
        >>> from posthoc.metrics.intervals import check_method
        >>> check_method("bca")
        >>> check_method("normal")
        Traceback (most recent call last):
        ...
        posthoc.errors.PosthocInputError: interval method must be one of bca, percentile, not 'normal'
    """
    if method not in METHODS:
        raise PosthocInputError(f"interval method must be one of {', '.join(METHODS)}, not {method!r}")


def normal_cdf(values: Floats) -> Floats:
    """``Phi`` elementwise (``scipy.special.ndtr``, imported when first needed).

    Examples:
        ``Phi(0) = 1/2`` by symmetry; ``Phi(1.959964) = 0.975``, the 95% two-sided point.

        >>> import numpy as np
        >>> from posthoc.metrics.intervals import normal_cdf
        >>> normal_cdf(np.array([0.0, 1.959964])).round(6).tolist()
        [0.5, 0.975]
    """
    from scipy.special import ndtr

    return np.asarray(ndtr(np.asarray(values, dtype=float)), dtype=float)


def normal_quantile(levels: Floats) -> Floats:
    """``Phi^-1`` of levels clipped into (0, 1) (``+-8.2`` at the clip; ``scipy.special.ndtri``).

    Examples:
        The inverse of :func:`normal_cdf`; a level of 0 or 1 is clipped instead of giving an infinity.

        >>> import numpy as np
        >>> from posthoc.metrics.intervals import normal_quantile
        >>> normal_quantile(np.array([0.5, 0.975])).round(6).tolist()
        [0.0, 1.959964]
        >>> bool(np.isfinite(normal_quantile(np.array([0.0, 1.0]))).all())
        True
    """
    from scipy.special import ndtri

    return np.asarray(ndtri(np.clip(np.asarray(levels, dtype=float), 1e-16, 1 - 1e-16)), dtype=float)


def acceleration(jackknife: Floats, mask: Mask | None = None) -> Floats:
    """BCa acceleration per statistic from ``(units, statistics)`` leave-one-unit-out values.

    ``mask`` (same shape, default all): the units of each statistic's stratum; a statistic whose
    jackknife values are all equal (or NaN) gets 0.

    Examples:
        Jackknife values ``0, 0, 3`` (mean 1): deviations ``mean - value = 1, 1, -2``, squares sum 6, cubes sum
        ``1 + 1 - 8 = -6``, so ``a = -6 / (6 * 6^1.5) = -1 / 6^1.5``; equal values give 0.

        >>> import numpy as np
        >>> from posthoc.metrics.intervals import acceleration
        >>> accel = acceleration(np.array([[0.0, 2.0], [0.0, 2.0], [3.0, 2.0]]))
        >>> accel.round(6).tolist(), round(-1 / 6**1.5, 6)
        ([-0.068041, 0.0], -0.068041)
    """
    values = np.asarray(jackknife, dtype=float)
    if isinstance(mask, StratumMask):  # each stratum's block alone: the same sums without the other units' zeros
        accel = np.zeros(values.shape[1])
        for stratum in np.unique(mask.columns[mask.columns >= 0]):
            columns = np.flatnonzero(mask.columns == stratum)
            accel[columns] = acceleration(values[np.flatnonzero(mask.units == stratum)][:, columns])
        return accel
    use = ~np.isnan(values)
    if mask is not None:
        use &= np.asarray(mask, dtype=bool)
    filled = np.where(use, values, 0.0)
    mean = filled.sum(axis=0) / np.maximum(use.sum(axis=0), 1)
    deviation = np.where(use, mean - filled, 0.0)
    square = deviation * deviation
    squares = square.sum(axis=0)
    cubes = np.einsum("ij,ij->j", square, deviation)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(squares > 0, cubes / (6 * squares**1.5), 0.0)


def _share_below(samples: Floats, point: Floats) -> tuple[Floats, Ints]:
    """Share of non-NaN resamples below ``point`` (ties half) and the number of non-NaN resamples."""
    valid = ~np.isnan(samples)
    n = valid.sum(axis=0)
    below = (samples < point).sum(axis=0) + 0.5 * (samples == point).sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(n > 0, below / np.maximum(n, 1), np.nan), n


def bias_correction(samples: Floats, estimate: Floats) -> Floats:
    """``z0`` per statistic; the share is kept within ``[1 / 2B, 1 - 1 / 2B]`` so ``z0`` stays finite.

    Examples:
        Two of four resamples below the estimate 0.25 give ``z0 = Phi^-1(1/2) = 0``; all four below 0.9 is kept at
        ``1 - 1/(2 * 4)``, so ``z0 = Phi^-1(7/8)``.

        >>> import numpy as np
        >>> from posthoc.metrics.intervals import bias_correction, normal_quantile
        >>> samples = np.array([[0.1, 0.1], [0.2, 0.2], [0.3, 0.3], [0.5, 0.4]])
        >>> z0 = bias_correction(samples, np.array([0.25, 0.9]))
        >>> z0.round(6).tolist(), round(float(normal_quantile(np.array([7 / 8]))[0]), 6)
        ([0.0, 1.150349], 1.150349)
    """
    share, n = _share_below(samples, estimate)
    half = 0.5 / np.maximum(n, 1)
    return np.where(np.isnan(share), np.nan, normal_quantile(np.clip(np.nan_to_num(share), half, 1 - half)))


def _corrections(samples: Floats, estimate: Floats, jackknife: Floats | None,
                 mask: Mask | None) -> tuple[Floats, Floats]:
    """BCa's ``(z0, a)`` per statistic (``a = 0`` without a jackknife)."""
    z0 = bias_correction(samples, np.asarray(estimate, dtype=float))
    return z0, (np.zeros_like(z0) if jackknife is None else acceleration(jackknife, mask))


def expansion(n_units: Ints | None, tail: float, shape: tuple[int, ...]) -> Floats:
    """The normal quantile of ``tail`` per statistic, expanded for ``n`` units: ``sqrt(n / (n - 1)) t_{n-1}(tail)``
    (Hesterberg 2015 section 5.2); unexpanded ``z`` without ``n_units`` or below 2 units.

    Examples:
        With 10 units the 2.5% point ``-1.959964`` becomes ``sqrt(10/9) t_9(0.025) = 1.054093 * -2.262157``; with
        no unit count it stays the normal one.

        >>> import numpy as np
        >>> from posthoc.metrics.intervals import expansion
        >>> expansion(np.array([10]), 0.025, (1,)).round(6).tolist(), expansion(None, 0.025, (1,)).round(6).tolist()
        ([-2.384523], [-1.959964])
    """
    z = np.full(shape, _NORMAL.inv_cdf(tail))
    if n_units is None:
        return z
    from scipy import stats

    n = np.broadcast_to(np.asarray(n_units, dtype=float), shape)
    enough = n >= 2
    z[enough] = np.sqrt(n[enough] / (n[enough] - 1)) * stats.t.ppf(tail, n[enough] - 1)
    return z


def _tail_of(z: Floats, n_units: Ints | None) -> Floats:
    """The inverse of :func:`expansion`: the tail level whose (expanded) quantile is ``z``."""
    if n_units is None:
        return normal_cdf(z)
    from scipy import stats

    n = np.broadcast_to(np.asarray(n_units, dtype=float), z.shape)
    enough = n >= 2
    level = normal_cdf(z)
    level[enough] = stats.t.cdf(z[enough] / np.sqrt(n[enough] / (n[enough] - 1)), n[enough] - 1)
    return level


def _levels(z0: Floats, accel: Floats, z: Floats) -> Floats:
    shifted = z0 + z
    with np.errstate(divide="ignore", invalid="ignore"):
        denominator = 1 - accel * shifted
        moved = np.where(denominator > 0, z0 + shifted / np.where(denominator > 0, denominator, 1), np.sign(z) * 40)
    return normal_cdf(moved)


def column_quantiles(samples: Floats, levels: Floats, *, ordered: Floats | None = None) -> Floats:
    """Each column's quantile at its own level (linear interpolation over its non-NaN resamples); ``ordered``:
    the samples already sorted along axis 0 (NaN last), to sort once for several levels.

    Examples:
        Column 0 ``1, 2, 3, 4`` at level 0.5: position ``0.5 * 3 = 1.5``, between 2 and 3, so 2.5; column 1 has a
        NaN, so its level 1.0 is the last of its 3 values.

        >>> import numpy as np
        >>> from posthoc.metrics.intervals import column_quantiles
        >>> samples = np.array([[4.0, 1.0], [1.0, np.nan], [3.0, 7.0], [2.0, 5.0]])
        >>> column_quantiles(samples, np.array([0.5, 1.0])).tolist()
        [2.5, 7.0]
    """
    ordered = np.sort(samples, axis=0) if ordered is None else ordered
    n = (~np.isnan(samples)).sum(axis=0)
    position = np.clip(np.nan_to_num(levels), 0, 1) * np.maximum(n - 1, 0)
    below = np.floor(position).astype(np.int64)
    above = np.minimum(below + 1, np.maximum(n - 1, 0))
    low = np.take_along_axis(ordered, below[None, :], axis=0)[0]
    high = np.take_along_axis(ordered, above[None, :], axis=0)[0]
    value = low + (position - below) * (high - low)
    return np.where((n > 0) & ~np.isnan(levels), value, np.nan)


def percentile_interval(samples: Floats, *, confidence: float = 0.95) -> tuple[Floats, Floats]:
    """Percentile bounds over axis 0 of ``samples`` (resamples x statistics), NaN resamples skipped.

    ``numpy.quantile`` (linear interpolation) on the columns without NaN, in one call;
    ``numpy.nanquantile`` (the same rule on the non-NaN resamples) only on columns that have one.

    Examples:
        Resamples ``0, 1, ..., 100`` of one statistic: the 2.5% and 97.5% points are 2.5 and 97.5.

        >>> import numpy as np
        >>> from posthoc.metrics.intervals import percentile_interval
        >>> low, high = percentile_interval(np.arange(101.0).reshape(-1, 1))
        >>> low.round(9).tolist(), high.round(9).tolist()
        ([2.5], [97.5])
    """
    if not 0 < confidence < 1:
        raise PosthocInputError(f"confidence must be between 0 and 1, not {confidence}")
    tail = (1 - confidence) / 2
    if samples.shape[0] == 0:
        nan = np.full(samples.shape[1:], np.nan)
        return nan, nan.copy()
    flat = samples.reshape(samples.shape[0], -1)
    bounds = np.empty((2, flat.shape[1]))
    has_nan = np.isnan(flat).any(axis=0)
    if (~has_nan).any():
        bounds[:, ~has_nan] = np.quantile(flat[:, ~has_nan], [tail, 1 - tail], axis=0)
    if has_nan.any():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            bounds[:, has_nan] = np.nanquantile(flat[:, has_nan], [tail, 1 - tail], axis=0)
    low, high = bounds.reshape((2, *samples.shape[1:]))
    return low, high


def interval(
    samples: Floats,
    estimate: Floats,
    *,
    method: str = "bca",
    jackknife: Floats | None = None,
    mask: Mask | None = None,
    confidence: float = 0.95,
    n_units: Ints | None = None,
    corrections: tuple[Floats, Floats] | None = None,
) -> tuple[Floats, Floats]:
    """``(low, high)`` per statistic of ``(resamples, statistics)`` samples (module docstring).

    ``estimate``: the point values; ``jackknife`` / ``mask``: leave-one-unit-out values for BCa's
    acceleration (without them ``a = 0``: the bias-corrected interval); ``n_units``: the units behind each
    statistic, for BCa's small-sample expansion (:func:`expansion`; without it the plain BCa of Efron 1987).

    Examples:
        Resamples ``0, ..., 100`` around the estimate 50: half below (the tie counts half), so ``z0 = 0``, and no
        jackknife, so ``a = 0``: BCa is the percentile interval, 2.5 and 97.5. A confidence of 1 is refused.

        >>> import numpy as np
        >>> from posthoc.metrics.intervals import interval
        >>> low, high = interval(np.arange(101.0).reshape(-1, 1), np.array([50.0]))
        >>> low.round(9).tolist(), high.round(9).tolist()
        ([2.5], [97.5])
        >>> interval(np.arange(101.0).reshape(-1, 1), np.array([50.0]), confidence=1)
        Traceback (most recent call last):
        ...
        posthoc.errors.PosthocInputError: confidence must be between 0 and 1, not 1
    """
    check_method(method)
    if not 0 < confidence < 1:
        raise PosthocInputError(f"confidence must be between 0 and 1, not {confidence}")
    if method == "percentile" or samples.shape[0] == 0:
        return percentile_interval(samples, confidence=confidence)
    z0, accel = corrections or _corrections(samples, estimate, jackknife, mask)
    tail = expansion(n_units, (1 - confidence) / 2, z0.shape)
    ordered = np.sort(samples, axis=0)
    return (column_quantiles(samples, _levels(z0, accel, tail), ordered=ordered),
            column_quantiles(samples, _levels(z0, accel, -tail), ordered=ordered))


def p_values(samples: Floats, estimate: Floats, *, method: str = "bca", jackknife: Floats | None = None,
             mask: Mask | None = None, n_units: Ints | None = None,
             corrections: tuple[Floats, Floats] | None = None) -> Floats:
    """Two-sided p-values of "the statistic is 0", the interval of the same ``method`` inverted (module docstring).

    ``corrections``: BCa's ``(z0, a)`` when already computed (:func:`interval_and_p` reuses them).

    Examples:
        Resamples ``-10, ..., 90``: 10 below 0 and one tie (half), so the share below is 10.5/101 and
        ``p = 2 x 10.5/101 = 21/101``.

        >>> import numpy as np
        >>> from posthoc.metrics.intervals import p_values
        >>> p_values(np.arange(-10.0, 91.0).reshape(-1, 1), np.array([40.0]), method="percentile").round(6).tolist()
        [0.207921]
    """
    check_method(method)
    share, n = _share_below(samples, np.zeros(samples.shape[1]))
    if method == "percentile":
        level = share
    else:
        z0, accel = corrections or _corrections(samples, estimate, jackknife, mask)
        w = normal_quantile(np.nan_to_num(share, nan=0.5)) - z0  # = (z0 + z) / (1 - a (z0 + z)) solved for z
        with np.errstate(divide="ignore", invalid="ignore"):
            denominator = 1 + accel * w
            shifted = np.where(denominator > 0, w / np.where(denominator > 0, denominator, 1), np.sign(w) * 40)
        level = np.where(np.isnan(share), np.nan, _tail_of(np.asarray(shifted - z0, dtype=float), n_units))
    p = 2 * np.minimum(level, 1 - level)
    return np.where(n > 0, np.clip(p, 1 / np.maximum(n, 1), 1.0), np.nan)


def interval_and_p(samples: Floats, estimate: Floats, *, method: str = "bca",
                   jackknife: Floats | None = None, mask: Mask | None = None, confidence: float = 0.95,
                   n_units: Ints | None = None) -> tuple[Floats, Floats, Floats]:
    """``(low, high, p)``: :func:`interval` and :func:`p_values` with BCa's corrections computed once.

    Examples:
        Resamples ``-10, ..., 90`` around their median 40: ``z0 = 0`` and ``a = 0``, so BCa is the percentile interval
        (-7.5, 87.5), and ``p = 2 x 10.5/101`` (:func:`p_values`' example).

        >>> import numpy as np
        >>> from posthoc.metrics.intervals import interval_and_p
        >>> low, high, p = interval_and_p(np.arange(-10.0, 91.0).reshape(-1, 1), np.array([40.0]))
        >>> low.round(9).tolist(), high.round(9).tolist(), p.round(6).tolist()
        ([-7.5], [87.5], [0.207921])
    """
    corrections = None
    if method == "bca" and samples.shape[0]:
        corrections = _corrections(samples, estimate, jackknife, mask)
    low, high = interval(samples, estimate, method=method, jackknife=jackknife, mask=mask, confidence=confidence,
                         n_units=n_units, corrections=corrections)
    return low, high, p_values(samples, estimate, method=method, jackknife=jackknife, mask=mask, n_units=n_units,
                               corrections=corrections)


def jackknife_t(jackknife: Floats, estimate: Floats, *, mask: Mask | None = None,
                confidence: float = 0.95) -> tuple[Floats, Floats, Floats]:
    """``(low, high, p)``: the cluster jackknife t interval and test (CV3 with ``t_{G-1}``; MacKinnon, Nielsen and Webb
    2023, "Cluster-robust inference: a guide to empirical practice", J. Econometrics 232, section 4.2).

    ``jackknife``: ``(units, statistics)`` leave-one-unit-out values (a unit is a cluster: a document); ``mask`` the
    units of each statistic's stratum (default all). With ``G`` units, ``se^2 = (G - 1) / G sum (value_i - mean)^2``;
    the bounds are ``estimate -+ t_{G-1}((1 + confidence) / 2) se`` and ``p = 2 P(T_{G-1} > |estimate| / se)``.
    The paired comparisons use it (issue 46): with a difficulty documents share across systems and a system x
    document term, the bootstrap's paired test at 20 documents rejects 8-9% of equal pairs at 5%, this one holds.
    A statistic with fewer than 2 units gives NaN; one whose jackknife values are all equal gives the estimate as
    both bounds (``p`` 1 when it is 0, else 0).

    Examples:
        Jackknife values ``1, 2, 3`` of three units (mean 2): ``se^2 = 2/3 x 2 = 4/3``; the estimate 2 gives
        ``t = 2 / sqrt(4/3) = 1.732`` on 2 degrees of freedom: ``p = 0.225``, bounds ``2 -+ 4.303 x 1.155``.

        >>> import numpy as np
        >>> from posthoc.metrics.intervals import jackknife_t
        >>> low, high, p = jackknife_t(np.array([[1.0], [2.0], [3.0]]), np.array([2.0]))
        >>> low.round(4).tolist(), high.round(4).tolist(), p.round(4).tolist()
        ([-2.9683], [6.9683], [0.2254])
    """
    from scipy import stats

    if not 0 < confidence < 1:
        raise PosthocInputError(f"confidence must be between 0 and 1, not {confidence}")
    values = np.asarray(jackknife, dtype=float)
    use = ~np.isnan(values)
    if isinstance(mask, StratumMask):
        use &= mask.units[:, None] == mask.columns[None, :]
    elif mask is not None:
        use &= np.asarray(mask, dtype=bool)
    g = use.sum(axis=0)
    filled = np.where(use, values, 0.0)
    mean = filled.sum(axis=0) / np.maximum(g, 1)
    spread = np.where(use, filled - mean, 0.0)
    se = np.where(g >= 2, np.sqrt((g - 1) / np.maximum(g, 1) * (spread * spread).sum(axis=0)), np.nan)
    degrees = np.maximum(g - 1, 1).astype(float)
    half = stats.t.ppf((1 + confidence) / 2, degrees) * se
    estimate = np.asarray(estimate, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(se > 0, 2 * stats.t.sf(np.abs(estimate) / np.where(se > 0, se, 1), degrees),
                     np.where(se == 0, (estimate == 0).astype(float), np.nan))
    return estimate - half, estimate + half, p


def holm(p: Floats) -> Floats:
    """Holm's step-down adjusted p-values (Holm 1979) of one family; NaN entries stay NaN and do not count.

    Examples:
        Three p-values sorted ``0.01, 0.02, 0.04`` are multiplied by 3, 2, 1: ``0.03, 0.04, 0.04`` (each at least
        the one before it); a NaN stays NaN and does not count.

        >>> import numpy as np
        >>> from posthoc.metrics.intervals import holm
        >>> holm(np.array([0.04, 0.01, np.nan, 0.02])).round(6).tolist()
        [0.04, 0.03, nan, 0.04]
    """
    p = np.asarray(p, dtype=float)
    adjusted = np.full(p.shape, np.nan)
    present = np.flatnonzero(~np.isnan(p))
    m = len(present)
    if m == 0:
        return adjusted
    order = present[np.argsort(p[present], kind="stable")]
    stepped = np.maximum.accumulate((m - np.arange(m)) * p[order])
    adjusted[order] = np.minimum(stepped, 1.0)
    return adjusted
