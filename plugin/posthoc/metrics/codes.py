"""Integer codes of key columns: grouping and joining tidy tables without groupby or merge on strings.

The metrics key their rows by several string columns (dataset, doc_id, system, link) and offsets.
Factorising each column once and combining the codes in numpy is several times faster than a pandas
``groupby`` / ``merge`` on the strings (pandas' Arrow strings are factorised anew by every call).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

#: A key whose range is at most this many times the number of rows (plus a constant) is densified by a
#: presence map (one ``np.bincount``, O(n)) instead of a hash factorisation.
PRESENCE_FACTOR = 4


def _first_rows(codes: np.ndarray, n_codes: int) -> np.ndarray:
    first = np.full(n_codes, len(codes), dtype=np.int64)
    np.minimum.at(first, codes, np.arange(len(codes), dtype=np.int64))
    return first


def _densify(key: np.ndarray, span: int) -> np.ndarray:
    """Dense codes of a non-negative int64 key below ``span``: sorted by key when a presence map is used."""
    if span <= PRESENCE_FACTOR * len(key) + 65536:
        present = np.bincount(key, minlength=span) > 0
        return (np.cumsum(present) - 1)[key]
    return pd.factorize(key, sort=False)[0].astype(np.int64)


def dense_codes(*keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(codes, first)``: dense int64 codes ``0 .. n_codes - 1`` of the rows' key tuples.

    ``keys`` are equal-length non-negative int arrays (e.g. ``pd.factorize`` codes); ``first[c]`` is
    the first row of code ``c``. Keys are combined in mixed radix while the product of their ranges
    fits in 62 bits (re-densified when it would not), then densified once: by a presence map when the
    range is small (codes then follow the key order), else by a hash factorisation. Callers must not
    rely on the numbering beyond "equal tuples, equal codes".
    """
    codes = np.asarray(keys[0], dtype=np.int64)
    if len(codes) == 0:
        return codes, np.zeros(0, dtype=np.int64)
    span = int(codes.max()) + 1
    for key in keys[1:]:
        key = np.asarray(key, dtype=np.int64)
        key_span = int(key.max()) + 1
        if span * key_span >= 2**62:
            codes = _densify(codes, span)
            span = int(codes.max()) + 1
        codes = codes * key_span + key
        span *= key_span
    codes = _densify(codes, span)
    return codes, _first_rows(codes, int(codes.max()) + 1)


def sorted_codes(*keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(codes, first)`` as :func:`dense_codes`, but numbered in the sort order of the key tuples.

    With keys from ``pd.factorize(..., sort=True)`` the numbering is that of ``groupby(sort=True)``.
    One mixed-radix int64 key is sorted (a presence map when its range is small) when the key ranges
    allow it, else a ``lexsort`` of the tuples.
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
            codes = _densify(radix, math.prod(spans))  # already in key order
            return codes, _first_rows(codes, int(codes.max()) + 1)
        codes, first = dense_codes(radix)
        order = np.argsort(radix[first], kind="stable")
    else:
        codes, first = dense_codes(*arrays)
        order = np.lexsort(tuple(key[first] for key in reversed(arrays)))
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    return rank[codes], first[order]


def column_codes(column: pd.Series, *, sort: bool = False) -> np.ndarray:
    """``pd.factorize`` codes of one key column as int64 (sorted ranks of an integer column with ``sort``)."""
    if pd.api.types.is_integer_dtype(column.dtype) and not sort:
        return column.to_numpy(np.int64)
    return pd.factorize(column, sort=sort)[0].astype(np.int64)


def shared_codes(frames: Sequence[pd.DataFrame], keys: Sequence[str]) -> list[np.ndarray]:
    """Dense codes of the ``keys`` tuples of each frame, comparable across the frames.

    Equal tuples get equal codes in every frame (missing values are a value of their own).
    """
    both = pd.concat([frame[list(keys)] for frame in frames], ignore_index=True)
    codes, _ = dense_codes(*[column_codes(both[key]) + 1 for key in keys])
    bounds = np.cumsum([0, *[len(frame) for frame in frames]])
    return [codes[bounds[i] : bounds[i + 1]] for i in range(len(frames))]


def lookup(codes: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """For each of ``codes``, the position of the same code in ``targets`` (unique codes), or -1."""
    if len(codes) == 0:
        return np.zeros(0, dtype=np.int64)
    size = int(max(codes.max(initial=0), targets.max(initial=0))) + 1
    where = np.full(size, -1, dtype=np.int64)
    where[targets] = np.arange(len(targets))
    return where[codes]
