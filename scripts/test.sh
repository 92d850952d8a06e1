#!/usr/bin/env bash
# Install everything the tests need (Python packages, Debian's chromium and postgresql) and run ruff, mypy and
# every test: all of them on SQLite, then the tests on the shared Label Studio server again on PostgreSQL.
# Usage: bash scripts/test.sh [extra pytest args]
set -euo pipefail
cd "$(dirname "$0")/.."
# Debian packages: chromium for the browser tests; CJK and emoji fonts so that pages (Noto CJK, Noto Color
# Emoji) and report figures (Noto CJK, Symbola: matplotlib draws no colour-bitmap font)
# show such text instead of empty boxes (the tests' texts hold both)
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing+=(nginx)  # the study gateway (issue 23)
for package in fonts-noto-cjk fonts-noto-color-emoji fonts-symbola; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "note: not installed: ${missing[*]} (sudo apt-get install ${missing[*]}); browser tests skip" \
         "without chromium, and CJK / emoji text shows as boxes without the fonts" >&2
  fi
fi
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && ! command -v initdb >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
  else
    echo "note: PostgreSQL is not installed (sudo apt-get install postgresql); the PostgreSQL pass is skipped" >&2
  fi
fi
python -m pip install -q -e '.[test]'
# ppi-python 0.2.3's wheel (the test extra, issue 46) installs its own top-level `tests` package, which shadows this
# repository's `tests` (a namespace package: `tests.architecture` no longer imports); remove only that stray package
python - <<'PY'
import importlib.metadata as metadata, pathlib, shutil
files = metadata.distribution("ppi-python").files or []
stray = {f.locate().parent for f in files if str(f) == "tests/__init__.py"}
for folder in stray:
    shutil.rmtree(pathlib.Path(folder), ignore_errors=True)
PY
# a real label-studio-ml model class for tests/predictors; --no-deps: its own pins would downgrade Flask to 1.1
python -m pip install -q --no-deps 'label-studio-ml==1.0.9' 'label-studio-tools==0.0.4'
python -m ruff check plugin ml_backend tests bench scripts
python -m mypy
python -m pytest "$@"
if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1; then
  echo "== the Label Studio tests again, on PostgreSQL =="
  POSTHOC_TEST_DATABASE=postgresql python -m pytest "$@"
fi
