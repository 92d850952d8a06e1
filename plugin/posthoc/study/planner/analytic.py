"""Expected half-widths of posthoc precision and recall worked out exactly from the plan: no Monte Carlo error.

The replicates of :mod:`posthoc.study.planner.replicates` draw, per dataset, as many documents as the plan
holds with replacement and judge every copy afresh; the expected 95% half-width is ``1.96 x`` the sd of
the point estimate over such replicates. For precision and recall that sd has a closed form (the delta
method for a ratio of sums over resampled units, the same linearisation behind the bootstrap's own
variance, paper 000 section 4), so the planner need not estimate it from a few hundred runs, whose
Monte Carlo error (``1.96 sd / sqrt(2 (runs - 1))``, 5% at 200 runs) was a third of the 15% the
estimate promises.

Under the simulator's model (:mod:`posthoc.study.planner.simulate`) annotation ``i`` is verified (more than half
of its ``m_i`` judges verify) with probability

    q_i = v P(Bin(m_i, a + (1 - a) v) > m_i / 2) + (1 - v) P(Bin(m_i, (1 - a) v) > m_i / 2)

(``v`` its cell's verify share, ``a`` the judge consistency; ``q_i = v`` for one judge), independently
of every other annotation. A statistic of cell ``c`` is ``R = sum_d A_d / sum_d B_d`` over the documents
``d`` of its dataset (``A_d``: verified annotations of ``c`` in ``d``; ``B_d``: annotations of ``c`` in ``d``
for precision, verification-union keys of ``d`` with a verified annotation for recall). With ``N``
documents drawn uniformly with replacement and ``Z_d = A_d - r B_d`` (``r = sum E A_d / sum E B_d``)

    Var R = sum_d (Var(Z_d) + E(Z_d)^2) / (sum_d E B_d)^2

where, per union key ``j`` of ``d`` with verified-anywhere probability ``u_j = 1 - prod (1 - q_i)``,
``Var(Z_d) = sum q_i (1 - q_i) + r^2 sum u_j (1 - u_j) - 2 r sum_i q_i (1 - u_j(i))`` for recall (the
last two terms vanish for precision) and ``E(Z_d) = sum q_i - r E B_d`` carries the documents' different
mixes of annotations. The first-order (delta-method) error is ``O(1/n)`` relative: under 0.1% for the
cells of a real study (tested against 4000 simulated replicates).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from scipy.stats import binom

from posthoc.arrays import Bools, Floats, Ints, weighted_bincount

if TYPE_CHECKING:
    from posthoc.study.planner.shape import StudyShape


def verified_probability(verify: Floats, judges: Ints, consistency: float) -> Floats:
    """``q_i``: the probability that more than half of an annotation's ``judges`` verify it (module docstring)."""
    verify = np.asarray(verify, dtype=float)
    judges = np.asarray(judges, dtype=np.int64)
    out = verify.copy()
    several = judges > 1
    if several.any():
        m, v = judges[several], verify[several]
        needed = m // 2  # P(X > m / 2) = sf(floor(m / 2))
        agree = consistency + (1 - consistency) * v
        differ = (1 - consistency) * v
        out[several] = v * binom.sf(needed, m, agree) + (1 - v) * binom.sf(needed, m, differ)
    return out


