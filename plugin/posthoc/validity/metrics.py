"""Validity of the posthoc verification metrics (seed 000 sections 3.2 and 4.1) on simulations with known truth.

- :func:`precision_recall_checks`: posthoc precision and recall with the document bootstrap
  (:func:`posthoc.metrics.rates_with_intervals` on its defaults: 1,000 resamples of documents) over many
  studies, each a random sample of documents from one large synthetic population
  (:func:`posthoc.synthetic.synthetic_study`, k = 1); the truth is the population's precision and recall.
  (A study simulated whole fixes every system's number of annotations, which documents sampled from a
  population do not: there the bootstrap of recall, rightly, is wider than the spread across such studies.)
  The same studies check the paired difference of every pair of systems (:func:`~posthoc.metrics.compare_systems`)
  against the population's difference, and, with ``methods``, report the old percentile intervals beside BCa.
- :func:`paired_size_checks`: the paired test's rejections at 5% when two systems are equal (whole studies).
Both take document effects (:mod:`posthoc.synthetic`: a difficulty each document shares across systems and a
system x document term, issue 46); at 20 documents with them the paired bootstrap (BCa, the method before issue 46)
rejects too often and the default cluster jackknife t holds its level.
- :func:`majority_checks`: k = 3, an annotation verified when at least 2 of 3 judges verify it: truth
  ``p^3 + 3 p^2 (1 - p)``.
- :func:`agreement_checks`: Fleiss' kappa and Krippendorff's alpha of :func:`~posthoc.metrics.score_judgements`
  against statsmodels' ``fleiss_kappa`` and the ``krippendorff`` package on the same k = 3 studies.
- :func:`dawid_skene_checks`: workers of known accuracy (each judgement right with probability ``a_w``, else one
  of the two other outcomes at random); Dawid-Skene's estimated accuracies against the truth, and its labels
  against majority vote.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from tqdm import tqdm

from posthoc.metrics import ScoringOptions, compare_systems, rates_with_intervals, score_judgements
from posthoc.metrics.intervals import DEFAULT_INTERVAL
from posthoc.metrics.reliability import dawid_skene_workers, majority_vote
from posthoc.synthetic import synthetic_study
from posthoc.tables import OUTCOMES
from posthoc.validity import Check, at_most, within

TRUE_VERIFY: Mapping[str, float] = {"GT": 0.85, "E2E": 0.92, "REL": 0.88}


def _rates(judgements: pd.DataFrame, **options: Any) -> dict[tuple[str, str], tuple[float, float, float]]:
    """``(system, metric) -> (value, low, high)`` of :func:`rates_with_intervals` on one dataset."""
    return _keyed(rates_with_intervals(judgements, **options))


def _keyed(table: pd.DataFrame) -> dict[tuple[str, str], tuple[float, float, float]]:
    return {(str(s), str(m)): (float(v), float(lo), float(hi)) for s, m, v, lo, hi in
            table[["system", "metric", "value", "low", "high"]].itertuples(index=False, name=None)}


def _differences(table: pd.DataFrame) -> dict[tuple[str, str], tuple[float, float, float, float]]:
    """``("A - B", metric) -> (difference, ci_low, ci_high, p_value)`` of a comparisons table."""
    return {(f"{a} - {b}", str(m)): (float(d), float(lo), float(hi), float(p)) for a, b, m, d, lo, hi, p in
            table[["system_a", "system_b", "metric", "difference", "ci_low", "ci_high", "p_value"]].itertuples(
                index=False, name=None)}


def _band(name: str, setting: str, runs: int, share: float, low: float, high: float) -> Check:
    return within(name, setting, runs, "95% coverage", share, low, high)


def precision_recall_checks(*, n_studies: int = 200, n_docs: int = 40, population_docs: int = 4000, seed: int = 0,
                            coverage_target: float = 0.93, coverage_ceiling: float = 1.0, bias_target: float = 0.01,
                            methods: Sequence[str] = (DEFAULT_INTERVAL,), doc_effect_sd: float = 0.0,
                            system_doc_sd: float = 0.0, progress: bool = False) -> list[Check]:
    """Coverage and mean bias of posthoc precision and recall per system, and coverage of the paired difference of
    every pair of systems (known from the population), on the defaults of :func:`compare_systems`.

    The document bootstrap treats a study's documents as a sample of a larger population: each simulated study
    draws ``n_docs`` documents without replacement from one synthetic population of ``population_docs`` (every
    annotation judged once), and the truth is the population's own precision, recall and their differences.
    ``methods``: the interval methods run on the same studies; the first is checked against the band
    ``coverage_target``-``coverage_ceiling``, the others are reported beside it (the old ``percentile`` method).
    ``doc_effect_sd`` / ``system_doc_sd``: the population's document effects (logit scale; 0: none).
    """
    study: dict[str, Any] = {"datasets": ("SIM",), "verify_prob": TRUE_VERIFY, "mentions_per_doc": 6, "n_control": 0,
                             "doc_effect_sd": doc_effect_sd, "system_doc_sd": system_doc_sd}
    _, _, population = synthetic_study(population_docs, **study, seed=seed + 999_999)
    population = population.loc[~population["is_control"].astype(bool)].reset_index(drop=True)
    whole_rates, whole_pairs = compare_systems(population, n_resamples=0)
    measured = ("posthoc_precision", "posthoc_recall")
    truths = {key: value for key, (value, _, _) in _keyed(whole_rates).items() if key[1] in measured}
    pair_truths = {key: value[0] for key, value in _differences(whole_pairs).items() if key[1] in measured}
    documents = population["doc_id"].unique()
    rng = np.random.default_rng(seed)
    covered = {method: dict.fromkeys([*truths, *pair_truths], 0) for method in methods}
    errors: dict[tuple[str, str], list[float]] = {key: [] for key in truths}
    for repeat in tqdm(range(n_studies), desc="precision / recall", disable=not progress, unit=" study"):
        chosen = set(rng.choice(documents, size=n_docs, replace=False).tolist())
        sample = population.loc[population["doc_id"].isin(chosen)]
        for method in methods:
            table, pairs = compare_systems(sample, seed=repeat, interval=method)
            rates, differences = _keyed(table), _differences(pairs)
            for key, truth in truths.items():
                covered[method][key] += bool(rates[key][1] <= truth <= rates[key][2])
                if method == methods[0]:
                    errors[key].append(rates[key][0] - truth)
            for key, truth in pair_truths.items():
                covered[method][key] += bool(differences[key][1] <= truth <= differences[key][2])
    checks = []
    where = f"{n_docs} of {population_docs} docs, k = 1{_effects(doc_effect_sd, system_doc_sd)}"
    for (system, metric), truth in sorted(truths.items()):
        name = f"posthoc {metric.split('_')[1]}, document bootstrap"
        setting = f"{system}, truth {truth:.3f}, {where}"
        checks.append(_band(name, setting, n_studies, covered[methods[0]][(system, metric)] / n_studies,
                            coverage_target, coverage_ceiling))
        checks.append(at_most(name, setting, n_studies, "mean bias", float(np.mean(errors[(system, metric)])),
                              bias_target, absolute=True))
    for (pair, metric), truth in sorted(pair_truths.items()):
        checks.append(_band(f"paired difference, posthoc {metric.split('_')[1]}", f"{pair}, truth {truth:+.3f}, "
                            f"{where}", n_studies, covered[methods[0]][(pair, metric)] / n_studies, coverage_target,
                            coverage_ceiling))
    for method in methods[1:]:  # the same studies, another interval method: reported beside the default
        for key in sorted([*truths, *pair_truths]):
            kind = "paired difference, " if key in pair_truths else ""
            checks.append(Check(f"{kind}posthoc {key[1].split('_')[1]}, {method} (old method)",
                                f"{key[0]}, {where}", n_studies, "95% coverage", covered[method][key] / n_studies,
                                "(reported)", True))
    return checks


def _effects(doc_effect_sd: float, system_doc_sd: float) -> str:
    """A setting's document effects in words (empty without)."""
    if doc_effect_sd == 0 and system_doc_sd == 0:
        return ""
    return f", doc effect sd {doc_effect_sd:g}, system x doc sd {system_doc_sd:g}"


