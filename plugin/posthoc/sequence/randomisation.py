"""The study-level test of order effects by randomisation: exact at its level whatever the study's size or k.

Seed 000's design serves every worker their tasks in their own random order, and seed 004 section 2 asks whether
a label depends on the previous one. Under the null hypothesis (no order effect) a worker's labels do not depend
on the order they were served in, so, given each worker's items and labels, every order of their sequence was as
likely as the one drawn: the reference distribution of any statistic is its distribution over independent
random reorderings of each sequence (a randomisation test; Fisher 1935, Edgington and Onghena 2007), with no
large-sample or variance approximation.

The statistic is the score statistic of b1 in seed 004's lag-1 model (eq. 1): the model without the previous
label, ``Y = b0 + b2 gold + b3 bias``, is fitted once (logistic for binary labels, least squares for continuous
ones; ``gold`` and ``bias`` as in :func:`~posthoc.sequence.lag_model.fit_lag1`, neither depends on the order),
and ``U = sum over sequences and positions t >= 1 of residual(t) * label(t - 1)``, centred by its exact mean over
reorderings (``(sum e * sum y - sum e*y) / n`` a sequence). Large ``|U|`` is evidence of an order effect, of
either sign; ``U`` has the sign of b1. The two-sided p-value is ``(1 + #{|U_r| >= |U|}) / (R + 1)`` over ``R``
random reorderings, which never exceeds its level (Phipson and Smyth 2010).

Why (issue 45): the jackknife Wald test of :func:`~posthoc.sequence.lag_model.fit_lag1` rests on the
large-sample normality of b1 and on CV3 standard errors, which are conservative when sequences are short and
depend on how k workers share items; its size on null studies moved with the setting (validity bench,
``bench/results/validity_bench.txt``). The randomisation test's size is 5% by construction when orders were
randomised per worker (:func:`~posthoc.sequence.audit.audit_orders` checks it); with one order shared by every
worker (Snow et al.) it tests exchangeability of the labels within a sequence instead.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import special

from posthoc.arrays import Floats
from posthoc.errors import PosthocInputError
from posthoc.sequence.lag_model import is_binary
from posthoc.sequence.table import Sequences, validate_sequence_table

_ITERATIONS = 50
_CHUNK_CELLS = 2_000_000  # cells of one batch of reorderings (16 MB of int64 indices)


@dataclass(frozen=True)
class OrderTest:
    """The randomisation test of one sequence table: ``statistic`` (the centred score statistic U, the sign of
    b1), ``p_value`` (two-sided), ``n_permutations``, ``n`` (labels with a previous one), ``n_workers``,
    ``note`` (why it could not be computed, else empty). ``dataclasses.asdict`` gives it as a table row."""

    statistic: float
    p_value: float
    n_permutations: int
    n: int
    n_workers: int
    note: str = ""


def _null_fit(labels: Floats, exog: Floats, *, binary: bool) -> Floats:
    """Fitted values of the model without the previous label (Newton-Raphson logit, or least squares)."""
    if not binary:
        return exog @ np.linalg.lstsq(exog, labels, rcond=None)[0]
    params: Floats = np.zeros(exog.shape[1])
    for _ in range(_ITERATIONS):
        fitted = special.expit(exog @ params)
        information = (exog * (fitted * (1 - fitted))[:, None]).T @ exog
        step = np.linalg.lstsq(information, exog.T @ (labels - fitted), rcond=None)[0]
        params = np.clip(params + step, -30.0, 30.0)
        if np.abs(step).max() < 1e-10:
            break
    return special.expit(exog @ params)  # type: ignore[no-any-return]


def _regressors(data: pd.DataFrame, *, use_gold: bool, worker_bias: bool) -> tuple[pd.DataFrame, Floats]:
    """The rows kept (gold known when used) and the null model's columns: constant, gold, worker bias."""
    totals = data.groupby("worker")["label"].transform("sum")
    others = data.groupby("worker")["label"].transform("size") - 1
    data = data.assign(bias=np.where(others > 0, (totals - data["label"]) / others.where(others > 0, 1), np.nan))
    columns = []
    if use_gold and data["gold"].notna().any():
        data = data.dropna(subset=["gold"])
        columns.append("gold")
    if worker_bias:
        data = data.dropna(subset=["bias"])
        columns.append("bias")
    exog = np.column_stack([np.ones(len(data)), *(data[c].to_numpy(dtype=float) for c in columns)])
    return data.reset_index(drop=True), exog


