"""An estimate of a paper-sized study (paper 000, Table 1): time, and one replicate against the real scoring code.

Builds the corpus of ``plan_bench.py`` (2,185 documents, GT / E2E / REL, about 31,000 tasks), then times
what ``posthoc study estimate`` does with its defaults: ``plan_study`` and
:func:`posthoc.study.planner.estimate.estimate_study` with 200 simulated studies (for agreement, the expected
values and the achieved half-width's own noise; precision and recall half-widths are exact, also at the
low end of the paper's per-cell spread). Target on this 2-core machine: under 60 s.

Baseline (what a competent engineer would write first): each simulated study as a judgements table
scored by the real code, :func:`posthoc.metrics.rates_with_intervals` with ``n_resamples=0`` (point
estimates only; a bootstrap inside every replicate would cost 1000 times more). Both sides score the
same replicates (the same document copies and outcomes), the bench checks they give identical
precision and recall, and prints the time a replicate takes on each side.

Then (``--validity-corpora``, 0 skips it: bench/validity_bench.py runs the same check) the trust figures of
docs/study.md: predicted against achieved half-widths over corpora of several sizes
(:func:`posthoc.study.planner.validity.check_halfwidths`, the estimate at its defaults, the real scoring code at
its defaults for the achieved), and hours predicted after a pilot of one batch per worker against the
simulated truth (:func:`posthoc.study.planner.validity.check_hours`). With 11 corpora (51 studies) it also checks
the acceptance the suite's slow test asked of those 51 studies until the suite had to run in 40 minutes
(:func:`acceptance`; ``tests/study/test_estimate.py`` now checks it on 5 studies): a missed line prints NO and
makes the bench exit 1 after saving. ``--validity-seed 7`` is the seed set that test used.

    python bench/estimate_bench.py [--runs 200] [--baseline-replicates 3] [--seed 1] [--validity-corpora 11]
                                   [--validity-seed 0]
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

import numpy as np
import pandas as pd
from benchlib import BenchRun, time_both
from plan_bench import synthesise

from posthoc.metrics import rates_with_intervals
from posthoc.study import StudyConfig, plan_study
from posthoc.study.planner.estimate import estimate_study
from posthoc.study.planner.rates import OutcomeRates
from posthoc.study.planner.shape import StudyShape
from posthoc.study.planner.simulate import plan_judgements
from posthoc.study.planner.validity import check_halfwidths, check_hours, halfwidth_figures


def _replicate(shape: StudyShape, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    copies = np.concatenate([rng.choice(np.flatnonzero(shape.doc_dataset == d), int((shape.doc_dataset == d).sum()))
                             for d in range(len(shape.datasets))])
    annotation, _ = shape.expand(copies)
    verified = rng.random(len(annotation)) < OutcomeRates().shares_for(
        shape.cells["dataset"].to_numpy(), shape.cells["system"].to_numpy())[shape.cell[annotation], 0]
    return copies, verified


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=200, help="simulated studies (the CLI's default)")
    parser.add_argument("--baseline-replicates", type=int, default=3, help="replicates timed on both sides")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--validity-corpora", type=int, default=0,
                        help="corpora of the validity check (11 for the figures of docs/study.md; 0: skip; "
                             "bench/validity_bench.py runs it too)")
    parser.add_argument("--validity-seed", type=int, default=0, help="seed set of the validity check (the suite's "
                        "former 51-study test used 7)")
    args = parser.parse_args()
    met = True
    with BenchRun("estimate_bench") as run:
        documents, mentions = synthesise(args.seed)
        wall0, cpu0 = time.perf_counter(), time.process_time()
        plan = plan_study(documents, mentions, StudyConfig(name="paper-size", seed=args.seed))
        plan_wall, plan_cpu = time.perf_counter() - wall0, time.process_time() - cpu0
        wall0, cpu0 = time.perf_counter(), time.process_time()
        estimate = estimate_study(plan, runs=args.runs, seed=args.seed)
        est_wall, est_cpu = time.perf_counter() - wall0, time.process_time() - cpu0
        c, t = estimate.counts, estimate.time
        run.print(f"corpus: {c['documents']} documents, {len(mentions)} annotations; plan: {c['tasks']} tasks "
                  f"({c['real_tasks']} to verify, {c['control_tasks']} control), {c['regions']} regions to judge, "
                  f"{c['workers']} workers (Table 1: 2,185 documents, 31,105 tasks, 167,432 judgements)")
        run.print(f"estimate: {t['hours']:.0f} annotator-hours at {t['seconds_per_region']:g} s a region, cost "
                  f"{t['cost']:.0f} at {t['hourly_rate']:g} an hour (paper 000 paid 6,520 USD); "
                  f"{len(estimate.cells)} cells, half-widths {estimate.cells['halfwidth'].min():.4f}-"
                  f"{estimate.cells['halfwidth'].max():.4f}")
        total = plan_wall + est_wall
        assured = int(estimate.cells["assured_within_15"].sum())
        run.print(f"achieved half-width's own noise (relative sd): {estimate.cells['achieved_noise'].min():.1%}-"
                  f"{estimate.cells['achieved_noise'].max():.1%}; {assured} of {len(estimate.cells)} cells assured "
                  "within 15%")
        run.headline(f"paper-size estimate ({c['real_tasks']} tasks, {args.runs} simulated studies): "
                     f"{total:.1f} s wall, {plan_cpu + est_cpu:.1f} s CPU (target < 60 s)")
        run.print(f"time: plan_study {plan_wall:.2f} s + estimate_study ({args.runs} simulated studies) "
                  f"{est_wall:.2f} s = {total:.2f} s wall (target < 60 s): {'OK' if total < 60 else 'OVER'}; "
                  f"CPU {plan_cpu:.2f} + {est_cpu:.2f} = {plan_cpu + est_cpu:.2f} s")

        shape = StudyShape.from_judgements(plan_judgements(plan))
        rng = np.random.default_rng(args.seed)
        replicates = [_replicate(shape, rng) for _ in range(args.baseline_replicates)]
        position = {"ours": 0, "base": 0}

        def ours() -> dict[str, np.ndarray]:
            copies, verified = replicates[position["ours"] % len(replicates)]
            position["ours"] += 1
            return shape.statistics(copies, verified)

        def base() -> pd.Series:
            copies, verified = replicates[position["base"] % len(replicates)]
            position["base"] += 1
            return rates_with_intervals(shape.as_judgements(copies, verified), n_resamples=0).set_index(
                ["dataset", "system", "metric"])["value"]

        mine, theirs = time_both(ours, base, runs=args.baseline_replicates)
        cells = pd.MultiIndex.from_frame(shape.cells)
        for metric in ("posthoc_precision", "posthoc_recall"):
            expected = theirs.result.xs(metric, level="metric").reindex(cells).to_numpy()
            if not np.allclose(mine.result[metric][0], expected, rtol=0, atol=1e-12):
                run.fail(f"{metric}: the replicate statistics differ from rates_with_intervals")
        run.print(f"one replicate ({len(shape.annotations)} annotations): ours {mine.summary()}")
        run.print(f"                baseline (judgements table + rates_with_intervals): {theirs.summary()}")
        run.headline(f"one replicate {theirs.wall_median / mine.wall_median:.0f}x faster than scoring it as a table "
                     "(identical precision and recall)")
        run.print(f"same precision and recall on {args.baseline_replicates} replicates; ratio "
                  f"{theirs.wall_median / mine.wall_median:.0f}x (wall), {theirs.cpu_median / mine.cpu_median:.0f}x "
                  f"(CPU); {args.runs} replicates the baseline way: about "
                  f"{theirs.wall_median * args.runs:.0f} s")
        if args.validity_corpora:
            met = _validity(run, args.validity_corpora, seed=args.validity_seed)
    return 0 if met else 1


def acceptance(checked: pd.DataFrame, f: dict[str, Any]) -> list[tuple[str, bool]]:
    """``(line, met)`` for each check of the acceptance over :func:`check_halfwidths`' studies, as
    ``tests/study/test_estimate.py`` asked it of 51 studies until the suite's time moved that size here: at
    least 50 studies at 5 sizes, k = 1 and 3, agreement cells among them; at least 40 studies and 60% of the cells
    assured; every assured cell within 15%; the other cells' misses no more than the stated noise expects (plus
    three of its sds, plus one); the calibration within 0.6-1.3; the median ratio within 0.03 of 1 and each
    metric's mean ratio within 0.04."""
    metrics = ("posthoc_precision", "posthoc_recall", "fleiss_kappa")
    means = {m: float(checked.loc[checked["metric"] == m, "ratio"].mean()) for m in metrics}
    ceiling = f["expected_misses"] + 3 * np.sqrt(f["expected_misses"]) + 1
    shape_ok = (f["studies"] >= 50 and len(f["sizes"]) >= 5 and set(checked["k"]) == {1, 3}
                and {"fleiss_kappa", "krippendorff_alpha"} <= set(checked["metric"]))
    return [
        (f"{f['studies']} studies (>= 50) at {len(f['sizes'])} sizes (>= 5), k = {sorted(set(checked['k']))}, "
         "agreement cells included", shape_ok),
        (f"{f['assured_studies']} studies assured (>= 40), {f['assured_cells']} of {f['cells']} cells (>= 60%)",
         f["assured_studies"] >= 40 and f["assured_cells"] >= 0.6 * f["cells"]),
        (f"assured cells within 15%: {f['assured_within']:.1%} (every one)", f["assured_within"] == 1.0),
        (f"other cells outside 15%: {f['other_misses']} (<= {ceiling:.1f}: the {f['expected_misses']:.1f} the stated "
         "noise expects + 3 sd + 1)", f["other_misses"] <= ceiling),
        (f"sd of log(ratio) / stated noise {f['noise_calibration']:.2f} (0.6-1.3)",
         0.6 <= f["noise_calibration"] <= 1.3),
        (f"median ratio {f['median_ratio']:.3f} (within 0.03 of 1)", abs(f["median_ratio"] - 1) < 0.03),
        *[(f"{m} mean ratio {v:.3f} (within 0.04 of 1)", abs(v - 1) < 0.04) for m, v in means.items()],
    ]


