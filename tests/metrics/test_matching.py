"""Span and link matching (sort-and-search) against a brute-force pairwise check."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from posthoc.metrics import match_flags, spans_overlap


def _table(rng: np.random.Generator, n: int) -> pd.DataFrame:
    start = rng.integers(0, 30, n)
    return pd.DataFrame(
        {
            "dataset": rng.choice(["A", "B"], n),
            "doc_id": rng.choice(["d1", "d2", "東京"], n),
            "start": start,
            "end": start + rng.integers(0, 6, n),  # zero-length spans included
            "link": rng.choice(["x", "y", "z"], n),
        }
    )


def _brute(left: pd.DataFrame, right: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for a in left.itertuples():
        flags = dict.fromkeys(("same_span_same_link", "same_span", "overlap_same_link", "overlap"), False)
        for b in right.itertuples():
            if (a.dataset, a.doc_id) != (b.dataset, b.doc_id):
                continue
            same_span = (a.start, a.end) == (b.start, b.end)
            overlap = bool(spans_overlap(np.array(a.start), np.array(a.end), np.array(b.start), np.array(b.end)))
            flags["same_span"] |= same_span
            flags["same_span_same_link"] |= same_span and a.link == b.link
            flags["overlap"] |= overlap
            flags["overlap_same_link"] |= overlap and a.link == b.link
        rows.append(flags)
    return pd.DataFrame(rows, columns=["same_span_same_link", "same_span", "overlap_same_link", "overlap"])


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 25), st.integers(0, 25))
def test_match_flags_equal_brute_force(seed, n_left, n_right):
    rng = np.random.default_rng(seed)
    left, right = _table(rng, n_left), _table(rng, n_right)
    got = match_flags(left, right)
    pd.testing.assert_frame_equal(got, _brute(left, right).astype(bool), check_index_type=False)


def test_half_open_spans_touching_do_not_overlap():
    left = pd.DataFrame({"dataset": "D", "doc_id": "d", "start": [0, 5], "end": [5, 9], "link": "x"})
    right = pd.DataFrame({"dataset": "D", "doc_id": "d", "start": [5], "end": [7], "link": "x"})
    assert match_flags(left, right)["overlap"].tolist() == [False, True]
