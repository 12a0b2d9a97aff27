#!/usr/bin/env bash
# SQLite on its own mutexes and on spinwise's, side by side (docs/engines.md, "SQLite").
#
# Runs spinwise-sqlite-bench (bench/engines/sqlite/sqlite_bench.cpp: one arm per process) over
# cells of a mode and a thread count, every arm in every cell, repeated; the arms of a cell run
# back to back, A B C D E, and the next cell E D C B A, so that slow drift falls on every arm
# alike. Each run's JSON line goes to <out>/runs.jsonl as it finishes; summarize.py then writes
# <out>/README.md: per cell and arm the median ops/s, the ratio to the first arm (sqlite) per
# repetition, p99, CPU per operation, and where a kind collapses.
#
# Usage: bench/engines/sqlite/run.sh [options]
#   --quick          a smoke run of about a minute: threads 2,8, 2 repetitions of 0.4 s runs
#                    (numbers indicative only); out defaults to build-bench-run/sqlite-quick
#   --out DIR        where runs.jsonl and README.md go (default bench/results/sqlite)
#   --arms LIST      comma separated, the first is the reference (default sqlite,hybrid,adaptive,ttas,ticket,tas,mcs:
#                    SQLite's own mutexes and every spinwise kind)
#   --cells LIST     private, private-memstatus-off, shared-cache, serialized, wal (default: all five)
#   --threads LIST   thread counts (default 1,2,8,32)
#   --reps N         repetitions of every cell (default 3)
#   --seconds S      measured seconds per run (default 2)
#   --warmup S       seconds of load before each measured window (default 0.5)
#   --driver PATH    a built spinwise-sqlite-bench (default: build it, Release, in
#                    build-bench-run/release, as bench/micro/run.sh builds spinwise-bench;
#                    SPINWISE_SQLITE_BUILD names another build folder)
#   --dir DIR        where the wal cell's database directory is made (default $TMPDIR, else /tmp)
#   --force          run even when the CPUs are busy before the start
# The default grid is 420 runs of about 3 s: about 21 minutes. Run it alone on an idle machine: it
# refuses to start when the CPUs were over 20% busy in the 2 s before (--force runs anyway, and the
# report says how busy they were), and cannot see what happens after.
# Exit codes: 0 done, every run's checks passed; 1 a run failed its checks or did not run (the
# README lists it); 2 usage; 3 the CPUs were busy; 4 the driver cannot be built here.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)

die() { echo "sqlite-bench: $*" >&2; exit 1; }
usage() { echo "sqlite-bench: $*" >&2; sed -n '11,31p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

quick=0 force=0 out="" driver="" dir=""
arms=sqlite,hybrid,adaptive,ttas,ticket,tas,mcs
cells=private,private-memstatus-off,shared-cache,serialized,wal
threads=1,2,8,32 reps=3 seconds=2 warmup=0.5
given=()  # the options given, for the report's command line
while [ $# -gt 0 ]; do
  given+=("$1")
  case $1 in
    --quick) quick=1 ;;
    --force) force=1 ;;
    --out | --arms | --cells | --threads | --reps | --seconds | --warmup | --driver | --dir)
      [ $# -ge 2 ] || usage "$1 needs a value"
      given+=("$2")
      case $1 in
        --out) out=$2 ;;
        --arms) arms=$2 ;;
        --cells) cells=$2 ;;
        --threads) threads=$2 ;;
        --reps) reps=$2 ;;
        --seconds) seconds=$2 ;;
        --warmup) warmup=$2 ;;
        --driver) driver=$2 ;;
        --dir) dir=$2 ;;
      esac
      shift ;;
    -h | --help) usage "help" ;;
    *) usage "unknown option '$1'" ;;
  esac
  shift
done
if [ $quick -eq 1 ]; then
  threads=2,8 reps=2 seconds=0.4 warmup=0.1
  [ -n "$out" ] || out=$root/build-bench-run/sqlite-quick
fi
[ -n "$out" ] || out=$root/bench/results/sqlite

