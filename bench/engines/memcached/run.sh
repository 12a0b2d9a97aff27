#!/usr/bin/env bash
# Debian's memcached on glibc's locks and on spinwise's through libspinwise-preload.so, side by
# side: memcached on 127.0.0.1 (a free port, its own process, stopped by PID), driven by memcaslap
# from the same machine; arms interleaved (A B C D in one cell, D C B A in the next), one run of
# each arm per cell and repetition, repetitions outermost. Then sysbench's
# `mutex` and `threads` tests under the same arms. One JSON line per run in <out>/runs.jsonl;
# summarize.py writes <out>/README.md. docs/engines.md, "memcached".
#
#   bench/engines/memcached/run.sh [--preload PATH] [--out DIR] [--reps N] [--seconds S]
#       [--threads "4 8 16"] [--conns "64 256"] [--mixes "default set-heavy"]
#       [--arms "none glibc hybrid adaptive"] [--spin-arms "ttas"] [--no-sysbench | --sysbench-only]
#       [--baseline PATH] [--smoke] [--force]
#
# --baseline PATH: another build's interposer (the last landed revision's); an arm KIND@base (or
# KIND+profile@base) runs KIND under it, interleaved with the others, so a change is compared run
# for run.
#
# Needs memcached, memcaslap (libmemcached-tools) and sysbench: tools/setup.sh engines. Exit 2 for
# a bad flag, 3 when the CPUs are busy (over 20% in the 2 s before the start; --force runs anyway),
# 1 when a run failed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
preload="$root/build/release/src/libspinwise-preload.so"
out=""
reps=3
seconds=2
threads="4 8 16"
conns="64 256"
mixes="default set-heavy"
arms="none glibc hybrid adaptive"
spin_arms="ttas"
sysbench=1
force=0
preload_given=0
baseline=""
cmdline="$*"  # for context.json, before the options are shifted away
smoke=0
usage() { sed -n '2,/^set -euo/{/^set -euo/d;p;}' "$0" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
  case "$1" in  # an option that takes a value and has none: a clear error, exit 2
    --preload|--baseline|--out|--reps|--seconds|--threads|--conns|--mixes|--arms|--spin-arms)
      [ $# -ge 2 ] || { echo "run.sh: $1 takes a value" >&2; exit 2; } ;;
  esac
  case "$1" in
    --preload) preload=$2; preload_given=1; shift 2 ;;
    --baseline) baseline=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --conns) conns=$2; shift 2 ;;
    --mixes) mixes=$2; shift 2 ;;
    --arms) arms=$2; shift 2 ;;
    --spin-arms) spin_arms=$2; shift 2 ;;
    --no-sysbench) sysbench=0; shift ;;
    --sysbench-only) threads=""; shift ;;
    --smoke) reps=1; seconds=1; threads=4; conns=64; mixes=default; arms="none glibc adaptive"; spin_arms=""
      sysbench=0; smoke=1; shift ;;
    --force) force=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "run.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
[[ "$reps" =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: --reps takes a positive integer, not '$reps'" >&2; exit 2; }
[[ "$seconds" =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: --seconds takes a positive integer, not '$seconds'" >&2; exit 2; }
for m in $mixes; do
  [[ "$m" = default || "$m" = set-heavy ]] || { echo "run.sh: unknown mix '$m' (default, set-heavy)" >&2; exit 2; }
done
for a in $arms $spin_arms; do
  case "$a" in
    none|glibc|hybrid|adaptive|ttas) ;;
    hybrid+profile|adaptive+profile|ttas+profile) ;;  # the kind with the per-lock profile on
    glibc@base|hybrid@base|adaptive@base|ttas@base|hybrid+profile@base|adaptive+profile@base|ttas+profile@base)
      [ -f "$baseline" ] || { echo "run.sh: arm '$a' needs --baseline PATH, an existing library" >&2; exit 2; } ;;
    ticket|mcs) echo "run.sh: the interposer has no '$a' kind any more (docs/preload.md, \"No FIFO kind\")" >&2; exit 2 ;;
    *) echo "run.sh: unknown arm '$a'" >&2; exit 2 ;;
  esac
done
for tool in memcached memcaslap python3; do
  command -v $tool >/dev/null || { echo "run.sh: $tool not found (tools/setup.sh engines installs it)" >&2; exit 2; }
done
# --smoke with no --preload and no built interposer: the `none` arm alone (tools/test.sh passes the
# built library when there is one).
if [ $smoke = 1 ] && [ $preload_given = 0 ] && [ ! -f "$preload" ]; then arms=none; fi
needs_preload=0
for a in $arms $spin_arms; do [ "$a" = none ] || needs_preload=1; done
if [ $needs_preload = 1 ] && [ ! -f "$preload" ]; then
  echo "run.sh: no interposer at $preload (build the spinwise_preload target, or --preload PATH)" >&2; exit 2
