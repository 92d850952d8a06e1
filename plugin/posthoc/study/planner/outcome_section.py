"""The study report's "Plan against outcome" section: what ``posthoc study estimate`` predicted, and what came.

When ``estimate.json`` lies beside the manifest (where ``posthoc study estimate`` writes it by default),
``posthoc score`` adds this section: for every cell the predicted 95% half-width of posthoc precision
and recall against the half-width the scored study achieved (its bootstrap interval, paper 000 section
4) and their ratio; the predicted value against the achieved one for the agreement figures (k > 1);
and annotator-hours per worker, predicted against measured (the sum of ``lead_time`` over the worker's
tasks, control tasks included). An unreadable or foreign estimate gives a note, never a failed job.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from posthoc.html import Section, paragraph, table_html
from posthoc.scores import Scores
from posthoc.study.plan.estimate_file import FORMAT

ANCHOR = "plan-against-outcome"
TITLE = "Plan against outcome"


def _load(path: Path, study: str | None) -> tuple[dict[str, Any] | None, str | None]:
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        return None, f"{path.name} beside the manifest could not be read ({exc}); rerun posthoc study estimate."
    if not isinstance(record, dict) or record.get("format") != FORMAT or not isinstance(record.get("cells"), list):
        return None, f"{path.name} beside the manifest is not an estimate written by posthoc study estimate."
    if study is not None and record.get("study") != study:
        return None, (f"{path.name} beside the manifest estimates study {record.get('study')!r}, not {study!r}; "
                      "it is not compared.")
    return record, None


def _cells(record: dict[str, Any], scores: Scores) -> pd.DataFrame:
    predicted = pd.DataFrame(record["cells"])
    needed = {"dataset", "system", "metric", "expected", "halfwidth"}
    if predicted.empty or not needed <= set(predicted.columns):
        return pd.DataFrame()
    rates = scores.rates.assign(achieved_halfwidth=(scores.rates["high"] - scores.rates["low"]) / 2)
    achieved = rates[["dataset", "system", "metric", "value", "achieved_halfwidth"]].rename(
        columns={"value": "achieved"})
    reliability = getattr(scores, "reliability", pd.DataFrame())
    if len(reliability):
        agreement = pd.DataFrame({"dataset": reliability["dataset"], "system": "*", "metric": reliability["measure"],
                                  "achieved": reliability["value"], "achieved_halfwidth": np.nan})
        achieved = pd.concat([achieved, agreement], ignore_index=True)
    table = predicted[["dataset", "system", "metric", "expected", "halfwidth"]].astype(
        {"dataset": str, "system": str, "metric": str}).merge(
        achieved.astype({"dataset": str, "system": str, "metric": str}), on=["dataset", "system", "metric"],
        how="left")
    table["ratio"] = table["halfwidth"] / table["achieved_halfwidth"]
    columns = ["dataset", "system", "metric", "predicted", "achieved", "predicted_halfwidth", "achieved_halfwidth",
               "ratio"]
    if {"achieved_noise", "assured_within_15"} <= set(predicted.columns):  # estimates since the noise figure
        table["expected_noise"] = pd.to_numeric(predicted["achieved_noise"], errors="coerce").to_numpy()
        table["assured_within_15"] = predicted["assured_within_15"].astype(bool).to_numpy()
        columns += ["expected_noise", "assured_within_15"]
    return table.rename(columns={"expected": "predicted", "halfwidth": "predicted_halfwidth"})[columns]


def _hours(record: dict[str, Any], judgements: pd.DataFrame) -> pd.DataFrame:
    predicted = pd.DataFrame(record.get("per_worker") or [])
    if predicted.empty or "hours" not in predicted.columns or "lead_time" not in judgements.columns:
        return pd.DataFrame()
    tasks = judgements.drop_duplicates(["worker", "task_key"])
    measured = pd.to_numeric(tasks["lead_time"], errors="coerce").groupby(tasks["worker"].astype(str)).sum() / 3600.0
    table = pd.DataFrame({"worker": predicted["worker"].astype(str),
                          "predicted_hours": pd.to_numeric(predicted["hours"], errors="coerce")})
    table["measured_hours"] = table["worker"].map(measured)
    table["ratio"] = table["predicted_hours"] / table["measured_hours"]
    total = pd.DataFrame({"worker": ["all workers"], "predicted_hours": [table["predicted_hours"].sum()],
                          "measured_hours": [table["measured_hours"].sum()]})
    total["ratio"] = total["predicted_hours"] / total["measured_hours"]
    return pd.concat([total, table], ignore_index=True)


def plan_against_outcome_section(path: str | Path, scores: Scores, judgements: pd.DataFrame,
                                 *, study: str | None = None) -> Section | None:
    """The section for the estimate at ``path``, or None when there is no such file."""
    source = Path(path)
    if not source.is_file():
        return None
    record, problem = _load(source, study)
    if record is None:
        return Section(TITLE, paragraph(str(problem)), anchor=ANCHOR)
    settings = record.get("settings") or {}
    cells = _cells(record, scores)
    hours = _hours(record, judgements)
    intro = paragraph(
        f"The estimate saved beside the manifest ({source.name}: {settings.get('runs', '?')} simulated studies, "
        f"outcome rates from {settings.get('rates_source', '?')}) against what the study achieved. A predicted "
        "half-width is the expected half-width of the report's 95% bootstrap interval; a ratio near 1 means the "
        "plan held. expected_noise is how much the achieved half-width itself varies from study to study (relative "
        "sd: the bootstrap's resamples and the study's judgements), so a ratio within about two of it of 1 is "
        "as close as any plan can be; assured_within_15 marks cells where 4 of it fit in 15% (docs/study.md, "
        "'How far it can be trusted'). Hours are measured as the sum of lead_time "
        "over each worker's tasks.")
    body = intro
    body += table_html(cells, caption="Half-widths per cell: predicted against achieved") if len(cells) else \
        paragraph("The estimate holds no cells to compare.")
    body += table_html(hours, caption="Annotator-hours per worker: predicted against measured") if len(hours) else \
        paragraph("No hours to compare (the estimate has no per-worker hours or the judgements no lead_time).")
    return Section(TITLE, body, anchor=ANCHOR)
