"""Benchmark: the RTE input (8000 judgements) through the peer ``crowdtruth`` 2.1 and through ours, in one run.

Baseline: the peer itself, ``crowdtruth`` 2.1 from PyPI (CrowdTruth's reference implementation), configured
for RTE exactly as its tutorial does. Two comparisons, each side timed with ``benchlib.time_both``
(interleaved, the same number of runs, best and median, wall and CPU):

1. **metrics alone** (the headline): the peer's ``Metrics.run`` on its loaded data against our
   ``crowdtruth_metrics`` on our vectors, best of the same ``--runs`` (the peer copies its input on
   every call, so runs are independent). Both must give the same unit, worker, annotation and
   unit-annotation scores to 1e-12; the bench fails otherwise. Target: at least 100x.
2. **load**, reported separately: what each side parses differs. The peer's ``crowdtruth.load`` reads the
   CSV, drops single-judgement units, parses every ``started`` / ``submitted`` timestamp with
   ``dateparser`` (durations) and aggregates unit vectors and worker / annotation tables; ours
   (``read_crowdtruth_csv`` + ``build_vectors``) reads the CSV as text, validates the columns and
   builds the unit-by-annotation count vectors (timestamps are not parsed: no metric reads them).
   Best of ``--load-runs`` each (default 1: the peer's load takes about a minute of CPU).

    python bench/crowdtruth_bench.py [--data ../shared/data/crowdtruth/input/rte.standardized.csv] [--runs 3]
"""

from __future__ import annotations

import argparse
import logging
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from benchlib import BenchRun, time_both

from posthoc.crowdtruth.io import CrowdTruthConfig, read_crowdtruth_csv
from posthoc.crowdtruth.metrics import crowdtruth_metrics
from posthoc.crowdtruth.vectors import build_vectors

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "crowdtruth" / "input" / "rte.standardized.csv"
TARGET_RATIO = 100.0
RTE = CrowdTruthConfig(
    input_columns=("gold", "task", "text", "hypothesis"),
    output_columns=("response",),
    custom_platform_columns=("!amt_annotation_ids", "orig_id", "!amt_worker_ids", "start", "end"),
    open_ended=False,
    annotation_vector=("0", "1"),
    lowercase=True,
)


def peer_config() -> Any:
    from crowdtruth.configuration import DefaultConfig

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

    return PeerConfig()


def peer_load(path: Path, config: Any) -> Any:
    import crowdtruth

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return crowdtruth.load(file=str(path), config=config)[0]


def peer_metrics(data: Any, config: Any) -> dict[str, pd.DataFrame]:
    from crowdtruth.models.metrics import Metrics

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return Metrics.run(data, config)  # type: ignore[no-any-return]


def our_load(path: Path) -> Any:
    data = read_crowdtruth_csv(path, RTE)
    return build_vectors(data.judgements, annotation_vector=data.annotation_vector, open_ended=False)


def _diff(ours: pd.Series, peer: pd.Series) -> float:
    ours = ours.copy()
    peer = peer.copy()
    ours.index = ours.index.map(str)
    peer.index = peer.index.map(str)
    if set(ours.index) != set(peer.index):  # different units / workers / annotations
        return float("inf")
    return float(np.max(np.abs(ours.to_numpy(dtype=float) - peer.reindex(ours.index).to_numpy(dtype=float))))


