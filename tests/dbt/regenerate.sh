#!/usr/bin/env bash
# Regenerates what the Rust tests compare against, by running real dbt and
# MetricFlow on tests/fixtures/dbt_shop:
#
#   tests/fixtures/dbt_shop_target/{manifest,semantic_manifest}.json
#   tests/dbt/expected/NNN_slug.json      (one per tests/dbt/cases/NNN_slug.yaml)
#   tests/dbt/metricflow_timings.json     (unless --no-timings)
#
# Needs python3 (3.11) and PyPI. Nothing here is run by cargo or CI; the
# outputs are committed. Re-running gives byte-identical files except the
# timings.
#
# usage: tests/dbt/regenerate.sh [--no-timings] [--no-cli-check] [--only REGEX]
#   --no-cli-check  skip running `mf query --csv` per case as a cross-check of
#                   the in-process answers (saves ~3 s per case)
#   --only REGEX    record only the case files whose names match
#
# env: SCHEMABRAIN_DBT_VENV  venv path (default ~/.cache/schemabrain-dbt-venv)
#      PYTHON               interpreter for the venv (default python3)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
VENV="${SCHEMABRAIN_DBT_VENV:-$HOME/.cache/schemabrain-dbt-venv}"
PYTHON="${PYTHON:-python3}"

TIMINGS=1
CLI_CHECK=1
RECORD_ARGS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --no-timings) TIMINGS=0 ;;
    --no-cli-check) CLI_CHECK=0 ;;
    --only) RECORD_ARGS+=(--only "$2"); TIMINGS=0; shift ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done

# ---------------------------------------------------------------- venv
if [ ! -x "$VENV/bin/python" ]; then
  echo "== creating venv $VENV"
  "$PYTHON" -m venv "$VENV"
  "$VENV/bin/python" -m pip install --quiet --upgrade pip
fi
if ! diff -q <(grep -v '^#' "$HERE/requirements.txt" | sed '/^$/d' | tr 'A-Z_' 'a-z-' | sort) \
             <("$VENV/bin/python" -m pip freeze | tr 'A-Z_' 'a-z-' | sort) >/dev/null; then
  echo "== installing tests/dbt/requirements.txt (pinned, --no-deps)"
  "$VENV/bin/python" -m pip install --quiet --no-deps -r "$HERE/requirements.txt"
fi
export PATH="$VENV/bin:$PATH"

# ---------------------------------------------------------------- project copy
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
PROJECT="$WORK/dbt_shop"
cp -r "$REPO/tests/fixtures/dbt_shop" "$PROJECT"
rm -rf "$PROJECT/target" "$PROJECT/logs" "$PROJECT"/*.duckdb

export DBT_SHOP_DB="$PROJECT/dbt_shop.duckdb"   # file stem dbt_shop = database name in the manifests
export DBT_PROFILES_DIR="$PROJECT"
export DBT_PROJECT_DIR="$PROJECT"
export DBT_SEND_ANONYMOUS_USAGE_STATS=false
export DBT_PARTIAL_PARSE=false
export PYTHONHASHSEED=0
export TZ=UTC
export PYTHONDONTWRITEBYTECODE=1
cd "$PROJECT"

echo "== dbt seed / build / parse in $PROJECT"
dbt --version
dbt seed --quiet
dbt build --quiet
dbt parse --quiet

echo "== copying manifests"
"$VENV/bin/python" "$HERE/normalize_manifest.py" "$PROJECT" "$REPO/tests/fixtures/dbt_shop_target"

echo "== recording answers"
"$VENV/bin/python" "$HERE/record.py" --cases "$HERE/cases" --expected "$HERE/expected" "${RECORD_ARGS[@]}"
if [ "$CLI_CHECK" = 1 ]; then
  echo "== cross-checking every answer with the mf query CLI"
  "$VENV/bin/python" "$HERE/record.py" --cli-check --cases "$HERE/cases" --expected "$HERE/expected" "${RECORD_ARGS[@]}"
fi

if [ "$TIMINGS" = 1 ]; then
  echo "== timing MetricFlow explain"
  "$VENV/bin/python" "$HERE/time_explain.py" "$HERE/cases" "$HERE/metricflow_timings.json"
fi
echo "== done"
