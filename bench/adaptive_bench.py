"""Validity of extending a study at its pilot (issue 28): coverage and bias of the final rates, beside the fixed plan.

``N`` simulated studies (default 400) with known true posthoc precision and recall per system
(:mod:`posthoc.study.planner.adaptive`): each judges a pilot of a quarter of its 60-document plan, predicts every
cell's 95% half-width at the end of the plan from the pilot's rates (the planner's prediction, as ``posthoc
score``'s "Stop now or go on" table gives it), extends by the next documents of the same seeded ranking until every
cell over the target (+-0.04) is predicted under it (at most 180 documents), and scores pilot + rest + extension
with the real code on its defaults (1000 bootstrap resamples of documents, BCa). Side by side on the same studies:
the plan at its fixed size (the reference, what the other estimators' lines in ``validity_bench`` check) and a
deliberately biased rule (each cell stops as soon as its rate looks extreme; reported, meant to fail). Targets: the
validity bench's bands, coverage 0.93-0.97 and |mean bias| <= 0.01, for the fixed and the extended rule.

Both sides run the same code: with a target no cell misses (0.99) the extended rule must give exactly the fixed
rule's estimates and intervals on the same studies; the bench checks it first and fails otherwise.

    python bench/adaptive_bench.py [--studies N] [--seed S]
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace

import numpy as np
from benchlib import BenchRun
from validity_bench import headlines, verdict

from posthoc.study.planner.adaptive import AdaptiveDesign, adaptive_checks, pooled_coverage, simulate_rules
from posthoc.validity import format_checks


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--studies", type=int, default=400, help="simulated studies (each under every rule)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    design = AdaptiveDesign()
    with BenchRun("adaptive_bench") as run:
        same = simulate_rules(n_studies=5, design=replace(design, target=0.99), seed=args.seed + 1,
                              rules=("fixed", "extended at the pilot"))
        fixed, loose = same.outcomes["fixed"], same.outcomes["extended at the pilot"]
        if fixed.errors != loose.errors or fixed.covered != loose.covered or loose.sizes != fixed.sizes:
            run.fail("with a target every cell meets, the extended rule differs from the fixed plan")
        run.print("check: with target 0.99 the extended rule gives the fixed plan's estimates and intervals on 5 "
                  "studies (same code both sides)")
        started = time.perf_counter()
        simulated = simulate_rules(n_studies=args.studies, design=design, seed=args.seed, progress=True)
        seconds = time.perf_counter() - started
        run.print(f"{args.studies} simulated studies x 3 rules in {seconds:.0f} s; plan {design.plan_docs} documents, "
                  f"pilot {design.pilot_share:g} of it, target +-{design.target:g}, at most {design.max_docs} "
                  f"documents, population {design.population_docs} documents (k = 1)")
        checks = adaptive_checks(simulated)
        for line in format_checks(checks):
            run.print(line)
        sizes = {rule: np.asarray(outcome.sizes, dtype=float) for rule, outcome in simulated.outcomes.items()}
        extended = sizes["extended at the pilot"]
        run.print(f"documents judged, extended at the pilot: mean {extended.mean():.1f} "
                  f"({extended.mean() / design.plan_docs:.2f}x the plan), range {extended.min():.0f}-"
                  f"{extended.max():.0f}; {100 * (extended > design.plan_docs).mean():.0f}% of studies extended")
        pooled = {rule: pooled_coverage(simulated, rule) for rule in simulated.outcomes}
        run.print("pooled 95% coverage (every system and rate): "
                  + ", ".join(f"{rule} {value:.3f}" for rule, value in pooled.items()))
        for line in headlines([c for c in checks if c.measure in ("95% coverage", "mean bias")]):
            run.headline(line)
        run.headline(f"extended at the pilot judged {extended.mean() / design.plan_docs:.2f}x the plan's documents "
                     f"(mean; {100 * (extended > design.plan_docs).mean():.0f}% of studies extended); pooled "
                     f"coverage {pooled['extended at the pilot']:.3f} vs fixed {pooled['fixed']:.3f}, peeking "
                     f"{pooled['peeking']:.3f}")
        line, met = verdict(checks)
        run.print(line)
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
