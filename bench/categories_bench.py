"""Bench: the error categories against verified truth on the score bench's paper-sized study (issue 45).

Two measurements on ``posthoc.synthetic.paper_sized_study`` (paper 000, Table 1: 167,432 judgements, 2,185
documents, 3 systems with GT):

1. The categories' share of the score: ``score_judgements`` (every table, 1,000 document resamples) is run with
   its categories step (``verified_category_tables``: the categories of every annotation, the verdicts crossed
   with them and the summary with its intervals) timed inside the same call; target: at most 20% of the whole.
2. The categories alone (``category_arrays``: every annotation's category and kind) against **the competent
   loop**: ELEVANT's own way, one evaluation case a mention and its labelling functions per document and system
   (``tests/metrics/elevant_reference.py``, transcribed from ELEVANT's source), timed with ``benchlib.time_both``;
   the two must agree on every mention ELEVANT classifies before a ratio is printed.

    python bench/categories_bench.py              # paper size, 1000 resamples
    python bench/categories_bench.py --scale 0.2 --runs 3
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from benchlib import BenchRun, time_both

import posthoc.metrics.score as score_module
import posthoc.metrics.verified_categories as verified_module
from posthoc.metrics import ScoringOptions, score_judgements
from posthoc.metrics.inputs import mention_rows
from posthoc.metrics.strict_categories import CATEGORIES, FALSE_NEGATIVE_KINDS, KINDS, SIDES, category_arrays
from posthoc.metrics.verified_categories import category_summary, strict_errors_verified
from posthoc.synthetic import paper_sized_study

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "metrics"))
from elevant_reference import evaluation_cases, label_errors

TARGET_SHARE = 0.20


PARTS = ("category_arrays", "cross_verdicts", "category_summary")


Runs = list[float]


def categories_share(judgements: pd.DataFrame, mentions: pd.DataFrame, *, options: ScoringOptions,
                     runs: int) -> tuple[Runs, Runs, Any, dict[str, Runs], Runs, Runs]:
    """Per run: the whole ``score_judgements`` wall time and its categories step's, measured in the same call, and
    the step's parts (the categories, the verdicts crossed with them, the summary with its intervals); then the
    whole's and the step's CPU times (this process's, ``time.process_time``)."""
    original = score_module.verified_category_tables
    step: list[float] = []
    step_cpu: list[float] = []
    parts: dict[str, list[float]] = {name: [] for name in PARTS}
    originals = {name: getattr(verified_module, name) for name in PARTS}

    def part(name: str) -> Any:
        def run(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            result = originals[name](*args, **kwargs)
            parts[name].append(time.perf_counter() - started)
            return result
        return run

    def timed(*args: Any, **kwargs: Any) -> Any:
        started, cpu = time.perf_counter(), time.process_time()
        result = original(*args, **kwargs)
        step.append(time.perf_counter() - started)
        step_cpu.append(time.process_time() - cpu)
        return result

    score_module.verified_category_tables = timed  # type: ignore[assignment]
    for name in PARTS:
        setattr(verified_module, name, part(name))
    totals: list[float] = []
    totals_cpu: list[float] = []
    try:
        score_judgements(judgements, mentions, options=options)  # warm-up (imports, caches): not counted
        step.clear()
        step_cpu.clear()
        for values in parts.values():
            values.clear()
        for _ in range(runs):
            started, cpu = time.perf_counter(), time.process_time()
            scores = score_judgements(judgements, mentions, options=options)
            totals.append(time.perf_counter() - started)
            totals_cpu.append(time.process_time() - cpu)
    finally:
        score_module.verified_category_tables = original
        for name in PARTS:
            setattr(verified_module, name, originals[name])
    return totals, step, scores, parts, totals_cpu, step_cpu


def pooled_by_full_summary(crossed: pd.DataFrame, *, options: ScoringOptions) -> pd.DataFrame:
    """The report's pooled share of strict errors verified as right the former way (the competent baseline): the
    whole :func:`category_summary` of the systems' rows pooled, then its ``strict_error`` row per dataset."""
    chosen = crossed.loc[(crossed["side"].astype(str) == "system") & (crossed["system"].astype(str) != "GT")]
    summary = category_summary(chosen.assign(system="all systems"), n_resamples=options.n_resamples,
                               seed=options.seed, confidence=options.confidence, interval=options.interval)
    rows = summary.loc[(summary["category"] == "strict_error") & (summary["kind"] == "all") & (summary["n_judged"] > 0)]
    return pd.DataFrame({"dataset": rows["dataset"].astype(str).to_numpy(),
                         "value": rows["overturned_share"].to_numpy(float),
                         "low": rows["overturned_low"].to_numpy(float), "high": rows["overturned_high"].to_numpy(float),
                         "n": rows["n_judged"].to_numpy(float)})


def elevant_loop(mentions: pd.DataFrame, texts: dict[tuple[str, str], str]) -> dict[tuple[Any, ...], tuple[str, str]]:
    """ELEVANT's labels, one case a mention, document by document and system by system (the competent loop)."""
    labels: dict[tuple[Any, ...], tuple[str, str]] = {}
    for (dataset, doc_id), rows in mentions.groupby(["dataset", "doc_id"], sort=False):
        text = texts[(dataset, doc_id)]
        gt_rows = rows[rows["system"] == "GT"]
        gt = {(s, e): link for s, e, link in gt_rows[["start", "end", "link"]].itertuples(index=False)}
        for system, own in rows[rows["system"] != "GT"].groupby("system"):
            predicted = {(s, e): link for s, e, link in own[["start", "end", "link"]].itertuples(index=False)}
            cases = evaluation_cases(text, gt, predicted)
            label_errors(cases, contains_unknowns=False)
            for case in cases:
                label = _label(case.labels)
                if label is not None:
                    side = "system" if label[0] == "false_positive" else "ground_truth"
                    labels[(dataset, doc_id, system, side, *case.span)] = label
    return labels


def _label(labels: set[str]) -> tuple[str, str] | None:
    if "NER_FN" in labels:
        return "false_negative", next(k for k in FALSE_NEGATIVE_KINDS if f"NER_FN_{k.upper()}" in labels)
    if "DISAMBIGUATION_WRONG" in labels:
        partial = "DISAMBIGUATION_PARTIAL_NAME_WRONG" in labels
        return "disambiguation_wrong", "partial_name" if partial else "not_classified"
    if "NER_FP" in labels:
        for elevant, ours in (("GROUNDTRUTH_UNKNOWN", "ground_truth_unknown"), ("LOWERCASED", "lowercased"),
                              ("WRONG_SPAN", "wrong_span")):
            if f"NER_FP_{elevant}" in labels:
                return "false_positive", ours
        return "false_positive", "other"
    return None


def disagreements(rows: pd.DataFrame, found: Any, reference: dict[tuple[Any, ...], tuple[str, str]]) -> int:
    """How many mentions ELEVANT classifies get another category or kind from ours."""
    index = found.index
    ours = dict(zip(zip(rows["dataset"].to_numpy()[index], rows["doc_id"].to_numpy()[index],
                        np.asarray(found.system_names, dtype=object)[found.system],
                        np.asarray(SIDES, dtype=object)[found.side], rows["start"].to_numpy()[index].tolist(),
                        rows["end"].to_numpy()[index].tolist(), strict=True),
                    zip(np.asarray(CATEGORIES, dtype=object)[found.category],
                        np.asarray(KINDS, dtype=object)[found.kind], strict=True), strict=True))
    return sum(ours.get(key) != label for key, label in reference.items())


#: The bench's options: flag, default, what it is.
OPTIONS: tuple[tuple[str, int | float, str], ...] = (
    ("--resamples", 1000, "bootstrap resamples"), ("--runs", 5, "timed runs of each side (median)"),
    ("--scale", 1.0, "multiply Table 1's sizes"), ("--seed", 0, "the study's and the resamples' seed"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for flag, default, what in OPTIONS:
        parser.add_argument(flag, type=type(default), default=default, help=f"{what} (default {default})")
    args = parser.parse_args(argv)

    with BenchRun("categories_bench", argv=sys.argv[1:] if argv is None else argv) as run:
        documents, mentions, judgements = paper_sized_study(seed=args.seed, scale=args.scale)
        n_judged = int((~judgements["is_control"].astype(bool)).sum())
        run.print(f"synthetic study: {n_judged:,} judgements, {len(documents):,} documents, {len(mentions):,} "
                  f"mentions (not timed)")

        # 1. the categories' share of score_judgements
        options = ScoringOptions(n_resamples=args.resamples, seed=args.seed)
        totals, step, scores, parts, totals_cpu, step_cpu = categories_share(judgements, mentions, options=options,
                                                                             runs=args.runs)
        shares = [s / t for s, t in zip(step, totals, strict=True)]
        share = statistics.median(shares)
        cpu_share = statistics.median([s / t for s, t in zip(step_cpu, totals_cpu, strict=True)])
        met = "met" if share <= TARGET_SHARE else "MISSED"
        run.print(f"\n1. score_judgements, all tables, {args.resamples} resamples, {args.runs} runs: median wall "
                  f"{statistics.median(totals):.3f} s; its categories step (categories, verdicts, summary with "
                  f"intervals) median {statistics.median(step):.3f} s")
        run.print(f"   share of the score per run: {', '.join(f'{s:.1%}' for s in shares)}; median {share:.1%} "
                  f"(target <= {TARGET_SHARE:.0%}: {met})")
        run.print(f"   CPU time, same runs: score median {statistics.median(totals_cpu):.3f} s, categories step "
                  f"{statistics.median(step_cpu):.3f} s; share of the score's CPU median {cpu_share:.1%}")
        run.print("   its parts, median wall: " + ", ".join(f"{name} {statistics.median(values) * 1000:.0f} ms"
                                                         for name, values in parts.items()))
        run.print(f"   tables: error_categories {len(scores.error_categories):,} rows, error_category_summary "
                  f"{len(scores.error_category_summary):,} rows")

        # 3. the report's pooled share (findings), cheap pass against the former full pooled summary
        crossed = scores.error_categories
        pooled, full = time_both(lambda: strict_errors_verified(
            crossed, n_resamples=options.n_resamples, seed=options.seed, confidence=options.confidence,
            interval=options.interval),
                                 lambda: pooled_by_full_summary(crossed, options=options), runs=max(1, args.runs))
        if not pooled.result.equals(full.result):
            run.fail("strict_errors_verified differs from the full pooled summary's strict_error rows")
        pooled_ratio = full.wall_median / pooled.wall_median
        pooled_cpu = full.cpu_median / pooled.cpu_median

        # 2. the categories alone against ELEVANT's per-case loop
        rows = mention_rows(mentions)
        texts = {(d, i): t for d, i, t in documents[["dataset", "doc_id", "text"]].itertuples(index=False)}
        ours, loop = time_both(lambda: category_arrays(rows, contains_unknowns=False),
                               lambda: elevant_loop(rows, texts), runs=max(1, args.runs // 2))
        wrong = disagreements(rows, ours.result, loop.result)
        if wrong:
            run.fail(f"{wrong} of {len(loop.result):,} mentions ELEVANT classifies get another category from ours")
        ratio = loop.wall_median / ours.wall_median
        run.print(f"\n2. categories of {len(rows):,} annotations: ours category_arrays {ours.summary()}")
        run.print(f"   ELEVANT's per-case loop (its labelling functions, transcribed): {loop.summary()}")
        run.print(f"   agree on all {len(loop.result):,} mentions ELEVANT classifies; speed-up {ratio:.0f}x "
                  "median wall")
        run.print(f"\n3. the report's share of strict errors verified as right, pooled over systems "
                  f"({len(pooled.result)} datasets): strict_errors_verified {pooled.summary()}")
        run.print(f"   the full pooled category_summary, then its strict_error rows: {full.summary()}")
        run.print(f"   identical tables; speed-up {pooled_ratio:.1f}x median wall, {pooled_cpu:.1f}x median CPU")
        run.print()
        run.headline(f"error categories against verified truth ({n_judged:,} judgements): {share:.1%} of "
                     f"score_judgements' wall time, median of {args.runs} ({met}; target <= 20%; CPU "
                     f"{cpu_share:.1%}); the categories "
                     f"alone {ratio:.0f}x faster than ELEVANT's per-case loop, same labels on "
                     f"{len(loop.result):,} mentions; the report's pooled share {pooled_ratio:.1f}x faster than the "
                     "full pooled summary, identical")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
