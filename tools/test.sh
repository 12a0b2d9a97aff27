#!/usr/bin/env bash
# The whole test suite, from a fresh clone on a fresh Debian 12 machine:
#   0. format: every tracked C and C++ file is as clang-format (.clang-format) leaves it
#   1. models: the SPIN models of the locks' park/wake and FIFO-gate protocols (tests/models), exhaustive, and
#      the mutants SPIN must reject; no build, ~20 s
#   2. Release build, every test under ctest (packaging consumers included), -Werror
#   3. the tests under ThreadSanitizer
#   4. the tests under AddressSanitizer + UndefinedBehaviorSanitizer, on the generic relax backend
#      (SPINWISE_ARCH=generic: the build that proves the backend every other CPU falls back to)
#   5. aarch64 cross build, all tests under qemu-aarch64 with the default relax (isb), then the
#      tests that reach the relax instruction once per other kind (yield, sb, none)
#   (stages 3-5 build spinwise-stress and its tests but not the spinwise-bench microbenchmarks)
#   6. fuzz: the profile loader's libFuzzer target (clang, -fsanitize=fuzzer,address), 28 s on each CPU
#   7. engines: the real-MariaDB harness's smoke run (bench/engines/mariadb), the memcached
#      harness's (bench/engines/memcached, memcached under libspinwise-preload.so) and the
#      real-program harness's (bench/engines/programs: sysbench, pigz, zstd, CPython), when the engine
#      packages are installed (tools/setup.sh engines) and this is root; skipped, saying so, if not
# Each stage prints what it ran and ctest's summary (and, when it fails, what the failing tests
# said; the whole output is in <build>/<stage>/ctest-output.log); the last line counts the stages.
# Usage: tools/test.sh [stage ...]   (stages: format models release tsan asan aarch64 fuzz engines; default all)
# (`generic`, the stage that once built the generic backend alone, is a name for `asan` now.)
# SPINWISE_BUILD_ROOT=<dir> puts the build trees elsewhere than build/ (parallel work in one clone).
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
broot=${SPINWISE_BUILD_ROOT:-build}

tools/setup.sh || { echo "test: setup failed"; exit 1; }

