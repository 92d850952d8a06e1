"""Benchmark of Eaglet's inconsistent marking (seed 003, Sect. 4.3 item 6) and the pipeline on real corpora.

1. Inconsistent marking on a synthetic corpus (seeded): documents of generated sentences in which
   entity names from a fixed vocabulary recur, about half of their occurrences marked. The rule (its
   defaults) is timed at 1x, 4x and 16x documents (median of ``--repeats``, wall and CPU); the exponent
   of time ~ size is fitted by least squares on log-log (target <= 1.15), and the 16x size is 10,000
   documents (target < 30 s).
2. Against a competent baseline, at 1x and 4x, both timed with ``benchlib.time_both``: what an engineer
   writes without our token index -- per dataset one compiled regular expression, the alternation of
   every marked surface (its tokens joined by white space, word boundaries at both ends, longest
   surface first), run with ``finditer`` over each stretch of a document between annotations. It
   proposes what the paper's module proposes, so it is compared with the rule in the paper's settings
   (``inside_names=True, common_words=True, links="majority"``: every unmarked occurrence): both must
   propose the same spans; the bench fails otherwise.
3. The whole pipeline on every corpus in ../shared/data/nif and ../shared/data/wned-wikipedia (when
   present): per-rule counts as a share of annotations, as in the paper's Table 1.

Run: ``python bench/eaglet_bench.py [--base 625] [--repeats 3] [--no-corpora]``.
"""

from __future__ import annotations

import argparse
import itertools
import re
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from benchlib import BenchRun, time_both, time_runs

from posthoc.eaglet.flags import Flag
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


def rule_run(documents: pd.DataFrame, mentions: pd.DataFrame, rule: InconsistentMarkingRule) -> list[Flag]:
    """The rule on a fresh context (the context is built outside the timing by the caller's lambda too)."""
    return rule.run(CheckContext.from_tables(documents, mentions, system="GT"))


def _pattern(surfaces: set[str]) -> re.Pattern[str]:
    """One alternation of the surfaces, longest (in tokens) first, tokens joined by white space."""
    parts = []
    for surface in sorted(surfaces, key=lambda text: (-len(tokens(text)), text)):
        toks = [t for _, _, t in tokens(surface)]
        body = re.escape(toks[0])
        for before, token in itertools.pairwise(toks):
            body += (r"\s+" if before[-1].isalnum() and token[0].isalnum() else r"\s*") + re.escape(token)
        head = r"(?<![^\W_])" if toks[0][0].isalnum() else ""
        tail = r"(?![^\W_])" if toks[-1][-1].isalnum() else ""
        parts.append(head + body + tail)
    return re.compile("|".join(parts))


def regex_baseline(documents: pd.DataFrame, mentions: pd.DataFrame) -> set[tuple[str, str, int, int]]:
    """The competent baseline (module docstring): ``(dataset, doc_id, start, end)`` of every proposal."""
    spans: dict[tuple[str, str], list[tuple[int, int]]] = {}
    surfaces: dict[str, set[str]] = {}
    for dataset, doc_id, start, end, surface in mentions[["dataset", "doc_id", "start", "end", "surface"]].itertuples(
        index=False
    ):
        spans.setdefault((dataset, doc_id), []).append((start, end))
        if len(surface.strip()) >= 2 and any(c.isalnum() for c in surface):
            surfaces.setdefault(dataset, set()).add(surface)
    patterns = {dataset: _pattern(names) for dataset, names in surfaces.items()}
    found = set()
    for dataset, doc_id, text in documents[["dataset", "doc_id", "text"]].itertuples(index=False):
        pattern = patterns.get(dataset)
        if pattern is None:
            continue
        position = 0
        for start, end in [*sorted(spans.get((dataset, doc_id), [])), (len(text), len(text))]:
            if start > position:
                for match in pattern.finditer(text, position, start):
                    found.add((dataset, doc_id, match.start(), match.end()))
            position = max(position, end)
    return found


def fitted_exponent(sizes: list[int], seconds: list[float]) -> float:
    slope, _ = np.polyfit(np.log(sizes), np.log(seconds), 1)
    return float(slope)


