"""Verification rates, the verification union, posthoc precision / recall / F1 and outcome shares.

Seed 000 section 3.2. An *annotation* of a system is ``(dataset, doc_id, system, start, end,
link)`` (document offsets in code points); ``N(m,d)`` are system ``m``'s annotations on dataset
``d`` that were judged, ``V(m,d)`` those verified. With ``k > 1`` judges an annotation is verified
when *more than half* of its judges chose ``verify`` (a tie is not verified unless
``ties_verified``). An ``edit`` is not a verification: the paper counts verified annotations only,
and so do we (the corrected links go to :func:`posthoc.metrics.gold.corrected_gold`).

- verification rate ``r(m,d) = |V(m,d)| / |N(m,d)|`` = posthoc precision;
- mention rate: the share of ``N(m,d)`` whose *mention* was right, verified or edited (more than half of the
  judges chose verify or edit). Section 4: "Edits indicate that the named entity recognition (i.e., mention
  detection) portion of the EL model was able to identify an entity, but the entity was not linked to an
  verifiable entity"; "Removal indicates an error with the mention detection";
- verification union ``V(d) = ∪_m V(m,d)``, with ``union``:

  ``exact`` (default, the formal definition ``V(d) = ∪_m V(m,d)``)
      one member per distinct verified ``(dataset, doc_id, start, end, link)``;
  ``overlap``
      verified annotations of one document with the same link whose spans overlap (directly or through a
      chain) are one member, spanning from the first start to the last end: the paper's prose, "the union of
      all non-exact, non-overlapping annotations" (section 3.2, "Verification Union");

- posthoc recall ``|V(m,d)| / |V(d)|`` (the members of ``V(d)`` that hold a verified annotation of ``m``, which
  is ``|V(m,d)|`` for the exact union); F1 their harmonic mean;
- outcome shares (Figure 4): share of *judgements* of ``(d, m)`` that are verify / edit / remove
  (with k = 1 the verify share equals the verification rate).

Every function takes the tidy judgements table (:data:`posthoc.tables.JUDGEMENT_COLUMNS`; it reads
``dataset, doc_id, system, start, end, link, worker, outcome``) and ignores control rows.
Excluding failing workers is the caller's choice (:func:`posthoc.metrics.controls.control_results`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from posthoc.arrays import Ints
from posthoc.errors import PosthocInputError
from posthoc.metrics.codes import column_codes, derive_codes, factorize, take_strings
from posthoc.metrics.inputs import ANNOTATION, SYSTEM_ANNOTATION, judged_rows
from posthoc.metrics.matching import overlap_components
from posthoc.metrics.tuple_codes import dense_codes, sorted_codes
from posthoc.tables import OUTCOMES, Judgements, empty_table

#: Readings of the verification union (see the module docstring).
UNIONS = ("exact", "overlap")


def check_union(union: str) -> None:
    """:class:`PosthocInputError` unless ``union`` is one of :data:`UNIONS`.

    Examples:
        >>> check_union("overlap")
        >>> check_union("inexact")
        Traceback (most recent call last):
        ...
        posthoc.errors.PosthocInputError: union must be one of exact, overlap, not 'inexact'
    """
    if union not in UNIONS:
        raise PosthocInputError(f"union must be one of {', '.join(UNIONS)}, not {union!r}")


def verdicts_of(rows: Judgements, *, ties_verified: bool = False) -> tuple[pd.DataFrame, Ints]:
    """Per-annotation verdicts of validated rows, and each row's annotation index.

    Returns ``(verdicts, codes)``: ``verdicts`` has ``dataset, doc_id, system, start, end, link,
    mention_id, n_judges, n_verify, n_edit, n_remove, verified, mention_right`` sorted by the key;
    ``codes[i]`` is the verdict row of judgement ``i``.

    Examples:
        Three judgements of two annotations: ``codes`` says which verdict row each judgement belongs to.
        >>> from posthoc.metrics.inputs import judged_rows
        >>> judgements = pd.DataFrame(
        ...     [("d", "1", "A", 9, 14, "Seine", "w1", "remove"), ("d", "1", "A", 0, 5, "Paris", "w1", "verify"),
        ...      ("d", "1", "A", 0, 5, "Paris", "w2", "verify")],
        ...     columns=["dataset", "doc_id", "system", "start", "end", "link", "worker", "outcome"])
        >>> verdicts, codes = verdicts_of(judged_rows(judgements))
        >>> verdicts[["start", "link", "n_judges", "n_verify", "verified"]]
           start   link  n_judges  n_verify  verified
        0      0  Paris         2         2      True
        1      9  Seine         1         0     False
        >>> codes.tolist()
        [1, 0, 0]
    """
    keys = list(SYSTEM_ANNOTATION)
    codes, first = sorted_codes(*[column_codes(rows[key], sort=True) for key in keys])  # groupby(keys) order
    verdicts = rows[keys].iloc[first].reset_index(drop=True)
    for key in keys:
        derive_codes(rows[key], first, verdicts[key])
    verdicts["n_judges"] = np.bincount(codes, minlength=len(first)).astype("int64")
    mention_ids: Any = None
    if "mention_id" in rows.columns:
        column = rows["mention_id"]
        # a str column keeps its array (the same values and dtype as inferring them again from objects)
        mention_ids = column.array.take(first) if isinstance(column.dtype, pd.StringDtype) else (
            column.iloc[first].to_numpy())
    verdicts.insert(len(keys), "mention_id", mention_ids)
    outcome = factorize(rows["outcome"])
    for name in OUTCOMES:
        chose = np.flatnonzero(np.asarray(outcome[1]) == name)
        weights = outcome[0] == chose[0] if len(chose) else np.zeros(len(rows), dtype=bool)
        verdicts[f"n_{name}"] = np.bincount(codes, weights=weights, minlength=len(verdicts)).astype("int64")
    twice = 2 * verdicts["n_verify"]
    verdicts["verified"] = (twice > verdicts["n_judges"]) | (ties_verified & (twice == verdicts["n_judges"]))
    right = 2 * (verdicts["n_verify"] + verdicts["n_edit"])
    verdicts["mention_right"] = (right > verdicts["n_judges"]) | (ties_verified & (right == verdicts["n_judges"]))
    return verdicts, codes


def annotation_verdicts(judgements: Judgements, *, ties_verified: bool = False) -> pd.DataFrame:
    """One row per judged annotation (seed 000 section 3.2): who judged it and whether it is verified.

    Columns ``dataset, doc_id, system, start, end, link, mention_id, n_judges, n_verify, n_edit,
    n_remove, verified, mention_right``; ``verified`` is the majority rule of the module docstring,
    ``mention_right`` the same rule for verify or edit.

    Examples:
        Two judges of one annotation: one verify of two is a tie, not a majority, unless ``ties_verified``.
        >>> from posthoc.metrics import annotation_verdicts
        >>> judgements = pd.DataFrame(
        ...     [("d", "1", "A", 0, 5, "Paris", "w1", "verify"), ("d", "1", "A", 0, 5, "Paris", "w2", "edit")],
        ...     columns=["dataset", "doc_id", "system", "start", "end", "link", "worker", "outcome"])
        >>> annotation_verdicts(judgements)[["link", "n_judges", "n_verify", "n_edit", "verified", "mention_right"]]
            link  n_judges  n_verify  n_edit  verified  mention_right
        0  Paris         2         1       1     False           True
        >>> bool(annotation_verdicts(judgements, ties_verified=True).loc[0, "verified"])
        True
    """
    return verdicts_of(judged_rows(judgements), ties_verified=ties_verified)[0]


def rates_from_verdicts(verdicts: pd.DataFrame) -> pd.DataFrame:
    """``dataset, system, n_annotations, n_verified, verification_rate, n_mention_right, mention_rate`` from
    :func:`annotation_verdicts`.

    Examples:
        The verdicts of :func:`verdicts_of`'s example: 1 of 2 annotations verified.
        >>> judgements = pd.DataFrame(
        ...     [("d", "1", "A", 9, 14, "Seine", "w1", "remove"), ("d", "1", "A", 0, 5, "Paris", "w1", "verify"),
        ...      ("d", "1", "A", 0, 5, "Paris", "w2", "verify")],
        ...     columns=["dataset", "doc_id", "system", "start", "end", "link", "worker", "outcome"])
        >>> rates_from_verdicts(annotation_verdicts(judgements))[["system", "n_annotations", "n_verified",
        ...                                                       "verification_rate"]]
          system  n_annotations  n_verified  verification_rate
        0      A              2           1                0.5
    """
    grouped = verdicts.groupby(["dataset", "system"], sort=True)
    table = grouped["verified"].agg(n_annotations="size", n_verified="sum").reset_index()
    table["n_verified"] = table["n_verified"].astype("int64")
    table["verification_rate"] = table["n_verified"] / table["n_annotations"]
    table["n_mention_right"] = grouped["mention_right"].sum().to_numpy().astype("int64")
    table["mention_rate"] = table["n_mention_right"] / table["n_annotations"]
    return table


def verification_rates(judgements: Judgements, *, ties_verified: bool = False) -> pd.DataFrame:
    """Verification rate ``r(m,d) = |V(m,d)| / |N(m,d)|`` per dataset and system (seed 000 section 3.2).

    Returns ``dataset, system, n_annotations, n_verified, verification_rate, n_mention_right, mention_rate``
    (the share of annotations whose mention was right: verified or edited, section 4).

    Examples:
        Three annotations of system A, one judge each: two verified and one edited, so ``r = 2/3``; the edited
        one's mention was right, so the mention rate is ``3/3``.
        >>> from posthoc.metrics import verification_rates
        >>> judgements = pd.DataFrame(
        ...     [("d", "1", "A", 0, 5, "Paris", "w1", "verify"), ("d", "1", "A", 9, 14, "Seine", "w1", "verify"),
        ...      ("d", "2", "A", 0, 4, "Lyon", "w1", "edit")],
        ...     columns=["dataset", "doc_id", "system", "start", "end", "link", "worker", "outcome"])
        >>> rates = verification_rates(judgements)
        >>> rates[["system", "n_annotations", "n_verified", "verification_rate", "mention_rate"]]
          system  n_annotations  n_verified  verification_rate  mention_rate
        0      A              3           2           0.666667           1.0
    """
    return rates_from_verdicts(annotation_verdicts(judgements, ties_verified=ties_verified))


def union_members(verdicts: pd.DataFrame, *, union: str = "exact") -> Ints:
    """The member of the verification union of every verdict row (-1 when not verified).

    Members are numbered as the rows of :func:`union_from_verdicts`: sorted by ``dataset, doc_id, start,
    end, link`` of the member (its first start and last end for ``union="overlap"``).

    Examples:
        A's ``Paris [0, 5)`` and B's ``Paris [2, 7)`` are two members of the exact union but one of the overlap
        union; the removed ``Seine`` is in neither (-1).
        >>> judgements = pd.DataFrame(
        ...     [("d", "1", "A", 0, 5, "Paris", "w1", "verify"), ("d", "1", "B", 2, 7, "Paris", "w2", "verify"),
        ...      ("d", "1", "B", 9, 14, "Seine", "w2", "remove")],
        ...     columns=["dataset", "doc_id", "system", "start", "end", "link", "worker", "outcome"])
        >>> verdicts = annotation_verdicts(judgements)
        >>> union_members(verdicts).tolist(), union_members(verdicts, union="overlap").tolist()
        ([0, 1, -1], [0, 0, -1])
    """
    check_union(union)
    verified = verdicts["verified"].to_numpy(bool)
    member = np.full(len(verdicts), -1, dtype=np.int64)
    chosen = np.flatnonzero(verified)
    if len(chosen) == 0:
        return member
    # ranks over all verdicts, then the verified ones: the same order as ranks of the verified rows alone
    keys = {key: column_codes(verdicts[key], sort=True)[chosen] for key in ANNOTATION}
    if union == "exact":
        member[chosen] = sorted_codes(*keys.values())[0]
        return member
    group, _ = dense_codes(keys["dataset"], keys["doc_id"], keys["link"])
    start, end = verdicts["start"].to_numpy(np.int64)[chosen], verdicts["end"].to_numpy(np.int64)[chosen]
    component = overlap_components(group, start, end)
    n = int(component.max()) + 1
    first_start = np.full(n, np.iinfo(np.int64).max)
    np.minimum.at(first_start, component, start)
    last_end = np.full(n, np.iinfo(np.int64).min)
    np.maximum.at(last_end, component, end)
    one_row = np.zeros(n, dtype=np.int64)
    one_row[component] = np.arange(len(component))
    order, _ = sorted_codes(keys["dataset"][one_row], keys["doc_id"][one_row], first_start - first_start.min(),
                            last_end - last_end.min(), keys["link"][one_row])
    member[chosen] = order[component]
    return member


def union_from_verdicts(verdicts: pd.DataFrame, *, union: str = "exact") -> pd.DataFrame:
    """The verification union ``V(d)`` from :func:`annotation_verdicts` (see :func:`verification_union`).

    Examples:
        The judgements of :func:`union_members`' example: the overlap union's member spans from the first start to
        the last end.
        >>> judgements = pd.DataFrame(
        ...     [("d", "1", "A", 0, 5, "Paris", "w1", "verify"), ("d", "1", "B", 2, 7, "Paris", "w2", "verify"),
        ...      ("d", "1", "B", 9, 14, "Seine", "w2", "remove")],
        ...     columns=["dataset", "doc_id", "system", "start", "end", "link", "worker", "outcome"])
        >>> union_from_verdicts(annotation_verdicts(judgements), union="overlap")[["start", "end", "link", "systems"]]
           start  end   link systems
        0      0    7  Paris     A,B
    """
    member = union_members(verdicts, union=union)
    chosen = np.flatnonzero(member >= 0)
    codes = member[chosen]
    n = int(codes.max()) + 1 if len(codes) else 0
    all_systems, system_names = factorize(verdicts["system"], sort=True)
    system_code = all_systems[chosen]
    first = np.zeros(n, dtype=np.int64)
    first[codes[::-1]] = np.arange(len(codes))[::-1]  # each member's first row
    table = verdicts[list(ANNOTATION)].iloc[chosen[first]].reset_index(drop=True)
    for key in ANNOTATION:
        derive_codes(verdicts[key], chosen[first], table[key])
    if union == "overlap" and n:
        start = np.full(n, np.iinfo(np.int64).max)
        np.minimum.at(start, codes, verdicts["start"].to_numpy(np.int64)[chosen])
        end = np.full(n, np.iinfo(np.int64).min)
        np.maximum.at(end, codes, verdicts["end"].to_numpy(np.int64)[chosen])
        table["start"], table["end"] = start, end
    _, pair_first = dense_codes(codes, system_code)  # one row a (member, system)
    table["n_systems"] = np.bincount(codes[pair_first], minlength=n).astype("int64")
    unique_members, unique_systems = codes[pair_first], system_code[pair_first]
    if len(system_names) <= 62:
        masks = np.zeros(n, dtype=np.int64)
        np.add.at(masks, unique_members, np.left_shift(np.int64(1), unique_systems))
    else:
        masks = np.zeros(n, dtype=object)
        np.add.at(masks, unique_members, np.left_shift(1, unique_systems.astype(object)))
    if len(system_names) <= 20:  # the distinct masks by a presence map over the 2^systems possible ones
        present = np.bincount(masks, minlength=1 << len(system_names)) > 0
        distinct, which = np.flatnonzero(present), (np.cumsum(present) - 1)[masks]
    else:
        distinct, which = np.unique(masks, return_inverse=True)
    names = [",".join(s for i, s in enumerate(system_names) if mask >> i & 1) for mask in distinct.tolist()]
    table["systems"] = take_strings(names, which.reshape(-1))
    return table


def covered_members(verdicts: pd.DataFrame, *, union: str = "exact") -> pd.DataFrame:
    """``dataset, system, n_covered``: per dataset and system, the union members holding one of its verified
    annotations (the numerator of posthoc recall; ``n_verified`` for the exact union).

    Examples:
        The judgements of :func:`union_members`' example: in the overlap union each system covers its one member.
        >>> judgements = pd.DataFrame(
        ...     [("d", "1", "A", 0, 5, "Paris", "w1", "verify"), ("d", "1", "B", 2, 7, "Paris", "w2", "verify"),
        ...      ("d", "1", "B", 9, 14, "Seine", "w2", "remove")],
        ...     columns=["dataset", "doc_id", "system", "start", "end", "link", "worker", "outcome"])
        >>> covered_members(annotation_verdicts(judgements), union="overlap")
          dataset system  n_covered
        0       d      A          1
        1       d      B          1
    """
    member = union_members(verdicts, union=union)
    verified = member >= 0
    pairs = pd.DataFrame({"dataset": verdicts.loc[verified, "dataset"].to_numpy(),
                          "system": verdicts.loc[verified, "system"].to_numpy(), "member": member[verified]})
    pairs = pairs.drop_duplicates()
    return pairs.groupby(["dataset", "system"], sort=True).size().rename("n_covered").reset_index()


def verification_union(judgements: Judgements, *, ties_verified: bool = False, union: str = "exact"
                       ) -> pd.DataFrame:
    """The verification union ``V(d) = ∪_m V(m,d)`` (seed 000 section 3.2).

    One row per member: columns ``dataset, doc_id, start, end, link, n_systems, systems`` (how many and
    which systems had it verified). ``union="exact"``: a member is a distinct verified ``(dataset, doc_id,
    start, end, link)``; ``union="overlap"``: overlapping verified annotations with the same link are one
    member (module docstring). An edited annotation is not in the union, with either link.

    Examples:
        Systems A and B both had ``Paris`` verified, B also ``Lyon``; A's ``Seine`` was removed. The union holds
        ``Paris`` once (from two systems) and ``Lyon``.
        >>> from posthoc.metrics import verification_union
        >>> judgements = pd.DataFrame(
        ...     [("d", "1", "A", 0, 5, "Paris", "w1", "verify"), ("d", "1", "A", 9, 14, "Seine", "w1", "remove"),
        ...      ("d", "1", "B", 0, 5, "Paris", "w2", "verify"), ("d", "1", "B", 20, 24, "Lyon", "w2", "verify")],
        ...     columns=["dataset", "doc_id", "system", "start", "end", "link", "worker", "outcome"])
        >>> verification_union(judgements)[["start", "end", "link", "n_systems", "systems"]]
           start  end   link  n_systems systems
        0      0    5  Paris          2     A,B
        1     20   24   Lyon          1       B
    """
    return union_from_verdicts(annotation_verdicts(judgements, ties_verified=ties_verified), union=union)


def precision_recall_from(rates: pd.DataFrame, union: pd.DataFrame, *, covered: pd.DataFrame | None = None
                          ) -> pd.DataFrame:
    """Posthoc precision / recall / F1 from :func:`rates_from_verdicts` and :func:`union_from_verdicts`;
    ``covered`` (:func:`covered_members`) gives recall's numerator for the overlap union.

    Examples:
        The judgements of :func:`union_members`' example, overlap union (1 member): A is 1 of 1 verified, recall
        1/1; B 1 of 2 verified (precision 1/2), covering the one member (recall 1), F1 ``2 (1/2) / (3/2) = 2/3``.
        >>> from posthoc.metrics.verification import (annotation_verdicts, covered_members, precision_recall_from,
        ...                                           rates_from_verdicts, union_from_verdicts)
        >>> judgements = pd.DataFrame(
        ...     [("d", "1", "A", 0, 5, "Paris", "w1", "verify"), ("d", "1", "B", 2, 7, "Paris", "w2", "verify"),
        ...      ("d", "1", "B", 9, 14, "Seine", "w2", "remove")],
        ...     columns=["dataset", "doc_id", "system", "start", "end", "link", "worker", "outcome"])
        >>> verdicts = annotation_verdicts(judgements)
        >>> table = precision_recall_from(rates_from_verdicts(verdicts), union_from_verdicts(verdicts, union="overlap"),
        ...                               covered=covered_members(verdicts, union="overlap"))
        >>> table[["system", "n_union", "precision", "recall", "f1"]]
          system  n_union  precision  recall        f1
        0      A        1        1.0     1.0  1.000000
        1      B        1        0.5     1.0  0.666667
    """
    sizes = union.groupby("dataset").size().rename("n_union")
    table = rates.join(sizes, on="dataset")
    table["n_union"] = table["n_union"].fillna(0).astype("int64")
    table["precision"] = table["verification_rate"]
    numerator = table["n_verified"]
    if covered is not None:
        numerator = table.join(covered.set_index(["dataset", "system"])["n_covered"],
                               on=["dataset", "system"])["n_covered"].fillna(0)
    table["recall"] = numerator / table["n_union"].where(table["n_union"] > 0)
    total = table["precision"] + table["recall"]
    table["f1"] = (2 * table["precision"] * table["recall"] / total.where(total > 0)).fillna(0.0)
    table.loc[table["recall"].isna(), "f1"] = np.nan
    return table[["dataset", "system", "n_annotations", "n_verified", "n_union", "precision", "recall", "f1"]]


def posthoc_precision_recall(judgements: Judgements, *, ties_verified: bool = False, union: str = "exact"
                             ) -> pd.DataFrame:
    """Posthoc precision ``r(m,d)``, recall ``|V(m,d)| / |V(d)|`` and F1 (seed 000 section 3.2).

    Returns ``dataset, system, n_annotations, n_verified, n_union, precision, recall, f1``; recall
    and F1 are NaN when the dataset's union is empty, F1 is 0 when precision and recall are 0.
    ``union``: ``exact`` (default) or ``overlap`` (module docstring).

    Examples:
        The union of :func:`verification_union`'s example has 2 members. A: 1 of 2 verified (precision 1/2),
        covering 1 of 2 members (recall 1/2), F1 1/2; B: 2 of 2 and 2 of 2, F1 1.
        >>> from posthoc.metrics import posthoc_precision_recall
        >>> judgements = pd.DataFrame(
        ...     [("d", "1", "A", 0, 5, "Paris", "w1", "verify"), ("d", "1", "A", 9, 14, "Seine", "w1", "remove"),
        ...      ("d", "1", "B", 0, 5, "Paris", "w2", "verify"), ("d", "1", "B", 20, 24, "Lyon", "w2", "verify")],
        ...     columns=["dataset", "doc_id", "system", "start", "end", "link", "worker", "outcome"])
        >>> posthoc_precision_recall(judgements)[["system", "n_verified", "n_union", "precision", "recall", "f1"]]
          system  n_verified  n_union  precision  recall   f1
        0      A           1        2        0.5     0.5  0.5
        1      B           2        2        1.0     1.0  1.0
    """
    verdicts = annotation_verdicts(judgements, ties_verified=ties_verified)
    covered = covered_members(verdicts, union=union) if union == "overlap" else None
    return precision_recall_from(rates_from_verdicts(verdicts), union_from_verdicts(verdicts, union=union),
                                 covered=covered)


def outcome_shares(judgements: Judgements) -> pd.DataFrame:
    """Outcome counts and shares per dataset and system (seed 000 section 4, Figure 4).

    One row per ``(dataset, system, outcome)`` for every outcome verify / edit / remove (zero
    counts included): ``dataset, system, outcome, count, share``; the unit is a judgement.

    Examples:
        Four judgements of system A: two verify, one edit, one remove (every outcome gets a row, zeros too).
        >>> from posthoc.metrics import outcome_shares
        >>> judgements = pd.DataFrame(
        ...     [("d", "1", "A", 0, 5, "Paris", "w1", "verify"), ("d", "1", "A", 0, 5, "Paris", "w2", "verify"),
        ...      ("d", "1", "A", 9, 14, "Seine", "w1", "edit"), ("d", "1", "A", 9, 14, "Seine", "w2", "remove")],
        ...     columns=["dataset", "doc_id", "system", "start", "end", "link", "worker", "outcome"])
        >>> outcome_shares(judgements)[["outcome", "count", "share"]]
          outcome  count  share
        0  verify      2   0.50
        1    edit      1   0.25
        2  remove      1   0.25
    """
    return shares_from_rows(judged_rows(judgements))


def shares_from_rows(rows: Judgements) -> pd.DataFrame:
    """:func:`outcome_shares` of already validated, control-free judgement rows.

    Examples:
        >>> from posthoc.metrics.inputs import judged_rows
        >>> judgements = pd.DataFrame(
        ...     [("d", "1", "A", 0, 5, "Paris", "w1", "verify"), ("d", "1", "A", 9, 14, "Seine", "w1", "remove")],
        ...     columns=["dataset", "doc_id", "system", "start", "end", "link", "worker", "outcome"])
        >>> shares_from_rows(judged_rows(judgements))[["outcome", "count", "share"]]
          outcome  count  share
        0  verify      1    0.5
        1    edit      0    0.0
        2  remove      1    0.5
    """
    if len(rows) == 0:
        return empty_table({"dataset": "str", "system": "str", "outcome": "str", "count": "int64", "share": "float64"})
    dataset, dataset_names = factorize(rows["dataset"], sort=True)
    system, system_names = factorize(rows["system"], sort=True)
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
