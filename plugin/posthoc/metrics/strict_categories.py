"""Error categories of the strict comparison, per annotation: ELEVANT's definitions (issue 45).

Each system other than the ground truth is compared with the ground truth (GT) of the datasets it
annotated, as the strict pre-annotation scores compare them (:mod:`posthoc.metrics.preannotation`, seed 000
section 3.1: same document, identical span, identical canonical link; duplicates count once). Every
annotation gets one row per comparison, on one of two sides:

``system``        a system's annotation: ``correct`` (GT has the same span and link), ``disambiguation_wrong``
                  (GT has the same span with another link) or ``false_positive``; the share of ``correct``
                  rows is the strict micro precision, exactly;
``ground_truth``  a GT annotation against one system: ``correct`` (the system has the same span and link),
                  ``disambiguation_wrong`` (the system has the span with another link) or ``false_negative``
                  (it has not, or only with NIL where GT has an entity: ELEVANT's "ent / unk", undetected);
                  the share of ``correct`` rows is the strict micro recall, exactly;

and each GT annotation once more, on its own (``system`` GT, ``side`` ground_truth, ``category`` gt_annotation):
the row its verdict is read into (:mod:`posthoc.metrics.verified_categories`).

The kinds follow ELEVANT (Bast et al., EMNLP 2022 demo; ``ad-freiburg/elevant``,
``src/elevant/evaluation/errors.py`` and ``case.py``), cited by function:

false_negative (``label_undetected_errors``, ``NER_FN_*``), the first that applies:
    ``lowercased``          the GT mention is not a named entity (``is_non_named_entity``: its first alphabetic
                            character is not upper-case, or it has none; so a mention in a script without case,
                            CJK for one, counts as lowercased, as in ELEVANT);
    ``partially_included``  a false-positive span of the system lies inside the GT span (``is_subspan``; a
                            false positive linked to NIL does not count: ELEVANT ignores unknown predictions);
    ``partial_overlap``     a false-positive span of the system overlaps it (``overlaps_any``);
    ``other``.
false_positive (``label_false_detections`` and ``label_span_errors``, ``NER_FP_*``), the first that applies;
    "overlap" is with a GT span of a known (non-NIL) entity, ELEVANT's relevant ground truth in its default mode:
    ``lowercased``            no overlap and the mention is not a named entity;
    ``ground_truth_unknown``  a named mention, and either GT has the identical span linked to NIL while the
                              system links it to an entity, or no overlap in a dataset whose GT has no NIL
                              (``contains_unknowns`` false: an unlabelled entity is then an unknown one);
    ``wrong_span``            overlaps a GT span (not identical) of the same entity (``NER_FP_WRONG_SPAN``,
                              which ELEVANT adds to its ``NER_FP_OTHER``);
    ``other``.
disambiguation_wrong (``label_disambiguation_errors``, ``DISAMBIGUATION_*_WRONG``), on both sides of the pair:
    ``demonym``, ``metonymy`` (``is_demonym``, ``is_metonymy_error``) and ``rare`` (``is_rare_case`` with the
    prediction the most popular candidate) need a knowledge base: with ``kb=None`` they cannot be told apart
    from ``other``, and such a row is ``not_classified``; ``partial_name`` (``is_partial_name``: the GT entity's
    name has a space and holds the shorter mention) needs only the name (the title of the canonical link without
    a parenthesised qualifier), so it is reported without a KB (ELEVANT tries demonym and metonymy first).
    ``redirect_only`` (not ELEVANT's; issue 42), before all of them: the rows carry the ``entity`` column of
    ``posthoc score --kb`` (:func:`posthoc.jobs.score.with_kb_entities`, a KB index of Wikipedia's dumps) and the
    system's link and GT's land on the same article (``Paris_(France)`` for ``Paris``): a disagreement strict
    matching counts and strict_kb does not.

Differences from ELEVANT, all because the strict scores are what these categories refine: spans are not
widened to word boundaries (ELEVANT's ``word_boundary``), there are no optional, coreference, quantity or date
labels, and a mention the system links to NIL is categorised like any other annotation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np
import pandas as pd

from posthoc.arrays import Bools, Ints
from posthoc.links import NIL_PREFIX
from posthoc.metrics.codes import factorize
from posthoc.metrics.disambiguation_kinds import (
    DISAMBIGUATION_KINDS,
    REDIRECT_ONLY,
    CategoryKB,
    disambiguation_kinds,
    non_named,
)
from posthoc.metrics.inputs import mention_rows
from posthoc.metrics.matching import SpanCodes, code_flags
from posthoc.metrics.preannotation import ENTITY_COLUMN
from posthoc.metrics.tuple_codes import dense_codes
from posthoc.tables import GT_SYSTEM, Mentions, empty_table

SIDES: Final = ("system", "ground_truth")
CATEGORIES: Final = ("correct", "disambiguation_wrong", "false_positive", "false_negative", "gt_annotation")
FALSE_NEGATIVE_KINDS: Final = ("lowercased", "partially_included", "partial_overlap", "other")
FALSE_POSITIVE_KINDS: Final = ("lowercased", "ground_truth_unknown", "wrong_span", "other")
#: Every kind once ("" for ``correct``): the codes the kinds are computed in.
KINDS: Final = tuple(dict.fromkeys(("", *FALSE_NEGATIVE_KINDS, *FALSE_POSITIVE_KINDS, *DISAMBIGUATION_KINDS)))
_FN_CODES: Final = [KINDS.index(kind) for kind in FALSE_NEGATIVE_KINDS]
_FP_CODES: Final = [KINDS.index(kind) for kind in FALSE_POSITIVE_KINDS]
#: The columns of :func:`error_categories`, in order.
CATEGORY_COLUMNS: Final = ("dataset", "doc_id", "system", "side", "start", "end", "surface", "link", "is_nil",
                           "gt_link", "system_link", "category", "kind")


def _contains_any(group_l: Ints, start_l: Ints, end_l: Ints, group_r: Ints, start_r: Ints, end_r: Ints) -> Bools:
    """For each left span: does a right span of its group lie inside it (``start_l <= start_r``, ``end_r <=
    end_l``)? Right spans sorted by (group, start); the least end among those starting in ``[start_l, end_l)``
    (one ``minimum.reduceat``) decides."""
    found = np.zeros(len(group_l), dtype=bool)
    if len(group_l) == 0 or len(group_r) == 0:
        return found
    big = int(max(end_r.max(), end_l.max())) + 2
    keys = group_r * big + start_r
    order = np.argsort(keys, kind="stable")
    keys, ends = keys[order], np.append(end_r[order], np.iinfo(np.int64).max)
    low = np.searchsorted(keys, group_l * big + start_l, side="left")
    high = np.searchsorted(keys, group_l * big + end_l, side="left")
    some = low < high
    bounds = np.column_stack([low[some], high[some]]).ravel()
    found[some] = np.minimum.reduceat(ends, bounds)[::2] <= end_l[some]
    return found


def _first_of(codes: Ints, rows: Ints, size: int) -> Ints:
    """Per code below ``size``: the first of ``rows`` having it (-1 when none)."""
    first = np.full(size, -1, dtype=np.int64)
    first[codes[rows[::-1]]] = rows[::-1]  # the last assignment wins: the first row
    return first


def _dataset_unknowns(rows: pd.DataFrame, is_gt: Bools, nil: Bools, dataset: Ints, n_datasets: int,
                      contains_unknowns: bool | None) -> Bools:
    """Per dataset: does its ground truth hold NIL labels (ELEVANT's ``contains_unknowns``)?"""
    if contains_unknowns is not None:
        return np.full(n_datasets, contains_unknowns)
    return np.bincount(dataset[is_gt & nil], minlength=n_datasets) > 0


def error_categories(mentions: Mentions, *, gt_system: str = GT_SYSTEM, contains_unknowns: bool | None = None,
                     kb: CategoryKB | None = None) -> pd.DataFrame:
    """Every annotation's strict error category and kind (module docstring; ELEVANT's definitions), one row a
    comparison.

    ``mentions``: the mentions table (:data:`posthoc.tables.MENTION_COLUMNS`; reads ``dataset, doc_id, system,
    start, end, surface, link`` and ``is_nil`` when present; an empty or missing ``surface`` is not lowercased;
    NIL is ``is_nil`` or a ``nil:`` link), GT under
    ``gt_system``. ``contains_unknowns``: ELEVANT's benchmark setting, default per dataset (does its GT hold a NIL
    label?). ``kb``: a :class:`CategoryKB` for the demonym, metonymy and rare kinds, keyword only; None leaves
    those ``not_classified``. Returns :data:`CATEGORY_COLUMNS`: ``system`` the compared system (also on the
    ``ground_truth`` side), ``side`` one of :data:`SIDES`, ``link`` the row's own annotation's, ``is_nil`` its NIL
    flag, ``gt_link`` / ``system_link`` the GT's and the system's link at the identical span ("" when none),
    ``category`` one of :data:`CATEGORIES`, ``kind`` "" for ``correct``, else one of the category's kinds.
    Sorted by dataset, document, system, side (``ground_truth`` first) and span. The text columns are
    pandas categoricals (a few thousand distinct values over hundreds of thousands of rows: one take of integer
    codes instead of a copy of every string; CSV and Parquet files hold the values).

    Examples:
        GT links ``Barack Obama`` at [0, 12) and ``paris`` (lower-case, [17, 22)); system A links ``Obama`` [6, 12)
        to the same entity and ``Paris`` to another one (the table's rows of system GT are GT's own annotations).

        >>> import pandas as pd
        >>> wiki = "https://en.wikipedia.org/wiki/"
        >>> mentions = pd.DataFrame(
        ...     [("d", "1", "GT", 0, 12, "Barack Obama", wiki + "Barack_Obama"), ("d", "1", "GT", 17, 22, "paris",
        ...      wiki + "Paris"), ("d", "1", "A", 6, 12, "Obama", wiki + "Barack_Obama"),
        ...      ("d", "1", "A", 17, 22, "paris", wiki + "Paris_Hilton")],
        ...     columns=["dataset", "doc_id", "system", "start", "end", "surface", "link"])
        >>> table = error_categories(mentions)
        >>> table.loc[table["system"] == "A", ["side", "start", "end", "category", "kind"]]
                   side  start  end              category                kind
        0  ground_truth      0   12        false_negative  partially_included
        1  ground_truth     17   22  disambiguation_wrong      not_classified
        2        system      6   12        false_positive          wrong_span
        3        system     17   22  disambiguation_wrong      not_classified
    """
    return categories_of_rows(mention_rows(mentions), gt_system=gt_system, contains_unknowns=contains_unknowns,
                              kb=kb)


def empty_categories() -> pd.DataFrame:
    """The table of :func:`error_categories` of no mentions: its columns, no row.

    Examples:
        >>> empty_categories().shape
        (0, 13)
    """
    return empty_table({column: "int64" if column in ("start", "end") else "bool" if column == "is_nil" else "str"
                        for column in CATEGORY_COLUMNS})


def categories_of_rows(rows: Mentions, *, gt_system: str = GT_SYSTEM, contains_unknowns: bool | None = None,
                       kb: CategoryKB | None = None) -> pd.DataFrame:
    """:func:`error_categories` of an already validated mentions table (``mention_rows``).

    Examples:
        A system's only annotation on a document GT left empty, in a dataset whose GT has no NIL: ELEVANT's
        "ground truth unknown" (an unlabelled entity); lower-case, it is "lowercased" (row 1, left out: GT's own
        ``Nice``).

        >>> import pandas as pd
        >>> from posthoc.metrics.inputs import mention_rows
        >>> rows = mention_rows(pd.DataFrame(
        ...     [("d", "1", "GT", 0, 4, "Nice", "Nice"), ("d", "2", "A", 0, 5, "Lyon!", "Lyon"),
        ...      ("d", "2", "A", 6, 10, "city", "City")],
        ...     columns=["dataset", "doc_id", "system", "start", "end", "surface", "link"]))
        >>> categories_of_rows(rows)[["doc_id", "system", "side", "category", "kind"]].drop(index=1)
          doc_id system          side        category                  kind
        0      1      A  ground_truth  false_negative                 other
        2      2      A        system  false_positive  ground_truth_unknown
        3      2      A        system  false_positive            lowercased
    """
    if len(rows) == 0:
        return empty_categories()
    return category_table(_with_surface(rows), category_arrays(rows, gt_system=gt_system,
                                                               contains_unknowns=contains_unknowns, kb=kb))


def _with_surface(rows: Mentions) -> Mentions:
    """``rows`` with an empty ``surface`` when it has none (no text: no mention is known to be lower-case)."""
    if "surface" in rows.columns:
        return rows
    return rows.assign(surface=pd.Series([""] * len(rows), index=rows.index, dtype="str"))


@dataclass(frozen=True)
class CategoryArrays:
    """The rows of the categories table as integer arrays, in the table's order.

    ``index``: the mentions row of the row's own annotation; ``system``: code in ``system_names``; ``side``,
    ``category``, ``kind``: codes in :data:`SIDES`, :data:`CATEGORIES`, :data:`KINDS`; ``gt_link``,
    ``system_link``: codes in ``links`` (the sorted links of the mentions, then "").
    """

    index: Ints
    system: Ints
    side: Ints
    category: Ints
    kind: Ints
    gt_link: Ints
    system_link: Ints
    system_names: pd.Index
    links: list[str]


def category_arrays(rows: Mentions, *, gt_system: str = GT_SYSTEM, contains_unknowns: bool | None = None,
                    kb: CategoryKB | None = None) -> CategoryArrays:
    """The categories of a validated, non-empty mentions table as :class:`CategoryArrays` (:func:`error_categories`).

    Examples:
        GT's ``Paris`` and system A's: one correct row a side, and GT's own row.

        >>> import pandas as pd
        >>> from posthoc.metrics.inputs import mention_rows
        >>> rows = mention_rows(pd.DataFrame([("d", "1", "GT", 0, 5, "Paris", "Paris"), ("d", "1", "A", 0, 5, "Paris",
        ...     "Paris")], columns=["dataset", "doc_id", "system", "start", "end", "surface", "link"]))
        >>> found = category_arrays(rows)
        >>> found.index.tolist(), found.side.tolist(), [CATEGORIES[c] for c in found.category]
        ([0, 1, 0], [1, 0, 1], ['correct', 'correct', 'gt_annotation'])
    """
    rows = _with_surface(rows)
    dataset, _ = factorize(rows["dataset"], sort=True)
    n_datasets = int(dataset.max()) + 1
    doc = dense_codes(dataset, factorize(rows["doc_id"], sort=True)[0])[0]
    start, end = rows["start"].to_numpy(np.int64), rows["end"].to_numpy(np.int64)
    link_code, link_names = factorize(rows["link"], sort=True)
    codes = SpanCodes.of(doc, start, end, link_code)
    system, system_names = factorize(rows["system"], sort=True)
    nil = nil_flags(rows)
    surface_code, surface_names = factorize(rows["surface"])  # a missing surface: code -1, the "" appended
    surfaces = [*surface_names.tolist(), ""]
    lower = np.fromiter((non_named(str(s)) and s != "" for s in surfaces), dtype=bool, count=len(surfaces))[
        surface_code]
    is_gt = np.asarray(system_names == gt_system)[system]
    unknowns = _dataset_unknowns(rows, is_gt, nil, dataset, n_datasets, contains_unknowns)
    n_span = int(codes.span.max()) + 1
    gt_rows = np.flatnonzero(is_gt)
    parts: list[tuple[Ints, int, int, Ints, Ints, Ints, Ints]] = []
    for code, name in enumerate(system_names):
        if name == gt_system:
            continue
        own = np.flatnonzero(system == code)
        present = np.bincount(dataset[own], minlength=n_datasets) > 0
        gt_here = gt_rows[present[dataset[gt_rows]]]
        known_gt = gt_here[~nil[gt_here]]
        first_gt = _first_of(codes.span, np.concatenate([known_gt, gt_here[nil[gt_here]]]), n_span)
        first_own = _first_of(codes.span, own, n_span)
        # the system's side
        flags = code_flags(codes, own, gt_here, flags=["same_span_same_link", "same_span"])
        near = code_flags(codes, own, known_gt, flags=["same_span", "overlap", "overlap_same_link"])
        correct = flags["same_span_same_link"]
        gt_unknown = flags["same_span"] & ~near["same_span"] & ~nil[own]  # GT says NIL, the system an entity
        wrong = flags["same_span"] & ~correct & ~gt_unknown
        low, overlap = lower[own], near["overlap"]
        fp_kind = np.select(
            [~overlap & low, ~low & ((~overlap & ~unknowns[dataset[own]]) | gt_unknown), near["overlap_same_link"]],
            _FP_CODES[:3], _FP_CODES[3])
        category = np.select([correct, wrong], [0, 1], 2)
        kind = np.where(correct | wrong, 0, fp_kind)
        partner = np.where(correct, own, first_gt[codes.span[own]])
        parts.append((own, code, 0, category, kind, partner, own))
        # the ground truth's side
        found = code_flags(codes, gt_here, own, flags=["same_span_same_link", "same_span"])
        linked = code_flags(codes, gt_here, own[~nil[own]], flags=["same_span"])["same_span"]
        # a known GT entity the system only called NIL at that span is undetected (ELEVANT: "ent / unk" is NER FN)
        missed = np.flatnonzero(~found["same_span_same_link"] & (~found["same_span"] | (~nil[gt_here] & ~linked)))
        fp_rows, fn_rows = own[(category == 2) & ~nil[own]], gt_here[missed]  # ELEVANT: a NIL prediction is no FP
        over = code_flags(codes, fn_rows, fp_rows, flags=["overlap"])["overlap"]
        inside = _contains_any(doc[fn_rows], start[fn_rows], end[fn_rows], doc[fp_rows], start[fp_rows], end[fp_rows])
        gt_kind = np.zeros(len(gt_here), dtype=np.int64)
        gt_kind[missed] = np.select([lower[fn_rows], inside, over], _FN_CODES[:3], _FN_CODES[3])
        gt_category = np.full(len(gt_here), 1)
        gt_category[found["same_span_same_link"]] = 0
        gt_category[missed] = 3
        system_partner = np.where(found["same_span_same_link"], gt_here, first_own[codes.span[gt_here]])
        parts.append((gt_here, code, 1, gt_category, gt_kind, gt_here, system_partner))
    parts.append((gt_rows, int(np.flatnonzero(np.asarray(system_names == gt_system))[0]) if len(gt_rows) else 0, 1,
                  np.full(len(gt_rows), 4), np.zeros(len(gt_rows), dtype=np.int64), gt_rows, np.full(len(gt_rows), -1)))
    return _arrays(rows, parts, system_names, (link_code, link_names), doc, kb=kb)


def _arrays(rows: Mentions, parts: list[tuple[Ints, int, int, Ints, Ints, Ints, Ints]], system_names: pd.Index,
            links: tuple[Ints, pd.Index], doc: Ints, *, kb: CategoryKB | None) -> CategoryArrays:
    """:class:`CategoryArrays` from each comparison's rows, categories, kind codes and partners (``links``: the
    rows' sorted link codes and names; ``doc``: their document codes, sorted by dataset and doc_id)."""
    index = np.concatenate([part[0] for part in parts])
    system = np.concatenate([np.full(len(part[0]), part[1]) for part in parts])
    side = np.concatenate([np.full(len(part[0]), part[2]) for part in parts])
    category = np.concatenate([part[3] for part in parts])
    kind = np.concatenate([part[4] for part in parts])
    link_code, link_names = links
    with_empty = np.append(link_code, len(link_names))  # partner -1: the "" after the names
    names = [*link_names.tolist(), ""]
    gt_row, system_row = np.concatenate([part[5] for part in parts]), np.concatenate([part[6] for part in parts])
    gt_link, system_link = with_empty[gt_row], with_empty[system_row]
    wrong = np.flatnonzero(category == 1)
    if len(wrong):
        name_array = np.asarray(names, dtype=object)
        found = disambiguation_kinds(rows["surface"].take(index[wrong]).to_numpy(object), name_array[gt_link[wrong]],
                                     name_array[system_link[wrong]], kb=kb)
        if ENTITY_COLUMN in rows.columns:  # posthoc score --kb: both links land on one article
            entity = rows[ENTITY_COLUMN].to_numpy(object)
            gt_entity, system_entity = entity[gt_row[wrong]], entity[system_row[wrong]]
            same = pd.notna(gt_entity) & (gt_entity == system_entity)
            found = np.where(same, REDIRECT_ONLY, found)
        kind[wrong] = pd.Index(KINDS).get_indexer(pd.Index(found))
    start, end = rows["start"].to_numpy(np.int64), rows["end"].to_numpy(np.int64)
    group = (doc[index] * len(system_names) + system) * 2 + (1 - side)
    width = int(end.max()) + 1 if len(end) else 1
    if int(group.max()) < np.iinfo(np.int64).max // (width * width):  # one int64 key: one sort, not four
        order = np.argsort((group * width + start[index]) * width + end[index], kind="stable")
    else:
        order = np.lexsort((end[index], start[index], group))
    return CategoryArrays(index[order], system[order], side[order], category[order], kind[order], gt_link[order],
                          system_link[order], system_names, names)


def category_table(rows: Mentions, found: CategoryArrays, extra: dict[str, object] | None = None) -> pd.DataFrame:
    """The table of :func:`error_categories` (:data:`CATEGORY_COLUMNS`) from its arrays, then ``extra`` columns.

    Examples:
        >>> import pandas as pd
        >>> from posthoc.metrics.inputs import mention_rows
        >>> rows = mention_rows(pd.DataFrame([("d", "1", "GT", 0, 5, "Paris", "Paris")],
        ...     columns=["dataset", "doc_id", "system", "start", "end", "surface", "link"]))
        >>> category_table(rows, category_arrays(rows), {"checked": [True]})[["system", "category", "checked"]]
          system       category  checked
        0     GT  gt_annotation     True
    """
    index, rows = found.index, _with_surface(rows)
    table = pd.DataFrame({
        "dataset": _categorical(rows["dataset"], index), "doc_id": _categorical(rows["doc_id"], index),
        "system": coded(found.system, found.system_names),
        "side": coded(found.side, SIDES), "start": rows["start"].to_numpy(np.int64)[index],
        "end": rows["end"].to_numpy(np.int64)[index], "surface": _categorical(rows["surface"], index),
        "link": _categorical(rows["link"], index), "is_nil": nil_flags(rows)[index],
        "gt_link": coded(found.gt_link, found.links),
        "system_link": coded(found.system_link, found.links),
        "category": coded(found.category, CATEGORIES),
        "kind": coded(found.kind, KINDS), **(extra or {}),
    })
    return table


def coded(codes: Ints, names: Sequence[str] | pd.Index) -> pd.Categorical:
    """A categorical of ``names[codes]`` (a code of -1 is missing), without one string a row.

    Examples:
        >>> coded(np.array([1, 0, 1]), ["a", "b"]).tolist()
        ['b', 'a', 'b']
    """
    categories: pd.Index = pd.Index(list(names), dtype=object)
    return pd.Categorical.from_codes(np.asarray(codes, dtype=np.int64), categories=categories)


def _categorical(column: pd.Series, index: Ints) -> pd.Categorical:
    """``column`` at ``index`` as a categorical of its sorted distinct values (one take of codes, no string
    copies)."""
    codes, names = factorize(column, sort=True)
    return coded(codes[index], names)


def nil_flags(rows: Mentions) -> Bools:
    """Per row of a mentions table: is its link NIL (``is_nil``, when the table has it, or a ``nil:`` link)?

    Examples:
        >>> import pandas as pd
        >>> nil_flags(pd.DataFrame({"link": ["nil:", "Paris", "X"], "is_nil": [False, False, True]})).tolist()
        [True, False, True]
    """
    nil = rows["link"].astype("str").str.startswith(NIL_PREFIX).to_numpy(dtype=bool, na_value=False)
    if "is_nil" in rows.columns:
        nil = nil | rows["is_nil"].fillna(False).to_numpy(bool)
    return np.asarray(nil, dtype=bool)
