"""Validity of the sequence-effect estimators (seed 004) on simulations with a known lag.

- :func:`lag1_checks`: the lag-1 model on its defaults (:func:`posthoc.sequence.fit_lag1`, no option set)
  over many simulated studies per true b1: 95% interval coverage and mean bias. Binary studies: the logistic
  model of seed 004 section 2, each worker with their own bias; continuous studies: 0-100-like scores with each
  worker's own offset and scale (:func:`posthoc.sequence.simulate.simulate_continuous`).
- :func:`simulate_task_study`: a posthoc study's judgements (seed 000's design: tasks of 1-6 pre-filled regions,
  one system each, per-worker random order) whose task outcome "every region verified" follows
  ``logit P = cell + chunk difficulty + worker bias + b1 * previous task outcome``; chunk difficulty varies
  within each dataset x system cell.
- :func:`study_test_checks`: the study-level test (:func:`posthoc.sequence.sequence_table_from_judgements`
  then :func:`~posthoc.sequence.fit_lag1`, both on defaults): the share of null studies where the 5% test
  rejects, and the coverage of b1 on studies with a known lag.
- :func:`randomisation_test_checks` (issue 45): on the same simulated studies, for each task label, the share of
  null studies the randomisation test (:func:`posthoc.sequence.randomisation.order_randomisation_test`, the
  report's study-level test) and the jackknife Wald test of b1 reject at 5%, and their power under a known lag.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from functools import partial

import numpy as np
import pandas as pd
from tqdm import tqdm

from posthoc.sequence import TASK_LABELS, fit_lag1, sequence_table_from_judgements
from posthoc.sequence.randomisation import order_randomisation_test
from posthoc.sequence.simulate import simulate_binary, simulate_continuous
from posthoc.validity import Check, at_least, at_most, within

LAG_TRUTHS = (-0.3, 0.0, 0.4)


def _studies(truth: float, n_studies: int, seed: int) -> list[int]:
    return [seed * 100_003 + (round(truth * 1000) + 5000) * 10_007 + i for i in range(n_studies)]


def lag1_checks(kind: str, *, truths: Sequence[float] = LAG_TRUTHS, n_studies: int = 200, n_workers: int = 30,
                n_items: int = 60, seed: int = 0, coverage_target: float = 0.93, coverage_ceiling: float = 1.0,
                bias_target: float = 0.03, progress: bool = False) -> list[Check]:
    """Coverage of the 95% interval and mean bias of b1, per true b1, for ``kind`` binary or continuous."""
    checks = []
    for truth in truths:
        estimates, covered = [], 0
        for study in tqdm(_studies(truth, n_studies, seed), desc=f"lag-1 {kind} b1={truth:+g}", disable=not progress,
                          unit=" study"):
            if kind == "binary":
                table = simulate_binary(n_workers, n_items, b0=-0.5, b1=truth, b2=2.0, worker_sd=0.5, seed=study)
            else:
                table = simulate_continuous(n_workers, n_items, b1=truth, centre=50.0, offset_sd=10.0,
                                            scale_range=(5.0, 15.0), seed=study)
            fit = fit_lag1(table)
            estimates.append(fit.b1)
            covered += bool(fit.b1_low <= truth <= fit.b1_high)
        name = f"lag-1 {kind}, defaults"
        setting = f"b1 = {truth:+.1f}, {n_workers} workers x {n_items} items"
        checks.append(within(name, setting, n_studies, "95% coverage", covered / n_studies, coverage_target,
                             coverage_ceiling))
        checks.append(at_most(name, setting, n_studies, "mean bias", float(np.mean(estimates)) - truth, bias_target,
                              absolute=True))
    return checks


def simulate_task_study(n_workers: int = 40, tasks_per_worker: int = 40, *, b1: float = 0.0, k: int = 1,
                        difficulty_sd: float = 1.0, worker_sd: float = 0.5, datasets: Sequence[str] = ("D1", "D2"),
                        systems: Sequence[str] = ("GT", "E2E", "REL"), seed: int = 0) -> pd.DataFrame:
    """A judgements table (columns ``worker, task_key, item_id, position, outcome, dataset, system, is_control,
    start, end``) with a known lag ``b1`` on the task outcome "every region verified".

    Workers come in groups of ``k`` that judge the same items, each in their own random order; every item
    (a chunk x system) has a difficulty ``N(0, difficulty_sd)`` on the logit scale, every worker a bias
    ``N(0, worker_sd)``, every dataset x system cell its own base rate. A failed task has at least one region
    edited or removed.
    """
    rng = np.random.default_rng(seed)
    cells = [(d, s) for d in datasets for s in systems]
    base = dict(zip(cells, rng.uniform(0.5, 2.0, len(cells)), strict=True))
    rows: list[tuple[object, ...]] = []
    n_groups = -(-n_workers // k)
    for group in range(n_groups):
        cell_of = [cells[i] for i in rng.integers(0, len(cells), tasks_per_worker)]
        difficulty = rng.normal(0.0, difficulty_sd, tasks_per_worker)
        regions = 1 + np.minimum(rng.poisson(1.5, tasks_per_worker), 5)
        for member in range(k):
            worker = group * k + member
            if worker >= n_workers:
                break
            bias = rng.normal(0.0, worker_sd)
            previous = 0.0
            for position, item in enumerate(rng.permutation(tasks_per_worker)):
                dataset, system = cell_of[item]
                logit = base[(dataset, system)] + difficulty[item] + bias + (b1 * previous if position else 0.0)
                success = rng.random() < 1.0 / (1.0 + np.exp(-logit))
                n_regions = int(regions[item])
                if success:
                    outcomes = ["verify"] * n_regions
                else:
                    failed = rng.random(n_regions) < 0.5
                    failed[rng.integers(n_regions)] = True
                    outcomes = [str(rng.choice(["edit", "remove"])) if f else "verify" for f in failed]
                for region, outcome in enumerate(outcomes):
                    rows.append((f"w{worker:03d}", f"t{worker:03d}-{item:04d}", f"g{group:03d}-{item:04d}", position,
                                 outcome, dataset, system, False, 10 * region, 10 * region + 5))
                previous = float(success)
    return pd.DataFrame(rows, columns=["worker", "task_key", "item_id", "position", "outcome", "dataset", "system",
                                       "is_control", "start", "end"])


def study_test_checks(*, n_studies: int = 200, n_workers: int = 40, tasks_per_worker: int = 40, k: int = 1,
                      lag: float = 0.4, difficulty_sd: float = 1.0, lag_difficulty_sd: float = 0.5, seed: int = 0,
                      rejection_target: float = 0.06, coverage_target: float = 0.93, rejection_floor: float = 0.0,
                      coverage_ceiling: float = 1.0, progress: bool = False) -> list[Check]:
    """False-positive rate of the 5% test on null studies and coverage of b1 under a known ``lag``.

    Null studies have chunk difficulty ``N(0, difficulty_sd)``; lag studies ``N(0, lag_difficulty_sd)``
    (difficulty the model does not see attenuates a logistic coefficient, so the lag runs use a milder spread).
    """
    name = f"study-level sequence test (tasks), k = {k}"
    size = f"{n_workers} workers x {tasks_per_worker} tasks"
    rejected = 0
    for study in tqdm(_studies(0.0, n_studies, seed + 1), desc="study test, null", disable=not progress,
                      unit=" study"):
        judgements = simulate_task_study(n_workers, tasks_per_worker, b1=0.0, k=k, difficulty_sd=difficulty_sd,
                                         seed=study)
        fit = fit_lag1(sequence_table_from_judgements(judgements))
        rejected += bool(fit.b1_p < 0.05)
    covered, estimates = 0, []
    for study in tqdm(_studies(lag, n_studies, seed + 2), desc=f"study test, b1={lag:+g}", disable=not progress,
                      unit=" study"):
        judgements = simulate_task_study(n_workers, tasks_per_worker, b1=lag, k=k, difficulty_sd=lag_difficulty_sd,
                                         seed=study)
        fit = fit_lag1(sequence_table_from_judgements(judgements))
        estimates.append(fit.b1)
        covered += bool(fit.b1_low <= lag <= fit.b1_high)
    return [
        within(name, f"null, difficulty sd {difficulty_sd:g}, {size}", n_studies, "rejects at 5%",
               rejected / n_studies, rejection_floor, rejection_target) if rejection_floor > 0 else
        at_most(name, f"null, difficulty sd {difficulty_sd:g}, {size}", n_studies, "rejects at 5%",
                rejected / n_studies, rejection_target),
        within(name, f"b1 = {lag:+.1f}, difficulty sd {lag_difficulty_sd:g}, {size}", n_studies, "95% coverage",
               covered / n_studies, coverage_target, coverage_ceiling),
        Check(name, f"b1 = {lag:+.1f}, difficulty sd {lag_difficulty_sd:g}, {size}", n_studies, "mean bias",
              float(np.mean(estimates)) - lag, "(reported)", True),
    ]


def _study_rejections(study: int, truth: float, n_workers: int, tasks_per_worker: int, k: int, difficulty_sd: float,
                      n_permutations: int) -> dict[tuple[str, str], bool]:
    """Whether each test rejects at 5% on one simulated study, by ``(label, test)``: ``wald`` (b1's jackknife
    p < 0.05) and ``randomisation`` (p <= 0.05)."""
    judgements = simulate_task_study(n_workers, tasks_per_worker, b1=truth, k=k, difficulty_sd=difficulty_sd,
                                     seed=study)
    rejected = {}
    for label in TASK_LABELS:
        table = sequence_table_from_judgements(judgements, label=label)
        rejected[(label, "wald")] = bool(fit_lag1(table).b1_p < 0.05)
        rejected[(label, "randomisation")] = bool(
            order_randomisation_test(table, n_permutations=n_permutations, seed=study).p_value <= 0.05)
    return rejected


def _rejections(n_studies: int, truth: float, *, n_workers: int, tasks_per_worker: int, k: int, difficulty_sd: float,
                seed: int, n_permutations: int, processes: int, progress: bool) -> dict[tuple[str, str], float]:
    """Share of ``n_studies`` studies each test rejects at 5%, by ``(label, test)``, both tests on the same
    studies (``processes`` > 1: studies spread over that many processes; the same shares)."""
    studies = _studies(truth, n_studies, seed)
    task = partial(_study_rejections, truth=truth, n_workers=n_workers, tasks_per_worker=tasks_per_worker, k=k,
                   difficulty_sd=difficulty_sd, n_permutations=n_permutations)
    bar = {"desc": f"randomisation test, b1={truth:+g}", "disable": not progress, "unit": " study",
           "total": n_studies}
    if processes > 1:
        with ProcessPoolExecutor(max_workers=processes) as pool:
            results = list(tqdm(pool.map(task, studies, chunksize=10), **bar))
    else:
        results = [task(study) for study in tqdm(studies, **bar)]
    return {key: sum(result[key] for result in results) / n_studies for key in results[0]}


def randomisation_test_checks(*, n_studies: int = 200, n_workers: int = 40, tasks_per_worker: int = 40, k: int = 3,
                              lag: float = 0.4, difficulty_sd: float = 1.0, lag_difficulty_sd: float = 0.5,
                              n_permutations: int = 999, power_studies: int | None = None, seed: int = 0,
                              rejection_band: tuple[float, float] = (0.03, 0.07), power_loss: float = 0.03,
                              processes: int = 1, progress: bool = False) -> list[Check]:
    """Size and power of the study-level randomisation test beside the jackknife Wald test, per task label.

    ``n_studies`` null studies (chunk difficulty ``N(0, difficulty_sd)``) and ``power_studies`` (default: as
    many) with a known ``lag`` on the task outcome (difficulty ``N(0, lag_difficulty_sd)``), ``k`` workers an
    item, both tests on the same studies; ``processes`` spreads the studies over processes. Targets: the
    randomisation test's null rejections within ``rejection_band``; its power at most ``power_loss`` below the
    Wald test's on the same lagged studies. The Wald test's figures are reported.
    """
    size = f"{n_workers} workers x {tasks_per_worker} tasks"
    n_lagged = power_studies if power_studies is not None else n_studies
    null, lagged = (
        _rejections(runs, truth, n_workers=n_workers, tasks_per_worker=tasks_per_worker, k=k, difficulty_sd=sd,
                    seed=seed + offset, n_permutations=n_permutations, processes=processes, progress=progress)
        for runs, truth, sd, offset in ((n_studies, 0.0, difficulty_sd, 3), (n_lagged, lag, lag_difficulty_sd, 4)))
    null_setting = f"null, difficulty sd {difficulty_sd:g}, {size}"
    lag_setting = f"b1 = {lag:+.1f}, difficulty sd {lag_difficulty_sd:g}, {size}"
    checks = []
    for label in TASK_LABELS:
        exact = f"study-level randomisation test ({label}), k = {k}"
        wald = f"study-level sequence test, jackknife Wald ({label}), k = {k}"
        checks += [
            within(exact, null_setting, n_studies, "rejects at 5%", null[(label, "randomisation")], *rejection_band),
            Check(wald, null_setting, n_studies, "rejects at 5%", null[(label, "wald")], "(reported)", True),
            Check(exact, lag_setting, n_lagged, "power at 5%", lagged[(label, "randomisation")], "(reported)", True),
            Check(wald, lag_setting, n_lagged, "power at 5%", lagged[(label, "wald")], "(reported)", True),
            at_least(exact, lag_setting, n_lagged, "power minus Wald's",
                     lagged[(label, "randomisation")] - lagged[(label, "wald")], -power_loss),
        ]
    return checks
