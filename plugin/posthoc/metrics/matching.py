"""Span and link matching between two annotation tables of the same documents.

Seed 000 section 2 ("Pre-Annotation Metrics") and Figure 6. Spans are half-open code-point
intervals ``[start, end)``; two spans *overlap* when they share at least one code point
(``a.start < b.end and b.start < a.end``), and identical spans always count as overlapping (so an
empty span matches itself). Links are compared as strings: the tables hold canonical links
(:func:`posthoc.links.normalise_link`), so equal entities have equal strings.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

import numpy as np
import pandas as pd

from posthoc.arrays import Bools, Ints
from posthoc.metrics.codes import aligned_codes
from posthoc.metrics.tuple_codes import dense_codes

DOCUMENT: Final = ["dataset", "doc_id"]
#: Flags :func:`match_flags` can compute, from the strictest to the loosest.
FLAGS: Final = ("same_span_same_link", "same_span", "overlap_same_link", "overlap")


def spans_overlap(start_a: Ints, end_a: Ints, start_b: Ints, end_b: Ints) -> Bools:
    """Element-wise: do ``[start_a, end_a)`` and ``[start_b, end_b)`` share a code point (or are identical)?

    Examples:
        ``[0, 5)`` and ``[4, 9)`` share code point 4; ``[0, 5)`` and ``[5, 9)`` only touch.

        >>> import numpy as np
        >>> from posthoc.metrics import spans_overlap
        >>> spans_overlap(np.array([0, 0]), np.array([5, 5]), np.array([4, 5]), np.array([9, 9])).tolist()
        [True, False]
    """
    overlap: Bools = ((start_a < end_b) & (start_b < end_a)) | ((start_a == start_b) & (end_a == end_b))
    return overlap


def _combine(first: Ints, second: Ints) -> Ints:
    """Dense int64 codes of the pairs ``(first, second)`` (both non-negative int arrays)."""
    if len(first) == 0:
        return first.astype(np.int64)
    return pd.factorize(first * (int(second.max()) + 1) + second, sort=False)[0].astype(np.int64)


def _any_overlap(
    group_left: Ints, start_left: Ints, end_left: Ints,
    group_right: Ints, start_right: Ints, end_right: Ints,
) -> Bools:  # fmt: skip
    """For each left span: does a right span of the same group share a code point?

    Sort the right spans by (group, start); a left span ``[s, e)`` overlaps one when, among the
    right spans of its group starting before ``e``, the largest end is greater than ``s``: one
    ``searchsorted`` and a running maximum, no pairwise join.
    """
    mask = np.zeros(len(group_left), dtype=bool)
    if len(group_right) == 0 or len(group_left) == 0:
        return mask
    big = int(max(end_right.max(), end_left.max(), start_left.max(), start_right.max())) + 2
    keys = group_right * big + start_right
    order = np.argsort(keys, kind="stable")
    keys = keys[order]
    running_end = np.maximum.accumulate(group_right[order] * big + end_right[order])
    before = np.searchsorted(keys, group_left * big + end_left, side="left") - 1
    found = before >= 0
    mask[found] = running_end[before[found]] > group_left[found] * big + start_left[found]
    return mask


@dataclass(frozen=True)
class SpanCodes:
    """Integer codes of annotations, shared by every subset matched against another.

    ``doc``: document code; ``start``, ``end``: offsets; ``link``: link code; ``span`` and
    ``span_link``: dense codes of ``(doc, start, end)`` and ``(doc, start, end, link)``;
    ``doc_link``: dense code of ``(doc, link)``. Codes are comparable across subsets of one table.
    """

    doc: Ints
    start: Ints
    end: Ints
    link: Ints
    span: Ints
    span_link: Ints
    doc_link: Ints

    @classmethod
    def of(cls, doc: Ints, start: Ints, end: Ints, link: Ints) -> SpanCodes:
        span = dense_codes(doc, start, end)[0]
        return cls(doc, start, end, link, span, dense_codes(span, link)[0], dense_codes(doc, link)[0])


def code_flags(
    codes: SpanCodes, left: Ints | Bools, right: Ints | Bools, *, flags: Iterable[str] = FLAGS
) -> dict[str, Bools]:
    """:func:`match_flags` on integer codes: rows ``left`` of ``codes`` matched against rows ``right``.

    ``left`` and ``right`` are index arrays (or boolean masks) into the arrays of ``codes``.

    Examples:
        Row 0 (``[0, 5)`` link 7) against rows 1 (``[0, 5)`` link 8) and 2 (``[3, 9)`` link 7) of one document.

        >>> import numpy as np
        >>> from posthoc.metrics.matching import SpanCodes, code_flags
        >>> codes = SpanCodes.of(np.array([0, 0, 0]), np.array([0, 0, 3]), np.array([5, 5, 9]), np.array([7, 8, 7]))
        >>> {name: flag.tolist() for name, flag in code_flags(codes, np.array([0]), np.array([1, 2])).items()}
        {'same_span_same_link': [False], 'same_span': [True], 'overlap_same_link': [True], 'overlap': [True]}
    """
    wanted = list(flags)
    unknown = sorted(set(wanted) - set(FLAGS))
    if unknown:
        raise ValueError(f"unknown match flag(s) {unknown}; use {FLAGS}")
    result: dict[str, Bools] = {}
    if "same_span" in wanted or "overlap" in wanted:
        same_span = np.isin(codes.span[left], codes.span[right])
    if "same_span_same_link" in wanted or "overlap_same_link" in wanted:
        same_span_same_link = np.isin(codes.span_link[left], codes.span_link[right])
    start_l, end_l, start_r, end_r = codes.start[left], codes.end[left], codes.start[right], codes.end[right]
    for name in wanted:
        if name == "same_span_same_link":
            result[name] = same_span_same_link
        elif name == "same_span":
            result[name] = same_span
        elif name == "overlap_same_link":
            group_l, group_r = codes.doc_link[left], codes.doc_link[right]
            result[name] = _any_overlap(group_l, start_l, end_l, group_r, start_r, end_r) | same_span_same_link
        else:
            doc_l, doc_r = codes.doc[left], codes.doc[right]
            result[name] = _any_overlap(doc_l, start_l, end_l, doc_r, start_r, end_r) | same_span
    return result


def match_flags(left: pd.DataFrame, right: pd.DataFrame, *, flags: Iterable[str] = FLAGS) -> pd.DataFrame:
    """For each row of ``left``: is there a row of ``right`` in the same document that matches?

    Both tables need ``dataset, doc_id, start, end, link``. Returns a frame aligned with ``left``
    (same index) with a boolean column per requested flag:

    ``same_span_same_link``  identical span and link (strict match);
    ``same_span``            identical span, any link;
    ``overlap_same_link``    overlapping span (identical included), same link (relaxed match);
    ``overlap``              overlapping span, any link.

    Examples:
        ``Paris [0, 5)`` has its twin on the right; ``Seine [9, 14)`` overlaps ``[10, 14)`` linked elsewhere.

        >>> import pandas as pd
        >>> from posthoc.metrics import match_flags
        >>> columns = ["dataset", "doc_id", "start", "end", "link"]
        >>> left = pd.DataFrame([("d", "1", 0, 5, "Paris"), ("d", "1", 9, 14, "Seine")], columns=columns)
        >>> right = pd.DataFrame([("d", "1", 0, 5, "Paris"), ("d", "1", 10, 14, "Seine_river")], columns=columns)
        >>> match_flags(left, right, flags=["same_span_same_link", "overlap_same_link", "overlap"])
           same_span_same_link  overlap_same_link  overlap
        0                 True               True     True
        1                False              False     True
    """
    n, both = len(left), [left, right]
    # each table's columns coded on their own and aligned (no concatenated copy of the strings)
    key = {column: np.concatenate(aligned_codes([table[column] for table in both])) for column in (*DOCUMENT, "link")}
    start, end = (np.concatenate([table[column].to_numpy(np.int64) for table in both]) for column in ("start", "end"))
    codes = SpanCodes.of(_combine(key["dataset"], key["doc_id"]), start, end, key["link"])
    everything = np.arange(n + len(right))
    result = code_flags(codes, everything[:n], everything[n:], flags=flags)
    return pd.DataFrame(result, index=range(n))


def overlap_components(group: Ints, start: Ints, end: Ints) -> Ints:
    """Dense codes of the connected components of overlapping spans within each ``group``.

    Two spans of one group are in one component when a chain of overlapping spans (:func:`spans_overlap`)
    joins them. One sort and a running maximum of the ends: linear after the sort. Codes are numbered in the
    order of (group, first start) of the components.

    Examples:
        In group 0, ``[0, 5)`` and ``[8, 12)`` are joined through ``[4, 9)``; ``[20, 22)`` stands alone; group 1's
        ``[0, 5)`` is another component although its span is that of the first.

        >>> import numpy as np
        >>> from posthoc.metrics.matching import overlap_components
        >>> group, start, end = np.array([0, 0, 0, 0, 1]), np.array([0, 8, 4, 20, 0]), np.array([5, 12, 9, 22, 5])
        >>> overlap_components(group, start, end).tolist()
        [0, 0, 0, 1, 2]
    """
    n = len(group)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    group = np.asarray(group, dtype=np.int64)
    start = np.asarray(start, dtype=np.int64)
    end = np.asarray(end, dtype=np.int64)
    order = np.lexsort((end, start, group))
    g, s, e = group[order], start[order], end[order]
    # ends made increasing across groups (groups are sorted), so one running maximum serves every group
    offset = int(max(e.max(), s.max())) - int(min(e.min(), s.min())) + 1
    shifted = (e - int(min(e.min(), s.min()))) + g * offset
    reach = np.maximum.accumulate(shifted)
    new = np.ones(n, dtype=bool)
    same_group = g[1:] == g[:-1]
    overlaps = (s[1:] - int(min(e.min(), s.min())) + g[1:] * offset) < reach[:-1]
    identical = (s[1:] == s[:-1]) & (e[1:] == e[:-1])
    new[1:] = ~(same_group & (overlaps | identical))
    components = np.empty(n, dtype=np.int64)
    components[order] = np.cumsum(new) - 1
    return components
