"""New system bench: a system added to a finished study, scored from reused, sampled and predicted verdicts (issue 46).

For each setting (:mod:`posthoc.validity.new_system`: documents with effects, the new system's overlap with the
study, the judged share of its chunks, the class-verdict link, a setting where context changes reused verdicts and
the reuse check refuses them) 1,000 simulated studies: coverage of the 95% interval and mean bias of its posthoc
precision (:func:`posthoc.metrics.new_system.new_system_precision`: reused verdicts + the judged sample + PPI++ on
cross-fitted ``P(verified | strict class)`` for the rest, the cluster jackknife over documents), beside the competent
engineer's way: a full posthoc study judging every annotation (its judgements and half-width printed, the ratio of
judgements reported). Saved to bench/results/new_system_bench.txt; a missed target prints NO and exits 1.

    python bench/new_system_bench.py [--runs R]
"""

from __future__ import annotations

import argparse
import sys
import time

from benchlib import BenchRun
from validity_bench import print_checks

from posthoc.validity.new_system import NewSystemSetting, new_system_checks

SETTINGS = (
    NewSystemSetting(),
    NewSystemSetting(link=0.3),
    NewSystemSetting(overlap=0.2, fraction=0.2),
    NewSystemSetting(n_docs=20, per_doc=24, chunk_size=6),
    NewSystemSetting(context=-1.5, reuse=False),
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000, help="simulated studies per setting")
    args = parser.parse_args()
    with BenchRun("new_system_bench") as run:
        run.print("A new system's posthoc precision from part of its annotations judged; targets: coverage "
                  "0.93-0.97, |mean bias| <= 0.01 per setting.")
        started = time.perf_counter()
        checks = new_system_checks(SETTINGS, n_studies=args.runs, seed=46)
        run.print(f"{len(SETTINGS)} settings x {args.runs} studies in {time.perf_counter() - started:.0f} s")
        met = print_checks(run, checks)
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
