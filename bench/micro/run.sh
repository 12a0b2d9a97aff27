#!/usr/bin/env bash
# Builds spinwise-bench (Release), runs it, and makes the report.
#
#   bench/micro/run.sh full [OUT_DIR]    the committed results: OUT_DIR defaults to bench/results
#   bench/micro/run.sh quick [OUT_DIR]   every benchmark once, briefly; OUT_DIR defaults to build-bench-run/quick
#
# Extra spinwise-bench flags go in SPINWISE_BENCH_FLAGS (e.g. "--scenarios=contended --cs-ns=100",
# or "--repetitions 5" for tighter intervals than full mode's 3 repetitions).
# Writes OUT_DIR/run.json (Google Benchmark JSON with the machine in its context), console.txt,
# and report.py's summary.json, report.md and plots/*.png. For the committed results only
# summary.json and report.md go into git, the report remade with `report.py summary.json
# --no-plots` (its statistics come from spinwise-bench --estimate, found in this build folder)
# so that it links no missing image: run.json (7.5-11 MB for a full run) holds nothing
# the report needs beyond summary.json, and the plots (3.7 MB) are drawn again from it;
# bench/results/.gitignore keeps them out, with console.txt. Numbers only mean something on an
# otherwise idle machine: the script says the load average before it starts.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)

mode=${1:-}
case $mode in
  full) out=${2:-$root/bench/results} ;;
  quick) out=${2:-$root/build-bench-run/quick} ;;
  *) echo "usage: bench/micro/run.sh full|quick [OUT_DIR]" >&2; exit 2 ;;
esac
build=${SPINWISE_BENCH_BUILD:-$root/build-bench-run/release}

tools/setup.sh
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPINWISE_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" --target spinwise-bench -j "$(nproc)" >/dev/null

mkdir -p "$out"
echo "bench: load average $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs; mode $mode; results in $out"
t0=$(date +%s)
# shellcheck disable=SC2086  # SPINWISE_BENCH_FLAGS is a list of flags
"$build/bench/micro/spinwise-bench" --mode="$mode" ${SPINWISE_BENCH_FLAGS:-} \
  --benchmark_out="$out/run.json" --benchmark_out_format=json | tee "$out/console.txt"
echo "bench: $mode run took $(($(date +%s) - t0)) s"
python3 bench/micro/report.py "$out/run.json" --out "$out" --bench "$build/bench/micro/spinwise-bench"
