#!/usr/bin/env bash
# bench/engines/sqlite/run.sh refuses to measure on a busy machine: with a busy loop on every CPU
# it must exit 3 before any run, and write no runs.jsonl line. The loops run from before the
# script starts until it has answered, so its 2 s look at the CPUs sees them whatever else runs.
#   bench_refuses_busy.sh <source dir> <spinwise-sqlite-bench> <scratch dir>
set -u
src=$1 driver=$2 out=$3
rm -rf "$out" && mkdir -p "$out"
hogs=()
for _ in $(seq "$(nproc)"); do
  sh -c 'while :; do :; done' &
  hogs+=($!)
done
trap 'kill "${hogs[@]}" 2>/dev/null' EXIT
"$src/bench/engines/sqlite/run.sh" --driver "$driver" --cells private --threads 1 --reps 1 \
  --seconds 0.1 --warmup 0.05 --out "$out" 2>"$out/stderr"
rc=$?
cat "$out/stderr"
[ $rc -eq 3 ] || { echo "FAIL: run.sh exited $rc on a busy machine, not 3"; exit 1; }
grep -q 'busy over 2 s; run on an idle machine' "$out/stderr" || { echo "FAIL: no reason given"; exit 1; }
[ ! -s "$out/runs.jsonl" ] || { echo "FAIL: it ran before refusing"; exit 1; }
echo "ok: refused with exit 3"
