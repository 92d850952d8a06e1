"""Benchmark of Eaglet's inconsistent marking (seed 003, Sect. 4.3 item 6) and the pipeline on real corpora.

1. Inconsistent marking on a synthetic corpus (seeded): documents of generated sentences in which
   entity names from a fixed vocabulary recur, about half of their occurrences marked. The rule is
   timed at 1x, 4x and 16x documents (best of ``--repeats``); the exponent of time ~ size is fitted by
   least squares on log-log (target <= 1.15), and the 16x size is 10,000 documents (target < 30 s).
   A naive baseline (every marked surface searched in every document with ``str.find``) is timed at
   1x and 4x in the same run for comparison.
2. The whole pipeline on every corpus in ../shared/data/nif and ../shared/data/wned-wikipedia (when
   present): per-rule counts as a share of annotations, as in the paper's Table 1.

Run: ``python bench/eaglet_bench.py [--base 625] [--repeats 3] [--no-corpora]``.
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import numpy as np
import pandas as pd

from posthoc.eaglet.pipeline import Pipeline, default_pipeline
from posthoc.eaglet.report import ABBREVIATIONS, SHARE_RULES, rule_shares
from posthoc.eaglet.rules import CheckContext, InconsistentMarkingRule
from posthoc.eaglet.words import tokens
from posthoc.readers import read_mentions
from posthoc.readers.corpus import documents_frame, mentions_frame

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
SYLLABLES = ["ka", "lo", "mi", "ra", "to", "ven", "sul", "dor", "bri", "an", "el", "os", "ur", "zan", "qui"]
FILLER = ["the", "of", "and", "in", "to", "a", "was", "for", "on", "with", "as", "by", "at", "from", "that", "it",
          "is", "were", "he", "which", "also", "has", "had", "but", "after", "before", "during", "city", "team",
          "river", "season", "played", "won", "lost", "near"]


def vocabulary(rng: np.random.Generator, size: int) -> list[str]:
    names = set()
    while len(names) < size:
        words = rng.integers(1, 4)
        names.add(" ".join("".join(rng.choice(SYLLABLES, rng.integers(2, 4))).capitalize() for _ in range(words)))
    return sorted(names)


def synthetic(n_docs: int, *, seed: int = 7, vocab_size: int = 3000) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    names = vocabulary(rng, vocab_size)
    docs, rows = [], []
    for d in range(n_docs):
        parts: list[str] = []
        marks = []
        length = 0
        for _ in range(60):
            if rng.random() < 0.12:
                name = names[int(rng.zipf(1.3)) % len(names)]
                start = length
                if rng.random() < 0.5:
                    marks.append((start, start + len(name), name))
                parts.append(name)
            else:
                parts.append(str(rng.choice(FILLER)))
            length += len(parts[-1]) + 1
        text = " ".join(parts) + "."
        docs.append(("synthetic", str(d), text))
        for start, end, name in marks:
            link = "https://en.wikipedia.org/wiki/" + name.replace(" ", "_")
            rows.append(("synthetic", str(d), "GT", start, end, text[start:end], link, link, False))
    return documents_frame(docs), mentions_frame(rows)


def time_rule(documents: pd.DataFrame, mentions: pd.DataFrame, repeats: int) -> tuple[float, int]:
    best, count = math.inf, 0
    for _ in range(repeats):
        context = CheckContext.from_tables(documents, mentions, system="GT")
        started = time.perf_counter()
        flags = InconsistentMarkingRule().run(context)
        best = min(best, time.perf_counter() - started)
        count = len(flags)
    return best, count


def time_naive(documents: pd.DataFrame, mentions: pd.DataFrame) -> float:
    started = time.perf_counter()
    surfaces = set(mentions["surface"])
    found = 0
    for text in documents["text"]:
        for surface in surfaces:
            position = text.find(surface)
            while position >= 0:
                found += 1
                position = text.find(surface, position + 1)
    return time.perf_counter() - started


def fitted_exponent(sizes: list[int], seconds: list[float]) -> float:
    slope, _ = np.polyfit(np.log(sizes), np.log(seconds), 1)
    return float(slope)


def bench_inconsistent_marking(base: int, repeats: int) -> None:
    sizes = [base, 4 * base, 16 * base]
    tokens("warm up")  # builds the Unicode word pattern once, outside the timings
    seconds, naive = [], {}
    print(f"inconsistent marking, synthetic corpus (seed 7), best of {repeats}")
    print(f"{'documents':>10} {'annotations':>12} {'proposals':>10} {'seconds':>9} {'naive s':>9}")
    for size in sizes:
        documents, mentions = synthetic(size)
        elapsed, proposals = time_rule(documents, mentions, repeats)
        seconds.append(elapsed)
        if size <= 4 * base:
            naive[size] = time_naive(documents, mentions)
        shown = f"{naive[size]:9.2f}" if size in naive else f"{'-':>9}"
        print(f"{size:>10} {len(mentions):>12} {proposals:>10} {elapsed:9.3f} {shown}")
    exponent = fitted_exponent(sizes, seconds)
    naive_exponent = math.log(naive[4 * base] / naive[base]) / math.log(4)
    print(f"fitted exponent (log-log least squares): {exponent:.3f}  (target <= 1.15)")
    print(f"naive baseline exponent 1x->4x: {naive_exponent:.2f}; speed-up at 4x: "
          f"{naive[4 * base] / seconds[1]:.1f}x")
    print(f"{sizes[-1]} documents: {seconds[-1]:.2f} s  (target < 30 s)")
    documents, mentions = synthetic(sizes[-1])
    started = time.perf_counter()
    Pipeline((InconsistentMarkingRule(),)).run(documents, mentions)
    print(f"{sizes[-1]} documents incl. building the context and the flags table: "
          f"{time.perf_counter() - started:.2f} s")


def bench_corpora() -> None:
    wned = SHARED / "wned-wikipedia"
    paths = sorted((SHARED / "nif").glob("*.ttl")) + ([wned] if wned.is_dir() else [])
    if not paths:
        print("../shared/data absent: corpus table skipped")
        return
    corpus = read_mentions(paths[0])
    for path in paths[1:]:
        corpus = corpus.merge(read_mentions(path))
    started = time.perf_counter()
    flags = default_pipeline().run(corpus.documents, corpus.mentions)
    elapsed = time.perf_counter() - started
    shares = rule_shares(flags, corpus.documents, corpus.mentions)
    for rule in SHARE_RULES:
        shares[rule] = (100 * shares[rule]).map(lambda v: f"{v:.2f}%")
    print(f"\nwhole pipeline (no KB: URI form only) on {', '.join(p.name for p in paths)}: {elapsed:.1f} s")
    print(shares.rename(columns=ABBREVIATIONS).to_markdown(index=False) if _has_tabulate() else
          shares.rename(columns=ABBREVIATIONS).to_string(index=False))


def _has_tabulate() -> bool:
    try:
        import tabulate  # noqa: F401
    except ImportError:
        return False
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", type=int, default=625, help="documents at 1x (16x = 10,000 by default)")
    parser.add_argument("--repeats", type=int, default=3, help="timings per size; the best is kept")
    parser.add_argument("--no-corpora", action="store_true", help="skip the shared corpora table")
    args = parser.parse_args()
    bench_inconsistent_marking(args.base, args.repeats)
    if not args.no_corpora:
        bench_corpora()


if __name__ == "__main__":
    main()
