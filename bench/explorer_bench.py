"""Bench: the study explorer on the paper-sized study (paper 000, Table 1: 167,432 judgements; issue 45).

The study of ``score_bench.py`` (:func:`posthoc.synthetic.paper_sized_study`, k = 1), scored with the defaults. Then:

1. Writing the explorer (:func:`posthoc.report.explorer.write_explorer`: the annotations, their judgements, every
   cell of every score table) against **the competent JSON**: what an engineer writes without our layout, one
   JSON object a annotation (its fields and judgements by name) and, for every cell, the explicit list of its
   annotations' numbers, from the same :class:`~posthoc.report.explorer_data.ExplorerData`. Both are timed with
   ``benchlib.time_both``; both must list the same annotations for every cell (checked), the file sizes and the
   write times are compared.
2. In Debian's chromium through Playwright (headless, file://, no network): the first screen (the time from the
   navigation's start until the first frame after the page is ready, ``performance.now()`` on the page; target
   < 2 s), then a click-through to a cell of about 10,000 annotations and to the largest cell (from choosing the
   cell until the next frame shows its list and first case; target < 200 ms) and the next case (``j``), each the
   median of several runs. The report folder's size: the explorer's files beside ``report.html`` with its links.

    python bench/explorer_bench.py               # paper size
    python bench/explorer_bench.py --scale 0.1   # a tenth, a quick look
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from benchlib import BenchRun, time_both

from posthoc.metrics import ScoringOptions, score_judgements
from posthoc.report.explorer import DATA, PAGE, CellLinks, write_explorer
from posthoc.report.explorer_cells import build_explorer_data
from posthoc.report.explorer_data import VERDICTS, ExplorerData
from posthoc.report.study_report import build_report
from posthoc.synthetic import paper_sized_study

FIRST_SCREEN_MS = 2000.0
CLICK_MS = 200.0
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


def competent_json(data: ExplorerData, folder: Path) -> dict[str, list[int]]:
    """The baseline: every annotation a JSON object with its judgements, every cell its explicit member list."""
    ann = data.annotations
    records = []
    for row, (d, doc, system, start, end, link, surface, verdict) in enumerate(ann[
            ["dataset", "doc_id", "system", "start", "end", "link", "surface", "verdict"]].itertuples(index=False)):
        judged = range(data.judgement_offsets[row], data.judgement_offsets[row + 1])
        records.append({"dataset": d, "doc_id": doc, "system": system, "start": int(start), "end": int(end),
                        "link": link, "surface": surface, "verdict": VERDICTS[int(verdict)],
                        "judgements": [{"worker": data.workers[data.judgement_worker[j]],
                                        "outcome": int(data.judgement_outcome[j])} for j in judged]})
    cells = {cell: data.members(cell).tolist() for cell in data.cells}
    (folder / "baseline.json").write_text(json.dumps({"annotations": records, "cells": cells}), encoding="utf-8")
    return cells


def _size(folder: Path, names: list[str]) -> int:
    return sum((folder / name).stat().st_size for name in names)


def browser_timings(folder: Path, cells: list[str], *, runs: int) -> dict[str, list[float]]:
    """Milliseconds on the page: first screen, each cell's click-through, the next case, ``runs`` times each."""
    from urllib.parse import quote

    from playwright.sync_api import sync_playwright

    cells = list(dict.fromkeys(cells))
    found: dict[str, list[float]] = {"first": [], **{cell: [] for cell in cells}, "next": []}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        for _ in range(runs):
            page = browser.new_page(bypass_csp=True)  # Playwright's waits evaluate strings; the page needs no eval
            errors: list[str] = []
            page.on("pageerror", lambda error, seen=errors: seen.append(str(error)))
            page.goto((folder / PAGE).as_uri())
            page.wait_for_function("window.__explorerTimings && window.__explorerTimings.firstPaint", timeout=60_000)
            found["first"].append(page.evaluate("window.__explorerTimings.firstPaint"))
            for cell in cells:
                index = page.evaluate(f"window.POSTHOC_EXPLORER_DATA.cells.ids.indexOf({json.dumps(cell)})")
                page.evaluate(f"location.hash = 'cell=' + {json.dumps(quote(cell, safe=''))}")
                page.wait_for_function(f"window.__explorerTimings.cellPaintedOf === {index}", timeout=30_000)
                found[cell].append(page.evaluate("window.__explorerTimings.cellPainted"))
                page.evaluate("window.__explorerTimings.cellPaintedOf = null")
            page.click("#list tbody tr:nth-child(1)")
            page.wait_for_function("window.__explorerTimings.movePaintedOf === 0")
            page.keyboard.press("j")
            page.wait_for_function("window.__explorerTimings.movePaintedOf === 1")
            found["next"].append(page.evaluate("window.__explorerTimings.movePainted"))
            if errors:
                raise SystemExit(f"the page failed: {errors[0]}")
            page.close()
        browser.close()
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="multiply Table 1's sizes (default 1)")
    parser.add_argument("--runs", type=int, default=3, help="timed runs of each side (default 3)")
    args = parser.parse_args(argv)
    with BenchRun("explorer_bench" if args.scale == 1.0 else "explorer_bench_small", argv=argv) as run:
        made = time.perf_counter()
        documents, mentions, judgements = paper_sized_study(scale=args.scale)
        scores = score_judgements(judgements, mentions, options=ScoringOptions())
        run.print(f"study: {len(judgements):,} judgements, {len(mentions):,} mentions, {len(documents):,} documents;"
                  f" made and scored in {time.perf_counter() - made:.1f} s")
        work = Path(tempfile.mkdtemp(prefix="explorer-bench-"))
        try:
            ours_dir, base_dir = work / "ours", work / "base"
            ours_dir.mkdir()
            base_dir.mkdir()
            ours, base = time_both(
                lambda: write_explorer(ours_dir, scores=scores, judgements=judgements, mentions=mentions,
                                       documents=documents),
                lambda: competent_json(build_explorer_data(scores, judgements, mentions), base_dir), runs=args.runs)
            data = build_explorer_data(scores, judgements, mentions)
            baseline_cells = json.loads((base_dir / "baseline.json").read_text(encoding="utf-8"))["cells"]
            if any(data.members(cell).tolist() != baseline_cells[cell] for cell in data.cells):
                run.fail("the explorer's cells and the baseline's disagree")
            names = [PAGE, "explorer.css", "explorer.js", DATA]
            size, base_size = _size(ours_dir, names), _size(base_dir, ["baseline.json"])
            report = build_report(scores, links=CellLinks(PAGE))
            sizes = sorted((len(data.members(c)), c) for c in data.cells)
            ten_thousand = min(sizes, key=lambda item: abs(item[0] - 10_000))
            largest = sizes[-1]
            run.print(f"write: ours {ours.summary()}; competent JSON {base.summary()}")
            run.print(f"explorer files {size / 2**20:.1f} MiB (data {_size(ours_dir, [DATA]) / 2**20:.1f} MiB) vs "
                      f"competent JSON {base_size / 2**20:.1f} MiB; report.html {len(report.encode()) / 2**20:.2f} "
                      f"MiB; {len(data.cells):,} cells, {len(data.annotations):,} annotations")
            timings = browser_timings(ours_dir, [ten_thousand[1], largest[1]], runs=max(args.runs, 3))
        finally:
            shutil.rmtree(work, ignore_errors=True)
        first = statistics.median(timings["first"])
        cell_ms = statistics.median(timings[ten_thousand[1]])
        largest_ms = statistics.median(timings[largest[1]])
        next_ms = statistics.median(timings["next"])
        for name, values in timings.items():
            run.print(f"chromium {name}: " + ", ".join(f"{v:.0f}" for v in values) + " ms")
        met = first < FIRST_SCREEN_MS and cell_ms < CLICK_MS and largest_ms < CLICK_MS
        run.headline(f"paper-size study ({len(judgements):,} judgements, {len(data.cells):,} cells): explorer "
                     f"written in {ours.wall_median:.2f} s wall median ({base.wall_median / ours.wall_median:.1f}x "
                     f"the competent JSON's speed), {size / 2**20:.1f} MiB ({base_size / size:.1f}x smaller)")
        run.headline(f"chromium, file://: first screen {first:.0f} ms (target < {FIRST_SCREEN_MS:.0f}); a "
                     f"{ten_thousand[0]:,}-annotation cell {cell_ms:.0f} ms, the largest ({largest[0]:,}) "
                     f"{largest_ms:.0f} ms, next case {next_ms:.0f} ms (target < {CLICK_MS:.0f}): "
                     f"{'met' if met else 'MISSED'}; median of {len(timings['first'])}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
