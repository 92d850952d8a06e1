"""How many chunks of a system added to a study to judge: ``--fraction`` or ``--target-halfwidth`` (issue 46).

The new system's posthoc precision is ``P = (V_R + V_N) / M`` over its ``M`` placed annotations: ``V_R`` the
verified ones among the ``R`` reused (their verdicts are the study's), ``V_N`` among the ``N = M - R`` novel ones,
which lie in ``C`` chunks (``m = N / C`` a chunk on average, ``m_i`` in chunk ``i``). A simple random sample of
``n`` of the ``C`` chunks is judged (:func:`posthoc.study.plan.add_system.sample_chunks`), and ``V_N`` estimated
by ``N`` times the verified share of the sampled chunks' novel annotations (the ratio estimator of a cluster
sample; prediction-powered inference with a good predictor of the verdict only narrows it, so the planned sample
is an upper bound for it). Its variance is ``(1 - n / C) / (n m^2)`` times the variance of ``t_i - P_N m_i``
over chunks (Cochran, *Sampling Techniques*, 3rd ed., 1977, sections 6.4 and 9.6); with verdicts of one chunk
correlated ``rho``, that is ``m p (1 - p) deff``, so the 95% half-width is::

    h(n) = z * (N / M) * sqrt((1 - n / C) * deff * p * (1 - p) / (n * m)),   deff = 1 + (m_w - 1) * rho

with ``m_w = sum(m_i^2) / sum(m_i)`` the size-weighted chunk size (``m`` when every chunk holds as many).

with ``p`` the probability that a novel annotation is verified (by the majority of the study's ``k`` judges,
:func:`posthoc.study.planner.analytic.verified_probability`, from the study's outcome rates: its judgements table
through :func:`posthoc.study.planner.rates.rates_from_pilot`, else paper 000's rates) and ``rho`` the
intra-chunk correlation of the verdicts, from the same judgements (:func:`chunk_correlation`, one-way ANOVA over
tasks; 0 without judgements). :func:`chunks_for_halfwidth` is the smallest ``n`` (at least two chunks, for a
variance) with ``h(n)`` at most the target; ``h(C) = 0``: every novel chunk judged leaves only the reused
verdicts. The reused verdicts count as exact here (their own judge noise is the study's).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from posthoc.errors import PosthocInputError
from posthoc.study.planner.analytic import verified_probability
from posthoc.study.planner.rates import OutcomeRates

Z95 = 1.959963984540054


@dataclass(frozen=True)
class AddedDesign:
    """What the half-width of an added system's posthoc precision depends on (module docstring)."""

    annotations: int
    novel: int
    novel_chunks: int
    verified: float
    correlation: float = 0.0
    #: ``sum(m_i^2) / sum(m_i)`` over the novel chunks; ``None``: every chunk holds ``N / C``
    weighted_size: float | None = None

    @property
    def design_effect(self) -> float:
        """``1 + (m_w - 1) rho`` (module docstring)."""
        per_chunk = self.novel / self.novel_chunks if self.novel_chunks else 0.0
        size = per_chunk if self.weighted_size is None else self.weighted_size
        return 1.0 + max(size - 1.0, 0.0) * self.correlation

    def halfwidth(self, n: int) -> float:
        """``h(n)`` of the module docstring: the 95% half-width with ``n`` of the novel chunks judged.

        Examples:
            100 annotations, 60 novel in 20 chunks, p = 0.9, rho = 0: ``1.96 * 0.6 * sqrt(0.5 * 0.09 / 30)``.

            >>> round(AddedDesign(100, 60, 20, 0.9).halfwidth(10), 5)
            0.04555
        """
        if not self.novel_chunks or not self.novel:
            return 0.0
        if not 0 < n <= self.novel_chunks:
            raise PosthocInputError(f"cannot judge {n} of {self.novel_chunks} chunks")
        per_chunk = self.novel / self.novel_chunks
        variance = (1 - n / self.novel_chunks) * self.design_effect * self.verified * (1 - self.verified) / (
            n * per_chunk)
        return Z95 * self.novel / self.annotations * math.sqrt(max(variance, 0.0))


