"""Integer codes of key columns: the same answers as pandas, shared within one scoring and never beyond it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from posthoc.metrics import ScoringOptions, score_judgements
from posthoc.metrics import codes as codes_module
from posthoc.metrics.codes import (
    aligned_codes,
    category_codes,
    derive_codes,
    factorize,
    shared_codes,
    shared_factorisation,
    take_strings,
)
from posthoc.metrics.tuple_codes import nested_codes, sorted_codes
from posthoc.synthetic import synthetic_study

# emoji, CJK, combining marks, upper / lower case, an empty string and missing values
WORDS = ["b", "a", None, "é", "e\u0301", "😀", "A", "東京", "", "b", "a", np.nan, "Z", "東"]


@pytest.mark.parametrize("dtype", ["str", object], ids=["str", "object"])
@pytest.mark.parametrize("sort", [True, False], ids=["sorted", "unsorted"])
def test_factorize_gives_pandas_codes_and_uniques(dtype, sort):
    values = pd.Series(WORDS, dtype=dtype)
    codes, uniques = factorize(values, sort=sort)
    expected_codes, expected_uniques = pd.factorize(values, sort=sort)
    np.testing.assert_array_equal(codes, expected_codes)
    pd.testing.assert_index_equal(uniques, expected_uniques)
    assert codes.dtype == np.int64 and not codes.flags.writeable


def test_within_a_block_sorted_codes_are_derived_from_the_unsorted_ones_exactly():
    values = pd.Series(WORDS * 50, dtype="str")
    with shared_factorisation():
        first = factorize(values)
        again = factorize(values)
        ranked = factorize(values, sort=True)
    assert again[0] is first[0]  # factorised once
    expected_codes, expected_uniques = pd.factorize(values, sort=True)
    np.testing.assert_array_equal(ranked[0], expected_codes)
    pd.testing.assert_index_equal(ranked[1], expected_uniques)


def test_without_sort_any_cached_numbering_keeps_equal_values_equal():
    values = pd.Series(["y", "x", "y", None, "x"], dtype="str")
    with shared_factorisation():
        ranked = factorize(values, sort=True)
        plain = factorize(values)
    codes, uniques = plain
    assert codes.tolist() == ranked[0].tolist() == [1, 0, 1, -1, 0]
    assert [uniques[c] if c >= 0 else None for c in codes] == ["y", "x", "y", None, "x"]


def test_nothing_is_shared_outside_a_block_or_after_it():
    values = pd.Series(["q", "p", "q"], dtype="str")
    assert factorize(values)[0] is not factorize(values)[0]
    with shared_factorisation():
        inside = factorize(values)[0]
    with shared_factorisation():
        assert factorize(values)[0] is not inside


def test_a_shared_result_cannot_be_changed_by_a_caller():
    values = pd.Series(["q", "p", "q"], dtype="str")
    with shared_factorisation():
        codes, _ = factorize(values)
        with pytest.raises(ValueError):
            codes[0] = 5


def test_a_column_assigned_anew_is_factorised_anew():
    frame = pd.DataFrame({"key": pd.Series(["a", "b", "a"], dtype="str")})
    with shared_factorisation():
        before = factorize(frame["key"], sort=True)
        frame.loc[0, "key"] = "c"  # pandas replaces the column's Arrow array
        after = factorize(frame["key"], sort=True)
    assert before[0].tolist() == [0, 1, 0]
    assert after[0].tolist() == [2, 1, 0] and list(after[1]) == ["a", "b", "c"]


def test_sorted_codes_follow_the_sort_order_of_the_tuples_and_give_first_rows():
    rng = np.random.default_rng(4)
    keys = [rng.integers(0, 50, 3000), rng.integers(0, 4000, 3000), rng.integers(0, 3000, 3000)]  # a wide range
    codes, first = sorted_codes(*keys)
    frame = pd.DataFrame({"a": keys[0], "b": keys[1], "c": keys[2]})
    np.testing.assert_array_equal(codes, frame.groupby(["a", "b", "c"], sort=True).ngroup().to_numpy())
    np.testing.assert_array_equal(first, frame.reset_index().groupby(["a", "b", "c"], sort=True)["index"].min())


def test_shared_codes_agree_across_tables_with_missing_values_and_row_picks():
    left = pd.DataFrame({"k": pd.Series(["a", None, "b", "😀"], dtype="str"), "n": [1, 2, 3, 4]})
    right = pd.DataFrame({"k": pd.Series(["😀", "a", None, "z"], dtype=object), "n": [4, 1, 2, 9]})
    codes_left, codes_right = shared_codes([left, right], ["k", "n"])
    pairs_left = list(zip(left["k"].fillna("<na>"), left["n"], strict=True))
    pairs_right = list(zip(right["k"].fillna("<na>"), right["n"], strict=True))
    for i, a in enumerate(pairs_left):
        for j, b in enumerate(pairs_right):
            assert (codes_left[i] == codes_right[j]) == (a == b)
    picked = shared_codes([left, right], ["k", "n"], rows=[None, np.array([3, 0])])[1]
    assert picked.tolist() == [codes_right[3], codes_right[0]]
    text_left, text_right = aligned_codes([left["k"], right["k"]])
    assert text_left[1] == text_right[2] == 0  # missing is a value of its own


def test_take_strings_is_the_array_pandas_builds_from_objects():
    names = ["GT", "GT,rel", "東京,😀"]
    codes = np.array([2, 0, 0, 1, 2])
    built = take_strings(names, codes)
    expected = pd.array(np.asarray(names, dtype=object)[codes], dtype="str")
    assert built.dtype == expected.dtype
    pd.testing.assert_extension_array_equal(built, expected)


def test_scoring_twice_in_one_block_or_apart_gives_the_same_tables():
    _, mentions, judgements = synthetic_study(seed=3)
    apart = score_judgements(judgements, mentions, options=ScoringOptions(n_resamples=30, seed=1))
    with shared_factorisation():
        score_judgements(judgements, mentions, options=ScoringOptions(n_resamples=30, seed=1))
        inside = score_judgements(judgements, mentions, options=ScoringOptions(n_resamples=30, seed=1))
    for name, table in apart.tables().items():
        pd.testing.assert_frame_equal(table, inside.tables()[name], check_exact=True)
    assert apart.summary == inside.summary


@pytest.mark.parametrize("parent_sorted", [True, False], ids=["parent sorted", "parent unsorted"])
def test_derived_codes_of_a_subset_are_those_pandas_gives_the_subset(parent_sorted):
    parent = pd.Series(WORDS * 3, dtype="str")
    rows = np.array([5, 0, 2, 12, 5, 7])  # a repeat, a missing value, not every unique
    child = parent.iloc[rows].reset_index(drop=True)
    with shared_factorisation():
        factorize(parent, sort=parent_sorted)
        derive_codes(parent, rows, child)
        codes, uniques = factorize(child, sort=True)
        plain = factorize(child)
    expected_codes, expected_uniques = pd.factorize(child, sort=True)
    np.testing.assert_array_equal(codes, expected_codes)
    pd.testing.assert_index_equal(uniques, expected_uniques)
    values = [plain[1][c] if c >= 0 else None for c in plain[0]]
    assert values == [None if pd.isna(v) else v for v in child]  # any numbering, the right values
    assert len(plain[1]) == child.nunique()


@pytest.mark.parametrize("sort", [True, False], ids=["sorted", "unsorted"])
def test_a_grouped_column_factorised_by_its_runs_gives_pandas_codes(sort):
    import pyarrow as pa

    values = ["d2"] * 3000 + [None] * 3 + ["d1"] * 5000 + ["d2"] * 40 + ["東京😀"] * 70 + [None, "", ""]
    chunked = pa.chunked_array([pa.array(values[:2500], pa.large_string()), pa.array(values[2500:], pa.large_string())])
    column = pd.Series(pd.arrays.ArrowStringArray(chunked))
    assert codes_module._run_starts(column.array._pa_array) is not None  # the run path is taken
    codes, uniques = factorize(column, sort=sort)
    expected_codes, expected_uniques = pd.factorize(column, sort=sort)
    np.testing.assert_array_equal(codes, expected_codes)
    pd.testing.assert_index_equal(uniques, expected_uniques)
    shuffled = pd.Series(np.random.default_rng(0).permutation(np.asarray(values, dtype=object)), dtype="str")
    assert codes_module._run_starts(shuffled.array._pa_array) is None  # short runs: hashed as pandas does


@pytest.mark.parametrize("wide", [False, True], ids=["narrow keys", "keys past 62 bits"])
def test_nested_codes_number_the_tuples_and_their_prefixes_as_groupby_does(wide):
    rng = np.random.default_rng(9)
    # wide: the prefix ranges multiply to 2**61, and times the last key's range pass 62 bits (re-densified)
    spans = (2**30, 2**31) if wide else (30, 7)
    pool = np.stack([rng.integers(0, span, 300) for span in spans], axis=1)
    pool[0] = [span - 1 for span in spans]
    picks = pool[rng.integers(0, 300, 5000)]  # repeated prefixes
    keys = [picks[:, 0], picks[:, 1], rng.integers(0, 4, 5000)]
    inner, outer, rows = nested_codes(*keys)
    frame = pd.DataFrame({"a": keys[0], "b": keys[1], "c": keys[2]})
    groups = frame.groupby(["a", "b", "c"]).ngroup().to_numpy()
    prefixes = frame.groupby(["a", "b"]).ngroup().to_numpy()
    n_inner = int(inner.max()) + 1
    assert n_inner == len(rows) == len(outer) == groups.max() + 1
    # equal tuples, equal codes, both ways: the codes are a renumbering of groupby's groups
    assert len(np.unique(inner * (groups.max() + 1) + groups)) == n_inner
    np.testing.assert_array_equal(groups[rows][inner], groups)  # rows[c] is a row of code c
    # outer[c] numbers code c's prefix: a renumbering of groupby's prefix groups, dense
    assert len(np.unique(outer)) == outer.max() + 1 == prefixes.max() + 1
    assert len(np.unique(outer[inner] * (prefixes.max() + 1) + prefixes)) == prefixes.max() + 1
    empty = nested_codes(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
    assert [len(part) for part in empty] == [0, 0, 0]


@pytest.mark.parametrize("dtype", ["str", object], ids=["str", "object"])
def test_category_codes_are_positions_in_the_categories(dtype):
    values = pd.Series(["edit", "verify", "remove", "verify", "édit"], dtype=dtype)
    codes = category_codes(values, ["verify", "edit", "remove", "édit"])
    assert codes.dtype == np.int64
    assert codes.tolist() == [1, 0, 2, 0, 3]
    assert category_codes(values, ["verify", "edit"]).tolist() == [1, 0, -1, 0, -1]  # not among them: -1
