"""Strict error categories against verified truth: who was wrong, the system or the ground truth (issue 45).

The strict categories (:mod:`posthoc.metrics.strict_categories`) take the ground truth (GT) as truth. The
annotators judged every pre-filled annotation blind, GT's as one more system's (seed 000 section 3.2), so each
category row can be crossed with the verdict on its own annotation: the system's on the ``system`` side, GT's on
the ``ground_truth`` side. Verdicts are the majority rule of :func:`~posthoc.metrics.verification.verdicts_of`
(more than half of the judges; ``ties_verified`` as the scores), the edited link the most common ``new_link``
of the edit judgements.

``verdict``     ``verified`` (in ``V(m,d)``), else ``removed`` or ``edited`` when more than half of the judges
                chose it, else ``no_majority``; ``not_judged`` when nobody judged the annotation;
``in_union``    the annotation (document, span, link) is in the verification union ``V(d)`` (exact reading);
``overturned``  the annotators disagree with the strict comparison: on the ``system`` side, a strict error the
                annotators verified (an error of GT: missing there, or wrongly linked) or a strict match they did
                not verify; on the ``ground_truth`` side, GT's annotation not verified (a false mention when
                removed, a wrong link when edited, with ``new_link``), so the error counted against the system
                is not one against verified truth. A row nobody judged is never overturned.

GT's own annotations are added once each (``system`` GT, ``side`` ground_truth, ``category`` gt_annotation).
The summary (:func:`category_summary`) gives per dataset x system x side x category x kind the count, its share of
the side's rows (the share of ``correct`` rows is the strict micro precision or recall) and the share
overturned among the judged, each with the report's bootstrap interval over documents (stratified by dataset:
:func:`posthoc.metrics.bootstrap.bootstrap_intervals`). ``kind`` ``all`` sums a category's kinds, and category
``strict_error`` sums a side's errors: its overturned share on the ``system`` side is the share of strict errors
the annotators verified as right (CleanCoNLL, EMNLP 2023: 47% on CoNLL). For ``gt_annotation`` the kinds are
the verdicts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import numpy as np
import pandas as pd

from posthoc.arrays import Bools, Floats, Ints
from posthoc.metrics.bootstrap import bootstrap_intervals
from posthoc.metrics.codes import factorize
from posthoc.metrics.gold import _new_links
from posthoc.metrics.inputs import judged_rows, mention_rows
from posthoc.metrics.intervals import DEFAULT_INTERVAL
from posthoc.metrics.strict_categories import (
    CATEGORIES,
    KINDS,
    SIDES,
    CategoryArrays,
    category_arrays,
    category_table,
    coded,
)
from posthoc.metrics.strict_categories import empty_categories as error_categories_empty
from posthoc.metrics.tuple_codes import dense_codes
from posthoc.metrics.verification import verdicts_of
from posthoc.tables import GT_SYSTEM, Judgements, Mentions, empty_table

VERDICTS: Final = ("verified", "edited", "removed", "no_majority", "not_judged")
GT_CATEGORY: Final = "gt_annotation"
#: The columns the verdicts add to :data:`posthoc.metrics.strict_categories.CATEGORY_COLUMNS`.
VERDICT_COLUMNS: Final = ("verdict", "n_judges", "n_verify", "n_edit", "n_remove", "new_link", "in_union",
                          "overturned")
SUMMARY_COLUMNS: Final = ("dataset", "system", "side", "category", "kind", "count", "n", "share", "share_low",
                          "share_high", "n_judged", "n_overturned", "overturned_share", "overturned_low",
                          "overturned_high")
_KEY: Final = ("dataset", "doc_id", "system", "start", "end", "link")


def column_codes_of(column: pd.Series, vocabulary: Sequence[str] | None = None) -> tuple[Ints, pd.Index]:
    """Integer codes of a column and their names: positions in ``vocabulary`` (-1 when not in it), else ranks of
    the sorted distinct values. A categorical column gives its codes (no string is converted).

    Examples:
        >>> import pandas as pd
        >>> codes, names = column_codes_of(pd.Series(["b", "a", "b"], dtype="category"))
        >>> codes.tolist(), names.tolist()
        ([1, 0, 1], ['a', 'b'])
        >>> column_codes_of(pd.Series(["x", "b"]), ["a", "b"])[0].tolist()
        [-1, 1]
    """
    codes: Ints
    if isinstance(column.dtype, pd.CategoricalDtype):
        codes = np.asarray(column.cat.codes.to_numpy(), dtype=np.intp)
        names = pd.Index(np.asarray(column.cat.categories, dtype=object).astype(str), dtype=object)
    else:
        codes, uniques = factorize(column, sort=True)
        names = pd.Index(np.asarray(uniques, dtype=object).astype(str), dtype=object)
    if vocabulary is not None:
        place = np.append(np.asarray(pd.Index(list(vocabulary)).get_indexer(names), dtype=np.int64), -1)
        return place[codes], pd.Index(list(vocabulary))
    order = np.argsort(names.to_numpy(), kind="stable")
    rank = np.empty(len(order) + 1, dtype=np.int64)
    rank[order], rank[-1] = np.arange(len(order)), -1
    return rank[codes], names[order]


def _codes_in(column: pd.Series, names: pd.Index) -> Ints:
    """Codes of ``column`` in the space of ``names`` (-1 where a value is not among them)."""
    codes, own = column_codes_of(column)
    return np.append(np.asarray(pd.Index(names).get_indexer(own), dtype=np.int64), -1)[codes]


def _composite(keys: list[Ints], sizes: list[int]) -> Ints | None:
    """One int64 per row for the tuple of non-negative ``keys`` (``keys[i] < sizes[i]``); None if it overflows."""
    if int(np.prod([float(size) for size in sizes])) >= 2**62:
        return None
    key: Ints = np.zeros(len(keys[0]), dtype=np.intp)
    for values, size in zip(keys, sizes, strict=True):
        key = np.asarray(key * size + values, dtype=np.intp)
    return key


def _find(left: list[Ints], right: list[Ints]) -> Ints:
    """For each left key tuple: the first right row with the same tuple, -1 when none (-1 in a left key: none).

    One int64 key a row and one hash lookup of the left keys among the right ones (a tuple of dense codes when the
    keys overflow int64).
    """
    n = len(left[0])
    result = np.full(n, -1, dtype=np.intp)
    if len(right[0]) == 0 or n == 0:
        return result
    valid_mask = left[0] >= 0
    for values in left[1:]:
        valid_mask &= values >= 0
    valid = np.flatnonzero(valid_mask)
    sizes = [int(max(a.max(initial=0), b.max(initial=0))) + 1 for a, b in zip(left, right, strict=True)]
    right_key = _composite(right, sizes)
    left_key = _composite([values[valid] for values in left], sizes)
    if right_key is None or left_key is None:
        codes = dense_codes(*[np.concatenate([a[valid], b]) for a, b in zip(left, right, strict=True)])[0]
        left_key, right_key = codes[: len(valid)], codes[len(valid):]
    index = pd.Index(right_key)
    keep = np.flatnonzero(~index.duplicated()) if index.has_duplicates else None  # the first of equal right keys
    hits = (index if keep is None else pd.Index(right_key[keep])).get_indexer(pd.Index(left_key))
    found = hits >= 0
    result[valid[found]] = hits[found] if keep is None else keep[hits[found]]
    return result


def _source_verdicts(source: Mentions, verdicts: pd.DataFrame) -> tuple[Ints, Bools]:
    """Per mentions row: its verdict row (-1 when not judged) and whether it is in the union ``V(d)``."""
    keys = ("dataset", "doc_id", "system", "link")
    right = {c: factorize(verdicts[c]) for c in keys}
    left = {c: _codes_in(source[c], right[c][1]) for c in keys}
    start, end = source["start"].to_numpy(np.int64), source["end"].to_numpy(np.int64)
    v_start, v_end = verdicts["start"].to_numpy(np.int64), verdicts["end"].to_numpy(np.int64)
    found = _find([*(left[c] for c in keys), start, end], [*(right[c][0] for c in keys), v_start, v_end])
    members = np.flatnonzero(verdicts["verified"].to_numpy(bool))
    union = ("dataset", "doc_id", "link")
    in_union = _find([*(left[c] for c in union), start, end],
                     [*(right[c][0][members] for c in union), v_start[members], v_end[members]]) >= 0
    return found, in_union


def cross_verdicts(source: Mentions, found: CategoryArrays, verdicts: pd.DataFrame, new_links: pd.Series
                   ) -> pd.DataFrame:
    """The categories table (:func:`~posthoc.metrics.strict_categories.category_table`) with
    :data:`VERDICT_COLUMNS` (module docstring): each row's own annotation's verdict.

    ``source``: the validated mentions (``mention_rows``); ``found``: their
    :func:`~posthoc.metrics.strict_categories.category_arrays`; ``verdicts``: :func:`verdicts_of` (``verified``,
    ``n_*``); ``new_links``: the edited link by verdict row (``gold._new_links``).

    Examples:
        GT's ``Paris`` [0, 5) was removed by the annotators; system A linked [0, 5) elsewhere and that was verified:
        the strict disambiguation error is overturned on both sides.

        >>> import pandas as pd
        >>> from posthoc.metrics.strict_categories import category_arrays
        >>> from posthoc.metrics.inputs import judged_rows, mention_rows
        >>> source = mention_rows(pd.DataFrame(
        ...     [("d", "1", "GT", 0, 5, "Paris", "Paris"), ("d", "1", "A", 0, 5, "Paris", "Paris_Hilton")],
        ...     columns=["dataset", "doc_id", "system", "start", "end", "surface", "link"]))
        >>> rows = judged_rows(pd.DataFrame(
        ...     [("d", "1", "GT", 0, 5, "Paris", "w1", "remove"),
        ...      ("d", "1", "A", 0, 5, "Paris_Hilton", "w1", "verify")],
        ...     columns=["dataset", "doc_id", "system", "start", "end", "link", "worker", "outcome"]))
        >>> verdicts, _ = verdicts_of(rows)
        >>> crossed = cross_verdicts(source, category_arrays(source), verdicts, pd.Series(dtype="str"))
        >>> crossed[["system", "side", "category", "verdict", "in_union", "overturned"]]
          system          side              category   verdict  in_union  overturned
        0      A  ground_truth  disambiguation_wrong   removed     False        True
        1      A        system  disambiguation_wrong  verified      True        True
        2     GT  ground_truth         gt_annotation   removed     False        True
    """
    of_source, union_of_source = _source_verdicts(source, verdicts)
    at = of_source[found.index]
    judged = at >= 0
    at = np.where(judged, at, len(verdicts))  # not judged: the padding after the verdicts
    counts = {f"n_{name}": np.append(verdicts[f"n_{name}"].to_numpy(np.int64), 0)[at]
              for name in ("judges", "verify", "edit", "remove")}
    is_verified = np.append(verdicts["verified"].to_numpy(bool), False)[at]
    verdict = np.select([~judged, is_verified, 2 * counts["n_remove"] > counts["n_judges"],
                         2 * counts["n_edit"] > counts["n_judges"]], [4, 0, 2, 1], 3)
    overturned = judged & np.where(found.side == 0, is_verified != (found.category == 0), ~is_verified)
    link_code = np.full(len(verdicts) + 1, -1, dtype=np.int64)
    edited_code, edited_names = factorize(pd.Series(new_links, dtype="str"))
    link_code[new_links.index.to_numpy(np.int64)] = edited_code
    link_code[link_code < 0] = len(edited_names)
    return category_table(source, found, {
        "verdict": coded(verdict, VERDICTS), **counts,
        "new_link": coded(link_code[at], [*map(str, edited_names), ""]),
        "in_union": union_of_source[found.index], "overturned": overturned})


def empty_crossed() -> pd.DataFrame:
    """The table of :func:`cross_verdicts` of no mentions: its columns, no row.

    Examples:
        >>> list(empty_crossed().columns)[-3:]
        ['new_link', 'in_union', 'overturned']
    """
    numbers = {f"n_{name}": "int64" for name in ("judges", "verify", "edit", "remove")}
    extra = empty_table({"verdict": "str", **numbers, "new_link": "str", "in_union": "bool", "overturned": "bool"})
    return pd.concat([error_categories_empty(), extra], axis=1)


def categories_with_verdicts(judgements: Judgements, mentions: Mentions, *, gt_system: str = GT_SYSTEM,
                             ties_verified: bool = False) -> pd.DataFrame:
    """:func:`cross_verdicts` of the judgements table (control rows ignored) and the mentions table.

    Examples:
        GT's ``Nice`` [0, 4) verified; system A found nothing: a strict false negative the annotators confirm.

        >>> import pandas as pd
        >>> mentions = pd.DataFrame([("d", "1", "GT", 0, 4, "Nice", "Nice"), ("d", "1", "A", 5, 9, "Lyon", "Lyon")],
        ...                         columns=["dataset", "doc_id", "system", "start", "end", "surface", "link"])
        >>> judgements = pd.DataFrame([("d", "1", "GT", 0, 4, "Nice", "w1", "verify")],
        ...                           columns=["dataset", "doc_id", "system", "start", "end", "link", "worker",
        ...                                    "outcome"])
        >>> crossed = categories_with_verdicts(judgements, mentions)
        >>> crossed[["system", "side", "start", "category", "verdict", "overturned"]]
          system          side  start        category     verdict  overturned
        0      A  ground_truth      0  false_negative    verified       False
        1      A        system      5  false_positive  not_judged       False
        2     GT  ground_truth      0   gt_annotation    verified       False
    """
    rows = judged_rows(judgements)
    verdicts, codes = verdicts_of(rows, ties_verified=ties_verified)
    source = mention_rows(mentions)
    if len(source) == 0:
        return empty_crossed()
    return cross_verdicts(source, category_arrays(source, gt_system=gt_system), verdicts, _new_links(rows, codes))


_ERRORS: Final = ("disambiguation_wrong", "false_positive", "false_negative")
_SUMMARY_CATEGORIES: Final = (*CATEGORIES, "strict_error")
_SUMMARY_KINDS: Final = tuple(dict.fromkeys((*KINDS, *VERDICTS, "all")))


def _cells(crossed: pd.DataFrame) -> tuple[Ints, Ints, pd.DataFrame]:
    """Each row's cells (its kind, its category's ``all``, ``strict_error`` when an error): ``(rows, cells,
    cell_table)`` with ``cell_table`` one row a cell (dataset, system, side, category, kind codes) in sorted order."""
    dataset = column_codes_of(crossed["dataset"])[0]
    system = column_codes_of(crossed["system"])[0]
    side = column_codes_of(crossed["side"], SIDES)[0]
    category = column_codes_of(crossed["category"], _SUMMARY_CATEGORIES)[0]
    kind = np.where(category == _SUMMARY_CATEGORIES.index(GT_CATEGORY),
                    column_codes_of(crossed["verdict"], _SUMMARY_KINDS)[0],
                    column_codes_of(crossed["kind"], _SUMMARY_KINDS)[0])
    every, all_kind = np.arange(len(crossed)), _SUMMARY_KINDS.index("all")
    error = np.flatnonzero(np.isin(category, [_SUMMARY_CATEGORIES.index(c) for c in _ERRORS]))
    kinded = np.flatnonzero(category != 0)  # a correct row's one cell is its category's "all"
    rows = np.concatenate([kinded, every, error])
    cell_category = np.concatenate([category[kinded], category, np.full(len(error), len(_SUMMARY_CATEGORIES) - 1)])
    cell_kind = np.concatenate([kind[kinded], np.full(len(every) + len(error), all_kind)])
    sizes = [int(dataset.max()) + 1, int(system.max()) + 1, len(SIDES), len(_SUMMARY_CATEGORIES),
             len(_SUMMARY_KINDS)]
    key = _composite([dataset[rows], system[rows], side[rows], cell_category, cell_kind], sizes)
    assert key is not None  # a few datasets and systems: far below 2**62
    present = np.flatnonzero(np.bincount(key, minlength=int(np.prod(sizes))))  # sorted by the key: the cells' order
    dense = np.full(int(np.prod(sizes)), -1, dtype=np.int64)
    dense[present] = np.arange(len(present))
    parts = np.unravel_index(present, sizes)
    table = pd.DataFrame(dict(zip(("dataset", "system", "side", "category", "kind"), parts, strict=True)))
    return rows, dense[key], table


def _documents(crossed: pd.DataFrame) -> tuple[Ints, Ints, pd.Index]:
    """``(doc, doc_dataset, dataset_names)``: each row's dense document code, in (dataset, doc_id) order (the
    resampling units' order), each document's dataset code, the sorted dataset names."""
    dataset, dataset_names = column_codes_of(crossed["dataset"])
    doc_id = column_codes_of(crossed["doc_id"])[0]
    pair = dataset * (int(doc_id.max()) + 1) + doc_id
    seen = np.bincount(pair) > 0
    doc = (np.cumsum(seen) - 1)[pair]
    doc_dataset = np.zeros(int(doc.max()) + 1, dtype=np.int64)
    doc_dataset[doc] = dataset
    return doc, doc_dataset, dataset_names


def category_summary(crossed: pd.DataFrame, *, n_resamples: int = 1000, seed: int = 0, confidence: float = 0.95,
                     interval: str = DEFAULT_INTERVAL) -> pd.DataFrame:
    """Per dataset x system x side x category x kind: count, share and share overturned with intervals.

    ``crossed``: :func:`cross_verdicts`. Returns :data:`SUMMARY_COLUMNS`: ``n`` the rows of the side (the
    system's annotations, or GT's against this system), ``share = count / n``; ``n_judged`` the cell's rows that
    were judged, ``overturned_share = n_overturned / n_judged`` (module docstring); bounds from ``n_resamples``
    stratified resamples of documents (:func:`~posthoc.metrics.bootstrap.bootstrap_intervals`, ``interval``
    ``bca`` or ``percentile``); NaN where a denominator is 0.

    Examples:
        Two documents; system A's two annotations are strict errors, the annotators verified one: half of the
        strict errors were right.

        >>> import pandas as pd
        >>> crossed = pd.DataFrame({"dataset": "d", "doc_id": ["1", "2"], "system": "A", "side": "system",
        ...                         "category": "false_positive", "kind": "other", "verdict": ["verified", "removed"],
        ...                         "overturned": [True, False]})
        >>> summary = category_summary(crossed, n_resamples=200, interval="percentile")
        >>> summary.loc[summary["category"] == "strict_error", ["count", "n", "share", "n_judged",
        ...                                                      "overturned_share", "overturned_low"]]
           count  n  share  n_judged  overturned_share  overturned_low
        2      2  2    1.0         2               0.5             0.0
    """
    if len(crossed) == 0:
        return pd.DataFrame({c: pd.Series(dtype="str" if i < 5 else "float64") for i, c in enumerate(SUMMARY_COLUMNS)})
    rows, cell, cells = _cells(crossed)
    doc, doc_dataset, dataset_names = _documents(crossed)
    judged = column_codes_of(crossed["verdict"], VERDICTS)[0] != VERDICTS.index("not_judged")
    overturned = crossed["overturned"].to_numpy(bool)
    n_cells, n_docs = len(cells), int(doc.max()) + 1
    count = np.bincount(cell * n_docs + doc[rows], minlength=n_cells * n_docs).reshape(n_cells, n_docs)
    n_judged = np.bincount(cell * n_docs + doc[rows], weights=judged[rows], minlength=n_cells * n_docs)
    n_over = np.bincount(cell * n_docs + doc[rows], weights=overturned[rows], minlength=n_cells * n_docs)
    n_judged, n_over = n_judged.reshape(n_cells, n_docs), n_over.reshape(n_cells, n_docs)
    group = dense_codes(*(cells[c].to_numpy() for c in ("dataset", "system", "side")))[0]
    all_cell = ((cells["category"] < len(CATEGORIES)) & (cells["kind"] == _SUMMARY_KINDS.index("all"))).to_numpy()
    n_groups = int(group.max()) + 1  # a side's rows: the sum of its categories' "all" cells
    totals = np.bincount(np.repeat(group[all_cell], n_docs) * n_docs + np.tile(np.arange(n_docs), int(all_cell.sum())),
                         weights=count[all_cell].ravel(), minlength=n_groups * n_docs).reshape(n_groups, n_docs)
    n_side = totals[group]
    bounds = np.full((n_cells, 4), np.nan)
    for code in range(len(dataset_names)):
        units, here = np.flatnonzero(doc_dataset == code), np.flatnonzero(cells["dataset"].to_numpy() == code)
        numerators = np.hstack([count[here][:, units].T, n_over[here][:, units].T]).astype(np.float64)
        denominators = np.hstack([n_side[here][:, units].T, n_judged[here][:, units].T]).astype(np.float64)
        found = bootstrap_intervals(numerators, denominators, n_resamples=n_resamples, seed=seed,
                                    confidence=confidence, method=interval)
        width = len(here)
        bounds[here] = np.column_stack([found["low"][:width], found["high"][:width], found["low"][width:],
                                        found["high"][width:]])
    return _summary_table(cells, crossed, count.sum(axis=1), n_side.sum(axis=1), n_judged.sum(axis=1),
                          n_over.sum(axis=1), bounds)


def _summary_table(cells: pd.DataFrame, crossed: pd.DataFrame, count: Ints, n: Floats, judged: Floats, over: Floats,
                   bounds: Floats) -> pd.DataFrame:
    """The summary table of the cells and their sums and bounds (``low``/``high`` of share, then overturned)."""
    dataset_names = column_codes_of(crossed["dataset"])[1]
    system_names = column_codes_of(crossed["system"])[1]
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(n > 0, count / np.where(n > 0, n, 1), np.nan)
        over_share = np.where(judged > 0, over / np.where(judged > 0, judged, 1), np.nan)
    return pd.DataFrame({
        "dataset": pd.array(np.asarray(dataset_names, dtype=object)[cells["dataset"]], dtype="str"),
        "system": pd.array(np.asarray(system_names, dtype=object)[cells["system"]], dtype="str"),
        "side": pd.array(np.asarray(SIDES, dtype=object)[cells["side"]], dtype="str"),
        "category": pd.array(np.asarray(_SUMMARY_CATEGORIES, dtype=object)[cells["category"]], dtype="str"),
        "kind": pd.array(np.asarray(_SUMMARY_KINDS, dtype=object)[cells["kind"]], dtype="str"),
        "count": count.astype("int64"), "n": n.astype("int64"), "share": share, "share_low": bounds[:, 0],
        "share_high": bounds[:, 1], "n_judged": judged.astype("int64"), "n_overturned": over.astype("int64"),
        "overturned_share": over_share, "overturned_low": bounds[:, 2], "overturned_high": bounds[:, 3],
    })


def verified_category_tables(source: pd.DataFrame, rows: Judgements, verdicts: pd.DataFrame, codes: Ints, *,
                             gt_system: str = GT_SYSTEM, n_resamples: int = 1000, seed: int = 0,
                             confidence: float = 0.95, interval: str = DEFAULT_INTERVAL,
                             ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(error_categories, error_category_summary)`` of a scored study, from the tables ``score_judgements``
    already holds: the validated mentions, the counted judgement rows, their verdicts and each row's verdict.

    Examples:
        System A's ``Nice`` is not in GT (a strict false positive) and was verified: the strict error was right.

        >>> import pandas as pd
        >>> from posthoc.metrics.inputs import mention_rows
        >>> source = mention_rows(pd.DataFrame(
        ...     [("d", "1", "GT", 0, 5, "Paris", "Paris"), ("d", "1", "A", 10, 14, "Nice", "Nice")],
        ...     columns=["dataset", "doc_id", "system", "start", "end", "surface", "link"]))
        >>> rows = judged_rows(pd.DataFrame([("d", "1", "A", 10, 14, "Nice", "w1", "verify")],
        ...     columns=["dataset", "doc_id", "system", "start", "end", "link", "worker", "outcome"]))
        >>> verdicts, codes = verdicts_of(rows)
        >>> per_annotation, summary = verified_category_tables(source, rows, verdicts, codes, n_resamples=50)
        >>> summary.loc[summary["category"] == "strict_error", ["system", "side", "count", "overturned_share"]]
          system          side  count  overturned_share
        2      A        system      1               1.0
        5      A  ground_truth      1               NaN
    """
    if len(source) == 0:
        return empty_crossed(), category_summary(empty_crossed())
    crossed = cross_verdicts(source, category_arrays(source, gt_system=gt_system), verdicts, _new_links(rows, codes))
    return crossed, category_summary(crossed, n_resamples=n_resamples, seed=seed, confidence=confidence,
                                     interval=interval)


