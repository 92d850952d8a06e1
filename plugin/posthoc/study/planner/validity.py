"""How far the planner's expected half-widths can be trusted: predictions against scored simulated studies.

:func:`check_halfwidths` makes corpora of different sizes (:func:`posthoc.synthetic.synthetic_study`),
plans each with :func:`posthoc.study.plan_study`, predicts every cell's 95% half-width with
:func:`posthoc.study.planner.estimate.estimate_study` from the true outcome rates, then simulates the study's
judgements once (:func:`posthoc.study.planner.simulate.simulate_judgements`, a fresh seed) and scores them with
the real code at its defaults (:func:`posthoc.metrics.rates_with_intervals`: 1000 bootstrap resamples of
documents, the intervals of :func:`posthoc.metrics.score_judgements`; for k > 1 also Fleiss' kappa and
Krippendorff's alpha, against a bootstrap of documents of the study's judgements, :func:`agreement_bootstrap`,
as the score job reports no interval for them). Each corpus gives several
studies: its first ``n`` documents per dataset in a seeded order, for several ``n``.

:func:`check_hours` cuts a pilot (every worker's first batch) out of a simulated study and compares
the hours the estimate predicts for the rest with the simulated truth.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import pandas as pd

from posthoc.arrays import Floats
from posthoc.study.plan.config import StudyConfig
from posthoc.study.plan.design import StudyPlan, plan_study
from posthoc.study.plan.keys import stream_rng
from posthoc.study.planner.estimate import estimate_study
from posthoc.study.planner.rates import PRIOR_SHARES, PRIOR_SPREAD, OutcomeRates
from posthoc.study.planner.shape import AGREEMENT_METRICS, StudyShape, _agreement
from posthoc.study.planner.simulate import TaskTime, plan_judgements, simulate_judgements

if TYPE_CHECKING:
    from posthoc.validity import Check

COLUMNS = ["study", "documents", "k", "dataset", "system", "metric", "n_annotations", "predicted", "achieved",
           "ratio", "noise", "assured"]
#: the validation's corpora: documents per dataset judged once (k = 1) and by three judges (k = 3)
SIZES_K1: Final = (1600, 2000, 2400, 2800, 3200)
SIZES_K3: Final = (800, 1000, 1200)


def true_rates(seed: int, systems: Sequence[str] = ("GT", "E2E", "REL")) -> OutcomeRates:
    """Known true rates of a simulated study: a verify share per system drawn within paper 000's per-cell spread."""
    rng = stream_rng(seed, "true-rates")
    rows = []
    for system in systems:
        verify = float(rng.uniform(*PRIOR_SPREAD))
        edit = (1 - verify) * PRIOR_SHARES[1] / (PRIOR_SHARES[1] + PRIOR_SHARES[2])
        rows.append({"dataset": "*", "system": system, "verify": verify, "edit": edit, "remove": 1 - verify - edit})
    cells = pd.DataFrame(rows)
    return OutcomeRates(cells=cells, consistency=float(rng.uniform(0.2, 0.8)), source="truth")


def _per_dataset(rates: OutcomeRates, datasets: Sequence[str]) -> OutcomeRates:
    cells = pd.concat([rates.cells.assign(dataset=d) for d in datasets], ignore_index=True)
    return OutcomeRates(default=rates.default, consistency=rates.consistency, cells=cells, source=rates.source)


