"""Bench: flattening a large Label Studio export, streaming (posthoc.export) vs loading the JSON whole.

Writes a synthetic export of N judgements (default 100 000; ``--judgements``), then in fresh
subprocesses (interleaved, ``--runs`` each; median wall and CPU, peak RSS growth) flattens it with:

ours      ``ExportFlattener.add_export``: ijson, one task at a time;
baseline  what a competent engineer writes without streaming: ``json.load`` of the whole file, then
          the same flattener's ``add_task`` on each task of the list (the same rules, so any
          difference is the reading).

Both must produce the same judgements table (``assert_frame_equal``); the bench fails otherwise.
Prints the figures and their ratios against the target (memory far below the file's size).

    python bench/export_bench.py --judgements 100000 [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
from benchlib import BenchRun, Timing

PER_TASK = 10
MODES = ("stream", "json.load")
LABELS = {"stream": "ours, streaming add_export   ", "json.load": "baseline, json.load + add_task"}
TEXT = ("Die Zürcher Straße 🇨🇭 liegt am See; 東京 and Paris are far. " * 6)[:300]

_CHILD = r"""
import json, resource, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[3])
from export_bench import build_index
from posthoc.export.flatten import ExportFlattener
mode, path, out = sys.argv[1], Path(sys.argv[2]), sys.argv[5]
index, tags = build_index(int(sys.argv[4]))
def rss():
    return int(open('/proc/self/statm').read().split()[1]) * resource.getpagesize()
before = rss()
started, cpu = time.perf_counter(), time.process_time()
flattener = ExportFlattener(index, tags)
if mode == 'stream':
    flattener.add_export(path)
else:
    with path.open('rb') as handle:
        tasks = json.load(handle)
    for task in tasks:
        flattener.add_task(task, source=str(path))
judgements = flattener.result().judgements
elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
judgements.to_pickle(out)
print(json.dumps({'n': len(judgements), 'seconds': elapsed, 'cpu': cpu, 'growth': max(peak - before, 0)}))
"""


def build_index(n_tasks: int):  # type: ignore[no-untyped-def]
    import pandas as pd

    from posthoc.labelstudio.label_config import verification_tags
    from posthoc.paths import label_config
    from posthoc.study.plan.index import ManifestIndex

    keys = [f"t{i:07d}" for i in range(n_tasks)]
    tasks = pd.DataFrame({
        "task_key": keys, "worker": [f"w{i % 50:03d}" for i in range(n_tasks)],
        "position": [i // 50 for i in range(n_tasks)], "item_id": [f"i{i:07d}" for i in range(n_tasks)],
        "chunk_id": [f"c{i // 3:07d}" for i in range(n_tasks)], "dataset": "big",
        "doc_id": [f"d{i // 9:07d}" for i in range(n_tasks)],
        "system": [("GT", "E2E", "REL")[i % 3] for i in range(n_tasks)], "is_control": False})
    rows = [(key, f"m{key}{j}", 27 * j, 27 * j + 5, 27 * j, 27 * j + 5, TEXT[27 * j:27 * j + 5],
             f"https://en.wikipedia.org/wiki/E{j}", None) for key in keys for j in range(PER_TASK)]
    mentions = pd.DataFrame(rows, columns=["task_key", "mention_id", "start", "end", "doc_start", "doc_end",
                                           "surface", "link", "expected_outcome"])
    return ManifestIndex.from_frames("big", tasks, mentions), verification_tags(label_config("entity_verification"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--judgements", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3, help="runs of each side, interleaved (default 3)")
    args = parser.parse_args()
    n_tasks = max(args.judgements // PER_TASK, 1)
    from posthoc.export.synthetic import write_synthetic_export

    with BenchRun("export_bench") as run, tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "export.json"
        index, tags = build_index(n_tasks)
        started = time.perf_counter()
        written = write_synthetic_export(path, index, tags, texts=dict.fromkeys(index.tasks, TEXT), seed=1)
        size = path.stat().st_size
        run.print(f"wrote {written.n_judgements} judgements in {n_tasks} tasks: {size / 1e6:.1f} MB "
                  f"in {time.perf_counter() - started:.1f} s")
        here = str(Path(__file__).resolve().parent)
        timings = {mode: Timing() for mode in MODES}
        growth: dict[str, list[int]] = {mode: [] for mode in MODES}
        for _ in range(args.runs):
            for mode in MODES:
                out = str(Path(folder) / f"{mode}.pickle")
                done = subprocess.run([sys.executable, "-c", _CHILD, mode, str(path), here, str(n_tasks), out],
                                      capture_output=True, text=True, check=True)
                figure = json.loads(done.stdout.strip().splitlines()[-1])
                timings[mode].wall.append(figure["seconds"])
                timings[mode].cpu.append(figure["cpu"])
                growth[mode].append(figure["growth"])
        stream = pd.read_pickle(Path(folder) / "stream.pickle")  # noqa: S301 - written by this bench
        whole = pd.read_pickle(Path(folder) / "json.load.pickle")  # noqa: S301
        try:
            pd.testing.assert_frame_equal(stream, whole)
        except AssertionError as exc:
            run.fail(f"the streaming and the json.load flatten differ: {exc}")
        run.print(f"same judgements table from both: yes ({len(stream)} rows)")
        for mode in MODES:
            peak = statistics.median(growth[mode])
            run.print(f"{LABELS[mode]}: {timings[mode].summary()}; peak RSS growth (median) {peak / 1e6:.1f} MB "
                      f"= {peak / size:.2f} x file size")
        ours, base = timings["stream"], timings["json.load"]
        memory = statistics.median(growth["stream"]) / max(statistics.median(growth["json.load"]), 1)
        run.print(f"streaming needs {memory:.2f} x the memory of json.load + flatten (target: far below the file: "
                  f"{'met' if statistics.median(growth['stream']) < size else 'MISSED'}); time "
                  f"{base.wall_median / ours.wall_median:.2f}x wall, {base.cpu_median / ours.cpu_median:.2f}x CPU "
                  f"(json.load / streaming, median); {written.n_judgements / ours.wall_median:.0f} judgements/s")
        run.print()
        streamed, loaded = statistics.median(growth["stream"]) / 1e6, statistics.median(growth["json.load"]) / 1e6
        run.headline(f"{written.n_judgements:,} judgements ({size / 1e6:.0f} MB export): streaming peak RSS growth "
                     f"{streamed:.0f} MB vs {loaded:.0f} MB for json.load + the same flatten ({memory:.2f}x), "
                     "same table; "
                     f"{base.wall_median / ours.wall_median:.2f}x the speed")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
