#!/usr/bin/env bash
# The spinwise-stress sweep: builds a Release tree, then runs spinwise-stress --sweep and writes
# sweep-<scenario>.csv / .json / .png / .gp and the printed table (table.txt) into the output folder.
#
#   bench/stress/sweep.sh quick   # pipeline check: 30 points x 1 run x 1 s, about 30 s
#   bench/stress/sweep.sh full    # the results: 30 points x 3 runs x 10 s, about 15 min
#
# The points' runs are interleaved (round 1 runs every point once, then round 2, ...), and the
# plot draws each point's median with its spread as error bars (min..max below 6 runs); the CSV
# carries each point's summary columns (docs/stress.md). quick runs a fixed 1 s per point
# (--min-requests 0): it checks the pipeline, it measures nothing.
#
# quick writes to bench/results/stress/quick/ (not committed), full to bench/results/stress/.
# Run full on an otherwise idle machine: the load average before and after goes into load.txt.
# Further arguments go to spinwise-stress (e.g. --scenario hot-page, --clients 1).
set -euo pipefail
cd "$(dirname "$0")/../.."
mode=${1:-quick}
[ $# -gt 0 ] && shift
case $mode in
  quick) duration=1; repeat=1; out=bench/results/stress/quick; extra=(--min-requests 0) ;;
  full) duration=10; repeat=3; out=bench/results/stress; extra=() ;;
  *) echo "usage: bench/stress/sweep.sh quick|full [spinwise-stress flags]" >&2; exit 2 ;;
esac
build=${SPINWISE_STRESS_BUILD:-build-stress-run}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPINWISE_BUILD_TESTS=OFF >"$build.log" 2>&1 ||
  { tail -n 30 "$build.log"; exit 1; }
cmake --build "$build" --target spinwise-stress -j "$(nproc)" >>"$build.log" 2>&1 || { tail -n 30 "$build.log"; exit 1; }
mkdir -p "$out"
{ echo "before: $(cat /proc/loadavg)"; } >"$out/load.txt"
"$build/bench/stress/spinwise-stress" --sweep --duration "$duration" --repeat "$repeat" --out-dir "$out" \
  ${extra[@]+"${extra[@]}"} "$@" |
  tee "$out/table.txt"
echo "after: $(cat /proc/loadavg)" >>"$out/load.txt"
# The committed JSON stays small: the same document without indentation (about 0.6 MB, not 1.7).
for json in "$out"/sweep-*.json; do
  python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); json.dump(d, open(sys.argv[1], "w"), separators=(",", ":"))' \
    "$json" 2>/dev/null || true
done