def strict_errors_verified(crossed: pd.DataFrame, *, gt_system: str = GT_SYSTEM, n_resamples: int = 1000,
                           seed: int = 0, confidence: float = 0.95, interval: str = DEFAULT_INTERVAL) -> pd.DataFrame:
    """Per dataset, the share of the systems' judged strict errors that the annotators verified as right, all
    systems but ``gt_system`` pooled (CleanCoNLL's "47%", issue 45): columns ``dataset, value, low, high, n``
    (``n`` the judged strict errors), bounds over documents as :func:`category_summary`'s.

    Examples:
        Systems A and B: three judged strict errors on two documents, two verified by the annotators.

        >>> import pandas as pd
        >>> crossed = pd.DataFrame({"dataset": "d", "doc_id": ["1", "1", "2"], "system": ["A", "B", "A"],
        ...                         "side": "system", "category": "false_positive", "kind": "other",
        ...                         "verdict": ["verified", "verified", "removed"], "overturned": [True, True, False]})
        >>> strict_errors_verified(crossed, n_resamples=50, interval="percentile")[["dataset", "value", "n"]]
          dataset     value    n
        0       d  0.666667  3.0
    """
    columns = ["dataset", "value", "low", "high", "n"]
    if len(crossed) == 0:
        return pd.DataFrame(columns=columns)
    system_names = np.asarray(column_codes_of(crossed["system"])[1])
    chosen = crossed.loc[(column_codes_of(crossed["side"], SIDES)[0] == SIDES.index("system"))
                         & (system_names[column_codes_of(crossed["system"])[0]] != gt_system)]
    if chosen.empty:
        return pd.DataFrame(columns=columns)
    # only the strict_error cell of category_summary's pooled table: the same documents (the same draws) and
    # the same ratio of sums, without its other cells
    doc, doc_dataset, dataset_names = _documents(chosen)
    error = np.flatnonzero(np.isin(column_codes_of(chosen["category"], _SUMMARY_CATEGORIES)[0],
                                   [_SUMMARY_CATEGORIES.index(c) for c in _ERRORS]))
    judged = column_codes_of(chosen["verdict"], VERDICTS)[0][error] != VERDICTS.index("not_judged")
    over = chosen["overturned"].to_numpy(bool)[error]
    n_docs = len(doc_dataset)
    judged_by = np.bincount(doc[error], weights=judged, minlength=n_docs)
    over_by = np.bincount(doc[error], weights=over, minlength=n_docs)
    found: list[tuple[str, float, float, float, float]] = []
    for code, name in enumerate(dataset_names):
        units = np.flatnonzero(doc_dataset == code)
        if judged_by[units].sum() == 0:
            continue
        bounds = bootstrap_intervals(over_by[units], judged_by[units], n_resamples=n_resamples, seed=seed,
                                     confidence=confidence, method=interval)
        found.append((str(name), float(bounds["estimate"][0]), float(bounds["low"][0]), float(bounds["high"][0]),
                      float(judged_by[units].sum())))
    return pd.DataFrame(found, columns=columns)