jobs=$(nproc)
stages=("$@")
[ ${#stages[@]} -eq 0 ] && stages=(format models release tsan asan aarch64 fuzz engines)
passed=0
failed=0
failed_names=()
t_all=$(date +%s)

# configure + build one tree; prints only on failure
build() {  # dir, cmake args...
  local dir=$1
  shift
  local log="$root/$dir.log"
  mkdir -p "$(dirname "$log")"
  if ! cmake -S "$root" -B "$root/$dir" -G Ninja -DSPINWISE_WERROR=ON "$@" >"$log" 2>&1 ||
     ! cmake --build "$root/$dir" -j "$jobs" >>"$log" 2>&1; then
    tail -n 60 "$log"
    return 1
  fi
}

# ctest with its summary; extra env assignments come first. The whole output stays in
# <dir>/ctest-output.log; on failure the failing tests' own lines are printed too (the summary's
# list of skipped tests can push them out of the last 40 lines, as it once did in CI).
run_ctest() {  # dir, [VAR=value ...] -- [ctest args]
  local dir=$1
  shift
  local envs=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do envs+=("$1"); shift; done
  [ "${1:-}" = "--" ] && shift
  local log="$root/$dir/ctest-output.log" rc
  (cd "$root/$dir" && env "${envs[@]}" ctest --output-on-failure -j "$jobs" "$@") >"$log" 2>&1
  rc=$?
  grep -vE '^ *([0-9]+/[0-9]+ Test +#[0-9]+: .* Passed| *Start +[0-9]+:)' "$log" | tail -n 40
  if [ $rc -ne 0 ]; then
    echo "--- what the failing tests said ($log):"
    grep -E -B3 -A8 ': Failure$|FATAL|ERROR: [A-Za-z]*Sanitizer|Sanitizer: CHECK failed|runtime error:|\*\*\*(Failed|Timeout|Exception)' "$log" |
      head -n 150
    # A sanitizer's report whole (its stacks are the diagnosis; CI once kept only the first line
    # of a ThreadSanitizer race), the first two, stack frames cut to 160 columns.
    awk '/(WARNING|ERROR): [A-Za-z]*Sanitizer|Sanitizer: CHECK failed/ { on = 1; n++ } on && n <= 2 { print substr($0, 1, 160) }
         /^SUMMARY: [A-Za-z]*Sanitizer/ { on = 0 }' "$log" | head -n 200
  fi
  return $rc
}

stage() {  # name, description, function
  local name=$1 desc=$2 fn=$3 t0 rc
  echo "=== stage $name: $desc"
  t0=$(date +%s)
  "$fn"
  rc=$?
  if [ $rc -eq 0 ]; then
    passed=$((passed + 1))
    echo "=== stage $name: passed in $(($(date +%s) - t0)) s"
  else
    failed=$((failed + 1))
    failed_names+=("$name")
    echo "=== stage $name: FAILED in $(($(date +%s) - t0)) s"
  fi
  echo
}

# The SPIN models (docs/model-checking.md): each protocol checked exhaustively, each mutant must
# make SPIN report its error. Builds nothing of spinwise; works in a temporary directory.
# Formatting: clang-format's verdict on every tracked C and C++ file (and new ones git does not ignore);
# the files it would change are listed, with the first lines of the difference.
stage_format() {
  local files bad f
  mapfile -t files < <(git ls-files --cached --others --exclude-standard -- '*.cpp' '*.hpp' '*.h' '*.c' |
    sort -u | while read -r f; do [ -f "$f" ] && echo "$f"; done)
  # One clang-format process for all files (--dry-run names each violation as FILE:LINE:COL: error):
  # a process a file took 37 s of the stage for 305 files, one for all 2 s (2-vCPU Zen 5 guest).
  # clang-format exits 0 with violations under --dry-run; non-zero is its own failure (a file it
  # cannot read, a bad .clang-format), which fails the stage with what it said.
  local out
  if ! out=$(printf '%s\0' "${files[@]}" | xargs -0 -r clang-format --style=file --dry-run 2>&1); then
    echo "format: clang-format failed:"
    echo "$out" | grep -v 'code should be clang-formatted' | head -n 20
    return 1
  fi
  mapfile -t bad < <(echo "$out" |
    sed -n 's/^\(.*\):[0-9]*:[0-9]*: \(error\|warning\): code should be clang-formatted.*/\1/p' | sort -u)
  for f in "${bad[@]}"; do
    echo "--- $f is not clang-formatted:"
    clang-format --style=file "$f" | diff "$f" - | head -n 8
  done
  echo "format: ${#files[@]} files checked, ${#bad[@]} not formatted (fix: clang-format -i FILE)"
  [ ${#bad[@]} -eq 0 ]
}

stage_models() {
  bash "$root/tests/models/run_models.sh"
}
# The test programs outside the lock suites at -O1 (SPINWISE_TEST_DRIVER_FLAGS, tests/CMakeLists.txt):
# the libraries, tools and lock suites they test are built at -O3 all the same.
stage_release() {
  build $broot/release -DCMAKE_BUILD_TYPE=Release -DSPINWISE_TEST_DRIVER_FLAGS=-O1 && run_ctest $broot/release --
}
# Sanitized and emulated runs do less work per stress test (SPINWISE_TEST_SCALE) but the same checks.
# Sanitized builds compile with -Og -g1: line tables are all a sanitizer's report needs (file:line
# in every frame), and the stage's time is almost all build (its tests take under a minute). -Og
# halves ASan's compile time against -O1 (one typed lock suite: 31 s -> 16 s; the whole asan build
# 310 s -> 194 s, tests 50 s -> 48 s, 2-vCPU Zen 4 guest, 2026-12-06) and keeps every check.
# These stages and the aarch64 one also build in unity mode (CMAKE_UNITY_BUILD: each target's
# sources compiled as one, ~11% less build); the release stage builds each source of the
# libraries and tools alone, as a user's build does, so a source that compiles only beside its
# neighbours still fails there (the test programs of several sources are unity builds everywhere).
# They and the aarch64 stage run the typed lock suites on each lock's default policy only
# (SPINWISE_TEST_POLICY_VARIANTS, tests/locks/CMakeLists.txt); the release stage on every variant.
san_build=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-Og -g1 -DNDEBUG" -DCMAKE_UNITY_BUILD=ON
  -DSPINWISE_TEST_POLICY_VARIANTS=OFF)
# CompareMedians: the statistics of the paired comparison, one thread of arithmetic (tests/calibration/
# uncertainty_test.cpp), nothing for ThreadSanitizer to see; 38 of the stage's 101 test-seconds here.
# The release and aarch64 stages run them all, asan all but two (below).
tsan_skip='^CompareMedians[.]'
# Under ASan, the two A/A rate checks (4 x 2000 comparisons, 37 of the stage's 218 test-seconds on
# the 2-vCPU Zen 4 guest) run the code AaVerdictsArePinned runs on 4 x 500; the release and aarch64
# stages run them.
asan_skip='^CompareMedians[.]AaComparisonsAt'
stage_tsan() {
  build $broot/tsan "${san_build[@]}" -DSPINWISE_SANITIZE=thread -DSPINWISE_BUILD_MICROBENCH=OFF \
    -DSPINWISE_HEADER_CHECK=OFF &&
    run_ctest $broot/tsan SPINWISE_TEST_SCALE=0.25 TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 -- \
      -LE thread_safety -E "$tsan_skip"
}

# The generic backend rides on this stage: it changes only how a relax is issued and the cycle
# counter read (arch/spinwise/arch/generic.hpp), which ASan has nothing to say about, while a stage
# of its own cost a whole build of the tests (208 s of a 2412 s suite on a 2-vCPU Zen 5 guest). The
# x86_64 backend is the release and tsan stages', aarch64's the aarch64 stage's.
stage_asan() {
  build $broot/asan "${san_build[@]}" -DSPINWISE_SANITIZE=address -DSPINWISE_ARCH=generic \
    -DSPINWISE_BUILD_MICROBENCH=OFF -DSPINWISE_HEADER_CHECK=OFF &&
    run_ctest $broot/asan SPINWISE_TEST_SCALE=0.5 ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
      UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 -- -LE thread_safety -E "$asan_skip"
}
# Which instruction relaxes changes no lock's logic: the other kinds rerun only the tests whose
# subject is the relax (the backend and its machine code, calibration and the relax table, the
# wait policies and core that spin through it, the relax table reaching every latch, and the small
# suites of the parking and FIFO locks). The typed lock suites (ExclusiveLock, SharedLock, SxLatch:
# 208 tests, most of the reruns' time) check each lock's logic, which the default kind's full run
# covers; what reaches their waits from a kind is RelaxTableReachesLatch's.
aarch64_relax_suites=(Arch RelaxCost CoreClock Calibration ClockBoundedDelay RelaxTableReachesLatch WaitPolicies
  TimePolicy InnodbPolicy AdaptivePolicy AdaptiveController PromptHandoff StressRelaxer HybridMutex
  HybridMutexWakeUp TicketMutex McsMutex)
aarch64_relax_cli=(list_backends quick_table quick_json target_ns c2c)  # calibration.cli.*
stage_aarch64() {
  # -O2, what Debian's packages are built with (dpkg-buildflags), not CMake's Release -O3: 10% less
  # build; the release stage keeps -O3 on x86_64. The test programs outside the lock suites at -O1,
  # as in the release stage: what they test (libraries, tools, lock suites) stays at -O2.
  build $broot/aarch64 -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG" -DCMAKE_UNITY_BUILD=ON \
    -DCMAKE_TOOLCHAIN_FILE="$root/tools/cmake/aarch64-linux-gnu.cmake" -DSPINWISE_TEST_POLICY_VARIANTS=OFF \
    -DSPINWISE_TEST_DRIVER_FLAGS=-O1 \
    -DSPINWISE_BUILD_MICROBENCH=OFF -DSPINWISE_HEADER_CHECK=OFF ||
    return 1
  local rc=0 kind name count select=()
  # A suite renamed or removed must not shrink the reruns unnoticed: each name picks tests.
  for name in "${aarch64_relax_suites[@]/%/[.]}" "${aarch64_relax_cli[@]/#/calibration[.]cli[.]}"; do
    count=$(cd "$root/$broot/aarch64" && ctest -N -R "^$name" | sed -n 's/^Total Tests: //p')
    if [ "${count:-0}" -eq 0 ]; then  # no count at all (ctest failed) fails too
      echo "--- aarch64: no test matches ^$name; update aarch64_relax_suites/_cli in tools/test.sh"
      rc=1
    fi
  done
  local re
  re="^($(IFS='|'; echo "${aarch64_relax_suites[*]}"))[.]|^calibration[.]cli[.]($(IFS='|'; echo "${aarch64_relax_cli[*]}"))\$"
  for kind in isb yield sb none; do
    # SB needs FEAT_SB; qemu's default CPU model may lack it on older qemu versions.
    if [ "$kind" = sb ] && ! qemu-aarch64 -L /usr/aarch64-linux-gnu "$root/$broot/aarch64/tools/spinwise-calibrate" \
         --list-backends 2>/dev/null | grep -qw sb; then
      echo "--- aarch64 relax=sb: skipped, this qemu-aarch64 does not report HWCAP_SB"
      continue
    fi
    [ "$kind" = isb ] || select=(-R "$re")
    echo "--- aarch64 relax=$kind (qemu-aarch64 $(qemu-aarch64 --version | head -n1 | awk '{print $3}'))," \
      "$([ "$kind" = isb ] && echo "all tests" || echo "the tests that reach the relax")"
    run_ctest $broot/aarch64 SPINWISE_RELAX=$kind SPINWISE_EXPECT_RELAX=$kind SPINWISE_TEST_SCALE=0.25 -- \
      -LE thread_safety "${select[@]}" || rc=1
  done
  return $rc
}
# The libFuzzer target for the profile loader (tests/fuzz), built with clang++: the runtime with
# -fsanitize=fuzzer-no-link,address for coverage, the target with -fsanitize=fuzzer,address. It runs
# one fuzzing process per CPU (libFuzzer's -jobs, sharing one corpus) for SPINWISE_FUZZ_SECONDS
# (28) from the seed corpus plus what earlier runs found: the 55 fuzzing CPU-seconds the stage once
# spent on one CPU while the other idled. A crash or a leak in any process fails the stage and
# leaves the input under <build>/fuzz/artifacts/; each process's log is <build>/fuzz/fuzz-N.log.
# The build is in unity mode, as the sanitized stages' (49 s -> 40 s alone on the 2-vCPU Zen 4
# guest).
stage_fuzz() {
  local dir=$broot/fuzz log="$root/$broot/fuzz.log"
  mkdir -p "$root/$dir"
  if ! cmake -S "$root" -B "$root/$dir" -G Ninja -DSPINWISE_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
         -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link,address" \
         -DSPINWISE_BUILD_BENCH=OFF -DSPINWISE_BUILD_TOOLS=OFF -DCMAKE_UNITY_BUILD=ON >"$log" 2>&1 ||
     ! cmake --build "$root/$dir" -j "$jobs" --target spinwise_profile_fuzz >>"$log" 2>&1; then
    tail -n 60 "$log"
    return 1
  fi
  mkdir -p "$root/$dir/corpus" "$root/$dir/artifacts"
  echo "--- fuzzing load_profile for ${SPINWISE_FUZZ_SECONDS:-28} s in $jobs processes"
  rm -f "$root/$dir"/fuzz-[0-9]*.log
  # -jobs: the parent exits non-zero when any job did.
  (cd "$root/$dir" && ASAN_OPTIONS=detect_leaks=1 ./tests/fuzz/spinwise_profile_fuzz \
     -max_total_time="${SPINWISE_FUZZ_SECONDS:-28}" -jobs="$jobs" -workers="$jobs" -timeout=10 -rss_limit_mb=2048 \
     -print_final_stats=1 -artifact_prefix="$root/$dir/artifacts/" -dict="$root/tests/fuzz/profile.dict" \
     corpus "$root/tests/fuzz/corpus") >"$root/$dir/fuzz-run.log" 2>&1
  local rc=$? f
  for f in "$root/$dir"/fuzz-[0-9]*.log; do
    echo "--- $(basename "$f"):"
    grep -E "^(#[0-9]+ +DONE|Done [0-9]+ runs)|stat::(number_of_executed_units|peak_rss_mb)|ERROR|SUMMARY|Test unit written" \
      "$f" | tail -n 20
    [ $rc -eq 0 ] || tail -n 40 "$f"
  done
  [ $rc -eq 0 ] || tail -n 20 "$root/$dir/fuzz-run.log"
  return $rc
}

# The MariaDB harness's smoke mode: a real server up for one 5 s sysbench run and down again. It
# passes when the run's result says work was done (queries, server samples) and nothing is left:
# no server of its own running, no temporary directory. Skipped when the packages are not there.
engines_mariadb() {
  local missing=() t
  for t in mariadbd mariadb-install-db mariadb sysbench perf nm objdump gnuplot; do
    command -v "$t" >/dev/null || missing+=("$t")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "--- engines: skipped (not installed: ${missing[*]}; tools/setup.sh engines installs them)"
    return 0
  fi
  if [ "$(id -u)" -ne 0 ]; then
    echo "--- engines: skipped (the harness runs as root: it starts mariadbd as the mysql user and samples with perf -a)"
    return 0
  fi
  local out before after
  out=$(mktemp -d) || return 1
  before=$(ls -d /tmp/spinwise-mariadb.* 2>/dev/null | sort)
  SPINWISE_CALIBRATE="$root/$broot/release/tools/spinwise-calibrate" \
    bench/engines/mariadb/harness.sh --smoke --out "$out" || { rm -rf "$out"; return 1; }
  after=$(ls -d /tmp/spinwise-mariadb.* 2>/dev/null | sort)
  python3 - "$out/smoke.json" <<'PY' || { rm -rf "$out"; return 1; }
import json, sys
d = json.load(open(sys.argv[1]))
r = d["runs"]
assert len(r) == 1, f"{len(r)} runs, expected 1"
assert r[0]["qps"] > 0 and r[0]["voluntary_ctx_per_s"] > 0, f"no work recorded: {r[0]}"
assert 0 <= r[0]["spin_share"] <= 1, r[0]
print(f"--- engines: smoke run {r[0]['qps']:.0f} qps, {r[0]['samples_server']} server samples, "
      f"spin share {100 * r[0]['spin_share']:.1f}%, server {d['server']}")
PY
  rm -rf "$out"
  [ "$before" = "$after" ] || { echo "--- engines: the harness left a temporary directory behind: $after"; return 1; }
  if pgrep -f "mariadbd --no-defaults .*spinwise-mariadb" >/dev/null; then
    echo "--- engines: a harness server is still running"; return 1
  fi
}
# spinwise-calibrate --tune against the harness's server (bench/engines/mariadb/tune-tests.sh): a
# short smoke run (2 candidates, 2 rounds) and every way out that must put the original setting back
# (SIGINT, SIGTERM, bad credentials, a lost connection, a workload that stops, the server killed).
# Skipped like the smoke above, and when the tool was built without libmariadb.
engines_tune() {
  local t missing=() tool="$root/$broot/release/tools/spinwise-calibrate" out before after
  for t in mariadbd mariadb-install-db mariadb sysbench perf nm objdump gnuplot; do
    command -v "$t" >/dev/null || missing+=("$t")
  done
  if [ ${#missing[@]} -gt 0 ] || [ "$(id -u)" -ne 0 ]; then
    echo "--- engines: --tune checks skipped (not root, or not installed: ${missing[*]})"
    return 0
  fi
  [ -x "$tool" ] || build $broot/release -DCMAKE_BUILD_TYPE=Release || return 1
  if "$tool" --tune mariadb --socket /nonexistent 2>&1 | grep -q "built without libmariadb"; then
    echo "--- engines: --tune checks skipped (spinwise-calibrate built without libmariadb; tools/setup.sh installs it)"
    return 0
  fi
  out=$(mktemp -d) || return 1
  before=$(ls -d /tmp/spinwise-mariadb.* /tmp/spinwise-tune-tests.* 2>/dev/null | sort)
  timeout 300 bench/engines/mariadb/harness.sh --out "$out" --exec "bench/engines/mariadb/tune-tests.sh $tool" ||
    { rm -rf "$out"; return 1; }
  rm -rf "$out"
  after=$(ls -d /tmp/spinwise-mariadb.* /tmp/spinwise-tune-tests.* 2>/dev/null | sort)
  [ "$before" = "$after" ] || { echo "--- engines: the --tune checks left a temporary directory behind: $after"; return 1; }
}
# The memcached harness's smoke mode: one cell, memcached with no preload, with the interposer
# passing through (glibc) and on the default kind (adaptive), 1 s each. It passes when every run did work, its
# run's statistics counted the server's locks, and nothing is left behind.
engines_memcached() {
  local t missing=()
  for t in memcached memcaslap; do command -v "$t" >/dev/null || missing+=("$t"); done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "--- engines: memcached smoke skipped (not installed: ${missing[*]}; tools/setup.sh engines installs them)"
    return 0
  fi
  local lib="$root/$broot/release/src/libspinwise-preload.so" out before after
  [ -f "$lib" ] || build $broot/release -DCMAKE_BUILD_TYPE=Release || return 1
  out=$(mktemp -d) || return 1
  before=$(ls -d /tmp/spinwise-memcached.* 2>/dev/null | sort; pgrep -x memcached | sort)
  bench/engines/memcached/run.sh --smoke --force --preload "$lib" --out "$out" >/dev/null || { rm -rf "$out"; return 1; }
  after=$(ls -d /tmp/spinwise-memcached.* 2>/dev/null | sort; pgrep -x memcached | sort)
  python3 - "$out/runs.jsonl" <<'PY' || { rm -rf "$out"; return 1; }
import json, sys
r = [json.loads(l) for l in open(sys.argv[1])]
assert len(r) == 3 and all(x["ok"] and x["ops"] > 0 for x in r), r
h = next(x for x in r if x["arm"] == "adaptive")  # the interposer's default kind
assert h["preload"] and h["preload"]["acquisitions"] > 0, f"the adaptive run counted no lock: {h}"
print("--- engines: memcached smoke " + ", ".join(f"{x['arm']} {x['ops_per_s'] / 1000:.0f}k ops/s" for x in r)
      + f"; adaptive took {h['preload']['acquisitions'] / h['ops']:.1f} locks per operation")
PY
  rm -rf "$out"
  [ "$before" = "$after" ] || { echo "--- engines: the memcached harness left a server or a temporary directory behind: $after"; return 1; }
}
# The real-program harness's smoke mode (bench/engines/programs): every program, with no preload,
# through the interposer (glibc) and on the default kind (adaptive), each run's output checked; run.py exits non-zero
# when a run failed or a program's output was wrong.
engines_programs() {
  local t missing=()
  for t in sysbench pigz zstd /usr/bin/python3 cc; do command -v "$t" >/dev/null || missing+=("$t"); done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "--- engines: programs smoke skipped (not installed: ${missing[*]}; tools/setup.sh engines installs them)"
    return 0
  fi
  local lib="$root/$broot/release/src/libspinwise-preload.so" out
  [ -f "$lib" ] || build $broot/release -DCMAKE_BUILD_TYPE=Release || return 1
  out=$(mktemp -d) || return 1
  python3 bench/engines/programs/run.py --smoke --force --preload "$lib" --out "$out" >/dev/null || { rm -rf "$out"; return 1; }
  echo "--- engines: programs smoke, $(grep -c '"ok": true' "$out/runs.jsonl") runs ok"
  rm -rf "$out"
  # spinwise-run on a real program whose binary keeps only its exported symbols (Debian's sysbench):
  # its waits are in a static function, so a site is sysbench+0x..., never the exported symbol
  # below it (addr2line's guess, which named crc32 once).
  local report
  report=$(SPINWISE_RUN_PRELOAD="$lib" /usr/bin/python3 tools/spinwise-run --top 1 -- \
             sysbench threads --threads=8 --thread-locks=1 --time=1 run 2>&1 >/dev/null) || return 1
  if ! grep -Eq 'waited most at +sysbench\+0x[0-9a-f]+' <<<"$report"; then
    echo "--- engines: spinwise-run named sysbench's sites wrongly:"; echo "$report"; return 1
  fi
  echo "--- engines: spinwise-run on sysbench threads: its sites are module+offset"
}
stage_engines() {
  local rc=0
  engines_mariadb || rc=1
  engines_tune || rc=1
  engines_memcached || rc=1
  engines_programs || rc=1
  return $rc
}

for s in "${stages[@]}"; do
  case $s in
    format) stage format "clang-format on every C++ file" stage_format ;;
    models) stage models "SPIN models of the park/wake and FIFO-gate protocols, exhaustive" stage_models ;;
    release) stage release "Release build, all tests" stage_release ;;
    tsan) stage tsan "ThreadSanitizer build, all tests" stage_tsan ;;
    asan) stage asan "AddressSanitizer+UBSan build on the generic backend, all tests" stage_asan ;;
    aarch64) stage aarch64 "aarch64 cross build, tests under qemu-aarch64 per relax kind" stage_aarch64 ;;
    generic) echo "test: the generic backend is built and tested by the asan stage now"
      stage asan "AddressSanitizer+UBSan build on the generic backend, all tests" stage_asan ;;
    fuzz) stage fuzz "libFuzzer on the profile loader (clang, ASan), bounded" stage_fuzz ;;
    engines) stage engines "a real MariaDB and sysbench, and memcached under the interposer: the harnesses' smoke runs" stage_engines ;;
    *) echo "test: unknown stage '$s' (stages: format models release tsan asan aarch64 fuzz engines)"; exit 2 ;;
  esac
done

echo "test: ${stages[*]} took $(($(date +%s) - t_all)) s"
[ $failed -gt 0 ] && echo "test: failed stages: ${failed_names[*]}"
echo "stages: $passed passed, $failed failed"
[ $failed -eq 0 ]
