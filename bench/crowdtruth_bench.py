"""Benchmark: the RTE input (8000 judgements) through the peer ``crowdtruth`` 2.1 and through ours, in one run.

Prints the wall-clock time of each (load + metrics, and metrics alone), their ratio, and the largest
absolute difference between the two implementations' unit, worker, annotation and unit-annotation
scores. Target: at least 50x faster with identical numbers (differences at float rounding level).

    python bench/crowdtruth_bench.py [--data ../shared/data/crowdtruth/input/rte.standardized.csv] [--repeat 5]
"""

from __future__ import annotations

import argparse
import logging
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from posthoc.crowdtruth.io import CrowdTruthConfig, read_crowdtruth_csv
from posthoc.crowdtruth.metrics import crowdtruth_metrics
from posthoc.crowdtruth.vectors import build_vectors

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "crowdtruth" / "input" / "rte.standardized.csv"
RTE = CrowdTruthConfig(
    input_columns=("gold", "task", "text", "hypothesis"),
    output_columns=("response",),
    custom_platform_columns=("!amt_annotation_ids", "orig_id", "!amt_worker_ids", "start", "end"),
    open_ended=False,
    annotation_vector=("0", "1"),
    lowercase=True,
)


def run_peer(path: Path) -> tuple[dict[str, pd.DataFrame], float, float, float, float]:
    from crowdtruth.configuration import DefaultConfig
    from crowdtruth.models.metrics import Metrics

    import crowdtruth

    class PeerConfig(DefaultConfig):  # type: ignore[misc]
        inputColumns = list(RTE.input_columns)  # noqa: RUF012
        outputColumns = list(RTE.output_columns)  # noqa: RUF012
        customPlatformColumns = list(RTE.custom_platform_columns)  # noqa: RUF012
        open_ended_task = False
        annotation_vector = list(RTE.annotation_vector)  # noqa: RUF012

        def processJudgments(self, judgments: pd.DataFrame) -> pd.DataFrame:
            for col in self.outputColumns:
                judgments[col] = judgments[col].apply(lambda x: str(x).lower())
            return judgments

    logging.disable(logging.WARNING)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start, cpu_start = time.perf_counter(), time.process_time()
        data, config = crowdtruth.load(file=str(path), config=PeerConfig())
        loaded, cpu_loaded = time.perf_counter(), time.process_time()
        results = Metrics.run(data, config)
        done, cpu_done = time.perf_counter(), time.process_time()
    logging.disable(logging.NOTSET)
    return results, done - start, done - loaded, cpu_done - cpu_start, cpu_done - cpu_loaded


def run_ours(path: Path, repeat: int) -> tuple[object, float, float, float, float]:
    total, metrics_only, cpu, cpu_metrics = [], [], [], []
    result = None
    for _ in range(repeat):
        start, cpu_start = time.perf_counter(), time.process_time()
        data = read_crowdtruth_csv(path, RTE)
        vectors = build_vectors(data.judgements, annotation_vector=data.annotation_vector, open_ended=False)
        loaded, cpu_loaded = time.perf_counter(), time.process_time()
        result = crowdtruth_metrics(vectors)
        done = time.perf_counter()
        cpu.append(time.process_time() - cpu_start)
        cpu_metrics.append(time.process_time() - cpu_loaded)
        total.append(done - start)
        metrics_only.append(done - loaded)
    return result, min(total), min(metrics_only), min(cpu), min(cpu_metrics)


def _diff(ours: pd.Series, peer: pd.Series) -> float:
    ours = ours.copy()
    peer = peer.copy()
    ours.index = ours.index.map(str)
    peer.index = peer.index.map(str)
    assert set(ours.index) == set(peer.index), "different units / workers / annotations"
    return float(np.max(np.abs(ours.to_numpy(dtype=float) - peer.reindex(ours.index).to_numpy(dtype=float))))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--repeat", type=int, default=20, help="runs of ours (the best is reported)")
    args = parser.parse_args()
    if not args.data.is_file():
        raise SystemExit(f"{args.data} not found (../shared/data is only beside the project in dev sessions and CI)")
    ours, ours_total, ours_metrics, ours_cpu, ours_cpu_metrics = run_ours(args.data, args.repeat)
    peer, peer_total, peer_metrics, peer_cpu, peer_cpu_metrics = run_peer(args.data)
    units = ours.units.set_index("unit")  # type: ignore[attr-defined]
    workers = ours.workers.set_index("worker")  # type: ignore[attr-defined]
    annotations = ours.annotations.set_index("annotation")  # type: ignore[attr-defined]
    diffs = {
        "uqs": _diff(units["uqs"], peer["units"]["uqs"]),
        "uqs_initial": _diff(units["uqs_initial"], peer["units"]["uqs_initial"]),
        "wqs": _diff(workers["wqs"], peer["workers"]["wqs"]),
        "wwa": _diff(workers["wwa"], peer["workers"]["wwa"]),
        "wua (peer wsa)": _diff(workers["wua"], peer["workers"]["wsa"]),
        "aqs": _diff(annotations["aqs"], peer["annotations"]["aqs"]),
        "aqs_initial": _diff(annotations["aqs_initial"], peer["annotations"]["aqs_initial"]),
    }
    uas = ours.unit_annotations.set_index(["unit", "annotation"])["uas"]  # type: ignore[attr-defined]
    uas.index = uas.index.map(lambda k: (str(k[0]), str(k[1])))
    peer_uas = pd.Series({(str(u), str(a)): v for u, c in peer["units"]["unit_annotation_score"].items()
                          for a, v in c.items()})
    diffs["uas"] = _diff(uas, peer_uas)
    worst = max(diffs.values())
    print(f"input: {args.data.name}: {len(units)} units, {len(workers)} workers, "
          f"{int(units['n_workers'].sum())} judgements; {ours.iterations} iterations")  # type: ignore[attr-defined]
    print(f"peer crowdtruth 2.1: load + metrics {peer_total:8.2f} s   metrics {peer_metrics:8.2f} s")
    print(f"ours (best of {args.repeat}):   load + metrics {ours_total:8.3f} s   metrics {ours_metrics:8.3f} s")
    print(f"speed-up (wall): load + metrics {peer_total / ours_total:7.1f}x   "
          f"metrics alone {peer_metrics / ours_metrics:7.1f}x   (target >= 50x)")
    print(f"speed-up (CPU time, robust to other load on the machine): load + metrics "
          f"{peer_cpu:.2f} s / {ours_cpu:.3f} s = {peer_cpu / ours_cpu:.1f}x   metrics alone "
          f"{peer_cpu_metrics:.2f} s / {ours_cpu_metrics:.3f} s = {peer_cpu_metrics / ours_cpu_metrics:.1f}x")
    for name, value in diffs.items():
        print(f"  max |ours - peer| {name:<15} {value:.2e}")
    print(f"identical numbers (max abs diff < 1e-9): {'yes' if worst < 1e-9 else 'NO'} ({worst:.2e})")


if __name__ == "__main__":
    main()
