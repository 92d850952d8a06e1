"""The edited links as a corrected gold standard, returned as a mentions table (seed 000 section 4).

The paper notes that "the available dataset has an enumeration of corrected linkages, but we do not
consider them further"; here they become a corrected ground truth. Starting from the original GT
annotations of the mentions table, each GT annotation gets the outcome of its judgements:

- the plurality outcome of its judges (k = 1: the one judgement); a tie is resolved towards
  keeping the annotation as it was, in the order verify, edit, remove;
- ``verify`` -> kept (``source = "verified"``); never judged -> kept (``"unjudged"``);
- ``edit`` -> kept with the most common ``new_link`` of its edit judgements (ties: the smallest
  string), normalised by :func:`posthoc.links.normalise_link` (``link_original`` keeps what the
  annotator gave, ``is_nil`` is recomputed; ``"edited"``); an edit with no new link keeps the
  old link (``"edited_no_link"``);
- ``remove`` -> dropped.

With ``add_missing`` (default), the annotations of the verification union that overlap no GT
mention at all (outcome E of Figure 6: verified but missing from GT) are added with
``source = "added_verified"``. Union annotations that overlap a GT mention (B, C, D) are not
added: they compete with a GT annotation, a decision for a curator.

The result has the mentions columns (:data:`posthoc.tables.MENTION_COLUMNS`, ``system`` = the GT
name) plus ``source``; writing it as JSONL / NIF is the writers' job.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import pandas as pd
from pandas.api.extensions import ExtensionArray

from posthoc.arrays import Ints, Objects
from posthoc.metrics.codes import column_codes, factorize, lookup, shared_codes, take_strings
from posthoc.metrics.inputs import SYSTEM_ANNOTATION, judged_rows, mention_rows
from posthoc.metrics.union import classify_against_gt
from posthoc.metrics.verification import union_from_verdicts, verdicts_of
from posthoc.tables import GT_SYSTEM, MENTION_COLUMNS, Judgements, Mentions

GOLD_COLUMNS: Final = [*MENTION_COLUMNS, "source"]
#: Where a GT annotation of the corrected gold comes from (the union's additions are ``added_verified``).
SOURCES: Final = ("unjudged", "verified", "edited", "edited_no_link")


def _normalise(link: str) -> tuple[str, bool]:
    try:
        from posthoc.links import normalise_link
    except ImportError:  # pragma: no cover - links.py is part of the project
        return link, link.startswith("nil:")
    normalised = normalise_link(link)
    return normalised.link, bool(normalised.is_nil)


def _new_links(rows: pd.DataFrame, codes: Ints) -> pd.Series:
    """The most common non-empty ``new_link`` of each annotation's edit judgements (ties: smallest)."""
    if "new_link" not in rows.columns:
        return pd.Series(dtype="str")
    edited = np.flatnonzero(((rows["outcome"] == "edit") & rows["new_link"].notna()).to_numpy())
    links = rows["new_link"].iloc[edited].astype(str)
    given = (links.str.strip() != "").to_numpy()
    if not given.any():
        return pd.Series(dtype="str")
    links, edit_codes = links[given], codes[edited[given]]
    link, names = factorize(links, sort=True)  # a smaller string has a smaller code
    cells, n = np.unique(edit_codes * len(names) + link, return_counts=True)  # (annotation, new link) counts
    cell_code, cell_link = cells // len(names), cells % len(names)
    order = np.lexsort((cell_link, -n, cell_code))  # per annotation: most common first, ties by the string
    best = order[np.r_[True, cell_code[order][1:] != cell_code[order][:-1]]]
    return pd.Series(take_strings(names, cell_link[best]), index=pd.Index(cell_code[best], name="code"),
                     name="new_link")


