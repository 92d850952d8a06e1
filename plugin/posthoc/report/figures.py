"""The figures of seed 000 section 4 as matplotlib figures, drawn deterministically from Scores tables.

- :func:`precision_recall_figure`: Figure 3, pre-annotation vs posthoc precision and recall per dataset
  and system with 95% interval error bars;
- :func:`outcome_figure`: Figure 4, verify / edit / remove shares per dataset and system, stacked;
- :func:`agreement_figure`: Figure 5, intersection annotations by how many judges verified them;
- :func:`union_outcomes_figure`: Figure 6, the verification union against the ground truth, outcomes A-E.

Figures are :class:`matplotlib.figure.Figure` objects made without pyplot (no global state, Agg canvas),
with fixed sizes, colours, fonts and order, so the same tables give the same PNG bytes
(:func:`posthoc.html.figure_html` strips the PNG's software metadata).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from posthoc.report.fonts import use_figure_fonts
from posthoc.tables import GT_SYSTEM, OUTCOMES

use_figure_fonts()  # CJK and emoji names drawn as glyphs when such fonts are installed

OUTCOME_COLOURS = {"verify": "#2a9d8f", "edit": "#e9c46a", "remove": "#e76f51"}
UNION_OUTCOMES = ("A", "B", "C", "D", "E")
UNION_COLOURS = {"A": "#264653", "B": "#2a9d8f", "C": "#8ab17d", "D": "#e9c46a", "E": "#e76f51"}
UNION_LABELS = {
    "A": "A same mention, same link",
    "B": "B same mention, other link",
    "C": "C overlapping mention, same link",
    "D": "D overlapping mention, other link",
    "E": "E no overlap (missing from GT)",
}
_SYSTEM_COLOURS = ("#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860", "#da8bc3", "#8c8c8c")
_HATCHES = ("", "//", "..", "xx", "\\\\", "++", "oo", "--")


def _figure(width: float, height: float) -> Figure:
    figure = Figure(figsize=(width, height), dpi=110)
    FigureCanvasAgg(figure)
    return figure


def _one_panel(width: float, height: float, title: str, *, data: pd.DataFrame,
               when_empty: str) -> tuple[Figure, Axes | None]:
    """A figure of one titled panel, and the panel to draw ``data`` on; for empty ``data`` the panel says
    ``when_empty`` and comes back as None."""
    figure = _figure(width, height)
    axes = figure.subplots()
    axes.set_title(title, fontsize=10)
    if data.empty:
        _empty(axes, when_empty)
        return figure, None
    return figure, axes


def _row_shares(counts: pd.DataFrame) -> pd.DataFrame:
    """Each row's counts as shares of the row's total (0 in a row without any)."""
    return counts.div(counts.sum(axis=1).replace(0, np.nan), axis=0).fillna(0.0)


def ordered_systems(systems: Sequence[object]) -> list[str]:
    """System names with the ground truth first, then alphabetical."""
    names = sorted({str(s) for s in systems})
    return sorted(names, key=lambda name: (name != GT_SYSTEM, name))


def _empty(axes: Axes, message: str) -> None:
    axes.text(0.5, 0.5, message, ha="center", va="center", transform=axes.transAxes, color="#57606a")
    axes.set_xticks([])
    axes.set_yticks([])


def _grouped_bars(axes: Axes, table: pd.DataFrame, *, value: str, low: str, high: str, systems: list[str],
                  datasets: list[str], title: str) -> None:
    """Bars of ``value`` per dataset (groups) and system (bars), error bars from ``low``-``high``."""
    axes.set_title(title, fontsize=10)
    if table.empty:
        _empty(axes, "no data")
        return
    positions = np.arange(len(datasets), dtype=float)
    by_system = {system: table[table["system"] == system].set_index("dataset").reindex(datasets)
                 for system in systems}
    # a system without this metric (GT against itself) gets no bar and no slot: the bars that are drawn
    # stay centred on their dataset's tick; colours stay those of the system's place in ``systems``
    drawn = [s for s in systems if by_system[s][value].astype(float).notna().any()]
    width = 0.8 / max(len(drawn), 1)
    for slot, system in enumerate(drawn):
        number = systems.index(system)
        rows = by_system[system]
        values = rows[value].astype(float).to_numpy()
        lows = rows[low].astype(float).to_numpy()
        highs = rows[high].astype(float).to_numpy()
        present = ~np.isnan(values)
        errors = np.vstack([np.clip(values - lows, 0, None), np.clip(highs - values, 0, None)])[:, present]
        errors = np.nan_to_num(errors, nan=0.0)
        axes.bar((positions + (slot - (len(drawn) - 1) / 2) * width)[present], values[present], width,
                 yerr=errors, capsize=2, label=system, color=_SYSTEM_COLOURS[number % len(_SYSTEM_COLOURS)],
                 error_kw={"elinewidth": 0.8, "ecolor": "#1f2328"})
    axes.set_xticks(positions)
    axes.set_xticklabels(datasets, fontsize=8, rotation=20 if len(datasets) > 4 else 0)
    axes.set_ylim(0, 1.05)
    axes.grid(axis="y", color="#d0d7de", linewidth=0.5)
    axes.set_axisbelow(True)


def precision_recall_figure(rates: pd.DataFrame, preannotation: pd.DataFrame) -> Figure:
    """Figure 3: precision (top) and recall (bottom), pre-annotation (left, strict micro) vs posthoc (right).

    ``rates`` rows with metric ``posthoc_precision`` / ``posthoc_recall`` (``value, low, high``);
    ``preannotation`` rows with ``matching == "strict"`` and ``averaging == "micro"``.
    """
    pre = preannotation
    if not pre.empty:
        pre = pre[(pre["matching"] == "strict") & (pre["averaging"] == "micro")]
    datasets = sorted({str(d) for d in list(rates.get("dataset", [])) + list(pre.get("dataset", []))})
    systems = ordered_systems(list(rates.get("system", [])) + list(pre.get("system", [])))
    figure = _figure(10, 6.5)
    grid = figure.subplots(2, 2, sharey=True)
    for row, (metric, pre_value) in enumerate((("precision", "precision"), ("recall", "recall"))):
        _grouped_bars(grid[row][0], pre, value=pre_value, low=f"low_{pre_value}", high=f"high_{pre_value}",
                      systems=systems, datasets=datasets, title=f"pre-annotation {metric} (strict, micro)")
        posthoc = rates[rates["metric"] == f"posthoc_{metric}"] if not rates.empty else rates
        _grouped_bars(grid[row][1], posthoc, value="value", low="low", high="high", systems=systems,
                      datasets=datasets, title=f"posthoc {metric}")
        grid[row][0].set_ylabel(metric)
    handles, labels = [], []
    for axes in grid.flat:
        for handle, label in zip(*axes.get_legend_handles_labels(), strict=True):
            if label not in labels:
                handles.append(handle)
                labels.append(label)
    if handles:
        order = sorted(range(len(labels)), key=lambda i: systems.index(labels[i]) if labels[i] in systems else 99)
        figure.legend([handles[i] for i in order], [labels[i] for i in order], loc="upper center",
                      ncol=len(labels), frameon=False, fontsize=9)  # in the systems' order, GT first
    figure.subplots_adjust(top=0.9, hspace=0.35)
    return figure


def outcome_figure(outcome_counts: pd.DataFrame) -> Figure:
    """Figure 4: stacked verify / edit / remove shares per dataset and system (``outcome_counts``)."""
    figure, axes = _one_panel(10, 4.2, "outcome shares per dataset and system", data=outcome_counts,
                              when_empty="no judgements")
    if axes is None:
        return figure
    pivot = (outcome_counts.pivot_table(index=["dataset", "system"], columns="outcome", values="count",
                                        aggfunc="sum", fill_value=0)
             .reindex(columns=list(OUTCOMES), fill_value=0))
    keys = sorted(pivot.index, key=lambda key: (str(key[0]), str(key[1]) != GT_SYSTEM, str(key[1])))
    shares = _row_shares(pivot.reindex(keys))
    systems = ordered_systems([key[1] for key in keys])
    positions = np.arange(len(keys), dtype=float)
    bottom = np.zeros(len(keys))
    for outcome in OUTCOMES:
        values = shares[outcome].to_numpy()
        bars = axes.bar(positions, values, 0.75, bottom=bottom, color=OUTCOME_COLOURS[outcome], label=outcome,
                        edgecolor="#1f2328", linewidth=0.4)
        for bar, key in zip(bars, keys, strict=True):
            bar.set_hatch(_HATCHES[systems.index(str(key[1])) % len(_HATCHES)])
        bottom += values
    axes.set_xticks(positions)
    axes.set_xticklabels([f"{d}\n{s}" for d, s in keys], fontsize=7)
    axes.set_ylim(0, 1.0)
    axes.set_ylabel("share of judgements")
    axes.legend(loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=3, frameon=False, fontsize=9)
    return figure


def agreement_figure(agreement: pd.DataFrame) -> Figure:
    """Figure 5: annotations in the intersection of all systems by number of judges who verified them."""
    figure, axes = _one_panel(8, 4, "agreement on the intersection of all systems", data=agreement,
                              when_empty="no intersection annotations with several judges")
    if axes is None:
        return figure
    datasets = sorted({str(d) for d in agreement["dataset"]})
    levels = sorted({int(v) for v in agreement["n_verified"]}, reverse=True)
    width = 0.8 / max(len(levels), 1)
    positions = np.arange(len(datasets), dtype=float)
    summed = agreement.groupby(["dataset", "n_verified"])["count"].sum()
    for number, level in enumerate(levels):
        values = [float(summed.get((dataset, level), 0)) for dataset in datasets]
        axes.bar(positions + (number - (len(levels) - 1) / 2) * width, values, width, label=f"i={level}",
                 color=_SYSTEM_COLOURS[number % len(_SYSTEM_COLOURS)])
    axes.set_xticks(positions)
    axes.set_xticklabels(datasets, fontsize=8)
    axes.set_ylabel("annotations")
    axes.legend(title="verified by i judges", fontsize=8, title_fontsize=8, frameon=False)
    return figure


def union_outcomes_figure(union_outcomes: pd.DataFrame) -> Figure:
    """Figure 6: shares of outcomes A-E of the verification union against the ground truth, per dataset."""
    figure, axes = _one_panel(8, 4, "verification union against the ground truth", data=union_outcomes,
                              when_empty="no verified annotations")
    if axes is None:
        return figure
    datasets = sorted({str(d) for d in union_outcomes["dataset"]})
    pivot = (union_outcomes.pivot_table(index="dataset", columns="outcome", values="count", aggfunc="sum",
                                        fill_value=0)
             .reindex(index=datasets, columns=list(UNION_OUTCOMES), fill_value=0))
    shares = _row_shares(pivot)
    positions = np.arange(len(datasets), dtype=float)
    left = np.zeros(len(datasets))
    for outcome in UNION_OUTCOMES:
        values = shares[outcome].to_numpy()
        axes.barh(positions, values, 0.6, left=left, color=UNION_COLOURS[outcome], label=UNION_LABELS[outcome])
        left += values
    axes.set_yticks(positions)
    axes.set_yticklabels(datasets, fontsize=8)
    axes.set_xlim(0, 1.0)
    axes.set_xlabel("share of the verification union")
    axes.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2, frameon=False, fontsize=8)
    return figure


def comparison_figure(comparisons: pd.DataFrame) -> Figure:
    """Paired differences in Figure 3's style: one panel per metric (posthoc precision, recall, F1), datasets as
    groups, one bar per pair (``system_a - system_b``) with its 95% paired-bootstrap interval; ``*`` marks a
    difference significant after Holm. ``comparisons``: :func:`posthoc.metrics.comparisons.paired_comparisons`."""
    metrics = (("posthoc_precision", "posthoc precision"), ("posthoc_recall", "posthoc recall"),
               ("posthoc_f1", "posthoc F1"))
    figure = _figure(11, 3.8)
    grid = figure.subplots(1, len(metrics), sharey=True)
    table = comparisons.assign(pair=comparisons["system_a"].astype(str) + " - " + comparisons["system_b"].astype(str)) \
        if len(comparisons) else comparisons
    pairs = list(dict.fromkeys(table["pair"])) if len(table) else []
    datasets = sorted({str(d) for d in table["dataset"]}) if len(table) else []
    bound = max([0.05, *np.abs(table[["ci_low", "ci_high", "difference"]].to_numpy(float)[
        np.isfinite(table[["ci_low", "ci_high", "difference"]].to_numpy(float))]).tolist()]) if len(table) else 0.05
    for axes, (metric, title) in zip(grid, metrics, strict=True):
        axes.set_title(title + " difference", fontsize=10)
        rows = table[table["metric"] == metric] if len(table) else table
        if rows.empty:
            _empty(axes, "fewer than two systems")
            continue
        positions = np.arange(len(datasets), dtype=float)
        width = 0.8 / max(len(pairs), 1)
        for slot, pair in enumerate(pairs):
            mine = rows[rows["pair"] == pair].set_index("dataset").reindex(datasets)
            values = mine["difference"].astype(float).to_numpy()
            present = ~np.isnan(values)
            errors = np.nan_to_num(np.vstack([values - mine["ci_low"].astype(float).to_numpy(),
                                              mine["ci_high"].astype(float).to_numpy() - values]), nan=0.0)
            x = positions + (slot - (len(pairs) - 1) / 2) * width
            axes.bar(x[present], values[present], width, yerr=np.clip(errors, 0, None)[:, present], capsize=2,
                     label=pair, color=_SYSTEM_COLOURS[slot % len(_SYSTEM_COLOURS)],
                     hatch=_HATCHES[slot // len(_SYSTEM_COLOURS) % len(_HATCHES)],
                     error_kw={"elinewidth": 0.8, "ecolor": "#1f2328"})
            starred = present & mine["significant"].fillna(False).astype(bool).to_numpy()
            for where, top in zip(x[starred], mine["ci_high"].astype(float).to_numpy()[starred], strict=True):
                axes.text(where, min(top, bound) + 0.02 * bound, "*", ha="center", fontsize=10)
        axes.axhline(0, color="#1f2328", linewidth=0.8)
        axes.set_xticks(positions)
        axes.set_xticklabels(datasets, fontsize=8, rotation=20 if len(datasets) > 4 else 0)
        axes.set_ylim(-1.15 * bound, 1.15 * bound)
        axes.grid(axis="y", color="#d0d7de", linewidth=0.5)
        axes.set_axisbelow(True)
    grid[0].set_ylabel("difference (a - b)")
    handles, labels = grid[0].get_legend_handles_labels()
    if not handles:
        for axes in grid[1:]:
            handles, labels = axes.get_legend_handles_labels()
            if handles:
                break
    if handles:
        figure.legend(handles, labels, loc="upper center", ncol=min(len(labels), 6), frameon=False, fontsize=9)
    figure.subplots_adjust(top=0.78, wspace=0.08)
    return figure
