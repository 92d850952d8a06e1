"""Bench: scoring a synthetic study of the paper's size (paper 000, Table 1: 167,432 judgements, 2,185 documents).

Two measurements, each side timed with ``benchlib.time_both`` (same runs, interleaved; median wall and
CPU), and each checked for identical numbers before a ratio is printed:

1. ``rates_with_intervals`` (every rate of Figure 3 right and Figure 4 with 1,000 document resamples)
   against **the competent loop**: what an engineer who knows the bootstrap writes without our engine.
   It aggregates per document once (the same per-document sufficient statistics,
   :func:`posthoc.metrics.rates.rate_statistics`), then for each resample gathers the drawn documents'
   rows of that matrix and sums them (``counts[drawn].sum(axis=0)``: one numpy call per resample, all
   strata at once), then the same ratios and percentiles. It consumes the very same draws
   (:func:`posthoc.metrics.bootstrap.stratum_draws` on the same seeded stream), so both must give
   identical intervals (to 1e-12); the bench fails otherwise. Ours differs only in the resampling step:
   the draws become count weights and all resamples of a stratum one matrix product
   (:func:`posthoc.metrics.bootstrap.resampled_sums`). The resampling step alone is compared too.
2. The whole ``score_judgements`` (every table, 1,000 resamples) against its target, < 1 s wall, and
   its peak traced memory (< 2 GiB).
3. What issue 26 adds to the rates, on the same statistics and resampled sums: the BCa intervals (the
   jackknife of every rate and the per-column quantiles) against the percentile ones, and the paired
   comparisons of every pair of systems (no new draw: one subtraction per pair and resample) against the
   rates alone; each as a ratio of median wall times (the whole rates step with them / without them).

    python bench/score_bench.py                  # paper size, k = 1, 1000 resamples
    python bench/score_bench.py --k 3 --scale 0.3
"""

from __future__ import annotations

import argparse
import sys
import time
import tracemalloc

import numpy as np
import pandas as pd
from benchlib import BenchRun, time_both, time_runs

from posthoc.metrics import ScoringOptions, rates_with_intervals, score_judgements
from posthoc.metrics.bootstrap import resampled_sums, stratum_draws
from posthoc.metrics.comparisons import paired_comparisons
from posthoc.metrics.inputs import JUDGEMENT_NEEDS, is_control, judged_rows
from posthoc.metrics.rates import RateStatistics, rate_jackknife, rate_samples, rate_statistics, rates_table
from posthoc.synthetic import paper_sized_study

TARGET_RATIO = 5.0
TARGET_SECONDS = 1.0
TARGET_BYTES = 2 * 1024**3


def _met(ok: bool) -> str:
    return "met" if ok else "MISSED"


def judgement_stream(seed: int) -> np.random.Generator:
    """The generator ``rates_with_intervals`` / ``score_judgements`` draw the judgement resamples from."""
    return np.random.default_rng(np.random.SeedSequence(seed).spawn(2)[0])