fi
[ -n "$out" ] || out="$root/bench/results/memcached-$(date -u +%Y%m%d-%H%M%S)"
mkdir -p "$out"
out=$(cd "$out" && pwd)
tmp=$(mktemp -d /tmp/spinwise-memcached.XXXXXX)
server=""
cleanup() {
  if [ -n "$server" ] && kill -0 "$server" 2>/dev/null; then kill -9 "$server" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT

# How busy the CPUs were over 2 s, from /proc/stat.
busy=$(python3 - <<'PY'
import time
def read():
    f = [int(x) for x in open('/proc/stat').readline().split()[1:]]
    return sum(f), f[3] + f[4]
t0, i0 = read(); time.sleep(2); t1, i1 = read()
print(f"{100.0 * (1 - (i1 - i0) / max(1, t1 - t0)):.1f}")
PY
)
if python3 -c "import sys; sys.exit(0 if float('$busy') > 20 else 1)" && [ $force = 0 ]; then
  echo "run.sh: the CPUs were ${busy}% busy over 2 s; run on an idle machine (or --force)" >&2; exit 3
fi
python3 - "$out/context.json" "$busy" "$cmdline" <<'PY'
import json, os, platform, subprocess, sys, time
cpu = next((l.split(':', 1)[1].strip() for l in open('/proc/cpuinfo') if l.startswith('model name')), '?')
fam = {k.strip(): v for k, v in (l.split(':', 1) for l in open('/proc/cpuinfo') if ':' in l)}
ver = lambda cmd: subprocess.run(cmd, capture_output=True, text=True).stdout.strip().splitlines()[0] if subprocess.run(cmd, capture_output=True, text=True).stdout.strip() else '?'
ctx = {
    'cpu': cpu, 'cpu_id': f"family {fam.get('cpu family', '?').strip()} model {fam.get('model', '?').strip()}",
    'cpus': os.cpu_count(), 'kernel': platform.release(),
    'load_average': os.getloadavg(), 'busy_percent_2s': float(sys.argv[2]),
    'start_utc': time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime()),
    'command': 'bench/engines/memcached/run.sh ' + sys.argv[3],
    'memcached': ver(['memcached', '-V']),
    'memcaslap': 'memcaslap (libmemcached-tools ' + (ver(['dpkg-query', '-W', '-f', '${Version}', 'libmemcached-tools']) or '?') + ')',
}
json.dump(ctx, open(sys.argv[1], 'w'), indent=1)
PY
: > "$out/runs.jsonl"

# memcaslap's command mix (its --cfg_cmd file): set-heavy is 90% sets; default is memcaslap's own
# (90% gets, 10% sets). Keys of 64 bytes and values of 1024, in both.
printf 'key\n64 64 1\nvalue\n1024 1024 1\ncmd\n0 0.1\n1 0.9\n' > "$tmp/default.cfg"
printf 'key\n64 64 1\nvalue\n1024 1024 1\ncmd\n0 0.9\n1 0.1\n' > "$tmp/set-heavy.cfg"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# utime+stime ticks and context switches of every thread of $1.
sample() {
  python3 - "$1" <<'PY'
import glob, sys
pid = sys.argv[1]
f = open(f'/proc/{pid}/stat').read().rsplit(')', 1)[1].split()
ticks = int(f[11]) + int(f[12])
cs = 0
for st in glob.glob(f'/proc/{pid}/task/*/status'):
    try:
        for l in open(st):
            if l.startswith(('voluntary_ctxt_switches', 'nonvoluntary_ctxt_switches')):
                cs += int(l.split()[1])
    except OSError:
        pass
print(ticks, cs)
PY
}
arm_env() {  # the arm's environment, one assignment a line
  [ "$1" = none ] && return 0
  local lib=$preload
  [ "${1%@base}" != "$1" ] && lib=$baseline
  local kind=${1%@base}
  printf 'LD_PRELOAD=%s\nSPINWISE_PRELOAD_LOCK=%s\nSPINWISE_PRELOAD_STATS=%s\n' "$lib" "${kind%+profile}" "$tmp/stats.json"
  [ "${kind%+profile}" = "$kind" ] || printf 'SPINWISE_PRELOAD_PROFILE=%s\n' "$tmp/profile.json"
}

