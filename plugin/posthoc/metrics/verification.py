"""Verification rates, the verification union, posthoc precision / recall / F1 and outcome shares.

Seed 000 section 3.2. An *annotation* of a system is ``(dataset, doc_id, system, start, end,
link)`` (document offsets in code points); ``N(m,d)`` are system ``m``'s annotations on dataset
``d`` that were judged, ``V(m,d)`` those verified. With ``k > 1`` judges an annotation is verified
when *more than half* of its judges chose ``verify`` (a tie is not verified unless
``ties_verified``). An ``edit`` is not a verification: the paper counts verified annotations only,
and so do we (the corrected links go to :func:`posthoc.metrics.gold.corrected_gold`).

- verification rate ``r(m,d) = |V(m,d)| / |N(m,d)|`` = posthoc precision;
- verification union ``V(d) = ∪_m V(m,d)`` over ``(dataset, doc_id, start, end, link)``;
- posthoc recall ``|V(m,d)| / |V(d)|``; F1 their harmonic mean;
- outcome shares (Figure 4): share of *judgements* of ``(d, m)`` that are verify / edit / remove
  (with k = 1 the verify share equals the verification rate).

Every function takes the tidy judgements table (:data:`posthoc.tables.JUDGEMENT_COLUMNS`; it reads
``dataset, doc_id, system, start, end, link, worker, outcome``) and ignores control rows.
Excluding failing workers is the caller's choice (:func:`posthoc.metrics.controls.control_results`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from posthoc.metrics.codes import column_codes, sorted_codes
from posthoc.metrics.inputs import ANNOTATION, SYSTEM_ANNOTATION, judged_rows
from posthoc.tables import OUTCOMES


def verdicts_of(rows: pd.DataFrame, *, ties_verified: bool = False) -> tuple[pd.DataFrame, np.ndarray]:
    """Per-annotation verdicts of validated rows, and each row's annotation index.

    Returns ``(verdicts, codes)``: ``verdicts`` has ``dataset, doc_id, system, start, end, link,
    mention_id, n_judges, n_verify, n_edit, n_remove, verified`` sorted by the key; ``codes[i]`` is
    the verdict row of judgement ``i``.
    """
    keys = list(SYSTEM_ANNOTATION)
    codes, first = sorted_codes(*[column_codes(rows[key], sort=True) for key in keys])  # groupby(keys) order
    verdicts = rows[keys].iloc[first].reset_index(drop=True)
    verdicts["n_judges"] = np.bincount(codes, minlength=len(first)).astype("int64")
    mention_ids = rows["mention_id"].iloc[first].to_numpy() if "mention_id" in rows.columns else None
    verdicts.insert(len(keys), "mention_id", mention_ids)
    for name in OUTCOMES:
        chose = (rows["outcome"] == name).to_numpy()
        verdicts[f"n_{name}"] = np.bincount(codes, weights=chose, minlength=len(verdicts)).astype("int64")
    twice = 2 * verdicts["n_verify"]
    verdicts["verified"] = (twice > verdicts["n_judges"]) | (ties_verified & (twice == verdicts["n_judges"]))
    return verdicts, codes


def annotation_verdicts(judgements: pd.DataFrame, *, ties_verified: bool = False) -> pd.DataFrame:
    """One row per judged annotation (seed 000 section 3.2): who judged it and whether it is verified.

    Columns ``dataset, doc_id, system, start, end, link, mention_id, n_judges, n_verify, n_edit,
    n_remove, verified``; ``verified`` is the majority rule of the module docstring.
    """
    return verdicts_of(judged_rows(judgements), ties_verified=ties_verified)[0]


def rates_from_verdicts(verdicts: pd.DataFrame) -> pd.DataFrame:
    """``dataset, system, n_annotations, n_verified, verification_rate`` from :func:`annotation_verdicts`."""
    table = (
        verdicts.groupby(["dataset", "system"], sort=True)["verified"]
        .agg(n_annotations="size", n_verified="sum")
        .reset_index()
    )
    table["n_verified"] = table["n_verified"].astype("int64")
    table["verification_rate"] = table["n_verified"] / table["n_annotations"]
    return table


def verification_rates(judgements: pd.DataFrame, *, ties_verified: bool = False) -> pd.DataFrame:
    """Verification rate ``r(m,d) = |V(m,d)| / |N(m,d)|`` per dataset and system (seed 000 section 3.2).

    Returns ``dataset, system, n_annotations, n_verified, verification_rate``.
    """
    return rates_from_verdicts(annotation_verdicts(judgements, ties_verified=ties_verified))


def union_from_verdicts(verdicts: pd.DataFrame) -> pd.DataFrame:
    """The verification union ``V(d)`` from :func:`annotation_verdicts` (see :func:`verification_union`)."""
    verified = verdicts.loc[verdicts["verified"].to_numpy(), [*SYSTEM_ANNOTATION]]
    system_code, system_names = pd.factorize(verified["system"], sort=True)
    codes, first = sorted_codes(*[column_codes(verified[key], sort=True) for key in ANNOTATION])
    union = verified[list(ANNOTATION)].iloc[first].reset_index(drop=True)
    union["n_systems"] = np.bincount(codes, minlength=len(first)).astype("int64")
    if len(system_names) <= 62:  # each verdict is one system of its annotation: the bits add up
        masks = np.zeros(len(first), dtype=np.int64)
        np.add.at(masks, codes, np.left_shift(np.int64(1), system_code.astype(np.int64)))
        mask_list = masks.tolist()
    else:
        wide = np.zeros(len(first), dtype=object)
        np.add.at(wide, codes, np.left_shift(1, system_code.astype(object)))
        mask_list = wide.tolist()
    names = {mask: ",".join(n for i, n in enumerate(system_names) if mask >> i & 1) for mask in set(mask_list)}
    union["systems"] = pd.array([names[mask] for mask in mask_list], dtype="str")
    return union


def verification_union(judgements: pd.DataFrame, *, ties_verified: bool = False) -> pd.DataFrame:
    """The verification union ``V(d) = ∪_m V(m,d)`` (seed 000 section 3.2).

    One row per distinct verified ``(dataset, doc_id, start, end, link)``: columns ``dataset,
    doc_id, start, end, link, n_systems, systems`` (how many and which systems had it verified).
    An edited annotation is not in the union, with either link.
    """
    return union_from_verdicts(annotation_verdicts(judgements, ties_verified=ties_verified))


def precision_recall_from(rates: pd.DataFrame, union: pd.DataFrame) -> pd.DataFrame:
    """Posthoc precision / recall / F1 from :func:`rates_from_verdicts` and :func:`union_from_verdicts`."""
    sizes = union.groupby("dataset").size().rename("n_union")
    table = rates.join(sizes, on="dataset")
    table["n_union"] = table["n_union"].fillna(0).astype("int64")
    table["precision"] = table["verification_rate"]
    table["recall"] = table["n_verified"] / table["n_union"].where(table["n_union"] > 0)
    total = table["precision"] + table["recall"]
    table["f1"] = (2 * table["precision"] * table["recall"] / total.where(total > 0)).fillna(0.0)
    table.loc[table["recall"].isna(), "f1"] = np.nan
    return table[["dataset", "system", "n_annotations", "n_verified", "n_union", "precision", "recall", "f1"]]


def posthoc_precision_recall(judgements: pd.DataFrame, *, ties_verified: bool = False) -> pd.DataFrame:
    """Posthoc precision ``r(m,d)``, recall ``|V(m,d)| / |V(d)|`` and F1 (seed 000 section 3.2).

    Returns ``dataset, system, n_annotations, n_verified, n_union, precision, recall, f1``; recall
    and F1 are NaN when the dataset's union is empty, F1 is 0 when precision and recall are 0.
    """
    verdicts = annotation_verdicts(judgements, ties_verified=ties_verified)
    return precision_recall_from(rates_from_verdicts(verdicts), union_from_verdicts(verdicts))


def outcome_shares(judgements: pd.DataFrame) -> pd.DataFrame:
    """Outcome counts and shares per dataset and system (seed 000 section 4, Figure 4).

    One row per ``(dataset, system, outcome)`` for every outcome verify / edit / remove (zero
    counts included): ``dataset, system, outcome, count, share``; the unit is a judgement.
    """
    return shares_from_rows(judged_rows(judgements))


def shares_from_rows(rows: pd.DataFrame) -> pd.DataFrame:
    """:func:`outcome_shares` of already validated, control-free judgement rows."""
    if len(rows) == 0:
        return pd.DataFrame(
            {
                "dataset": pd.Series(dtype="str"),
                "system": pd.Series(dtype="str"),
                "outcome": pd.Series(dtype="str"),
                "count": pd.Series(dtype="int64"),
                "share": pd.Series(dtype="float64"),
            }
        )
    dataset, dataset_names = pd.factorize(rows["dataset"], sort=True)
    system, system_names = pd.factorize(rows["system"], sort=True)
    outcome = np.zeros(len(rows), dtype=np.int64)
    for index, name in enumerate(OUTCOMES[1:], start=1):
        outcome[(rows["outcome"] == name).to_numpy()] = index
    pair = dataset.astype(np.int64) * len(system_names) + system
    present = np.flatnonzero(np.bincount(pair, minlength=len(dataset_names) * len(system_names)))
    group = (np.cumsum(np.bincount(pair, minlength=len(dataset_names) * len(system_names)) > 0) - 1)[pair]
    counts = np.bincount(group * len(OUTCOMES) + outcome, minlength=len(present) * len(OUTCOMES))
    totals = np.repeat(counts.reshape(len(present), len(OUTCOMES)).sum(axis=1), len(OUTCOMES))
    return pd.DataFrame(
        {
            "dataset": pd.array(np.repeat(np.asarray(dataset_names, dtype=object)[present // len(system_names)],
                                          len(OUTCOMES)), dtype="str"),
            "system": pd.array(np.repeat(np.asarray(system_names, dtype=object)[present % len(system_names)],
                                         len(OUTCOMES)), dtype="str"),
            "outcome": pd.array(list(OUTCOMES) * len(present), dtype="str"),
            "count": counts.astype("int64"),
            "share": counts / totals,
        }
    )