def loop_sums(stats: RateStatistics, *, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """The competent loop's resampling: per resample, gather the drawn units' rows and sum them."""
    picks: list[list[np.ndarray]] = [[] for _ in range(n_resamples)]
    for members, first, draws in stratum_draws(stats.strata, n_resamples=n_resamples, rng=rng):
        for offset, draw in enumerate(draws):
            picks[first + offset].append(members[draw])
    sums = np.empty((n_resamples, stats.counts.shape[1]))
    for b, pick in enumerate(picks):
        sums[b] = stats.counts[np.concatenate(pick)].sum(axis=0)
    return sums


def sufficient_statistics(judgements: pd.DataFrame, *, resample_unit: str = "doc_id") -> RateStatistics:
    """The per-unit sufficient statistics, prepared exactly as ``rates_with_intervals`` prepares them."""
    read = [c for c in (*JUDGEMENT_NEEDS, "chunk_id", "is_control") if c in judgements.columns]
    rows = judged_rows(judgements[read], keep_controls=True)
    return rate_statistics(rows, resample_unit=resample_unit, keep=~is_control(rows))


def loop_rates_with_intervals(
    judgements: pd.DataFrame, *, n_resamples: int, seed: int, resample_unit: str = "doc_id"
) -> pd.DataFrame:
    """The competent baseline of ``rates_with_intervals``: same statistics and draws, a loop over resamples."""
    stats = sufficient_statistics(judgements, resample_unit=resample_unit)
    sums = loop_sums(stats, n_resamples=n_resamples, rng=judgement_stream(seed))
    return rates_table(stats, rate_samples(sums, stats), confidence=0.95)


def max_difference(ours: pd.DataFrame, theirs: pd.DataFrame) -> float:
    """Largest absolute difference of value / low / high (NaN only where both are NaN), same rows."""
    if ours[["dataset", "system", "metric", "n"]].to_numpy().tolist() != (
        theirs[["dataset", "system", "metric", "n"]].to_numpy().tolist()
    ):
        return float("inf")
    worst = 0.0
    for column in ("value", "low", "high"):
        a, b = ours[column].to_numpy(float), theirs[column].to_numpy(float)
        if not np.array_equal(np.isnan(a), np.isnan(b)):
            return float("inf")
        both = ~np.isnan(a)
        worst = max(worst, float(np.max(np.abs(a[both] - b[both]), initial=0.0)))
    return worst


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples (default 1000)")
    parser.add_argument("--runs", type=int, default=7, help="timed runs of each side (default 7; median)")
    parser.add_argument("--scale", type=float, default=1.0, help="multiply Table 1's sizes (default 1)")
    parser.add_argument("--k", type=int, default=1, help="judges per annotation (default 1, as in the paper)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    with BenchRun("score_bench", argv=sys.argv[1:] if argv is None else argv) as run:
        started = time.perf_counter()
        _, mentions, judgements = paper_sized_study(k=args.k, seed=args.seed, scale=args.scale)
        n_judged = int((~judgements["is_control"].astype(bool)).sum())
        judged = judgements.loc[~judgements["is_control"].astype(bool)]
        n_docs = judged[["dataset", "doc_id"]].drop_duplicates().shape[0]
        run.print(f"synthetic study: {n_judged:,} judgements (+{len(judgements) - n_judged:,} control rows), "
                  f"{n_docs:,} documents, {len(mentions):,} mentions, k={args.k}; made in "
                  f"{time.perf_counter() - started:.1f} s (not timed)")  # fmt: skip
        b = args.resamples

        # 1. rates_with_intervals against the competent loop, same draws
        ours, loop = time_both(
            lambda: rates_with_intervals(judgements, n_resamples=b, seed=args.seed),
            lambda: loop_rates_with_intervals(judgements, n_resamples=b, seed=args.seed),
            runs=args.runs,
        )
        difference = max_difference(ours.result, loop.result)
        run.print(f"\n1. rates + intervals ({len(ours.result)} rows), {b} document resamples, same draws")
        run.print(f"   ours  rates_with_intervals : {ours.summary()}")
        run.print(f"   competent loop            : {loop.summary()}")
        run.print(f"   max |ours - loop| over value / low / high: {difference:.1e} (must be <= 1e-12)")
        if not difference <= 1e-12:
            run.fail(f"rates_with_intervals and the loop disagree (max difference {difference})")
        wall_ratio, cpu_ratio = loop.wall_median / ours.wall_median, loop.cpu_median / ours.cpu_median
        run.print(f"   speed-up, median wall {wall_ratio:.1f}x ({_met(wall_ratio >= TARGET_RATIO)}), median CPU "
                  f"{cpu_ratio:.1f}x ({_met(cpu_ratio >= TARGET_RATIO)}); target >= {TARGET_RATIO:.0f}x")  # fmt: skip

        stats = sufficient_statistics(judgements)
        engine, plain = time_both(
            lambda: resampled_sums(stats.counts, stats.strata, n_resamples=b, rng=judgement_stream(args.seed)),
            lambda: loop_sums(stats, n_resamples=b, rng=judgement_stream(args.seed)),
            runs=args.runs,
        )
        sums_difference = float(np.max(np.abs(engine.result - plain.result)))
        if not sums_difference <= 1e-9:
            run.fail(f"resampled sums differ from the loop's (max difference {sums_difference})")
        run.print(f"   the resampling step alone ({stats.counts.shape[0]:,} units x {stats.counts.shape[1]} "
                  f"columns, {b} resamples): weights @ counts {engine.wall_median * 1000:.1f} ms vs loop "
                  f"{plain.wall_median * 1000:.1f} ms wall median = {plain.wall_median / engine.wall_median:.1f}x "
                  f"(CPU {plain.cpu_median / engine.cpu_median:.1f}x); "
                  f"sums equal to {sums_difference:.0e}")  # fmt: skip

        # 2. the whole scoring
        scoring = ScoringOptions(n_resamples=b, seed=args.seed)
        whole = time_runs(lambda: score_judgements(judgements, mentions, options=scoring), runs=args.runs)
        tracemalloc.start()
        score_judgements(judgements, mentions, options=ScoringOptions(n_resamples=b, seed=args.seed))
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        same = max_difference(whole.result.rates, ours.result)
        if not same <= 1e-12:
            run.fail(f"score_judgements' rates differ from rates_with_intervals' ({same})")
        run.print(f"\n2. score_judgements, all tables, {b} resamples: {whole.summary()}")
        run.print(f"   target < {TARGET_SECONDS:.0f} s wall (median): "
                  f"{'met' if whole.wall_median < TARGET_SECONDS else 'MISSED'}; peak traced memory "
                  f"{peak / 1024**2:.0f} MiB "
                  f"(target < 2 GiB: {'met' if peak < TARGET_BYTES else 'MISSED'})")  # fmt: skip
        run.print("   tables: " + ", ".join(f"{n} {len(t)}" for n, t in whole.result.tables().items()))
        costs = added_costs(stats, n_resamples=b, seed=args.seed, runs=args.runs)
        run.print(f"\n3. {costs}")
        run.print()
        run.headline(f"rates_with_intervals ({n_judged:,} judgements, {b} document resamples) {wall_ratio:.1f}x "
                     f"faster than the competent per-resample loop, median wall ({_met(wall_ratio >= TARGET_RATIO)}), "
                     f"{cpu_ratio:.1f}x median CPU ({_met(cpu_ratio >= TARGET_RATIO)}; target >= 5x), "
                     f"identical intervals")  # fmt: skip
        run.headline(f"score_judgements, all tables: {whole.wall_median:.2f} s wall median "
                     f"({_met(whole.wall_median < TARGET_SECONDS)}; target < 1 s), {whole.cpu_median:.2f} s CPU; "
                     f"{peak / 1024**2:.0f} MiB peak traced")
        run.headline(f"issue 26 on the rates step: {costs}")
    return 0


def added_costs(stats: RateStatistics, *, n_resamples: int, seed: int, runs: int) -> str:
    """Median wall of the rates step (resampled sums, ratios, intervals) with percentile intervals, with BCa, and
    with BCa plus the paired comparisons: what the BCa intervals and the comparisons cost (section 3)."""
    def step(method: str, compare: bool) -> object:
        sums = resampled_sums(stats.counts, stats.strata, n_resamples=n_resamples, rng=judgement_stream(seed))
        samples = rate_samples(sums, stats)
        jackknife = rate_jackknife(stats) if method == "bca" else None
        table = rates_table(stats, samples, confidence=0.95, method=method, jackknife=jackknife)
        if compare:
            return table, paired_comparisons(stats, samples, jackknife=jackknife, method=method)
        return table

    percentile = time_runs(lambda: step("percentile", False), runs=runs)
    bca = time_runs(lambda: step("bca", False), runs=runs)
    paired = time_runs(lambda: step("bca", True), runs=runs)
    return (f"rates step {percentile.wall_median * 1000:.0f} ms with percentile intervals, "
            f"{bca.wall_median * 1000:.0f} ms with BCa ({bca.wall_median / percentile.wall_median:.2f}x), "
            f"{paired.wall_median * 1000:.0f} ms with BCa and every paired comparison "
            f"({paired.wall_median / bca.wall_median:.2f}x the BCa rates alone), median wall")


if __name__ == "__main__":
    sys.exit(main())
