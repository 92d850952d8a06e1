"""The planner's exact half-widths and its noise figures (study.planner.analytic) against simulation and by hand."""

from __future__ import annotations

import numpy as np
import pytest

from posthoc.metrics import rates_with_intervals
from posthoc.study import StudyConfig, plan_study
from posthoc.study.planner.analytic import (
    agreement_log_sds,
    bootstrap_noise,
    plugin_log_halfwidths,
    ratio_moments,
    verified_probability,
)
from posthoc.study.planner.rates import OutcomeRates
from posthoc.study.planner.replicates import Z95, replicate_study
from posthoc.study.planner.shape import StudyShape
from posthoc.study.planner.simulate import plan_judgements, simulate_judgements
from posthoc.study.planner.validity import _per_dataset, agreement_bootstrap, true_rates
from posthoc.synthetic import synthetic_study


def _shape(n_docs: int, k: int, seed: int) -> tuple[StudyShape, OutcomeRates]:
    documents, mentions, _ = synthetic_study(n_docs, mentions_per_doc=4.0, seed=seed)
    plan = plan_study(documents, mentions, StudyConfig(name=f"exact-{k}", seed=seed, k=k))
    truth = _per_dataset(true_rates(seed), sorted(set(documents["dataset"])))
    return StudyShape.from_judgements(plan_judgements(plan), k=k), truth


def test_verified_probability_worked_by_hand() -> None:
    v, a = np.array([0.9, 0.6]), 0.5
    assert np.allclose(verified_probability(v, np.array([1, 1]), a), v)
    agree, differ = a + (1 - a) * v, (1 - a) * v  # a judge verifies: latent verify / latent not
    two_of_three = v * (3 * agree**2 * (1 - agree) + agree**3) + (1 - v) * (3 * differ**2 * (1 - differ) + differ**3)
    assert np.allclose(verified_probability(v, np.array([3, 3]), a), two_of_three)
    both = v * agree**2 + (1 - v) * differ**2  # k = 2: more than half is both
    assert np.allclose(verified_probability(v, np.array([2, 2]), a), both)


@pytest.mark.slow
@pytest.mark.parametrize("k", [1, 3], ids=["k=1", "k=3"])
def test_exact_half_widths_equal_the_spread_of_4000_simulated_studies(k: int) -> None:
    shape, truth = _shape(120, k, seed=11)
    simulated = replicate_study(shape, truth, runs=4000, seed=3, agreement=False).summary()
    exact = ratio_moments(shape, shape.shares(truth)[:, 0], truth.consistency)
    for metric, (expected, sd) in exact.items():
        rows = simulated[simulated["metric"] == metric]
        assert np.allclose(expected, rows["expected"], rtol=0.003)
        # 4000 runs: the simulated sd carries a 1.1% Monte Carlo error
        assert np.allclose(sd, rows["halfwidth_simulated"] / Z95, rtol=0.045), (metric, sd / rows["sd"])


def test_bootstrap_noise_is_the_spread_of_percentile_half_widths() -> None:
    assert bootstrap_noise(1000) == pytest.approx(0.0301, abs=5e-4)
    assert bootstrap_noise(4000) == pytest.approx(bootstrap_noise(1000) / 2)
    rng = np.random.default_rng(0)
    draws = rng.standard_normal((3000, 1000))  # 3000 bootstraps of 1000 resamples of a normal statistic
    low, high = np.quantile(draws, [0.025, 0.975], axis=1)
    widths = (high - low) / 2
    assert widths.std() / widths.mean() == pytest.approx(bootstrap_noise(1000), rel=0.1)


def test_the_plug_in_half_width_is_the_real_bootstraps() -> None:
    shape, truth = _shape(150, 1, seed=12)
    rng = np.random.default_rng(5)
    copies = np.arange(len(shape.doc_keys))
    layout = shape.expand(copies)
    verified = rng.random(len(layout[0])) < shape.shares(truth)[layout[0], 0]
    values = shape.statistics(copies, verified, layout=layout)
    logs = plugin_log_halfwidths(shape, copies, verified, values, layout=layout,
                                 copy_run=np.zeros(len(copies), dtype=np.int64), n_runs=1)
    real = rates_with_intervals(shape.as_judgements(copies, verified), n_resamples=8000, seed=1)
    for metric in ("posthoc_precision", "posthoc_recall"):
        rows = real[real["metric"] == metric].set_index(["dataset", "system"])
        rows = rows.reindex([tuple(c) for c in shape.cells.astype(str).to_numpy()])
        achieved = ((rows["high"] - rows["low"]) / 2).to_numpy()
        # 8000 resamples: 1.1% Monte Carlo error; the percentile interval of 150 documents is near normal
        assert np.allclose(Z95 * np.exp(logs[metric][0]), achieved, rtol=0.06), metric


@pytest.mark.slow
def test_the_plug_in_agreement_half_width_is_the_real_bootstraps() -> None:
    documents, mentions, _ = synthetic_study(150, mentions_per_doc=4.0, seed=13)
    plan = plan_study(documents, mentions, StudyConfig(name="kappa", seed=13, k=3))
    judgements = simulate_judgements(plan, OutcomeRates(consistency=0.6), seed=2)
    achieved = agreement_bootstrap(plan, judgements, n_resamples=3000, seed=4)
    shape = StudyShape.from_judgements(plan_judgements(plan), k=3)
    from posthoc.metrics.inputs import judged_rows
    from posthoc.metrics.verification import verdicts_of

    verdicts, _ = verdicts_of(judged_rows(judgements).reset_index(drop=True))
    verdicts = verdicts.sort_values(["dataset", "doc_id", "system", "start", "end", "link"], kind="stable")
    counts = verdicts[["n_verify", "n_edit", "n_remove"]].to_numpy()
    copies = np.arange(len(shape.doc_keys))
    annotation, copy = shape.expand(copies)
    logs = agreement_log_sds(counts[annotation], shape.doc_dataset[copies][copy], copy, len(shape.datasets))
    for metric in ("fleiss_kappa", "krippendorff_alpha"):
        real = achieved[achieved["metric"] == metric].set_index("dataset").reindex(list(shape.datasets))
        # 3000 resamples: 1.3% Monte Carlo error, plus the bootstrap's curvature on 150 documents
        assert np.allclose(Z95 * np.exp(logs[metric]), real["achieved"].to_numpy(), rtol=0.08), metric
