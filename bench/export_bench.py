"""Bench: flattening a large Label Studio export, streaming (posthoc.export) vs loading the JSON whole.

Writes a synthetic export of N judgements (default 100 000; ``--judgements``), then in fresh
subprocesses measures wall time and peak RSS growth of (a) ``ExportFlattener`` (ijson, task by task)
and (b) the baseline ``json.load`` of the same file (what any non-streaming reader needs before it
starts). Prints the figures and their ratios; asserts nothing about time.

    python bench/export_bench.py --judgements 100000
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PER_TASK = 10
TEXT = ("Die Zürcher Straße 🇨🇭 liegt am See; 東京 and Paris are far. " * 6)[:300]

_CHILD = r"""
import json, resource, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[3])
from export_bench import build_index
mode, path = sys.argv[1], Path(sys.argv[2])
index, tags = build_index(int(sys.argv[4]))
def rss():
    return int(open('/proc/self/statm').read().split()[1]) * resource.getpagesize()
before = rss()
started = time.perf_counter()
if mode == 'stream':
    from posthoc.export.flatten import ExportFlattener
    flattener = ExportFlattener(index, tags)
    flattener.add_export(path)
    n = len(flattener.result().judgements)
else:
    with path.open('rb') as handle:
        n = len(json.load(handle))
elapsed = time.perf_counter() - started
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({'n': n, 'seconds': elapsed, 'growth': max(peak - before, 0)}))
"""


def build_index(n_tasks: int):  # type: ignore[no-untyped-def]
    import pandas as pd

    from posthoc.export.flatten import ManifestIndex
    from posthoc.export.tags import verification_tags
    from posthoc.paths import label_config

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--judgements", type=int, default=100_000)
    args = parser.parse_args()
    n_tasks = max(args.judgements // PER_TASK, 1)
    from posthoc.export.synthetic import write_synthetic_export

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "export.json"
        index, tags = build_index(n_tasks)
        started = time.perf_counter()
        written = write_synthetic_export(path, index, tags, texts=dict.fromkeys(index.tasks, TEXT), seed=1)
        print(f"wrote {written.n_judgements} judgements in {n_tasks} tasks: {path.stat().st_size / 1e6:.1f} MB "
              f"in {time.perf_counter() - started:.1f} s")
        here = str(Path(__file__).resolve().parent)
        figures = {}
        for mode in ("stream", "json.load"):
            done = subprocess.run([sys.executable, "-c", _CHILD, mode, str(path), here, str(n_tasks)],
                                  capture_output=True, text=True, check=True)
            figures[mode] = json.loads(done.stdout.strip().splitlines()[-1])
        size = path.stat().st_size
        for mode, figure in figures.items():
            print(f"{mode:>9}: {figure['seconds']:6.1f} s, peak RSS growth {figure['growth'] / 1e6:7.1f} MB "
                  f"= {figure['growth'] / size:.2f} x file size")
        stream, whole = figures["stream"], figures["json.load"]
        print(f"streaming flatten needs {stream['growth'] / max(whole['growth'], 1):.2f} x the memory of json.load "
              f"alone, at {written.n_judgements / stream['seconds']:.0f} judgements/s")


if __name__ == "__main__":
    main()
