"""The flags table: one row per suspected error or proposed annotation (paper 003, Sect. 3.4 / 4.3).

Columns (:data:`FLAG_COLUMNS`)
------------------------------
``flag_id``        stable id (sha1 of dataset, doc, system, rule, span, link, partner): the Label
                   Studio result id of the flag's region in the review loop;
``dataset, doc_id`` the document; ``start, end, surface, link`` the flagged annotation (code points;
                   for an ``insert`` the proposed one); ``rule`` one of :data:`RULES` (each rule
                   class's ``flag_rules``, in the rules' ``order``: :mod:`posthoc.eaglet.rules`);
``suggestion``     one of :data:`SUGGESTIONS`: ``delete`` the annotation, ``check`` it by hand,
                   ``insert`` the proposed annotation, ``update-uri`` to ``partner_link``,
                   ``update-span`` to ``[partner_start, partner_end)`` keeping its link;
``partner_start, partner_end, partner_link`` the other annotation of a pair (overlapping, combined
                   marking), the new URI (outdated URI) or the new span (``update-span``); -1 / ""
                   when there is none;
``detail``         a human-readable reason; ``system`` the system whose annotations were checked.
"""

from __future__ import annotations

import os
from dataclasses import asdict
from pathlib import Path
from typing import Final

import pandas as pd

from posthoc.eaglet.rules import FLAG_RULES
from posthoc.eaglet.rules.base import Flag
from posthoc.errors import PosthocInputError
from posthoc.tables import require_columns

RULES: Final = FLAG_RULES  # every registered rule's flag names, in the rules' order (posthoc.eaglet.rules)
SUGGESTIONS: Final = ("delete", "check", "insert", "update-uri", "update-span")
FLAG_COLUMNS: Final = (
    "flag_id",
    "dataset",
    "doc_id",
    "start",
    "end",
    "surface",
    "link",
    "rule",
    "suggestion",
    "partner_start",
    "partner_end",
    "partner_link",
    "detail",
    "system",
)
_DTYPES: Final = {
    "flag_id": "string", "dataset": "string", "doc_id": "string", "start": "int64", "end": "int64",
    "surface": "string", "link": "string", "rule": "string", "suggestion": "string", "partner_start": "int64",
    "partner_end": "int64", "partner_link": "string", "detail": "string", "system": "string",
}


def flags_frame(flags: list[Flag]) -> pd.DataFrame:
    """The flags table of ``flags``, ordered by dataset, document, span and rule order."""
    rows = [{"flag_id": f.flag_id, **asdict(f)} for f in flags]
    frame = pd.DataFrame(rows, columns=list(FLAG_COLUMNS)).astype(_DTYPES)
    order = {name: i for i, name in enumerate(RULES)}
    frame["_rule_order"] = frame["rule"].map(order).fillna(len(RULES)).astype(int)
    frame = frame.sort_values(["dataset", "doc_id", "start", "end", "_rule_order", "flag_id"], kind="stable")
    return frame.drop(columns="_rule_order").drop_duplicates("flag_id").reset_index(drop=True)


def write_flags(flags: pd.DataFrame, path: str | os.PathLike[str], *, fmt: str = "csv") -> Path:
    """Write the flags table atomically as ``csv`` or ``parquet``; returns the path written."""
    from posthoc.writers import write_table  # the corpus writers load rdflib: only when writing

    path = Path(path)
    if fmt not in ("csv", "parquet"):
        raise PosthocInputError(f"unknown flags format {fmt!r}; give csv or parquet")
    write_table(flags, path, fmt=fmt)
    return path


def read_flags(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read a flags table written by :func:`write_flags` (CSV or Parquet, by extension)."""
    path = Path(path)
    if not path.is_file():
        raise PosthocInputError(f"{path}: no flags table here; run `posthoc flags check` first")
    try:
        frame = pd.read_parquet(path) if path.suffix == ".parquet" else pd.read_csv(
            path, dtype=str, keep_default_na=False)
    except (ValueError, OSError, pd.errors.ParserError) as exc:  # ValueError: not UTF-8, bad Parquet
        reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise PosthocInputError(f"{path}: not a readable flags table ({reason}); rerun `posthoc flags check`") \
            from None
    require_columns(frame, FLAG_COLUMNS, message=f"{path}: not a flags table, it lacks {{missing}}")
    try:
        return frame[list(FLAG_COLUMNS)].astype(_DTYPES)
    except (ValueError, TypeError) as exc:
        raise PosthocInputError(f"{path}: a value of the flags table has the wrong type ({exc}); rerun "
                                "`posthoc flags check`") from None
