#!/usr/bin/env bash
# Does spinwise-calibrate --tune find what a full sweep finds? One server, one load, both in the
# same run: the harness's server (harness.sh --exec) under sysbench for the whole run; first a
# sweep of innodb_spin_wait_delay over the harness's values, every value read through the server's
# Questions counter, passes interleaved (every other one reversed); then --tune on the same load.
# Reports the sweep's median per value, --tune's winner, and the ratio of the sweep's median at
# that winner to the sweep's best, with the range that ratio takes over the passes. With --out DIR
# it keeps the sweep as DIR/sweep.json (what `analyze.py rule-check` reads: every kept sweep checks
# the static advice, which --tune reports) and --tune's JSON as DIR/tune.json, the sweep also when
# --tune gives no verdict (which fails the check: exit 1 after the report). Four passes by
# default: the fewest with which rule-check may call a value beyond the best. The real measurement
# (the defaults below) takes about fifteen minutes and wants an idle machine; the small values in
# the example only show that it works.
#   bench/engines/mariadb/tune-check.sh [--tool PATH] [--seconds S] [--passes N] [--rounds N]
#                                       [--round-seconds S] [--threads N] [--test NAME] [--out DIR]
#   e.g. (a quick try): tune-check.sh --seconds 2 --passes 1 --rounds 2 --round-seconds 1
# As root, after tools/setup.sh engines. Exit 0 with the report; 1 a step failed; 2 usage.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
tool=$root/build/release/tools/spinwise-calibrate
seconds=15 passes=4 rounds="" round_s=5 threads=64 test=oltp_read_write keep=""  # rounds: --tune's default
delays="0,1,2,4,6,10,20,30,50"
usage() { echo "tune-check: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  [ $# -ge 2 ] || usage "$1 needs a value"
  case $1 in
    --tool) tool=$2 ;;
    --seconds) seconds=$2 ;;
    --passes) passes=$2 ;;
    --rounds) rounds=$2 ;;
    --round-seconds) round_s=$2 ;;
    --threads) threads=$2 ;;
    --test) test=$2 ;;
    --out) keep=$2 ;;
    --inside) inside=$2 ;;  # the harness calls back with this
    *) usage "unknown option '$1'" ;;
  esac
  shift 2
done
for n in "$seconds" "$passes" ${rounds:+"$rounds"} "$round_s" "$threads"; do
  [[ $n =~ ^[1-9][0-9]{0,3}$ ]] || usage "'$n' is not a whole number 1..9999"
done
[[ $test =~ ^oltp_[a-z_]+$ ]] || usage "--test '$test' is not a sysbench oltp test"
[ -x "$tool" ] || usage "$tool is not built (tools/quickstart.sh builds it; or --tool PATH)"
if [ -n "$keep" ]; then
  mkdir -p "$keep" && keep=$(cd "$keep" && pwd) || usage "--out '$keep' cannot be made"
fi

if [ -z "${inside:-}" ]; then
  # Start the server (the harness's, with the sweep's table sizes) and come back inside it.
  out=$(mktemp -d) || exit 1
  SPINWISE_EXEC_TABLES=8 SPINWISE_EXEC_TABLE_SIZE=25000 "$here/harness.sh" --out "$out" \
    --exec "$0 --inside 1 --tool $tool --seconds $seconds --passes $passes${rounds:+ --rounds $rounds} --round-seconds $round_s --threads $threads --test $test${keep:+ --out $keep}"
  rc=$?
  rm -rf "$out"
  exit $rc
fi

