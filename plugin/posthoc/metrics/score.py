"""``score_judgements``: every metric of seed 000 sections 3 and 4 with bootstrap intervals, as :class:`Scores`.

Order of work: validate the tables; control results and exclusion of failing workers; per-annotation
verdicts; verification rates, union, posthoc precision / recall / F1 and outcome shares with
bootstrap intervals (BCa by default, or percentile; one vectorised resampling of the chosen unit for all of
them) and the paired comparisons of every pair of systems from the same resamples;
pre-annotation scores with intervals from resampling documents; agreement on the intersection;
union outcomes A-E; reliability and aggregated labels when k > 1; the corrected gold standard.
"""

from __future__ import annotations

import math
from typing import Any, Final, SupportsFloat

import numpy as np
import pandas as pd

from posthoc.arrays import Bools, Strings
from posthoc.errors import PosthocInputError
from posthoc.metrics.agreement import agreement_from_verdicts
from posthoc.metrics.bootstrap import UNITS, ratio, resampled_sums, unit_matrix
from posthoc.metrics.codes import derive_codes, factorize, shared_factorisation
from posthoc.metrics.comparisons import comparison_summary, paired_comparisons, paired_method, ranking_changes
from posthoc.metrics.controls import control_results
from posthoc.metrics.gold import gold_from
from posthoc.metrics.inputs import ANNOTATION, JUDGEMENT_NEEDS, is_control, judged_rows, mention_rows
from posthoc.metrics.intervals import DEFAULT_INTERVAL, check_method, percentile_interval
from posthoc.metrics.options import ScoringOptions
from posthoc.metrics.preannotation import counts_of_rows, scores_from_counts
from posthoc.metrics.rates import (
    RATE_METRICS,
    empty_rates,
    rate_jackknife,
    rate_samples,
    rate_statistics,
    rates_table,
)
from posthoc.metrics.reliability import aggregated_from, reliability_from_verdicts
from posthoc.metrics.reuse import reuse_check
from posthoc.metrics.tuple_codes import sorted_codes
from posthoc.metrics.union import classify_against_gt, outcomes_from_letters
from posthoc.metrics.verification import check_union, shares_from_rows, union_from_verdicts, verdicts_of
from posthoc.metrics.verified_categories import verified_category_tables
from posthoc.scores import Scores, empty_comparisons
from posthoc.tables import GT_SYSTEM, Judgements, Mentions

PREANNOTATION_COLUMNS: Final = [
    "dataset", "system", "matching", "averaging", "precision", "recall", "f1",
    "low_precision", "high_precision", "low_recall", "high_recall",
]  # fmt: skip
EXCLUSION_COLUMNS: Final = ["kind", "worker", "task_key", "detail", "count"]
#: The judgement columns the metrics of the counted rows read (resampling units, verdicts, gold, crowd-kit).
METRIC_COLUMNS: Final = frozenset({*JUDGEMENT_NEEDS, "chunk_id", "mention_id", "new_link", "surface"})
DEFAULT_SCORING: Final = ScoringOptions()
__all__ = ["RATE_METRICS", "ScoringOptions", "compare_systems", "rates_with_intervals", "score_judgements"]


