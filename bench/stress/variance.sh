#!/usr/bin/env bash
# How much spinwise-stress's requests/s spreads between runs of one setting, with the old defaults
# (up to 0.2.0: a fixed window, and the work loop calibrated from a 0.1 ms snapshot at process
# start) and with the new ones (--min-requests 1000, --calibrate-ms 100). docs/stress.md, "Where the
# spread comes from", says what each option does and why.
#
#   bench/stress/variance.sh [repeats] [spinwise-stress flags]    # repeats: default 10
#
# The setting is the issue's: --scenario stats-lock --policy time --spin-wait-delay 6, 6 s runs;
# further flags go to every run (e.g. --cpu-model skylake). Two parts, each with old and new
# interleaved so that the machine's drift falls on both alike:
#   1. in one process: --compare "OLD" "NEW" --repeat N: the spread between runs of a process;
#   2. across processes: N processes of each, old and new alternating: the spread a user sees who
#      starts the tool N times (the issue's 266, 442, 403 requests/s), where the once-per-process
#      calibration differs from one process to the next.
# Each part prints, for old and new, n, the median, min..max and (max - min) / median of
# requests/s, and the same of the work loop's ns per iteration (the calibration the work used).
#
# It takes about 4 x repeats x 6 s (10 repeats: 4 min) plus the build. Run it on an otherwise idle
# machine: the load average before and after goes into load.txt. Output: $OUT (default
# bench/results/stress/variance/): compare.{txt,json,csv}, processes.csv, spread.txt, load.txt.
# DURATION (default 6) sets the run length; SPINWISE_STRESS_TOOL, a built spinwise-stress to use
# instead of building one (SPINWISE_STRESS_BUILD, default build-stress-run).
set -euo pipefail
cd "$(dirname "$0")/../.."
repeats=${1:-10}
[ $# -gt 0 ] && shift
case $repeats in
  '' | *[!0-9]*) echo "usage: bench/stress/variance.sh [repeats] [spinwise-stress flags]" >&2; exit 2 ;;
esac
out=${OUT:-bench/results/stress/variance}
tool=${SPINWISE_STRESS_TOOL:-}
if [ -z "$tool" ]; then
  build=${SPINWISE_STRESS_BUILD:-build-stress-run}
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPINWISE_BUILD_TESTS=OFF >"$build.log" 2>&1 ||
    { tail -n 30 "$build.log"; exit 1; }
  cmake --build "$build" --target spinwise-stress -j "$(nproc)" >>"$build.log" 2>&1 ||
    { tail -n 30 "$build.log"; exit 1; }
  tool="$build/bench/stress/spinwise-stress"
fi
mkdir -p "$out"

setting=(--scenario stats-lock --policy time --spin-wait-delay 6 --duration "${DURATION:-6}" "$@")
old="--min-requests 0 --calibrate-ms 0"
new="--min-requests 1000 --calibrate-ms 100"

# spread LABEL: reads values, one a line; prints n, median, min..max and (max - min) / median.
spread() {
  sort -g | awk -v label="$1" '
    { v[++n] = $1 }
    END {
      if (n == 0) { printf "  %-24s no values\n", label; exit }
      med = n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
      printf "  %-24s n %2d  median %9.4g  min..max %9.4g..%-9.4g  spread %5.1f%% of the median\n",
             label, n, med, v[1], v[n], med != 0 ? 100 * (v[n] - v[1]) / med : 0
    }'
}

# column FILE NAME: the values of CSV column NAME, one a line, with the row's `setting` before them.
column() {
  awk -F, -v name="$2" '
    NR == 1 { for (i = 1; i <= NF; i++) { if ($i == name) c = i; if ($i == "setting") s = i }; next }
    c { print $s, $c }' "$1"
}

{ echo "before: $(cat /proc/loadavg)"; } >"$out/load.txt"

echo "== 1. one process: old (A) and new (B) interleaved, $repeats runs each"
"$tool" "${setting[@]}" --compare "$old" "$new" --repeat "$repeats" --quiet \
  --json "$out/compare.json" --csv "$out/compare.csv" | tee "$out/compare.txt"

echo "== 2. $repeats processes each, old and new alternating"
rm -f "$out/processes.csv"
for i in $(seq 1 "$repeats"); do
  for which in old new; do
    # shellcheck disable=SC2086  # $old / $new are lists of flags
    "$tool" "${setting[@]}" ${!which} --seed "$i" --quiet --csv "$out/one.csv" >/dev/null
    if [ ! -f "$out/processes.csv" ]; then head -n 1 "$out/one.csv" | sed 's/^/variant,/' >"$out/processes.csv"; fi
    tail -n +2 "$out/one.csv" | sed "s/^/$which,/" >>"$out/processes.csv"
  done
done
rm -f "$out/one.csv"
echo "after: $(cat /proc/loadavg)" >>"$out/load.txt"

{
  echo "spinwise-stress ${setting[*]}"
  echo "old: $old"
  echo "new: $new"
  echo "1. one process, interleaved (--compare, $repeats runs each):"
  for metric in requests_per_s loop_iter_ns; do
    for s in 0 1; do
      label=$([ $s = 0 ] && echo "old" || echo "new")
      column "$out/compare.csv" "$metric" | awk -v s="$s" '$1 == s { print $2 }' | spread "$label $metric"
    done
  done
  echo "2. separate processes ($repeats each, alternating):"
  for metric in requests_per_s loop_iter_ns; do
    for label in old new; do
      # processes.csv: the variant (old, new) first, then spinwise-stress's columns
      awk -F, -v name="$metric" -v want="$label" '
        NR == 1 { for (i = 1; i <= NF; i++) if ($i == name) c = i; next }
        $1 == want { print $c }' "$out/processes.csv" | spread "$label $metric"
    done
  done
  echo "load: $(tr '\n' ' ' <"$out/load.txt")"
} | tee "$out/spread.txt"
