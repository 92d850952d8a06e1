"""The sequence-effects section of a report: b1 per subset and tertile with intervals, a plot, Table 5 (paper 004)."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.figure import Figure

from posthoc.html import Section, figure_html, paragraph, table_html
from posthoc.sequence.audit import OrderAudit
from posthoc.sequence.continuous import AfterPrevious


def coefficient_figure(by_subset: pd.DataFrame, by_tertile: pd.DataFrame) -> Figure:
    """b1 with its interval per subset (left) and per subset and position tertile (right).

    Examples:
        Two subsets' fits, the same two as tertile 1's: two panels, a tick per fit named by its subset (and tertile).

        >>> import matplotlib.pyplot as plt
        >>> import pandas as pd
        >>> from posthoc.sequence.report import coefficient_figure
        >>> by_subset = pd.DataFrame({"subset": ["all", "good"], "b1": [0.3, -0.2], "b1_low": [0.1, -0.6],
        ...                           "b1_high": [0.5, 0.2], "note": ["", ""]})
        >>> figure = coefficient_figure(by_subset, by_subset.assign(tertile=[1, 1]))
        >>> left, right = figure.axes
        >>> left.get_ylabel(), [tick.get_text() for tick in right.get_xticklabels()]
        ('lag-1 coefficient b1 (95% CI)', ['all T1', 'good T1'])
        >>> plt.close(figure)
    """
    figure, (left, right) = plt.subplots(1, 2, figsize=(10, 3.6), sharey=True)
    for axis, shown, label in ((left, by_subset, "subset"), (right, by_tertile, "subset / tertile")):
        frame = shown_fits(shown).astype({c: float for c in ("b1", "b1_low", "b1_high") if c in shown})
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


NOT_ESTIMABLE_COLUMNS = ("b0", "b1", "b1_se", "b1_low", "b1_high", "b1_p", "b2", "b3")


def not_estimable(note: object) -> bool:
    """Whether a fit's note says its coefficients mean nothing (separation, no convergence).

    Examples:
        >>> from posthoc.sequence.report import not_estimable
        >>> not_estimable("quasi-separation: |coefficient| > 10"), not_estimable(None), not_estimable("no gold")
        (True, False, False)
    """
    text = str(note or "")
    return "separation" in text or "did not converge" in text


def shown_fits(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` as the report shows it: the coefficients and p-values of a fit that is not estimable
    (:func:`not_estimable`) blanked, so no run-away b1 (e.g. -243.8 with p = 0.037) is read as an effect; the
    note keeps the reason. The tables written as CSV / Parquet keep every number.

    Examples:
        >>> import pandas as pd
        >>> from posthoc.sequence.report import shown_fits
        >>> fits = pd.DataFrame({"subset": ["all", "good"], "b1": [0.31, -243.8], "note": ["", "separation"]})
        >>> shown_fits(fits)
          subset    b1                        note
        0    all  0.31
        1   good  None  not estimable: separation
    """
    if "note" not in frame or frame.empty:
        return frame
    mask = frame["note"].map(not_estimable)
    if not mask.any():
        return frame
    shown = frame.copy()
    for column in NOT_ESTIMABLE_COLUMNS:
        if column in shown:
            shown[column] = shown[column].astype(object).where(~mask, None)
    shown["note"] = shown["note"].where(~mask, "not estimable: " + shown["note"].astype(str))
    return shown


def separation_note(*frames: pd.DataFrame) -> str:
    """A sentence naming the fits whose notes report separation or non-convergence, or ``""``.

    Examples:
        >>> import pandas as pd
        >>> from posthoc.sequence.report import separation_note
        >>> by_tertile = pd.DataFrame({"subset": ["all", "bad"], "tertile": [1, 3], "note": ["", "did not converge"]})
        >>> separation_note(by_tertile)[:40]
        'Separation in bad tertile 3: a label is '
        >>> separation_note(pd.DataFrame({"subset": ["all"], "note": [""]}))
        ''
    """
    hits = []
    for frame in frames:
        for row in frame.itertuples(index=False):
            if not_estimable(getattr(row, "note", "")):
                where = str(row.subset) + (f" tertile {row.tertile}" if hasattr(row, "tertile") else "")
                hits.append(where)
    if not hits:
        return ""
    return (f"Separation in {', '.join(hits)}: a label is (almost) perfectly predicted there (for example every "
            "task of those workers had one outcome), so the logistic coefficients run away (|coefficient| > 10) "
            "or the fit did not converge; those rows are shown as 'not estimable', without coefficients.")