failed=0
one_run() {  # rep threads conns mix arm
  local rep=$1 t=$2 c=$3 mix=$4 arm=$5 port
  port=$(free_port)
  rm -f "$tmp/stats.json"
  mapfile -t envs < <(arm_env "$arm")
  env "${envs[@]}" memcached -l 127.0.0.1 -p "$port" -t "$t" -m 256 -c 4096 -U 0 -u root > "$tmp/server.log" 2>&1 &
  server=$!
  local rc=0 ticks0=0 cs0=0 ticks1=0 cs1=0
  if python3 -c "
import os, socket, sys, time
end = time.time() + 10
while time.time() < end:
    try:  # the server exited (gone, or a zombie not yet waited for): stop waiting
        if open('/proc/$server/stat').read().rsplit(')', 1)[1].split()[0] == 'Z':
            sys.exit(1)
    except OSError:
        sys.exit(1)
    try:
        socket.create_connection(('127.0.0.1', $port), 0.2).close(); sys.exit(0)
    except OSError:
        time.sleep(0.05)
sys.exit(1)"; then
    # rc 97: the server's /proc entry vanished (it died) before or after memcaslap's window.
    read -r ticks0 cs0 < <(sample "$server") || rc=97
    timeout $((seconds + 20)) memcaslap -s "127.0.0.1:$port" -c "$c" -T 2 -t "${seconds}s" -S "${seconds}s" -F "$tmp/$mix.cfg" \
      > "$tmp/client.log" 2>&1 || rc=$?
    read -r ticks1 cs1 < <(sample "$server") || { [ $rc != 0 ] || rc=97; }
  else
    # rc 96: memcached never accepted within 10 s; recorded as a failed run, its log in log_tail.
    echo "run.sh: memcached did not answer on port $port" >&2; rc=96
    cp "$tmp/server.log" "$tmp/client.log"
  fi
  kill -TERM "$server" 2>/dev/null || true
  for _ in $(seq 1 100); do kill -0 "$server" 2>/dev/null || break; sleep 0.05; done
  if kill -0 "$server" 2>/dev/null; then kill -9 "$server" 2>/dev/null || true; [ $rc != 0 ] || rc=137; echo "run.sh: memcached ignored SIGTERM" >&2; fi
  wait "$server" 2>/dev/null || true
  server=""
  # A profiled arm's last profile per cell is kept for spinwise-run --report (docs/preload.md).
  if [ -f "$tmp/profile.json" ]; then
    mkdir -p "$out/profiles"
    mv "$tmp/profile.json" "$out/profiles/$arm-$mix-${t}t.json"
  fi
  python3 "$here/summarize.py" --record "$tmp/client.log" "$tmp/stats.json" "$rc" "$rep" "$t" "$c" "$mix" "$arm" \
    "$seconds" "$((ticks1 - ticks0))" "$(getconf CLK_TCK)" "$((cs1 - cs0))" >> "$out/runs.jsonl" || failed=1
}

# The arms in order, and reversed for the next cell: A B C D, D C B A, A B C D, ...; each
# repetition starts the other way round from the last, so a cell's arms swap places between them.
flip=0
order_arms() {  # sets `ordered`
  local list=($1)
  ordered=()
  if [ $flip = 0 ]; then ordered=("${list[@]}"); else for ((i = ${#list[@]} - 1; i >= 0; i--)); do ordered+=("${list[i]}"); done; fi
  flip=$((1 - flip))
}
max_t=$(echo $threads | tr ' ' '\n' | sort -n | tail -1)
echo "run.sh: $out (CPUs ${busy}% busy before the start)"
for rep in $(seq 1 "$reps"); do
  flip=$(((rep + 1) % 2))  # the next repetition starts the other way round: no arm keeps its place
  for mix in $mixes; do
    for c in $conns; do
      for t in $threads; do
        cell_arms=$arms
        [ "$t" = "$max_t" ] && [ -n "$spin_arms" ] && cell_arms="$arms $spin_arms"
        order_arms "$cell_arms"
        for arm in "${ordered[@]}"; do one_run "$rep" "$t" "$c" "$mix" "$arm"; done
      done
    done
  done
done

if [ $sysbench = 1 ] && command -v sysbench >/dev/null; then
  for rep in $(seq 1 "$reps"); do
    flip=$(((rep + 1) % 2))
    for test in mutex threads; do
      order_arms "$arms"
      for arm in "${ordered[@]}"; do
        mapfile -t envs < <(arm_env "$arm")
        rm -f "$tmp/stats.json"
        if [ $test = mutex ]; then
          args=(mutex --threads=16 --mutex-num=4 --mutex-locks=100000 --mutex-loops=200)
        else
          args=(threads --threads=16 --thread-yields=100 --thread-locks=4 --time="$seconds")
        fi
        /usr/bin/time -f '%e %U %S' -o "$tmp/time" env "${envs[@]}" timeout 120 sysbench "${args[@]}" run \
          > "$tmp/sysbench.log" 2>&1 || failed=1
        python3 "$here/summarize.py" --record-sysbench "$tmp/sysbench.log" "$tmp/time" "$tmp/stats.json" "$rep" \
          "$test" "$arm" >> "$out/runs.jsonl" || failed=1
      done
    done
  done
fi
python3 "$here/summarize.py" "$out" || failed=1
echo "run.sh: $out/README.md"
exit $failed
