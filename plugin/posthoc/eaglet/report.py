"""The report section of the Eaglet flags, in the form of the paper's Table 1 (paper 003, Sect. 5.1).

:func:`rule_shares` gives, per dataset, ``documents`` (|D|), ``annotations`` (|A|), and for each
error type the share of annotations it flags (LDE, PE, OE, CM, OU, DU, IU: the number of distinct
annotations with at least one flag of that type / |A|), while inconsistent marking (IM) and missing
entities, which *add* annotations, are absolute counts of proposals, as in the paper.
"""

from __future__ import annotations

from typing import Final

import pandas as pd

from posthoc.html import Section, paragraph, table_html

SHARE_RULES: Final = ("long_description", "positioning", "overlapping", "combined_marking", "outdated_uri",
                      "disambiguation_uri", "invalid_uri")
COUNT_RULES: Final = ("inconsistent_marking", "missing_entity")
ABBREVIATIONS: Final = {"long_description": "LDE", "positioning": "PE", "overlapping": "OE",
                        "combined_marking": "CM", "outdated_uri": "OU", "disambiguation_uri": "DU",
                        "invalid_uri": "IU", "inconsistent_marking": "IM", "missing_entity": "ME"}


def rule_shares(flags: pd.DataFrame, documents: pd.DataFrame, mentions: pd.DataFrame, *,
                system: str = "GT") -> pd.DataFrame:
    """One row per dataset (and ``all``): |D|, |A|, shares of annotations per rule, IM / ME counts."""
    checked = mentions[mentions["system"] == system]
    datasets = sorted(set(documents["dataset"].astype(str)))
    rows = []

    def pick(frame: pd.DataFrame, dataset: str) -> pd.DataFrame:
        return frame if dataset == "all" else frame[frame["dataset"].astype(str) == dataset]

    for dataset in [*datasets, "all"]:
        docs, annotations, dataset_flags = pick(documents, dataset), pick(checked, dataset), pick(flags, dataset)
        unique = annotations.drop_duplicates(["dataset", "doc_id", "start", "end", "link"])
        row: dict[str, object] = {"dataset": dataset, "documents": len(docs), "annotations": len(unique)}
        existing = dataset_flags[dataset_flags["suggestion"] != "insert"]
        for rule in SHARE_RULES:
            hit = existing[existing["rule"] == rule].drop_duplicates(["dataset", "doc_id", "start", "end", "link"])
            row[rule] = len(hit) / len(unique) if len(unique) else 0.0
        proposals = dataset_flags[dataset_flags["suggestion"] == "insert"]
        for rule in COUNT_RULES:
            row[rule] = int((proposals["rule"] == rule).sum())
        rows.append(row)
    return pd.DataFrame(rows)


def flags_section(flags: pd.DataFrame, documents: pd.DataFrame, mentions: pd.DataFrame, *, system: str = "GT",
                  max_rows: int = 200) -> Section:
    """A report section: the Table 1 analogue, then the first ``max_rows`` flags."""
    shares = rule_shares(flags, documents, mentions, system=system)
    shown = shares.copy()
    for rule in SHARE_RULES:
        shown[rule] = (100 * shown[rule]).map(lambda v: f"{v:.1f}%")
    shown = shown.rename(columns=ABBREVIATIONS)
    body = [
        paragraph(f"Eaglet's rules (paper 003) on the annotations of {system}. LDE, PE, OE, CM, OU, DU and IU are "
                  "shares of the annotations (|A|) flagged; IM (inconsistent marking) and ME (missing entities "
                  "proposed by a majority of the other systems) are absolute counts of proposed annotations, as in "
                  "the paper's Table 1."),
        table_html(shown, caption="Flags per rule as a share of annotations"),
        table_html(flags.drop(columns=["flag_id", "system"]), max_rows=max_rows, caption="Flags"),
    ]
    return Section("Gold-standard error flags (Eaglet)", "".join(body), anchor="eaglet-flags")