def differences(ours: Any, peer: dict[str, pd.DataFrame]) -> dict[str, float]:
    """Largest absolute difference per score between our result and the peer's."""
    units = ours.units.set_index("unit")
    workers = ours.workers.set_index("worker")
    annotations = ours.annotations.set_index("annotation")
    diffs = {
        "uqs": _diff(units["uqs"], peer["units"]["uqs"]),
        "uqs_initial": _diff(units["uqs_initial"], peer["units"]["uqs_initial"]),
        "wqs": _diff(workers["wqs"], peer["workers"]["wqs"]),
        "wwa": _diff(workers["wwa"], peer["workers"]["wwa"]),
        "wua (peer wsa)": _diff(workers["wua"], peer["workers"]["wsa"]),
        "aqs": _diff(annotations["aqs"], peer["annotations"]["aqs"]),
        "aqs_initial": _diff(annotations["aqs_initial"], peer["annotations"]["aqs_initial"]),
    }
    uas = ours.unit_annotations.set_index(["unit", "annotation"])["uas"]
    uas.index = uas.index.map(lambda k: (str(k[0]), str(k[1])))
    peer_uas = pd.Series(
        {(str(u), str(a)): v for u, c in peer["units"]["unit_annotation_score"].items() for a, v in c.items()}
    )
    diffs["uas"] = _diff(uas, peer_uas)
    return diffs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--runs", type=int, default=3, help="timed metrics runs of each side (default 3)")
    parser.add_argument("--load-runs", type=int, default=1, help="timed loads of each side (default 1)")
    args = parser.parse_args()
    if not args.data.is_file():
        raise SystemExit(f"{args.data} not found (../shared/data is only beside the project in dev sessions and CI)")
    logging.disable(logging.WARNING)
    config = peer_config()
    with BenchRun("crowdtruth_bench") as run:
        loaded_ours, loaded_peer = time_both(
            lambda: our_load(args.data), lambda: peer_load(args.data, config), runs=args.load_runs
        )
        vectors, data = loaded_ours.result, loaded_peer.result
        ours, peer = time_both(lambda: crowdtruth_metrics(vectors), lambda: peer_metrics(data, config), runs=args.runs)
        diffs = differences(ours.result, peer.result)
        worst = max(diffs.values())
        units = ours.result.units
        run.print(f"input: {args.data.name}: {len(units)} units, {len(ours.result.workers)} workers, "
                  f"{int(units['n_workers'].sum())} judgements; {ours.result.iterations} iterations")  # fmt: skip
        run.print(f"\n1. metrics alone, {args.runs} runs each (interleaved)")
        run.print(f"   peer crowdtruth 2.1 Metrics.run: {peer.summary()}")
        run.print(f"   ours crowdtruth_metrics        : {ours.summary()}")
        for name, value in diffs.items():
            run.print(f"   max |ours - peer| {name:<15} {value:.2e}")
        if not worst <= 1e-12:
            run.fail(f"our scores differ from the peer's by {worst:.2e} (> 1e-12)")
        best_wall, best_cpu = peer.wall_min / ours.wall_min, peer.cpu_min / ours.cpu_min
        run.print(f"   same numbers (max abs difference {worst:.1e} <= 1e-12); speed-up best of {args.runs}: "
                  f"wall {best_wall:.0f}x, CPU {best_cpu:.0f}x; median: wall "
                  f"{peer.wall_median / ours.wall_median:.0f}x, CPU {peer.cpu_median / ours.cpu_median:.0f}x "
                  f"(target >= {TARGET_RATIO:.0f}x: {'met' if best_wall >= TARGET_RATIO else 'MISSED'})")  # fmt: skip
        run.print(f"\n2. load, {args.load_runs} run(s) each; the sides parse different things (bench docstring)")
        run.print(f"   peer crowdtruth.load (CSV, dateparser on every started/submitted, unit vectors, "
                  f"worker and annotation tables): {loaded_peer.summary()}")
        run.print(f"   ours read_crowdtruth_csv + build_vectors (CSV as text, column checks, count vectors): "
                  f"{loaded_ours.summary()}")
        run.print(f"   ratio best wall {loaded_peer.wall_min / loaded_ours.wall_min:.0f}x, "
                  f"CPU {loaded_peer.cpu_min / loaded_ours.cpu_min:.0f}x (not like for like)")
        run.print()
        run.headline(f"RTE, metrics alone: {best_wall:.0f}x faster than crowdtruth 2.1 (best of {args.runs} wall: "
                     f"{peer.wall_min:.2f} s vs {ours.wall_min * 1000:.0f} ms; CPU {best_cpu:.0f}x; target >= 100x), "
                     f"max difference {worst:.1e}")  # fmt: skip
        run.headline(f"load, reported apart (the peer also parses every timestamp with dateparser): "
                     f"{loaded_peer.wall_min:.1f} s vs {loaded_ours.wall_min * 1000:.0f} ms wall")
    return 0


if __name__ == "__main__":
    sys.exit(main())
