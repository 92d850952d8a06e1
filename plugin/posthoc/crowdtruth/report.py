"""The CrowdTruth section of a report: score tables and the threshold-sweep figure (paper 002 Fig. 2)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from posthoc.crowdtruth.evaluation import FilterResult
from posthoc.crowdtruth.metrics import CrowdTruthResult
from posthoc.html import Section, figure_html, paragraph, table_html
from posthoc.report.fonts import use_figure_fonts

use_figure_fonts()  # CJK and emoji names drawn as glyphs when such fonts are installed


def sweep_figure(sweep: pd.DataFrame, *, majority_f1: float | None = None, best: pd.Series | None = None) -> Figure:
    """F1 (and weighted F1') against the positive / negative threshold, with majority vote as a line.

    Examples:
        A two-row sweep with weighted F1' and a majority-vote F1: three lines (F1, F1' and majority vote's level).

        >>> import pandas as pd
        >>> from posthoc.crowdtruth.report import sweep_figure
        >>> sweep = pd.DataFrame({"threshold": [0.25, 0.75], "f1": [0.5, 1.0], "weighted_f1": [0.6, 1.0]})
        >>> axes = sweep_figure(sweep, majority_f1=0.8).axes[0]
        >>> axes.get_xlabel(), axes.get_ylabel()
        ('threshold (positive when score >= threshold)', 'F1 against the reference')
        >>> [line.get_label() for line in axes.get_lines()]
        ['F1 (unit-annotation score)', "clarity-weighted F1'", 'majority vote']
    """
    figure = Figure(figsize=(6.4, 3.6))
    FigureCanvasAgg(figure)
    axes = figure.add_subplot(1, 1, 1)
    axes.plot(sweep["threshold"], sweep["f1"], color="#4c72b0", label="F1 (unit-annotation score)")
    if "weighted_f1" in sweep.columns:
        axes.plot(sweep["threshold"], sweep["weighted_f1"], color="#55a868", linestyle="--",
                  label="clarity-weighted F1'")
    if majority_f1 is not None:
        axes.axhline(majority_f1, color="#c44e52", linestyle=":", label="majority vote")
    if best is not None:
        axes.plot([best["threshold"]], [best["f1"]], marker="o", color="#4c72b0")
    axes.set_xlabel("threshold (positive when score >= threshold)")
    axes.set_ylabel("F1 against the reference")
    axes.set_ylim(0.0, 1.02)
    axes.set_xlim(0.0, 1.0)
    axes.grid(True, alpha=0.3)
    axes.legend(loc="lower left", fontsize=8)
    return figure


def result_section(
    result: CrowdTruthResult,
    *,
    title: str = "CrowdTruth disagreement metrics",
    sweep: pd.DataFrame | None = None,
    best: pd.Series | None = None,
    majority: Mapping[str, float] | None = None,
    mcnemar: Mapping[str, float] | None = None,
    filtered: FilterResult | None = None,
    notes: tuple[str, ...] = (),
    max_rows: int = 25,
) -> Section:
    """A report section: summary, lowest-quality units and workers, annotations, and the evaluation.

    Examples:
        A unit named ``<s1>`` appears in the units' table escaped, never as a tag.

        >>> import pandas as pd
        >>> from posthoc.crowdtruth import build_vectors, crowdtruth_metrics
        >>> from posthoc.crowdtruth.report import result_section
        >>> judgements = pd.DataFrame({"unit": ["<s1>"] * 3, "worker": ["w1", "w2", "w3"],
        ...                            "annotation": ["a", "a", "b"]})
        >>> section = result_section(crowdtruth_metrics(build_vectors(judgements)))
        >>> section.title, "&lt;s1&gt;" in section.body_html, "<s1>" in section.body_html
        ('CrowdTruth disagreement metrics', True, False)
    """
    units, workers = result.units, result.workers
    summary = pd.DataFrame(
        {
            "measure": ["units", "workers", "judgements", "iterations", "converged", "task",
                        "mean UQS", "mean WQS"],
            "value": [str(len(units)), str(len(workers)), str(int(units["n_workers"].sum())), str(result.iterations),
                      "yes" if result.converged else "no (iteration cap)",
                      "open-ended" if result.open_ended else "closed",
                      f"{units['uqs'].mean():.3f}", f"{workers['wqs'].mean():.3f}"],
        }
    )
    parts = [
        paragraph(
            "CrowdTruth 2.0 metrics (paper 002 section 3.3 and its reference [3]): unit quality (UQS), worker quality "
            "(WQS = worker-unit agreement x worker-worker agreement), annotation quality (AQS, closed tasks) and the "
            "unit-annotation score (UAS), computed by the fixed-point iteration of the crowdtruth 2.1 package."
        ),
        table_html(summary, caption="Run"),
        table_html(units.sort_values(["uqs", "unit"]).head(max_rows), caption="Least clear units (lowest UQS)"),
        table_html(workers.sort_values(["wqs", "worker"]).head(max_rows), caption="Lowest-quality workers"),
        table_html(result.annotations, caption="Annotations"),
    ]
    for note in notes:
        parts.append(paragraph(note, css_class="note"))
    if sweep is not None and best is not None:
        rows = [{"method": "CrowdTruth UAS, best threshold", "threshold": float(best["threshold"]),
                 "precision": float(best["precision"]), "recall": float(best["recall"]), "f1": float(best["f1"])}]
        if "weighted_f1" in best.index:
            rows.append({"method": "clarity-weighted (same threshold)", "threshold": float(best["threshold"]),
                         "precision": float(best["weighted_precision"]), "recall": float(best["weighted_recall"]),
                         "f1": float(best["weighted_f1"])})
        if majority is not None:
            rows.append({"method": "majority vote (half or more)", "threshold": 0.5,
                         "precision": majority["precision"], "recall": majority["recall"], "f1": majority["f1"]})
        parts.append(table_html(pd.DataFrame(rows), caption="Against the reference", float_format="{:.4f}"))
        parts.append(figure_html(sweep_figure(sweep, majority_f1=None if majority is None else majority["f1"],
                                              best=best),
                                 caption="F1 of the unit-annotation score against the reference at each threshold "
                                         "(paper 002 Fig. 2)"))
    if mcnemar is not None:
        parts.append(paragraph(
            f"McNemar's test, best-threshold CrowdTruth vs majority vote: b = {mcnemar['b']:.0f}, "
            f"c = {mcnemar['c']:.0f}, statistic = {mcnemar['statistic']:.3f}, p = {mcnemar['pvalue']:.3g} "
            f"({'exact binomial' if mcnemar['exact'] else 'chi-square with continuity correction'})."
        ))
    if filtered is not None:
        parts.append(paragraph(
            f"Filtering (paper 002 section 3.3): {len(filtered.dropped_units)} unit(s) below the UQS cut-off "
            f"{filtered.unit_cutoff:.3f} were left out while scoring workers; {len(filtered.dropped_workers)} "
            f"worker(s) below WQS {filtered.worker_threshold:.3f} were removed and all units re-scored."
        ))
        if len(filtered.dropped_workers):
            parts.append(table_html(filtered.dropped_workers.head(max_rows), caption="Removed workers"))
    body = "".join(parts)
    if not np.isfinite(units["uqs"]).all():
        body += paragraph("Some unit scores are not finite; check for empty judgements.", css_class="note")
    return Section(title=title, body_html=body, anchor="crowdtruth")
