#!/usr/bin/env bash
# A real MariaDB under sysbench, its innodb_spin_wait_delay swept live (docs/engines.md).
#
# As root, on a fresh Debian 12 machine: installs what it needs (tools/setup.sh engines), makes a
# temporary directory, starts its own mariadbd there (--no-defaults: no system configuration is
# read; its own datadir, socket and pid file; 127.0.0.1 and a free port; as the mysql user),
# prepares the sysbench tables, runs the sweep, and on every way out (the end, an error, Ctrl-C,
# SIGTERM) stops perf, sysbench and its server by PID and removes the directory. It never touches
# a system MariaDB, its datadir or its port.
#
# Usage: bench/engines/mariadb/harness.sh [options]
#   --smoke              one 5 s oltp_read_write run at 8 threads on small tables: the server up and
#                        down, one result line checked, nothing left behind (what tools/test.sh runs)
#   --out DIR            where the results go (default bench/results/engines)
#   --delays LIST        innodb_spin_wait_delay values, comma separated (default 0,1,2,4,6,10,20,30,50)
#   --advised N|none     the advised value, added to the sweep and marked in the plot (default: what
#                        spinwise-calibrate --advise mariadb says for this machine and this server's
#                        my_cpu_relax_multiplier; none: no advice)
#   --workloads LIST     test:threads pairs (default oltp_read_write:64,oltp_read_write:256,
#                        oltp_point_select:256)
#   --duration S         seconds per measured run (default 20)
#   --warmup S           seconds of load after each SET GLOBAL before the measured run (default 5)
#   --passes N           passes over the delays, every other one in reverse order (default 2)
#   --spin-loops-probe   instead of the sweep: innodb_sync_spin_loops 0, 1 and 30 under one load,
#                        the spin share of each (does 0 mean "do not spin" or "spin without bound"?)
#   --keep-perf          keep the perf.data files under the output directory's raw/ (large)
#   --exec COMMAND       instead of the sweep: the server up on small sysbench tables (the smoke's;
#                        SPINWISE_EXEC_TABLES and SPINWISE_EXEC_TABLE_SIZE give others),
#                        then `bash -c COMMAND` with SPINWISE_MARIADB_SOCKET, _PORT, _PID and _SYSBENCH
#                        (sysbench's connection and table options) set; the harness exits with its
#                        code, the server stopped and the directory removed (tools/test.sh's --tune
#                        tests, bench/engines/mariadb/tune-check.sh)
# Exit codes: 0 done; 1 a step failed (the message says which); 2 usage; 4 a tool is missing.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)

die() { echo "harness: $*" >&2; exit 1; }
usage() { echo "harness: $*" >&2; echo "usage: $0 [--smoke] [--exec COMMAND] [--out DIR] [--delays LIST] [--advised N] [--workloads LIST] [--duration S] [--warmup S] [--passes N] [--spin-loops-probe] [--keep-perf]" >&2; exit 2; }

smoke=0 probe=0 keep_perf=0 exec_cmd=""
out="$root/bench/results/engines"
delays="0,1,2,4,6,10,20,30,50"
advised=""
workloads="oltp_read_write:64,oltp_read_write:256,oltp_point_select:256"
duration=20 warmup=5 passes=2
tables=8 table_size=25000
while [ $# -gt 0 ]; do
  case $1 in
    --smoke) smoke=1 ;;
    --spin-loops-probe) probe=1 ;;
    --keep-perf) keep_perf=1 ;;
    --out | --delays | --advised | --workloads | --duration | --warmup | --passes | --exec)
      [ $# -ge 2 ] || usage "$1 needs a value"
      case $1 in
        --out) out=$2 ;;
        --delays) delays=$2 ;;
        --advised) advised=$2 ;;
        --workloads) workloads=$2 ;;
        --duration) duration=$2 ;;
        --warmup) warmup=$2 ;;
        --passes) passes=$2 ;;
        --exec) exec_cmd=$2; [ -n "$exec_cmd" ] || usage "--exec needs a command" ;;
      esac
      shift ;;
    *) usage "unknown option '$1'" ;;
  esac
  shift
