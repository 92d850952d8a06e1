"""The cells of the score tables in the explorer: which annotations stand behind each row of each table.

:func:`add_score_cells` fills an :class:`~posthoc.report.explorer_data.ExplorerData` with named lists and one cell
a row of every :class:`~posthoc.scores.Scores` table the report shows (what each holds:
:mod:`posthoc.report.explorer_data`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from posthoc.arrays import Ints, Objects
from posthoc.metrics.inputs import is_control, judged_rows, mention_rows
from posthoc.report.explorer_data import (
    CONTROL_FLAG,
    EXCLUDED_FLAG,
    KEY,
    AnnotationTable,
    ExplorerData,
    add_annotation_table,
    annotation_codes,
    cell_id,
    counted_mask,
    split_rows,
    verified_union_letters,
    with_judgements,
)
from posthoc.scores import Scores
from posthoc.tables import GT_SYSTEM, OUTCOMES, Judgements, Mentions

#: the key columns that label a row of each table, in the order they are shown
LABEL_COLUMNS = {
    "rates": ("dataset", "system", "metric", "value"),
    "preannotation": ("dataset", "system", "matching", "averaging", "precision", "recall"),
    "comparisons": ("dataset", "system_a", "system_b", "metric", "difference"),
    "rankings": ("dataset", "metric", "system", "strict_rank", "posthoc_rank"),
    "outcome_counts": ("dataset", "system", "outcome", "count"),
    "agreement": ("dataset", "n_judges", "n_verified", "count"),
    "union_outcomes": ("dataset", "outcome", "count"),
    "controls": ("worker", "n_control", "n_passed"),
    "exclusions": ("kind", "worker", "task_key", "count"),
    "reliability": ("dataset", "measure", "value"),
    "corrected_gold": ("dataset", "doc_id", "start", "end", "link", "source"),
    "cell_widths": ("dataset", "system", "metric", "halfwidth_now"),
}
#: rows of a table the report shows (:func:`posthoc.html.table_html`'s ``max_rows``): the corrected gold's cells
REPORT_ROWS = 500
SHARES = {f"{outcome}_share": outcome for outcome in OUTCOMES}


def _label(table: str, row: pd.Series) -> str:
    parts = []
    for column in LABEL_COLUMNS[table]:
        if column not in row.index:
            continue
        value = row[column]
        if isinstance(value, float):
            value = "" if pd.isna(value) else f"{value:.3f}"
        parts.append(f"{column} {value}")
    return f"{table}: " + " · ".join(parts)


def _each_row(data: ExplorerData, scores: Scores, table: str, lists: Callable[[pd.Series], list[str]], *,
              frame: pd.DataFrame | None = None) -> None:
    """A cell a row of ``frame`` (default: the score table ``table``), holding the lists ``lists`` names."""
    for label, row in (getattr(scores, table) if frame is None else frame).iterrows():
        data.add_cell(cell_id(table, label), lists(row), table=table, label=_label(table, row))


def add_score_cells(data: ExplorerData, scores: Scores, rows: pd.DataFrame, of_row: Ints, source: pd.DataFrame, *,
                    gt_system: str, cell_widths: pd.DataFrame | None = None) -> None:
    """Named lists for the study's annotations, then a cell for every row of every score table in the report."""
    ann = data.annotations
    n_study = len(data.judgement_offsets) - 1
    dataset, system = ann["dataset"].astype(str).to_numpy(object), ann["system"].astype(str).to_numpy(object)
    counted = np.flatnonzero(counted_mask(data))
    for (d, s), members in split_rows(counted, dataset[counted], system[counted]).items():
        data.add_list(f"judged|{d}|{s}", members)
    flags = data.judgement_flags
    of_judgement = np.repeat(np.arange(n_study), np.diff(data.judgement_offsets))
    for code, outcome in enumerate(OUTCOMES):
        chose = np.unique(of_judgement[(flags == 0) & (data.judgement_outcome == code)])
        for (d, s), members in split_rows(chose, dataset[chose], system[chose]).items():
            data.add_list(f"judged|{d}|{s}|{outcome}", members)
    verified = counted[ann["verdict"].to_numpy()[counted] == 1]
    for (d,), members in split_rows(verified, dataset[verified]).items():
        data.add_list(f"verified|{d}", members)
    mentioned = data.lists["source"]
    for (d, s), members in split_rows(mentioned, dataset[mentioned], system[mentioned]).items():
        data.add_list(f"source|{d}|{s}", members)
    gt = source[source["system"].astype(str) == gt_system]
    judged, letters = verified_union_letters(data, gt, union=str(scores.summary.get("union", "exact")))
    lettered = np.asarray([letter != "" for letter in letters], dtype=bool)
    for (d, letter), members in split_rows(judged[lettered], dataset[judged[lettered]],
                                        np.asarray(letters, dtype=object)[lettered]).items():
        data.add_list(f"letter|{d}|{letter}", members)
    _agreement_lists(data, counted, dataset)
    several = counted[ann["n_judges"].to_numpy()[counted] > 1]
    for (d,), members in split_rows(several, dataset[several]).items():
        data.add_list(f"multi|{d}", members)
    workers = np.asarray(data.workers, dtype=object)[data.judgement_worker] if len(data.workers) else np.zeros(0)
    control = (flags & CONTROL_FLAG) > 0
    data.add_list("control", np.unique(of_judgement[control]))
    for (w,), members in split_rows(of_judgement[control], workers[control]).items():
        data.add_list(f"control|{w}", np.unique(members))
    for (w,), members in split_rows(of_judgement, workers).items():
        data.add_list(f"worker|{w}", np.unique(members))
    _task_lists(data, scores, rows, of_row)
    _table_cells(data, scores, cell_widths)


