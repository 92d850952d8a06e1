"""Replicates of a planned study: the sampling distribution of its posthoc precision, recall and agreement.

Paper 000 section 4 reports 95% intervals from "1000 bootstrap samples of the data"; the project
resamples documents within each dataset (:mod:`posthoc.metrics.bootstrap`). Such an interval estimates
how much the figures would vary if the study were run again on another sample of documents from the
same population, with other judgements. That is what a **replicate** here is: per dataset, as many
documents as the plan holds, drawn with replacement from the plan's documents, each copy judged afresh
by simulated judges (:func:`posthoc.study.planner.simulate.draw_outcomes`' model: shares per cell, a judge
gives the annotation's latent outcome with probability ``consistency``). The spread of the point
estimates over replicates is the sampling distribution the bootstrap approximates; ``1.96 x`` its sd is
the expected half-width, worked out exactly for precision and recall (:mod:`posthoc.study.planner.analytic`) and,
for agreement, the mean of the replicates' own plug-in bootstrap half-widths (:meth:`Replicates.summary`).
No bootstrap runs inside a replicate: a few hundred replicates cost a few seconds at the
paper's size, where a few hundred bootstraps of 1000 resamples would not.

:class:`StudyShape` is built once from the plan's judgements by the real scoring code
(:func:`posthoc.metrics.verification.verdicts_of`: annotations, their judges, cells, and the union's
keys); a replicate then only counts. The arithmetic is that of
:func:`posthoc.metrics.score.rates_with_intervals` and :func:`posthoc.metrics.reliability.reliability_from_verdicts`
(verified = more than half of the judges verify; precision = verified / judged; recall = verified /
size of the dataset's verification union; Fleiss' kappa on the annotations with the modal number of
judges; Krippendorff's alpha on all with two or more) and :meth:`StudyShape.statistics` is tested to
give the same numbers as those functions on the same judgements.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

import numpy as np
import pandas as pd

from posthoc.arrays import Bools, Floats, Ints
from posthoc.study.plan.keys import stream_rng
from posthoc.study.planner.rates import OutcomeRates
from posthoc.study.planner.shape import AGREEMENT_METRICS, StudyShape

Z95: Final = 1.959963984540054
#: the score job's bootstrap resamples (posthoc score --resamples), behind the achieved half-width's own noise
DEFAULT_RESAMPLES: Final = 1000
#: a cell is assured within 15% when this many sds of predicted / achieved fit in 15% (docs/study.md)
ASSURANCE_Z: Final = 4.0
SUMMARY_COLUMNS: Final = ("dataset", "system", "metric", "expected", "sd", "halfwidth", "halfwidth_mc_error",
                          "halfwidth_simulated", "p025", "p975", "achieved_noise", "assured_within_15",
                          "n_annotations", "runs")
#: annotation entries simulated at once (a block of replicates): bounds the memory to ~100 MB
BLOCK_ENTRIES: Final = 1_000_000


def _agreement_logs(shape: StudyShape, counts: Ints, copies: Ints, layout: tuple[Ints, Ints],
                    copy_run: Ints, n_runs: int) -> dict[str, Floats]:
    """Per run, the log plug-in sd of each dataset's agreement
    (:func:`posthoc.study.planner.analytic.agreement_log_sds`)."""
    from posthoc.study.planner.analytic import agreement_log_sds

    _, copy = layout
    entry_run = copy_run[copy]
    bounds = np.searchsorted(entry_run, np.arange(n_runs + 1))
    dataset = shape.doc_dataset[copies][copy]
    parts = [agreement_log_sds(counts[bounds[r]:bounds[r + 1]], dataset[bounds[r]:bounds[r + 1]],
                               copy[bounds[r]:bounds[r + 1]] - copy[bounds[r]] if bounds[r + 1] > bounds[r]
                               else copy[:0], len(shape.datasets)) for r in range(n_runs)]
    return {metric: np.vstack([part[metric] for part in parts]) for metric in AGREEMENT_METRICS}


def draw_counts(shares: Floats, judges: Ints, consistency: float, rng: np.random.Generator) -> Ints:
    """``(n, 3)`` verify / edit / remove judgements of ``n`` annotations judged ``judges`` times each.

    Each judge copies the annotation's latent outcome (drawn from ``shares``) with probability
    ``consistency``, else draws from ``shares`` (the model of :mod:`posthoc.study.planner.simulate`).
    """
    n = len(judges)
    cumulative = np.cumsum(shares, axis=1)[:, :2]
    if n and int(judges.max()) == 1:
        code = (rng.random(n)[:, None] > cumulative).sum(axis=1)
        out = np.zeros((n, 3), dtype=np.int64)
        out[np.arange(n), code] = 1
        return out
    latent = (rng.random(n)[:, None] > cumulative).sum(axis=1)
    copies = rng.binomial(judges, consistency)
    rest = judges - copies
    verify = rng.binomial(rest, shares[:, 0])
    left = rest - verify
    with np.errstate(divide="ignore", invalid="ignore"):
        edit_share = np.where(shares[:, 0] < 1, shares[:, 1] / np.maximum(1 - shares[:, 0], 1e-12), 0.0)
    edit = rng.binomial(left, np.clip(edit_share, 0.0, 1.0))
    out = np.stack([verify, edit, left - edit], axis=1).astype(np.int64)
    out[np.arange(n), latent] += copies
    return out


@dataclass(frozen=True)
class Replicates:
    """Point estimates of ``runs`` replicated studies: ``values[metric]`` is ``(runs, cells)`` (or datasets).

    ``log_halfwidths[metric]``: per replicate, the log of the half-width a bootstrap of it would give
    (precision and recall, :func:`posthoc.study.planner.analytic.plugin_log_halfwidths`); ``rates``: what the
    replicates' judges followed.
    """

    shape: StudyShape
    values: Mapping[str, Floats]
    selected: Bools
    rates: OutcomeRates = field(default_factory=OutcomeRates)
    log_halfwidths: Mapping[str, Floats] = field(default_factory=dict)
    n_resamples: int = DEFAULT_RESAMPLES

    def summary(self) -> pd.DataFrame:
        """One row a cell and metric: columns :data:`SUMMARY_COLUMNS`.

        Agreement rows (per dataset) have ``system`` ``*``. ``halfwidth``: for precision and recall the
        exact ``1.96 x sd`` of the replicates' distribution (:func:`posthoc.study.planner.analytic.ratio_moments`,
        ``halfwidth_mc_error`` 0); for agreement ``1.96 x`` the sd of the runs, with its Monte Carlo standard
        error ``halfwidth / sqrt(2 (runs - 1))`` (5% at 200 runs). ``halfwidth_simulated``: ``1.96 x`` the
        runs' sd for every row (the check of the exact figure). ``achieved_noise``: the relative sd of
        the half-width one study will achieve when scored (its bootstrap's ``n_resamples`` and its own
        judgements and documents; NaN for agreement, which has no plug-in variance); ``assured_within_15``:
        whether ``ASSURANCE_Z`` times the relative sd of predicted / achieved is at most 15%
        (docs/study.md, "How far it can be trusted").
        """
        from posthoc.study.planner.analytic import bootstrap_noise, ratio_moments

        parts = []
        n_cells = self.shape.annotations_per_cell(self.selected)
        exact = ratio_moments(self.shape, self.shape.shares(self.rates)[:, 0], self.rates.consistency,
                              self.selected)
        resampling = bootstrap_noise(self.n_resamples)
        for metric, samples in self.values.items():
            per_dataset = metric in AGREEMENT_METRICS
            if per_dataset:
                labels = pd.DataFrame({"dataset": list(self.shape.datasets), "system": "*"})
                sizes = np.bincount(self.shape.cells["dataset"].map({d: i for i, d in enumerate(self.shape.datasets)})
                                    .to_numpy(), weights=n_cells, minlength=len(self.shape.datasets))
            else:
                labels = self.shape.cells.astype(str).reset_index(drop=True)
                sizes = n_cells
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                sd = np.nanstd(samples, axis=0, ddof=1) if len(samples) > 1 else np.full(samples.shape[1], np.nan)
                expected = np.nanmean(samples, axis=0)
                low, high = np.nanquantile(samples, [0.025, 0.975], axis=0)
                logs = self.log_halfwidths.get(metric)
                spread = (np.nanstd(logs, axis=0, ddof=1) if logs is not None and len(logs) > 1
                          else np.full(samples.shape[1], np.nan))
            simulated = Z95 * sd
            if metric in exact:
                halfwidth, error = Z95 * exact[metric][1], np.zeros(len(sd))
            elif logs is not None and len(logs) > 1:
                # agreement: the mean over runs of the half-width a bootstrap of each would give
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    plugin = np.exp(logs)
                    halfwidth = Z95 * np.nanmean(plugin, axis=0)
                    error = Z95 * np.nanstd(plugin, axis=0, ddof=1) / np.sqrt(np.sum(np.isfinite(plugin), axis=0))
            else:
                # the standard error of a standard deviation from n normal draws is sd / sqrt(2 (n - 1))
                halfwidth, error = simulated, simulated / np.sqrt(2 * max(len(samples) - 1, 1))
            noise = np.sqrt(spread**2 + resampling**2)
            with np.errstate(divide="ignore", invalid="ignore"):
                total = np.sqrt(noise**2 + (error / halfwidth) ** 2)
            parts.append(labels.assign(metric=metric, expected=expected, sd=halfwidth / Z95, halfwidth=halfwidth,
                                       halfwidth_mc_error=error, halfwidth_simulated=simulated, p025=low,
                                       p975=high, achieved_noise=noise,
                                       assured_within_15=np.nan_to_num(ASSURANCE_Z * total, nan=np.inf) <= 0.15,
                                       n_annotations=sizes.astype("int64"), runs=len(samples)))
        table = pd.concat(parts, ignore_index=True)
        return table[list(SUMMARY_COLUMNS)]


def document_order(shape: StudyShape, seed: int) -> Ints:
    """A seeded random rank of every document within its dataset (the sample of n documents is rank < n)."""
    rng = stream_rng(seed, "document-sample")
    rank = np.empty(len(shape.doc_keys), dtype=np.int64)
    for d in range(len(shape.datasets)):
        members = np.flatnonzero(shape.doc_dataset == d)
        rank[members[rng.permutation(len(members))]] = np.arange(len(members))
    return rank


def replicate_study(shape: StudyShape, rates: OutcomeRates, *, runs: int = 200, seed: int = 0,
                    selected: Bools | None = None, agreement: bool | None = None,
                    n_resamples: int = DEFAULT_RESAMPLES, progress: bool = False,
                    desc: str = "simulated studies") -> Replicates:
    """``runs`` replicates of the study on the ``selected`` documents (a boolean mask; all by default).

    Seeded: the same shape, rates, runs and seed give the same numbers. ``agreement`` defaults to
    ``k > 1``; ``n_resamples``: the bootstrap resamples the study will be scored with (its achieved
    half-width's own noise, :meth:`Replicates.summary`).
    """
    from tqdm import tqdm

    from posthoc.study.planner.analytic import plugin_log_halfwidths

    selected = np.ones(len(shape.doc_keys), dtype=bool) if selected is None else np.asarray(selected, dtype=bool)
    agreement = shape.k > 1 if agreement is None else agreement
    shares = shape.shares(rates)
    single = bool(len(shape.judges)) and int(shape.judges.max()) == 1
    rng = stream_rng(seed, "replicates")
    members = [np.flatnonzero(selected & (shape.doc_dataset == d)) for d in range(len(shape.datasets))]
    collected: dict[str, list[Floats]] = {}
    logs: dict[str, list[Floats]] = {}
    per_run = max(1, int(np.sum(shape.doc_count[selected])))
    block = max(1, min(runs, BLOCK_ENTRIES // per_run))
    with tqdm(total=runs, desc=desc, unit=" study", disable=not progress, leave=False) as bar:
        for first in range(0, runs, block):
            n_runs = min(block, runs - first)
            draws = [m[rng.integers(0, len(m), (n_runs, len(m)))] for m in members if len(m)]
            copies = np.hstack(draws).ravel() if draws else np.zeros(0, dtype=np.int64)
            copy_run = np.repeat(np.arange(n_runs), len(copies) // n_runs) if len(copies) else copies
            layout = shape.expand(copies)
            annotation = layout[0]
            if single:  # one judge an annotation: verified with the cell's verify share
                verified = rng.random(len(annotation)) < shares[annotation, 0]
                counts = None
            else:
                counts = draw_counts(shares[annotation], shape.judges[annotation], rates.consistency, rng)
                verified = 2 * counts[:, 0] > counts.sum(axis=1)
            statistics = shape.statistics(copies, verified, counts if agreement else None, layout=layout,
                                          copy_run=copy_run, n_runs=n_runs)
            for metric, value in statistics.items():
                collected.setdefault(metric, []).append(value)
            if len(copies):
                found = plugin_log_halfwidths(shape, copies, verified, statistics, layout=layout, copy_run=copy_run,
                                              n_runs=n_runs)
                if agreement and counts is not None:
                    found.update(_agreement_logs(shape, counts, copies, layout, copy_run, n_runs))
                for metric, value in found.items():
                    logs.setdefault(metric, []).append(value)
            bar.update(n_runs)
    values = {metric: np.vstack(rows) for metric, rows in collected.items()}
    return Replicates(shape=shape, values=values, selected=selected, rates=rates,
                      log_halfwidths={metric: np.vstack(rows) for metric, rows in logs.items()},
                      n_resamples=n_resamples)