done
uint() { [[ $1 =~ ^[0-9]+$ ]] && [ ${#1} -le 6 ]; }
[ -n "${delays//,/}" ] || usage "--delays is empty"
[ -n "${workloads//,/}" ] || usage "--workloads is empty"
norm=""
for d in ${delays//,/ }; do
  uint "$d" && [ "$((10#$d))" -le 6000 ] || usage "--delays: '$d' is not an integer in 0..6000 (MariaDB 10.11's range)"
  norm+="${norm:+,}$((10#$d))"
done
delays=$norm
[ -z "$advised" ] || [ "$advised" = none ] || { uint "$advised" && [ "$((10#$advised))" -le 6000 ]; } ||
  usage "--advised: '$advised' is not an integer in 0..6000 (or none: no advised value)"
[ -z "$advised" ] || [ "$advised" = none ] || advised=$((10#$advised))
uint "$duration" && [ "$duration" -ge 1 ] && [ "$duration" -le 3600 ] || usage "--duration: '$duration' is not 1..3600 seconds"
uint "$warmup" && [ "$warmup" -le 600 ] || usage "--warmup: '$warmup' is not 0..600 seconds"
uint "$passes" && [ "$passes" -ge 1 ] && [ "$passes" -le 20 ] || usage "--passes: '$passes' is not 1..20"
for w in ${workloads//,/ }; do
  [[ $w =~ ^(oltp_read_write|oltp_point_select|oltp_read_only|oltp_update_index):[0-9]+$ ]] && [ "${w#*:}" -ge 1 ] && [ "${w#*:}" -le 1000 ] ||
    usage "--workloads: '$w' is not test:threads (tests: oltp_read_write, oltp_point_select, oltp_read_only, oltp_update_index; 1..1000 threads)"
done
[ "$(id -u)" -eq 0 ] || usage "run as root (it starts mariadbd as the mysql user and samples with perf -a)"
[ $probe -eq 1 ] && [ -z "$advised" ] && advised=none
if [ $smoke -eq 1 ]; then
  [ $probe -eq 0 ] || usage "--smoke and --spin-loops-probe exclude each other"
  delays=4 workloads="oltp_read_write:8" duration=5 warmup=1 passes=1 tables=2 table_size=1000
  [ -n "$advised" ] || advised=none
fi
if [ -n "$exec_cmd" ]; then
  [ $smoke -eq 0 ] && [ $probe -eq 0 ] || usage "--exec goes with neither --smoke nor --spin-loops-probe"
  tables=${SPINWISE_EXEC_TABLES:-2} table_size=${SPINWISE_EXEC_TABLE_SIZE:-1000} advised=none
fi

"$root/tools/setup.sh" engines || die "tools/setup.sh engines failed"
for tool in mariadbd mariadb-install-db mariadb sysbench perf python3 nm objdump gnuplot; do
  command -v "$tool" >/dev/null || { echo "harness: $tool not found (tools/setup.sh engines installs it)" >&2; exit 4; }
done
getent passwd mysql >/dev/null || useradd --system --no-create-home --shell /usr/sbin/nologin mysql ||
  die "no mysql user, and useradd failed"

# The results' directory first: a sweep of half an hour must not be lost to a bad --out. The runs
# go to <out>/raw/runs.jsonl as they finish (not committed: summarize writes the committed files).
mkdir -p "$out/raw" && [ -w "$out" ] || die "cannot write to --out $out"

# ---- the server's life: everything below is undone by cleanup, whatever the way out
work=$(mktemp -d /tmp/spinwise-mariadb.XXXXXX) || die "mktemp failed"
chmod 711 "$work"
server_pid="" perf_pid="" bench_pid=""
cleanup() {
  local rc=$?
  trap - EXIT
  trap '' INT TERM  # a second Ctrl-C must not cut the shutdown short
  # Background jobs of a script ignore SIGINT: TERM them (perf's workload, a sleep, with it).
  [ -n "$perf_pid" ] && { pkill -TERM -P "$perf_pid" 2>/dev/null; kill -TERM "$perf_pid" 2>/dev/null; }
  [ -n "$bench_pid" ] && kill "$bench_pid" 2>/dev/null
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid"
    for _ in $(seq 1 600); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$server_pid" 2>/dev/null && { echo "harness: mariadbd $server_pid did not stop in 60 s: SIGKILL" >&2; kill -KILL "$server_pid"; }
  fi
  wait 2>/dev/null
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT
trap 'echo "harness: interrupted" >&2; exit 130' INT
trap 'echo "harness: terminated" >&2; exit 143' TERM

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
mkdir -p "$work/data" "$work/raw" && chown mysql: "$work/data" || die "cannot make the datadir"
mariadb-install-db --no-defaults --user=mysql --datadir="$work/data" --auth-root-authentication-method=normal \
  --skip-test-db >"$work/install.log" 2>&1 || { tail -n 20 "$work/install.log" >&2; die "mariadb-install-db failed"; }
# The server's settings: a buffer pool that holds the tables, a redo log large enough that no run
# waits on checkpoints, commit without fsync (the sweep is about latches, not the disk), no binary
# log, no performance_schema.
mariadbd --no-defaults --user=mysql --datadir="$work/data" --bind-address=127.0.0.1 --port="$port" \
  --socket="$work/data/mariadbd.sock" --pid-file="$work/data/mariadbd.pid" --log-error="$work/data/error.log" \
  --skip-name-resolve --max-connections=1100 --max-prepared-stmt-count=1048576 --innodb-buffer-pool-size=1G --innodb-log-file-size=512M \
  --innodb-flush-log-at-trx-commit=2 --innodb-buffer-pool-load-at-startup=OFF \
  --innodb-buffer-pool-dump-at-shutdown=OFF --performance-schema=OFF >"$work/mariadbd.out" 2>&1 &
server_pid=$!
# Over our own socket: never another server that might hold the port.
sql() { mariadb --no-defaults --socket="$work/data/mariadbd.sock" -uroot -N -B -e "$1"; }
for _ in $(seq 1 300); do
  sql "SELECT 1" >/dev/null 2>&1 && break
  kill -0 "$server_pid" 2>/dev/null || { tail -n 20 "$work/mariadbd.out" "$work/data/error.log" >&2; die "mariadbd exited at start-up"; }
  sleep 0.1
done
sql "SELECT 1" >/dev/null 2>&1 || { tail -n 20 "$work/data/error.log" >&2; die "mariadbd did not answer on 127.0.0.1:$port in 30 s"; }
version=$(sql "SELECT VERSION()")
echo "harness: mariadbd $version (pid $server_pid) on 127.0.0.1:$port, datadir $work/data"

# What MariaDB chose at start-up from its own PAUSE timing (my_cpu_relax_multiplier, an exported
# symbol of mariadbd): read from the running process, so the advice's arithmetic can be checked.
relax_multiplier=$(python3 "$here/analyze.py" read-multiplier --pid "$server_pid" --binary "$(command -v mariadbd)" 2>"$work/mult.err") ||
  { cat "$work/mult.err" >&2; relax_multiplier=null; }

# The advised value, from this machine's calibration and the server's multiplier, unless given.
# A calibration that cannot advise (exit 3: the PAUSE cost is not stable enough to decide) is
# retried for up to a minute; the harness does not sweep on a guess.
if [ -z "$advised" ]; then
  calib=""
  for c in "${SPINWISE_CALIBRATE:-}" "$root/build/release/tools/spinwise-calibrate" "$root/build/calibrate/tools/spinwise-calibrate"; do
    [ -n "$c" ] && [ -x "$c" ] && { calib=$c; break; }
  done
  [ -n "$calib" ] || die "spinwise-calibrate not built (tools/quickstart.sh builds it; or pass --advised N)"
  mult_arg=()
  [ "$relax_multiplier" != null ] && mult_arg=(--mariadb-multiplier "$relax_multiplier")
  major_minor=$(sed -E 's/^([0-9]+\.[0-9]+).*/\1/' <<<"$version")
  rc=3
  for _ in $(seq 1 20); do
    "$calib" --advise mariadb --engine-version "$major_minor" "${mult_arg[@]}" >"$work/advice.txt" 2>"$work/advice.err" && { rc=0; break; }
    rc=$?
    [ $rc -eq 3 ] || break
    sleep 3
  done
  [ $rc -eq 0 ] || { cat "$work/advice.err" >&2; die "spinwise-calibrate --advise mariadb gave no advice (exit $rc); pass --advised N to sweep anyway"; }
  advised=$(awk -F' = ' '/^innodb_spin_wait_delay = /{print $2}' "$work/advice.txt")
  uint "$advised" || die "could not read innodb_spin_wait_delay from spinwise-calibrate's advice"
  echo "harness: spinwise-calibrate advises innodb_spin_wait_delay = $advised (my_cpu_relax_multiplier $relax_multiplier)"
fi

sb_common=(--db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$port" --mysql-user=root --mysql-db=sbtest
  --tables="$tables" --table-size="$table_size")
sql "CREATE DATABASE sbtest" || die "CREATE DATABASE failed"
sysbench oltp_read_write "${sb_common[@]}" --threads=2 prepare >"$work/prepare.log" 2>&1 ||
  { tail -n 20 "$work/prepare.log" >&2; die "sysbench prepare failed"; }
if [ -n "$exec_cmd" ]; then
  SPINWISE_MARIADB_SOCKET="$work/data/mariadbd.sock" SPINWISE_MARIADB_PORT=$port SPINWISE_MARIADB_PID=$server_pid \
    SPINWISE_MARIADB_SYSBENCH="${sb_common[*]}" bash -c "$exec_cmd"
  exit $?
fi

ncpu=$(nproc)
clk_tck=$(getconf CLK_TCK)
proc_cpu_ticks() { awk '{print $14 + $15}' "/proc/$server_pid/stat"; }
proc_ctx() {  # voluntary involuntary, summed over the server's threads
  cat /proc/"$server_pid"/task/*/status 2>/dev/null |
    awk '/^voluntary_ctxt_switches/{v+=$2} /^nonvoluntary_ctxt_switches/{n+=$2} END{print v+0, n+0}'
}

set_delay() {
  sql "SET GLOBAL innodb_spin_wait_delay = $1" || die "SET GLOBAL innodb_spin_wait_delay = $1 failed"
  local back
  back=$(sql "SELECT @@GLOBAL.innodb_spin_wait_delay") || die "reading innodb_spin_wait_delay back failed"
  [ "$back" = "$1" ] || die "innodb_spin_wait_delay reads back as '$back' after SET GLOBAL ... = $1"
}

raw="$out/raw/runs.jsonl"
: >"$raw"
# One measured run: warm-up at the setting, then sysbench for $duration s with perf sampling the
# whole machine (cpu-clock, a software event: no PMU needed) and /proc read around it.
run_one() {  # test threads delay pass loops
  local test=$1 threads=$2 delay=$3 pass=$4 loops=$5 tag="$1-$2-d$3-p$4-l$5"
  set_delay "$delay"
  sql "SET GLOBAL innodb_sync_spin_loops = $loops" || die "SET GLOBAL innodb_sync_spin_loops failed"
  if [ "$warmup" -gt 0 ]; then
    sysbench "$test" "${sb_common[@]}" --threads="$threads" --time="$warmup" run >"$work/warmup.log" 2>&1 ||
      { tail -n 20 "$work/warmup.log" >&2; die "sysbench warm-up failed ($tag)"; }
  fi
  local perf_data="$work/raw/$tag.perf.data" cpu0 cpu1 t0 t1
  perf record -q -e cpu-clock -F 999 -a -o "$perf_data" -- sleep "$duration" >"$work/perf.log" 2>&1 &
  perf_pid=$!
  cpu0=$(proc_cpu_ticks) t0=$(date +%s.%N)
  sysbench "$test" "${sb_common[@]}" --threads="$threads" --time="$duration" --percentile=95 run \
    >"$work/raw/$tag.sysbench.txt" 2>&1 &
  bench_pid=$!
  # Context switches are per thread: counted from 1 s in to 1 s before the end, while every
  # connection's thread is alive (a thread that has exited takes its counts with it).
  local c0 c1 ct0 ct1
  sleep 1
  c0=$(proc_ctx) ct0=$(date +%s.%N)
  sleep $((duration > 2 ? duration - 2 : 0))
  c1=$(proc_ctx) ct1=$(date +%s.%N)
  wait "$bench_pid" || { tail -n 20 "$work/raw/$tag.sysbench.txt" >&2; die "sysbench failed ($tag)"; }
  bench_pid=""
  t1=$(date +%s.%N) cpu1=$(proc_cpu_ticks)
  wait "$perf_pid" || { cat "$work/perf.log" >&2; die "perf record failed ($tag)"; }
  perf_pid=""
  python3 "$here/analyze.py" run --perf "$perf_data" --sysbench "$work/raw/$tag.sysbench.txt" \
    --server-pid "$server_pid" --binary "$(command -v mariadbd)" --test "$test" --threads "$threads" \
    --delay "$delay" --pass "$pass" --spin-loops "$loops" --wall "$t0" "$t1" --cpu-ticks "$cpu0" "$cpu1" \
    --clk-tck "$clk_tck" --ncpu "$ncpu" --ctx $c0 $c1 --ctx-wall "$ct0" "$ct1" >>"$raw" || die "analyzing $tag failed"
  [ $keep_perf -eq 1 ] || rm -f "$perf_data"
  python3 -c 'import json,sys; r=json.loads(sys.stdin.readlines()[-1]); print("  %-18s %4d thr  delay %4d  loops %2d  pass %d: %9.0f qps  p95 %7.2f ms  server cpu %5.2f  spin %5.1f%%" % (r["test"], r["threads"], r["delay"], r["spin_loops"], r["pass"], r["qps"], r["p95_ms"], r["server_cpus"], 100*r["spin_share"]))' <"$raw"
}

list=(${delays//,/ })
[ "$advised" != none ] && [[ " ${list[*]} " != *" $advised "* ]] && list+=("$advised")
IFS=$'\n' list=($(printf '%s\n' "${list[@]}" | sort -n)); unset IFS
started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
load0=$(cut -d' ' -f1-3 /proc/loadavg)
if [ $probe -eq 1 ]; then
  w=${workloads%%,*}
  for pass in $(seq 1 "$passes"); do
    for loops in 30 1 0; do run_one "${w%%:*}" "${w#*:}" 4 "$pass" "$loops"; done
  done
else
  for w in ${workloads//,/ }; do
    for pass in $(seq 1 "$passes"); do
      order=("${list[@]}")
      [ $((pass % 2)) -eq 0 ] && order=($(printf '%s\n' "${list[@]}" | sort -rn))
      for d in "${order[@]}"; do run_one "${w%%:*}" "${w#*:}" "$d" "$pass" 30; done
    done
  done
fi
python3 "$here/analyze.py" summarize --runs "$raw" --out "$out" --advised "$advised" \
  --version "$version" --relax-multiplier "$relax_multiplier" --started "$started" --load "$load0" \
  --mode "$([ $smoke -eq 1 ] && echo smoke || { [ $probe -eq 1 ] && echo spin-loops-probe || echo sweep; })" ||
  die "summarizing failed"
[ -f "$work/advice.txt" ] && cp "$work/advice.txt" "$out/advice.txt"
set_delay 4
[ $keep_perf -eq 1 ] && cp "$work"/raw/*.perf.data "$out/raw/" 2>/dev/null
echo "harness: results in $out"