def ratio_moments(shape: StudyShape, verify: Floats, consistency: float,
                  selected: Bools | None = None) -> dict[str, tuple[Floats, Floats]]:
    """``{metric: (expected, sd)}`` per cell of posthoc precision and recall over the replicates.

    ``verify``: each annotation's verify share (``shape.shares(rates)[:, 0]``); ``selected``: the
    documents in the study (all by default). A cell without annotations (or a dataset without a verified
    annotation possible) gives NaN, as the replicates do.
    """
    n_cells, n_docs = len(shape.cells), len(shape.doc_keys)
    keep = np.ones(n_docs, dtype=bool) if selected is None else np.asarray(selected, dtype=bool)
    mine = keep[shape.doc]
    q = verified_probability(verify, shape.judges, consistency)[mine]
    cell, doc = shape.cell[mine], shape.doc[mine]
    union_base = np.cumsum(shape.doc_unions) - shape.doc_unions
    key = union_base[doc] + shape.local_union[mine]
    n_keys = int(shape.doc_unions.sum())
    with np.errstate(divide="ignore"):
        log_none = np.bincount(key, weights=np.log1p(-np.minimum(q, 1.0)), minlength=n_keys)
    u = 1.0 - np.exp(log_none)  # P(a key is verified by some annotation), 0 for keys of unselected documents
    key_doc = np.repeat(np.arange(n_docs), shape.doc_unions)
    u_sum = np.bincount(key_doc, weights=u, minlength=n_docs)
    u_var = np.bincount(key_doc, weights=u * (1 - u), minlength=n_docs)

    flat = doc * n_cells + cell
    size = n_docs * n_cells

    def per_doc_cell(weights: Floats | None) -> Floats | Ints:
        return np.bincount(flat, weights=weights, minlength=size).reshape(n_docs, n_cells)

    count = per_doc_cell(None).astype(float)
    q_sum = per_doc_cell(q)
    q_var = per_doc_cell(q * (1 - q))
    covariance = per_doc_cell(q * (1 - u[key]))
    in_cell_dataset = (shape.doc_dataset[:, None] == shape.cell_dataset[None, :]) & keep[:, None]

    out: dict[str, tuple[Floats, Floats]] = {}
    with np.errstate(divide="ignore", invalid="ignore"):
        for metric in ("posthoc_precision", "posthoc_recall"):
            denominator = count if metric == "posthoc_precision" else np.where(in_cell_dataset, u_sum[:, None], 0.0)
            total = denominator.sum(axis=0)
            r = q_sum.sum(axis=0) / total
            mean_z = q_sum - r * denominator
            var_z = q_var.copy()
            if metric == "posthoc_recall":
                var_z += np.where(in_cell_dataset, r**2 * u_var[:, None], 0.0) - 2 * r * covariance
            variance = (var_z + mean_z**2).sum(axis=0) / total**2
            sd = np.sqrt(np.maximum(variance, 0.0))
            defined = total > 0
            out[metric] = (np.where(defined, r, np.nan), np.where(defined, sd, np.nan))
    return out


#: relative sd of a percentile bootstrap half-width from its own resamples, per 1 / sqrt(resamples)
#: (normal approximation: the 2.5% and 97.5% order statistics, sqrt(p (1 - 2p) / 2) / (phi(z) z), p = 0.025)
def bootstrap_noise(n_resamples: int, *, confidence: float = 0.95) -> float:
    """Relative sd of a percentile-bootstrap half-width due to its ``n_resamples`` alone (3.0% at 1000)."""
    from scipy.stats import norm

    tail = (1 - confidence) / 2
    z = float(norm.ppf(1 - tail))
    return float(np.sqrt(tail * (1 - 2 * tail) / (2 * n_resamples)) / (norm.pdf(z) * z))


def plugin_log_halfwidths(shape: StudyShape, doc_copies: Ints, verified: Bools,
                          values: dict[str, Floats], *, layout: tuple[Ints, Ints],
                          copy_run: Ints, n_runs: int) -> dict[str, Floats]:
    """Per replicate, ``log`` of the half-width a bootstrap of that replicate would give, ``(n_runs, cells)``.

    The bootstrap's variance of a ratio of sums over documents is, to first order, the plug-in
    ``sum_d (A_d - R B_d)^2 / (sum_d B_d)^2`` of the study's own counts (``R`` its estimate); its spread
    over replicates is how much one study's achieved half-width moves with its judgements and documents
    (the bootstrap's own resampling noise comes on top, :func:`bootstrap_noise`). ``values``: the
    replicates' precision and recall (:meth:`StudyShape.statistics`), copies of a run consecutive.
    """
    annotation, copy = layout
    n_cells, n_copies = len(shape.cells), len(doc_copies)
    key = copy * n_cells + shape.cell[annotation]
    verified_count = np.bincount(key, weights=verified, minlength=n_copies * n_cells).reshape(n_copies, n_cells)
    judged = np.bincount(key, minlength=n_copies * n_cells).reshape(n_copies, n_cells).astype(float)
    copy_unions = shape.doc_unions[doc_copies]
    union_base = np.cumsum(copy_unions) - copy_unions
    slot = union_base[copy] + shape.local_union[annotation]
    in_union = np.bincount(slot, weights=verified, minlength=int(copy_unions.sum())) > 0
    union = np.add.reduceat(in_union, union_base).astype(float) if len(in_union) else np.zeros(n_copies)
    same_dataset = shape.doc_dataset[doc_copies][:, None] == shape.cell_dataset[None, :]
    starts = np.searchsorted(copy_run, np.arange(n_runs))
    out: dict[str, Floats] = {}
    with np.errstate(divide="ignore", invalid="ignore"):
        for metric, denominator in (("posthoc_precision", judged),
                                    ("posthoc_recall", np.where(same_dataset, union[:, None], 0.0))):
            estimate = np.nan_to_num(values[metric])[copy_run]
            squares = np.add.reduceat((verified_count - estimate * denominator) ** 2, starts, axis=0)
            totals = np.add.reduceat(denominator, starts, axis=0)
            logs = 0.5 * np.log(squares) - np.log(totals)
            out[metric] = np.where(np.isfinite(logs), logs, np.nan)
    return out


