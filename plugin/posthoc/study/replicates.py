"""Replicates of a planned study: the sampling distribution of its posthoc precision, recall and agreement.

Paper 000 section 4 reports 95% intervals from "1000 bootstrap samples of the data"; the project
resamples documents within each dataset (:mod:`posthoc.metrics.bootstrap`). Such an interval estimates
how much the figures would vary if the study were run again on another sample of documents from the
same population, with other judgements. That is what a **replicate** here is: per dataset, as many
documents as the plan holds, drawn with replacement from the plan's documents, each copy judged afresh
by simulated judges (:func:`posthoc.study.simulate.draw_outcomes`' model: shares per cell, a judge
gives the annotation's latent outcome with probability ``consistency``). The spread of the point
estimates over replicates is the sampling distribution the bootstrap approximates; ``1.96 x`` its sd is
the expected half-width, worked out exactly for precision and recall (:mod:`posthoc.study.analytic`) and,
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
from dataclasses import dataclass, field, replace
from typing import Final

import numpy as np
import pandas as pd

from posthoc.metrics.inputs import ANNOTATION, judged_rows
from posthoc.metrics.verification import verdicts_of
from posthoc.study.keys import stream_rng
from posthoc.study.rates import OutcomeRates

Z95: Final = 1.959963984540054
METRICS: Final = ("posthoc_precision", "posthoc_recall")
AGREEMENT_METRICS: Final = ("fleiss_kappa", "krippendorff_alpha")
#: the score job's bootstrap resamples (posthoc score --resamples), behind the achieved half-width's own noise
DEFAULT_RESAMPLES: Final = 1000
#: a cell is assured within 15% when this many sds of predicted / achieved fit in 15% (docs/study.md)
ASSURANCE_Z: Final = 4.0
SUMMARY_COLUMNS: Final = ("dataset", "system", "metric", "expected", "sd", "halfwidth", "halfwidth_mc_error",
                          "halfwidth_simulated", "p025", "p975", "achieved_noise", "assured_within_15",
                          "n_annotations", "runs")
#: annotation entries simulated at once (a block of replicates): bounds the memory to ~100 MB
BLOCK_ENTRIES: Final = 1_000_000


@dataclass(frozen=True)
class StudyShape:
    """The annotations of a planned study as the scoring code sees them, sorted by document.

    ``cells``: ``dataset, system`` (sorted); per annotation ``cell``, ``doc`` (index into ``doc_keys``),
    ``local_union`` (its union key's index within its document), ``judges``; per document
    ``doc_dataset``, ``doc_first`` / ``doc_count`` (its annotations' range) and ``doc_unions``; per cell
    ``cell_dataset``; ``annotations``: each annotation's ``dataset, doc_id, system, start, end, link``.
    """

    cells: pd.DataFrame
    datasets: tuple[str, ...]
    doc_keys: pd.DataFrame
    cell: np.ndarray
    doc: np.ndarray
    local_union: np.ndarray
    judges: np.ndarray
    doc_dataset: np.ndarray
    doc_first: np.ndarray
    doc_count: np.ndarray
    doc_unions: np.ndarray
    cell_dataset: np.ndarray
    k: int
    annotations: pd.DataFrame

    @classmethod
    def from_judgements(cls, judgements: pd.DataFrame, *, k: int = 1) -> StudyShape:
        """From a judgements table (control rows ignored; outcomes may be empty): ``k`` judges an item."""
        frame = judgements.assign(outcome="verify") if judgements["outcome"].isna().any() else judgements
        rows = judged_rows(frame).reset_index(drop=True)
        verdicts, _ = verdicts_of(rows)
        verdicts = verdicts.sort_values(["dataset", "doc_id", "system", "start", "end", "link"], kind="stable")
        verdicts = verdicts.reset_index(drop=True)
        cells = verdicts[["dataset", "system"]].drop_duplicates().sort_values(["dataset", "system"])
        cells = cells.reset_index(drop=True)
        cell = pd.MultiIndex.from_frame(cells).get_indexer(pd.MultiIndex.from_frame(verdicts[["dataset", "system"]]))
        doc_frame = verdicts[["dataset", "doc_id"]]
        doc_codes = doc_frame.groupby(["dataset", "doc_id"], sort=True).ngroup().to_numpy()
        doc_keys = doc_frame.drop_duplicates().reset_index(drop=True)
        datasets = tuple(sorted(set(doc_keys["dataset"].astype(str))))
        doc_dataset = pd.Index(datasets).get_indexer(pd.Index(doc_keys["dataset"].astype(str)))
        cell_dataset = pd.Index(datasets).get_indexer(pd.Index(cells["dataset"].astype(str)))
        union_codes = verdicts.groupby(list(ANNOTATION), sort=True).ngroup().to_numpy()
        n_docs = len(doc_keys)
        doc_count = np.bincount(doc_codes, minlength=n_docs)
        doc_first = np.concatenate([[0], np.cumsum(doc_count)[:-1]]).astype(np.int64)
        # union keys are sorted by (dataset, doc_id, ...), so each document's keys are consecutive
        first_union = np.full(n_docs, np.iinfo(np.int64).max)
        np.minimum.at(first_union, doc_codes, union_codes)
        local_union = union_codes - first_union[doc_codes]
        doc_unions = np.zeros(n_docs, dtype=np.int64)
        np.maximum.at(doc_unions, doc_codes, local_union + 1)
        return cls(cells=cells, datasets=datasets, doc_keys=doc_keys, cell=cell.astype(np.int64),
                   doc=doc_codes.astype(np.int64), local_union=local_union.astype(np.int64),
                   judges=verdicts["n_judges"].to_numpy(dtype=np.int64), doc_dataset=doc_dataset.astype(np.int64),
                   doc_first=doc_first, doc_count=doc_count.astype(np.int64), doc_unions=doc_unions,
                   cell_dataset=cell_dataset.astype(np.int64), k=k,
                   annotations=verdicts[["dataset", "doc_id", "system", "start", "end", "link"]])

    def with_judges(self, k: int) -> StudyShape:
        """The same study with ``k`` judges an item instead of :attr:`k`."""
        return replace(self, judges=self.judges // self.k * k, k=k)

    def shares(self, rates: OutcomeRates) -> np.ndarray:
        """``(annotations, 3)`` outcome shares of every annotation's cell."""
        per_cell = rates.shares_for(self.cells["dataset"].to_numpy(), self.cells["system"].to_numpy())
        return per_cell[self.cell]

    def annotations_per_cell(self, selected: np.ndarray | None = None) -> np.ndarray:
        """Annotations of each cell in the selected documents (all by default)."""
        keep = np.ones(len(self.cell), dtype=bool) if selected is None else selected[self.doc]
        return np.bincount(self.cell[keep], minlength=len(self.cells))

    def statistics(self, doc_copies: np.ndarray, verified: np.ndarray, counts: np.ndarray | None = None,
                   *, layout: tuple[np.ndarray, np.ndarray] | None = None,
                   copy_run: np.ndarray | None = None, n_runs: int = 1) -> dict[str, np.ndarray]:
        """Point estimates of replicated studies, ``(n_runs, cells)`` (``(n_runs, datasets)`` for agreement).

        ``doc_copies``: the document of each copy, the copies of run ``r`` where ``copy_run == r`` (all in
        run 0 by default) and consecutive; ``verified``: whether each annotation of each copy is verified
        (more than half of its judges verify), in copy then annotation order (as :meth:`expand` lays them
        out; pass its result as ``layout`` if already computed). Returns ``posthoc_precision`` and
        ``posthoc_recall`` per cell and, when ``counts`` (``(n, 3)`` verify / edit / remove judgements) are
        given, ``fleiss_kappa`` and ``krippendorff_alpha`` per dataset (NaN where undefined).
        """
        annotation, copy = self.expand(doc_copies) if layout is None else layout
        run = np.zeros(len(doc_copies), dtype=np.int64) if copy_run is None else copy_run
        n_cells, n_datasets = len(self.cells), len(self.datasets)
        cell = run[copy] * n_cells + self.cell[annotation]
        numerator = np.bincount(cell, weights=verified, minlength=n_runs * n_cells)
        denominator = np.bincount(cell, minlength=n_runs * n_cells)
        copy_unions = self.doc_unions[doc_copies]
        union_base = np.cumsum(copy_unions) - copy_unions
        slot = union_base[copy] + self.local_union[annotation]
        in_union = np.bincount(slot, weights=verified, minlength=int(copy_unions.sum())) > 0
        per_copy = np.add.reduceat(in_union, union_base) if len(in_union) else np.zeros(0)
        union_size = np.bincount(run * n_datasets + self.doc_dataset[doc_copies], weights=per_copy,
                                 minlength=n_runs * n_datasets).reshape(n_runs, n_datasets)
        union_of_cell = union_size[:, self.cell_dataset]
        numerator = numerator.reshape(n_runs, n_cells)
        denominator = denominator.reshape(n_runs, n_cells)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = {
                "posthoc_precision": np.where(denominator > 0, numerator / np.maximum(denominator, 1), np.nan),
                "posthoc_recall": np.where(union_of_cell > 0, numerator / np.maximum(union_of_cell, 1), np.nan),
            }
        if counts is not None:
            entry_run = run[copy]
            bounds = np.searchsorted(entry_run, np.arange(n_runs + 1))
            dataset = self.doc_dataset[doc_copies][copy]
            parts = [_agreement(counts[bounds[r]:bounds[r + 1]], dataset[bounds[r]:bounds[r + 1]], n_datasets)
                     for r in range(n_runs)]
            for metric in AGREEMENT_METRICS:
                out[metric] = np.vstack([part[metric] for part in parts])
        return out

    def as_judgements(self, doc_copies: np.ndarray, verified: np.ndarray) -> pd.DataFrame:
        """A replicate as the judgements table the scoring code reads (one judge an annotation).

        Copy ``c`` of a document is document ``<doc_id>#<c>``; a verified annotation is judged ``verify``,
        another ``edit``. :func:`posthoc.metrics.rates_with_intervals` on it gives :meth:`statistics`' numbers.
        """
        annotation, copy = self.expand(doc_copies)
        rows = self.annotations.iloc[annotation].reset_index(drop=True)
        rows["doc_id"] = rows["doc_id"].astype(str) + "#" + pd.Series(copy).astype(str)
        rows["worker"] = "w"
        rows["outcome"] = np.where(verified, "verify", "edit")
        return rows

    def expand(self, doc_copies: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(annotation, copy)`` of every annotation of every document copy, in copy order."""
        lengths = self.doc_count[doc_copies]
        total = int(lengths.sum())
        copy = np.repeat(np.arange(len(doc_copies)), lengths)
        offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        annotation = np.arange(total) - np.repeat(offsets, lengths) + np.repeat(self.doc_first[doc_copies], lengths)
        return annotation.astype(np.int64), copy.astype(np.int64)


def _agreement(counts: np.ndarray, dataset: np.ndarray, n_datasets: int) -> dict[str, np.ndarray]:
    """Fleiss' kappa (annotations with the modal number of judges >= 2) and Krippendorff's alpha per dataset."""
    judges = counts.sum(axis=1)
    kappa = np.full(n_datasets, np.nan)
    alpha = np.full(n_datasets, np.nan)
    squares = (counts.astype(float) ** 2).sum(axis=1)
    for d in range(n_datasets):
        mine = (dataset == d) & (judges >= 2)
        if not mine.any():
            continue
        sizes, frequency = np.unique(judges[mine], return_counts=True)
        modal = sizes[frequency == frequency.max()].max()
        same = mine & (judges == modal)
        p_items = (squares[same] - modal) / (modal * (modal - 1))
        p_categories = counts[same].sum(axis=0) / (same.sum() * modal)
        chance = float((p_categories**2).sum())
        if chance < 1.0:
            kappa[d] = (p_items.mean() - chance) / (1 - chance)
        m = judges[mine].astype(float)
        observed = ((m * m - squares[mine]) / (m - 1)).sum()
        margins = counts[mine].sum(axis=0).astype(float)
        n = margins.sum()
        expected = (n * n - (margins**2).sum()) / (n - 1)
        if expected > 0:
            alpha[d] = 1 - observed / expected
    return {"fleiss_kappa": kappa, "krippendorff_alpha": alpha}


def _agreement_logs(shape: StudyShape, counts: np.ndarray, copies: np.ndarray, layout: tuple[np.ndarray, np.ndarray],
                    copy_run: np.ndarray, n_runs: int) -> dict[str, np.ndarray]:
    """Per run, the log plug-in sd of each dataset's agreement (:func:`posthoc.study.analytic.agreement_log_sds`)."""
    from posthoc.study.analytic import agreement_log_sds

    _, copy = layout
    entry_run = copy_run[copy]
    bounds = np.searchsorted(entry_run, np.arange(n_runs + 1))
    dataset = shape.doc_dataset[copies][copy]
    parts = [agreement_log_sds(counts[bounds[r]:bounds[r + 1]], dataset[bounds[r]:bounds[r + 1]],
                               copy[bounds[r]:bounds[r + 1]] - copy[bounds[r]] if bounds[r + 1] > bounds[r]
                               else copy[:0], len(shape.datasets)) for r in range(n_runs)]
    return {metric: np.vstack([part[metric] for part in parts]) for metric in AGREEMENT_METRICS}


def draw_counts(shares: np.ndarray, judges: np.ndarray, consistency: float, rng: np.random.Generator) -> np.ndarray:
    """``(n, 3)`` verify / edit / remove judgements of ``n`` annotations judged ``judges`` times each.

    Each judge copies the annotation's latent outcome (drawn from ``shares``) with probability
    ``consistency``, else draws from ``shares`` (the model of :mod:`posthoc.study.simulate`).
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
    (precision and recall, :func:`posthoc.study.analytic.plugin_log_halfwidths`); ``rates``: what the
    replicates' judges followed.
    """

    shape: StudyShape
    values: Mapping[str, np.ndarray]
    selected: np.ndarray
    rates: OutcomeRates = field(default_factory=OutcomeRates)
    log_halfwidths: Mapping[str, np.ndarray] = field(default_factory=dict)
    n_resamples: int = DEFAULT_RESAMPLES

    def summary(self) -> pd.DataFrame:
        """One row a cell and metric: columns :data:`SUMMARY_COLUMNS`.

        Agreement rows (per dataset) have ``system`` ``*``. ``halfwidth``: for precision and recall the
        exact ``1.96 x sd`` of the replicates' distribution (:func:`posthoc.study.analytic.ratio_moments`,
        ``halfwidth_mc_error`` 0); for agreement ``1.96 x`` the sd of the runs, with its Monte Carlo standard
        error ``halfwidth / sqrt(2 (runs - 1))`` (5% at 200 runs). ``halfwidth_simulated``: ``1.96 x`` the
        runs' sd for every row (the check of the exact figure). ``achieved_noise``: the relative sd of
        the half-width one study will achieve when scored (its bootstrap's ``n_resamples`` and its own
        judgements and documents; NaN for agreement, which has no plug-in variance); ``assured_within_15``:
        whether ``ASSURANCE_Z`` times the relative sd of predicted / achieved is at most 15%
        (docs/study.md, "How far it can be trusted").
        """
        from posthoc.study.analytic import bootstrap_noise, ratio_moments

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


def document_order(shape: StudyShape, seed: int) -> np.ndarray:
    """A seeded random rank of every document within its dataset (the sample of n documents is rank < n)."""
    rng = stream_rng(seed, "document-sample")
    rank = np.empty(len(shape.doc_keys), dtype=np.int64)
    for d in range(len(shape.datasets)):
        members = np.flatnonzero(shape.doc_dataset == d)
        rank[members[rng.permutation(len(members))]] = np.arange(len(members))
    return rank


def replicate_study(shape: StudyShape, rates: OutcomeRates, *, runs: int = 200, seed: int = 0,
                    selected: np.ndarray | None = None, agreement: bool | None = None,
                    n_resamples: int = DEFAULT_RESAMPLES, progress: bool = False,
                    desc: str = "simulated studies") -> Replicates:
    """``runs`` replicates of the study on the ``selected`` documents (a boolean mask; all by default).

    Seeded: the same shape, rates, runs and seed give the same numbers. ``agreement`` defaults to
    ``k > 1``; ``n_resamples``: the bootstrap resamples the study will be scored with (its achieved
    half-width's own noise, :meth:`Replicates.summary`).
    """
    from tqdm import tqdm

    from posthoc.study.analytic import plugin_log_halfwidths

    selected = np.ones(len(shape.doc_keys), dtype=bool) if selected is None else np.asarray(selected, dtype=bool)
    agreement = shape.k > 1 if agreement is None else agreement
    shares = shape.shares(rates)
    single = bool(len(shape.judges)) and int(shape.judges.max()) == 1
    rng = stream_rng(seed, "replicates")
    members = [np.flatnonzero(selected & (shape.doc_dataset == d)) for d in range(len(shape.datasets))]
    collected: dict[str, list[np.ndarray]] = {}
    logs: dict[str, list[np.ndarray]] = {}
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
