"""``score_judgements``: every metric of seed 000 sections 3 and 4 with bootstrap intervals, as :class:`Scores`.

Order of work: validate the tables; control results and exclusion of failing workers; per-annotation
verdicts; verification rates, union, posthoc precision / recall / F1 and outcome shares with
percentile-bootstrap intervals (one vectorised resampling of the chosen unit for all of them);
pre-annotation scores with intervals from resampling documents; agreement on the intersection;
union outcomes A-E; reliability and aggregated labels when k > 1; the corrected gold standard.
"""

from __future__ import annotations

import math
from typing import Any, Final

import numpy as np
import pandas as pd

from posthoc.errors import PosthocInputError
from posthoc.metrics.agreement import agreement_from_verdicts
from posthoc.metrics.bootstrap import UNITS, percentile_interval, ratio, resampled_sums, unit_codes, unit_matrix
from posthoc.metrics.controls import control_results
from posthoc.metrics.gold import gold_from
from posthoc.metrics.inputs import ANNOTATION, is_control, judged_rows, mention_rows
from posthoc.metrics.preannotation import counts_of_rows, scores_from_counts
from posthoc.metrics.reliability import aggregated_from, reliability_from_verdicts
from posthoc.metrics.union import classify_against_gt, outcomes_from_letters
from posthoc.metrics.verification import (
    precision_recall_from,
    rates_from_verdicts,
    shares_from_rows,
    union_from_verdicts,
    verdicts_of,
)
from posthoc.scores import Scores
from posthoc.tables import GT_SYSTEM, OUTCOMES

RATE_METRICS: Final = (
    "verification_rate",
    "posthoc_precision",
    "posthoc_recall",
    "posthoc_f1",
    "verify_share",
    "edit_share",
    "remove_share",
)
RATES_COLUMNS: Final = ["dataset", "system", "metric", "value", "low", "high", "n"]
PREANNOTATION_COLUMNS: Final = [
    "dataset", "system", "matching", "averaging", "precision", "recall", "f1",
    "low_precision", "high_precision", "low_recall", "high_recall",
]  # fmt: skip
EXCLUSION_COLUMNS: Final = ["kind", "worker", "task_key", "detail", "count"]
#: Per (dataset, system) group: annotations, verified, judgements, verify / edit / remove judgements.
_SLOTS: Final = 6


def _f1(precision: np.ndarray, recall: np.ndarray) -> np.ndarray:
    total = precision + recall
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(
            total > 0, 2 * precision * recall / np.where(total > 0, total, 1), np.where(np.isnan(total), np.nan, 0.0)
        )