def _statistics(residual: Floats, labels: Floats, starts: list[int], *, n_permutations: int,
                rng: np.random.Generator) -> tuple[float, Floats]:
    """The observed centred U and its ``n_permutations`` values over independent reorderings of each sequence.

    Sequences of one length are reordered together (``(sequences x reorderings) x length`` arrays of independent
    permutations, at most :data:`_CHUNK_CELLS` cells at a time), so a study of 40 workers costs a handful of array
    operations, not 40 loops, and a paper-sized one a bounded amount of memory."""
    bounds = np.asarray(starts)
    lengths = np.diff(bounds)
    observed, draws = 0.0, np.zeros(n_permutations)
    for length in np.unique(lengths[lengths >= 2]):
        same = bounds[:-1][lengths == length]
        per_chunk = max(1, _CHUNK_CELLS // (n_permutations * int(length)))
        for chunk in range(0, len(same), per_chunk):
            first = same[chunk:chunk + per_chunk]
            rows = first[:, None] + np.arange(length)[None, :]  # sequences x length, in served order
            e, y = residual[rows], labels[rows]
            centre = (e.sum(axis=1) * y.sum(axis=1) - (e * y).sum(axis=1)) / length
            observed += float(((e[:, 1:] * y[:, :-1]).sum(axis=1) - centre).sum())
            orders = rng.permuted(np.tile(np.arange(length), (len(first) * n_permutations, 1)), axis=1)
            orders = orders.reshape(len(first), n_permutations, length) + (np.arange(len(first)) * length)[:, None,
                                                                                                             None]
            lagged = (e.ravel()[orders[:, :, 1:]] * y.ravel()[orders[:, :, :-1]]).sum(axis=2)
            draws += (lagged - centre[:, None]).sum(axis=0)
    return observed, draws


def order_randomisation_test(table: Sequences, *, n_permutations: int = 999, use_gold: bool = True,
                             worker_bias: bool = True, seed: int = 0) -> OrderTest:
    """The two-sided randomisation test of a lag-1 order effect on a sequence table (see the module docstring).

    Options: ``n_permutations`` random reorderings of every sequence (999: p-values in steps of 0.001);
    ``use_gold`` and ``worker_bias`` as in :func:`~posthoc.sequence.lag_model.fit_lag1` (gold is left out when
    empty); ``seed`` makes the reorderings, and so the p-value, reproducible. Binary labels (all 0/1) get the
    logistic null model, others least squares. A table with fewer than two workers or ten labels gives NaN and
    a ``note``.

    Examples:
        Two workers alternate ``0, 1, 0, 1, ...`` over 12 items, every label the opposite of the previous one:
        the statistic is negative (b1 < 0) and no reordering of 999 is as extreme (p = 1 / 1000); their labels
        in blocks ``0, 0, 0, ..., 1, 1, 1`` are positive (each label follows its own kind).

        >>> import pandas as pd
        >>> from posthoc.sequence.randomisation import order_randomisation_test
        >>> rows = [(w, w, f"i{p}", p, float((p + k) % 2), None) for w, k in (("w1", 0), ("w2", 1)) for p in range(12)]
        >>> table = pd.DataFrame(rows, columns=["worker", "sequence", "item", "position", "label", "gold"])
        >>> alternating = order_randomisation_test(table, worker_bias=False)
        >>> alternating.statistic < 0, alternating.p_value, alternating.n, alternating.n_workers
        (True, 0.001, 22, 2)
        >>> blocks = order_randomisation_test(table.assign(label=(table["position"] >= 6).astype(float)),
        ...                                   worker_bias=False)
        >>> blocks.statistic > 0, blocks.p_value
        (True, 0.001)
    """
    if n_permutations < 1:
        raise PosthocInputError(f"n_permutations must be 1 or more, not {n_permutations}")
    data, exog = _regressors(validate_sequence_table(table), use_gold=use_gold, worker_bias=worker_bias)
    n_workers = int(data["worker"].nunique()) if len(data) else 0
    lagged = len(data) - int(data.groupby(["worker", "sequence"]).ngroups) if len(data) else 0
    if n_workers < 2 or len(data) < 10:
        return OrderTest(np.nan, np.nan, n_permutations, lagged, n_workers, "too few judgements or workers to test")
    labels = data["label"].to_numpy(dtype=float)
    residual = labels - _null_fit(labels, exog, binary=is_binary(data["label"]))
    keys = data["worker"] + "\x00" + data["sequence"]
    starts = [*np.flatnonzero(keys.ne(keys.shift()).to_numpy()).tolist(), len(data)]
    observed, draws = _statistics(residual, labels, starts, n_permutations=n_permutations,
                                  rng=np.random.default_rng(seed))
    extreme = int((np.abs(draws) >= abs(observed) - 1e-12 * max(1.0, abs(observed))).sum())
    return OrderTest(float(observed), (1 + extreme) / (n_permutations + 1), n_permutations, lagged, n_workers)
