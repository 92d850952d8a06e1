"""The rates table with bootstrap intervals: per-unit sufficient statistics once, then one resampling.

Paper 000 sections 3.2 and 4 (Figure 3 right, Figure 4). Every rate of :data:`RATE_METRICS` is a ratio
of sums over resampling units (documents by default) of seven counts per ``(dataset, system)`` group
and one per dataset (judgements are the sum of slots 2-4):

====  ========================================================================================
slot  per unit and group
====  ========================================================================================
0     annotations judged (each judgement of an annotation with ``k`` judges counts ``1 / k``)
1     verified annotations (``verified / k`` per judgement)
2-4   verify / edit / remove judgements
5     union members covered (recall's numerator: ``verified / k / n_own``, ``n_own`` the system's
      verified annotations in the member; 1 for the exact union, so slot 5 equals slot 1 there)
6     annotations whose mention was right (verified or edited by more than half: ``right / k``)
D     per dataset: verification-union members (``verified / k / n_member`` per judgement, so a
      member verified for three systems counts once)
====  ========================================================================================

:func:`rate_statistics` computes the ``(units, 7 G + D)`` matrix once from integer codes (one
factorisation per key column, no groupby of strings); :func:`posthoc.metrics.bootstrap.resampled_sums`
turns all resamples into one matrix product per stratum; :func:`rate_samples` forms the ratios and
:func:`rates_table` the table. Point values come from the exact integer counts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np
import pandas as pd

from posthoc.arrays import Bools, Floats, Ints, Objects, weighted_bincount
from posthoc.metrics.bootstrap import ratio, unit_codes
from posthoc.metrics.codes import category_codes, factorize
from posthoc.metrics.intervals import StratumMask, interval
from posthoc.metrics.matching import overlap_components
from posthoc.metrics.tuple_codes import dense_codes, nested_codes, sorted_codes
from posthoc.metrics.verification import check_union
from posthoc.tables import OUTCOMES, Judgements

RATE_METRICS: Final = (
    "verification_rate",
    "posthoc_precision",
    "posthoc_recall",
    "posthoc_f1",
    "mention_rate",
    "verify_share",
    "edit_share",
    "remove_share",
)
RATES_COLUMNS: Final = ["dataset", "system", "metric", "value", "low", "high", "n"]
#: Per (dataset, system) group: annotations, verified, verify / edit / remove judgements, covered members,
#: mention right.
SLOTS: Final = 7


@dataclass(frozen=True)
class RateStatistics:
    """Sufficient statistics of the rates: per-unit counts and the exact totals.

    ``datasets``, ``systems``: names per group (sorted by dataset, then system); ``group_dataset``:
    each group's dataset index; ``counts``: ``(units, 7 G + D)`` (module docstring); ``strata``: each
    unit's stratum; ``n_annotations, n_verified, n_judgements, n_covered, n_mention_right``: per group;
    ``outcome_counts``: ``(G, 3)`` verify / edit / remove judgements; ``n_union``: per dataset.
    """

    datasets: Objects
    systems: Objects
    group_dataset: Ints
    counts: Floats
    strata: Ints
    n_annotations: Ints
    n_verified: Ints
    n_judgements: Ints
    outcome_counts: Ints
    n_union: Ints
    n_covered: Ints
    n_mention_right: Ints

    @property
    def n_groups(self) -> int:
        return len(self.datasets)


def _f1(precision: Floats, recall: Floats) -> Floats:
    total = precision + recall
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(
            total > 0, 2 * precision * recall / np.where(total > 0, total, 1), np.where(np.isnan(total), np.nan, 0.0)
        )


def _members(verified: Bools, annotation: Ints, first: Ints, keys: tuple[Ints, ...], *,
             union: str) -> Ints:
    """Union member of every verdict: its annotation (exact), or its overlap component (overlap); a verdict not
    verified gets a code of its own (it adds nothing, as its weights are 0). ``annotation``: each verdict's
    annotation across systems; ``first``: a row of each verdict in the row-level ``keys`` (dataset, doc, link,
    start, end)."""
    if union == "exact":
        return annotation
    dataset, doc, link, start, end = (key[first] for key in keys)
    member = np.empty(len(verified), dtype=np.int64)
    chosen = np.flatnonzero(verified)
    group, _ = dense_codes(dataset[chosen], doc[chosen], link[chosen])
    components = overlap_components(group, start[chosen], end[chosen])
    member[chosen] = components
    rest = np.flatnonzero(~verified)
    member[rest] = (int(components.max()) + 1 if len(components) else 0) + np.arange(len(rest))
    return member


def rate_statistics(
    rows: Judgements, *, resample_unit: str, ties_verified: bool = False, keep: Bools | None = None,
    union: str = "exact",
) -> RateStatistics:
    """:class:`RateStatistics` of validated judgement rows (``judged_rows``), of which ``keep`` (a boolean
    mask, default all) are counted: the control-free rows. At least one row must be kept.

    An annotation ``(dataset, doc_id, system, start, end, link)`` is verified when more than half of
    its judges chose verify (a tie too with ``ties_verified``), as in :mod:`posthoc.metrics.verification`.
    Every key column is factorised once over all rows, and the codes of the kept rows are used (no
    copy of the kept rows' strings); the documents are numbered once (the default resampling unit and
    a key of the annotations), the annotations across systems and per system by one sort
    (:func:`~posthoc.metrics.tuple_codes.nested_codes`). ``union`` is the ``exact`` or ``overlap`` reading of
    the verification union (:mod:`posthoc.metrics.verification`).

    Examples:
        A verified 1 of 2 (doc 1 ``Paris``; doc 2 ``Seine`` removed), B 1 of 1, 1 union member; 2 docs x (7 x 2 + 1).
        >>> from posthoc.metrics.inputs import judged_rows
        >>> rows = judged_rows(pd.DataFrame([("d", "1", "A", "Paris", "verify"), ("d", "2", "A", "Seine", "remove"),
        ...     ("d", "1", "B", "Paris", "verify")], columns=["dataset", "doc_id", "system", "link", "outcome"]).assign(
        ...     start=0, end=5, worker="w1"))
        >>> stats = rate_statistics(rows, resample_unit="doc_id")
        >>> stats.n_annotations.tolist(), stats.n_verified.tolist(), stats.n_union.tolist(), stats.counts.shape
        ([2, 1], [1, 1], [1], (2, 15))
    """
    check_union(union)
    (dataset, system, doc, link, start, end, outcome), rows, dataset_names, system_names = _row_codes(
        rows, keep=keep, resample_unit=resample_unit)
    document, first_row = sorted_codes(dataset, doc)  # as groupby(["dataset", "doc_id"], sort=True)
    if resample_unit == "doc_id":  # the default: the documents are the units
        unit, strata = document, dataset[first_row]
    else:
        unit, strata = unit_codes(rows, resample_unit)
    verdicts = _verdicts(document, start, end, link, system, outcome, ties_verified=ties_verified)
    first, verified, mention_right = verdicts.first, verdicts.verified, verdicts.mention_right

    pair = dataset[first] * len(system_names) + system[first]
    present = np.bincount(pair, minlength=len(dataset_names) * len(system_names)) > 0
    pairs = np.flatnonzero(present)  # the (dataset, system) groups, sorted
    group_of_verdict = (np.cumsum(present) - 1)[pair]
    n_groups, n_datasets = len(pairs), len(dataset_names)
    member = _members(verified, verdicts.annotation, first, (dataset, doc, link, start, end), union=union)
    n_in_member = weighted_bincount(member, verified)
    dataset_of_member = np.zeros(len(n_in_member), dtype=np.int64)
    dataset_of_member[member] = dataset[first]
    n_union = np.bincount(dataset_of_member, weights=n_in_member > 0, minlength=n_datasets).astype(np.int64)
    if union == "exact":  # a member is one annotation: each system holds 0 or 1 of it, so n_own is 1
        n_own = None
    else:
        own, _ = dense_codes(member, system[first])  # a system's share of a member
        n_own = np.maximum(np.bincount(own, weights=verified), 1)[own]  # per verdict
    counts, tally, n_covered = _unit_counts(
        verdicts, unit=unit, n_units=len(strata), group_of_verdict=group_of_verdict, n_groups=n_groups,
        outcome=outcome, dataset=dataset, n_datasets=n_datasets, member_size=n_in_member[member],
        n_own=n_own,
    )
    outcome_counts = tally.sum(axis=0)
    return RateStatistics(
        datasets=np.asarray(dataset_names)[pairs // len(system_names)],
        systems=np.asarray(system_names)[pairs % len(system_names)],
        group_dataset=(pairs // len(system_names)).astype(np.int64),
        counts=counts,
        strata=strata,
        n_annotations=np.bincount(group_of_verdict, minlength=n_groups),
        n_verified=np.bincount(group_of_verdict, weights=verified, minlength=n_groups).astype(np.int64),
        n_judgements=outcome_counts.sum(axis=1),
        outcome_counts=outcome_counts,
        n_union=n_union,
        n_covered=n_covered,
        n_mention_right=np.bincount(group_of_verdict, weights=mention_right, minlength=n_groups).astype(np.int64),
    )


def _row_codes(
    rows: pd.DataFrame, *, keep: Bools | None, resample_unit: str
) -> tuple[list[Ints], pd.DataFrame, pd.Index, pd.Index]:
    """The kept rows' codes of dataset, system, doc_id, link, start, end and outcome (each key column factorised
    once over all rows), the rows a resampling unit other than documents is read from, and the dataset and
    system names."""
    dataset_codes, dataset_names = factorize(rows["dataset"], sort=True)
    system_codes, system_names = factorize(rows["system"], sort=True)
    columns: list[Ints] = [
        dataset_codes,
        system_codes,
        factorize(rows["doc_id"], sort=True)[0],
        factorize(rows["link"])[0],
        rows["start"].to_numpy(np.int64),
        rows["end"].to_numpy(np.int64),
        category_codes(rows["outcome"], OUTCOMES),  # index into OUTCOMES (verify, edit, remove)
    ]
    if keep is not None and not keep.all():
        kept = np.flatnonzero(keep)
        columns = [column.take(kept) for column in columns]
        rows = rows.loc[keep] if resample_unit != "doc_id" else rows
    return columns, rows, dataset_names, system_names


@dataclass(frozen=True)
class _Verdicts:
    """Each row's verdict (one system's annotation, ``of_row``) and per verdict: its annotation across systems
    (the union's identity), one of its rows, its judges, whether it is verified and whether its mention was right
    (verified or edited by more than half of its judges)."""

    of_row: Ints
    annotation: Ints
    first: Ints
    n_judges: Ints
    verified: Bools
    mention_right: Bools


def _verdicts(document: Ints, start: Ints, end: Ints, link: Ints, system: Ints,
              outcome: Ints, *, ties_verified: bool) -> _Verdicts:
    """The verdicts of the rows' codes: a tie counts as verified (or mention right) with ``ties_verified``."""
    verdict, annotation, first = nested_codes(document, start, end, link, system)
    n_judges = np.bincount(verdict)
    twice = 2 * np.bincount(verdict, weights=outcome == 0).astype(np.int64)
    verified = (twice > n_judges) | (ties_verified & (twice == n_judges))
    right_twice = 2 * np.bincount(verdict, weights=outcome <= 1).astype(np.int64)
    mention_right = (right_twice > n_judges) | (ties_verified & (right_twice == n_judges))
    return _Verdicts(verdict, annotation, first, n_judges, verified, mention_right)


def _unit_counts(
    verdicts: _Verdicts, *, unit: Ints, n_units: int, group_of_verdict: Ints, n_groups: int,
    outcome: Ints, dataset: Ints, n_datasets: int, member_size: Floats,
    n_own: Floats | None,
) -> tuple[Floats, Ints, Ints]:
    """The ``(units, 7 G + D)`` counts (module docstring), the ``(units, groups, 3)`` outcome tally and each
    group's covered union members. ``member_size``: per verdict, the verified annotations in its union
    member; ``n_own``: per verdict, its system's verified annotations in the member (``None``: exact union)."""
    verdict, n_judges, verified, mention_right = verdicts.of_row, verdicts.n_judges, verdicts.verified, \
        verdicts.mention_right
    # every (unit, group) cell's slots are sums over its judgements (module docstring), each one bincount
    group = group_of_verdict[verdict]
    cell, n_cells = unit * n_groups + group, n_units * n_groups
    counts = np.zeros((n_units, SLOTS * n_groups + n_datasets))

    def slot(index: int) -> Floats:  # the (units, groups) view of one slot
        return counts[:, index : SLOTS * n_groups : SLOTS]

    tally = np.bincount(cell * 3 + outcome, minlength=3 * n_cells).reshape(n_units, n_groups, 3)
    for index in range(3):
        slot(2 + index)[...] = tally[:, :, index]
    per_judge = 1.0 / n_judges  # each judgement's share of its verdict, per verdict (1 / k)
    verified_share = verified * per_judge
    # k = 1: a judgement is its annotation's verdict (verified iff verify, mention right iff verify or edit),
    # so slots 0, 1 and 6 are whole counts of outcomes
    if n_judges.max() == 1:
        slot(0)[...] = tally.sum(axis=2)
        slot(1)[...] = tally[:, :, 0]
        slot(6)[...] = tally[:, :, 0] + tally[:, :, 1]
    else:
        for index, share in ((0, per_judge), (1, verified_share), (6, mention_right * per_judge)):
            slot(index)[...] = np.bincount(cell, weights=share[verdict], minlength=n_cells).reshape(n_units, n_groups)
    if n_own is None:  # exact union: covered members are the verified annotations (slot 5 = slot 1, same sums)
        slot(5)[...] = slot(1)
        n_covered = np.bincount(group_of_verdict, weights=verified, minlength=n_groups).astype(np.int64)
    else:
        covered = (verified_share / n_own)[verdict]
        slot(5)[...] = np.bincount(cell, weights=covered, minlength=n_cells).reshape(n_units, n_groups)
        n_covered = np.rint(np.bincount(group_of_verdict, weights=verified / n_own, minlength=n_groups)).astype(
            np.int64
        )
    union_share = (verified_share / np.maximum(member_size, 1))[verdict]
    counts[:, SLOTS * n_groups :] = np.bincount(
        unit * n_datasets + dataset, weights=union_share, minlength=n_units * n_datasets
    ).reshape(n_units, n_datasets)
    return counts, tally, n_covered


def rate_samples(sums: Floats, stats: RateStatistics) -> dict[str, Floats]:
    """Each metric of :data:`RATE_METRICS` per resample: ``(resamples, groups)`` from resampled column sums.

    Examples:
        :func:`rate_statistics`' example, the totals as one resample: precision A 1/2, B 1/1; recall 1/1 each.
        >>> from posthoc.metrics.inputs import judged_rows
        >>> rows = judged_rows(pd.DataFrame([("d", "1", "A", "Paris", "verify"), ("d", "2", "A", "Seine", "remove"),
        ...     ("d", "1", "B", "Paris", "verify")], columns=["dataset", "doc_id", "system", "link", "outcome"]).assign(
        ...     start=0, end=5, worker="w1"))
        >>> stats = rate_statistics(rows, resample_unit="doc_id")
        >>> samples = rate_samples(stats.counts.sum(axis=0)[None, :], stats)
        >>> samples["posthoc_precision"].tolist(), samples["posthoc_recall"].tolist()
        ([[0.5, 1.0]], [[1.0, 1.0]])
    """
    n_groups = stats.n_groups
    per_group = sums[:, : SLOTS * n_groups].reshape(len(sums), n_groups, SLOTS)
    union_sizes = sums[:, SLOTS * n_groups :][:, stats.group_dataset]
    precision = ratio(per_group[:, :, 1], per_group[:, :, 0])
    recall = ratio(per_group[:, :, 5], union_sizes)
    judgements = per_group[:, :, 2:5].sum(axis=2)
    return {
        "verification_rate": precision,
        "posthoc_precision": precision,
        "posthoc_recall": recall,
        "posthoc_f1": _f1(precision, recall),
        "mention_rate": ratio(per_group[:, :, 6], per_group[:, :, 0]),
        **{f"{o}_share": ratio(per_group[:, :, 2 + i], judgements) for i, o in enumerate(OUTCOMES)},
    }


@dataclass(frozen=True)
class Jackknife:
    """Leave-one-unit-out values of every rate (BCa's acceleration, :mod:`posthoc.metrics.intervals`).

    ``values``: metric -> ``(units, groups)``; ``mask``: the units of each group's stratum (a unit of another
    dataset leaves a group's sums unchanged and is not one of its units), as strata.
    """

    values: dict[str, Floats]
    mask: StratumMask

    def columns(self, groups: Ints) -> StratumMask:
        """The mask of statistics of ``groups`` (group indices, one per statistic)."""
        return StratumMask(units=self.mask.units, columns=self.mask.columns[groups])


def rate_jackknife(stats: RateStatistics) -> Jackknife:
    """The jackknife of the rates: the totals minus one unit's counts, through :func:`rate_samples` (no new draw).

    Costs one pass of :func:`rate_samples` over ``units`` rows (1,000 resamples cost one over 1,000 rows).

    Examples:
        :func:`rate_statistics`' example: without doc 1, A has 0 of 1 and B 0/0 (NaN); without doc 2, 1 of 1 both.
        >>> from posthoc.metrics.inputs import judged_rows
        >>> rows = judged_rows(pd.DataFrame([("d", "1", "A", "Paris", "verify"), ("d", "2", "A", "Seine", "remove"),
        ...     ("d", "1", "B", "Paris", "verify")], columns=["dataset", "doc_id", "system", "link", "outcome"]).assign(
        ...     start=0, end=5, worker="w1"))
        >>> rate_jackknife(rate_statistics(rows, resample_unit="doc_id")).values["posthoc_precision"].tolist()
        [[0.0, nan], [1.0, 1.0]]
    """
    counts = stats.counts
    values = rate_samples(counts.sum(axis=0)[None, :] - counts, stats)
    judged = counts[:, 0 : SLOTS * stats.n_groups : SLOTS] > 0  # (units, groups): the unit judged the group
    stratum_of_group = np.zeros(stats.n_groups, dtype=np.int64)
    for group in range(stats.n_groups):
        units = np.flatnonzero(judged[:, group])
        stratum_of_group[group] = stats.strata[units[0]] if len(units) else -1
    return Jackknife(values=values, mask=StratumMask(units=stats.strata, columns=stratum_of_group))


def point_rates(stats: RateStatistics) -> dict[str, tuple[Floats, Ints]]:
    """Each metric of :data:`RATE_METRICS` per group from the exact counts: ``(value, n)``.

    Examples:
        :func:`rate_statistics`' example: A verified 1 of 2 annotations, B 1 of 1.
        >>> from posthoc.metrics.inputs import judged_rows
        >>> rows = judged_rows(pd.DataFrame([("d", "1", "A", "Paris", "verify"), ("d", "2", "A", "Seine", "remove"),
        ...     ("d", "1", "B", "Paris", "verify")], columns=["dataset", "doc_id", "system", "link", "outcome"]).assign(
        ...     start=0, end=5, worker="w1"))
        >>> [v.tolist() for v in point_rates(rate_statistics(rows, resample_unit="doc_id"))["posthoc_precision"]]
        [[0.5, 1.0], [2, 1]]
    """
    precision = stats.n_verified / stats.n_annotations
    n_union = stats.n_union[stats.group_dataset]
    recall = ratio(stats.n_covered.astype(float), n_union.astype(float))
    return {
        "verification_rate": (precision, stats.n_annotations),
        "posthoc_precision": (precision, stats.n_annotations),
        "posthoc_recall": (recall, n_union),
        "posthoc_f1": (_f1(precision, recall), stats.n_annotations),
        "mention_rate": (stats.n_mention_right / stats.n_annotations, stats.n_annotations),
        **{
            f"{o}_share": (stats.outcome_counts[:, i] / stats.n_judgements, stats.n_judgements)
            for i, o in enumerate(OUTCOMES)
        },
    }


def rates_table(stats: RateStatistics, samples: dict[str, Floats], *, confidence: float,
                method: str = "bca", jackknife: Jackknife | None = None) -> pd.DataFrame:
    """The rates table (:mod:`posthoc.scores`): point values from the exact counts, bounds by ``method``
    (``bca`` with the ``jackknife``'s acceleration, or ``percentile``; :mod:`posthoc.metrics.intervals`).

    Examples:
        :func:`rate_statistics`' example, the totals as one resample: a single value's percentile interval is itself.
        >>> from posthoc.metrics.inputs import judged_rows
        >>> rows = judged_rows(pd.DataFrame([("d", "1", "A", "Paris", "verify"), ("d", "2", "A", "Seine", "remove"),
        ...     ("d", "1", "B", "Paris", "verify")], columns=["dataset", "doc_id", "system", "link", "outcome"]).assign(
        ...     start=0, end=5, worker="w1"))
        >>> stats = rate_statistics(rows, resample_unit="doc_id")
        >>> table = rates_table(stats, rate_samples(stats.counts.sum(axis=0)[None, :], stats), confidence=0.95,
        ...                     method="percentile")
        >>> table.loc[table["metric"] == "posthoc_precision"]
          dataset system             metric  value  low  high  n
        1       d      A  posthoc_precision    0.5  0.5   0.5  2
        9       d      B  posthoc_precision    1.0  1.0   1.0  1
    """
    values = point_rates(stats)
    stacked = np.stack([samples[metric] for metric in RATE_METRICS], axis=2)  # resamples x groups x metrics
    flat = stacked.reshape(len(stacked), stats.n_groups * len(RATE_METRICS))
    estimate = np.stack([values[m][0] for m in RATE_METRICS], axis=1).astype(float).ravel()
    if method == "bca" and jackknife is None:
        jackknife = rate_jackknife(stats)
    folded = None if jackknife is None else np.stack([jackknife.values[m] for m in RATE_METRICS], axis=2)
    mask = None if jackknife is None else jackknife.columns(np.repeat(np.arange(stats.n_groups), len(RATE_METRICS)))
    low, high = interval(flat, estimate, method=method, confidence=confidence, mask=mask,
                         n_units=None if mask is None else mask.sizes(),
                         jackknife=None if folded is None else folded.reshape(len(folded), flat.shape[1]))
    n_metrics = len(RATE_METRICS)
    return pd.DataFrame(
        {
            "dataset": pd.array(np.repeat(stats.datasets, n_metrics), dtype="str"),
            "system": pd.array(np.repeat(stats.systems, n_metrics), dtype="str"),
            "metric": pd.array(np.tile(np.asarray(RATE_METRICS, dtype=object), stats.n_groups), dtype="str"),
            "value": estimate,
            "low": low.ravel(),
            "high": high.ravel(),
            "n": np.stack([values[m][1] for m in RATE_METRICS], axis=1).astype("int64").ravel(),
        }
    )


def empty_rates() -> pd.DataFrame:
    """The rates table of no judgements.

    Examples:
        >>> len(empty_rates()), list(empty_rates().columns)
        (0, ['dataset', 'system', 'metric', 'value', 'low', 'high', 'n'])
    """
    return pd.DataFrame(
        {c: pd.Series(dtype="str" if c in ("dataset", "system", "metric") else "float64") for c in RATES_COLUMNS}
    ).astype({"n": "int64"})
