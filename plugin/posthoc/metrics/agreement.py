"""Agreement on the intersection of all systems (seed 000 section 4.1, Figure 5).

``I(d) = ∩_m N(d,m)``: the annotations ``(dataset, doc_id, start, end, link)`` that every system
judged on dataset ``d`` put forward (identical span and link). Each was judged once per system
(times ``k``), by different workers; the table counts them by how many judges there were and how
many of those chose ``verify`` ("i = 3 indicates that all three workers verified the label").
The systems of a dataset are those with at least one judged annotation on it.
"""

from __future__ import annotations

import pandas as pd

from posthoc.metrics.inputs import ANNOTATION, judged_rows
from posthoc.metrics.verification import verdicts_of

AGREEMENT_COLUMNS = ["dataset", "n_judges", "n_verified", "count"]


def agreement_from_verdicts(verdicts: pd.DataFrame) -> pd.DataFrame:
    """The agreement table from :func:`~posthoc.metrics.verification.annotation_verdicts`."""
    n_systems = verdicts.groupby("dataset")["system"].nunique()
    per_annotation = verdicts.groupby(list(ANNOTATION), sort=True).agg(
        systems=("system", "nunique"), n_judges=("n_judges", "sum"), n_verified=("n_verify", "sum")
    )
    per_annotation = per_annotation.reset_index()
    everywhere = per_annotation["systems"].to_numpy() == n_systems.reindex(per_annotation["dataset"]).to_numpy()
    table = (
        per_annotation.loc[everywhere]
        .groupby(["dataset", "n_judges", "n_verified"], sort=True)
        .size()
        .rename("count")
        .reset_index()
    )
    return table.astype({"n_judges": "int64", "n_verified": "int64", "count": "int64"})[AGREEMENT_COLUMNS]


def agreement_on_intersection(judgements: pd.DataFrame) -> pd.DataFrame:
    """Annotations in the intersection of all systems, by how many of their judges verified (Figure 5).

    Reads the judgements table (control rows ignored). Returns ``dataset, n_judges, n_verified,
    count``: ``count`` annotations of ``I(d)`` were judged ``n_judges`` times and verified
    ``n_verified`` times.
    """
    return agreement_from_verdicts(verdicts_of(judged_rows(judgements))[0])
