"""Validity of extending a study at its pilot (issue 28): does going on until the predicted half-width meets a target
bias the rates or their intervals?

Each simulated study draws a seeded ranking of documents from one synthetic population with known posthoc
precision and recall per system (:func:`posthoc.synthetic.synthetic_study`, k = 1, the population of
:func:`posthoc.validity.metrics.precision_recall_checks`) and plans the first ``plan_docs``. Three rules, on the same
studies and the same ranking:

* **fixed** (the reference): the plan as it is, scored whole;
* **extended at the pilot**: the first ``pilot_share`` of the plan is judged; from its outcome rates the planner
  predicts every cell's half-width at the end of the plan (:func:`posthoc.study.planner.rates.rates_from_pilot`,
  :func:`posthoc.study.planner.analytic.ratio_moments`: what ``posthoc score``'s "Stop now or go on" table and
  ``posthoc study estimate --pilot`` give); when a cell is over ``target``, the plan grows by the next documents of
  the same ranking, the fewest (bisected) that bring every such cell's predicted half-width under the target (at
  most ``max_docs``); the whole, pilot included, is then scored;
* **peeking** (a deliberately biased rule, to show the check can fail): each cell, after the pilot and then every
  ``step`` documents, stops as soon as its rate looks extreme, its normal 95% interval ``p +- 1.96 sqrt(p (1 - p) /
  n)`` excluding the rate the owner expected (here the truth); else it goes on to ``max_docs`` (sampling to a
  foregone conclusion).

Every final estimate is scored by the real code on its defaults (:func:`posthoc.metrics.rates_with_intervals`:
1000 bootstrap resamples of documents, BCa); coverage of the truth by its 95% interval and the mean error per
system and rate are checked against the bands the other estimators use (``bench/validity_bench.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Final

import numpy as np
import pandas as pd
from tqdm import tqdm

from posthoc.arrays import Floats
from posthoc.metrics import rates_with_intervals
from posthoc.validity import Check, at_most, within

RULES: Final = ("fixed", "extended at the pilot", "peeking")
MEASURED: Final = ("posthoc_precision", "posthoc_recall")
TRUE_VERIFY: Final[Mapping[str, float]] = {"GT": 0.85, "E2E": 0.92, "REL": 0.88}


@dataclass(frozen=True)
class AdaptiveDesign:
    """The simulated studies: population, plan, pilot, target and the extension's ceiling."""

    plan_docs: int = 60
    pilot_share: float = 0.25
    target: float = 0.04
    max_docs: int = 180
    step: int = 5
    population_docs: int = 4000
    mentions_per_doc: float = 6.0


def _keyed(table: pd.DataFrame) -> dict[tuple[str, str], tuple[float, float, float]]:
    """``(system, metric) -> (value, low, high)`` of the headline rates of one dataset's rates table."""
    part = table.loc[table["metric"].isin(MEASURED)]
    return {(str(s), str(m)): (float(v), float(lo), float(hi)) for s, m, v, lo, hi in
            part[["system", "metric", "value", "low", "high"]].itertuples(index=False, name=None)}


def predicted_widths(rows: pd.DataFrame, pilot: pd.DataFrame, rank: Mapping[str, int]) -> Callable[[int], Floats]:
    """A function of ``n``: the planner's expected 95% half-width of every cell's precision and recall (cells x 2,
    NaN as infinite) if the first ``n`` ranked documents of ``rows`` were judged, at the ``pilot``'s outcome
    rates (the study's shape is built once)."""
    from posthoc.study.planner.analytic import ratio_moments
    from posthoc.study.planner.rates import rates_from_pilot
    from posthoc.study.planner.replicates import Z95
    from posthoc.study.planner.shape import StudyShape

    # k = 1: only the shares matter (the judge consistency, from a kappa of two judges or more, does not)
    rates = rates_from_pilot(pilot[["dataset", "system", "outcome", "is_control"]])
    shape = StudyShape.from_judgements(rows.assign(outcome=None), k=1)
    verify = shape.shares(rates)[:, 0]
    doc_rank = shape.doc_keys["doc_id"].astype(str).map(rank).to_numpy()

    def at(n: int) -> Floats:
        moments = ratio_moments(shape, verify, rates.consistency, selected=doc_rank < n)
        return np.nan_to_num(Z95 * np.concatenate([moments[m][1] for m in MEASURED]), nan=np.inf)

    return at