def _rates(
    rows: pd.DataFrame,
    verdicts: pd.DataFrame,
    codes: np.ndarray,
    union: pd.DataFrame,
    *,
    resample_unit: str,
    n_resamples: int,
    rng: np.random.Generator,
    confidence: float,
) -> pd.DataFrame:
    """The rates table (:mod:`posthoc.scores`) with intervals from one stratified resampling of units."""
    if len(rows) == 0:
        return pd.DataFrame(
            {c: pd.Series(dtype="str" if c in ("dataset", "system", "metric") else "float64") for c in RATES_COLUMNS}
        ).astype({"n": "int64"})
    rates = rates_from_verdicts(verdicts)
    pr = precision_recall_from(rates, union)
    shares = shares_from_rows(rows)
    groups = pd.MultiIndex.from_frame(rates[["dataset", "system"]])
    datasets = pd.Index(sorted(rates["dataset"].unique()))
    n_groups, n_datasets = len(groups), len(datasets)
    group_of_verdict = groups.get_indexer(pd.MultiIndex.from_frame(verdicts[["dataset", "system"]]))
    group = group_of_verdict[codes]
    n_judges = verdicts["n_judges"].to_numpy()[codes].astype(float)
    verified = verdicts["verified"].to_numpy()[codes].astype(float)
    outcome = rows["outcome"].to_numpy()
    union_keys = pd.MultiIndex.from_frame(union[list(ANNOTATION)])
    union_of_verdict = union_keys.get_indexer(pd.MultiIndex.from_frame(verdicts[list(ANNOTATION)]))
    n_systems = union["n_systems"].to_numpy().astype(float)
    union_share = np.where(union_of_verdict >= 0, 1.0 / n_systems[np.maximum(union_of_verdict, 0)], 0.0)[codes]

    unit, strata = unit_codes(rows, resample_unit)
    n_units, n_columns = len(strata), _SLOTS * n_groups + n_datasets
    weights = [1.0 / n_judges, verified / n_judges, np.ones(len(rows))] + [
        (outcome == o).astype(float) for o in OUTCOMES
    ]
    columns = [group * _SLOTS + slot for slot in range(_SLOTS)]
    dataset_column = _SLOTS * n_groups + datasets.get_indexer(rows["dataset"])
    counts = unit_matrix(
        np.tile(unit, _SLOTS + 1),
        np.concatenate([*columns, dataset_column]),
        np.concatenate([*weights, verified / n_judges * union_share]),
        n_units,
        n_columns,
    )
    sums = resampled_sums(counts, strata, n_resamples=n_resamples, rng=rng)
    per_group = sums[:, : _SLOTS * n_groups].reshape(n_resamples, n_groups, _SLOTS)
    union_sizes = sums[:, _SLOTS * n_groups :][:, datasets.get_indexer(groups.get_level_values("dataset"))]
    precision = ratio(per_group[:, :, 1], per_group[:, :, 0])
    recall = ratio(per_group[:, :, 1], union_sizes)
    samples = {
        "verification_rate": precision,
        "posthoc_precision": precision,
        "posthoc_recall": recall,
        "posthoc_f1": _f1(precision, recall),
        **{f"{o}_share": ratio(per_group[:, :, 3 + i], per_group[:, :, 2]) for i, o in enumerate(OUTCOMES)},
    }
    share_table = shares.set_index(["dataset", "system", "outcome"])
    n_judgements = share_table.groupby(level=["dataset", "system"])["count"].sum().reindex(groups).to_numpy()
    values = {
        "verification_rate": (pr["precision"].to_numpy(), pr["n_annotations"].to_numpy()),
        "posthoc_precision": (pr["precision"].to_numpy(), pr["n_annotations"].to_numpy()),
        "posthoc_recall": (pr["recall"].to_numpy(), pr["n_union"].to_numpy()),
        "posthoc_f1": (pr["f1"].to_numpy(), pr["n_annotations"].to_numpy()),
        **{
            f"{o}_share": (
                share_table.xs(o, level="outcome")["share"].reindex(groups).to_numpy(),
                n_judgements,
            )
            for o in OUTCOMES
        },
    }
    parts = []
    for metric in RATE_METRICS:
        low, high = percentile_interval(samples[metric], confidence=confidence)
        value, n = values[metric]
        parts.append(
            pd.DataFrame(
                {
                    "dataset": groups.get_level_values("dataset"),
                    "system": groups.get_level_values("system"),
                    "metric": metric,
                    "value": value.astype(float),
                    "low": low,
                    "high": high,
                    "n": n.astype("int64"),
                }
            )
        )
    table = pd.concat(parts, ignore_index=True)
    order = {m: i for i, m in enumerate(RATE_METRICS)}
    table = table.sort_values(["dataset", "system", "metric"], key=lambda c: c.map(order) if c.name == "metric" else c)
    return table.reset_index(drop=True)[RATES_COLUMNS]


