"""The verification union against the ground truth: outcomes A to E (seed 000 section 4.2, Figure 6).

For each annotation of the verification union ``V(d)`` (:func:`~posthoc.metrics.verification.verification_union`)
and the ground-truth annotations (the *original* GT of the mentions table) of the same document:

A  same mention (identical span) with the same link in GT;
B  same mention in GT, but not with this link;
C  no identical span, but a GT mention overlapping it has the same link;
D  overlaps a GT mention, none of the overlapping ones with the same link;
E  overlaps no GT mention: missing from the ground truth.

The first letter that applies wins (A before B before C ...). GT's own verified annotations are in
the union and are A.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import pandas as pd

from posthoc.arrays import Strings
from posthoc.metrics.codes import factorize
from posthoc.metrics.inputs import mention_rows
from posthoc.metrics.matching import match_flags
from posthoc.metrics.verification import annotation_verdicts, union_from_verdicts
from posthoc.tables import GT_SYSTEM, Judgements, Mentions, empty_table

UNION_OUTCOMES: Final = ("A", "B", "C", "D", "E")


def classify_against_gt(annotations: pd.DataFrame, gt: Mentions) -> Strings:
    """The outcome letter A..E of each row of ``annotations`` against the ``gt`` annotations.

    Both tables need ``dataset, doc_id, start, end, link``; returns an array of letters aligned with ``annotations``.

    Examples:
        One annotation for each letter against GT ``Paris [0, 5)``, ``Seine [10, 15)`` and ``Lyon [20, 24)``.

        >>> import pandas as pd
        >>> from posthoc.metrics import classify_against_gt
        >>> columns = ["dataset", "doc_id", "start", "end", "link"]
        >>> gt = pd.DataFrame([("d", "1", 0, 5, "Paris"), ("d", "1", 10, 15, "Seine"), ("d", "1", 20, 24, "Lyon")],
        ...                   columns=columns)
        >>> annotations = pd.DataFrame(
        ...     [("d", "1", 0, 5, "Paris"), ("d", "1", 10, 15, "Seine_river"), ("d", "1", 1, 5, "Paris"),
        ...      ("d", "1", 21, 24, "Lyon_city"), ("d", "1", 30, 34, "Nice")], columns=columns)
        >>> classify_against_gt(annotations, gt).tolist()
        ['A', 'B', 'C', 'D', 'E']
    """
    flags = match_flags(annotations, gt)
    return np.select(
        [flags["same_span_same_link"], flags["same_span"], flags["overlap_same_link"], flags["overlap"]],
        ["A", "B", "C", "D"],
        default="E",
    )


def outcomes_from_union(union: pd.DataFrame, gt: Mentions) -> pd.DataFrame:
    """``dataset, outcome, count, share`` of a union table against GT (see :func:`union_outcomes_against_gt`).

    Examples:
        A union of ``Paris`` (in GT: A) and ``Nice`` (overlapping nothing: E).

        >>> import pandas as pd
        >>> from posthoc.metrics.union import outcomes_from_union
        >>> columns = ["dataset", "doc_id", "start", "end", "link"]
        >>> union = pd.DataFrame([("d", "1", 0, 5, "Paris"), ("d", "1", 30, 34, "Nice")], columns=columns)
        >>> gt = pd.DataFrame([("d", "1", 0, 5, "Paris")], columns=columns)
        >>> outcomes_from_union(union, gt)[["outcome", "count", "share"]]
          outcome  count  share
        0       A      1    0.5
        1       B      0    0.0
        2       C      0    0.0
        3       D      0    0.0
        4       E      1    0.5
    """
    return outcomes_from_letters(union, classify_against_gt(union, gt))


def outcomes_from_letters(union: pd.DataFrame, letters: Strings) -> pd.DataFrame:
    """``dataset, outcome, count, share`` from the union and the letter of each of its rows.

    Examples:
        Letters A, A, E of one dataset: shares 2/3 and 1/3 (every letter gets a row).

        >>> import numpy as np
        >>> import pandas as pd
        >>> from posthoc.metrics.union import outcomes_from_letters
        >>> table = outcomes_from_letters(pd.DataFrame({"dataset": ["d", "d", "d"]}), np.array(["A", "A", "E"]))
        >>> table.loc[table["count"] > 0, ["outcome", "count", "share"]].round(6)
          outcome  count     share
        0       A      2  0.666667
        4       E      1  0.333333
    """
    if len(union) == 0:
        return empty_table({"dataset": "str", "outcome": "str", "count": "int64", "share": "float64"})
    dataset, datasets = factorize(union["dataset"], sort=True)
    letter = np.searchsorted(np.asarray(UNION_OUTCOMES), np.asarray(letters, dtype=str))
    n = len(UNION_OUTCOMES)
    counts = np.bincount(dataset.astype(np.int64) * n + letter, minlength=len(datasets) * n)
    totals = np.repeat(counts.reshape(len(datasets), n).sum(axis=1), n)
    return pd.DataFrame(
        {
            "dataset": pd.array(np.repeat(np.asarray(datasets, dtype=object), n), dtype="str"),
            "outcome": pd.array(list(UNION_OUTCOMES) * len(datasets), dtype="str"),
            "count": counts.astype("int64"),
            "share": counts / totals,
        }
    )


def union_outcomes_against_gt(
    judgements: Judgements, mentions: Mentions, *, gt_system: str = GT_SYSTEM, ties_verified: bool = False,
    union: str = "exact",
) -> pd.DataFrame:
    """Counts and shares of outcomes A..E of the verification union against GT, per dataset (Figure 6).

    ``judgements``: the judgements table (control rows ignored); ``mentions``: the mentions table
    whose ``gt_system`` rows are the ground truth. Returns ``dataset, outcome, count, share`` with
    every letter for every dataset that has a non-empty union; ``union``: ``exact`` or ``overlap``
    (:mod:`posthoc.metrics.verification`; an overlap member is classified by its whole span).

    Examples:
        System A's verified ``Paris`` is in GT (A); its verified ``Nice`` overlaps no GT mention (E); its removed
        ``Seine`` is not in the union. The union has 2 members: one A, one E.

        >>> import pandas as pd
        >>> from posthoc.metrics import union_outcomes_against_gt
        >>> judgements = pd.DataFrame(
        ...     [("d", "1", "A", 0, 5, "Paris", "w1", "verify"), ("d", "1", "A", 10, 15, "Seine", "w1", "remove"),
        ...      ("d", "1", "A", 30, 34, "Nice", "w1", "verify")],
        ...     columns=["dataset", "doc_id", "system", "start", "end", "link", "worker", "outcome"])
        >>> mentions = pd.DataFrame([("d", "1", "GT", 0, 5, "Paris")],
        ...                         columns=["dataset", "doc_id", "system", "start", "end", "link"])
        >>> union_outcomes_against_gt(judgements, mentions)
          dataset outcome  count  share
        0       d       A      1    0.5
        1       d       B      0    0.0
        2       d       C      0    0.0
        3       d       D      0    0.0
        4       d       E      1    0.5
    """
    members = union_from_verdicts(annotation_verdicts(judgements, ties_verified=ties_verified), union=union)
    rows = mention_rows(mentions)
    return outcomes_from_union(members, rows.loc[rows["system"] == gt_system])
