#!/usr/bin/env bash
# spinwise-calibrate --advise on a busy host: how often it answers while a lock benchmark loads
# every CPU (what a database host in trouble looks like), for one or more builds of the tool,
# interleaved run by run so that the load falls alike on each.
#
#   bench/engines/advice-busy-host.sh [--runs N] [--engine mysql|mariadb] TOOL... [-- ADVISE_ARGS...]
#
# TOOL: a spinwise-calibrate binary (e.g. build/release/tools/spinwise-calibrate, and another
# revision's). The load: spinwise-bench's contended scenario at 32 threads, restarted until the
# runs are done. Prints, per tool, how many runs advised (exit 0), refused (3) or failed, each
# distinct advice with its count, the first refusal's reason, and the load average at the end. Docs: docs/engines.md, "On a busy host".
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
runs=20
engine=mariadb
tools=()
extra=()
while [ $# -gt 0 ]; do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --engine) engine=$2; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    -h | --help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) tools+=("$1"); shift ;;
  esac
done
[ ${#tools[@]} -gt 0 ] || { echo "advice-busy-host: name at least one spinwise-calibrate" >&2; exit 2; }
bench=${SPINWISE_BENCH:-$root/build/release/bench/micro/spinwise-bench}
[ -x "$bench" ] || { echo "advice-busy-host: $bench is not built (cmake --build build/release --target spinwise-bench)" >&2; exit 2; }

(
  while :; do
    "$bench" --mode quick --scenarios contended --threads 32 --cs-ns 100 --local-ns 100 \
      -- --benchmark_filter='std_mutex|hybrid_mutex|ttas' >/dev/null 2>&1 || true
  done
) &
loader=$!
trap 'rm -f "$advised"; kill $loader 2>/dev/null; pkill -P $loader 2>/dev/null || true; pkill -f "$bench" 2>/dev/null || true' EXIT
sleep 2
declare -A ok refused failed why answers
for t in "${tools[@]}"; do ok[$t]=0; refused[$t]=0; failed[$t]=0; why[$t]=""; answers[$t]=""; done
advised=$(mktemp)
for ((i = 0; i < runs; i++)); do
  for t in "${tools[@]}"; do
    rc=0
    out=$("$t" --advise "$engine" "${extra[@]}" 2>&1 >"$advised") || rc=$?
    case $rc in
      0) ok[$t]=$((ok[$t] + 1))
         answers[$t]+="$(grep -v '^[#[]' "$advised" | tr '\n' ' ')"$'\n' ;;
      3) refused[$t]=$((refused[$t] + 1)); [ -n "${why[$t]}" ] || why[$t]=$(echo "$out" | head -n 1) ;;
      *) failed[$t]=$((failed[$t] + 1)); [ -n "${why[$t]}" ] || why[$t]="exit $rc: $(echo "$out" | head -n 1)" ;;
    esac
  done
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs; $engine ${extra[*]}"
for t in "${tools[@]}"; do
  echo "$t: advised ${ok[$t]} of $runs, refused ${refused[$t]}, failed ${failed[$t]}"
  [ -z "${answers[$t]}" ] || printf '%s' "${answers[$t]}" | sort | uniq -c | sed 's/^ */  advised /'
  [ -z "${why[$t]}" ] || echo "  first refusal: ${why[$t]}"
done
