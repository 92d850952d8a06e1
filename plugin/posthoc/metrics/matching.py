"""Span and link matching between two annotation tables of the same documents.

Seed 000 section 2 ("Pre-Annotation Metrics") and Figure 6. Spans are half-open code-point
intervals ``[start, end)``; two spans *overlap* when they share at least one code point
(``a.start < b.end and b.start < a.end``), and identical spans always count as overlapping (so an
empty span matches itself). Links are compared as strings: the tables hold canonical links
(:func:`posthoc.links.normalise_link`), so equal entities have equal strings.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

import numpy as np
import pandas as pd

DOCUMENT: Final = ["dataset", "doc_id"]
#: Flags :func:`match_flags` can compute, from the strictest to the loosest.
FLAGS: Final = ("same_span_same_link", "same_span", "overlap_same_link", "overlap")


def spans_overlap(start_a: np.ndarray, end_a: np.ndarray, start_b: np.ndarray, end_b: np.ndarray) -> np.ndarray:
    """Element-wise: do ``[start_a, end_a)`` and ``[start_b, end_b)`` share a code point (or are identical)?"""
    return ((start_a < end_b) & (start_b < end_a)) | ((start_a == start_b) & (end_a == end_b))


def _rows_matched(left: pd.DataFrame, right: pd.DataFrame, on: list[str], *, overlapping: bool) -> np.ndarray:
    """Mask over ``left``'s rows: is there a row of ``right`` equal on ``on`` (and overlapping, if asked)?"""
    columns = on + (["start", "end"] if overlapping and "start" not in on else [])
    probe = left[columns].assign(_row=np.arange(len(left)))
    target = right[columns].drop_duplicates()
    pairs = probe.merge(target, on=on, how="inner", suffixes=("", "_r"))
    if overlapping and "start" not in on:
        keep = spans_overlap(
            pairs["start"].to_numpy(), pairs["end"].to_numpy(), pairs["start_r"].to_numpy(), pairs["end_r"].to_numpy()
        )
        pairs = pairs.loc[keep]
    mask = np.zeros(len(left), dtype=bool)
    mask[pairs["_row"].to_numpy()] = True
    return mask


def match_flags(left: pd.DataFrame, right: pd.DataFrame, *, flags: Iterable[str] = FLAGS) -> pd.DataFrame:
    """For each row of ``left``: is there a row of ``right`` in the same document that matches?

    Both tables need ``dataset, doc_id, start, end, link``. Returns a frame aligned with ``left``
    (same index) with a boolean column per requested flag:

    ``same_span_same_link``  identical span and link (strict match);
    ``same_span``            identical span, any link;
    ``overlap_same_link``    overlapping span (identical included), same link (relaxed match);
    ``overlap``              overlapping span, any link.
    """
    wanted = list(flags)
    unknown = sorted(set(wanted) - set(FLAGS))
    if unknown:
        raise ValueError(f"unknown match flag(s) {unknown}; use {FLAGS}")
    left = left.reset_index(drop=True)
    plans = {
        "same_span_same_link": ([*DOCUMENT, "start", "end", "link"], False),
        "same_span": ([*DOCUMENT, "start", "end"], False),
        "overlap_same_link": ([*DOCUMENT, "link"], True),
        "overlap": (list(DOCUMENT), True),
    }
    result = {name: _rows_matched(left, right, plans[name][0], overlapping=plans[name][1]) for name in wanted}
    return pd.DataFrame(result, index=range(len(left)))