def paired_size_checks(*, n_studies: int = 200, n_docs: int = 40, seed: int = 0, rejection_band: tuple[float, float]
                       = (0.0, 0.06), doc_effect_sd: float = 0.0, system_doc_sd: float = 0.0,
                       old_method: bool = False, progress: bool = False) -> list[Check]:
    """Size of the paired test when two systems are equal: E2E and REL with the same verify probability (0.88)
    in whole simulated studies, so their true difference is 0; the share of studies where the 5% test of the
    posthoc precision difference rejects (:func:`compare_systems` defaults, one pair of three). With document
    effects the two systems' true rates stay equal (the same spread of the same logit). ``old_method``: the
    paired bootstrap (BCa, the default before issue 46) on the same studies, reported beside it."""
    probability = {"GT": 0.85, "E2E": 0.88, "REL": 0.88}
    methods = (None, "bca") if old_method else (None,)
    rejected = dict.fromkeys(methods, 0)
    for repeat in tqdm(range(n_studies), desc="paired size", disable=not progress, unit=" study"):
        _, _, judgements = synthetic_study(n_docs, datasets=("EQ",), verify_prob=probability, mentions_per_doc=6,
                                           n_control=0, seed=seed * 10_000 + 3_000 + repeat,
                                           doc_effect_sd=doc_effect_sd, system_doc_sd=system_doc_sd)
        for method in methods:
            _, pairs = compare_systems(judgements, seed=repeat, paired_interval=method)
            rejected[method] += bool(_differences(pairs)[("E2E - REL", "posthoc_precision")][3] < 0.05)
    setting = f"E2E = REL (verify 0.88), {n_docs} docs, k = 1{_effects(doc_effect_sd, system_doc_sd)}"
    checks = [within("paired difference test, posthoc precision", setting, n_studies, "rejects at 5%",
                     rejected[None] / n_studies, *rejection_band)]
    if old_method:
        checks.append(Check("paired difference test, posthoc precision, bca bootstrap (old method)", setting,
                            n_studies, "rejects at 5%", rejected["bca"] / n_studies, "(reported)", True))
    return checks


