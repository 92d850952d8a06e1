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

The structure (nonzero vector components, ordered pairs of judgements on a unit, worker pairs) is
built once as flat index arrays with numpy / scipy.sparse; each round is a few ``np.bincount`` sums
over them: no Python loop over units or workers (only over rounds).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.sparse as sp

from posthoc.arrays import Floats, Ints, weighted_bincount
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


def _ordered_pairs(unit_index: Ints, n_units: int) -> tuple[Ints, Ints]:
    """Every ordered pair ``(i, j)``, ``i != j``, of judgements on the same unit, as two index arrays."""
    order = np.argsort(unit_index, kind="stable")
    counts = np.bincount(unit_index, minlength=n_units)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    sizes = counts[unit_index[order]]
    first = np.repeat(order, sizes)
    block_start = np.repeat(np.cumsum(sizes) - sizes, sizes)
    second = order[starts[unit_index[first]] + np.arange(first.size) - block_start]
    keep = first != second
    return first[keep], second[keep]


def _floor(values: Floats) -> Floats:
    return np.where(values < SMALL_NUMBER, SMALL_NUMBER, values)


class _Iteration:
    """The structure of a task as flat index arrays (built once) and the update rules of one round.

    Entries are the nonzero components of the judgement vectors (``v_*``), of the unit vectors
    (``s_*``: the unit's support), of each judgement's view of its unit (``e_*``: one entry per
    judgement and support component of its unit, for WUA), of pair products (``p_*``) and of the
    second vector of each pair (``q_*``).  Every round is a handful of ``np.bincount`` calls.
    """

    def __init__(self, vectors: JudgementVectors) -> None:
        self.v = vectors
        n_ann = len(vectors.annotations)
        self.n_units, self.n_workers, self.n_annotations = len(vectors.units), len(vectors.workers), n_ann
        unit_of, worker_of = vectors.unit_index, vectors.worker_index
        self.n_judgements = n_j = vectors.n_judgements
        matrix = sp.csr_matrix(vectors.matrix)
        matrix.sort_indices()
        coo = matrix.tocoo()
        self.v_row, self.v_col, self.v_data = coo.row.astype(np.int64), coo.col.astype(np.int64), coo.data
        # unit support: components with a nonzero raw count in the unit
        v_key = unit_of[self.v_row] * n_ann + self.v_col
        s_keys = np.unique(v_key)
        self.n_support = s_keys.size
        self.s_unit, self.s_col = s_keys // n_ann, s_keys % n_ann
        self.v_to_s = np.searchsorted(s_keys, v_key)
        # each judgement's view of its unit's support
        support_counts = np.bincount(self.s_unit, minlength=self.n_units)
        support_starts = np.concatenate(([0], np.cumsum(support_counts)[:-1]))
        sizes = support_counts[unit_of]
        self.e_j = np.repeat(np.arange(n_j), sizes)
        local = np.arange(self.e_j.size) - np.repeat(np.cumsum(sizes) - sizes, sizes)
        self.e_s = support_starts[unit_of[self.e_j]] + local
        self.e_col = self.s_col[self.e_s]
        self.e_worker = worker_of[self.e_j]
        e_key = self.e_j * n_ann + self.e_col
        self.e_own = np.zeros(self.e_j.size)
        self.e_own[np.searchsorted(e_key, self.v_row * n_ann + self.v_col)] = self.v_data
        # pairs
        first, second = _ordered_pairs(unit_of, self.n_units)
        self.first, self.second, self.pair_unit = first, second, unit_of[first]
        self.first_worker, self.second_worker = worker_of[first], worker_of[second]
        self.unordered = first < second
        product = sp.csr_matrix(matrix[first].multiply(matrix[second]))
        product.eliminate_zeros()
        product.sort_indices()
        p = product.tocoo()
        self.p_row, self.p_col, self.p_data = p.row.astype(np.int64), p.col.astype(np.int64), p.data
        q = sp.csr_matrix(matrix[second]).tocoo()
        self.q_row, self.q_col, self.q_data = q.row.astype(np.int64), q.col.astype(np.int64), q.data
        # worker pairs (ordered) that share a unit, for AQS
        pair_key = self.first_worker * self.n_workers + self.second_worker
        factorized, group_keys = pd.factorize(pair_key, sort=True)
        group_codes = np.asarray(factorized, dtype=np.int64)
        self.group_first = (np.asarray(group_keys) // self.n_workers).astype(np.int64)
        self.group_second = (np.asarray(group_keys) % self.n_workers).astype(np.int64)
        q_key = group_codes[self.q_row] * n_ann + self.q_col
        self.aqs_keys, self.q_code = np.unique(q_key, return_inverse=True)
        self.p_code = np.searchsorted(self.aqs_keys, group_codes[self.p_row] * n_ann + self.p_col)
        self.key_group, self.key_col = self.aqs_keys // n_ann, self.aqs_keys % n_ann

    def pair_cosines(self, aqs: Floats) -> Floats:
        norms = weighted_bincount(self.v_row, self.v_data * self.v_data * aqs[self.v_col], minlength=self.n_judgements)
        dots = weighted_bincount(self.p_row, self.p_data * aqs[self.p_col], minlength=self.first.size)
        cosines: Floats = dots / np.sqrt(norms[self.first] * norms[self.second])
        return cosines

    def uqs(self, cosines: Floats, wqs: Floats) -> Floats:
        mask = self.unordered
        weight = wqs[self.first_worker[mask]] * wqs[self.second_worker[mask]]
        numerator = weighted_bincount(self.pair_unit[mask], cosines[mask] * weight, minlength=self.n_units)
        denominator = weighted_bincount(self.pair_unit[mask], weight, minlength=self.n_units)
        return numerator / _floor(denominator)

    def wwa(self, cosines: Floats, wqs: Floats, uqs: Floats) -> Floats:
        weight = wqs[self.second_worker] * uqs[self.pair_unit]
        numerator = weighted_bincount(self.first_worker, cosines * weight, minlength=self.n_workers)
        denominator = weighted_bincount(self.first_worker, weight, minlength=self.n_workers)
        return numerator / _floor(denominator)

    def support_values(self, wqs: Floats) -> Floats:
        """The unit vectors weighted by ``wqs``, on the units' support entries."""
        weights = wqs[self.v.worker_index[self.v_row]] * self.v_data
        return weighted_bincount(self.v_to_s, weights, minlength=self.n_support)

    def wua(self, unit_values: Floats, aqs: Floats, wqs: Floats, uqs: Floats) -> Floats:
        own = self.e_own * wqs[self.e_worker]
        rest = unit_values[self.e_s] - own
        a = aqs[self.e_col]
        n = self.n_judgements
        numerator = weighted_bincount(self.e_j, a * own * rest, minlength=n)
        norm_own = weighted_bincount(self.e_j, a * own * own, minlength=n)
        norm_rest = weighted_bincount(self.e_j, a * rest * rest, minlength=n)
        scale = np.sqrt(norm_own * norm_rest)
        with np.errstate(divide="ignore", invalid="ignore"):
            cosines = np.where(scale < SMALL_NUMBER, SMALL_NUMBER, numerator / scale)
        w, weight = self.v.worker_index, uqs[self.v.unit_index]
        return weighted_bincount(w, cosines * weight, minlength=self.n_workers) / _floor(
            weighted_bincount(w, weight, minlength=self.n_workers)
        )

    def aqs(self, wqs: Floats, uqs: Floats) -> Floats:
        n_keys = self.aqs_keys.size
        denominator = weighted_bincount(self.q_code, self.q_data * uqs[self.pair_unit[self.q_row]], minlength=n_keys)
        numerator = weighted_bincount(self.p_code, self.p_data * uqs[self.pair_unit[self.p_row]], minlength=n_keys)
        positive = denominator > 0
        group, col = self.key_group[positive], self.key_col[positive]
        weight = wqs[self.group_first[group]] * wqs[self.group_second[group]]
        ratio = numerator[positive] / denominator[positive]
        aqs_numerator = weighted_bincount(col, weight * ratio, minlength=self.n_annotations)
        aqs_denominator = weighted_bincount(col, weight, minlength=self.n_annotations)
        with np.errstate(divide="ignore", invalid="ignore"):
            result = np.where(aqs_denominator > SMALL_NUMBER, aqs_numerator / aqs_denominator, SMALL_NUMBER)
        return _floor(result)

    def uas(self, wqs: Floats) -> sp.csr_matrix:
        """Units x annotations: the ``wqs``-weighted share of each unit's workers who chose each annotation."""
        weights = weighted_bincount(self.v.unit_index, wqs[self.v.worker_index], minlength=self.n_units)
        values = self.support_values(wqs) / _floor(weights)[self.s_unit]
        return sp.csr_matrix((values, (self.s_unit, self.s_col)), shape=(self.n_units, self.n_annotations))


def crowdtruth_metrics(
    vectors: JudgementVectors,
    *,
    stop_delta: float = STOP_DELTA,
    max_iterations: int = 10_000,
) -> CrowdTruthResult:
    """Run the CrowdTruth 2.0 fixed-point iteration on ``vectors`` (see the module docstring).

    Examples:
        Open-ended, one unit: w1 and w2 chose ``a``, w3 chose ``b``. Round 1 (all scores 1): cosines w1-w2 1, the
        others 0, so UQS ``= 1/3``; w1's WWA ``= (1 + 0) / 2``, its WUA ``= cos((1, 0), (1, 1)) = 1/√2``, WQS
        ``= 0.3536``. Round 2 weighs pairs by WQS: w3 has 0, so UQS and w1's, w2's WQS become 1 and stay there.

        >>> import pandas as pd
        >>> from posthoc.crowdtruth import build_vectors, crowdtruth_metrics
        >>> judgements = pd.DataFrame({"unit": ["s1", "s1", "s1"], "worker": ["w1", "w2", "w3"],
        ...                            "annotation": ["a", "a", "b"]})
        >>> result = crowdtruth_metrics(build_vectors(judgements))
        >>> result.units[["unit", "uqs", "uqs_initial"]].round(4)
          unit  uqs  uqs_initial
        0   s1  1.0       0.3333
        >>> result.workers[["worker", "wqs", "wqs_initial", "wwa_initial", "wua_initial"]].round(4)
          worker  wqs  wqs_initial  wwa_initial  wua_initial
        0     w1  1.0       0.3536          0.5       0.7071
        1     w2  1.0       0.3536          0.5       0.7071
        2     w3  0.0       0.0000          0.0       0.0000
        >>> result.converged
        True
    """
    state = _Iteration(vectors)
    ones_w = np.ones(state.n_workers)
    wqs: Floats = ones_w.copy()
    uqs: Floats = np.ones(state.n_units)
    aqs: Floats = np.ones(state.n_annotations)
    unit_values = state.support_values(ones_w)
    first: dict[str, Floats] = {}
    wwa: Floats = ones_w
    wua: Floats = ones_w
    iterations = 0
    max_delta = stop_delta
    while max_delta >= stop_delta and iterations < max_iterations:
        aqs_new = aqs if vectors.open_ended else state.aqs(wqs, uqs)
        cosines = state.pair_cosines(aqs)
        uqs_new = state.uqs(cosines, wqs)
        wwa = state.wwa(cosines, wqs, uqs)
        wua = state.wua(unit_values, aqs, wqs, uqs)
        wqs_new = wwa * wua
        max_delta = max(
            float(np.max(np.abs(aqs_new - aqs), initial=0.0)),
            float(np.max(np.abs(uqs_new - uqs), initial=0.0)),
            float(np.max(np.abs(wqs_new - wqs), initial=0.0)),
        )
        aqs, uqs, wqs = aqs_new, uqs_new, wqs_new
        unit_values = state.support_values(wqs)
        iterations += 1
        if iterations == 1:
            first = {"aqs": aqs, "uqs": uqs, "wqs": wqs, "wwa": wwa, "wua": wua}
    return _result(vectors, state, first, aqs, uqs, wqs, wwa, wua, iterations, converged=max_delta < stop_delta)


def _result(
    vectors: JudgementVectors,
    state: _Iteration,
    first: dict[str, Floats],
    aqs: Floats,
    uqs: Floats,
    wqs: Floats,
    wwa: Floats,
    wua: Floats,
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
    counts = sp.csr_matrix(unit_indicator(v) @ (v.matrix > 0).astype(float))
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
