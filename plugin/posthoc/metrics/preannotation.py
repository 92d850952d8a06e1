"""Pre-annotation evaluation against the ground truth: precision, recall, F1 (seed 000 section 3.1).

The standard regime the paper compares posthoc verification with (section 2, "Pre-Annotation
Metrics"; Figure 3, left). For each system ``m`` other than the ground truth and each document:

strict
    a system annotation is correct when GT has the identical span with the identical link; a GT
    annotation is found when the system has the identical span and link.
overlap
    (overlap-relaxed, "weak" matching) a system annotation is correct when GT has an overlapping
    span (identical included) with the same link; a GT annotation is found when the system has an
    overlapping span with the same link. Matching is not one-to-one: one system annotation may
    overlap, and find, two GT annotations.

Counts per document: ``tp_system`` (correct system annotations), ``n_system``, ``tp_gt`` (found GT
annotations), ``n_gt``; precision = tp_system / n_system, recall = tp_gt / n_gt.

micro
    sums the counts over the dataset's documents, then divides.
macro
    averages per-document precision, recall and F1 over the dataset's documents *in scope*: those
    where GT or the system has at least one annotation (a document where both are empty says
    nothing and is left out). Within scope a ratio with a zero denominator is 0 (a document with
    GT annotations and no system annotations has precision 0; one with system annotations and no GT
    has recall 0), per-document F1 is 0 when precision + recall is 0.

strict_kb
    (issue 42, paper 000 section 5's "reconsider the strict matching metrics") strict matching of the mentions'
    ``entity`` column instead of their link: the article each link lands on in a KB index of Wikipedia's dumps
    (through redirects, from a Wikidata id; ``posthoc score --kb``), so ``Paris_(France)`` and ``Paris`` and ``Q90``
    match. Computed, beside strict and overlap, whenever the mentions carry that column; its counts ``n_system`` and
    ``n_gt`` are strict's, only the true positives can differ.

Documents are those of the mentions table (any system, GT included). Duplicated annotations (same
dataset, document, system, span and link) count once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import numpy as np
import pandas as pd

from posthoc.arrays import Floats, Ints
from posthoc.errors import PosthocInputError
from posthoc.metrics.codes import factorize
from posthoc.metrics.inputs import mention_rows
from posthoc.metrics.matching import SpanCodes, code_flags
from posthoc.metrics.tuple_codes import sorted_codes
from posthoc.tables import GT_SYSTEM, Mentions, empty_table

MATCHINGS: Final = ("strict", "overlap")
#: strict matching through a KB index (module docstring), on the mentions' ENTITY_COLUMN
KB_MATCHING: Final = "strict_kb"
ENTITY_COLUMN: Final = "entity"
AVERAGINGS: Final = ("micro", "macro")
_FLAG: Final = {"strict": "same_span_same_link", "overlap": "overlap_same_link", KB_MATCHING: KB_MATCHING}
COUNT_COLUMNS: Final = ("tp_system", "n_system", "tp_gt", "n_gt")


def _ratio(numerator: Floats, denominator: Floats) -> Floats:
    out = np.zeros(len(numerator), dtype=float)
    np.divide(numerator, denominator, out=out, where=denominator > 0)
    return out


def _f1(precision: Floats, recall: Floats) -> Floats:
    return _ratio(2 * precision * recall, precision + recall)


def document_counts(
    mentions: Mentions, *, gt_system: str = GT_SYSTEM, matching: Sequence[str] | None = None
) -> pd.DataFrame:
    """Per document, system and matching: ``dataset, doc_id, system, matching, tp_system, n_system, tp_gt, n_gt``.

    Plus the per-document ``precision, recall, f1`` and ``in_scope`` used by macro averaging.
    Rows exist for every document of a dataset and every non-GT system present in that dataset.

    Examples:
        GT has ``Paris [0, 5)`` and ``Seine [9, 14)``; system A has ``Paris [0, 5)`` and ``Seine [10, 14)``. Strict:
        1 of A's 2 annotations is in GT and 1 of GT's 2 is found; overlap: both, both ways.

        >>> import pandas as pd
        >>> from posthoc.metrics import document_counts
        >>> mentions = pd.DataFrame(
        ...     [("d", "1", "GT", 0, 5, "Paris"), ("d", "1", "GT", 9, 14, "Seine"),
        ...      ("d", "1", "A", 0, 5, "Paris"), ("d", "1", "A", 10, 14, "Seine")],
        ...     columns=["dataset", "doc_id", "system", "start", "end", "link"])
        >>> document_counts(mentions)[["matching", "tp_system", "n_system", "tp_gt", "n_gt", "precision", "recall"]]
          matching  tp_system  n_system  tp_gt  n_gt  precision  recall
        0  overlap          2         2      2     2        1.0     1.0
        1   strict          1         2      1     2        0.5     0.5
    """
    return counts_of_rows(mention_rows(mentions), gt_system=gt_system, matching=matching)


def counts_of_rows(rows: Mentions, *, gt_system: str, matching: Sequence[str] | None = None) -> pd.DataFrame:
    """:func:`document_counts` of an already validated mentions table; ``matching`` None: strict and overlap, and
    strict_kb when the rows carry an ``entity`` column.

    Every key column is factorised once (:class:`~posthoc.metrics.matching.SpanCodes`); each system is
    matched against the GT of its datasets on those integer codes.

    Examples:
        :func:`document_counts`' mentions, validated once (``mention_rows``), strict only: A's ``Paris`` is in GT, its
        ``Seine [10, 14)`` is not, so 1 of 2. An unknown matching is refused.

        >>> import pandas as pd
        >>> from posthoc.metrics.inputs import mention_rows
        >>> from posthoc.metrics.preannotation import counts_of_rows
        >>> rows = mention_rows(pd.DataFrame(
        ...     [("d", "1", "GT", 0, 5, "Paris"), ("d", "1", "GT", 9, 14, "Seine"),
        ...      ("d", "1", "A", 0, 5, "Paris"), ("d", "1", "A", 10, 14, "Seine")],
        ...     columns=["dataset", "doc_id", "system", "start", "end", "link"]))
        >>> counts_of_rows(rows, gt_system="GT", matching=["strict"])[["system", "tp_system", "n_system", "precision"]]
          system  tp_system  n_system  precision
        0      A          1         2        0.5

        With an ``entity`` column (``posthoc score --kb``: A's ``Seine_river`` redirects to ``Seine``), strict_kb
        counts A's ``[9, 14)`` right too; strict does not:

        >>> rows = mention_rows(pd.DataFrame(
        ...     [("d", "1", "GT", 0, 5, "Paris", "Paris"), ("d", "1", "GT", 9, 14, "Seine", "Seine"),
        ...      ("d", "1", "A", 0, 5, "Paris", "Paris"), ("d", "1", "A", 9, 14, "Seine_river", "Seine")],
        ...     columns=["dataset", "doc_id", "system", "start", "end", "link", "entity"]))
        >>> counts_of_rows(rows, gt_system="GT")[["matching", "tp_system", "n_system", "tp_gt"]]
            matching  tp_system  n_system  tp_gt
        0    overlap          1         2      1
        1     strict          1         2      1
        2  strict_kb          2         2      2
        >>> counts_of_rows(rows, gt_system="GT", matching=["fuzzy"])
        Traceback (most recent call last):
        ...
        posthoc.errors.PosthocInputError: preannotation: unknown matching ['fuzzy']; use one of strict, overlap
    """
    if matching is None:
        matching = (*MATCHINGS, KB_MATCHING) if ENTITY_COLUMN in rows.columns else MATCHINGS
    unknown = sorted(set(matching) - set(MATCHINGS) - {KB_MATCHING})
    if unknown:
        raise PosthocInputError(f"preannotation: unknown matching {unknown}; use one of {', '.join(MATCHINGS)}")
    if KB_MATCHING in matching and ENTITY_COLUMN not in rows.columns:
        raise PosthocInputError(f"preannotation: {KB_MATCHING} needs the mentions' {ENTITY_COLUMN!r} column (the "
                                "entity of each link through a KB index: posthoc score --kb)")
    columns = ["dataset", "doc_id", "system", "matching", *COUNT_COLUMNS]
    dataset, dataset_names = factorize(rows["dataset"], sort=True)
    doc_code, doc_names = factorize(rows["doc_id"], sort=True)
    system, system_names = factorize(rows["system"], sort=True)
    doc_of_row, first = sorted_codes(dataset, doc_code)  # documents sorted by dataset, doc_id
    n_docs = len(first)
    doc_dataset = dataset[first]
    starts, ends = rows["start"].to_numpy(np.int64), rows["end"].to_numpy(np.int64)
    codes = SpanCodes.of(doc_of_row, starts, ends, factorize(rows["link"])[0])
    kb_codes = SpanCodes.of(doc_of_row, starts, ends, factorize(rows[ENTITY_COLUMN])[0]) \
        if KB_MATCHING in matching else None
    plain = [_FLAG[m] for m in matching if m != KB_MATCHING]
    gt_codes = np.flatnonzero(np.asarray(system_names) == gt_system)
    is_gt = system == gt_codes[0] if len(gt_codes) else np.zeros(len(rows), dtype=bool)
    n_datasets = len(dataset_names)
    parts: dict[str, list[Ints | Floats]] = {c: [] for c in ("doc", "system", "matching", *COUNT_COLUMNS)}
    order = sorted(range(len(matching)), key=lambda i: matching[i])  # rows sorted by matching name
    for code, name in enumerate(system_names):
        if name == gt_system:
            continue
        of_system = system == code
        present = np.bincount(dataset[of_system], minlength=n_datasets) > 0
        gt_here = is_gt & present[dataset]
        in_datasets = present[doc_dataset]
        system_flags = code_flags(codes, of_system, gt_here, flags=plain)
        gt_flags = code_flags(codes, gt_here, of_system, flags=plain)
        if kb_codes is not None:  # the same strict test on the entities' codes
            strict = _FLAG["strict"]
            system_flags[KB_MATCHING] = code_flags(kb_codes, of_system, gt_here, flags=[strict])[strict]
            gt_flags[KB_MATCHING] = code_flags(kb_codes, gt_here, of_system, flags=[strict])[strict]
        system_doc, gt_doc = doc_of_row[of_system], doc_of_row[gt_here]
        n_system = np.bincount(system_doc, minlength=n_docs)[in_datasets]
        n_gt = np.bincount(gt_doc, minlength=n_docs)[in_datasets]
        docs = np.flatnonzero(in_datasets)
        for index in order:
            flag = _FLAG[matching[index]]
            parts["doc"].append(docs)
            parts["system"].append(np.full(len(docs), code))
            parts["matching"].append(np.full(len(docs), index))
            tp_system = np.bincount(system_doc, weights=system_flags[flag], minlength=n_docs)
            parts["tp_system"].append(tp_system[in_datasets])
            parts["n_system"].append(n_system)
            parts["tp_gt"].append(np.bincount(gt_doc, weights=gt_flags[flag], minlength=n_docs)[in_datasets])
            parts["n_gt"].append(n_gt)
    if not parts["doc"]:
        table = empty_table({c: "int64" if c in COUNT_COLUMNS else "str" for c in columns})
    else:
        doc = np.concatenate(parts["doc"])
        system_of = np.concatenate(parts["system"])
        matching_of = np.concatenate(parts["matching"])
        # rows sorted by dataset, system, matching, doc_id (documents are sorted by dataset, doc_id)
        rank = np.empty(len(order), dtype=np.int64)
        rank[order] = np.arange(len(order))
        final = np.lexsort((doc, rank[matching_of], system_of, doc_dataset[doc]))
        table = pd.DataFrame(
            {
                "dataset": pd.array(np.asarray(dataset_names, dtype=object)[doc_dataset[doc[final]]], dtype="str"),
                "doc_id": pd.array(np.asarray(doc_names, dtype=object)[doc_code[first][doc[final]]], dtype="str"),
                "system": pd.array(np.asarray(system_names, dtype=object)[system_of[final]], dtype="str"),
                "matching": pd.array(np.asarray(matching, dtype=object)[matching_of[final]], dtype="str"),
                **{c: np.concatenate(parts[c])[final] for c in COUNT_COLUMNS},
            }
        )
    for column in COUNT_COLUMNS:
        table[column] = table[column].astype("int64")
    table["in_scope"] = (table["n_system"] + table["n_gt"]) > 0
    table["precision"] = _ratio(table["tp_system"].to_numpy(float), table["n_system"].to_numpy(float))
    table["recall"] = _ratio(table["tp_gt"].to_numpy(float), table["n_gt"].to_numpy(float))
    table["f1"] = _f1(table["precision"].to_numpy(), table["recall"].to_numpy())
    return table


def scores_from_counts(counts: pd.DataFrame, *, averaging: Sequence[str] = AVERAGINGS) -> pd.DataFrame:
    """Micro / macro scores from :func:`document_counts` (see :func:`preannotation_scores`).

    Examples:
        Two documents' strict counts: ``1 / 2`` and ``1 / 1`` of the system's annotations right (micro ``2 / 3``,
        macro ``(0.5 + 1) / 2``), all of GT's found.

        >>> import pandas as pd
        >>> from posthoc.metrics.preannotation import scores_from_counts
        >>> counts = pd.DataFrame({"dataset": "d", "doc_id": ["1", "2"], "system": "A", "matching": "strict",
        ...                        "tp_system": [1, 1], "n_system": [2, 1], "tp_gt": [1, 1], "n_gt": [1, 1],
        ...                        "in_scope": True, "precision": [0.5, 1.0], "recall": [1.0, 1.0],
        ...                        "f1": [2 / 3, 1.0]})
        >>> scores_from_counts(counts)[["averaging", "precision", "recall"]].round(6)
          averaging  precision  recall
        0     macro   0.750000     1.0
        1     micro   0.666667     1.0
    """
    unknown = sorted(set(averaging) - set(AVERAGINGS))
    if unknown:
        raise PosthocInputError(f"preannotation: unknown averaging {unknown}; use one of {', '.join(AVERAGINGS)}")
    keys = ["dataset", "system", "matching"]
    out = []
    grouped = counts.groupby(keys, sort=True)
    sums = grouped[list(COUNT_COLUMNS)].sum()
    n_documents = grouped["in_scope"].sum()
    if "micro" in averaging:
        micro = sums.copy()
        micro["precision"] = _ratio(sums["tp_system"].to_numpy(float), sums["n_system"].to_numpy(float))
        micro["recall"] = _ratio(sums["tp_gt"].to_numpy(float), sums["n_gt"].to_numpy(float))
        micro["f1"] = _f1(micro["precision"].to_numpy(), micro["recall"].to_numpy())
        micro["averaging"] = "micro"
        micro["n_documents"] = n_documents
        out.append(micro.reset_index())
    if "macro" in averaging:
        scoped = counts.loc[counts["in_scope"]]
        macro = scoped.groupby(keys, sort=True)[["precision", "recall", "f1"]].mean()
        macro = sums.join(macro)
        macro["averaging"] = "macro"
        macro["n_documents"] = n_documents
        out.append(macro.reset_index())
    columns = [*keys, "averaging", "precision", "recall", "f1", "n_documents", *COUNT_COLUMNS]
    if not out:
        return pd.DataFrame(columns=columns)
    table = pd.concat(out, ignore_index=True)[columns]
    table["n_documents"] = table["n_documents"].astype("int64")
    return table.sort_values([*keys, "averaging"], kind="stable").reset_index(drop=True)


def preannotation_scores(
    mentions: Mentions,
    *,
    gt_system: str = GT_SYSTEM,
    matching: Sequence[str] | None = None,
    averaging: Sequence[str] = AVERAGINGS,
) -> pd.DataFrame:
    """Pre-annotation precision / recall / F1 of every system against GT (seed 000 section 3.1, Figure 3 left).

    ``mentions``: the mentions table (:data:`posthoc.tables.MENTION_COLUMNS`; reads ``dataset,
    doc_id, system, start, end, link``), GT under ``gt_system``. Returns ``dataset, system,
    matching, averaging, precision, recall, f1, n_documents, tp_system, n_system, tp_gt, n_gt``
    (``n_documents`` = documents in scope; counts summed over the dataset). See the module
    docstring for the matching and averaging rules.

    Examples:
        Document 1 as in :func:`document_counts`' example, and document 2 where GT has ``Lyon`` and A nothing.
        Strict micro: precision ``1/2``, recall ``1/3``, F1 ``2 (1/2)(1/3) / (1/2 + 1/3) = 0.4``; strict macro:
        the mean of document 1's ``0.5`` and document 2's ``0`` (GT annotations, no system annotation).

        >>> import pandas as pd
        >>> from posthoc.metrics import preannotation_scores
        >>> mentions = pd.DataFrame(
        ...     [("d", "1", "GT", 0, 5, "Paris"), ("d", "1", "GT", 9, 14, "Seine"), ("d", "2", "GT", 0, 4, "Lyon"),
        ...      ("d", "1", "A", 0, 5, "Paris"), ("d", "1", "A", 10, 14, "Seine")],
        ...     columns=["dataset", "doc_id", "system", "start", "end", "link"])
        >>> scores = preannotation_scores(mentions, matching=["strict"])
        >>> scores[["averaging", "precision", "recall", "f1", "n_documents", "tp_gt", "n_gt"]]
          averaging  precision    recall    f1  n_documents  tp_gt  n_gt
        0     macro       0.25  0.250000  0.25            2      1     3
        1     micro       0.50  0.333333  0.40            2      1     3
    """
    return scores_from_counts(document_counts(mentions, gt_system=gt_system, matching=matching), averaging=averaging)
