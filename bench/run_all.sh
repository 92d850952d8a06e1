#!/usr/bin/env bash
# Run every bench (bench/*_bench.py) in sequence, each under its own time limit; each saves its output to
# bench/results/NAME.txt (benchlib.BenchRun), then the README's table is rebuilt (scripts/bench_table.py).
#
#   bash bench/run_all.sh                      # every bench
#   bash bench/run_all.sh score_bench eaglet_bench   # some of them
#
# Environment: BENCH_TIMEOUT (seconds per bench, default 900, study_scale_bench 3000, ls_versions_bench 3600;
# BENCH_TIMEOUT_<NAME> for one bench, e.g.
# BENCH_TIMEOUT_crowdtruth_bench=1200), BENCH_LOCK (a lock file each bench takes for its own run only, so
# benches on a shared machine never run beside other heavy jobs; e.g. /tmp/posthoc-heavy.lock), PYTHON.
# A bench that fails, disagrees with its baseline or runs out of time is reported; the others still run;
# the exit status is 1 if any failed.
set -u
cd "$(dirname "$0")/.."
python=${PYTHON:-python}
if [ "$#" -gt 0 ]; then
  benches=()
  for name in "$@"; do benches+=("bench/${name%.py}.py"); done
else
  benches=(bench/*_bench.py)
fi
failed=()
for bench in "${benches[@]}"; do
  name=$(basename "$bench" .py)
  if [ ! -f "$bench" ]; then
    echo "run_all: no such bench $bench" >&2
    failed+=("$name (missing)")
    continue
  fi
  limit_var="BENCH_TIMEOUT_${name}"
  default_limit=900
  # a real Label Studio set up with 37,000 tasks, annotated and scored: about 30 minutes
  [ "$name" = study_scale_bench ] && default_limit=3000
  # four Label Studio releases, each installed into its own venv on the first run (then reused), started and driven
  [ "$name" = ls_versions_bench ] && default_limit=3600
  limit=${!limit_var:-${BENCH_TIMEOUT:-$default_limit}}
  command=(timeout --signal=INT --kill-after=30 "$limit" "$python" "$bench")
  if [ -n "${BENCH_LOCK:-}" ]; then
    command=(flock "$BENCH_LOCK" "${command[@]}")
  fi
  echo "=== $name (limit ${limit} s) $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
  started=$(date +%s)
  "${command[@]}"
  status=$?
  echo "=== $name: exit $status after $(( $(date +%s) - started )) s"
  if [ "$status" -ne 0 ]; then
    [ "$status" -eq 124 ] && failed+=("$name (time limit ${limit} s)") || failed+=("$name (exit $status)")
  fi
done
"$python" scripts/bench_table.py || failed+=("bench_table")
if [ "${#failed[@]}" -gt 0 ]; then
  echo "run_all: FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "run_all: all ${#benches[@]} benches ran; README table rebuilt from bench/results/"