def _agreement_lists(data: ExplorerData, counted: Ints, dataset: Objects) -> None:
    """Figure 5: the annotations found by every system of the dataset, by summed judges and verifying judges."""
    ann = data.annotations.iloc[counted]
    n_systems = ann.groupby("dataset")["system"].nunique()
    spans = ann.groupby(["dataset", "doc_id", "start", "end", "link"], sort=False)
    frame = pd.DataFrame({"systems": spans["system"].transform("nunique"),
                          "judges": spans["n_judges"].transform("sum"),
                          "verified": spans["n_verify"].transform("sum")})
    everywhere = frame["systems"].to_numpy() == ann["dataset"].map(n_systems).to_numpy()
    rows = counted[everywhere]
    for (d, judges, verifying), members in split_rows(rows, dataset[rows], frame["judges"].to_numpy()[everywhere],
                                                   frame["verified"].to_numpy()[everywhere]).items():
        data.add_list(f"agree|{d}|{judges}|{verifying}", members)


def _task_lists(data: ExplorerData, scores: Scores, rows: pd.DataFrame, of_row: Ints) -> None:
    """The annotations of each task an exclusion names."""
    if scores.exclusions.empty or "task_key" not in rows.columns:
        return
    named = {str(k) for k in scores.exclusions["task_key"].dropna() if str(k)}
    if not named:
        return
    keys = rows["task_key"].astype(str).to_numpy(object)
    chosen = np.flatnonzero(np.isin(keys, list(named)))
    for (key,), members in split_rows(of_row[chosen], keys[chosen]).items():
        data.add_list(f"task|{key}", np.unique(members))


def _gold_cells(data: ExplorerData, scores: Scores) -> None:
    gold = scores.corrected_gold
    if gold.empty:
        return
    shown = gold.head(REPORT_ROWS)
    ann = data.annotations
    keys = pd.MultiIndex.from_frame(ann[["dataset", "doc_id", "start", "end"]].astype(
        {"dataset": str, "doc_id": str, "start": "int64", "end": "int64"}))
    wanted = set(zip(shown["dataset"].astype(str), shown["doc_id"].astype(str), shown["start"].astype("int64"),
                     shown["end"].astype("int64"), strict=True))
    near = np.flatnonzero(keys.isin(list(wanted)))
    spans = {key: members for key, members in split_rows(near, *(keys.get_level_values(i)[near]
                                                                 for i in range(4))).items()}
    for label, row in shown.iterrows():
        members = spans.get((str(row["dataset"]), str(row["doc_id"]), int(row["start"]), int(row["end"])),
                            np.zeros(0, dtype=np.intp))
        name = data.add_list(f"gold|{label}", members)
        data.add_cell(cell_id("corrected_gold", label), [name], table="corrected_gold",
                      label=_label("corrected_gold", row))


