"""The study report's "Stop now or go on" section: per cell, the half-width reached and what the rest of the plan
would bring (the table of :func:`posthoc.study.planner.progress_widths.cell_widths`, ``tables/cell_widths``).

Every value is escaped by :func:`posthoc.html.table_html`; no figure, no timestamp, so the same table gives the
same HTML.
"""

from __future__ import annotations

import math

import pandas as pd

from posthoc.html import Section, paragraph, table_html
from posthoc.report.explorer import NO_LINKS, CellLinks

ANCHOR = "stop-or-go-on"
TITLE = "Stop now or go on"


def _verdict(table: pd.DataFrame, target: float) -> str:
    now = int(table["met_now"].fillna(False).sum())
    end = int(table["met_end"].fillna(False).sum())
    return (f"Target ± {target:g}: {now} of {len(table)} cells meet it now, {end} would when the whole plan is "
            "judged; a cell marked 'extend' falls short even then (posthoc study estimate --target-halfwidth "
            "finds the documents it needs).")


def stop_or_go_on_section(table: pd.DataFrame, links: CellLinks = NO_LINKS) -> Section:
    """The section for a :data:`~posthoc.study.planner.progress_widths.WIDTH_COLUMNS` table (one row a cell and
    rate); a note instead of the table when the study has no cell yet; ``links``: each row's explorer cell."""
    if table.empty:
        return Section(TITLE, paragraph("No cell of the plan has judgements yet."), anchor=ANCHOR)
    intro = paragraph(
        "For each dataset x system cell, posthoc precision and recall: items planned and judged (by all k workers "
        "an item has, and by at least one; workers who failed their control task do not count), the rate so far, "
        "the half-width of its 95% bootstrap interval reached now (half the interval in the rates table above, "
        "paper 000 section 4) and the half-width expected when the whole plan is judged, predicted as posthoc "
        "study estimate --pilot does from the outcome rates observed so far (docs/study.md). A cell whose "
        "half-width already meets the target can stop; the expected half-width says whether the rest of the plan "
        "is worth judging, or not enough.")
    target = float(table["target"].iloc[0])
    verdict = paragraph(_verdict(table, target) if math.isfinite(target) else
                        "No target half-width was given (posthoc score --target-halfwidth W, or posthoc study "
                        "estimate --target-halfwidth W saved beside the manifest).")
    shown = table.drop(columns=["target"]) if not math.isfinite(target) else table
    if not math.isfinite(target):
        shown = shown.drop(columns=["met_now", "met_end", "advice"])
    body = intro + verdict + table_html(shown, float_format="{:.4f}",
                                        caption="Half-widths per cell: reached now and expected at the end of the plan",
                                        row_links=links.rows("cell_widths", shown))
    return Section(TITLE, body, anchor=ANCHOR)
