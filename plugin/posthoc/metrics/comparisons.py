"""Paired comparisons of systems and their rankings, strict against posthoc (seed 000 RQ1, section 4, Figure 3).

Paper 000 asks first "how does this impact validation of the state of the art?": is system A's posthoc
precision higher than system B's (or the ground truth's), by how much, how sure, and does the ranking of the
pre-annotation (strict) evaluation hold under posthoc evaluation?

:func:`paired_comparisons` answers the first from the rates' own bootstrap (:mod:`posthoc.metrics.rates`): the
resampled rates of two systems of one dataset come from the *same* draws of documents (units), so their
difference per resample is the paired bootstrap of the difference, at the cost of one subtraction (no new
draw). The jackknife of the difference (for BCa) is the difference of the rates' jackknives.
:func:`ranking_changes` ranks the systems of each dataset by strict micro pre-annotation scores and by
posthoc scores and marks each change of rank with whether a posthoc difference behind it is significant.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import pandas as pd

from posthoc.arrays import Floats, Objects
from posthoc.metrics.intervals import check_method, holm, interval_and_p, jackknife_t
from posthoc.metrics.rates import Jackknife, RateStatistics, point_rates
from posthoc.scores import RANKING_COLUMNS, empty_comparisons, typed_rankings
from posthoc.tables import GT_SYSTEM

#: The compared metrics (``verification_rate`` is posthoc precision, paper 000 section 3.2; both are listed).
COMPARED: Final = ("posthoc_precision", "posthoc_recall", "posthoc_f1", "verification_rate")
RANKED: Final = {"precision": "posthoc_precision", "recall": "posthoc_recall", "f1": "posthoc_f1"}
#: The paired comparisons' method for each interval method of the rates (issue 46): the default BCa run tests its
#: pairs with the cluster jackknife t (:func:`~posthoc.metrics.intervals.jackknife_t`), which holds its level at
#: 20 documents with document effects where the paired bootstrap does not (bench/validity_bench.py);
#: ``percentile`` keeps the paper's paired bootstrap (the old method).
PAIRED_METHOD: Final = {"bca": "jackknife_t", "percentile": "percentile", "jackknife_t": "jackknife_t"}


def paired_method(interval: str) -> str:
    """The paired comparisons' method (:data:`PAIRED_METHOD`) for the rates' interval method.

    Examples:
        >>> from posthoc.metrics.comparisons import paired_method
        >>> paired_method("bca"), paired_method("percentile")
        ('jackknife_t', 'percentile')
    """
    if interval not in PAIRED_METHOD:
        check_method(interval)
    return PAIRED_METHOD[interval]


def system_order(systems: list[str], gt_system: str = GT_SYSTEM) -> list[str]:
    """The ground truth first, then the other systems alphabetically (the report's order).

    Examples:
        >>> from posthoc.metrics.comparisons import system_order
        >>> system_order(["REL", "GT", "E2E", "REL"])
        ['GT', 'E2E', 'REL']
    """
    return sorted(set(systems), key=lambda name: (name != gt_system, name))


def _pairs(stats: RateStatistics, gt_system: str) -> list[tuple[int, int]]:
    """``(a, b)`` group indices: every pair of systems of one dataset, a before b in :func:`system_order`."""
    pairs = []
    for dataset in np.unique(stats.group_dataset):
        groups = np.flatnonzero(stats.group_dataset == dataset)
        ordered = system_order([str(stats.systems[g]) for g in groups], gt_system)
        index = {str(stats.systems[g]): int(g) for g in groups}
        pairs += [(index[a], index[b]) for i, a in enumerate(ordered) for b in ordered[i + 1 :]]
    return pairs


def paired_comparisons(
    stats: RateStatistics,
    samples: dict[str, Floats],
    *,
    jackknife: Jackknife | None = None,
    method: str = "bca",
    confidence: float = 0.95,
    gt_system: str = GT_SYSTEM,
) -> pd.DataFrame:
    """Every pair of systems of every dataset (GT included): paired differences with intervals and p-values.

    ``stats`` / ``samples``: :func:`~posthoc.metrics.rates.rate_statistics` and
    :func:`~posthoc.metrics.rates.rate_samples` of the rates' resampled sums (the draws are reused);
    ``jackknife``: :func:`~posthoc.metrics.rates.rate_jackknife` (for ``bca``; computed when missing).
    Columns (one row per dataset, pair and metric of :data:`COMPARED`):

    ``dataset, system_a, system_b``  the pair, ``system_a`` first in :func:`system_order` (GT first)
    ``metric``                       ``posthoc_precision, posthoc_recall, posthoc_f1, verification_rate``
    ``value_a, value_b``             the two systems' point values (exact counts)
    ``difference``                   ``value_a - value_b``
    ``ci_low, ci_high``              the ``confidence`` interval of the difference: ``method`` ``jackknife_t``
                                     (the cluster jackknife t over units, from the rates' jackknife;
                                     :func:`~posthoc.metrics.intervals.jackknife_t`), or from the paired
                                     resamples (``bca`` or ``percentile``, :mod:`posthoc.metrics.intervals`)
    ``p_value``                      two-sided p-value of "no difference" (the interval inverted)
    ``p_holm``                       Holm-adjusted over the pairs of the dataset, per metric
    ``significant``                  ``p_holm < 1 - confidence``
    ``method``                       the interval method

    Examples:
        :func:`~posthoc.metrics.rates.rate_statistics`' example (A verified 1 of 2, B 1 of 1) and two resamples of the
        two documents: doc 1 twice (A 2/2, B 2/2: difference 0) and both (1/2 - 1/1 = -0.5). The percentile interval
        of ``-0.5, 0`` is ``-0.5 + 0.025 x 0.5`` to ``-0.5 + 0.975 x 0.5``; one below 0 and one tie (half) of two,
        so ``p = 2 x min(0.75, 0.25) = 0.5``, one pair so Holm keeps it.

        >>> import numpy as np
        >>> import pandas as pd
        >>> from posthoc.metrics.comparisons import paired_comparisons
        >>> from posthoc.metrics.inputs import judged_rows
        >>> from posthoc.metrics.rates import rate_samples, rate_statistics
        >>> rows = judged_rows(pd.DataFrame([("d", "1", "A", "Paris", "verify"), ("d", "2", "A", "Seine", "remove"),
        ...     ("d", "1", "B", "Paris", "verify")], columns=["dataset", "doc_id", "system", "link", "outcome"]).assign(
        ...     start=0, end=5, worker="w1"))
        >>> stats = rate_statistics(rows, resample_unit="doc_id")
        >>> samples = rate_samples(np.array([[2.0, 0.0], [1.0, 1.0]]) @ stats.counts, stats)
        >>> table = paired_comparisons(stats, samples, method="percentile")
        >>> table.loc[table["metric"] == "posthoc_precision",
        ...           ["system_a", "system_b", "difference", "ci_low", "ci_high", "p_holm", "significant"]].round(6)
          system_a system_b  difference  ci_low  ci_high  p_holm  significant
        0        A        B        -0.5 -0.4875  -0.0125     0.5        False
    """
    from posthoc.metrics.rates import rate_jackknife

    pairs = _pairs(stats, gt_system)
    if not pairs:
        return empty_comparisons()
    if method in ("bca", "jackknife_t") and jackknife is None:
        jackknife = rate_jackknife(stats)
    first, second = (np.asarray(side, dtype=np.int64) for side in zip(*pairs, strict=True))
    values = point_rates(stats)
    # every metric's pairs side by side: one interval and p-value pass over (resamples, metrics x pairs)
    point = np.concatenate([np.asarray(values[m][0], dtype=float)[first] for m in COMPARED]), np.concatenate(
        [np.asarray(values[m][0], dtype=float)[second] for m in COMPARED])
    resampled = np.hstack([samples[m][:, first] - samples[m][:, second] for m in COMPARED])
    jack = mask = n_units = None
    if jackknife is not None:
        jack = np.hstack([jackknife.values[m][:, first] - jackknife.values[m][:, second] for m in COMPARED])
        mask = jackknife.columns(np.tile(first, len(COMPARED)))  # a pair's two groups share a stratum
        n_units = mask.sizes()
    estimate = point[0] - point[1]
    if method == "jackknife_t" and jack is not None and len(resampled):
        low, high, p = jackknife_t(jack, estimate, mask=mask, confidence=confidence)
    else:  # no resamples asked (n_resamples 0): no interval by either method
        low, high, p = interval_and_p(resampled, estimate, method="percentile" if method == "jackknife_t" else method,
                                      jackknife=jack, mask=mask, confidence=confidence, n_units=n_units)
    n_pairs = len(pairs)
    metric_index = np.repeat(np.arange(len(COMPARED)), n_pairs)
    pair_index = np.tile(np.arange(n_pairs), len(COMPARED))
    dataset_code = np.tile(stats.group_dataset[first], len(COMPARED))
    order = np.lexsort((pair_index, metric_index, dataset_code))  # by dataset, then metric, then pair
    family = (dataset_code * len(COMPARED) + metric_index)[order]
    adjusted = np.empty(len(order))
    for code in np.unique(family):
        rows = np.flatnonzero(family == code)
        adjusted[rows] = holm(p[order][rows])
    def text(column: Objects) -> pd.api.extensions.ExtensionArray:
        strings: pd.api.extensions.ExtensionArray = pd.array(column[order], dtype="str")
        return strings

    return pd.DataFrame({
        "dataset": text(np.tile(stats.datasets[first], len(COMPARED))),
        "system_a": text(np.tile(stats.systems[first], len(COMPARED))),
        "system_b": text(np.tile(stats.systems[second], len(COMPARED))),
        "metric": text(np.asarray(COMPARED, dtype=object)[metric_index]),
        "value_a": point[0][order], "value_b": point[1][order], "difference": estimate[order],
        "ci_low": low[order], "ci_high": high[order], "p_value": p[order], "p_holm": adjusted,
        "significant": adjusted < 1 - confidence, "method": pd.array([method] * len(order), dtype="str"),
    })


def _strict_values(preannotation: pd.DataFrame, systems: list[str], dataset: str, measure: str,
                   gt_system: str) -> dict[str, float]:
    """Strict micro pre-annotation ``measure`` per system; the ground truth, the reference, scores 1."""
    rows = preannotation.loc[(preannotation["dataset"] == dataset) & (preannotation["matching"] == "strict")
                             & (preannotation["averaging"] == "micro")] if len(preannotation) else preannotation
    found = dict(zip(rows["system"].astype(str), rows[measure].astype(float), strict=True)) if len(rows) else {}
    return {s: (1.0 if s == gt_system else found.get(s, np.nan)) for s in systems}


def _ranks(values: dict[str, float]) -> dict[str, float]:
    """Rank 1 = highest; ties share the best rank (``min``); NaN unranked."""
    ranked = pd.Series(values, dtype=float).rank(ascending=False, method="min")
    return {str(name): float(rank) for name, rank in ranked.items()}


def ranking_changes(comparisons: pd.DataFrame, rates: pd.DataFrame, preannotation: pd.DataFrame, *,
                    gt_system: str = GT_SYSTEM) -> pd.DataFrame:
    """Each dataset's systems ranked by strict micro pre-annotation scores and by posthoc scores, side by side.

    Columns: ``dataset, metric`` (``precision, recall, f1``), ``system``, ``strict_value, strict_rank`` (against
    the ground truth, which scores 1 as the reference; seed 000 section 3.1), ``posthoc_value, posthoc_rank``
    (section 3.2), ``rank_change`` (``strict_rank - posthoc_rank``: positive moved up), ``changed``,
    ``flipped_with`` (the systems whose order with this one differs between the two rankings, comma-separated)
    and ``significant``: a posthoc difference with one of them is significant after Holm (``comparisons``'
    ``significant``). Ranks: 1 the highest, ties share the best rank.

    Examples:
        Strict, A (0.8) is above B (0.6); posthoc, B (0.9) is above A (0.7): each moves one rank and flipped with the
        other, and their posthoc precision difference is significant (recall's and f1's are not in ``comparisons``).

        >>> import pandas as pd
        >>> from posthoc.metrics.comparisons import ranking_changes
        >>> rates = pd.DataFrame([("d", s, m, v) for s, v in (("A", 0.7), ("B", 0.9))
        ...     for m in ("posthoc_precision", "posthoc_recall", "posthoc_f1")],
        ...     columns=["dataset", "system", "metric", "value"])
        >>> strict = pd.DataFrame([("d", s, "strict", "micro", v, v, v) for s, v in (("A", 0.8), ("B", 0.6))],
        ...     columns=["dataset", "system", "matching", "averaging", "precision", "recall", "f1"])
        >>> comparisons = pd.DataFrame([("d", "A", "B", "posthoc_precision", True)],
        ...     columns=["dataset", "system_a", "system_b", "metric", "significant"])
        >>> ranks = ranking_changes(comparisons, rates, strict)
        >>> ranks.loc[ranks["metric"] == "precision", ["system", "strict_rank", "posthoc_rank", "rank_change",
        ...                                            "flipped_with", "significant"]]
          system  strict_rank  posthoc_rank  rank_change flipped_with  significant
        0      A          1.0           2.0         -1.0            B         True
        1      B          2.0           1.0          1.0            A         True
    """
    records = []
    for dataset in sorted(set(rates["dataset"].astype(str))) if len(rates) else []:
        mine = rates.loc[rates["dataset"] == dataset]
        systems = system_order(mine["system"].astype(str).tolist(), gt_system)
        pairs = comparisons.loc[comparisons["dataset"] == dataset]
        for measure, metric in RANKED.items():
            posthoc = dict(zip(mine.loc[mine["metric"] == metric, "system"].astype(str),
                               mine.loc[mine["metric"] == metric, "value"].astype(float), strict=True))
            strict = _strict_values(preannotation, systems, dataset, measure, gt_system)
            strict_rank, posthoc_rank = _ranks(strict), _ranks(posthoc)
            significant_of = {frozenset((str(a), str(b))): bool(s) for a, b, s in pairs.loc[
                pairs["metric"] == metric, ["system_a", "system_b", "significant"]].itertuples(index=False)}
            for system in systems:
                flipped = [other for other in systems if other != system
                           and np.sign(strict[system] - strict[other]) * np.sign(posthoc[system] - posthoc[other]) < 0]
                change = strict_rank[system] - posthoc_rank[system]
                records.append((dataset, measure, system, strict[system], strict_rank[system], posthoc[system],
                                posthoc_rank[system], change, bool(change != 0) if not np.isnan(change) else False,
                                ",".join(flipped),
                                any(significant_of.get(frozenset((system, o)), False) for o in flipped)))
    return typed_rankings(pd.DataFrame.from_records(records, columns=RANKING_COLUMNS))


def _number(value: object) -> float | None:
    number = float(value)  # type: ignore[arg-type]
    return None if np.isnan(number) else number


def comparison_summary(comparisons: pd.DataFrame, rankings: pd.DataFrame) -> dict[str, object]:
    """The JSON summary's ``comparisons``: per dataset, the paired differences (``system_a - system_b`` per metric,
    with ``ci_low, ci_high, p_value, p_holm, significant``) and the ranking per metric, strict beside posthoc.

    Examples:
        One pair's row and one ranking row become the dataset's ``pairs`` and ``rankings`` entries.

        >>> import pandas as pd
        >>> from posthoc.metrics.comparisons import comparison_summary
        >>> comparisons = pd.DataFrame(
        ...     [("d", "A", "B", "posthoc_precision", -0.2, -0.3, -0.1, 0.002, 0.002, True, "bca")],
        ...     columns=["dataset", "system_a", "system_b", "metric", "difference", "ci_low", "ci_high", "p_value",
        ...              "p_holm", "significant", "method"])
        >>> rankings = pd.DataFrame([("d", "precision", "A", 1.0, 2.0, -1.0, True)],
        ...     columns=["dataset", "metric", "system", "strict_rank", "posthoc_rank", "rank_change", "significant"])
        >>> summary = comparison_summary(comparisons, rankings)
        >>> summary["method"], summary["datasets"]["d"]["pairs"][0]["difference"]
        ('bca', -0.2)
        >>> summary["datasets"]["d"]["rankings"]["precision"][0]
        {'system': 'A', 'strict_rank': 1.0, 'posthoc_rank': 2.0, 'rank_change': -1.0, 'significant': True}
    """
    datasets: dict[str, dict[str, object]] = {}
    for row in comparisons.itertuples(index=False):
        entry = datasets.setdefault(str(row.dataset), {"pairs": [], "rankings": {}})
        entry["pairs"].append({  # type: ignore[attr-defined]
            "system_a": str(row.system_a), "system_b": str(row.system_b), "metric": str(row.metric),
            **{key: _number(getattr(row, key)) for key in ("difference", "ci_low", "ci_high", "p_value", "p_holm")},
            "significant": bool(row.significant),
        })
    for row in rankings.itertuples(index=False):
        entry = datasets.setdefault(str(row.dataset), {"pairs": [], "rankings": {}})
        entry["rankings"].setdefault(str(row.metric), []).append({  # type: ignore[attr-defined]
            "system": str(row.system), "strict_rank": _number(row.strict_rank),
            "posthoc_rank": _number(row.posthoc_rank), "rank_change": _number(row.rank_change),
            "significant": bool(row.significant),
        })
    method = str(comparisons["method"].iloc[0]) if len(comparisons) else None
    return {"method": method, "holm_family": "pairs of one dataset, per metric", "datasets": datasets}
