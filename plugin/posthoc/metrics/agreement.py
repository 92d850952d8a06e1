"""Agreement on the intersection of all systems (seed 000 section 4.1, Figure 5).

``I(d) = ∩_m N(d,m)``: the annotations ``(dataset, doc_id, start, end, link)`` that every system
judged on dataset ``d`` put forward (identical span and link). Each was judged once per system
(times ``k``), by different workers; the table counts them by how many judges there were and how
many of those chose ``verify`` ("i = 3 indicates that all three workers verified the label").
The systems of a dataset are those with at least one judged annotation on it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from posthoc.metrics.codes import column_codes, factorize
from posthoc.metrics.inputs import ANNOTATION, judged_rows
from posthoc.metrics.tuple_codes import dense_codes
from posthoc.metrics.verification import verdicts_of
from posthoc.tables import Judgements, empty_table

AGREEMENT_COLUMNS = ["dataset", "n_judges", "n_verified", "count"]


def agreement_from_verdicts(verdicts: pd.DataFrame) -> pd.DataFrame:
    """The agreement table from :func:`~posthoc.metrics.verification.annotation_verdicts`.

    Examples:
        Verdict rows as :func:`~posthoc.metrics.verification.annotation_verdicts` gives them: ``Paris`` of A and B
        (2 + 1 = 3 judges, all of them verify) is in the intersection; only A put forward ``Seine``.

        >>> import pandas as pd
        >>> from posthoc.metrics.agreement import agreement_from_verdicts
        >>> verdicts = pd.DataFrame({"dataset": "d", "doc_id": "1", "system": ["A", "B", "A"], "start": [0, 0, 9],
        ...                          "end": [5, 5, 14], "link": ["Paris", "Paris", "Seine"], "n_judges": [2, 1, 1],
        ...                          "n_verify": [2, 1, 0]})
        >>> agreement_from_verdicts(verdicts)
          dataset  n_judges  n_verified  count
        0       d         3           3      1
    """
    if len(verdicts) == 0:
        return empty_table({c: "str" if c == "dataset" else "int64" for c in AGREEMENT_COLUMNS})
    dataset, dataset_names = factorize(verdicts["dataset"], sort=True)
    system = factorize(verdicts["system"])[0]
    pairs = np.unique(dataset.astype(np.int64) * (system.max() + 1) + system)
    n_systems = np.bincount(pairs // (system.max() + 1), minlength=len(dataset_names))
    # one verdict per system and annotation: an annotation's verdicts are its systems
    annotation, first = dense_codes(*[column_codes(verdicts[key]) for key in ANNOTATION])
    systems = np.bincount(annotation)
    n_judges = np.bincount(annotation, weights=verdicts["n_judges"].to_numpy()).astype(np.int64)
    n_verified = np.bincount(annotation, weights=verdicts["n_verify"].to_numpy()).astype(np.int64)
    of_annotation = dataset[first].astype(np.int64)
    everywhere = systems == n_systems[of_annotation]
    judges_span, verified_span = int(n_judges.max()) + 1, int(n_verified.max()) + 1
    key = (of_annotation[everywhere] * judges_span + n_judges[everywhere]) * verified_span + n_verified[everywhere]
    cells, count = np.unique(key, return_counts=True)
    names = np.asarray(dataset_names, dtype=object)
    return pd.DataFrame(
        {
            "dataset": pd.array(names[cells // (judges_span * verified_span)], dtype="str"),
            "n_judges": (cells // verified_span % judges_span).astype("int64"),
            "n_verified": (cells % verified_span).astype("int64"),
            "count": count.astype("int64"),
        }
    )


def agreement_on_intersection(judgements: Judgements) -> pd.DataFrame:
    """Annotations in the intersection of all systems, by how many of their judges verified (Figure 5).

    Reads the judgements table (control rows ignored). Returns ``dataset, n_judges, n_verified,
    count``: ``count`` annotations of ``I(d)`` were judged ``n_judges`` times and verified
    ``n_verified`` times.

    Examples:
        Systems A and B both put forward ``Paris`` (verified by 1 of its 2 judges); only A put forward ``Seine``,
        which is outside the intersection.

        >>> import pandas as pd
        >>> from posthoc.metrics import agreement_on_intersection
        >>> judgements = pd.DataFrame(
        ...     [("d", "1", "A", 0, 5, "Paris", "w1", "verify"), ("d", "1", "B", 0, 5, "Paris", "w2", "remove"),
        ...      ("d", "1", "A", 9, 14, "Seine", "w3", "verify")],
        ...     columns=["dataset", "doc_id", "system", "start", "end", "link", "worker", "outcome"])
        >>> agreement_on_intersection(judgements)
          dataset  n_judges  n_verified  count
        0       d         2           1      1
    """
    return agreement_from_verdicts(verdicts_of(judged_rows(judgements))[0])