known_arms=" sqlite hybrid adaptive ttas ticket tas mcs "
for a in ${arms//,/ }; do [[ $known_arms == *" $a "* ]] || usage "--arms: unknown arm '$a' (known:$known_arms)"; done
[ "${arms%%,*}" = sqlite ] || usage "--arms: the first arm is the reference and must be sqlite"
for c in ${cells//,/ }; do
  [[ " private private-memstatus-off shared-cache serialized wal " == *" $c "* ]] ||
    usage "--cells: unknown cell '$c' (known: private, private-memstatus-off, shared-cache, serialized, wal)"
done
for t in ${threads//,/ }; do [[ $t =~ ^[0-9]+$ ]] && [ "$t" -ge 1 ] && [ "$t" -le 1024 ] || usage "--threads: '$t' is not 1..1024"; done
[[ $reps =~ ^[0-9]+$ ]] && [ "$reps" -ge 1 ] && [ "$reps" -le 100 ] || usage "--reps: '$reps' is not 1..100"
[[ $seconds =~ ^[0-9]*\.?[0-9]+$ ]] || usage "--seconds: '$seconds' is not a number of seconds"
[[ $warmup =~ ^[0-9]*\.?[0-9]+$ ]] || usage "--warmup: '$warmup' is not a number of seconds"
if [ -n "$dir" ] && { [ ! -d "$dir" ] || [ ! -w "$dir" ]; }; then usage "--dir: '$dir' is not a directory this user can write"; fi

# The driver: given, or built here as bench/micro/run.sh builds spinwise-bench.
if [ -z "$driver" ]; then
  build=${SPINWISE_SQLITE_BUILD:-$root/build-bench-run/release}
  "$root/tools/setup.sh" || die "tools/setup.sh failed"
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPINWISE_BUILD_TESTS=OFF >"$build.sqlite-configure.log" 2>&1 ||
    { tail -n 20 "$build.sqlite-configure.log" >&2; die "configuring $build failed"; }
  grep -q "spinwise-sqlite-bench: skipped" "$build.sqlite-configure.log" &&
    { grep "spinwise-sqlite-bench: skipped\|spinwise::sqlite" "$build.sqlite-configure.log" >&2; exit 4; }
  cmake --build "$build" --target spinwise-sqlite-bench -j "$(nproc)" >/dev/null || die "building spinwise-sqlite-bench failed"
  driver=$build/bench/engines/sqlite/spinwise-sqlite-bench
fi
[ -x "$driver" ] || { echo "sqlite-bench: $driver is not an executable" >&2; exit 4; }

mkdir -p "$out" && [ -w "$out" ] || die "cannot write to --out $out"
raw=$out/runs.jsonl
: >"$raw"
# How busy the machine is before anything runs: the report's header, and the refusal.
python3 "$here/summarize.py" context >"$out/context.json" || die "reading the machine's state failed"
busy=$(python3 -c 'import json,sys; b = json.load(open(sys.argv[1])).get("busy_share_2s"); print("%.1f" % (100 * b) if b is not None else "")' "$out/context.json")
if [ -n "$busy" ] && python3 -c "import sys; sys.exit(0 if float('$busy') > 20 else 1)" && [ $force = 0 ]; then
  echo "sqlite-bench: the CPUs were ${busy}% busy over 2 s; run on an idle machine (or --force)" >&2
  exit 3
fi

read -r -a arm_list <<<"${arms//,/ }"
read -r -a thread_list <<<"${threads//,/ }"
read -r -a cell_list <<<"${cells//,/ }"
n_cells=$((${#cell_list[@]} * ${#thread_list[@]}))
total=$((reps * n_cells * ${#arm_list[@]}))
echo "sqlite-bench: $total runs of ${seconds} s (+${warmup} s warm-up): about $(python3 -c "print(round($total * ($seconds + $warmup + 0.4) / 60, 1))") min; load average $(cut -d' ' -f1-3 /proc/loadavg); results in $out"

failed=0 done_runs=0 t0=$(date +%s)
trap 'echo "sqlite-bench: interrupted after $done_runs of $total runs; $raw holds them" >&2; exit 130' INT TERM
for rep in $(seq 1 "$reps"); do
  i=0
  for cell in "${cell_list[@]}"; do
    mode=$cell memstatus=on
    [ "$cell" = private-memstatus-off ] && mode=private memstatus=off
    for t in "${thread_list[@]}"; do
      order=("${arm_list[@]}")
      if [ $(((rep + i) % 2)) -eq 0 ]; then
        order=()
        for ((k = ${#arm_list[@]} - 1; k >= 0; k--)); do order+=("${arm_list[k]}"); done
      fi
      i=$((i + 1))
      for arm in "${order[@]}"; do
        line=$("$driver" --arm "$arm" --mode "$mode" --memstatus "$memstatus" --threads "$t" \
          --seconds "$seconds" --warmup "$warmup" ${dir:+--dir "$dir"} 2>"$out/driver.err")
        rc=$?
        done_runs=$((done_runs + 1))
        if [ -n "$line" ]; then
          # The repetition and the cell, for the summary; the driver's line otherwise as it wrote it.
          echo "{\"rep\":$rep,\"cell\":\"$cell\",${line#\{}" >>"$raw"
        else
          echo "{\"rep\":$rep,\"cell\":\"$cell\",\"arm\":\"$arm\",\"mode\":\"$mode\",\"threads\":$t,\"ok\":false,\"failures\":[\"no JSON line: exit $rc\"]}" >>"$raw"
        fi
        if [ $rc -ne 0 ]; then
          failed=$((failed + 1))
          echo "sqlite-bench: FAILED (exit $rc): $arm $cell $t threads, repetition $rep" >&2
          head -c 2000 "$out/driver.err" >&2
        fi
        tail -n 1 "$raw" | python3 -c 'import json,sys
r = json.loads(sys.stdin.read())
fig = "%10.0f ops/s  p99 %8.1f us  cpu %6.0f ns/op" % (r["ops_per_s"], r["latency_ns"]["p99"] / 1e3, r["cpu_ns_per_op"]) if r.get("ops") else "no result"
print("  [%d/%d] rep %d %-22s %3d thr  %-9s %s%s" % (int(sys.argv[1]), int(sys.argv[2]), r["rep"], r["cell"], r["threads"], r["arm"], fig, "" if r["ok"] else "  FAILED"))' \
          "$done_runs" "$total"
      done
    done
  done
done
trap - INT TERM
rm -f "$out/driver.err"
echo "sqlite-bench: $done_runs runs in $(($(date +%s) - t0)) s, $failed failed"

cmdline="bench/engines/sqlite/run.sh${given[*]:+ ${given[*]}}"
python3 "$here/summarize.py" report --runs "$raw" --context "$out/context.json" --command "$cmdline" \
  --out "$out/README.md" || die "summarizing failed"
echo "sqlite-bench: report in $out/README.md"
[ $failed -eq 0 ] || exit 1
