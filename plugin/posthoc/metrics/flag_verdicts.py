"""Eaglet's flags on the ground truth measured by the annotators: each rule's precision (issue 45, seed 003).

Eaglet (paper 003) flags ground-truth annotations it suspects (its flags table, :mod:`posthoc.eaglet.flags`:
``dataset, doc_id, start, end, link, rule, suggestion, system``). A posthoc study judged the same annotations
blind, so each flag can be checked against the verdict on its annotation (majority of its judges, as the
rates: :func:`~posthoc.metrics.verification.verdicts_of`):

- a flag on an annotation (suggestion ``delete``, ``check``, ``update-uri``, ``update-span``) is **right** when
  the annotators did not verify the annotation (they removed or edited it);
- an ``insert`` flag (an annotation Eaglet proposes) is right when the proposed annotation is in the
  verification union ``V(d)`` (some system's identical annotation was verified), judged when some system's
  identical annotation was judged.

Per dataset and rule: ``n_flags``, ``n_judged``, ``n_right``, ``precision = n_right / n_judged`` with the
report's bootstrap interval over documents (:func:`posthoc.metrics.bootstrap.bootstrap_intervals`). The score job
has no flags table, so this is not in every score: call it with the flags of ``posthoc flags check``.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import pandas as pd

from posthoc.arrays import Bools
from posthoc.metrics.bootstrap import bootstrap_intervals
from posthoc.metrics.codes import factorize
from posthoc.metrics.inputs import judged_rows
from posthoc.metrics.intervals import DEFAULT_INTERVAL
from posthoc.metrics.tuple_codes import dense_codes
from posthoc.metrics.verification import verdicts_of
from posthoc.tables import GT_SYSTEM, Judgements, require_columns

FLAG_PRECISION_COLUMNS: Final = ("dataset", "rule", "n_flags", "n_judged", "n_right", "precision", "low", "high")
_FLAG_NEEDS: Final = ("dataset", "doc_id", "start", "end", "link", "rule", "suggestion")


def _keys(frame: pd.DataFrame, columns: tuple[str, ...]) -> pd.Series:
    """One string key a row of ``columns`` (the few thousand flags: no need for integer codes)."""
    key = frame[columns[0]].astype(str)
    for column in columns[1:]:
        key = key + "\x1f" + frame[column].astype(str)
    return key


def flag_precision(flags: pd.DataFrame, judgements: Judgements, *, gt_system: str = GT_SYSTEM,
                   ties_verified: bool = False, n_resamples: int = 1000, seed: int = 0, confidence: float = 0.95,
                   interval: str = DEFAULT_INTERVAL) -> pd.DataFrame:
    """Each Eaglet rule's precision as the annotators measured it, per dataset (module docstring).

    ``flags``: Eaglet's flags table (reads ``dataset, doc_id, start, end, link, rule, suggestion`` and ``system``
    when present: flags of other systems than ``gt_system`` are left out); ``judgements``: the judgements table
    (control rows ignored). Returns :data:`FLAG_PRECISION_COLUMNS`, sorted by dataset and rule; ``precision`` and
    its bounds NaN when no flag of the rule was judged.

    Examples:
        Two "overlapping" flags on GT annotations: the annotators removed one and verified the other.

        >>> import pandas as pd
        >>> flags = pd.DataFrame([("d", "1", 0, 5, "Paris", "overlapping", "check", "GT"),
        ...                       ("d", "2", 0, 4, "Nice", "overlapping", "check", "GT")],
        ...                      columns=["dataset", "doc_id", "start", "end", "link", "rule", "suggestion", "system"])
        >>> judgements = pd.DataFrame([("d", "1", "GT", 0, 5, "Paris", "w1", "remove"),
        ...                            ("d", "2", "GT", 0, 4, "Nice", "w1", "verify")],
        ...     columns=["dataset", "doc_id", "system", "start", "end", "link", "worker", "outcome"])
        >>> flag_precision(flags, judgements, n_resamples=100, interval="percentile")[
        ...     ["rule", "n_flags", "n_judged", "n_right", "precision", "low", "high"]]
                  rule  n_flags  n_judged  n_right  precision  low  high
        0  overlapping        2         2        1        0.5  0.0   1.0
    """
    require_columns(flags, _FLAG_NEEDS, table="flags")
    if "system" in flags.columns:
        flags = flags.loc[flags["system"].isna() | (flags["system"].astype(str) == gt_system)]
    if len(flags) == 0:
        return pd.DataFrame({c: pd.Series(dtype="str" if i < 2 else "float64")
                             for i, c in enumerate(FLAG_PRECISION_COLUMNS)})
    verdicts, _ = verdicts_of(judged_rows(judgements), ties_verified=ties_verified)
    annotation = ("dataset", "doc_id", "start", "end", "link")
    own = verdicts.loc[verdicts["system"].astype(str) == gt_system]
    own_verified = dict(zip(_keys(own, annotation), own["verified"].to_numpy(bool), strict=True))
    judged_any = set(_keys(verdicts, annotation))
    in_union = set(_keys(verdicts.loc[verdicts["verified"].to_numpy(bool)], annotation))
    key = _keys(flags, annotation)
    insert = (flags["suggestion"].astype(str) == "insert").to_numpy()
    judged = np.where(insert, key.isin(judged_any), key.isin(own_verified.keys()))
    right = np.where(insert, key.isin(in_union), judged & ~key.map(own_verified).fillna(True).to_numpy(bool))
    return _precision_table(flags, judged, right, n_resamples=n_resamples, seed=seed, confidence=confidence,
                            interval=interval)


def _precision_table(flags: pd.DataFrame, judged: Bools, right: Bools, *, n_resamples: int, seed: int,
                     confidence: float, interval: str) -> pd.DataFrame:
    """Per dataset and rule: counts, precision and its bounds from resampling documents within datasets."""
    dataset, dataset_names = factorize(flags["dataset"].astype(str), sort=True)
    rule, rule_names = factorize(flags["rule"].astype(str), sort=True)
    doc = dense_codes(dataset, factorize(flags["doc_id"].astype(str), sort=True)[0])[0]
    cell = dataset * len(rule_names) + rule
    n_docs, n_cells = int(doc.max()) + 1, len(dataset_names) * len(rule_names)
    right_by = np.bincount(doc * n_cells + cell, weights=right & judged, minlength=n_docs * n_cells)
    judged_by = np.bincount(doc * n_cells + cell, weights=judged, minlength=n_docs * n_cells)
    doc_dataset = np.zeros(n_docs, dtype=np.int64)
    doc_dataset[doc] = dataset
    found = bootstrap_intervals(right_by.reshape(n_docs, n_cells), judged_by.reshape(n_docs, n_cells),
                                strata=doc_dataset, n_resamples=n_resamples, seed=seed, confidence=confidence,
                                method=interval)
    present = np.flatnonzero(np.bincount(cell, minlength=n_cells) > 0)
    return pd.DataFrame({
        "dataset": pd.array(np.asarray(dataset_names, dtype=object)[present // len(rule_names)], dtype="str"),
        "rule": pd.array(np.asarray(rule_names, dtype=object)[present % len(rule_names)], dtype="str"),
        "n_flags": np.bincount(cell, minlength=n_cells)[present].astype("int64"),
        "n_judged": judged_by.reshape(n_docs, n_cells).sum(axis=0)[present].astype("int64"),
        "n_right": right_by.reshape(n_docs, n_cells).sum(axis=0)[present].astype("int64"),
        "precision": found["estimate"].to_numpy()[present], "low": found["low"].to_numpy()[present],
        "high": found["high"].to_numpy()[present],
    })