def corrected_gold(
    judgements: Judgements,
    mentions: Mentions,
    *,
    gt_system: str = GT_SYSTEM,
    add_missing: bool = True,
    ties_verified: bool = False,
) -> pd.DataFrame:
    """GT with the judgements' edits applied and removals dropped (see the module docstring).

    ``judgements``: the judgements table (reads ``dataset, doc_id, system, start, end, link,
    worker, outcome, new_link, surface``; control rows ignored; drop failing workers first);
    ``mentions``: the mentions table with GT under ``gt_system``. Returns ``dataset, doc_id,
    system, start, end, surface, link, link_original, is_nil, source``.

    Examples:
        GT's ``Paris`` verified, ``Seine`` edited to ``Seine_(river)`` (normalised to its Wikipedia URL), ``Lyon``
        removed, ``Nice`` never judged; system A's verified ``Metz`` overlaps no GT mention (outcome E), so it is
        added.

        >>> import pandas as pd
        >>> from posthoc.metrics import corrected_gold
        >>> judgements = pd.DataFrame(
        ...     [("d", "1", "GT", 0, 5, "Paris", "w1", "verify", None),
        ...      ("d", "1", "GT", 10, 15, "Seine", "w1", "edit", "Seine_(river)"),
        ...      ("d", "1", "GT", 20, 24, "Lyon", "w1", "remove", None),
        ...      ("d", "1", "A", 40, 44, "Metz", "w1", "verify", None)],
        ...     columns=["dataset", "doc_id", "system", "start", "end", "link", "worker", "outcome", "new_link"])
        >>> mentions = pd.DataFrame(
        ...     [("d", "1", "GT", 0, 5, "Paris"), ("d", "1", "GT", 10, 15, "Seine"), ("d", "1", "GT", 20, 24, "Lyon"),
        ...      ("d", "1", "GT", 30, 34, "Nice"), ("d", "1", "A", 40, 44, "Metz")],
        ...     columns=["dataset", "doc_id", "system", "start", "end", "link"])
        >>> gold = corrected_gold(judgements, mentions)
        >>> gold[["system", "start", "end", "link_original", "source"]]
          system  start  end  link_original          source
        0     GT      0    5          Paris        verified
        1     GT     10   15  Seine_(river)          edited
        2     GT     30   34           Nice        unjudged
        3     GT     40   44           Metz  added_verified
        >>> gold.loc[1, "link"]
        'https://en.wikipedia.org/wiki/Seine_(river)'
    """
    rows = judged_rows(judgements)
    verdicts, codes = verdicts_of(rows, ties_verified=ties_verified)
    source = mention_rows(mentions)
    original_gt = source.loc[source["system"] == gt_system]
    missing = None
    if add_missing:
        union = union_from_verdicts(verdicts)
        missing = union.loc[classify_against_gt(union, original_gt) == "E"]
    return gold_from(rows, verdicts, codes, original_gt, missing, gt_system=gt_system)


