"""The CrowdTruth 2.0 metrics by the peer's fixed-point iteration, vectorised.

Seed 002 section 3.3 and its reference [3] (Aroyo & Welty, "The Three Sides of CrowdTruth");
the definitions and the iteration are those of the PyPI package ``crowdtruth`` 2.1
(``crowdtruth/models/metrics.py``), which this module reproduces number for number:

* **UQS** (unit quality): the average weighted cosine between every two workers' vectors on a
  unit, weighted by ``WQS_i * WQS_j``; the cosine is weighted by the annotation quality (AQS).
* **WUA** (worker-unit agreement; the peer's ``wsa``): the average weighted cosine between a
  worker's vector (times its WQS) and the rest of the unit vector, weighted by UQS.
* **WWA** (worker-worker agreement): the average weighted cosine between a worker and every other
  worker on the same units, weighted by ``WQS_other * UQS``.
* **WQS** = WUA x WWA.
* **AQS** (closed tasks only): over ordered worker pairs ``(i, j)`` sharing a unit, the
  UQS-weighted probability that ``i`` chose annotation ``a`` where ``j`` did, averaged with
  weights ``WQS_i * WQS_j``.
* **UAS** (unit-annotation score, the paper's sentence-relation score with worker weights): the
  WQS-weighted share of the unit's workers who chose the annotation.

Iteration (as the peer): every score starts at 1; each round computes AQS (closed tasks), UQS and
WUA / WWA / WQS all from the previous round's scores (the unit vectors used by WUA are weighted
by the previous WQS); it stops when the largest absolute change of any WQS, UQS or AQS is below
``0.001``.  The ``*_initial`` values are those after the first round (UAS initial: unweighted).
Zero denominators follow the peer: UQS, WWA, WUA and UAS denominators below ``1e-8`` become
``1e-8``; a WUA cosine whose norm product is below ``1e-8`` is ``1e-8``; AQS uses only worker
pairs whose weighted count is positive, is ``1e-8`` where nothing is known and never below ``1e-8``.
The peer has no iteration cap; ``max_iterations`` (default 10 000) only guards against a hang and
the result says whether the rule was met.

All arithmetic is on judgement x annotation sparse matrices and pair index arrays: no Python loop
over units or workers (only over rounds).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.sparse as sp

from posthoc.crowdtruth.vectors import JudgementVectors, unit_indicator

SMALL_NUMBER = 1e-8
STOP_DELTA = 0.001


@dataclass(frozen=True)
class CrowdTruthResult:
    """The scores of one run.

    units
        ``unit, n_workers, uqs, uqs_initial``
    workers
        ``worker, n_units, wqs, wwa, wua, wqs_initial, wwa_initial, wua_initial``
    annotations
        ``annotation, n_chosen, aqs, aqs_initial`` (AQS is 1 for open-ended tasks, as the peer's weights)
    unit_annotations
        ``unit, annotation, n_chosen, uas, uas_initial``: one row per component of each unit vector
    """

    units: pd.DataFrame
    workers: pd.DataFrame
    annotations: pd.DataFrame
    unit_annotations: pd.DataFrame
    iterations: int
    converged: bool
    open_ended: bool


@dataclass(frozen=True)
class _Pairs:
    """Ordered pairs of distinct judgements on the same unit."""

    first: np.ndarray
    second: np.ndarray
    unit: np.ndarray
    product: sp.csr_matrix  # pairs x annotations: W_first * W_second
    second_rows: sp.csr_matrix  # pairs x annotations: W_second


def _pairs(vectors: JudgementVectors) -> _Pairs:
    unit_index = vectors.unit_index
    order = np.argsort(unit_index, kind="stable")
    counts = np.bincount(unit_index, minlength=len(vectors.units))
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    sizes = counts[unit_index[order]]
    first = np.repeat(order, sizes)
    block_start = np.repeat(np.cumsum(sizes) - sizes, sizes)
    offset = np.arange(first.size) - block_start
    second = order[starts[unit_index[first]] + offset]
    keep = first != second
    first, second = first[keep], second[keep]
    matrix = vectors.matrix
    return _Pairs(
        first=first,
        second=second,
        unit=unit_index[first],
        product=sp.csr_matrix(matrix[first].multiply(matrix[second])),
        second_rows=sp.csr_matrix(matrix[second]),
    )


def _floor(values: np.ndarray) -> np.ndarray:
    return np.where(values < SMALL_NUMBER, SMALL_NUMBER, values)


class _Iteration:
    """Precomputed structure and the update rules of one round."""

    def __init__(self, vectors: JudgementVectors) -> None:
        self.v = vectors
        self.n_units = len(vectors.units)
        self.n_workers = len(vectors.workers)
        self.n_annotations = len(vectors.annotations)
        self.pairs = _pairs(vectors)
        self.squared = sp.csr_matrix(vectors.matrix.multiply(vectors.matrix))
        self.unit_sum = unit_indicator(vectors)
        p = self.pairs
        self.unordered = p.first < p.second
        w = vectors.worker_index
        pair_key = w[p.first].astype(np.int64) * self.n_workers + w[p.second]
        codes, uniques = pd.factorize(pair_key, sort=True)
        self.pair_group = sp.csr_matrix(
            (np.ones(codes.size), (codes, np.arange(codes.size))), shape=(uniques.size, codes.size)
        )
        self.group_first = (uniques // self.n_workers).astype(np.int64)
        self.group_second = (uniques % self.n_workers).astype(np.int64)

    def pair_cosines(self, aqs: np.ndarray) -> np.ndarray:
        norms = self.squared @ aqs
        p = self.pairs
        return (p.product @ aqs) / np.sqrt(norms[p.first] * norms[p.second])

    def uqs(self, cosines: np.ndarray, wqs: np.ndarray) -> np.ndarray:
        p, w = self.pairs, self.v.worker_index
        mask = self.unordered
        weight = wqs[w[p.first[mask]]] * wqs[w[p.second[mask]]]
        numerator = np.bincount(p.unit[mask], cosines[mask] * weight, minlength=self.n_units)
        denominator = np.bincount(p.unit[mask], weight, minlength=self.n_units)
        return numerator / _floor(denominator)

    def wwa(self, cosines: np.ndarray, wqs: np.ndarray, uqs: np.ndarray) -> np.ndarray:
        p, w = self.pairs, self.v.worker_index
        weight = wqs[w[p.second]] * uqs[p.unit]
        numerator = np.bincount(w[p.first], cosines * weight, minlength=self.n_workers)
        denominator = np.bincount(w[p.first], weight, minlength=self.n_workers)
        return numerator / _floor(denominator)

    def wua(self, unit_vectors: sp.csr_matrix, aqs: np.ndarray, wqs: np.ndarray, uqs: np.ndarray) -> np.ndarray:
        w, u = self.v.worker_index, self.v.unit_index
        own = sp.csr_matrix(sp.diags(wqs[w]) @ self.v.matrix)
        rest = sp.csr_matrix(unit_vectors[u] - own)
        numerator = own.multiply(rest) @ aqs
        norm_own = own.multiply(own) @ aqs
        norm_rest = rest.multiply(rest) @ aqs
        scale = np.sqrt(norm_own * norm_rest)
        with np.errstate(divide="ignore", invalid="ignore"):
            cosines = np.where(scale < SMALL_NUMBER, SMALL_NUMBER, numerator / scale)
        weight = uqs[u]
        return np.bincount(w, cosines * weight, minlength=self.n_workers) / _floor(
            np.bincount(w, weight, minlength=self.n_workers)
        )

    def aqs(self, wqs: np.ndarray, uqs: np.ndarray) -> np.ndarray:
        p = self.pairs
        scale = sp.diags(uqs[p.unit])
        numerator = sp.csr_matrix(self.pair_group @ (scale @ p.product))
        denominator = sp.csr_matrix(self.pair_group @ (scale @ p.second_rows))
        denominator.eliminate_zeros()
        coo = denominator.tocoo()
        positive = coo.data > 0
        rows, cols, den = coo.row[positive], coo.col[positive], coo.data[positive]
        num = np.asarray(numerator[rows, cols]).ravel()
        weight = wqs[self.group_first[rows]] * wqs[self.group_second[rows]]
        aqs_numerator = np.bincount(cols, weight * num / den, minlength=self.n_annotations)
        aqs_denominator = np.bincount(cols, weight, minlength=self.n_annotations)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(aqs_denominator > SMALL_NUMBER, aqs_numerator / aqs_denominator, SMALL_NUMBER)
        return _floor(ratio)

    def weighted_unit_vectors(self, wqs: np.ndarray) -> sp.csr_matrix:
        return sp.csr_matrix(self.unit_sum @ (sp.diags(wqs[self.v.worker_index]) @ self.v.matrix))

    def uas(self, wqs: np.ndarray) -> sp.csr_matrix:
        weights = self.unit_sum @ wqs[self.v.worker_index]
        return sp.csr_matrix(sp.diags(1.0 / _floor(weights)) @ self.weighted_unit_vectors(wqs))


def crowdtruth_metrics(
    vectors: JudgementVectors,
    *,
    stop_delta: float = STOP_DELTA,
    max_iterations: int = 10_000,
) -> CrowdTruthResult:
    """Run the CrowdTruth 2.0 fixed-point iteration on ``vectors`` (see the module docstring)."""
    state = _Iteration(vectors)
    ones_w = np.ones(state.n_workers)
    wqs, uqs = ones_w.copy(), np.ones(state.n_units)
    aqs = np.ones(state.n_annotations)
    unit_vectors = state.weighted_unit_vectors(ones_w)
    first: dict[str, np.ndarray] = {}
    wwa: np.ndarray = ones_w
    wua: np.ndarray = ones_w
    iterations = 0
    max_delta = stop_delta
    while max_delta >= stop_delta and iterations < max_iterations:
        aqs_new = aqs if vectors.open_ended else state.aqs(wqs, uqs)
        cosines = state.pair_cosines(aqs)
        uqs_new = state.uqs(cosines, wqs)
        wwa = state.wwa(cosines, wqs, uqs)
        wua = state.wua(unit_vectors, aqs, wqs, uqs)
        wqs_new = wwa * wua
        max_delta = max(
            float(np.max(np.abs(aqs_new - aqs), initial=0.0)),
            float(np.max(np.abs(uqs_new - uqs), initial=0.0)),
            float(np.max(np.abs(wqs_new - wqs), initial=0.0)),
        )
        aqs, uqs, wqs = aqs_new, uqs_new, wqs_new
        unit_vectors = state.weighted_unit_vectors(wqs)
        iterations += 1
        if iterations == 1:
            first = {"aqs": aqs, "uqs": uqs, "wqs": wqs, "wwa": wwa, "wua": wua}
    return _result(vectors, state, first, aqs, uqs, wqs, wwa, wua, iterations, converged=max_delta < stop_delta)


def _result(
    vectors: JudgementVectors,
    state: _Iteration,
    first: dict[str, np.ndarray],
    aqs: np.ndarray,
    uqs: np.ndarray,
    wqs: np.ndarray,
    wwa: np.ndarray,
    wua: np.ndarray,
    iterations: int,
    *,
    converged: bool,
) -> CrowdTruthResult:
    v = vectors
    n_workers_per_unit = np.bincount(v.unit_index, minlength=len(v.units))
    units = pd.DataFrame(
        {"unit": v.units, "n_workers": n_workers_per_unit, "uqs": uqs, "uqs_initial": first["uqs"]}
    )
    workers = pd.DataFrame(
        {
            "worker": v.workers,
            "n_units": np.bincount(v.worker_index, minlength=len(v.workers)),
            "wqs": wqs,
            "wwa": wwa,
            "wua": wua,
            "wqs_initial": first["wqs"],
            "wwa_initial": first["wwa"],
            "wua_initial": first["wua"],
        }
    )
    chosen = np.asarray((v.matrix > 0).sum(axis=0)).ravel()
    annotations = pd.DataFrame(
        {"annotation": v.annotations, "n_chosen": chosen, "aqs": aqs, "aqs_initial": first["aqs"]}
    )
    keys = v.unit_keys.tocoo()
    rows, cols = keys.row, keys.col
    order = np.lexsort((cols, rows))
    rows, cols = rows[order], cols[order]
    uas = state.uas(wqs)
    uas_initial = state.uas(np.ones(len(v.workers)))
    counts = sp.csr_matrix(state.unit_sum @ (v.matrix > 0).astype(float))
    unit_annotations = pd.DataFrame(
        {
            "unit": v.units[rows],
            "annotation": v.annotations[cols],
            "n_chosen": np.asarray(counts[rows, cols]).ravel().astype(np.int64),
            "uas": np.asarray(uas[rows, cols]).ravel(),
            "uas_initial": np.asarray(uas_initial[rows, cols]).ravel(),
        }
    )
    return CrowdTruthResult(
        units=units,
        workers=workers,
        annotations=annotations,
        unit_annotations=unit_annotations,
        iterations=iterations,
        converged=converged,
        open_ended=v.open_ended,
    )