sql() { mariadb --no-defaults --socket="$SPINWISE_MARIADB_SOCKET" -uroot -N -B -e "$1"; }
questions() { sql "SHOW GLOBAL STATUS LIKE 'Questions'" | cut -f2; }
load_pid=""
trap '[ -n "$load_pid" ] && kill "$load_pid" 2>/dev/null; wait 2>/dev/null' EXIT
# The load outlives both parts, which end it (the trap above): each point also takes its settling
# second and its queries, which a loaded machine makes slow. Three times the plan: with the plan
# alone (2 s a point and a round allowed, and 5 minutes more) the load ended in --tune's 9th round on the
# 2-vCPU Zen 5 guest (26 minutes in, for 24 planned), which --tune rightly took for a stopped
# workload.
total=$((3 * (passes * 9 * (seconds + 3) + ${rounds:-12} * 6 * (round_s + 3) + 300)))
# shellcheck disable=SC2086 # the harness's options, one word each
sysbench "$test" $SPINWISE_MARIADB_SYSBENCH --threads="$threads" --time="$total" run >/dev/null 2>&1 &
load_pid=$!
sleep 5
original=$(sql "SELECT @@GLOBAL.innodb_spin_wait_delay")
echo "tune-check: $(sql 'SELECT VERSION()'), $test at $threads threads; load $(cut -d' ' -f1-3 /proc/loadavg)"
declare -A rates
list=(${delays//,/ })
for pass in $(seq 1 "$passes"); do
  order=("${list[@]}")
  [ $((pass % 2)) -eq 0 ] && order=($(printf '%s\n' "${list[@]}" | sort -rn))
  for d in "${order[@]}"; do
    sql "SET GLOBAL innodb_spin_wait_delay = $d" || exit 1
    sleep 1
    q0=$(questions) t0=$(date +%s.%N)
    sleep "$seconds"
    q1=$(questions) t1=$(date +%s.%N)
    rate=$(python3 -c "print(($q1 - $q0 - 1) / ($t1 - $t0))")
    rates[$d]+="$rate "
    printf '  sweep pass %d: innodb_spin_wait_delay %3d: %10.1f Questions/s\n' "$pass" "$d" "$rate"
  done
done
sql "SET GLOBAL innodb_spin_wait_delay = $original" || exit 1
# --rounds given: the plan may take what it takes; otherwise --tune's own default, as many rounds as
# fit its default time limit (5 minutes).
# A --tune without a verdict (it failed, or stopped) fails this check, but the sweep is still
# reported and kept (with --out), and so is what --tune's JSON said.
tune_rc=0
# shellcheck disable=SC2046 # the options, one word each
"$tool" --tune mariadb --socket "$SPINWISE_MARIADB_SOCKET" --user root $([ -n "$rounds" ] && echo --rounds "$rounds" --time-limit 3600) \
  --round-seconds "$round_s" --format json >"$SPINWISE_MARIADB_SOCKET.tune.json" || tune_rc=$?
[ $tune_rc -eq 0 ] || echo "tune-check: --tune failed (exit $tune_rc); the sweep is still reported" >&2
for d in "${list[@]}"; do echo "$d ${rates[$d]}"; done >"$SPINWISE_MARIADB_SOCKET.sweep.txt"
python3 - "$SPINWISE_MARIADB_SOCKET.sweep.txt" "$SPINWISE_MARIADB_SOCKET.tune.json" "$test" "$threads" "$seconds" \
  "$root/bench" "$keep" <<'PY' || exit 1
import json, os, statistics, sys
sweep_txt, tune_json, test, threads, seconds, bench, keep = sys.argv[1:8]
sys.path.insert(0, bench)
import run_context  # noqa: E402  (the machine, named as every tool names it)
try:
    tune = json.load(open(tune_json))
except (OSError, ValueError):
    tune = {}  # --tune printed no JSON: it failed before its report
winner = (tune.get("verdict") or {}).get("value")
rates = {int(l.split()[0]): [float(x) for x in l.split()[1:]] for l in open(sweep_txt) if l.strip()}
med = {d: statistics.median(r) for d, r in rates.items()}
best = max(med, key=med.get)
for d in sorted(med):
    marks = ("  <- best" if d == best else "") + ("  <- --tune" if d == winner else "")
    print(f"  sweep median: innodb_spin_wait_delay {d:3d}: {med[d]:10.1f}/s "
          f"(passes {min(rates[d]):.0f}-{max(rates[d]):.0f}){marks}")
if keep:
    ctx = run_context.here()
    doc = {"mode": "sweep", "source": "bench/engines/mariadb/tune-check.sh", "machine": ctx,
           "advised_delay": tune.get("advice"), "seconds_per_point": int(seconds),
           "workloads": [{"test": test, "threads": int(threads), "points": [
               {"delay": d, "qps_median": med[d], "qps_min": min(rates[d]), "qps_max": max(rates[d]),
                "passes": len(rates[d]), "qps_passes": rates[d]} for d in sorted(med)]}]}
    json.dump(doc, open(os.path.join(keep, "sweep.json"), "w"), indent=1)
    if tune:
        json.dump(tune, open(os.path.join(keep, "tune.json"), "w"), indent=1)
if winner is None:
    print(f"tune-check: --tune gave no verdict ({tune.get('stopped') or 'no JSON'}); the sweep best is {best}")
    sys.exit(0)
if winner not in med:
    print(f"tune-check: --tune chose {winner}, which the sweep did not measure")
    sys.exit(0)
# The ratio's spread: the pass-by-pass ratios (pass i of the choice over pass i of the best).
per_pass = sorted(a / b for a, b in zip(rates[winner], rates[best]))
print(f"tune-check: --tune chose {winner}; the sweep best is {best}; sweep at the choice / sweep best = "
      f"{med[winner] / med[best]:.3f} (pass by pass {per_pass[0]:.3f}-{per_pass[-1]:.3f}, {len(per_pass)} passes)")
PY
[ $tune_rc -eq 0 ] || exit 1