def _validity(run: BenchRun, corpora: int, *, seed: int) -> bool:
    """The validity figures (module docstring) on ``corpora`` corpora of seed set ``seed``; with 51 studies or more
    also :func:`acceptance`, whose verdict this returns (True below that size)."""
    wall0 = time.perf_counter()
    checked = check_halfwidths(corpora, seed=seed)
    f = halfwidth_figures(checked)
    run.print(f"validity: {f['studies']} simulated studies ({min(f['sizes'])}-{max(f['sizes'])} documents, k = 1 "
              f"and 3), {f['cells']} cells, {checked['n_annotations'].min()}-{checked['n_annotations'].max()} "
              f"annotations a cell ({time.perf_counter() - wall0:.0f} s)")
    low, high = f["assured_range"]
    run.print(f"  assured cells ({f['assured_cells']}, in {f['assured_studies']} studies): within 15%: "
              f"{f['assured_within']:.1%}; predicted / achieved {low:.3f}-{high:.3f}, worst {f['assured_worst']:.3f} "
              f"({f['assured_worst_cell']})")
    run.print(f"  other cells ({f['other_cells']}): within 15%: {f['other_within']:.1%} ({f['other_misses']} "
              f"outside; the stated noise expects {f['expected_misses']:.1f}); agreement cells: "
              f"{f['agreement_within']:.1%} of {f['agreement_cells']} within 15%")
    run.print(f"  all cells: median ratio {f['median_ratio']:.3f}, range {f['range'][0]:.3f}-{f['range'][1]:.3f}, "
              f"within 15%: {f['all_within']:.1%}; sd of log(ratio) / stated noise {f['noise_calibration']:.2f}")
    run.headline(f"{f['assured_within']:.0%} of the {f['assured_cells']} assured cells of {f['studies']} simulated "
                 f"studies within 15% of the achieved half-width (worst ratio {f['assured_worst']:.3f}); "
                 f"all {f['cells']} cells: {f['all_within']:.1%}")
    for metric, part in checked.groupby("metric"):
        run.print(f"  {metric}: sd {part['ratio'].std():.3f}, range {part['ratio'].min():.3f}-"
                  f"{part['ratio'].max():.3f}, within 15%: {((part['ratio'] - 1).abs() <= 0.15).mean():.1%}")
    hours = [check_hours(300, n_workers=20, seed=seed) for seed in range(8)]
    ratios = [h["ratio"] for h in hours]
    workers = [h["worst_worker_ratio"] for h in hours]
    share = hours[0]["pilot_share"]
    run.headline(f"hours left after a one-batch pilot: predicted / true {min(ratios):.3f}-{max(ratios):.3f}")
    run.print(f"hours after a pilot of one batch per worker (8 studies, 20 workers, pilot {share:.0%} of the "
              f"regions): predicted / true for the rest {min(ratios):.3f}-{max(ratios):.3f}; worst single "
              f"worker {min(workers):.2f}-{max(workers):.2f}")
    if f["studies"] < 51:
        return True
    rows = acceptance(checked, f)
    for line, met in rows:
        run.print(f"  acceptance (seed set {seed}): {line}: {'yes' if met else 'NO'}")
    met_all = all(met for _, met in rows)
    run.headline(f"acceptance over {f['studies']} studies (seed set {seed}): {sum(m for _, m in rows)} of {len(rows)} "
                 f"checks met{'' if met_all else ' - MISSED'}")
    return met_all


if __name__ == "__main__":
    sys.exit(main())
