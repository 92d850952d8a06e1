"""Codes of tuples of integer keys: numbering, nesting and sorting several code columns at once in numpy.

The metrics factorise each key column once (:mod:`posthoc.metrics.codes`) and combine the codes here instead
of a pandas ``groupby`` / ``merge`` over the string columns: :func:`dense_codes` (a tuple's code and first row,
numbering not promised), :func:`nested_codes` (the tuples and their prefixes, as ``groupby`` numbers them) and
:func:`sorted_codes` (in the tuples' sort order, as ``groupby(sort=True)``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from posthoc.arrays import Bools, Ints

#: A key whose range is at most this many times the number of rows (plus a constant) is densified by a
#: presence map (one ``np.bincount``, O(n)) instead of a hash factorisation.
PRESENCE_FACTOR = 4


def _first_rows(codes: Ints, n_codes: int) -> Ints:
    first = np.full(n_codes, len(codes), dtype=np.int64)
    np.minimum.at(first, codes, np.arange(len(codes), dtype=np.int64))
    return first


def densify(key: Ints, span: int) -> Ints:
    """Dense codes of a non-negative int64 key below ``span``: sorted by key when a presence map is used.

    Examples:
        Keys 30, 10, 30 below 64: two distinct values, ranked (10 is 0, 30 is 1) by the presence map.
        >>> densify(np.array([30, 10, 30]), 64).tolist()
        [1, 0, 1]
    """
    if span <= PRESENCE_FACTOR * len(key) + 65536:
        present = np.bincount(key, minlength=span) > 0
        return (np.cumsum(present) - 1)[key]
    return pd.factorize(key, sort=False)[0].astype(np.int64)


def _radix(keys: Sequence[Ints]) -> tuple[Ints, int]:
    """One int64 key of the tuples of ``keys`` (mixed radix) and its range: re-densified where a product of
    ranges would pass 62 bits, so equal tuples, equal keys, and nothing more (non-empty keys)."""
    codes = np.asarray(keys[0], dtype=np.int64)
    span = int(codes.max()) + 1
    for key in keys[1:]:
        key = np.asarray(key, dtype=np.int64)
        key_span = int(key.max()) + 1
        if span * key_span >= 2**62:
            codes = densify(codes, span)
            span = int(codes.max()) + 1
        codes = codes * key_span + key
        span *= key_span
    return codes, span


def dense_codes(*keys: Ints) -> tuple[Ints, Ints]:
    """``(codes, first)``: dense int64 codes ``0 .. n_codes - 1`` of the rows' key tuples.

    ``keys`` are equal-length non-negative int arrays (e.g. ``pd.factorize`` codes); ``first[c]`` is
    the first row of code ``c``. Keys are combined in mixed radix while the product of their ranges
    fits in 62 bits (re-densified when it would not), then densified once: by a presence map when the
    range is small (codes then follow the key order), else by a hash factorisation. Callers must not
    rely on the numbering beyond "equal tuples, equal codes".

    Examples:
        Rows 0 and 2 hold the tuple ``(1, 0)``: one code, first seen at row 0 (the numbering itself is not promised).
        >>> codes, first = dense_codes(np.array([1, 0, 1]), np.array([0, 0, 0]))
        >>> bool(codes[0] == codes[2] != codes[1]), sorted(first.tolist())
        (True, [0, 1])
    """
    if len(keys[0]) == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    codes, span = _radix(keys)
    codes = densify(codes, span)
    return codes, _first_rows(codes, int(codes.max()) + 1)


def _runs(ordered: Ints) -> Bools:
    """Where a run of equal neighbours starts in a sorted key: a boolean mask."""
    new = np.empty(len(ordered), dtype=bool)
    new[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
    return new


def _run_codes(ordered: Ints, by_key: Ints) -> tuple[Ints, Ints]:
    """``(codes, starts)``: each row's run number in ``ordered`` (a sorted key; ``by_key``, the rows in that
    order) and the sorted positions where the runs start."""
    new = _runs(ordered)
    codes = np.empty(len(ordered), dtype=np.int64)
    codes[by_key] = np.cumsum(new) - 1
    return codes, np.flatnonzero(new)


def nested_codes(*keys: Ints) -> tuple[Ints, Ints, Ints]:
    """``(inner, outer, rows)`` of the rows' tuples of ``keys``: ``inner``, each row's dense code of the whole
    tuple; ``outer[c]``, the dense code of inner code ``c``'s tuple without its last key (the inner codes nest
    in the outer ones); ``rows[c]``, one row of inner code ``c`` (not always its first).

    Keys as :func:`dense_codes`'. Both numberings come from one ``argsort`` of the rows' mixed-radix key
    (the outer key is its quotient by the last key's range), instead of two densifications and two scans
    for first rows. Callers must not rely on the numberings beyond "equal tuples, equal codes".

    Examples:
        Tuples ``(0, 1), (0, 2), (1, 1), (0, 1)``: three inner codes (rows 0 and 3 share one) in two outer ones.
        >>> inner, outer, rows = nested_codes(np.array([0, 0, 1, 0]), np.array([1, 2, 1, 1]))
        >>> same_outer = outer[inner[0]] == outer[inner[1]] != outer[inner[2]]
        >>> len(set(inner.tolist())), bool(inner[0] == inner[3]), bool(same_outer)
        (3, True, True)
    """
    if len(keys[0]) == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty.copy(), empty.copy()
    outer_key, span = _radix(keys[:-1])
    last = np.asarray(keys[-1], dtype=np.int64)
    last_span = int(last.max()) + 1
    if span * last_span >= 2**62:
        outer_key = densify(outer_key, span)
    full = outer_key * last_span + last
    by_key = np.argsort(full)
    ordered = full[by_key]
    inner, starts = _run_codes(ordered, by_key)
    outer = np.cumsum(_runs(ordered[starts] // last_span)) - 1  # the inner codes' keys, sorted
    return inner, outer, by_key[starts]


def sorted_codes(*keys: Ints) -> tuple[Ints, Ints]:
    """``(codes, first)`` as :func:`dense_codes`, but numbered in the sort order of the key tuples.

    With keys from ``pd.factorize(..., sort=True)`` the numbering is that of ``groupby(sort=True)``.
    One mixed-radix int64 key is sorted (a presence map when its range is small, else one ``argsort`` of
    the rows' keys) when the key ranges allow it, else a ``lexsort`` of the tuples.

    Examples:
        The tuples ``(1, 0), (0, 5), (1, 0)`` in sort order: ``(0, 5)`` is 0, ``(1, 0)`` is 1.
        >>> codes, first = sorted_codes(np.array([1, 0, 1]), np.array([0, 5, 0]))
        >>> codes.tolist(), first.tolist()
        ([1, 0, 1], [1, 0])
    """
    arrays = [np.asarray(key, dtype=np.int64) for key in keys]
    if len(arrays[0]) == 0:
        return arrays[0], np.zeros(0, dtype=np.int64)
    spans = [int(key.max()) + 1 for key in arrays]
    if min(int(key.min()) for key in arrays) >= 0 and math.prod(spans) < 2**62:
        radix = arrays[0]
        for key, span in zip(arrays[1:], spans[1:], strict=True):
            radix = radix * span + key
        if math.prod(spans) <= PRESENCE_FACTOR * len(radix) + 65536:
            codes = densify(radix, math.prod(spans))  # already in key order
            return codes, _first_rows(codes, int(codes.max()) + 1)
        # one sort of the rows' keys: runs of equal keys are the codes, in key order
        by_key = np.argsort(radix)
        codes, starts = _run_codes(radix[by_key], by_key)
        return codes, _first_rows(codes, len(starts))
    codes, first = dense_codes(*arrays)
    order = np.lexsort(tuple(key[first] for key in reversed(arrays)))
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    return rank[codes], first[order]
