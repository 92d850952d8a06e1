"""Integer codes of key columns: grouping and joining tidy tables without groupby or merge on strings.

The metrics key their rows by several string columns (dataset, doc_id, system, link) and offsets.
Factorising each column once and combining the codes in numpy is several times faster than a pandas
``groupby`` / ``merge`` on the strings (pandas' Arrow strings are factorised anew by every call).

:func:`factorize` is ``pd.factorize`` with the same codes and uniques; inside a
:func:`shared_factorisation` block (``score_judgements`` opens one per call) an Arrow-backed column
is factorised once however many metrics read it: the key is its Arrow array, which is immutable
(pandas replaces it, never changes it, when a column is assigned). Nothing outlives the block.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from posthoc.arrays import Ints, Values
from posthoc.metrics.tuple_codes import PRESENCE_FACTOR, dense_codes, densify

if TYPE_CHECKING:
    import pyarrow as pa

#: The factorisations of the open :func:`shared_factorisation` block: id of an Arrow array -> (the array,
#: {sort: (codes, uniques)}).
_SHARED: ContextVar[dict[int, tuple[pa.ChunkedArray, dict[bool, tuple[Ints, pd.Index]]]] | None] = ContextVar(
    "posthoc_shared_factorisation", default=None
)


@contextmanager
def shared_factorisation() -> Iterator[None]:
    """Within the block, :func:`factorize` factorises each Arrow-backed column once (nested blocks share).

    Examples:
        Inside the block a column is factorised once; the result is the same as outside it.
        >>> column = pd.Series(["b", "a", "b"], dtype="str")
        >>> with shared_factorisation():
        ...     inside = factorize(column, sort=True)[0].tolist()
        >>> inside == factorize(column, sort=True)[0].tolist() == [1, 0, 1]
        True
    """
    if _SHARED.get() is not None:
        yield
        return
    token = _SHARED.set({})
    try:
        yield
    finally:
        _SHARED.reset(token)


#: A column is factorised by its runs of equal neighbours when a sample of its first rows has fewer runs than
#: this share of rows (tidy tables are grouped by dataset, document, system): one vectorised comparison of
#: neighbours and a hash of the few run values, instead of a hash of every row.
RUN_SHARE = 0.125
_RUN_SAMPLE = 4096


def _run_starts(arrow: pa.ChunkedArray) -> Ints | None:
    """First row of each run of equal neighbours of an Arrow string array, or None when runs are short."""
    pc = importlib.import_module("pyarrow.compute")  # its kernels are generated, so untyped
    n = len(arrow)
    if n < 2:
        return None
    head = arrow.slice(0, min(n, _RUN_SAMPLE))
    sample = pc.fill_null(pc.not_equal(head.slice(1), head.slice(0, len(head) - 1)), True)
    if (pc.sum(sample).as_py() or 0) >= RUN_SHARE * len(head):
        return None
    change = np.empty(n, dtype=bool)
    change[0] = True  # a missing value never equals its neighbour: it is a run of its own
    change[1:] = pc.fill_null(pc.not_equal(arrow.slice(1), arrow.slice(0, n - 1)), True).to_numpy(
        zero_copy_only=False
    )
    starts = np.flatnonzero(change)
    return starts if len(starts) < RUN_SHARE * n else None


def _fresh(values: Any, sort: bool) -> tuple[Ints, pd.Index]:
    arrow = _arrow(values)
    starts = _run_starts(arrow) if arrow is not None and isinstance(values.dtype, pd.StringDtype) else None
    if starts is not None:  # the runs' values factorised, each run's code repeated over its rows
        run_codes, uniques = pd.factorize(values.iloc[starts], sort=sort)
        codes = np.repeat(np.asarray(run_codes, dtype=np.int64), np.diff(np.append(starts, len(values))))
        codes.flags.writeable = False
        return codes, uniques
    codes, uniques = pd.factorize(values, sort=sort)
    codes = np.asarray(codes, dtype=np.int64)
    codes.flags.writeable = False
    return codes, uniques


def _sorted(values: Any, codes: Ints, uniques: pd.Index) -> tuple[Ints, pd.Index]:
    """``pd.factorize(values, sort=True)`` from the unsorted ``codes, uniques`` of ``values``."""
    if len(uniques) < 2:
        return codes, uniques
    if not isinstance(uniques.dtype, pd.StringDtype):
        return _fresh(values, True)
    # pandas sorts the uniques by their argsort (algorithms.safe_sort) and renumbers the codes; the same here,
    # without factorising every row a second time
    order = np.asarray(uniques.argsort(), dtype=np.int64)
    rank = np.empty(len(order) + 1, dtype=np.int64)
    rank[order] = np.arange(len(order))
    rank[-1] = -1  # a missing value (code -1) stays -1
    ranked = rank[codes]
    ranked.flags.writeable = False
    return ranked, uniques.take(order)


def factorize(values: pd.Series | pd.Index | Values, *, sort: bool = False) -> tuple[Ints, pd.Index]:
    """``(codes, uniques)`` of ``values`` as ``pd.factorize``: read-only int64 codes, -1 for a missing value.

    With ``sort`` they are exactly ``pd.factorize(values, sort=True)``'s. Without, the numbering is only
    "equal values, equal codes" (pandas' order of first appearance, or the sorted one). Within
    :func:`shared_factorisation` an Arrow-backed Series is factorised once; the codes are read-only so
    that no caller can change a shared result.

    Examples:
        >>> codes, uniques = factorize(pd.Series(["b", "a", None, "b"], dtype="str"), sort=True)
        >>> codes.tolist(), uniques.tolist(), codes.flags.writeable
        ([1, 0, -1, 1], ['a', 'b'], False)
    """
    cache = _SHARED.get()
    arrow = _arrow(values)
    if cache is None or arrow is None:
        return _fresh(values, sort)
    entry = cache.get(id(arrow))
    if entry is None or entry[0] is not arrow:  # the entry holds the array, so its id is not reused meanwhile
        entry = cache[id(arrow)] = (arrow, {})
    done = entry[1]
    if sort not in done:
        if sort and False in done:
            done[True] = _sorted(values, *done[False])
        else:
            done[sort] = done[True] if True in done else _fresh(values, sort)
    return done[sort]


def _arrow(values: pd.Series | pd.Index | Values) -> pa.ChunkedArray | None:
    """The Arrow array behind an Arrow-backed Series, else None."""
    return getattr(values.array, "_pa_array", None) if isinstance(values, pd.Series) else None


def derive_codes(parent: pd.Series, rows: Ints, child: pd.Series) -> None:
    """Record ``child``'s factorisation, as ``child`` is ``parent``'s values at positions ``rows``.

    Within :func:`shared_factorisation`, when ``parent`` was factorised: the codes of those rows,
    renumbered over the uniques they use (so exactly ``pd.factorize(child, sort=True)`` when the parent's
    were sorted), instead of hashing the child's strings again. Otherwise nothing happens.

    Examples:
        The child holds rows 2 and 0 of the parent (``c``, ``a``): its sorted codes are those pandas gives it.
        >>> parent = pd.Series(["a", "b", "c"], dtype="str")
        >>> child = parent.iloc[[2, 0]].reset_index(drop=True)
        >>> with shared_factorisation():
        ...     _ = factorize(parent, sort=True)
        ...     derive_codes(parent, [2, 0], child)
        ...     codes, uniques = factorize(child, sort=True)
        >>> codes.tolist(), uniques.tolist()
        ([1, 0], ['a', 'c'])
    """
    cache = _SHARED.get()
    parent_arrow, child_arrow = _arrow(parent), _arrow(child)
    if cache is None or parent_arrow is None or child_arrow is None:
        return
    entry = cache.get(id(parent_arrow))
    if entry is None or entry[0] is not parent_arrow or not entry[1]:
        return
    sort = True in entry[1]
    codes, uniques = entry[1][sort]
    picked = codes[np.asarray(rows, dtype=np.int64)]
    present = np.bincount(picked[picked >= 0], minlength=len(uniques)) > 0
    renumber = np.append(np.cumsum(present) - 1, -1)  # a missing value (code -1) stays -1
    derived = renumber[picked]
    derived.flags.writeable = False
    child_entry = cache.get(id(child_arrow))
    if child_entry is None or child_entry[0] is not child_arrow:
        child_entry = cache[id(child_arrow)] = (child_arrow, {})
    child_entry[1][sort] = (derived, uniques[present])


def category_codes(values: pd.Series, categories: Sequence[str]) -> Ints:
    """Each value's index in ``categories`` as int64, for values already validated to be among them.

    An Arrow-backed column is looked up by one ``pyarrow.compute.index_in``; any other by comparisons.

    Examples:
        >>> category_codes(pd.Series(["edit", "verify", "remove"], dtype="str"), ["verify", "edit", "remove"]).tolist()
        [1, 0, 2]
    """
    arrow = _arrow(values)
    if arrow is not None and isinstance(values.dtype, pd.StringDtype):
        pyarrow = importlib.import_module("pyarrow")
        pc = importlib.import_module("pyarrow.compute")
        found = pc.index_in(arrow, value_set=pyarrow.array(list(categories), type=arrow.type))
        if found.null_count == 0:
            return np.asarray(found.to_numpy(), dtype=np.int64)
    codes = np.full(len(values), -1, dtype=np.int64)
    for index, name in enumerate(categories):
        codes[(values == name).to_numpy(dtype=bool, na_value=False)] = index
    return codes


def take_strings(names: Sequence[Any] | pd.Index | Values, codes: Ints) -> pd.api.extensions.ExtensionArray:
    """``pd.array(np.asarray(names, dtype=object)[codes], dtype="str")``, built by one take of the few names.

    The same array (``str`` dtype, equal values), without converting one Python string per row.

    Examples:
        >>> take_strings(["A", "B"], np.array([1, 0, 1])).tolist()
        ['B', 'A', 'B']
    """
    return pd.array(np.asarray(names, dtype=object), dtype="str").take(np.asarray(codes, dtype=np.int64))


def column_codes(column: pd.Series, *, sort: bool = False) -> Ints:
    """``pd.factorize`` codes of one key column as int64 (sorted ranks of an integer column with ``sort``).

    An integer column is its own codes without ``sort``; with ``sort`` its ranks come from a presence
    map when its range is small (offsets), else from ``pd.factorize``. Other columns: :func:`factorize`.

    Examples:
        An integer column is its own codes; with ``sort`` its ranks.
        >>> column_codes(pd.Series([30, 10, 30])).tolist(), column_codes(pd.Series([30, 10, 30]), sort=True).tolist()
        ([30, 10, 30], [1, 0, 1])
    """
    if pd.api.types.is_integer_dtype(column.dtype):
        values = column.to_numpy(np.int64)
        if not sort:
            return values
        if len(values):
            low = int(values.min())
            span = int(values.max()) - low + 1
            if span <= PRESENCE_FACTOR * len(values) + 65536:
                return densify(values - low, span)  # ranks of the distinct values, as factorize(sort=True)
    return factorize(column, sort=sort)[0]


def aligned_codes(columns: Sequence[pd.Series]) -> list[Ints]:
    """Codes of one key in several tables, comparable across them: 0 for a missing value, equal values equal codes.

    Each column is factorised on its own (:func:`factorize`, shared within a block) and their few uniques
    once together; integer columns are their values (shifted to start at 1).

    Examples:
        ``b`` gets one code in both tables, a missing value 0.
        >>> left, right = aligned_codes([pd.Series(["a", "b"], dtype="str"), pd.Series(["b", None], dtype="str")])
        >>> bool(left[1] == right[0]), int(right[1])
        (True, 0)
    """
    if all(pd.api.types.is_integer_dtype(column.dtype) for column in columns):
        values = [column.to_numpy(np.int64) for column in columns]
        low = min((int(v.min()) for v in values if len(v)), default=0)
        return [v - low + 1 for v in values]
    if not all(isinstance(column.dtype, pd.StringDtype) for column in columns):
        joined = pd.concat(list(columns), ignore_index=True)
        codes = column_codes(joined) + 1
        bounds = np.cumsum([0, *[len(column) for column in columns]])
        return [codes[bounds[i] : bounds[i + 1]] for i in range(len(columns))]
    parts = [factorize(column) for column in columns]
    uniques = parts[0][1].append([part[1] for part in parts[1:]]) if len(parts) > 1 else parts[0][1]
    where = factorize(uniques)[0] + 1  # every table's uniques in one numbering, from 1
    out, offset = [], 0
    for codes, names in parts:
        lookup_of = np.append(where[offset : offset + len(names)], 0)  # code -1 (missing) -> 0
        out.append(lookup_of[codes])
        offset += len(names)
    return out


def shared_codes(
    frames: Sequence[pd.DataFrame], keys: Sequence[str], *, rows: Sequence[Ints | None] | None = None
) -> list[Ints]:
    """Dense codes of the ``keys`` tuples of each frame, comparable across the frames.

    Equal tuples get equal codes in every frame (missing values are a value of their own). ``rows``
    (one index array or None per frame) gives codes of those rows of a frame only, without a copy of them.

    Examples:
        >>> first = pd.DataFrame({"doc": ["1", "2"], "start": [0, 0]})
        >>> second = pd.DataFrame({"doc": ["2", "1"], "start": [0, 5]})
        >>> a, b = shared_codes([first, second], ["doc", "start"])
        >>> bool(a[1] == b[0]), bool(a[0] != b[1])
        (True, True)
    """
    picks = list(rows) if rows is not None else [None] * len(frames)
    per_key = [
        [codes if pick is None else codes[pick] for codes, pick in
         zip(aligned_codes([frame[key] for frame in frames]), picks, strict=True)]
        for key in keys
    ]  # fmt: skip
    codes, _ = dense_codes(*[np.concatenate(key_codes) for key_codes in per_key])
    bounds = np.cumsum([0, *[len(key_codes) for key_codes in per_key[0]]])
    return [codes[bounds[i] : bounds[i + 1]] for i in range(len(frames))]


def lookup(codes: Ints, targets: Ints) -> Ints:
    """For each of ``codes``, the position of the same code in ``targets`` (unique codes), or -1.

    Examples:
        >>> lookup(np.array([7, 3, 9]), np.array([3, 7])).tolist()
        [1, 0, -1]
    """
    if len(codes) == 0:
        return np.zeros(0, dtype=np.int64)
    size = int(max(codes.max(initial=0), targets.max(initial=0))) + 1
    where = np.full(size, -1, dtype=np.int64)
    where[targets] = np.arange(len(targets))
    return where[codes]
