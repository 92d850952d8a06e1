"""Study planning before anyone annotates: hours, cost and the interval widths a plan will give.

:func:`estimate_study` takes a :class:`~posthoc.study.plan.design.StudyPlan` and returns a
:class:`StudyEstimate`:

* **counts** from the plan alone (:func:`posthoc.study.planner.counts.plan_counts`): tasks, regions to judge
  (pre-filled annotations a worker decides), tasks and regions per worker, control tasks;
* **time**: seconds per region from a pilot's ``lead_time`` or a stated default (15 s, paper 000
  section 2.1, see :mod:`posthoc.study.planner.rates`); annotator-hours in total and per worker; cost at
  ``hourly_rate``. With a pilot, the pilot's own hours are measured and only the rest is predicted,
  each worker at their own pilot pace (the pooled pace for a worker without a timed pilot task);
* **precision**: for every dataset x system cell the expected 95% half-width of posthoc precision and
  recall (paper 000 section 3.2) and, when k > 1, of Fleiss' kappa and Krippendorff's alpha per dataset,
  over ``runs`` replicated studies (:mod:`posthoc.study.planner.replicates`) with outcome rates from the pilot or
  the paper's priors: exact for precision and recall (:mod:`posthoc.study.planner.analytic`, no Monte Carlo
  error), the mean of the replicates' own bootstrap half-widths for agreement; with priors, also the
  half-width if every cell verified only at the low end of the paper's per-cell spread
  (``halfwidth_low``). ``achieved_noise``: how much the half-width the study reports will itself vary
  (its bootstrap's resamples, its judgements); ``assured_within_15``: whether the prediction is within
  15% of it with near certainty (4 sds), a warning is printed for the other cells;
* **target** (``target_halfwidth``): the smallest seeded sample of documents and, for k > 1, the number
  of judges that bring every cell under the target (:mod:`posthoc.study.planner.target`), with hours and cost.

:meth:`StudyEstimate.write` writes ``estimate.json`` and ``estimate.csv`` atomically.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, cast

import numpy as np
import pandas as pd

from posthoc.atomic import json_ready, write_text_atomic
from posthoc.errors import PosthocInputError
from posthoc.study.plan.design import StudyPlan
from posthoc.study.plan.estimate_file import ESTIMATE_CSV, ESTIMATE_JSON, FORMAT
from posthoc.study.planner.analytic import bootstrap_noise, ratio_moments
from posthoc.study.planner.counts import hours, plan_counts, regions_by_worker
from posthoc.study.planner.rates import (
    DEFAULT_HOURLY_RATE,
    DEFAULT_SECONDS_PER_REGION,
    PRIOR_SPREAD,
    OutcomeRates,
    pilot_time,
    rates_from_pilot,
)
from posthoc.study.planner.replicates import DEFAULT_RESAMPLES, Z95, replicate_study
from posthoc.study.planner.shape import StudyShape
from posthoc.study.planner.simulate import plan_judgements

CELL_COLUMNS: Final = ["dataset", "system", "metric", "expected", "halfwidth", "halfwidth_mc_error", "halfwidth_low",
                       "halfwidth_simulated", "achieved_noise", "assured_within_15", "p025", "p975", "sd",
                       "n_annotations", "runs"]


@dataclass
class StudyEstimate:
    """What a plan will cost and how precise it will be (see the module docstring for each part)."""

    study: str
    settings: dict[str, Any]
    counts: dict[str, Any]
    time: dict[str, Any]
    cells: pd.DataFrame
    assumptions: list[str]
    target: dict[str, Any] | None = None
    per_worker: pd.DataFrame = field(default_factory=pd.DataFrame)

    def record(self) -> dict[str, Any]:
        """A JSON-ready record (NaN as null); sorted keys when dumped, no timestamps."""
        cells = self.cells.astype(object).where(self.cells.notna(), None)
        return cast(dict[str, Any], json_ready({
            "format": FORMAT, "study": self.study, "settings": self.settings, "counts": self.counts,
            "time": self.time, "cells": cells.to_dict(orient="records"), "assumptions": self.assumptions,
            "target": self.target,
            "per_worker": self.per_worker.to_dict(orient="records") if len(self.per_worker) else [],
        }))

    def write(self, out_dir: str | Path) -> tuple[Path, Path]:
        """Write ``estimate.json`` and ``estimate.csv`` (the cells) into ``out_dir``, each atomically."""
        from posthoc.writers import write_table  # the corpus writers load rdflib: only when writing

        folder = Path(out_dir)
        if folder.exists() and not folder.is_dir():
            raise PosthocInputError(f"--out {folder} is a file; give a folder for estimate.json and estimate.csv")
        folder.mkdir(parents=True, exist_ok=True)
        text = json.dumps(self.record(), sort_keys=True, indent=1, ensure_ascii=False, allow_nan=False) + "\n"
        write_table(self.cells[CELL_COLUMNS], folder / ESTIMATE_CSV)
        write_text_atomic(folder / ESTIMATE_JSON, text)
        return folder / ESTIMATE_JSON, folder / ESTIMATE_CSV


def _check(runs: int, seconds_per_region: float | None, hourly_rate: float, target: float | None) -> None:
    if isinstance(runs, bool) or not isinstance(runs, int) or runs < 2:
        raise PosthocInputError(f"--runs must be an integer >= 2 (simulated studies), got {runs!r}")
    if seconds_per_region is not None and not (math.isfinite(seconds_per_region) and seconds_per_region > 0):
        raise PosthocInputError(f"--seconds-per-region must be a number > 0, got {seconds_per_region!r}")
    if not (math.isfinite(hourly_rate) and hourly_rate >= 0):
        raise PosthocInputError(f"--hourly-rate must be a number >= 0, got {hourly_rate!r}")
    if target is not None and not (math.isfinite(target) and 0 < target < 1):
        raise PosthocInputError(f"--target-halfwidth must be between 0 and 1 (e.g. 0.02), got {target!r}")


def _time(plan: StudyPlan, counts: dict[str, Any], pilot: pd.DataFrame | None, seconds_per_region: float | None,
          hourly_rate: float) -> tuple[dict[str, Any], pd.DataFrame]:
    """Hours and cost, in total and per worker; with a pilot, measured for its tasks and predicted for the rest."""
    regions_total = counts["regions"] + counts["control_regions"]
    measured = pilot_time(pilot) if pilot is not None else None
    pace = seconds_per_region if seconds_per_region is not None else (
        measured.seconds_per_region if measured is not None else DEFAULT_SECONDS_PER_REGION)
    source = ("stated" if seconds_per_region is not None else "pilot lead_time" if measured is not None
              else "default (paper 000 section 2.1)")
    done = measured.done_tasks & frozenset(plan.tasks["task_key"].astype(str)) if measured is not None else frozenset()
    rest = regions_by_worker(plan, exclude_tasks=done)
    own = measured.per_worker if (measured is not None and seconds_per_region is None) else {}
    worker_pace = pd.Series([own.get(str(w), pace) for w in rest.index], index=rest.index, dtype=float)
    rest_hours = rest * worker_pace / 3600.0
    pilot_hours = pd.Series(0.0, index=rest.index)
    if measured is not None:
        lead = pilot.drop_duplicates(["worker", "task_key"])  # type: ignore[union-attr]
        lead = lead.loc[lead["task_key"].astype(str).isin(done)]
        pilot_hours = (lead.groupby(lead["worker"].astype(str))["lead_time"].sum() / 3600.0).reindex(
            rest.index, fill_value=0.0)
    per_worker = pd.DataFrame({"worker": rest.index.astype(str), "regions_left": rest.to_numpy(),
                               "seconds_per_region": worker_pace.to_numpy(), "hours_done": pilot_hours.to_numpy(),
                               "hours_left": rest_hours.to_numpy()})
    per_worker["hours"] = per_worker["hours_done"] + per_worker["hours_left"]
    total = float(per_worker["hours"].sum())
    record: dict[str, Any] = {
        "seconds_per_region": pace, "seconds_per_region_source": source, "regions": regions_total,
        "hours": total, "hours_left": float(rest_hours.sum()), "hours_done": float(pilot_hours.sum()),
        "hours_per_worker_mean": total / max(len(per_worker), 1),
        "hours_per_worker_min": float(per_worker["hours"].min()) if len(per_worker) else 0.0,
        "hours_per_worker_max": float(per_worker["hours"].max()) if len(per_worker) else 0.0,
        "hourly_rate": hourly_rate, "cost": total * hourly_rate, "cost_left": float(rest_hours.sum()) * hourly_rate,
        "hours_at_stated_pace": hours(regions_total, pace),
    }
    if measured is not None:
        record.update({"pilot_tasks": measured.n_tasks, "pilot_regions": measured.n_regions,
                       "pilot_tasks_without_time": measured.n_tasks_without_time,
                       "pilot_tasks_in_plan": len(done)})
    return record, per_worker


def estimate_study(plan: StudyPlan, *, pilot: pd.DataFrame | None = None, rates: OutcomeRates | None = None,
                   seconds_per_region: float | None = None, hourly_rate: float = DEFAULT_HOURLY_RATE,
                   runs: int = 200, seed: int = 0, target_halfwidth: float | None = None, max_judges: int = 5,
                   n_resamples: int = DEFAULT_RESAMPLES, progress: bool = False) -> StudyEstimate:
    """Estimate hours, cost and interval half-widths of ``plan`` (see the module docstring).

    ``pilot``: the judgements table of a first batch (:func:`posthoc.study.planner.rates.read_pilot`); it gives
    the outcome rates (unless ``rates`` is given) and the pace (unless ``seconds_per_region`` is).
    ``runs`` replicated studies seeded by ``seed``; ``target_halfwidth`` also searches the smallest plan
    (judges from 2 to ``max_judges`` when the plan has k > 1). ``n_resamples``: the bootstrap resamples the
    study will be scored with (the achieved half-width's own noise, ``achieved_noise``). Raises
    :class:`PosthocInputError` for a bad setting.
    """
    _check(runs, seconds_per_region, hourly_rate, target_halfwidth)
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int) or n_resamples < 1:
        raise PosthocInputError(f"--resamples must be an integer >= 1 (bootstrap resamples), got {n_resamples!r}")
    if rates is None:
        rates = rates_from_pilot(pilot) if pilot is not None else OutcomeRates()
    counts = plan_counts(plan)
    time, per_worker = _time(plan, counts, pilot, seconds_per_region, hourly_rate)
    shape = StudyShape.from_judgements(plan_judgements(plan), k=plan.config.k)
    cells = replicate_study(shape, rates, runs=runs, seed=seed, n_resamples=n_resamples, progress=progress).summary()
    if rates.source == "prior" and shape.k == 1:  # precision and recall only: exact, no second simulation
        low_rates = rates.with_verify(PRIOR_SPREAD[0])
        exact = ratio_moments(shape, shape.shares(low_rates)[:, 0], low_rates.consistency)
        cells["halfwidth_low"] = Z95 * np.concatenate([exact[m][1] for m in cells["metric"].unique()])
    elif rates.source == "prior":
        low = replicate_study(shape, rates.with_verify(PRIOR_SPREAD[0]), runs=runs, seed=seed,
                              n_resamples=n_resamples, progress=progress,
                              desc="simulated studies (low verify share)").summary()
        cells["halfwidth_low"] = low["halfwidth"].to_numpy()
    else:
        cells["halfwidth_low"] = float("nan")
    cells = cells[CELL_COLUMNS]
    settings = {"runs": runs, "seed": seed, "k": plan.config.k, "rates_source": rates.source,
                "outcome_shares_default": list(rates.default), "judge_consistency": rates.consistency,
                "target_halfwidth": target_halfwidth, "max_judges": max_judges, "plan_seed": plan.config.seed,
                "bootstrap_resamples": n_resamples,
                "confidence": 0.95}
    if len(rates.cells):
        settings["outcome_shares_by_cell"] = rates.cells.to_dict(orient="records")
    estimate = StudyEstimate(study=plan.config.name, settings=settings, counts=counts, time=time, cells=cells,
                             assumptions=_assumptions(rates, time, plan.config.k, n_resamples),
                             per_worker=per_worker)
    if target_halfwidth is not None:
        from posthoc.study.planner.target import smallest_plan

        estimate.target = smallest_plan(plan, shape, rates, target=target_halfwidth, runs=runs, seed=seed,
                                        max_judges=max_judges, seconds_per_region=time["seconds_per_region"],
                                        hourly_rate=hourly_rate, progress=progress)
    return estimate


def _assumptions(rates: OutcomeRates, time: dict[str, Any], k: int, n_resamples: int) -> list[str]:
    shares = " / ".join(f"{x:.3f}" for x in rates.default)
    lines = [
        "Half-widths are those of the report's 95% bootstrap intervals over documents (paper 000 section 4): "
        "the spread of the point estimates over replicated studies, each on a fresh draw of as many documents "
        "from the plan's, judged afresh.",
        ("Outcome shares (verify / edit / remove) from the pilot, per cell, shrunk towards its pooled shares "
         f"{shares}." if rates.source == "pilot" else
         f"Outcome shares {shares} in every cell (paper 000, Figure 4); halfwidth_low: every cell at verify share "
         f"{PRIOR_SPREAD[0]} (the low end of the paper's per-cell spread)."),
        "Every document of a cell has the same rates; judges of one annotation are independent given its latent "
        "outcome; every worker passes the control tasks.",
        "The half-width a study reports varies by achieved_noise (relative sd) around the prediction: its "
        f"bootstrap's {n_resamples} resamples alone give {bootstrap_noise(n_resamples):.1%}, its "
        "judgements and documents the rest. A cell is assured within 15% (assured_within_15) when 4 x the relative "
        "sd of predicted / achieved is at most 15% (docs/study.md, 'How far it can be trusted').",
        f"Pace {time['seconds_per_region']:.2f} s a region ({time['seconds_per_region_source']}), the same at "
        "every point of a worker's sequence.",
    ]
    if k > 1:
        lines.append(f"Judge consistency {rates.consistency:.3f} (a judge gives the annotation's latent outcome with "
                     "this probability; Fleiss' kappa = its square).")
    return lines


def describe(estimate: StudyEstimate) -> list[str]:
    """The printed summary: counts, time and cost, the cells' half-widths and the target's plan."""
    c, t = estimate.counts, estimate.time
    lines = [
        f"study {estimate.study}: {c['documents']} documents, {c['datasets']} dataset(s), systems "
        f"{', '.join(c['systems'])}, k = {c['k']}",
        f"  tasks            {c['tasks']} ({c['real_tasks']} to verify + {c['control_tasks']} control tasks)",
        f"  regions to judge {c['regions']} (+ {c['control_regions']} control annotations)",
        f"  workers          {c['workers']}: {c['tasks_per_worker_min']}-{c['tasks_per_worker_max']} tasks, "
        f"{c['regions_per_worker_min']}-{c['regions_per_worker_max']} regions each",
        f"  pace             {t['seconds_per_region']:.2f} s a region ({t['seconds_per_region_source']})",
        f"  hours            {t['hours']:.1f} in total"
        + (f" ({t['hours_done']:.1f} done in the pilot, {t['hours_left']:.1f} left)" if t.get("pilot_tasks") else "")
        + f"; {t['hours_per_worker_min']:.2f}-{t['hours_per_worker_max']:.2f} a worker "
        f"(mean {t['hours_per_worker_mean']:.2f})",
        f"  cost             {t['cost']:.2f} at {t['hourly_rate']:g} an hour"
        + (f" ({t['cost_left']:.2f} left)" if t.get("pilot_tasks") else ""),
        f"expected 95% half-widths ({estimate.settings['runs']} simulated studies, rates from "
        f"{estimate.settings['rates_source']}):",
    ]
    table = estimate.cells.copy()
    shown = pd.DataFrame({
        "dataset": table["dataset"], "system": table["system"], "metric": table["metric"],
        "n": table["n_annotations"], "expected": table["expected"].map(lambda v: f"{v:.3f}"),
        "± half-width": table["halfwidth"].map(lambda v: f"{v:.4f}"),
    })
    if table["halfwidth_low"].notna().any():
        shown["± at low verify"] = table["halfwidth_low"].map(lambda v: f"{v:.4f}")
    shown["± noise"] = table["achieved_noise"].map(lambda v: f"{v:.1%}" if math.isfinite(v) else "?")
    lines += ["  " + row for row in shown.to_string(index=False).splitlines()]
    loose = table.loc[~table["assured_within_15"].astype(bool)]
    if len(loose):
        lines.append(f"  note: {len(loose)} of {len(table)} cells are not assured within 15%: the half-width the "
                     "study reports will itself vary by the ± noise shown (relative sd; 4 sds exceed 15%), so "
                     "read their prediction as the expected value; more documents narrow the noise "
                     "(docs/study.md, 'How far it can be trusted')")
    target = estimate.target
    if target is not None:
        best = target.get("best")
        if best is None:
            widest = target.get("widest_at_full")
            shown_widest = f"{widest:.4f}" if isinstance(widest, float) and math.isfinite(widest) else "undefined"
            lines.append(f"target ± {target['target']:g}: not reached even with every document "
                         f"(widest cell {shown_widest}); add documents or judges")
        else:
            lines.append(f"target ± {target['target']:g}: {best['documents']} documents "
                         f"(of {c['documents']}), k = {best['k']}, {best['tasks']} tasks, {best['workers']} workers, "
                         f"{best['hours']:.1f} hours, cost {best['cost']:.2f}; widest cell {best['widest']:.4f}")
    return lines