def check_halfwidths(n_corpora: int = 11, *, sizes: Sequence[int] = SIZES_K1, sizes_k3: Sequence[int] = SIZES_K3,
                     k_every: int = 5, seed: int = 0, progress: bool = False) -> pd.DataFrame:
    """Predicted against achieved half-widths of the studies of ``n_corpora`` corpora: columns :data:`COLUMNS`.

    Corpus ``c`` (seeded by ``seed + c``) is cut into studies of its first ``n`` documents per dataset
    (two datasets, four annotations per document and system) for every ``n`` of ``sizes``; every
    ``k_every``-th corpus is judged by k = 3 judges, at ``sizes_k3``. Each study is predicted by
    :func:`estimate_study` at its defaults (200 runs) from the true rates, simulated once and scored at the
    score job's defaults. ``noise``: the stated relative sd of predicted / achieved
    (``sqrt(achieved_noise^2 + (halfwidth_mc_error / halfwidth)^2)``); ``assured``: the estimate's
    ``assured_within_15`` (4 x noise <= 15%).
    """
    from tqdm import tqdm

    from posthoc.metrics import rates_with_intervals
    from posthoc.synthetic import synthetic_study

    plans = [(c, 3 if k_every and c % k_every == k_every - 1 else 1) for c in range(n_corpora)]
    parts = []
    bar = tqdm(total=sum(len(sizes_k3 if k > 1 else sizes) for _, k in plans), desc="validity studies",
               disable=not progress, leave=False)
    for c, k in plans:
        wanted = sorted(sizes_k3 if k > 1 else sizes)
        documents, mentions, _ = synthetic_study(max(wanted), mentions_per_doc=4.0, seed=seed + c)
        order = stream_rng(seed + c, "validity-order")
        rank = np.zeros(len(documents), dtype=np.int64)
        for _, where in documents.groupby("dataset").indices.items():
            rank[where] = order.permutation(len(where))
        for n in wanted:
            chosen = documents.loc[rank < n]
            keys = pd.MultiIndex.from_frame(chosen[["dataset", "doc_id"]])
            subset = mentions.loc[pd.MultiIndex.from_frame(mentions[["dataset", "doc_id"]]).isin(keys)]
            plan = plan_study(chosen, subset, StudyConfig(name=f"validity-{c}-{n}", seed=seed + c, k=k))
            truth = _per_dataset(true_rates(seed + c), sorted(set(chosen["dataset"])))
            cells = estimate_study(plan, rates=truth, seed=seed + c).cells
            judgements = simulate_judgements(plan, truth, seed=seed + 1000 * c + n)
            scored = rates_with_intervals(judgements)
            scored = scored.assign(achieved=(scored["high"] - scored["low"]) / 2)
            if k > 1:
                scored = pd.concat([scored, agreement_bootstrap(plan, judgements, seed=seed + c)], ignore_index=True)
            merged = cells.merge(scored[["dataset", "system", "metric", "achieved"]],
                                 on=["dataset", "system", "metric"], how="inner")
            with np.errstate(divide="ignore", invalid="ignore"):
                error = merged["halfwidth_mc_error"] / merged["halfwidth"]
                noise = np.sqrt(merged["achieved_noise"] ** 2 + error**2)
            parts.append(pd.DataFrame({
                "study": plan.config.name, "documents": len(chosen), "k": k, "dataset": merged["dataset"],
                "system": merged["system"], "metric": merged["metric"], "n_annotations": merged["n_annotations"],
                "predicted": merged["halfwidth"], "achieved": merged["achieved"],
                "ratio": merged["halfwidth"] / merged["achieved"], "noise": noise,
                "assured": merged["assured_within_15"].astype(bool),
            }))
            bar.update(1)
    bar.close()
    return pd.concat(parts, ignore_index=True)[COLUMNS]


