"""Document effects bench: the validity bench's rates and paired (RQ1) checks where documents differ (issue 46).

The simulated studies of :mod:`posthoc.validity.metrics` drew every verdict independently; real documents differ.
Here :func:`posthoc.synthetic.synthetic_study` gives each document a difficulty every system shares
(``doc_effect_sd``, logit scale) and a system x document term (``system_doc_sd``), and the bench reruns:

- the paired test's size (E2E = REL) at 20 documents, on the default (the cluster jackknife t of issue 46) with the
  paired bootstrap (BCa, the default before issue 46) measured on the same studies beside it: the competent
  engineer's method, reported as the ratio of their rejection rates;
- the coverage and bias of posthoc precision and recall (document bootstrap, BCa) and the coverage of every paired
  difference, on 20 and 40 documents sampled from a population with document effects.

Targets as the validity bench's: rejections 0.03-0.07, coverage 0.93-0.97, |mean bias| <= 0.01. Saved to
bench/results/document_effects_bench.txt (a missed target is printed as NO and the bench exits 1 after saving).

    python bench/document_effects_bench.py [--runs R]
"""

from __future__ import annotations

import argparse
import sys
import time

from benchlib import BenchRun
from validity_bench import print_checks

from posthoc.validity import Check
from posthoc.validity import metrics as metric_checks

#: (doc_effect_sd, system_doc_sd) of the paired-size settings; (0, 0) is the independent model of before
PAIRED_SETTINGS = ((0.0, 0.0), (1.0, 0.5), (1.0, 1.0))
RATES_EFFECTS = (1.0, 1.0)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000, help="simulated studies per setting")
    args = parser.parse_args()
    band = {"coverage_target": 0.93, "coverage_ceiling": 0.97}
    checks: list[Check] = []
    with BenchRun("document_effects_bench") as run:
        run.print("Simulated studies with document effects (logit scale: a difficulty each document shares across "
                  "systems, a system x document term); targets: null rejections 0.03-0.07, coverage 0.93-0.97, "
                  "|mean bias| <= 0.01.")
        for doc_sd, cell_sd in PAIRED_SETTINGS:
            started = time.perf_counter()
            found = metric_checks.paired_size_checks(n_studies=args.runs, n_docs=20, rejection_band=(0.03, 0.07),
                                                     doc_effect_sd=doc_sd, system_doc_sd=cell_sd, old_method=True)
            checks += found
            new, old = found[0].value, found[1].value
            run.print(f"paired test at 20 docs, effects {doc_sd:g} / {cell_sd:g}: jackknife t rejects {new:.3f}, "
                      f"paired bootstrap (bca) {old:.3f} (ratio {old / new if new else float('nan'):.2f}) "
                      f"[{time.perf_counter() - started:.0f} s]")
        for n_docs in (20, 40):
            started = time.perf_counter()
            checks += metric_checks.precision_recall_checks(
                n_studies=args.runs, n_docs=n_docs, doc_effect_sd=RATES_EFFECTS[0], system_doc_sd=RATES_EFFECTS[1],
                **band)
            print(f"  (rates at {n_docs} docs: {time.perf_counter() - started:.1f} s)", file=sys.stderr, flush=True)
        met = print_checks(run, checks)
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