def majority_checks(*, n_studies: int = 100, n_docs: int = 40, seed: int = 0, coverage_target: float = 0.93,
                    coverage_ceiling: float = 1.0, bias_target: float = 0.01, progress: bool = False) -> list[Check]:
    """Coverage and mean bias of the k = 3 majority verification rate per system."""
    p = {"GT": 0.7, "E2E": 0.8, "REL": 0.6}
    truths = {s: q**3 + 3 * q**2 * (1 - q) for s, q in p.items()}
    covered = dict.fromkeys(p, 0)
    errors: dict[str, list[float]] = {s: [] for s in p}
    for repeat in tqdm(range(n_studies), desc="k = 3 majority", disable=not progress, unit=" study"):
        _, _, judgements = synthetic_study(n_docs, datasets=("K3",), k=3, verify_prob=p, mentions_per_doc=4,
                                           n_control=0, seed=seed * 10_000 + 5_000 + repeat)
        rates = _rates(judgements, seed=repeat)
        for system, truth in truths.items():
            value, low, high = rates[(system, "verification_rate")]
            covered[system] += bool(low <= truth <= high)
            errors[system].append(value - truth)
    checks = []
    for system, truth in truths.items():
        setting = f"{system}, judge p {p[system]:g}, truth {truth:.3f}, {n_docs} docs"
        checks.append(_band("k = 3 majority verification rate", setting, n_studies, covered[system] / n_studies,
                            coverage_target, coverage_ceiling))
        checks.append(at_most("k = 3 majority verification rate", setting, n_studies, "mean bias",
                              float(np.mean(errors[system])), bias_target, absolute=True))
    return checks