def bench_inconsistent_marking(run: BenchRun, base: int, repeats: int) -> None:
    sizes = [base, 4 * base, 16 * base]
    tokens("warm up")  # builds the Unicode word pattern once, outside the timings
    default = InconsistentMarkingRule()
    paper = InconsistentMarkingRule(inside_names=True, common_words=True, links="majority")
    seconds = []
    run.print(f"1. inconsistent marking (defaults), synthetic corpus (seed 7), median of {repeats}")
    run.print(f"{'documents':>10} {'annotations':>12} {'proposals':>10} {'wall s':>9} {'CPU s':>9}")
    corpora = {}
    for size in sizes:
        documents, mentions = synthetic(size)
        corpora[size] = (documents, mentions)
        timing = time_runs(lambda d=documents, m=mentions: rule_run(d, m, default), runs=repeats)
        seconds.append(timing.wall_median)
        run.print(f"{size:>10} {len(mentions):>12} {len(timing.result):>10} {timing.wall_median:9.3f} "
                  f"{timing.cpu_median:9.3f}")
    exponent = fitted_exponent(sizes, seconds)
    run.print(f"fitted exponent (log-log least squares): {exponent:.3f}  (target <= 1.15: "
              f"{'met' if exponent <= 1.15 else 'MISSED'})")
    run.print(f"{sizes[-1]} documents: {seconds[-1]:.2f} s wall  (target < 30 s: "
              f"{'met' if seconds[-1] < 30 else 'MISSED'})")
    documents, mentions = corpora[sizes[-1]]
    started = time.perf_counter()
    Pipeline((InconsistentMarkingRule(),)).run(documents, mentions)
    run.print(f"{sizes[-1]} documents incl. building the context and the flags table: "
              f"{time.perf_counter() - started:.2f} s")
    run.print(f"\n2. the paper's settings against the regex baseline (same proposals), median of {repeats}")
    ratios: list[tuple[int, float]] = []
    for size in sizes[:2]:
        documents, mentions = corpora[size]
        ours, regex = time_both(lambda d=documents, m=mentions: rule_run(d, m, paper),
                                lambda d=documents, m=mentions: regex_baseline(d, m), runs=repeats)
        proposed = {(f.dataset, f.doc_id, f.start, f.end) for f in ours.result}
        if proposed != regex.result:
            run.fail(f"at {size} documents the rule proposes {len(proposed)} spans, the regex baseline "
                     f"{len(regex.result)} ({len(proposed ^ regex.result)} differ)")
        run.print(f"{size:>6} documents, {len(proposed)} identical proposals: ours {ours.summary()}")
        run.print(f"{'':>6} regex baseline: {regex.summary()}; ratio {regex.wall_median / ours.wall_median:.2f}x "
                  f"wall, {regex.cpu_median / ours.cpu_median:.2f}x CPU")
        ratios.append((size, regex.wall_median / ours.wall_median))
    run.headline(f"inconsistent marking: exponent {exponent:.3f} (target <= 1.15), {sizes[-1]:,} documents in "
                 f"{seconds[-1]:.2f} s (target < 30 s); " + ", ".join(
                     f"{r:.1f}x the regex baseline at {n:,} documents" for n, r in ratios) + ", same proposals")


def bench_corpora(run: BenchRun) -> None:
    wned = SHARED / "wned-wikipedia"
    paths = sorted((SHARED / "nif").glob("*.ttl")) + ([wned] if wned.is_dir() else [])
    if not paths:
        run.print("../shared/data absent: corpus table skipped")
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
    run.print(f"\n3. whole pipeline (no KB: URI form only) on {', '.join(p.name for p in paths)}: {elapsed:.1f} s")
    run.print(shares.rename(columns=ABBREVIATIONS).to_markdown(index=False) if _has_tabulate() else
              shares.rename(columns=ABBREVIATIONS).to_string(index=False))


def _has_tabulate() -> bool:
    try:
        import tabulate  # noqa: F401
    except ImportError:
        return False
    return True


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", type=int, default=625, help="documents at 1x (16x = 10,000 by default)")
    parser.add_argument("--repeats", type=int, default=3, help="timings per size (median)")
    parser.add_argument("--no-corpora", action="store_true", help="skip the shared corpora table")
    args = parser.parse_args()
    with BenchRun("eaglet_bench") as run:
        bench_inconsistent_marking(run, args.base, args.repeats)
        if not args.no_corpora:
            bench_corpora(run)
    return 0


if __name__ == "__main__":
    sys.exit(main())
