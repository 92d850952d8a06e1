"""The sequence-effects section of a report: b1 per subset and tertile with intervals, a plot, Table 5."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd

from posthoc.report.html import Section, figure_html, paragraph, table_html
from posthoc.sequence.audit import OrderAudit
from posthoc.sequence.continuous import AfterPrevious


def coefficient_figure(by_subset: pd.DataFrame, by_tertile: pd.DataFrame) -> object:
    """b1 with its interval per subset (left) and per subset and position tertile (right)."""
    figure, (left, right) = plt.subplots(1, 2, figsize=(10, 3.6), sharey=True)
    for axis, frame, label in ((left, by_subset, "subset"), (right, by_tertile, "subset / tertile")):
        names = (frame["subset"] + ("" if "tertile" not in frame else " T" + frame["tertile"].astype(str))).tolist()
        x = range(len(frame))
        lower = (frame["b1"] - frame["b1_low"]).clip(lower=0).fillna(0)
        upper = (frame["b1_high"] - frame["b1"]).clip(lower=0).fillna(0)
        axis.errorbar(list(x), frame["b1"], yerr=[lower, upper], fmt="o", capsize=3, color="#0969da")
        axis.axhline(0, color="#57606a", linewidth=0.8)
        axis.set_xticks(list(x))
        axis.set_xticklabels(names, rotation=45, ha="right", fontsize=8)
        axis.set_xlabel(label)
    left.set_ylabel("lag-1 coefficient b1 (95% CI)")
    figure.tight_layout()
    return figure


def sequence_section(by_subset: pd.DataFrame, by_tertile: pd.DataFrame, *,
                     after: AfterPrevious | None = None, audit: OrderAudit | None = None,
                     caveat: str = "") -> Section:
    """A report section for seed 004's analyses; ``caveat`` states what is known of the presentation order."""
    columns = ["subset", "kind", "b1", "b1_low", "b1_high", "b1_p", "b2", "b3", "n", "n_workers", "note"]
    parts = [paragraph(
        "Lag-1 model Y(t) = b0 + b1 Y(t-1) + b2 gold + b3 worker bias (seed 004 section 2): logistic for binary "
        "labels, linear for continuous ones; 95% intervals from standard errors clustered by worker. b1 > 0 is "
        "assimilation, b1 < 0 contrast or the gambler's fallacy.")]
    if caveat:
        parts.append(paragraph(caveat, css_class="note"))
    if audit is not None:
        parts.append(paragraph(f"Order audit: {audit.message}.",
                               css_class="note" if audit.shared_order_warning else ""))
    parts.append(figure_html(coefficient_figure(by_subset, by_tertile),
                             caption="b1 per worker subset and per position tertile, with 95% intervals"))
    parts.append(table_html(by_subset[columns], caption="b1 per worker subset"))
    parts.append(table_html(by_tertile[["tertile", *columns]], caption="b1 per subset and position tertile"))
    if after is not None:
        parts.append(table_html(after.means, caption="Mean standardised score after low / middle / high items"))
        parts.append(paragraph(
            f"High minus low: {after.high_minus_low:.3f} (Welch t = {after.t_statistic:.2f}, "
            f"p = {after.p_value:.3g}); mean of all: {after.all_mean:.3f}."))
    return Section("Sequence effects", "".join(parts), anchor="sequence")
