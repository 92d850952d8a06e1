"""How many documents each dataset needs for a target half-width: the estimate's machinery, for an extension.

:func:`documents_for_target` plans the study over every document of its inputs in memory (the pool, the same
config; no control tasks, which only check workers), takes its shape (:class:`~posthoc.study.planner.shape.StudyShape`,
as ``posthoc study estimate`` does) and, with outcome rates from the pilot
(:func:`~posthoc.study.planner.rates.rates_from_pilot`), predicts each cell's 95% half-width of posthoc precision
and recall on the first ``n`` documents of each dataset in the study's seeded ranking
(:func:`posthoc.study.plan.extend.document_ranking`) with :func:`~posthoc.study.planner.replicates.replicate_study`
(exact for precision and recall). ``n`` is bisected per dataset, as :mod:`posthoc.study.planner.target` does,
between the documents the study has (never fewer) and all of them, to within 1% of the dataset's documents; the
half-width falls as documents are added, so the first ``n`` under the target is the smallest. Only the cells
named (``cells``; every dataset x system cell by default) must be under the target: a dataset none of whose named
cells is too wide gets no documents. Agreement (k > 1) is not a cell and is not searched.
:func:`documents_for_study_target` asks it for a running study (``posthoc study extend --target-halfwidth``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping
from typing import Any

import numpy as np
import pandas as pd

from posthoc.arrays import Floats, Ints
from posthoc.study.plan.config import StudyConfig
from posthoc.study.plan.design import plan_study
from posthoc.study.plan.extend import document_ranking
from posthoc.study.planner.rates import OutcomeRates, rates_from_pilot
from posthoc.study.planner.replicates import replicate_study
from posthoc.study.planner.shape import StudyShape
from posthoc.study.planner.simulate import plan_judgements


@dataclasses.dataclass(frozen=True)
class _Pool:
    """The pool planned in memory: its shape, each judgement row's document rank, the datasets and their sizes."""

    shape: StudyShape
    rank: Ints
    datasets: list[str]
    sizes: Ints

    @classmethod
    def plan(cls, documents: pd.DataFrame, mentions: pd.DataFrame, config: StudyConfig) -> _Pool:
        pool = plan_study(documents, mentions, dataclasses.replace(config, n_workers=None, control_tasks=False))
        shape = StudyShape.from_judgements(plan_judgements(pool), k=config.k)
        ranking = document_ranking(pool.documents, config.seed)
        index = pd.MultiIndex.from_frame(ranking[["dataset", "doc_id"]])
        rank = ranking["rank"].to_numpy()[index.get_indexer(pd.MultiIndex.from_frame(shape.doc_keys.astype(str)))]
        datasets = list(shape.datasets)
        # pandas-stubs: integer[Any] for size's int64
        sizes: Ints = ranking.groupby("dataset").size().reindex(datasets).to_numpy()  # type: ignore[assignment]
        return cls(shape, rank, datasets, sizes)

    def cell_widths(self, n: Ints, rates: OutcomeRates, *, runs: int, seed: int) -> pd.DataFrame:
        """``dataset, system, halfwidth`` (the wider of posthoc precision and recall) on the first ``n`` documents
        of each dataset."""
        selected = self.rank < n[self.shape.doc_dataset]
        summary = replicate_study(self.shape, rates, runs=runs, seed=seed, selected=selected,
                                  agreement=False).summary()
        widths = summary["halfwidth"].fillna(np.inf).groupby([summary["dataset"].astype(str),
                                                             summary["system"].astype(str)]).max()
        return widths.rename("halfwidth").reset_index()


def predicted_halfwidths(documents: pd.DataFrame, mentions: pd.DataFrame, config: StudyConfig,
                         current: Mapping[str, int], rates: OutcomeRates, *, runs: int = 200,
                         seed: int = 0) -> pd.DataFrame:
    """``dataset, system, halfwidth``: each cell's predicted 95% half-width (the wider of posthoc precision and
    recall) on the first ``current[dataset]`` documents of the seeded ranking, as :func:`documents_for_target`
    predicts it (the same pool, rates, runs and seed): e.g. a study's size now, beside its real score."""
    pool = _Pool.plan(documents, mentions, config)
    n = np.array([int(current.get(d, 0)) for d in pool.datasets], dtype=np.int64)
    return pool.cell_widths(n, rates, runs=runs, seed=seed)


def documents_for_target(documents: pd.DataFrame, mentions: pd.DataFrame, config: StudyConfig,
                         current: Mapping[str, int], rates: OutcomeRates, *, target: float,
                         cells: Collection[tuple[str, str]] | None = None, runs: int = 200,
                         seed: int = 0) -> dict[str, dict[str, Any]]:
    """Per dataset: ``documents`` (needed, at least ``current``), ``reached`` and ``widest`` (the widest named
    cell's predicted half-width there, after), ``widest_now`` (at ``current``); see the module docstring."""
    pool = _Pool.plan(documents, mentions, config)
    datasets, sizes = pool.datasets, pool.sizes
    wanted = None if cells is None else {(str(d), str(s)) for d, s in cells}

    def widest(n: Ints) -> Floats:
        rows = pool.cell_widths(n, rates, runs=runs, seed=seed)
        keep = [wanted is None or (d, s) in wanted for d, s in zip(rows["dataset"], rows["system"], strict=True)]
        rows = rows.loc[keep]
        per = rows["halfwidth"].groupby(rows["dataset"]).max()
        return per.reindex(datasets).fillna(-np.inf).to_numpy()  # no named cell there: nothing to reach

    low = np.array([int(current.get(d, 0)) for d in datasets], dtype=np.int64)
    now = widest(low)
    full = widest(sizes)
    reached = full <= target
    done = now <= target
    high = np.where(done, low, sizes)
    best = np.where(done, now, full)
    tolerance = np.maximum(1, np.ceil(0.01 * sizes)).astype(np.int64)
    while True:
        open_ = reached & ~done & (high - low > tolerance)
        if not open_.any():
            break
        middle = np.where(open_, (low + high) // 2, high)
        widths = widest(middle)
        passed = widths <= target
        high = np.where(open_ & passed, middle, high)
        best = np.where(open_ & passed, widths, best)
        low = np.where(open_ & ~passed, middle, low)
    return {d: {"documents": int(h), "of": int(s), "reached": bool(r), "widest": float(w),
                "widest_now": float(n)}
            for d, h, s, r, w, n in zip(datasets, high, sizes, reached, best, now, strict=True)}


def documents_for_study_target(study_documents: pd.DataFrame, pool_documents: pd.DataFrame,
                               pool_mentions: pd.DataFrame, config: StudyConfig, pilot: pd.DataFrame | None, *,
                               target: float, cells: Collection[tuple[str, str]] | None = None, runs: int = 200,
                               seed: int = 0) -> dict[str, dict[str, Any]]:
    """:func:`documents_for_target` for a running study: ``study_documents`` is its manifest's documents table (one
    row a document; ``dataset`` counted), ``pool_documents`` / ``pool_mentions`` the inputs it was planned from,
    ``pilot`` a pilot's judgements table (outcome rates by :func:`~posthoc.study.planner.rates.rates_from_pilot`;
    ``None``: the priors)."""
    current = study_documents.groupby("dataset").size()
    rates = rates_from_pilot(pilot) if pilot is not None else OutcomeRates()
    return documents_for_target(pool_documents, pool_mentions, config,
                                {str(d): int(n) for d, n in current.items()}, rates, target=target, cells=cells,
                                runs=runs, seed=seed)