def gold_from(
    rows: Judgements,
    verdicts: pd.DataFrame,
    codes: Ints,
    original_gt: Mentions,
    missing: pd.DataFrame | None,
    *,
    gt_system: str = GT_SYSTEM,
) -> pd.DataFrame:
    """:func:`corrected_gold` from validated rows, their verdicts, the GT rows and the union's E rows to add.

    Examples:
        GT ``Paris`` verified stays (``verified``), ``Seine`` removed goes, ``Lyon`` unjudged stays (``unjudged``);
        nothing missing is added.

        >>> import pandas as pd
        >>> from posthoc.metrics.gold import gold_from
        >>> from posthoc.metrics.inputs import judged_rows
        >>> from posthoc.metrics.verification import verdicts_of
        >>> columns = ["dataset", "doc_id", "system", "start", "end", "link"]
        >>> rows = judged_rows(pd.DataFrame([("d", "1", "GT", 0, 5, "Paris", "w1", "verify"),
        ...     ("d", "1", "GT", 10, 15, "Seine", "w1", "remove")], columns=[*columns, "worker", "outcome"]))
        >>> gt = pd.DataFrame([("d", "1", "GT", 0, 5, "Paris"), ("d", "1", "GT", 10, 15, "Seine"),
        ...     ("d", "1", "GT", 20, 24, "Lyon")], columns=columns)
        >>> verdicts, codes = verdicts_of(rows)
        >>> gold_from(rows, verdicts, codes, gt, None)[["link", "source"]]
            link    source
        0  Paris  verified
        1   Lyon  unjudged
    """
    gt = original_gt.copy()
    for column, default in (("surface", ""), ("link_original", None), ("is_nil", None)):
        if column not in gt.columns:
            gt[column] = default
    gt["link_original"] = gt["link_original"].where(gt["link_original"].notna(), gt["link"])
    gt["is_nil"] = gt["is_nil"].where(gt["is_nil"].notna(), gt["link"].str.startswith("nil:")).astype(bool)

    of_gt = np.flatnonzero((verdicts["system"] == gt_system).to_numpy())
    counts = verdicts[["n_verify", "n_edit", "n_remove"]].to_numpy()[of_gt]
    plurality = np.array(["verify", "edit", "remove"])[np.argmax(counts, axis=1)]  # argmax: first wins a tie
    new_links = _new_links(rows, codes).reindex(of_gt).to_numpy()
    gt_code, decided_code = shared_codes([gt, verdicts], SYSTEM_ANNOTATION, rows=[None, of_gt])
    where = lookup(gt_code, decided_code)  # each GT annotation's verdict among of_gt, or -1
    judged = where >= 0
    decided = np.full(len(gt), None, dtype=object)
    decided[judged] = plurality[where[judged]]
    linked = np.full(len(gt), None, dtype=object)
    linked[judged] = new_links[where[judged]]
    kept = np.flatnonzero(decided != "remove")
    gt, decision, new_link = gt.iloc[kept].copy(), decided[kept], linked[kept]
    edited, has_link = decision == "edit", pd.notna(new_link)
    source = np.zeros(len(gt), dtype=np.int64)  # index into SOURCES: unjudged unless decided
    source[decision == "verify"] = 1
    source[edited] = 2
    source[edited & ~has_link] = 3
    gt["source"] = take_strings(SOURCES, source)
    fix = edited & has_link
    if fix.any():
        given = pd.Series(new_link[fix], index=gt.index[fix]).astype(str)
        normalised = {link: _normalise(link) for link in given.unique()}
        gt.loc[fix, "link_original"] = given
        gt.loc[fix, "link"] = given.map(lambda link: normalised[link][0])
        gt.loc[fix, "is_nil"] = given.map(lambda link: normalised[link][1])
    parts = [gt[GOLD_COLUMNS]]

    if missing is not None and len(missing):
        missing = missing.copy()
        missing["surface"] = _surfaces(rows, missing)
        missing["system"] = gt_system
        missing["link_original"] = missing["link"]
        missing["is_nil"] = missing["link"].str.startswith("nil:")
        missing["source"] = "added_verified"
        parts.append(missing[GOLD_COLUMNS])
    gold = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
    gold = gold.astype({"start": "int64", "end": "int64", "is_nil": "bool"})
    keys = [column_codes(gold[c], sort=True) for c in ("dataset", "doc_id", "start", "end", "link")]
    ordered: pd.DataFrame = gold.iloc[np.lexsort(keys[::-1])].reset_index(drop=True)  # lexsort is stable
    return ordered


def _surfaces(rows: pd.DataFrame, missing: pd.DataFrame) -> ExtensionArray | Objects:
    """The surface of each missing annotation's span: that of the first judgement row with it ("" if none)."""
    keys = ["dataset", "doc_id", "start", "end"]
    if "surface" not in rows.columns:
        return np.full(len(missing), "", dtype=object)
    row_code, missing_code = shared_codes([rows, missing], keys)
    n_codes = int(max(row_code.max(initial=-1), missing_code.max(initial=-1))) + 1
    first_rows = np.full(n_codes, len(rows), dtype=np.int64)
    np.minimum.at(first_rows, row_code, np.arange(len(rows), dtype=np.int64))  # each span's first row
    where = first_rows[missing_code]
    found = where < len(rows)
    surface = rows["surface"]
    if isinstance(surface.dtype, pd.StringDtype) and found.all():  # the str values as they are, by one take
        taken: ExtensionArray = surface.array.take(where)
        return taken
    out = np.full(len(missing), "", dtype=object)
    out[found] = rows["surface"].iloc[where[found]].astype(str).to_numpy(dtype=object)
    return out
