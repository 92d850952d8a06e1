"""The verification union read two ways (exact, overlap) and the mention rate, worked by hand (paper 000 s. 3.2, 4).

One document, three systems (k = 1 except where said):

===  ======  ========  =====  ========
sys  span    link      said   mention?
===  ======  ========  =====  ========
A    0-5     L1        verify yes
A    10-15   L2        edit   yes
A    20-25   L3        remove no
B    0-8     L1        verify yes       overlaps A's 0-5 with the same link
B    10-15   L2        verify yes
C    2-4     L9        verify yes       overlaps 0-5 / 0-8, another link
C    30-35   L4        verify yes
C    31-33   L4        verify yes       overlaps C's own 30-35, same link
===  ======  ========  =====  ========

Exact union: 0-5 L1, 0-8 L1, 10-15 L2, 2-4 L9, 30-35 L4, 31-33 L4 = 6 members; recall A 1/6, B 2/6, C 3/6.
Overlap union: {0-5, 0-8} L1 -> one member 0-8 (A, B); 10-15 L2 (B); 2-4 L9 (C); {30-35, 31-33} L4 -> 30-35 (C)
= 4 members; recall = members a system holds: A 1/4, B 2/4, C 2/4 (not 3/4: C's two L4 annotations are one).
Mention rate: A 2/3 (the edit's mention was right), B 2/2, C 3/3.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from posthoc.errors import PosthocInputError
from posthoc.metrics import (
    ScoringOptions,
    posthoc_precision_recall,
    rates_with_intervals,
    score_judgements,
    verification_rates,
    verification_union,
)
from posthoc.metrics.matching import overlap_components

ROWS = [
    ("A", 0, 5, "L1", "verify"), ("A", 10, 15, "L2", "edit"), ("A", 20, 25, "L3", "remove"),
    ("B", 0, 8, "L1", "verify"), ("B", 10, 15, "L2", "verify"),
    ("C", 2, 4, "L9", "verify"), ("C", 30, 35, "L4", "verify"), ("C", 31, 33, "L4", "verify"),
]


def _judgements() -> pd.DataFrame:
    frame = pd.DataFrame(ROWS, columns=["system", "start", "end", "link", "outcome"])
    return frame.assign(dataset="D", doc_id="d1", worker=[f"w{i}" for i in range(len(frame))], is_control=False)


def test_exact_union_is_the_formal_definition() -> None:
    union = verification_union(_judgements())
    assert len(union) == 6
    recall = posthoc_precision_recall(_judgements()).set_index("system")["recall"]
    assert recall.to_dict() == pytest.approx({"A": 1 / 6, "B": 2 / 6, "C": 3 / 6})


def test_overlap_union_merges_overlapping_annotations_with_one_link() -> None:
    union = verification_union(_judgements(), union="overlap")
    got = union[["start", "end", "link", "n_systems", "systems"]].values.tolist()
    assert got == [[0, 8, "L1", 2, "A,B"], [2, 4, "L9", 1, "C"], [10, 15, "L2", 1, "B"], [30, 35, "L4", 1, "C"]]
    recall = posthoc_precision_recall(_judgements(), union="overlap").set_index("system")
    assert recall["n_union"].eq(4).all()
    assert recall["recall"].to_dict() == pytest.approx({"A": 1 / 4, "B": 2 / 4, "C": 2 / 4})
    # precision is the verification rate under either reading
    assert recall["precision"].to_dict() == pytest.approx({"A": 1 / 3, "B": 1.0, "C": 1.0})


def test_mention_rate_counts_verify_or_edit() -> None:
    rates = verification_rates(_judgements()).set_index("system")
    assert rates["mention_rate"].to_dict() == pytest.approx({"A": 2 / 3, "B": 1.0, "C": 1.0})
    # k = 3: verify, edit, remove -> the mention is right (2 of 3) but the annotation is not verified (1 of 3)
    three = pd.DataFrame({"dataset": "D", "doc_id": "d", "system": "S", "start": 0, "end": 3, "link": "L",
                          "worker": ["a", "b", "c"], "outcome": ["verify", "edit", "remove"]})
    row = verification_rates(three).iloc[0]
    assert row["mention_rate"] == 1.0 and row["verification_rate"] == 0.0


@pytest.mark.parametrize("union", ["exact", "overlap"])
def test_bootstrap_rates_agree_with_the_plain_definitions(union: str) -> None:
    judgements = _judgements()
    rates = rates_with_intervals(judgements, n_resamples=50, union=union).set_index(["system", "metric"])
    plain = posthoc_precision_recall(judgements, union=union).set_index("system")
    mention = verification_rates(judgements).set_index("system")["mention_rate"]
    for system in "ABC":
        assert rates.loc[(system, "posthoc_recall"), "value"] == pytest.approx(plain.loc[system, "recall"])
        assert rates.loc[(system, "posthoc_recall"), "n"] == plain.loc[system, "n_union"]
        assert rates.loc[(system, "mention_rate"), "value"] == pytest.approx(mention[system])
        # one document: every resample is that document, so the interval is the point
        assert rates.loc[(system, "posthoc_recall"), "low"] == pytest.approx(plain.loc[system, "recall"])


def test_score_judgements_states_the_union_and_keeps_exact_spans_for_gold() -> None:
    judgements = _judgements()
    gt = judgements.loc[judgements["system"] == "A", ["dataset", "doc_id", "system", "start", "end", "link"]]
    mentions = gt.assign(system="GT", surface="x", link_original=gt["link"], is_nil=False)
    exact = score_judgements(judgements, mentions, options=ScoringOptions(n_resamples=0))
    overlap = score_judgements(judgements, mentions, options=ScoringOptions(n_resamples=0, union="overlap"))
    assert exact.summary["union"] == "exact" and overlap.summary["union"] == "overlap"
    assert exact.summary["datasets"]["D"]["verification_union"] == 6
    assert overlap.summary["datasets"]["D"]["verification_union"] == 4
    assert overlap.union_outcomes["count"].sum() == 4
    # the corrected gold adds real (exact) spans missing from GT, never a merged member span
    added = overlap.corrected_gold[["start", "end", "link"]].values.tolist()
    assert [30, 35, "L4"] in added and [31, 33, "L4"] in added
    assert added == exact.corrected_gold[["start", "end", "link"]].values.tolist()
    with pytest.raises(PosthocInputError, match="union must be"):
        score_judgements(judgements, mentions, options=ScoringOptions(n_resamples=0, union="pooled"))


def test_overlap_components_by_hand() -> None:
    group = np.array([0, 0, 0, 0, 1, 1, 0])
    start = np.array([0, 3, 9, 12, 0, 5, 5])
    end = np.array([4, 6, 12, 14, 5, 6, 5])
    # group 0: [0,4) [3,6) chain, [5,5) empty inside [3,6), [9,12); [12,14) touches only: separate
    # group 1: [0,5) and [5,6) only touch: separate
    assert overlap_components(group, start, end).tolist() == [0, 0, 1, 2, 3, 4, 0]
