"""Scores after low / middle / high items (seed 004 section 3.3, Table 5).

Each worker's scores are standardised (z-scores). Items get a quality: the mean standardised score over all
their judgements (the paper's sentence score). Qualities are cut into three equal-frequency bins: low, middle,
high. Every judgement whose previous item (in the same worker's sequence) is in a bin goes to that bin's
group; the groups' mean standardised scores are compared, high minus low, with Welch's two-sample t-test.
The paper groups sentence means under one shared order; with per-worker orders the grouping has to be done
per judgement, which is what this does (the two coincide when every worker saw the same order).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from posthoc.sequence.lag_model import standardise_labels
from posthoc.sequence.table import Sequences, validate_sequence_table

BINS = ("low", "middle", "high")


def standardise_per_worker(table: Sequences) -> Sequences:
    """The sequence table with each worker's labels as z-scores (workers with constant labels dropped).

    Examples:
        w1's labels ``1, 2, 3`` (mean 2, standard deviation 1) become ``-1, 0, 1``; w2 gave 5 everywhere and goes.

        >>> import pandas as pd
        >>> from posthoc.sequence import standardise_per_worker
        >>> table = pd.DataFrame({"worker": ["w1"] * 3 + ["w2"] * 2, "sequence": "s", "item": ["a", "b", "c", "a", "b"],
        ...                       "position": [0, 1, 2, 0, 1], "label": [1, 2, 3, 5, 5], "gold": None})
        >>> standardise_per_worker(table)[["worker", "item", "label"]]
          worker item  label
        0     w1    a   -1.0
        1     w1    b    0.0
        2     w1    c    1.0
    """
    return standardise_labels(validate_sequence_table(table))


@dataclass(frozen=True)
class AfterPrevious:
    """Mean standardised scores after low / middle / high previous items, and the Welch test of high - low.

    ``means`` has columns ``bin, n, mean``; ``all_mean`` is the mean over every judgement with a previous item.
    """

    means: pd.DataFrame
    all_mean: float
    high_minus_low: float
    t_statistic: float
    p_value: float


def scores_after_previous(table: Sequences) -> AfterPrevious:
    """Table 5 of seed 004 for any continuous sequence table.

    Examples:
        Two workers rate items a, b, c as 1, 2, 3 (z-scores -1, 0, 1), so a is low, b middle, c high. w1 sees a, b,
        c: b follows a low item (z 0), c a middle one (z 1); w2 sees c, b, a: b follows a high item (z 0), a a
        middle one (z -1). Middle: ``(1 - 1) / 2 = 0``; one judgement each after low and high, too few for the test.

        >>> import pandas as pd
        >>> from posthoc.sequence import scores_after_previous
        >>> table = pd.DataFrame({"worker": ["w1"] * 3 + ["w2"] * 3, "sequence": "s", "item": list("abccba"),
        ...                       "position": [0, 1, 2, 0, 1, 2], "label": [1, 2, 3, 3, 2, 1], "gold": None})
        >>> after = scores_after_previous(table)
        >>> after.means
              bin  n  mean
        0     low  1   0.0
        1  middle  2   0.0
        2    high  1   0.0
        >>> after.all_mean, after.high_minus_low, after.p_value
        (0.0, 0.0, nan)
    """
    data = standardise_per_worker(table)
    quality = data.groupby("item")["label"].mean()
    ranks = quality.rank(method="first")
    bins = pd.qcut(ranks, 3, labels=list(BINS))
    data["previous_item"] = data.groupby(["worker", "sequence"])["item"].shift(1)
    data = data.dropna(subset=["previous_item"])
    data["bin"] = data["previous_item"].map(bins)
    means = (
        data.groupby("bin", observed=False)["label"].agg(["size", "mean"]).reindex(list(BINS))
        .reset_index().rename(columns={"size": "n"})
    )
    high = data.loc[data["bin"] == "high", "label"].to_numpy()
    low = data.loc[data["bin"] == "low", "label"].to_numpy()
    if len(high) > 1 and len(low) > 1:
        test = stats.ttest_ind(high, low, equal_var=False)
        t_stat, p_value = float(test.statistic), float(test.pvalue)
    else:
        t_stat = p_value = float("nan")
    diff = float(np.mean(high) - np.mean(low)) if len(high) and len(low) else float("nan")
    return AfterPrevious(means=means, all_mean=float(data["label"].mean()), high_minus_low=diff,
                         t_statistic=t_stat, p_value=p_value)