def _table_cells(data: ExplorerData, scores: Scores, cell_widths: pd.DataFrame | None = None) -> None:
    """One cell a row of every score table the report shows (and of ``cell_widths``, "Stop now or go on", given)."""
    gt = str(scores.summary.get("gt_system", "GT"))

    def rates(row: pd.Series) -> list[str]:
        d, s, metric = row["dataset"], row["system"], row["metric"]
        if metric in SHARES:
            return [f"judged|{d}|{s}|{SHARES[metric]}"]
        if metric == "posthoc_recall":
            return [f"verified|{d}"]
        return [f"judged|{d}|{s}"] + ([f"verified|{d}"] if metric == "posthoc_f1" else [])

    def exclusion(row: pd.Series) -> list[str]:
        if row["kind"] == "control_rows":
            return ["control"]
        task, worker = row.get("task_key"), row.get("worker")
        if isinstance(task, str) and task:
            return [f"task|{task}"]
        return [f"worker|{worker}"] if isinstance(worker, str) and worker else []

    _each_row(data, scores, "rates", rates)
    if cell_widths is not None:
        _each_row(data, scores, "cell_widths", rates, frame=cell_widths)
    _each_row(data, scores, "preannotation", lambda r: [f"source|{r['dataset']}|{r['system']}",
                                                        f"source|{r['dataset']}|{gt}"])
    _each_row(data, scores, "comparisons", lambda r: [f"judged|{r['dataset']}|{r['system_a']}",
                                                      f"judged|{r['dataset']}|{r['system_b']}"])
    _each_row(data, scores, "rankings", lambda r: [f"judged|{r['dataset']}|{r['system']}",
                                                   f"source|{r['dataset']}|{r['system']}"])
    _each_row(data, scores, "outcome_counts", lambda r: [f"judged|{r['dataset']}|{r['system']}|{r['outcome']}"])
    _each_row(data, scores, "agreement", lambda r: [f"agree|{r['dataset']}|{r['n_judges']}|{r['n_verified']}"])
    _each_row(data, scores, "union_outcomes", lambda r: [f"letter|{r['dataset']}|{r['outcome']}"])
    _each_row(data, scores, "controls", lambda r: [f"control|{r['worker']}"])
    _each_row(data, scores, "exclusions", exclusion)
    _each_row(data, scores, "reliability", lambda r: [f"multi|{r['dataset']}"])
    _gold_cells(data, scores)


def build_explorer_data(scores: Scores, judgements: Judgements, mentions: Mentions, *,
                        annotation_tables: Sequence[AnnotationTable] = (),
                        cell_widths: pd.DataFrame | None = None) -> ExplorerData:
    """The :class:`ExplorerData` of a scored study (the module docstring says what each cell holds).

    ``judgements``: every judgement the score job read (control rows included); ``mentions``: the source mentions
    (every system, the ground truth under ``scores.summary['gt_system']``); ``scores``: the job's
    :class:`~posthoc.scores.Scores` (the workers its controls excluded, its options). ``annotation_tables``: more
    columns by annotation (:class:`AnnotationTable`); ``cell_widths``: the "Stop now or go on" table
    (``dataset, system, metric``, rows as the rates'), one cell a row.
    """
    rows = judged_rows(judgements, keep_controls=True).reset_index(drop=True)
    source = mention_rows(mentions).reset_index(drop=True)
    if "surface" not in source.columns:
        source = source.assign(surface="")
    both = pd.concat([source[[*KEY, "surface"]], rows[[*KEY]].assign(
        surface=rows["surface"] if "surface" in rows.columns else "")], ignore_index=True)
    codes, first = annotation_codes(both)
    annotations = both.iloc[first].reset_index(drop=True)
    annotations["surface"] = annotations["surface"].fillna("").astype(str)
    annotations["origin"] = ""
    of_row = codes[len(source):]
    excluded = set(scores.controls.loc[scores.controls["excluded"].astype(bool), "worker"].astype(str)) \
        if len(scores.controls) else set()
    control = is_control(rows)
    flags = control.astype(np.intp) * CONTROL_FLAG + rows["worker"].astype(str).isin(excluded).to_numpy() \
        * EXCLUDED_FLAG
    data = with_judgements(annotations, rows, of_row, flags, ties=bool(scores.summary.get("ties_verified", False)))
    data.lists["source"] = np.unique(codes[:len(source)])
    for table in annotation_tables:
        add_annotation_table(data, table)
    add_score_cells(data, scores, rows, of_row, source, gt_system=str(scores.summary.get("gt_system", GT_SYSTEM)),
                    cell_widths=cell_widths)
    return data