def halfwidth_figures(checked: pd.DataFrame) -> dict[str, Any]:
    """The figures of :func:`check_halfwidths` that the test, the benches and docs/study.md give.

    ``assured_within``: share of the assured cells within 15% (the acceptance: 1.0) and ``assured_worst``
    their ratio furthest from 1; ``other_*``: the cells the estimate did not assure (too small a
    study, agreement); ``expected_misses``: how many of those the stated noise expects outside 15%
    (``sum P(log ratio outside log 0.85 .. log 1.15)`` with ``log ratio ~ N(0, noise)``, over the cells with a
    noise: agreement cells have none);
    ``noise_calibration``: sd of ``log(ratio) / noise`` over cells with a noise (1 if the noise is right).
    """
    from scipy.stats import norm

    off = (checked["ratio"] - 1).abs()
    assured = checked["assured"].to_numpy(dtype=bool)
    mine, other = checked.loc[assured], checked.loc[~assured]
    worst = mine.iloc[int(np.argmax((mine["ratio"] - 1).abs().to_numpy()))] if len(mine) else None
    has_noise = checked["noise"].notna() & (checked["noise"] > 0)
    z = np.log(checked.loc[has_noise, "ratio"]) / checked.loc[has_noise, "noise"]
    other_noise = other["noise"].dropna().to_numpy(dtype=float)
    tail = norm.sf(np.log(1.15) / other_noise) + norm.cdf(np.log(0.85) / other_noise)
    noisy = other["noise"].notna().to_numpy()
    return {
        "studies": int(checked["study"].nunique()), "cells": len(checked),
        "sizes": sorted(int(x) for x in checked["documents"].unique()),
        "assured_studies": int(mine["study"].nunique()), "assured_cells": len(mine),
        "assured_within": float((off[assured] <= 0.15).mean()) if len(mine) else float("nan"),
        "assured_worst": float(worst["ratio"]) if worst is not None else float("nan"),
        "assured_worst_cell": (f"{worst['study']} {worst['dataset']} {worst['system']} {worst['metric']}"
                               if worst is not None else ""),
        "assured_range": (float(mine["ratio"].min()), float(mine["ratio"].max())) if len(mine) else (np.nan, np.nan),
        "other_cells": len(other), "other_within": float((off[~assured] <= 0.15).mean()) if len(other) else np.nan,
        "other_misses": int((off[~assured] > 0.15).sum()),
        "other_misses_with_noise": int((off[~assured].to_numpy()[noisy] > 0.15).sum()),
        "expected_misses": float(tail.sum()),
        "agreement_cells": int(checked["metric"].isin(AGREEMENT_METRICS).sum()),
        "agreement_within": float((off[checked["metric"].isin(AGREEMENT_METRICS)] <= 0.15).mean()),
        "all_within": float((off <= 0.15).mean()), "median_ratio": float(checked["ratio"].median()),
        "noise_calibration": float(z.std()), "range": (float(checked["ratio"].min()), float(checked["ratio"].max())),
    }


def agreement_bootstrap(plan: StudyPlan, judgements: pd.DataFrame, *, n_resamples: int = 1000,
                        seed: int = 0) -> pd.DataFrame:
    """Bootstrap half-widths of a scored study's Fleiss' kappa and Krippendorff's alpha per dataset.

    The score job reports no interval for agreement, so the "achieved" half-width is this one: the
    study's own judgements, ``n_resamples`` resamples of documents within each dataset (as the metrics'
    bootstrap), each scored as :meth:`StudyShape.statistics` scores agreement (which gives the numbers of
    :func:`posthoc.metrics.reliability.reliability_from_verdicts`, tested). Columns ``dataset, system
    ("*"), metric, achieved``.
    """
    from posthoc.metrics.inputs import judged_rows
    from posthoc.metrics.verification import verdicts_of

    shape = StudyShape.from_judgements(plan_judgements(plan), k=plan.config.k)
    verdicts, _ = verdicts_of(judged_rows(judgements).reset_index(drop=True))
    keys = ["dataset", "doc_id", "system", "start", "end", "link"]
    verdicts = verdicts.sort_values(keys, kind="stable").reset_index(drop=True)
    counts = verdicts[["n_verify", "n_edit", "n_remove"]].to_numpy()
    rng = stream_rng(seed, "agreement-bootstrap")
    members = [np.flatnonzero(shape.doc_dataset == d) for d in range(len(shape.datasets))]
    samples: dict[str, list[Floats]] = {m: [] for m in AGREEMENT_METRICS}
    for _ in range(n_resamples):
        copies = np.concatenate([m[rng.integers(0, len(m), len(m))] for m in members])
        annotation, copy = shape.expand(copies)
        values = _agreement(counts[annotation], shape.doc_dataset[copies][copy], len(shape.datasets))
        for metric in AGREEMENT_METRICS:
            samples[metric].append(values[metric])
    rows = []
    for metric, found in samples.items():
        low, high = np.nanquantile(np.vstack(found), [0.025, 0.975], axis=0)
        rows += [{"dataset": d, "system": "*", "metric": metric, "achieved": (h - lo) / 2}
                 for d, lo, h in zip(shape.datasets, low, high, strict=True)]
    return pd.DataFrame(rows)


