"""The shape of a planned study: its annotations as the scoring code sees them, and agreement from counts.

:class:`StudyShape` is built once from the plan's judgements by the real scoring code
(:func:`posthoc.metrics.verification.verdicts_of`: annotations, their judges, cells, and the union's keys);
the replicates (:mod:`posthoc.study.planner.replicates`) and the analytic half-widths
(:mod:`posthoc.study.planner.analytic`) only count on it. Agreement (Fleiss' kappa on the annotations with the
modal number of judges, Krippendorff's alpha on all with two or more) follows
:func:`posthoc.metrics.reliability.reliability_from_verdicts` (paper 000 section 4).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Final

import numpy as np
import pandas as pd

from posthoc.arrays import Bools, Floats, Ints
from posthoc.metrics.inputs import ANNOTATION, judged_rows
from posthoc.metrics.verification import verdicts_of
from posthoc.study.planner.rates import OutcomeRates

AGREEMENT_METRICS: Final = ("fleiss_kappa", "krippendorff_alpha")

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
    cell: Ints
    doc: Ints
    local_union: Ints
    judges: Ints
    doc_dataset: Ints
    doc_first: Ints
    doc_count: Ints
    doc_unions: Ints
    cell_dataset: Ints
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

    def shares(self, rates: OutcomeRates) -> Floats:
        """``(annotations, 3)`` outcome shares of every annotation's cell."""
        per_cell = rates.shares_for(self.cells["dataset"].to_numpy(), self.cells["system"].to_numpy())
        return per_cell[self.cell]

    def annotations_per_cell(self, selected: Bools | None = None) -> Ints:
        """Annotations of each cell in the selected documents (all by default)."""
        keep = np.ones(len(self.cell), dtype=bool) if selected is None else selected[self.doc]
        return np.bincount(self.cell[keep], minlength=len(self.cells))

    def statistics(self, doc_copies: Ints, verified: Bools, counts: Ints | None = None,
                   *, layout: tuple[Ints, Ints] | None = None,
                   copy_run: Ints | None = None, n_runs: int = 1) -> dict[str, Floats]:
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

    def as_judgements(self, doc_copies: Ints, verified: Bools) -> pd.DataFrame:
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

    def expand(self, doc_copies: Ints) -> tuple[Ints, Ints]:
        """``(annotation, copy)`` of every annotation of every document copy, in copy order."""
        lengths = self.doc_count[doc_copies]
        total = int(lengths.sum())
        copy = np.repeat(np.arange(len(doc_copies)), lengths)
        offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        annotation = np.arange(total) - np.repeat(offsets, lengths) + np.repeat(self.doc_first[doc_copies], lengths)
        return annotation.astype(np.int64), copy.astype(np.int64)


def _agreement(counts: Ints, dataset: Ints, n_datasets: int) -> dict[str, Floats]:
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
