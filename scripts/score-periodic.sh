#!/usr/bin/env bash
# The periodic export-and-score job (`posthoc score --periodic`), for cron or a systemd timer: see
# posthoc-score.cron, posthoc-score.service and posthoc-score.timer beside this file.
#
# Settings come from the environment, or from the env file POSTHOC_SCORE_ENV (default
# /etc/posthoc/score.env when readable; KEY=value lines, keep it 0600: it holds the token):
#   POSTHOC_MANIFEST    the study manifest written by `posthoc study plan` (required)
#   POSTHOC_REPORT_DIR  where report.html, tables/ and the corrected gold go (required)
#   POSTHOC_LS_URL      Label Studio's URL (every project of the study is exported)
#   LABEL_STUDIO_TOKEN  an API token of a Label Studio user who sees the study's projects
#   POSTHOC_BIN         the posthoc command (default: posthoc on PATH, e.g. /opt/posthoc/venv/bin/posthoc)
# Extra arguments go to `posthoc score` (e.g. --resamples 2000, --export-file FILE).
#
# Exit: 0 when the report was updated or nothing was new (posthoc's 10); otherwise posthoc's code:
# 2 bad input, 3 Label Studio unreachable or refusing the token (previous outputs intact), 4 another run
# still holds the lock on the report folder. Output: one line a run, for the log.
set -uo pipefail
env_file=${POSTHOC_SCORE_ENV:-/etc/posthoc/score.env}
if [ -r "$env_file" ]; then
  set -a
  # shellcheck disable=SC1090
  . "$env_file"
  set +a
fi
: "${POSTHOC_MANIFEST:?set POSTHOC_MANIFEST (the study manifest) in the environment or in $env_file}"
: "${POSTHOC_REPORT_DIR:?set POSTHOC_REPORT_DIR (the report folder) in the environment or in $env_file}"
read -r -a command <<< "${POSTHOC_BIN:-posthoc}"
args=(score --manifest "$POSTHOC_MANIFEST" --out "$POSTHOC_REPORT_DIR" --periodic --quiet)
if [ -n "${POSTHOC_LS_URL:-}" ]; then
  args+=(--url "$POSTHOC_LS_URL")
fi
"${command[@]}" "${args[@]}" "$@"
code=$?
if [ "$code" -eq 10 ]; then
  exit 0  # nothing new since the last run: outputs untouched
fi
exit "$code"
