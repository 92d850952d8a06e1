"""Extending a study at its pilot does not bias the rates (issue 28), on simulated studies with known truth.

A small run of :func:`posthoc.study.planner.adaptive.simulate_rules` (the bench runs 400 studies): the rule "extend at
the pilot until the predicted half-width meets the target" must cover the truth as the fixed-size plan does, within a
loose band, with no bias; a deliberately biased rule (each cell stops as soon as its rate looks extreme) must fail
the same band, which shows the band can fail.
"""

from __future__ import annotations

import numpy as np
import pytest

from posthoc.study.planner.adaptive import AdaptiveDesign, Simulated, adaptive_checks, pooled_coverage, simulate_rules
from posthoc.validity import format_checks

STUDIES = 24
#: loose: 144 intervals a rule (24 studies x 3 systems x 2 rates), a standard error of about 0.018 at 0.95
BAND = (0.90, 0.99)


@pytest.fixture(scope="module")
def simulated() -> Simulated:
    return simulate_rules(n_studies=STUDIES, seed=7, design=AdaptiveDesign(population_docs=1500))


def test_extending_at_the_pilot_covers_the_truth_as_the_fixed_plan_does(simulated: Simulated) -> None:
    for rule in ("fixed", "extended at the pilot"):
        coverage = pooled_coverage(simulated, rule)
        assert BAND[0] <= coverage <= BAND[1], (rule, coverage)
        for key, errors in simulated.outcomes[rule].errors.items():
            assert abs(float(np.mean(errors))) <= 0.02, (rule, key)
    sizes = np.asarray(simulated.outcomes["extended at the pilot"].sizes)
    design = simulated.design
    assert (sizes >= design.plan_docs).all() and (sizes <= design.max_docs).all()
    # the pilot decides, study by study
    assert (sizes > design.plan_docs).mean() >= 0.3 and len(set(sizes.tolist())) >= 5
    assert set(simulated.outcomes["fixed"].sizes) == {design.plan_docs}


def test_a_rule_that_stops_when_the_rate_looks_extreme_fails_the_same_band(simulated: Simulated) -> None:
    coverage = pooled_coverage(simulated, "peeking")
    assert coverage < BAND[0], coverage
    assert coverage < pooled_coverage(simulated, "extended at the pilot") - 0.05


def test_the_checks_report_every_rule_and_cell_against_the_validity_bands(simulated: Simulated) -> None:
    checks = adaptive_checks(simulated)
    lines = format_checks(checks)
    assert len(lines) == len(checks) + 1
    gated = [c for c in checks if c.target == "0.93-0.97"]
    assert len(gated) == 2 * 6  # fixed and extended, 3 systems x 2 rates
    assert all(c.target == "(reported)" for c in checks if c.estimator.endswith("peeking"))
    assert any(c.measure == "mean bias" and c.target == "|x| <= 0.01" for c in checks)