def weighted_size(sizes: Sequence[int]) -> float:
    """``sum(m_i^2) / sum(m_i)``: the chunk size an annotation sees on average.

    Examples:
        >>> weighted_size([1, 3]), weighted_size([2, 2])
        (2.5, 2.0)
    """
    values = np.asarray(sizes, dtype=float)
    return float((values**2).sum() / values.sum()) if values.sum() else 0.0


def chunks_for_fraction(novel_chunks: int, fraction: float) -> int:
    """``ceil(fraction * C)`` chunks (at least one when there is any).

    Examples:
        >>> chunks_for_fraction(20, 0.25), chunks_for_fraction(21, 0.25), chunks_for_fraction(3, 0.01)
        (5, 6, 1)
    """
    if not 0 < fraction <= 1:
        raise PosthocInputError(f"--fraction must be in (0, 1], got {fraction}")
    if novel_chunks == 0:
        return 0
    return min(novel_chunks, max(1, math.ceil(fraction * novel_chunks - 1e-9)))


def chunks_for_halfwidth(design: AddedDesign, target: float) -> int:
    """The fewest novel chunks (at least ``min(2, C)``) whose judgement brings ``h(n)`` to ``target`` or under.

    Examples:
        The docstring's case at a target of 0.05: ``h(9) = 0.0503``, ``h(10) = 0.0455``.

        >>> chunks_for_halfwidth(AddedDesign(100, 60, 20, 0.9), 0.05)
        10
    """
    if not 0 < target < 1:
        raise PosthocInputError(f"--target-halfwidth must be between 0 and 1 (e.g. 0.05), got {target}")
    for n in range(min(2, design.novel_chunks), design.novel_chunks + 1):
        if n and design.halfwidth(n) <= target:
            return n
    return design.novel_chunks


def verified_share(rates: OutcomeRates, k: int) -> float:
    """``p``: the probability that the majority of ``k`` judges verify an annotation at the rates' pooled shares.

    Examples:
        >>> verified_share(OutcomeRates(), 1)
        0.893
    """
    value = verified_probability(np.array([rates.default[0]]), np.array([k]), rates.consistency)
    return float(value[0])


def chunk_correlation(judgements: pd.DataFrame) -> float:
    """The intra-task correlation of ``outcome == "verify"`` over real tasks (one-way ANOVA estimator, clipped
    to [0, 1]; 0 when it cannot be estimated): a task is one chunk of one system.

    Examples:
        Two tasks, one all verified and one all edited: the verdicts of a chunk go together.

        >>> frame = pd.DataFrame({"task_key": list("aaabbb"), "outcome": ["verify"] * 3 + ["edit"] * 3})
        >>> chunk_correlation(frame)
        1.0
    """
    rows = judgements
    if "is_control" in rows.columns:
        rows = rows.loc[~rows["is_control"].astype(str).str.lower().isin(["true", "1"]).to_numpy()]
    y = (rows["outcome"].astype(str) == "verify").astype(float)
    groups = y.groupby(rows["task_key"].astype(str).to_numpy())
    sizes, means = groups.size().to_numpy(dtype=float), groups.mean().to_numpy()
    total, g = float(sizes.sum()), len(sizes)
    if g < 2 or total <= g:
        return 0.0
    grand = float(y.mean())
    between = float((sizes * (means - grand) ** 2).sum()) / (g - 1)
    within = float(((y - groups.transform("mean")) ** 2).sum()) / (total - g)
    size0 = (total - float((sizes**2).sum()) / total) / (g - 1)
    denominator = between + (size0 - 1) * within
    if denominator <= 0:
        return 0.0
    return float(min(max((between - within) / denominator, 0.0), 1.0))