def sequence_section(by_subset: pd.DataFrame, by_tertile: pd.DataFrame, *,
                     after: AfterPrevious | None = None, audit: OrderAudit | None = None,
                     caveat: str = "", definitions: str = "",
                     extra_tables: Sequence[tuple[pd.DataFrame, str]] = (),
                     order_tests: pd.DataFrame | None = None) -> Section:
    """A report section for paper 004's analyses.

    ``caveat`` states what is known of the presentation order; ``definitions`` what the items, labels and worker
    subsets are for this data; ``extra_tables`` are more ``(b1 table, caption)`` pairs shown after the main ones;
    ``order_tests`` the study-level randomisation tests (one row a label, the columns of
    :class:`~posthoc.sequence.randomisation.OrderTest` after ``label``), shown before the figure.
    Separation or non-convergence in any fit is noted.

    Examples:
        A subset named ``<all>`` appears in the tables escaped, never as a tag.

        >>> import pandas as pd
        >>> from posthoc.sequence.report import sequence_section
        >>> by_subset = pd.DataFrame([("<all>", "logistic", 0.3, 0.1, 0.5, 0.01, 0.0, 0.0, 40, 4, "")],
        ...     columns=["subset", "kind", "b1", "b1_low", "b1_high", "b1_p", "b2", "b3", "n", "n_workers", "note"])
        >>> section = sequence_section(by_subset, by_subset.assign(tertile=[1]))
        >>> section.title, "&lt;all&gt;" in section.body_html, "<all>" in section.body_html
        ('Sequence effects', True, False)
    """
    columns = ["subset", "kind", "b1", "b1_low", "b1_high", "b1_p", "b2", "b3", "n", "n_workers", "note"]
    parts = [paragraph(
        "Lag-1 model Y(t) = b0 + b1 Y(t-1) + b2 gold + b3 worker bias (paper 004 section 2): logistic for binary "
        "labels, linear for continuous ones; the worker bias is the worker's mean label over their other items; "
        "95% intervals from the leave-one-worker-out jackknife (t with workers - 1 degrees of freedom). b1 > 0 is "
        "assimilation, b1 < 0 contrast or the gambler's fallacy.")]
    if definitions:
        parts.append(paragraph(definitions))
    if caveat:
        parts.append(paragraph(caveat, css_class="note"))
    separated = separation_note(by_subset, by_tertile, *(frame for frame, _ in extra_tables))
    if separated:
        parts.append(paragraph(separated, css_class="note"))
    if audit is not None:
        parts.append(paragraph(f"Order audit: {audit.message}.",
                               css_class="note" if audit.shared_order_warning else ""))
    if order_tests is not None and len(order_tests):
        parts.append(paragraph(
            "The study-level test of an order effect: a randomisation test (exact; issue 45). Each worker's tasks were "
            "served in their own random order, so without an order effect every reordering of a worker's sequence "
            "is as likely as the one served; the p-value is the share of random reorderings whose lag-1 score "
            "statistic (the sign of b1) is as extreme as the one observed. b1 and its interval below measure the "
            "effect."))
        parts.append(table_html(order_tests, caption="Study-level test of order effects (randomisation)",
                                float_format="{:.4g}"))
    parts.append(figure_html(coefficient_figure(by_subset, by_tertile),
                             caption="b1 per worker subset and per position tertile, with 95% intervals"))
    parts.append(table_html(shown_fits(by_subset)[columns], caption="b1 per worker subset"))
    parts.append(table_html(shown_fits(by_tertile)[["tertile", *columns]],
                            caption="b1 per subset and position tertile"))
    for frame, caption in extra_tables:
        parts.append(table_html(shown_fits(frame)[columns], caption=caption))
    if after is not None:
        parts.append(table_html(after.means, caption="Mean standardised score after low / middle / high items"))
        parts.append(paragraph(
            f"High minus low: {after.high_minus_low:.3f} (Welch t = {after.t_statistic:.2f}, "
            f"p = {after.p_value:.3g}); mean of all: {after.all_mean:.3f}."))
    return Section("Sequence effects", "".join(parts), anchor="sequence")