def rates_with_intervals(
    judgements: pd.DataFrame,
    *,
    resample_unit: str = "doc_id",
    n_resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    ties_verified: bool = False,
) -> pd.DataFrame:
    """The ``rates`` table of :class:`~posthoc.scores.Scores` alone (seed 000 sections 3.2 and 4, Figure 3 right).

    ``dataset, system, metric, value, low, high, n`` for the metrics of :data:`RATE_METRICS`; ``n``
    is the denominator (annotations judged; ``|V(d)|`` for recall; judgements for the shares).
    Control rows are ignored, no worker is excluded (``score_judgements`` does that first). Same
    intervals as :func:`score_judgements` for the same rows and seed.
    """
    _check_options(n_resamples, resample_unit, confidence)
    rows = judged_rows(judgements).reset_index(drop=True)
    verdicts, codes = verdicts_of(rows, ties_verified=ties_verified)
    rng = _generators(seed)[0]
    return _rates(
        rows, verdicts, codes, union_from_verdicts(verdicts),
        resample_unit=resample_unit, n_resamples=n_resamples, rng=rng, confidence=confidence,
    )  # fmt: skip


def _generators(seed: int) -> tuple[np.random.Generator, np.random.Generator]:
    """Independent streams for the judgement and the pre-annotation bootstrap."""
    first, second = np.random.SeedSequence(seed).spawn(2)
    return np.random.default_rng(first), np.random.default_rng(second)


def _check_options(n_resamples: int, resample_unit: str, confidence: float) -> None:
    if n_resamples < 0:
        raise PosthocInputError(f"n_resamples must be 0 or more, not {n_resamples}")
    if resample_unit not in UNITS:
        raise PosthocInputError(f"resample_unit must be one of {', '.join(UNITS)}, not {resample_unit!r}")
    if not 0 < confidence < 1:
        raise PosthocInputError(f"confidence must be between 0 and 1, not {confidence}")


def _preannotation(
    source: pd.DataFrame, *, gt_system: str, n_resamples: int, rng: np.random.Generator, confidence: float
) -> pd.DataFrame:
    """The preannotation table: micro / macro, strict / overlap scores with intervals from resampling documents."""
    counts = counts_of_rows(source, gt_system=gt_system)
    point = scores_from_counts(counts)
    if counts.empty:
        return pd.DataFrame(
            {c: pd.Series(dtype="str" if c in PREANNOTATION_COLUMNS[:4] else "float64") for c in PREANNOTATION_COLUMNS}
        )
    groups = pd.MultiIndex.from_frame(point[["dataset", "system", "matching"]].drop_duplicates())
    documents = counts[["dataset", "doc_id"]].drop_duplicates().sort_values(["dataset", "doc_id"])
    doc_index = pd.MultiIndex.from_frame(documents)
    unit = doc_index.get_indexer(pd.MultiIndex.from_frame(counts[["dataset", "doc_id"]]))
    strata = pd.factorize(documents["dataset"], sort=True)[0]
    group = groups.get_indexer(pd.MultiIndex.from_frame(counts[["dataset", "system", "matching"]]))
    fields = ["tp_system", "n_system", "tp_gt", "n_gt", "in_scope", "precision", "recall"]
    slots = len(fields)
    scope = counts["in_scope"].to_numpy(float)
    weights = [counts[f].to_numpy(float) * (scope if f in ("precision", "recall") else 1.0) for f in fields]
    matrix = unit_matrix(
        np.tile(unit, slots),
        np.concatenate([group * slots + i for i in range(slots)]),
        np.concatenate(weights),
        len(documents),
        slots * len(groups),
    )
    sums = resampled_sums(matrix, strata, n_resamples=n_resamples, rng=rng).reshape(n_resamples, len(groups), slots)
    bounds = {
        ("micro", "precision"): ratio(sums[:, :, 0], sums[:, :, 1]),
        ("micro", "recall"): ratio(sums[:, :, 2], sums[:, :, 3]),
        ("macro", "precision"): ratio(sums[:, :, 5], sums[:, :, 4]),
        ("macro", "recall"): ratio(sums[:, :, 6], sums[:, :, 4]),
    }
    table = point.copy()
    where = groups.get_indexer(pd.MultiIndex.from_frame(table[["dataset", "system", "matching"]]))
    for measure in ("precision", "recall"):
        table[f"low_{measure}"] = np.nan
        table[f"high_{measure}"] = np.nan
        for averaging in ("micro", "macro"):
            low, high = percentile_interval(bounds[(averaging, measure)], confidence=confidence)
            rows = (table["averaging"] == averaging).to_numpy()
            table.loc[rows, f"low_{measure}"] = low[where[rows]]
            table.loc[rows, f"high_{measure}"] = high[where[rows]]
    return table[PREANNOTATION_COLUMNS].reset_index(drop=True)