def agreement_checks(*, n_studies: int = 20, n_docs: int = 10, seed: int = 0, tolerance: float = 1e-12) -> list[Check]:
    """Largest difference of Fleiss' kappa and Krippendorff's alpha from statsmodels / krippendorff."""
    import krippendorff
    from statsmodels.stats.inter_rater import fleiss_kappa

    from posthoc.metrics.verification import annotation_verdicts

    worst = {"fleiss_kappa": 0.0, "krippendorff_alpha": 0.0}
    for repeat in range(n_studies):
        _, mentions, judgements = synthetic_study(n_docs, k=3, n_control=0, seed=seed * 10_000 + 7_000 + repeat,
                                                  verify_prob={"GT": 0.6, "E2E": 0.75, "REL": 0.7})
        scores = score_judgements(judgements, mentions, options=ScoringOptions(n_resamples=0))
        verdicts = annotation_verdicts(judgements)
        for dataset, part in verdicts.groupby("dataset"):
            counts = part[[f"n_{o}" for o in OUTCOMES]].to_numpy()
            ours = scores.reliability.set_index(["dataset", "measure"])["value"]
            peer_kappa = fleiss_kappa(counts, method="fleiss")
            reliability = np.vstack([np.repeat(np.arange(3), row) for row in counts]).T.astype(float)
            peer_alpha = krippendorff.alpha(reliability_data=reliability, level_of_measurement="nominal")
            worst["fleiss_kappa"] = max(worst["fleiss_kappa"], abs(ours[(dataset, "fleiss_kappa")] - peer_kappa))
            worst["krippendorff_alpha"] = max(worst["krippendorff_alpha"],
                                              abs(ours[(dataset, "krippendorff_alpha")] - peer_alpha))
    return [
        at_most("Fleiss' kappa vs statsmodels", f"k = 3, {n_docs} docs x 2 datasets", n_studies, "max |difference|",
                worst["fleiss_kappa"], tolerance),
        at_most("Krippendorff's alpha vs krippendorff", f"k = 3, {n_docs} docs x 2 datasets", n_studies,
                "max |difference|", worst["krippendorff_alpha"], tolerance),
    ]


def simulate_known_workers(n_items: int = 600, n_workers: int = 12, judges: int = 5, *, seed: int = 0
                           ) -> tuple[pd.DataFrame, pd.Series, pd.Series]:
    """``(judgements, true outcome per item, true accuracy per worker)``: each item judged by ``judges`` of
    ``n_workers`` workers drawn at random; a worker gives the true outcome with probability ``accuracy``
    (uniform in 0.55-0.95), else one of the two others at random."""
    rng = np.random.default_rng(seed)
    accuracy = pd.Series(rng.uniform(0.55, 0.95, n_workers), index=[f"w{i:02d}" for i in range(n_workers)])
    truth = rng.choice(len(OUTCOMES), size=n_items, p=[0.7, 0.2, 0.1])
    rows = []
    for item in range(n_items):
        for worker in rng.choice(n_workers, size=judges, replace=False):
            right = rng.random() < accuracy.iloc[worker]
            label = truth[item] if right else (truth[item] + rng.integers(1, 3)) % 3
            rows.append(("DS", f"doc{item // 10:03d}", "SYS", (item % 10) * 10, (item % 10) * 10 + 5,
                         f"https://en.wikipedia.org/wiki/E{item}", accuracy.index[worker], OUTCOMES[label], False))
    judgements = pd.DataFrame(rows, columns=["dataset", "doc_id", "system", "start", "end", "link", "worker",
                                             "outcome", "is_control"])
    return judgements, pd.Series([OUTCOMES[t] for t in truth]), accuracy


def dawid_skene_checks(*, n_studies: int = 10, seed: int = 0, accuracy_target: float = 0.05) -> list[Check]:
    """Mean absolute error of Dawid-Skene's worker accuracies, and its label accuracy beside majority vote."""
    errors, ds_right, majority_right = [], [], []
    for repeat in range(n_studies):
        judgements, truth, accuracy = simulate_known_workers(seed=seed * 10_000 + 9_000 + repeat)
        labels, estimated = dawid_skene_workers(judgements)
        errors.append(float((estimated["accuracy"] - accuracy.reindex(estimated["worker"]).to_numpy()).abs().mean()))
        ds_right.append(float((labels.to_numpy() == truth.to_numpy()).mean()))
        majority_right.append(float((majority_vote(judgements).to_numpy() == truth.to_numpy()).mean()))
    setting = "12 workers of accuracy 0.55-0.95, 600 items x 5 judges"
    return [
        at_most("Dawid-Skene worker accuracy", setting, n_studies, "mean |error|", float(np.mean(errors)),
                accuracy_target),
        Check("Dawid-Skene labels", setting, n_studies, "share right", float(np.mean(ds_right)), "(reported)", True),
        within("Dawid-Skene labels", setting, n_studies, "minus majority vote",
                 float(np.mean(ds_right)) - float(np.mean(majority_right)), 0.0, 1.0),
    ]
