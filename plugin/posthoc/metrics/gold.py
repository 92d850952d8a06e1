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

from posthoc.metrics.inputs import SYSTEM_ANNOTATION, judged_rows, mention_rows
from posthoc.metrics.union import classify_against_gt
from posthoc.metrics.verification import union_from_verdicts, verdicts_of
from posthoc.tables import GT_SYSTEM, MENTION_COLUMNS

GOLD_COLUMNS: Final = [*MENTION_COLUMNS, "source"]


def _normalise(link: str) -> tuple[str, bool]:
    try:
        from posthoc.links import normalise_link
    except ImportError:  # pragma: no cover - links.py is part of the project
        return link, link.startswith("nil:")
    normalised = normalise_link(link)
    return normalised.link, bool(normalised.is_nil)


def _new_links(rows: pd.DataFrame, codes: np.ndarray) -> pd.Series:
    """The most common non-empty ``new_link`` of each annotation's edit judgements (ties: smallest)."""
    if "new_link" not in rows.columns:
        return pd.Series(dtype="str")
    edits = pd.DataFrame(
        {"code": codes, "new_link": rows["new_link"].to_numpy(), "outcome": rows["outcome"].to_numpy()}
    )
    edits = edits.loc[(edits["outcome"] == "edit") & edits["new_link"].notna()]
    edits = edits.loc[edits["new_link"].astype(str).str.strip() != ""]
    if edits.empty:
        return pd.Series(dtype="str")
    counted = edits.astype({"new_link": str}).value_counts(["code", "new_link"]).rename("n").reset_index()
    counted = counted.sort_values(["code", "n", "new_link"], ascending=[True, False, True])
    return counted.drop_duplicates("code").set_index("code")["new_link"]


def corrected_gold(
    judgements: pd.DataFrame,
    mentions: pd.DataFrame,
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
    rows: pd.DataFrame,
    verdicts: pd.DataFrame,
    codes: np.ndarray,
    original_gt: pd.DataFrame,
    missing: pd.DataFrame | None,
    *,
    gt_system: str = GT_SYSTEM,
) -> pd.DataFrame:
    """:func:`corrected_gold` from validated rows, their verdicts, the GT rows and the union's E rows to add."""
    gt = original_gt.copy()
    for column, default in (("surface", ""), ("link_original", None), ("is_nil", None)):
        if column not in gt.columns:
            gt[column] = default
    gt["link_original"] = gt["link_original"].where(gt["link_original"].notna(), gt["link"])
    gt["is_nil"] = gt["is_nil"].where(gt["is_nil"].notna(), gt["link"].str.startswith("nil:")).astype(bool)

    of_gt = np.flatnonzero((verdicts["system"] == gt_system).to_numpy())
    counts = verdicts[["n_verify", "n_edit", "n_remove"]].to_numpy()[of_gt]
    plurality = np.array(["verify", "edit", "remove"])[np.argmax(counts, axis=1)]  # argmax: first wins a tie
    decided = verdicts.iloc[of_gt][list(SYSTEM_ANNOTATION)].assign(decision=plurality)
    decided["new_link"] = _new_links(rows, codes).reindex(of_gt).to_numpy()
    gt = gt.merge(decided, on=list(SYSTEM_ANNOTATION), how="left")
    gt = gt.loc[gt["decision"] != "remove"].copy()
    gt["source"] = gt["decision"].map({"verify": "verified", "edit": "edited"}).fillna("unjudged")
    edited = (gt["decision"] == "edit").to_numpy()
    has_link = gt["new_link"].notna().to_numpy()
    gt.loc[edited & ~has_link, "source"] = "edited_no_link"
    fix = edited & has_link
    if fix.any():
        given = gt.loc[fix, "new_link"].astype(str)
        normalised = {link: _normalise(link) for link in given.unique()}
        gt.loc[fix, "link_original"] = given
        gt.loc[fix, "link"] = given.map(lambda link: normalised[link][0])
        gt.loc[fix, "is_nil"] = given.map(lambda link: normalised[link][1])
    parts = [gt[GOLD_COLUMNS]]

    if missing is not None and len(missing):
        missing = missing.copy()
        surfaces = _surfaces(rows)
        missing = missing.join(surfaces, on=["dataset", "doc_id", "start", "end"])
        missing["surface"] = missing["surface"].fillna("")
        missing["system"] = gt_system
        missing["link_original"] = missing["link"]
        missing["is_nil"] = missing["link"].str.startswith("nil:")
        missing["source"] = "added_verified"
        parts.append(missing[GOLD_COLUMNS])
    gold = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
    gold = gold.astype({"start": "int64", "end": "int64", "is_nil": "bool"})
    return gold.sort_values(["dataset", "doc_id", "start", "end", "link"], kind="stable").reset_index(drop=True)


def _surfaces(rows: pd.DataFrame) -> pd.Series:
    keys = ["dataset", "doc_id", "start", "end"]
    if "surface" not in rows.columns:
        return pd.Series(dtype="str", name="surface")
    return rows.drop_duplicates(keys).set_index(keys)["surface"].astype(str)
