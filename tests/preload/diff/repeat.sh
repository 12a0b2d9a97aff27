#!/usr/bin/env bash
# Checks that the scenarios are deterministic: runs each one N times (default 100) on plain glibc,
# or under LD_PRELOAD with KIND, and counts the runs whose output differs from the first run's or
# that did not exit 0. A scenario must show 0 on glibc, also beside a CPU hog (`yes >/dev/null &`).
# Usage: tests/preload/diff/repeat.sh <build-dir> [N] [KIND] [scenario ...]
set -uo pipefail
if [ $# -lt 1 ]; then
  echo "usage: $0 <build-dir> [N] [KIND] [scenario ...]" >&2
  exit 2
fi
build=$1
bin="$build/tests/preload/diff"
n=${2:-100}
kind=${3:-}
shift $(($# < 3 ? $# : 3))
preload=$(ls "$build"/src/libspinwise-preload.so* 2>/dev/null | head -n 1)
scenarios=("$@")
if [ ${#scenarios[@]} -eq 0 ]; then
  mapfile -t scenarios < <(ls "$bin" | sed -n 's/^spinwise_preload_diff_//p')
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bad_total=0
for s in "${scenarios[@]}"; do
  bad=0
  t0=$(date +%s.%N)
  for i in $(seq 1 "$n"); do
    if [ -n "$kind" ]; then
      stats=()  # as run_diff.cmake: statistics on for fork_with_stats only
      [ "$s" = fork_with_stats ] && stats=(SPINWISE_PRELOAD_STATS="$tmp/stats.json")
      env LD_PRELOAD="$preload" SPINWISE_PRELOAD_LOCK="$kind" "${stats[@]}" \
        "$bin/spinwise_preload_diff_$s" >"$tmp/out" 2>"$tmp/err"
    else
      env -u LD_PRELOAD -u SPINWISE_PRELOAD_STATS "$bin/spinwise_preload_diff_$s" >"$tmp/out" 2>"$tmp/err"
    fi
    rc=$?
    if [ "$i" -eq 1 ]; then
      cp "$tmp/out" "$tmp/first"
    fi
    if [ $rc -ne 0 ] || ! cmp -s "$tmp/out" "$tmp/first"; then
      bad=$((bad + 1))
      [ $bad -eq 1 ] && { echo "--- $s run $i (exit $rc):"; diff "$tmp/first" "$tmp/out" | head -n 10; }
    fi
  done
  printf '%-28s %d runs, %d differed or failed, %.1f s\n' "$s" "$n" "$bad" \
    "$(echo "$(date +%s.%N) - $t0" | bc)"
  bad_total=$((bad_total + bad))
done
[ $bad_total -eq 0 ]
