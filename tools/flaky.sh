#!/usr/bin/env bash
# The flake hunt: runs a built tree's tests many times, alone and beside a CPU hog (one busy loop
# per CPU), and counts each test's failures, so that a test whose verdict depends on timing shows
# itself before a newcomer's first `tools/test.sh` does (issue 42: a test that failed 231 of 300
# runs on one machine had passed CI on another).
#
#   tools/flaky.sh [--build DIR] [--reps N] [--hog-reps N] [--scale S] [--jobs J] [--table FILE]
#                  [-- ctest selection arguments, e.g. -L locks -R Wake]
#
# --build DIR     a configured and built tree (default build/release; configured as tools/test.sh's
#                 release stage and built when it is missing)
# --reps N        runs of the whole selection with the machine otherwise idle (default 20)
# --hog-reps N    runs beside the hog (default: as --reps)
# --scale S       SPINWISE_TEST_SCALE for the runs (default 0.25: stress tests do less work, never
#                 less checking; timing bugs show in the interleavings, not in the volume)
# --jobs J        ctest -j (default 1: each test alone; with the hog each still has a CPU to share)
# --table FILE    also write the per-binary table (markdown) there
# The selection defaults to every test but the packaging consumers and the compile-fail checks
# (-LE 'package|thread_safety'), which run no lock and take minutes each.
#
# Prints one line per run and, at the end, a table: per test binary, its tests, the runs alone and
# beside the hog, and the failures in each; then every test that failed, with how often. Exits 1
# when any test failed, 0 when none did. A run's output is kept in <build>/flaky/.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

build=build/release reps=20 hog_reps="" scale=0.25 jobs=1 table=""
while [ $# -gt 0 ]; do
  case $1 in
    --build) build=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --hog-reps) hog_reps=$2; shift 2 ;;
    --scale) scale=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --table) table=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "flaky: unknown argument '$1' (see the top of tools/flaky.sh)" >&2; exit 2 ;;
  esac
done
hog_reps=${hog_reps:-$reps}
for v in reps hog_reps jobs; do
  [[ ${!v} =~ ^[0-9]+$ ]] || { echo "flaky: --${v/_/-} must be a whole number, not '${!v}'" >&2; exit 2; }
done
select=("$@")
[ ${#select[@]} -eq 0 ] && select=(-LE 'package|thread_safety')

if [ ! -f "$build/CTestTestfile.cmake" ]; then
  echo "flaky: no tests in $build: configuring and building it (Release)"
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPINWISE_WERROR=ON >/dev/null &&
    cmake --build "$build" -j "$(nproc)" >/dev/null || { echo "flaky: the build failed" >&2; exit 1; }
fi
build=$(cd "$build" && pwd)
out=$build/flaky
rm -rf "$out"
mkdir -p "$out"

# Which binary each test runs: gtest's tests name it; a script test (cmake -P, a shell) is
# grouped by its name up to the first dot.
(cd "$build" && ctest --show-only=json-v1 "${select[@]}") >"$out/tests.json" || exit 1

hog_pids=()
stop_hog() {
  [ ${#hog_pids[@]} -gt 0 ] && kill "${hog_pids[@]}" 2>/dev/null
  wait "${hog_pids[@]}" 2>/dev/null
  hog_pids=()
}
trap 'stop_hog; exit 130' INT TERM
trap stop_hog EXIT

run_once() {  # tag (alone|hog), index
  local log="$out/$1-$2.log" failed
  (cd "$build" && SPINWISE_TEST_SCALE=$scale ctest -j "$jobs" --timeout 300 --output-on-failure "${select[@]}") >"$log" 2>&1
  failed=$(sed -n '/The following tests FAILED:/,$p' "$log" | grep -cE '^[[:space:]]+[0-9]+ - ')
  echo "flaky: $1 run $2: $(grep -oE '[0-9]+% tests passed, [0-9]+ tests failed out of [0-9]+' "$log" ||
    echo "no summary (see $log)")"
  [ "$failed" -eq 0 ] || sed -n '/The following tests FAILED:/,$p' "$log" | grep -E '^[[:space:]]+[0-9]+ - ' |
    sed 's/^/    /'
}

t0=$(date +%s)
count=$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["tests"]))' "$out/tests.json")
echo "flaky: $count tests, $reps runs alone and $hog_reps beside $(nproc) busy loops, ctest -j $jobs," \
  "SPINWISE_TEST_SCALE=$scale, load average $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq 1 "$reps"); do run_once alone "$i"; done
for c in $(seq 1 "$(nproc)"); do
  sh -c 'while :; do :; done' &
  hog_pids+=($!)
done
for i in $(seq 1 "$hog_reps"); do run_once hog "$i"; done
stop_hog
echo "flaky: $((reps + hog_reps)) runs in $(($(date +%s) - t0)) s"

python3 - "$out" "$reps" "$hog_reps" "$table" <<'PY'
import glob, json, os, re, sys
out, reps, hog_reps, table = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
tests = json.load(open(os.path.join(out, "tests.json")))["tests"]
def binary(t):
    cmd = t.get("command") or ["?"]
    exe = os.path.basename(cmd[0])
    if exe in ("cmake", "sh", "bash", "python3", "env") or exe.startswith("python"):
        return t["name"].split(".")[0] + " (script)"
    return exe
owner = {t["name"]: binary(t) for t in tests}
fails = {"alone": {}, "hog": {}}
missing = []
for tag in fails:
    for log in glob.glob(os.path.join(out, f"{tag}-*.log")):
        text = open(log, errors="replace").read()
        if "tests passed" not in text:
            missing.append(log)
        tail = text.split("The following tests FAILED:", 1)
        if len(tail) == 2:
            for m in re.finditer(r"^\s+\d+ - (\S+) \(", tail[1], re.M):
                fails[tag][m.group(1)] = fails[tag].get(m.group(1), 0) + 1
rows = {}
for name, b in owner.items():
    r = rows.setdefault(b, [0, 0, 0])
    r[0] += 1
    r[1] += fails["alone"].get(name, 0)
    r[2] += fails["hog"].get(name, 0)
lines = ["| binary | tests | runs alone | failures alone | runs beside the hog | failures beside the hog |",
         "|---|---:|---:|---:|---:|---:|"]
for b in sorted(rows):
    n, fa, fh = rows[b]
    lines.append(f"| {b} | {n} | {reps} | {fa} | {hog_reps} | {fh} |")
print("\n".join(lines))
bad = sorted(set(fails["alone"]) | set(fails["hog"]))
for name in bad:
    print(f"flaky: {name} failed {fails['alone'].get(name, 0)} of {reps} alone, "
          f"{fails['hog'].get(name, 0)} of {hog_reps} beside the hog")
for log in missing:
    print(f"flaky: {log} has no ctest summary (ctest itself failed)")
if table:
    with open(table, "w") as f:
        f.write("\n".join(lines) + "\n")
print(f"{sum(rows[b][0] for b in rows) * (reps + hog_reps) - sum(fails['alone'].values()) - sum(fails['hog'].values())}"
      f" passed, {sum(fails['alone'].values()) + sum(fails['hog'].values())} failed")
sys.exit(1 if bad or missing else 0)
PY
