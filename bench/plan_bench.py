"""Plan a study of the paper's size (paper 000, Table 1) and write its manifest: time and peak memory.

Synthesises a corpus shaped like Table 1 -- per dataset its documents, each system's annotations
(GT, E2E, REL) and the number of tasks (chunks with at least one annotation of that system) -- then
times :func:`posthoc.study.plan_study` and :meth:`posthoc.study.plan.manifest.Manifest.create` (median of
``--runs``, wall and CPU). Targets on the 2-core CI machine: plan + write under 10 s, under 1 GB.

Baseline for the write: what a competent engineer writes without our storage module, pandas'
``DataFrame.to_sql`` of the same seven tables (and the meta table) into a fresh SQLite file, then the
same indexes. Both sides are timed with ``benchlib.time_both`` and every table is read back from both
files and compared row by row (the bench fails if any differs). The planning itself has no peer to
compare with (no other tool plans posthoc verification studies); its figure stands against its target.

    python bench/plan_bench.py [--k 1] [--seed 1] [--runs 3]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import resource
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from benchlib import BenchRun, time_both, time_runs

from posthoc.study import StudyConfig, StudyPlan, plan_study
from posthoc.study.plan import storage
from posthoc.study.plan.manifest import Manifest, _meta, _tables

#: dataset -> (documents, annotations GT/E2E/REL, tasks GT/E2E/REL), from Table 1 of paper 000
TABLE_1: dict[str, tuple[int, tuple[int, int, int], tuple[int, int, int]]] = {
    "AIDA-train": (946, (18541, 18301, 21204), (2801, 2802, 2913)),
    "AIDA-A": (216, (4791, 4758, 5443), (713, 715, 725)),
    "AIDA-B": (231, (4485, 4375, 5086), (636, 646, 654)),
    "ACE2004": (57, (257, 1355, 1675), (114, 318, 334)),
    "AQUAINT": (50, (727, 810, 925), (175, 170, 179)),
    "CLUEWEB": (320, (11154, 12273, 23114), (3526, 3678, 4944)),
    "MSNBC": (20, (656, 629, 756), (164, 163, 171)),
    "WIKIPEDIA": (345, (6793, 8141, 11184), (1348, 1578, 1638)),
}
SYSTEMS = ("GT", "E2E", "REL")
NAMES = ("Paris", "Angela Merkel", "Deutsche Bank", "São Paulo", "Nguyễn Văn An", "東京", "Zoë Kravitz", "FC Porto",
         "Ålesund", "Kraków", "Reuters", "Manchester United", "Ngozi Okonjo-Iweala", "Seoul", "Québec")
FILLER = ("the", "said", "on", "a", "report", "in", "with", "after", "and", "of", "market", "team", "week", "its")


def _split(total: int, parts: int, rng: np.random.Generator) -> np.ndarray:
    """``total`` as ``parts`` positive integers, at random."""
    counts = np.ones(parts, dtype=np.int64)
    counts += np.bincount(rng.integers(0, parts, size=max(total - parts, 0)), minlength=parts)
    return counts


def _filler(min_chars: int, rng: np.random.Generator) -> str:
    words: list[str] = []
    while len(" ".join(words)) < min_chars:
        words.append(FILLER[int(rng.integers(len(FILLER)))])
    return " ".join(words)


def _sentence_text(n_entities: int, rng: np.random.Generator) -> tuple[str, list[tuple[int, int]]]:
    """One chunk's text holding ``n_entities`` entity names, and their spans.

    An entity-free first sentence of at least 60 characters and a length of at least 240 make the
    chunker cut exactly between two synthetic chunks (its window of 300 cannot reach the next
    chunk's first sentence end), so tasks per system come out as in Table 1.
    """
    text = _filler(60, rng).capitalize() + "."
    spans: list[tuple[int, int]] = []
    remaining = n_entities
    while remaining:
        group = min(remaining, 4)
        text += " " + _filler(2, rng).capitalize() + " "
        for g in range(group):
            if g:
                text += ", " if g < group - 1 else " and "
            name = NAMES[int(rng.integers(len(NAMES)))]
            spans.append((len(text), len(text) + len(name)))
            text += name
        text += " " + _filler(1, rng) + "."
        remaining -= group
    while len(text) < 240:
        text += " " + _filler(20, rng).capitalize() + "."
    return text, spans


def synthesise(seed: int = 1) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Documents and mentions shaped like Table 1 (documents, annotations and tasks per system)."""
    rng = np.random.default_rng(seed)
    doc_rows: list[tuple[str, str, str]] = []
    dataset_col: list[str] = []
    doc_col: list[str] = []
    system_col: list[str] = []
    start_col: list[int] = []
    end_col: list[int] = []
    surface_col: list[str] = []
    link_col: list[str] = []
    for dataset, (n_docs, n_annotations_by_system, tasks) in TABLE_1.items():
        n_chunks = max(tasks)
        counts = np.zeros((len(SYSTEMS), n_chunks), dtype=np.int64)
        for s, (n_annotations, n_tasks) in enumerate(zip(n_annotations_by_system, tasks, strict=True)):
            chosen = rng.choice(n_chunks, size=n_tasks, replace=False)
            counts[s, chosen] = _split(n_annotations, n_tasks, rng)
        extra = rng.integers(0, n_docs, size=max(n_chunks - n_docs, 0))
        chunk_doc = np.sort(np.concatenate([np.arange(n_docs), extra]))
        chunk_doc = chunk_doc[:n_chunks] if n_chunks >= n_docs else np.arange(n_docs)
        for d in range(n_docs):
            doc_id = f"{dataset}-{d:04d}"
            text = ""
            for c in np.flatnonzero(chunk_doc == d):
                n_slots = int(counts[:, c].max()) if c < n_chunks else 0
                part, spans = _sentence_text(n_slots, rng)
                offset = len(text) + (1 if text else 0)
                text += (" " if text else "") + part
                for s, system in enumerate(SYSTEMS):
                    keep = rng.choice(n_slots, size=int(counts[s, c]), replace=False) if n_slots else []
                    for slot in sorted(keep):
                        start, end = spans[slot]
                        surface = part[start:end]
                        link = surface.replace(" ", "_") if system == "GT" or rng.random() < 0.8 else "Other_entity"
                        dataset_col.append(dataset)
                        doc_col.append(doc_id)
                        system_col.append(system)
                        start_col.append(offset + start)
                        end_col.append(offset + end)
                        surface_col.append(surface)
                        link_col.append(f"https://en.wikipedia.org/wiki/{link}")
            doc_rows.append((dataset, doc_id, text or "Empty document."))
    documents = pd.DataFrame(doc_rows, columns=["dataset", "doc_id", "text"])
    mentions = pd.DataFrame({"dataset": dataset_col, "doc_id": doc_col, "system": system_col, "start": start_col,
                             "end": end_col, "surface": surface_col, "link": link_col, "link_original": link_col,
                             "is_nil": False})
    return documents, mentions


def _rss_mb() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def to_sql_baseline(path: Path, plan: StudyPlan) -> None:
    """The baseline writer: ``DataFrame.to_sql`` per table into a fresh file, then the same indexes."""
    connection = sqlite3.connect(path)
    try:
        pd.DataFrame(sorted(_meta(plan).items()), columns=["key", "value"]).to_sql("meta", connection, index=False)
        for name, frame in _tables(plan).items():
            columns = [column for column, _ in storage.TABLES[name]]
            frame[columns].to_sql(name, connection, index=False)
        _, indexes = storage._schema()
        for statement in indexes:
            connection.execute(statement)
        connection.commit()
    finally:
        connection.close()


def read_back(path: Path) -> dict[str, tuple[int, str]]:
    """Every table's row count and a SHA-256 of its rows in storage order (values as Python reads them)."""
    connection = sqlite3.connect(path)
    try:
        out = {}
        for name in ("meta", *storage.TABLES):
            columns = ["key", "value"] if name == "meta" else [c for c, _ in storage.TABLES[name]]
            quoted = ", ".join(f'"{c}"' for c in columns)
            digest, count = hashlib.sha256(), 0
            for row in connection.execute(f"SELECT {quoted} FROM {name} ORDER BY rowid"):  # noqa: S608
                digest.update(repr(row).encode("utf-8"))
                count += 1
            out[name] = (count, digest.hexdigest())
        return out
    finally:
        connection.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--k", type=int, default=1, help="judgements per item (1 as in the paper)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the synthetic corpus and of the study")
    parser.add_argument("--runs", type=int, default=3, help="timed runs of each step (default 3; median)")
    args = parser.parse_args()

    with BenchRun("plan_bench") as run:
        t0 = time.perf_counter()
        documents, mentions = synthesise(args.seed)
        t_synth = time.perf_counter() - t0
        rss_before = _rss_mb()
        config = StudyConfig(name="paper-size", seed=args.seed, k=args.k)
        planned = time_runs(lambda: plan_study(documents, mentions, config), runs=args.runs)
        plan = planned.result
        with tempfile.TemporaryDirectory() as scratch:
            folder = Path(scratch)
            counter = iter(range(10**6))

            rss_ours: list[float] = []

            def ours() -> Path:
                out = folder / f"ours-{next(counter)}.sqlite"
                Manifest.create(out, plan).close()
                if not rss_ours:  # the first run goes before any baseline run: plan + our write only
                    rss_ours.append(_rss_mb())
                return out

            def baseline() -> Path:
                out = folder / f"to_sql-{next(counter)}.sqlite"
                to_sql_baseline(out, plan)
                return out

            written, to_sql = time_both(ours, baseline, runs=args.runs)
            same = read_back(written.result) == read_back(to_sql.result)
            size_mb = os.path.getsize(written.result) / 1e6
            baseline_mb = os.path.getsize(to_sql.result) / 1e6
        rss_peak, rss_all = rss_ours[0], _rss_mb()
        tasks_by_system = plan.tasks[~plan.tasks["is_control"]].groupby("system").size().to_dict()
        s = plan.summary
        run.print(f"synthetic corpus ({t_synth:.1f} s to build, not timed): {len(documents)} documents, "
                  f"{len(mentions)} annotations (Table 1: 2,185 documents, 167,433 annotations)")
        run.print(f"plan: {s['chunks']} chunks ({s['oversized_chunks']} grown), {s['items']} items, {s['tasks']} "
                  f"tasks ({s['tasks'] - s['control_tasks']} real: {tasks_by_system}; Table 1: 31,105 = GT 9,477, "
                  f"E2E 10,070, REL 11,558), {s['control_tasks']} control tasks, {s['workers']} workers, "
                  f"{s['tasks_per_worker_min']}-{s['tasks_per_worker_max']} tasks per worker, k = {args.k}")
        run.print(f"plan_study:      {planned.summary()}")
        run.print(f"Manifest.create: {written.summary()}; {size_mb:.1f} MB")
        run.print(f"baseline to_sql: {to_sql.summary()}; {baseline_mb:.1f} MB")
        if not same:
            run.fail("the manifest and the to_sql baseline hold different rows")
        run.print(f"same rows in every table: yes; Manifest.create vs to_sql: "
                  f"{to_sql.wall_median / written.wall_median:.2f}x wall, "
                  f"{to_sql.cpu_median / written.cpu_median:.2f}x CPU (median)")
        total = planned.wall_median + written.wall_median
        run.print(f"plan + write, median wall {total:.2f} s (target < 10 s: {'met' if total < 10 else 'MISSED'}); "
                  f"CPU {planned.cpu_median + written.cpu_median:.2f} s")
        run.print(f"peak RSS after planning and our write: {rss_peak:.0f} MB (after building the corpus: "
                  f"{rss_before:.0f} MB; target < 1024 MB: {'met' if rss_peak < 1024 else 'MISSED'}); "
                  f"with the baseline's runs too: {rss_all:.0f} MB")
        run.print()
        run.headline(f"paper-size study ({s['tasks'] - s['control_tasks']:,} real tasks, {s['workers']:,} workers): "
                     f"plan {planned.wall_median:.2f} s + manifest {written.wall_median:.2f} s wall median "
                     f"(target < 10 s), peak RSS {rss_peak:.0f} MB (target < 1 GB)")  # fmt: skip
        run.headline(f"Manifest.create {to_sql.wall_median / written.wall_median:.2f}x the speed of pandas to_sql "
                     f"of the same tables (median wall), same rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