def extended_size(rows: pd.DataFrame, rank: Mapping[str, int], design: AdaptiveDesign) -> int:
    """Documents judged under the "extended at the pilot" rule (module docstring): the plan, or the fewest more
    documents of the ranking that bring every cell over the target at the plan's end under it."""
    pilot_n = max(2, round(design.pilot_share * design.plan_docs))
    widths = predicted_widths(rows, rows.loc[rows["doc_id"].map(rank) < pilot_n], rank)
    over = widths(design.plan_docs) > design.target
    if not over.any():
        return design.plan_docs
    low, high = design.plan_docs, design.max_docs
    if widths(high)[over].max() > design.target:
        return high
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if widths(middle)[over].max() <= design.target else (middle, high)
    return high


def peeking_sizes(rows: pd.DataFrame, rank: Mapping[str, int], truths: Mapping[tuple[str, str], float],
                  design: AdaptiveDesign) -> dict[tuple[str, str], int]:
    """Documents judged for each cell and rate under the biased "peeking" rule (module docstring). The running
    rates are counted per ranked document (k = 1, the exact union: precision = verified / judged, recall =
    verified / the union of verified annotations, as :func:`posthoc.metrics.rates_with_intervals` counts them)."""
    position = rows["doc_id"].map(rank).to_numpy()
    verified = (rows["outcome"] == "verify").to_numpy()
    systems = sorted({system for system, _ in truths})
    system = pd.Index(systems).get_indexer(pd.Index(rows["system"].astype(str)))
    judged = np.zeros((design.max_docs, len(systems)))
    hits = np.zeros((design.max_docs, len(systems)))
    np.add.at(judged, (position, system), 1.0)
    np.add.at(hits, (position, system), verified.astype(float))
    members = rows.loc[verified].drop_duplicates(["doc_id", "start", "end", "link"])
    union = np.bincount(members["doc_id"].map(rank).to_numpy(), minlength=design.max_docs).astype(float)
    judged_so_far, hits_so_far, union_so_far = judged.cumsum(axis=0), hits.cumsum(axis=0), union.cumsum()
    looks = range(max(2, round(design.pilot_share * design.plan_docs)), design.max_docs, design.step)
    sizes: dict[tuple[str, str], int] = {}
    for (name, metric), truth in truths.items():
        s = systems.index(name)
        sizes[(name, metric)] = design.max_docs
        for n in looks:
            base = judged_so_far[n - 1, s] if metric == "posthoc_precision" else union_so_far[n - 1]
            value = hits_so_far[n - 1, s] / max(base, 1.0)
            if abs(value - truth) > 1.96 * np.sqrt(max(value * (1 - value), 1e-12) / max(base, 1.0)):
                sizes[(name, metric)] = n
                break
    return sizes


@dataclass
class RuleOutcome:
    """What one rule gave over the studies: intervals covering the truth and errors per ``(system, metric)``,
    documents judged per study."""

    covered: dict[tuple[str, str], int]
    errors: dict[tuple[str, str], list[float]]
    sizes: list[int]


@dataclass(frozen=True)
class Simulated:
    """The population's ``truths`` per ``(system, metric)`` and each rule's :class:`RuleOutcome`."""

    truths: dict[tuple[str, str], float]
    outcomes: dict[str, RuleOutcome]
    n_studies: int
    design: AdaptiveDesign


def _sizes(rule: str, rows: pd.DataFrame, rank: Mapping[str, int], truths: Mapping[tuple[str, str], float],
           design: AdaptiveDesign) -> dict[tuple[str, str], int]:
    """Documents behind each cell's final estimate under ``rule``."""
    if rule == "peeking":
        return peeking_sizes(rows, rank, truths, design)
    n = design.plan_docs if rule == "fixed" else extended_size(rows, rank, design)
    return dict.fromkeys(truths, n)