def agreement_log_sds(counts: Ints, dataset: Ints, copy: Ints,
                      n_datasets: int) -> dict[str, Floats]:
    """One replicate's ``log`` plug-in bootstrap sd of Fleiss' kappa and Krippendorff's alpha, per dataset.

    ``counts``: ``(n, 3)`` judgements of each annotation entry, ``dataset`` / ``copy``: its dataset and
    document copy. Both statistics are functions ``f`` of sums over documents (kappa: the agreement of
    the items with the modal number of judges, their number, per-category judgements and judges; alpha:
    the disagreement of items with two judges or more and the per-category judgements), of degree 0, so the
    bootstrap's variance over documents is to first order ``sum_d (grad f . t_d)^2`` (``t_d``: document
    ``d``'s sums). NaN where the statistic is undefined (as :func:`posthoc.study.planner.replicates._agreement`).
    """
    judges = counts.sum(axis=1)
    squares = (counts.astype(float) ** 2).sum(axis=1)
    kappa = np.full(n_datasets, np.nan)
    alpha = np.full(n_datasets, np.nan)
    n_copies = int(copy.max()) + 1 if len(copy) else 0

    def per_copy(mask: Bools, weights: Floats) -> Floats:
        return weighted_bincount(copy[mask], weights, minlength=n_copies)

    for d in range(n_datasets):
        mine = (dataset == d) & (judges >= 2)
        if not mine.any():
            continue
        sizes, frequency = np.unique(judges[mine], return_counts=True)
        modal = int(sizes[frequency == frequency.max()].max())
        same = mine & (judges == modal)
        agreement = (squares[same] - modal) / (modal * (modal - 1))
        s_c, m_c = per_copy(same, agreement), per_copy(same, np.ones(int(same.sum())))
        c_c = np.stack([per_copy(same, counts[same, j].astype(float)) for j in range(3)], axis=1)
        t_c = m_c * modal
        p_bar = s_c.sum() / m_c.sum()
        p_j = c_c.sum(axis=0) / t_c.sum()
        chance = float((p_j**2).sum())
        if chance < 1.0:
            influence = ((s_c - p_bar * m_c) / m_c.sum() / (1 - chance)
                         + (p_bar - 1) / (1 - chance) ** 2 * ((2 * p_j) * (c_c - np.outer(t_c, p_j))).sum(axis=1)
                         / t_c.sum())
            kappa[d] = 0.5 * np.log((influence**2).sum())
        m = judges[mine].astype(float)
        o_c = per_copy(mine, (m * m - squares[mine]) / (m - 1))
        g_c = np.stack([per_copy(mine, counts[mine, j].astype(float)) for j in range(3)], axis=1)
        observed, margins = o_c.sum(), g_c.sum(axis=0)
        n = margins.sum()
        expected = (n * n - (margins**2).sum()) / (n - 1)
        if expected > 0:
            d_expected = ((2 * n - 2 * margins) * (n - 1) - (n * n - (margins**2).sum())) / (n - 1) ** 2
            present = np.unique(copy[dataset == d])  # the dataset's copies: centre their sums (f is of degree ~0)
            o_d, g_d = o_c[present], g_c[present]
            o_d, g_d = o_d - o_d.mean(), g_d - g_d.mean(axis=0)
            influence = -o_d / expected + observed / expected**2 * (g_d @ d_expected)
            alpha[d] = 0.5 * np.log((influence**2).sum())
    with np.errstate(divide="ignore"):
        return {"fleiss_kappa": np.where(np.isfinite(kappa), kappa, np.nan),
                "krippendorff_alpha": np.where(np.isfinite(alpha), alpha, np.nan)}
