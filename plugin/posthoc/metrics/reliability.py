"""Inter-annotator reliability and label aggregation when each annotation has k > 1 judges.

Seed 000 section 4.1 asks "how much agreement is there among posthoc annotators?"; with k > 1
judgements of the same annotation we report chance-corrected agreement on the three outcomes
verify / edit / remove and aggregate the labels:

- Fleiss' kappa (``statsmodels.stats.inter_rater.fleiss_kappa``'s formula) on the items x outcomes
  count table. Fleiss' kappa needs the same number of raters per item, so only items with the
  most common number of judges (at least 2; ties -> the larger number) are used; ``n_items`` says how many.
- Krippendorff's alpha, nominal, on all items with at least 2 judges (missing judgements allowed),
  from the coincidence matrix (equals the ``krippendorff`` package).
- Majority vote and Dawid-Skene through crowd-kit (``MajorityVote``, ``DawidSkene``) on a
  ``task, worker, label`` frame: task = the annotation, label = the outcome. Crowd-kit's majority
  is a plurality; a tie goes to the first label in alphabetical order (edit, remove, verify).

An item is an annotation of one system ``(dataset, doc_id, system, start, end, link)``.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import pandas as pd

from posthoc.arrays import Ints
from posthoc.metrics.inputs import judged_rows
from posthoc.metrics.verification import verdicts_of
from posthoc.tables import OUTCOMES, Judgements, empty_table

RELIABILITY_COLUMNS: Final = ["dataset", "measure", "value", "n_items"]
AGGREGATED_COLUMNS: Final = ["mention_id", "dataset", "system", "n_judges", "majority", "dawid_skene"]
_COUNTS: Final = [f"n_{o}" for o in OUTCOMES]


def fleiss_kappa_table(counts: Ints) -> float:
    """Fleiss' kappa of an ``(items, categories)`` table of rating counts (every row the same total).

    ``P_i = (Σ_j n_ij² - n) / (n (n - 1))``, ``p_j = Σ_i n_ij / (N n)``,
    ``kappa = (mean P_i - Σ p_j²) / (1 - Σ p_j²)``. NaN when chance agreement is 1.

    Examples:
        Two items, three raters: item 1 ``3 : 0`` (``P_1 = 1``), item 2 ``1 : 2`` (``P_2 = (1 + 4 - 3) / 6 = 1/3``);
        ``p = (4/6, 2/6)``, chance ``5/9``, ``kappa = (2/3 - 5/9) / (1 - 5/9) = 1/4``.

        >>> import numpy as np
        >>> from posthoc.metrics import fleiss_kappa_table
        >>> round(fleiss_kappa_table(np.array([[3, 0], [1, 2]])), 6)
        0.25
    """
    table = np.asarray(counts, dtype=float)
    if table.ndim != 2 or table.shape[0] == 0:
        return float("nan")
    raters = table.sum(axis=1)
    if not np.allclose(raters, raters[0]) or raters[0] < 2:
        raise ValueError("Fleiss' kappa needs the same number (>= 2) of ratings for every item")
    n = raters[0]
    p_items = ((table * table).sum(axis=1) - n) / (n * (n - 1))
    p_categories = table.sum(axis=0) / table.sum()
    chance = float((p_categories**2).sum())
    if chance >= 1.0:  # every rating in one category
        return float("nan")
    return float((p_items.mean() - chance) / (1 - chance))


def krippendorff_alpha(counts: Ints) -> float:
    """Krippendorff's alpha, nominal, of an ``(items, values)`` table of value counts.

    Items with fewer than 2 values are not pairable and are dropped. With ``o`` the coincidence
    matrix (``o_ck = Σ_u n_uc (n_uk - [c = k]) / (m_u - 1)``) and ``n_c`` its margins,
    ``alpha = 1 - (n - 1) Σ_{c≠k} o_ck / Σ_{c≠k} n_c n_k``. NaN when there is no variation.

    Examples:
        The same table as :func:`fleiss_kappa_table`'s: coincidences ``o = [[3, 1], [1, 1]]``, margins ``(4, 2)``,
        ``n = 6``; ``alpha = 1 - 5 * 2 / (2 * 4 * 2) = 0.375``.

        >>> import numpy as np
        >>> from posthoc.metrics import krippendorff_alpha
        >>> round(krippendorff_alpha(np.array([[3, 0], [1, 2]])), 6)
        0.375
    """
    table = np.asarray(counts, dtype=float)
    if table.ndim != 2:
        raise ValueError("counts must be an (items, values) table")
    m = table.sum(axis=1)
    table, m = table[m >= 2], m[m >= 2]
    if len(table) == 0:
        return float("nan")
    coincidence = np.einsum("uc,uk->ck", table / (m - 1)[:, None], table) - np.diag((table / (m - 1)[:, None]).sum(0))
    margins = coincidence.sum(axis=0)
    n = margins.sum()
    observed = coincidence.sum() - np.trace(coincidence)
    expected = (margins.sum() ** 2 - (margins**2).sum()) / (n - 1)
    if expected == 0:
        return float("nan")
    return float(1 - observed / expected)


def reliability_from_verdicts(verdicts: pd.DataFrame) -> pd.DataFrame:
    """``dataset, measure, value, n_items`` (measures ``fleiss_kappa``, ``krippendorff_alpha``) per dataset.

    Empty (with those columns) when no annotation has 2 or more judges (k == 1).

    Examples:
        Two annotations, three judges each: ``3 : 0 : 0`` and ``1 : 2 : 0`` (verify : edit : remove). Remove was
        never chosen, so this is the two-category table of :func:`fleiss_kappa_table`'s example: kappa 1/4,
        alpha 0.375.

        >>> import pandas as pd
        >>> from posthoc.metrics.reliability import reliability_from_verdicts
        >>> verdicts = pd.DataFrame({"dataset": ["d", "d"], "n_judges": [3, 3], "n_verify": [3, 1], "n_edit": [0, 2],
        ...                          "n_remove": [0, 0]})
        >>> reliability_from_verdicts(verdicts).round(6)
          dataset             measure  value  n_items
        0       d        fleiss_kappa  0.250        2
        1       d  krippendorff_alpha  0.375        2
    """
    rows = []
    for dataset, part in verdicts.loc[verdicts["n_judges"] >= 2].groupby("dataset", sort=True):
        counts = part[_COUNTS].to_numpy()
        sizes = part["n_judges"].to_numpy()
        values, frequency = np.unique(sizes, return_counts=True)
        modal = values[frequency == frequency.max()].max()
        same = counts[sizes == modal]
        rows.append((dataset, "fleiss_kappa", fleiss_kappa_table(same), len(same)))
        rows.append((dataset, "krippendorff_alpha", krippendorff_alpha(counts), len(counts)))
    table = pd.DataFrame(rows, columns=RELIABILITY_COLUMNS)
    return table.astype({"value": "float64", "n_items": "int64"})


def crowd_frame(rows: Judgements, codes: Ints) -> pd.DataFrame:
    """crowd-kit's ``task, worker, label`` frame: task = annotation index, label = outcome.

    Examples:
        >>> import numpy as np
        >>> import pandas as pd
        >>> from posthoc.metrics.reliability import crowd_frame
        >>> rows = pd.DataFrame({"worker": ["w1", "w2"], "outcome": ["verify", "edit"]})
        >>> crowd_frame(rows, np.array([0, 0]))
           task worker   label
        0     0     w1  verify
        1     0     w2    edit
    """
    return pd.DataFrame(
        {
            "task": codes,
            "worker": rows["worker"].astype(str).to_numpy(),
            "label": rows["outcome"].astype(str).to_numpy(),
        }
    )


def majority_vote(judgements: Judgements) -> pd.Series:
    """crowd-kit ``MajorityVote`` of the outcomes of each annotation (control rows ignored).

    Returns a Series indexed like :func:`~posthoc.metrics.verification.annotation_verdicts`' rows
    (its row number), values verify / edit / remove.

    Examples:
        Three judges: ``Paris`` verify, verify, edit; ``Seine`` remove three times.

        >>> import pandas as pd
        >>> from posthoc.metrics import majority_vote
        >>> judgements = pd.DataFrame(
        ...     [("d", "1", "A", 0, 5, "Paris", w, o) for w, o in [("w1", "verify"), ("w2", "verify"), ("w3", "edit")]]
        ...     + [("d", "1", "A", 9, 14, "Seine", w, "remove") for w in ("w1", "w2", "w3")],
        ...     columns=["dataset", "doc_id", "system", "start", "end", "link", "worker", "outcome"])
        >>> majority_vote(judgements).tolist()
        ['verify', 'remove']
    """
    from crowdkit.aggregation import MajorityVote

    rows = judged_rows(judgements)
    _, codes = verdicts_of(rows)
    return MajorityVote().fit_predict(crowd_frame(rows, codes)).sort_index().rename("majority")


def dawid_skene(judgements: Judgements, *, n_iter: int = 100, tol: float = 1e-5) -> pd.Series:
    """crowd-kit ``DawidSkene`` labels of each annotation (control rows ignored); indexed like :func:`majority_vote`.

    Examples:
        With the judges of :func:`majority_vote`'s example, Dawid-Skene agrees with the majority.

        >>> import pandas as pd
        >>> from posthoc.metrics import dawid_skene
        >>> judgements = pd.DataFrame(
        ...     [("d", "1", "A", 0, 5, "Paris", w, o) for w, o in [("w1", "verify"), ("w2", "verify"), ("w3", "edit")]]
        ...     + [("d", "1", "A", 9, 14, "Seine", w, "remove") for w in ("w1", "w2", "w3")],
        ...     columns=["dataset", "doc_id", "system", "start", "end", "link", "worker", "outcome"])
        >>> dawid_skene(judgements).tolist()
        ['verify', 'remove']
    """
    from crowdkit.aggregation import DawidSkene

    rows = judged_rows(judgements)
    _, codes = verdicts_of(rows)
    return DawidSkene(n_iter=n_iter, tol=tol).fit_predict(crowd_frame(rows, codes)).sort_index().rename("dawid_skene")


def dawid_skene_workers(judgements: Judgements, *, n_iter: int = 100, tol: float = 1e-5
                        ) -> tuple[pd.Series, pd.DataFrame]:
    """crowd-kit ``DawidSkene`` fitted once: ``(labels, workers)``.

    ``labels`` is indexed like :func:`majority_vote`; ``workers`` has ``worker, accuracy``: the estimated
    probability that the worker gives the true outcome, ``sum_c prior(c) P(says c | true c)`` from the fitted
    confusion matrices (crowd-kit's ``errors_`` and ``priors_``).

    Examples:
        The judges of :func:`majority_vote`'s example. The vote shares (``Paris`` 2/3 verify, 1/3 edit; ``Seine``
        remove) are already Dawid-Skene's fixed point: priors verify 1/3, edit 1/6, remove 1/2. w1 gives the true verify
        and remove but never the true edit: 1/3 + 1/2 = 5/6; w3 gives the true edit and remove: 1/6 + 1/2 = 2/3.

        >>> import pandas as pd
        >>> from posthoc.metrics.reliability import dawid_skene_workers
        >>> judgements = pd.DataFrame(
        ...     [("d", "1", "A", 0, 5, "Paris", w, o) for w, o in [("w1", "verify"), ("w2", "verify"), ("w3", "edit")]]
        ...     + [("d", "1", "A", 9, 14, "Seine", w, "remove") for w in ("w1", "w2", "w3")],
        ...     columns=["dataset", "doc_id", "system", "start", "end", "link", "worker", "outcome"])
        >>> labels, workers = dawid_skene_workers(judgements)
        >>> labels.tolist(), workers.round(6).values.tolist()
        (['verify', 'remove'], [['w1', 0.833333], ['w2', 0.833333], ['w3', 0.666667]])
    """
    from crowdkit.aggregation import DawidSkene

    rows = judged_rows(judgements)
    _, codes = verdicts_of(rows)
    model = DawidSkene(n_iter=n_iter, tol=tol).fit(crowd_frame(rows, codes))
    labels = pd.Series(model.labels_).sort_index().rename("dawid_skene")
    errors, priors = pd.DataFrame(model.errors_), pd.Series(model.priors_)
    workers = sorted(errors.index.get_level_values(0).unique())
    accuracy = [sum(float(priors[c]) * float(errors.loc[(w, c), c]) if (w, c) in errors.index else 0.0
                    for c in priors.index) for w in workers]
    return labels, pd.DataFrame({"worker": workers, "accuracy": accuracy})


def aggregated_from(rows: Judgements, verdicts: pd.DataFrame, codes: Ints) -> pd.DataFrame:
    """``mention_id, dataset, system, n_judges, majority, dawid_skene`` for every annotation (k > 1 studies).

    Empty with those columns when no annotation has 2 or more judges.

    Examples:
        The judges of :func:`majority_vote`'s example (3 per annotation): both aggregations agree; w1 alone (k = 1)
        gives the empty table.

        >>> import pandas as pd
        >>> from posthoc.metrics.inputs import judged_rows
        >>> from posthoc.metrics.reliability import aggregated_from
        >>> from posthoc.metrics.verification import verdicts_of
        >>> judgements = pd.DataFrame(
        ...     [("d", "1", "A", 0, 5, "Paris", w, o) for w, o in [("w1", "verify"), ("w2", "verify"), ("w3", "edit")]]
        ...     + [("d", "1", "A", 9, 14, "Seine", w, "remove") for w in ("w1", "w2", "w3")],
        ...     columns=["dataset", "doc_id", "system", "start", "end", "link", "worker", "outcome"])
        >>> rows = judged_rows(judgements)
        >>> aggregated_from(rows, *verdicts_of(rows))[["n_judges", "majority", "dawid_skene"]]
           n_judges majority dawid_skene
        0         3   verify      verify
        1         3   remove      remove
        >>> rows = judged_rows(judgements.loc[judgements["worker"] == "w1"])
        >>> len(aggregated_from(rows, *verdicts_of(rows)))
        0
    """
    if len(verdicts) == 0 or int(verdicts["n_judges"].max()) < 2:
        return empty_table({c: "int64" if c == "n_judges" else "str" for c in AGGREGATED_COLUMNS})
    from crowdkit.aggregation import DawidSkene, MajorityVote

    frame = crowd_frame(rows, codes)
    majority = MajorityVote().fit_predict(frame)
    ds = DawidSkene(n_iter=100).fit_predict(frame)
    table = verdicts[["mention_id", "dataset", "system", "n_judges"]].copy()
    table["majority"] = majority.reindex(range(len(verdicts))).to_numpy()
    table["dawid_skene"] = ds.reindex(range(len(verdicts))).to_numpy()
    return table.reset_index(drop=True)[AGGREGATED_COLUMNS]