def _exclusions(judgements: pd.DataFrame, controls: pd.DataFrame, threshold: float) -> pd.DataFrame:
    rows: list[tuple[str, Any, Any, str, int]] = []
    control = is_control(judgements)
    if control.any():
        rows.append(
            ("control_rows", None, None, "control annotations are never counted in the metrics", int(control.sum()))
        )
    excluded = controls.loc[controls["excluded"]]
    if len(excluded):
        counted = judgements.loc[~control, "worker"].astype(str).value_counts()
        for record in excluded.itertuples(index=False):
            detail = (
                f"failed the control task: {record.n_passed} of {record.n_control} control annotations right "
                f"(pass rate {record.pass_rate:.3f} < threshold {threshold:g})"
            )
            rows.append(("failing_worker", record.worker, None, detail, int(counted.get(record.worker, 0))))
    table = pd.DataFrame(rows, columns=EXCLUSION_COLUMNS)
    return table.astype({"kind": "str", "detail": "str", "count": "int64"})


def _number(value: Any) -> float | None:
    value = float(value)
    return None if math.isnan(value) else value


def _summary(
    rates: pd.DataFrame, preannotation: pd.DataFrame, union: pd.DataFrame, rows: pd.DataFrame, base: dict[str, Any]
) -> dict[str, Any]:
    """Headline numbers per dataset and system: rates with bounds, and strict micro pre-annotation scores."""
    datasets: dict[str, Any] = {}
    strict = preannotation.loc[(preannotation["matching"] == "strict") & (preannotation["averaging"] == "micro")]
    strict_rows = {
        (str(d), str(s)): {m: _number(v) for m, v in zip(("precision", "recall", "f1"), values, strict=True)}
        for d, s, *values in strict[["dataset", "system", "precision", "recall", "f1"]].itertuples(index=False)
    }
    sizes = union.groupby("dataset").size()
    documents = rows.groupby("dataset")["doc_id"].nunique()
    for (dataset, system), part in rates.groupby(["dataset", "system"], sort=True):
        entry = datasets.setdefault(
            str(dataset),
            {
                "n_documents": int(documents.get(dataset, 0)),
                "verification_union": int(sizes.get(dataset, 0)),
                "systems": {},
            },
        )
        metrics = part.set_index("metric")
        entry["systems"][str(system)] = {
            "n_annotations": int(metrics["n"].to_numpy()[metrics.index.get_loc("verification_rate")]),
            **{
                metric: {
                    "value": _number(metrics.loc[metric, "value"]),
                    "low": _number(metrics.loc[metric, "low"]),
                    "high": _number(metrics.loc[metric, "high"]),
                }
                for metric in ("verification_rate", "posthoc_recall", "posthoc_f1")
            },
        }
        if (str(dataset), str(system)) in strict_rows:
            entry["systems"][str(system)]["preannotation_strict_micro"] = strict_rows[(str(dataset), str(system))]
    return {**base, "datasets": datasets}