def _rates(
    rows: pd.DataFrame, *, resample_unit: str, n_resamples: int, rng: np.random.Generator, confidence: float,
    ties_verified: bool, union: str = "exact", keep: Bools | None = None, interval: str = DEFAULT_INTERVAL,
    gt_system: str | None = GT_SYSTEM, paired_interval: str | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The rates table (:mod:`posthoc.scores`) with intervals from one stratified resampling of units, and the
    paired comparisons of its systems from the same draws (:mod:`posthoc.metrics.comparisons`; ``gt_system``
    None: the rates alone, the comparisons table empty)."""
    if len(rows) == 0 or (keep is not None and not keep.any()):
        return empty_rates(), empty_comparisons()
    stats = rate_statistics(rows, resample_unit=resample_unit, ties_verified=ties_verified, union=union, keep=keep)
    sums = resampled_sums(stats.counts, stats.strata, n_resamples=n_resamples, rng=rng)
    samples = rate_samples(sums, stats)
    jackknife = rate_jackknife(stats) if interval == "bca" else None
    table = rates_table(stats, samples, confidence=confidence, method=interval, jackknife=jackknife)
    if gt_system is None:
        return table, empty_comparisons()
    return table, paired_comparisons(stats, samples, jackknife=jackknife,
                                     method=paired_interval or paired_method(interval),
                                     confidence=confidence, gt_system=gt_system)


def _counted_rows(judgements: Judgements) -> tuple[pd.DataFrame, Bools]:
    """Validated judgement rows (the columns the rates read) and the mask of the non-control ones."""
    read = [c for c in (*JUDGEMENT_NEEDS, "chunk_id", "is_control") if c in judgements.columns]
    rows = judged_rows(judgements[read] if set(JUDGEMENT_NEEDS) <= set(read) else judgements, keep_controls=True)
    return rows, ~is_control(rows)


@shared_factorisation()
def rates_with_intervals(
    judgements: Judgements,
    *,
    resample_unit: str = "doc_id",
    n_resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    ties_verified: bool = False,
    union: str = "exact",
    interval: str = DEFAULT_INTERVAL,
) -> pd.DataFrame:
    """The ``rates`` table of :class:`~posthoc.scores.Scores` alone (seed 000 sections 3.2 and 4, Figure 3 right).

    ``dataset, system, metric, value, low, high, n`` for the metrics of :data:`RATE_METRICS`; ``n``
    is the denominator (annotations judged; ``|V(d)|`` for recall; judgements for the shares).
    Control rows are ignored, no worker is excluded (``score_judgements`` does that first). Same
    intervals as :func:`score_judgements` for the same rows and seed. ``union``: the verification union
    ``exact`` (default) or ``overlap`` (:mod:`posthoc.metrics.verification`); ``interval``: ``bca`` or
    ``percentile`` (:mod:`posthoc.metrics.intervals`).

    Examples:
        System A, three documents of one annotation each: verified, verified, removed (``r = 2/3``, ``n = 3``).
        A resample of 3 documents draws only the removed one with probability ``1/27`` (3.7%) and only verified ones
        with ``8/27``, so the 95% percentile bounds are 0 and 1.

        >>> import pandas as pd
        >>> from posthoc.metrics import rates_with_intervals
        >>> judgements = pd.DataFrame(
        ...     [("d", "1", "A", 0, 5, "Paris", "w1", "verify"), ("d", "2", "A", 0, 5, "Seine", "w1", "verify"),
        ...      ("d", "3", "A", 0, 4, "Lyon", "w1", "remove")],
        ...     columns=["dataset", "doc_id", "system", "start", "end", "link", "worker", "outcome"])
        >>> rates = rates_with_intervals(judgements, n_resamples=200, interval="percentile")
        >>> rates.loc[rates["metric"] == "verification_rate", ["system", "value", "low", "high", "n"]]
          system     value  low  high  n
        0      A  0.666667  0.0   1.0  3
    """
    return _checked_rates(judgements, resample_unit=resample_unit, n_resamples=n_resamples, seed=seed,
                          confidence=confidence, ties_verified=ties_verified, union=union, interval=interval,
                          gt_system=None)[0]


@shared_factorisation()
def compare_systems(
    judgements: Judgements, *, resample_unit: str = "doc_id", n_resamples: int = 1000, seed: int = 0,
    confidence: float = 0.95, ties_verified: bool = False, union: str = "exact", interval: str = DEFAULT_INTERVAL,
    gt_system: str = GT_SYSTEM, paired_interval: str | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(rates, comparisons)``: :func:`rates_with_intervals` and the paired comparisons of every pair of systems
    of a dataset from the same resamples (:func:`posthoc.metrics.comparisons.paired_comparisons`; seed 000 RQ1).
    Options as :func:`rates_with_intervals`; ``gt_system`` is put first in each pair; ``paired_interval``: the
    pairs' method (``jackknife_t``, ``bca``, ``percentile``), by default
    :func:`~posthoc.metrics.comparisons.paired_method` of ``interval`` (BCa's pairs on the jackknife t, issue 46).

    Examples:
        A verified 2 of 3 annotations, B 1 of the same 3; the union holds A's 2, so recall is 2/2 and 1/2 and F1
        ``2 (2/3) 1 / (2/3 + 1) = 0.8`` and ``2 (1/3)(1/2) / (1/3 + 1/2) = 0.4``.

        >>> import pandas as pd
        >>> from posthoc.metrics import compare_systems
        >>> judgements = pd.DataFrame(
        ...     [("d", doc, system, 0, 5, link, worker, outcome) for system, worker, outcomes in
        ...      [("A", "w1", ["verify", "verify", "remove"]), ("B", "w2", ["verify", "remove", "remove"])]
        ...      for doc, link, outcome in zip(["1", "2", "3"], ["Paris", "Seine", "Lyon"], outcomes)],
        ...     columns=["dataset", "doc_id", "system", "start", "end", "link", "worker", "outcome"])
        >>> rates, comparisons = compare_systems(judgements, n_resamples=200, interval="percentile")
        >>> comparisons[["system_a", "system_b", "metric", "value_a", "value_b", "difference"]]
          system_a system_b             metric   value_a   value_b  difference
        0        A        B  posthoc_precision  0.666667  0.333333    0.333333
        1        A        B     posthoc_recall  1.000000  0.500000    0.500000
        2        A        B         posthoc_f1  0.800000  0.400000    0.400000
        3        A        B  verification_rate  0.666667  0.333333    0.333333
    """
    return _checked_rates(judgements, resample_unit=resample_unit, n_resamples=n_resamples, seed=seed,
                          confidence=confidence, ties_verified=ties_verified, union=union, interval=interval,
                          gt_system=gt_system, paired_interval=paired_interval)


def _checked_rates(judgements: Judgements, *, resample_unit: str, n_resamples: int, seed: int, confidence: float,
                   ties_verified: bool, union: str, interval: str, gt_system: str | None,
                   paired_interval: str | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Options checked, the judgements validated, then :func:`_rates` (comparisons unless ``gt_system`` is None)."""
    _check_options(n_resamples, resample_unit, confidence)
    check_union(union)
    check_method(interval)
    if paired_interval is not None:
        paired_method(paired_interval)  # a bad method is refused before any work
    rows, keep = _counted_rows(judgements)
    return _rates(rows, resample_unit=resample_unit, n_resamples=n_resamples, rng=_generators(seed)[0],
                  confidence=confidence, ties_verified=ties_verified, union=union, keep=keep, interval=interval,
                  gt_system=gt_system, paired_interval=paired_interval)


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
    # documents sorted by (dataset, doc_id), groups by (dataset, system, matching): the orders of the point table
    dataset = factorize(counts["dataset"], sort=True)[0]
    unit, first_row = sorted_codes(dataset, factorize(counts["doc_id"], sort=True)[0])
    strata = dataset[first_row]
    group_keys = ["dataset", "system", "matching"]
    group, _ = sorted_codes(*[factorize(counts[key], sort=True)[0] for key in group_keys])
    n_groups, n_documents = int(group.max()) + 1, len(first_row)
    fields = ["tp_system", "n_system", "tp_gt", "n_gt", "in_scope", "precision", "recall"]
    slots = len(fields)
    scope = counts["in_scope"].to_numpy(float)
    weights = [counts[f].to_numpy(float) * (scope if f in ("precision", "recall") else 1.0) for f in fields]
    matrix = unit_matrix(
        np.tile(unit, slots),
        np.concatenate([group * slots + i for i in range(slots)]),
        np.concatenate(weights),
        n_documents,
        slots * n_groups,
    )
    sums = resampled_sums(matrix, strata, n_resamples=n_resamples, rng=rng).reshape(n_resamples, n_groups, slots)
    bounds = {
        ("micro", "precision"): ratio(sums[:, :, 0], sums[:, :, 1]),
        ("micro", "recall"): ratio(sums[:, :, 2], sums[:, :, 3]),
        ("macro", "precision"): ratio(sums[:, :, 5], sums[:, :, 4]),
        ("macro", "recall"): ratio(sums[:, :, 6], sums[:, :, 4]),
    }
    table = point.copy()
    where, _ = sorted_codes(*[factorize(table[key], sort=True)[0] for key in group_keys])  # each row's group
    averaging_of = table["averaging"].to_numpy(object)
    for measure in ("precision", "recall"):
        low_column, high_column = np.full(len(table), np.nan), np.full(len(table), np.nan)
        for averaging in ("micro", "macro"):
            low, high = percentile_interval(bounds[(averaging, measure)], confidence=confidence)
            rows = averaging_of == averaging
            low_column[rows], high_column[rows] = low[where[rows]], high[where[rows]]
        table[f"low_{measure}"], table[f"high_{measure}"] = low_column, high_column
    return table[PREANNOTATION_COLUMNS].reset_index(drop=True)


def _exclusions(judgements: Judgements, controls: pd.DataFrame, threshold: float) -> pd.DataFrame:
    rows: list[tuple[str, object, None, str, int]] = []  # EXCLUSION_COLUMNS (worker as the table holds it)
    control = is_control(judgements)
    if control.any():
        rows.append(("control_rows", None, None, "control annotations are never counted in the metrics",
                     int(control.sum())))
    excluded = controls.loc[controls["excluded"]]
    if len(excluded):
        counted = judgements.loc[~control, "worker"].astype(str).value_counts()
        for record in excluded.itertuples(index=False):
            detail = (f"failed the control task: {record.n_passed} of {record.n_control} control annotations right "
                      f"(pass rate {record.pass_rate:.3f} < threshold {threshold:g})")
            rows.append(("failing_worker", record.worker, None, detail, int(counted.get(record.worker, 0))))
    table = pd.DataFrame(rows, columns=EXCLUSION_COLUMNS)
    return table.astype({"kind": "str", "detail": "str", "count": "int64"})


def _number(value: SupportsFloat) -> float | None:
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
    union_dataset, union_names = factorize(union["dataset"], sort=True)
    union_sizes = np.bincount(union_dataset, minlength=len(union_names))
    sizes = dict(zip(union_names.tolist(), union_sizes.tolist(), strict=True))
    row_dataset, row_names = factorize(rows["dataset"], sort=True)
    row_doc, doc_names = factorize(rows["doc_id"], sort=True)
    width = max(len(doc_names), 1)
    pairs = np.unique(row_dataset * width + row_doc)  # the distinct documents of each dataset
    n_documents = np.bincount(pairs // width, minlength=len(row_names))
    documents = dict(zip(row_names.tolist(), n_documents.tolist(), strict=True))
    # the rates table's (dataset, system) groups in sorted order, as groupby(["dataset", "system"], sort=True)
    rate_dataset, dataset_names = factorize(rates["dataset"], sort=True)
    rate_system, system_names = factorize(rates["system"], sort=True)
    group = rate_dataset * max(len(system_names), 1) + rate_system
    metric_of = rates["metric"].to_numpy(object)
    numbers = {c: rates[c].to_numpy() for c in ("value", "low", "high", "n")}
    for key in np.unique(group).tolist():
        dataset, system = str(dataset_names[key // len(system_names)]), str(system_names[key % len(system_names)])
        where: dict[str, int] = {}
        for row in np.flatnonzero(group == key).tolist():
            where.setdefault(str(metric_of[row]), row)  # a metric's first row in the group
        entry = datasets.setdefault(
            dataset,
            {
                "n_documents": int(documents.get(dataset, 0)),
                "verification_union": int(sizes.get(dataset, 0)),
                "systems": {},
            },
        )
        entry["systems"][system] = {
            "n_annotations": int(numbers["n"][where["verification_rate"]]),
            **{
                metric: {bound: _number(numbers[bound][where[metric]]) for bound in ("value", "low", "high")}
                for metric in ("verification_rate", "mention_rate", "posthoc_recall", "posthoc_f1")
            },
        }
        if (dataset, system) in strict_rows:
            entry["systems"][system]["preannotation_strict_micro"] = strict_rows[(dataset, system)]
    return {**base, "datasets": datasets}


@shared_factorisation()
def score_judgements(judgements: Judgements, mentions: Mentions, *,
                     options: ScoringOptions = DEFAULT_SCORING) -> Scores:
    """Score a posthoc verification study: every table of :class:`posthoc.scores.Scores` (seed 000 sections 3-4).

    ``judgements``: the tidy judgements table (:data:`posthoc.tables.JUDGEMENT_COLUMNS`, document
    offsets); control rows (``is_control``) only decide which workers pass. ``mentions``: the
    source mentions table, GT under ``options.gt_system`` (pre-annotation scores, union outcomes A-E,
    corrected gold). ``options``: a :class:`~posthoc.metrics.options.ScoringOptions` (bootstrap resamples,
    seed, unit, confidence, worker exclusion, ties, the union ``exact`` or ``overlap`` for recall, F1 and the
    outcomes A-E, the corrected gold always adding exact spans, the intervals' method). The rates include
    ``mention_rate``, the share of annotations whose mention was right (verified or edited). ``comparisons`` and
    ``rankings``: every pair of systems of a dataset, from the rates' own resamples (seed 000 RQ1). The summary
    is JSON-able and deterministic (no timestamps).

    Examples:
        System A's three annotations: ``Paris`` (in GT) and ``Seine`` (not in GT) verified, ``Lyon`` removed. The
        verification rate is ``2/3``; the union ``{Paris, Seine}`` is one A (in GT) and one E (missing from GT).

        >>> import pandas as pd
        >>> from posthoc.metrics import score_judgements
        >>> judgements = pd.DataFrame(
        ...     [("d", "1", "A", 0, 5, "Paris", "w1", "verify"), ("d", "2", "A", 0, 5, "Seine", "w1", "verify"),
        ...      ("d", "3", "A", 0, 4, "Lyon", "w1", "remove")],
        ...     columns=["dataset", "doc_id", "system", "start", "end", "link", "worker", "outcome"])
        >>> mentions = pd.DataFrame(
        ...     [("d", "1", "GT", 0, 5, "Paris"), ("d", "1", "A", 0, 5, "Paris"), ("d", "2", "A", 0, 5, "Seine"),
        ...      ("d", "3", "A", 0, 4, "Lyon")], columns=["dataset", "doc_id", "system", "start", "end", "link"])
        >>> scores = score_judgements(judgements, mentions)
        >>> scores.rates.loc[scores.rates["metric"] == "verification_rate", ["system", "value", "n"]]
          system     value  n
        0      A  0.666667  3
        >>> scores.union_outcomes.loc[scores.union_outcomes["count"] > 0, ["outcome", "count", "share"]]
          outcome  count  share
        0       A      1    0.5
        4       E      1    0.5
    """
    _check_options(options.n_resamples, options.resample_unit, options.confidence)
    check_union(options.union)
    check_method(options.interval)
    all_rows = judged_rows(judgements, keep_controls=True)
    source = mention_rows(mentions)
    gt = _gt_rows(source, options.gt_system)
    controls = control_results(all_rows, pass_threshold=options.control_pass_threshold,
                               exclude=options.exclude_failing_workers)
    rows, control, excluded = _metric_rows(all_rows, controls)
    verdicts, codes = verdicts_of(rows, ties_verified=options.ties_verified)
    exact_union = union_from_verdicts(verdicts)
    union_table = exact_union if options.union == "exact" else union_from_verdicts(verdicts, union=options.union)
    judgement_rng, preannotation_rng = _generators(options.seed)
    rates, comparisons = _rates(
        rows, resample_unit=options.resample_unit, n_resamples=options.n_resamples, rng=judgement_rng,
        confidence=options.confidence, ties_verified=options.ties_verified, union=options.union,
        interval=options.interval, gt_system=options.gt_system,
    )  # fmt: skip
    preannotation = _preannotation(source, gt_system=options.gt_system, n_resamples=options.n_resamples,
                                   rng=preannotation_rng, confidence=options.confidence)
    letters = classify_against_gt(union_table, gt)
    union_outcomes = outcomes_from_letters(union_table, letters)
    aggregated = aggregated_from(rows, verdicts, codes)
    exact_letters = letters if options.union == "exact" else classify_against_gt(exact_union, gt)
    missing = _missing_from_gt(exact_union, exact_letters) if options.add_missing_to_gold else None
    gold = gold_from(rows, verdicts, codes, gt, missing, gt_system=options.gt_system)
    base = {**_study_counts(all_rows, rows, control, excluded, verdicts, study=options.study),
            **options.summary_entries()}
    rankings = ranking_changes(comparisons, rates, preannotation, gt_system=options.gt_system)
    categories, category_summary = verified_category_tables(
        source, rows, verdicts, codes, gt_system=options.gt_system, n_resamples=options.n_resamples,
        seed=options.seed, confidence=options.confidence, interval=options.interval)
    return Scores(
        rates=rates, preannotation=preannotation, outcome_counts=_outcome_counts(rows),
        agreement=agreement_from_verdicts(verdicts), union_outcomes=union_outcomes, controls=controls,
        exclusions=_exclusions(all_rows, controls, options.control_pass_threshold),
        reliability=reliability_from_verdicts(verdicts), aggregated=aggregated, corrected_gold=gold,
        summary={**_summary(rates, preannotation, union_table, rows, base),
                 "comparisons": comparison_summary(comparisons, rankings)},
        comparisons=comparisons, rankings=rankings, error_categories=categories,
        error_category_summary=category_summary,
        reuse=reuse_check(rows, controls=all_rows.take(np.flatnonzero(control))),  # issue 46
    )


def _gt_rows(source: pd.DataFrame, gt_system: str) -> pd.DataFrame:
    """The source mentions of ``gt_system``, their key columns' codes derived from the source's."""
    of_gt = np.flatnonzero((source["system"] == gt_system).to_numpy())
    gt = source.take(of_gt)
    for key in gt.columns:
        derive_codes(source[key], of_gt, gt[key])
    return gt


def _metric_rows(all_rows: pd.DataFrame, controls: pd.DataFrame) -> tuple[pd.DataFrame, Bools, set[object]]:
    """The counted rows (neither control rows nor an excluded worker's), only the columns the metrics read; the
    mask of control rows among ``all_rows``; the excluded workers (``controls``: :func:`control_results`)."""
    excluded = set(controls.loc[controls["excluded"], "worker"])
    control = is_control(all_rows)
    counted = np.flatnonzero(~control & ~all_rows["worker"].isin(excluded).to_numpy())
    read = [column for column in all_rows.columns if column in METRIC_COLUMNS]  # no copy of the other columns
    return all_rows[read].take(counted).reset_index(drop=True), control, excluded


def _outcome_counts(rows: pd.DataFrame) -> pd.DataFrame:
    """Judgements per outcome of each (dataset, system) and their shares."""
    return shares_from_rows(rows)[["dataset", "system", "outcome", "count", "share"]].reset_index(drop=True)


def _missing_from_gt(exact_union: pd.DataFrame, exact_letters: Strings) -> pd.DataFrame:
    """The verified annotations missing from GT (outcome E), which the corrected gold adds."""
    added = np.flatnonzero(exact_letters == "E")
    missing = exact_union.take(added)
    for key in ANNOTATION:
        derive_codes(exact_union[key], added, missing[key])
    return missing


def _study_counts(all_rows: pd.DataFrame, rows: pd.DataFrame, control: Bools, excluded: set[object],
                  verdicts: pd.DataFrame, *, study: str | None) -> dict[str, Any]:
    """The summary's first entries: the study's name and what was counted and left out."""
    studies = sorted(all_rows["study"].dropna().astype(str).unique()) if "study" in all_rows.columns else []
    return {
        "study": study if study is not None else ",".join(studies),
        "n_judgements": len(rows),
        "n_control_judgements": int(control.sum()),
        "n_excluded_judgements": int((~control).sum()) - len(rows),
        "n_workers": int(all_rows["worker"].nunique()),
        "n_excluded_workers": len(excluded),
        "n_annotations": len(verdicts),
        "max_judges_per_annotation": int(verdicts["n_judges"].max()) if len(verdicts) else 0,
    }