def simulate_rules(*, n_studies: int = 400, design: AdaptiveDesign | None = None, seed: int = 0,
                   rules: tuple[str, ...] = RULES, progress: bool = False) -> Simulated:
    """Run ``n_studies`` studies (module docstring) under each of ``rules`` (names of :data:`RULES`)."""
    from posthoc.synthetic import synthetic_study

    design = design or AdaptiveDesign()
    _, _, population = synthetic_study(design.population_docs, datasets=("SIM",), verify_prob=TRUE_VERIFY,
                                       mentions_per_doc=design.mentions_per_doc, n_control=0, seed=seed + 999_999)
    population = population.loc[~population["is_control"].astype(bool)].reset_index(drop=True)
    population = population.assign(doc_id=population["doc_id"].astype(str))
    truths = {key: value for key, (value, _, _) in _keyed(rates_with_intervals(population, n_resamples=0)).items()}
    codes, documents = pd.factorize(population["doc_id"])
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(len(documents) + 1))
    rng = np.random.default_rng(seed)
    outcomes = {rule: RuleOutcome(dict.fromkeys(truths, 0), {key: [] for key in truths}, []) for rule in rules}
    for repeat in tqdm(range(n_studies), desc="extending at the pilot", disable=not progress, unit=" study"):
        ranking = rng.choice(len(documents), size=design.max_docs, replace=False)
        rank = {str(documents[d]): i for i, d in enumerate(ranking)}
        picked = np.concatenate([order[bounds[d]:bounds[d + 1]] for d in np.sort(ranking)])
        rows = population.iloc[picked].reset_index(drop=True)
        position = rows["doc_id"].map(rank)
        for rule, outcome in outcomes.items():
            sizes = _sizes(rule, rows, rank, truths, design)
            scored = {n: _keyed(rates_with_intervals(rows.loc[position < n], seed=repeat)) for n in set(sizes.values())}
            outcome.sizes.append(max(sizes.values()))
            for key, truth in truths.items():
                value, low, high = scored[sizes[key]][key]
                outcome.covered[key] += bool(low <= truth <= high)
                outcome.errors[key].append(value - truth)
    return Simulated(truths=truths, outcomes=outcomes, n_studies=n_studies, design=design)


def adaptive_checks(simulated: Simulated, *, coverage_band: tuple[float, float] = (0.93, 0.97),
                    bias_target: float = 0.01) -> list[Check]:
    """Coverage (within ``coverage_band``) and mean bias (``|x| <= bias_target``) per system and rate for every
    rule run but the peeking one, which is reported beside them (it is meant to fail); and how many documents
    each rule judged."""
    checks: list[Check] = []
    n, design = simulated.n_studies, simulated.design
    for rule, outcome in simulated.outcomes.items():
        name = f"posthoc rates, {rule}"
        for (system, metric), truth in sorted(simulated.truths.items()):
            setting = (f"{system} {metric.split('_')[1]}, truth {truth:.3f}, plan {design.plan_docs} docs, "
                       f"target +-{design.target:g}")
            coverage = outcome.covered[(system, metric)] / n
            bias = float(np.mean(outcome.errors[(system, metric)]))
            if rule == "peeking":
                checks.append(Check(name, setting, n, "95% coverage", coverage, "(reported)", True))
                continue
            checks.append(within(name, setting, n, "95% coverage", coverage, *coverage_band))
            checks.append(at_most(name, setting, n, "mean bias", bias, bias_target, absolute=True))
        sizes = np.asarray(outcome.sizes, dtype=float)
        checks.append(Check(name, f"pilot {design.pilot_share:g} of the plan, at most {design.max_docs} docs", n,
                            "mean documents judged", float(sizes.mean()), "(reported)", True))
        checks.append(Check(name, f"pilot {design.pilot_share:g} of the plan, at most {design.max_docs} docs", n,
                            "share of studies beyond the plan", float((sizes > design.plan_docs).mean()),
                            "(reported)", True))
    return checks


def pooled_coverage(simulated: Simulated, rule: str) -> float:
    """The share of every interval of ``rule`` (all systems and rates, all studies) that covers its truth."""
    outcome = simulated.outcomes[rule]
    return sum(outcome.covered.values()) / (simulated.n_studies * len(simulated.truths))