def score_judgements(
    judgements: pd.DataFrame,
    mentions: pd.DataFrame,
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    resample_unit: str = "doc_id",
    confidence: float = 0.95,
    exclude_failing_workers: bool = True,
    control_pass_threshold: float = 1.0,
    study: str | None = None,
    gt_system: str = GT_SYSTEM,
    ties_verified: bool = False,
    add_missing_to_gold: bool = True,
) -> Scores:
    """Score a posthoc verification study: every table of :class:`posthoc.scores.Scores` (seed 000 sections 3-4).

    ``judgements``: the tidy judgements table (:data:`posthoc.tables.JUDGEMENT_COLUMNS`, document
    offsets); control rows (``is_control``) only decide which workers pass. ``mentions``: the
    source mentions table, GT under ``gt_system`` (pre-annotation scores, union outcomes A-E,
    corrected gold). Options: ``n_resamples`` bootstrap resamples of ``resample_unit`` (one of
    ``doc_id, task, annotation, worker``; pre-annotation intervals always resample documents),
    seeded by ``seed``; ``confidence`` of the percentile intervals; failing workers (control pass
    rate below ``control_pass_threshold``) are dropped when ``exclude_failing_workers``;
    ``ties_verified`` counts a k-judge tie as verified; ``add_missing_to_gold`` adds verified
    annotations missing from GT (outcome E) to the corrected gold. The summary is JSON-able and
    deterministic (no timestamps).
    """
    _check_options(n_resamples, resample_unit, confidence)
    all_rows = judged_rows(judgements, keep_controls=True)
    source = mention_rows(mentions)
    gt = source.loc[source["system"] == gt_system]
    controls = control_results(all_rows, pass_threshold=control_pass_threshold, exclude=exclude_failing_workers)
    excluded = set(controls.loc[controls["excluded"], "worker"])
    control = is_control(all_rows)
    rows = all_rows.loc[~control & ~all_rows["worker"].isin(excluded).to_numpy()].reset_index(drop=True)
    verdicts, codes = verdicts_of(rows, ties_verified=ties_verified)
    union = union_from_verdicts(verdicts)
    judgement_rng, preannotation_rng = _generators(seed)
    rates = _rates(
        rows, verdicts, codes, union,
        resample_unit=resample_unit, n_resamples=n_resamples, rng=judgement_rng, confidence=confidence,
    )  # fmt: skip
    preannotation = _preannotation(
        source, gt_system=gt_system, n_resamples=n_resamples, rng=preannotation_rng, confidence=confidence
    )
    outcome_counts = shares_from_rows(rows)[["dataset", "system", "outcome", "count", "share"]]
    letters = classify_against_gt(union, gt)
    union_outcomes = outcomes_from_letters(union, letters)
    reliability = reliability_from_verdicts(verdicts)
    aggregated = aggregated_from(rows, verdicts, codes)
    missing = union.loc[letters == "E"] if add_missing_to_gold else None
    gold = gold_from(rows, verdicts, codes, gt, missing, gt_system=gt_system)
    studies = sorted(all_rows["study"].dropna().astype(str).unique()) if "study" in all_rows.columns else []
    k = int(verdicts["n_judges"].max()) if len(verdicts) else 0
    base: dict[str, Any] = {
        "study": study if study is not None else ",".join(studies),
        "n_judgements": len(rows),
        "n_control_judgements": int(control.sum()),
        "n_excluded_judgements": int((~control).sum()) - len(rows),
        "n_workers": int(all_rows["worker"].nunique()),
        "n_excluded_workers": len(excluded),
        "n_annotations": len(verdicts),
        "max_judges_per_annotation": k,
        "resample_unit": resample_unit,
        "preannotation_resample_unit": "doc_id",
        "n_resamples": n_resamples,
        "seed": seed,
        "confidence": confidence,
        "exclude_failing_workers": exclude_failing_workers,
        "control_pass_threshold": control_pass_threshold,
        "ties_verified": ties_verified,
        "gt_system": gt_system,
    }
    return Scores(
        rates=rates,
        preannotation=preannotation,
        outcome_counts=outcome_counts.reset_index(drop=True),
        agreement=agreement_from_verdicts(verdicts),
        union_outcomes=union_outcomes,
        controls=controls,
        exclusions=_exclusions(all_rows, controls, control_pass_threshold),
        reliability=reliability,
        aggregated=aggregated,
        corrected_gold=gold,
        summary=_summary(rates, preannotation, union, rows, base),
    )