def check_hours(n_docs: int = 150, *, n_workers: int = 12, seed: int = 0,
                time: TaskTime | None = None) -> dict[str, float]:
    """Hours predicted for the rest of a study from a pilot of every worker's first batch, against the truth.

    ``n_docs`` documents per dataset (two datasets) shared by ``n_workers`` workers, so each does several
    batches (with the default, one batch a worker, a first batch would be the whole study).

    Returns ``predicted``, ``true``, ``ratio`` (predicted / true) for the total and the worst worker's
    ratio (``worst_worker_ratio``), and the pilot's share of the study's regions.
    """
    from posthoc.synthetic import synthetic_study

    documents, mentions, _ = synthetic_study(n_docs, mentions_per_doc=4.0, seed=seed)
    plan = plan_study(documents, mentions, StudyConfig(name="hours", seed=seed, k=1, n_workers=n_workers))
    judgements = simulate_judgements(plan, OutcomeRates(), seed=seed + 1, time=time)
    first = judgements["batch"].to_numpy() == 0
    pilot = judgements.loc[first]
    estimate = estimate_study(plan, pilot=pilot, runs=2, seed=seed)
    rest = judgements.loc[~first].drop_duplicates(["worker", "task_key"])
    true_by_worker = rest.groupby("worker")["lead_time"].sum() / 3600.0
    predicted_by_worker = estimate.per_worker.set_index("worker")["hours_left"].reindex(true_by_worker.index)
    worker_ratio = (predicted_by_worker / true_by_worker).to_numpy()
    return {
        "predicted": float(estimate.time["hours_left"]), "true": float(true_by_worker.sum()),
        "ratio": float(estimate.time["hours_left"] / true_by_worker.sum()),
        "worst_worker_ratio": float(worker_ratio[np.argmax(np.abs(np.log(worker_ratio)))]),
        "pilot_share": float(first.mean()), "workers": float(len(plan.workers)),
    }


def planner_checks(*, n_corpora: int = 11, hours_studies: int = 8, seed: int = 0,
                   progress: bool = False) -> list[Check]:
    """The planner's figures for ``bench/validity_bench.py`` (:class:`posthoc.validity.Check` rows).

    Over the studies of :func:`check_halfwidths` (51 with the default 11 corpora, the estimate at its
    defaults): the share of the cells the estimate assures that are within 15% of the achieved half-width
    (target 1: every one) and the worst of their ratios; the median ratio's distance from 1 (<= 0.03); how
    well the stated noise describes the spread of ``log(predicted / achieved)`` (sd of their ratio, 0.6-1.3:
    under 1 as the stated noise also counts another draw of the documents, which these studies keep fixed);
    and the worst ``|ratio - 1|`` of the hours left after a pilot of one batch per worker
    (:func:`check_hours`, <= 0.15).
    """
    from posthoc.validity import Check, at_least, at_most

    checked = check_halfwidths(n_corpora, seed=seed, progress=progress)
    figures = halfwidth_figures(checked)
    setting = (f"{figures['assured_cells']} assured of {figures['cells']} cells, {min(figures['sizes'])}-"
               f"{max(figures['sizes'])} docs in 2 datasets")
    studies = figures["studies"]
    calibration = figures["noise_calibration"]
    hours = [check_hours(300, n_workers=20, seed=seed + s)["ratio"] for s in range(hours_studies)]
    return [
        at_least("study estimate half-width", setting, studies, "share of assured cells within 15%",
                 figures["assured_within"], 1.0),
        at_most("study estimate half-width", setting, studies, "worst assured predicted / achieved - 1",
                figures["assured_worst"] - 1, 0.15, absolute=True),
        at_most("study estimate half-width", f"all {figures['cells']} cells", studies,
                "median predicted / achieved - 1", figures["median_ratio"] - 1, 0.03, absolute=True),
        Check("study estimate half-width", f"all {figures['cells']} cells", studies,
              "sd of log(ratio) / stated noise", calibration, "0.6-1.3", bool(0.6 <= calibration <= 1.3)),
        at_most("study estimate hours", "pilot of one batch per worker, 20 workers", hours_studies,
                "worst predicted / true - 1 (rest)", float(max(hours, key=lambda r: abs(r - 1)) - 1), 0.15,
                absolute=True),
    ]
