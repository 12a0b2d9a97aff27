#!/usr/bin/env bash
# spinwise-calibrate --tune against a real server: a short smoke run and every way out that must
# put the original innodb_spin_wait_delay back (SIGINT, SIGTERM, the time limit, a lost connection,
# bad credentials, a workload that stops mid-run, the server killed). Run by tools/test.sh's engines
# stage inside the harness's server (harness.sh --exec, which sets SPINWISE_MARIADB_*):
#   bench/engines/mariadb/harness.sh --out DIR --exec "bench/engines/mariadb/tune-tests.sh TOOL"
# Each check waits for the tool's own "round N/" line before it acts (a handshake, no timing);
# the load is sysbench at 2 threads on the harness's small tables, for seconds. The server-killed
# check is last: it ends the server. Prints one line per check; exits 1 when one failed.
set -u
tool=${1:?usage: tune-tests.sh path/to/spinwise-calibrate}
: "${SPINWISE_MARIADB_SOCKET:?run under harness.sh --exec}" "${SPINWISE_MARIADB_PID:?}" "${SPINWISE_MARIADB_SYSBENCH:?}"
work=$(mktemp -d /tmp/spinwise-tune-tests.XXXXXX) || exit 1
load_pid="" tool_pid=""
cleanup() {
  [ -n "$tool_pid" ] && kill "$tool_pid" 2>/dev/null
  [ -n "$load_pid" ] && kill "$load_pid" 2>/dev/null
  wait 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
sql() { mariadb --no-defaults --socket="$SPINWISE_MARIADB_SOCKET" -uroot -N -B -e "$1"; }
delay() { sql "SELECT @@GLOBAL.innodb_spin_wait_delay"; }
failed=0
pass() { echo "--- tune: $1: ok"; }
fail() { echo "--- tune: $1: FAILED: $2"; sed 's/^/    /' "$work/out" "$work/err" 2>/dev/null | tail -n 20; failed=1; }

# The original: a value no candidate below uses, so a value left behind shows.
original=5
sql "SET GLOBAL innodb_spin_wait_delay = $original" || exit 1
# A user with a password, for the credentials checks (the password from MYSQL_PWD only).
sql "CREATE USER 'tuner'@'localhost' IDENTIFIED BY 'right-one'; GRANT ALL ON *.* TO 'tuner'@'localhost'" || exit 1

load() {  # sysbench at 2 threads for $1 s, in the background
  # shellcheck disable=SC2086 # the harness's options, one word each
  sysbench oltp_read_only $SPINWISE_MARIADB_SYSBENCH --threads=2 --time="$1" run >"$work/sysbench.log" 2>&1 &
  load_pid=$!
}
stop_load() { [ -n "$load_pid" ] && { kill "$load_pid" 2>/dev/null; wait "$load_pid" 2>/dev/null; }; load_pid=""; }
# The tool in the background with its output in $work; tune ARGS...
tune() {
  # Emptied here, before the tool starts: its own redirection happens in the background, and the
  # handshake below must not read the previous check's lines.
  : >"$work/out"
  : >"$work/err"
  "$tool" --tune mariadb --socket "$SPINWISE_MARIADB_SOCKET" "$@" >"$work/out" 2>"$work/err" &
  tool_pid=$!
}
# Waits (up to a minute) for the tool's first round to be measured: it has set a candidate. With
# N: for the first measurement of its round N.
first_round() {
  for _ in $(seq 600); do
    grep -q "round ${1:-1}/" "$work/err" && return 0
    kill -0 "$tool_pid" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}
finish() { wait "$tool_pid"; rc=$?; tool_pid=""; }
restored() { [ "$(delay)" = "$original" ]; }
# The check NAME passes when the tool exited WANT and the original is back; WHAT says how it went.
judge() {  # NAME WANT WHAT
  if [ $rc -ne "$2" ]; then fail "$1" "exit $rc, expected $2"
  elif ! restored; then fail "$1" "innodb_spin_wait_delay is $(delay), not $original"
  else pass "$1 ($3)"; fi
}

# Smoke: two candidates (the current value and 7), two rounds; a verdict, the my.cnf line, the
# SET GLOBAL statement, and the original back.
load 120
# (--max-drift 1000: the load of a shared 2-CPU test machine swings more than 2x between rounds of
# a second; the drift rule is the workload check's, below.)
tune --user root --candidates 7 --rounds 2 --round-seconds 1 --settle-seconds 0.2 --max-drift 1000
finish
if [ $rc -ne 0 ]; then fail smoke "exit $rc"
elif ! grep -q "^verdict: " "$work/out" || ! grep -q "^innodb_spin_wait_delay = [0-9]" "$work/out" ||
  ! grep -q "SET GLOBAL innodb_spin_wait_delay = [0-9]*;" "$work/out"; then fail smoke "no verdict, my.cnf line or SET GLOBAL"
elif ! restored; then fail smoke "innodb_spin_wait_delay is $(delay), not $original"
else pass "smoke (2 candidates, 2 rounds: $(sed -n 's/^verdict: //p' "$work/out"))"; fi

# SIGINT and SIGTERM mid-run: 130 and 143, the original back. The password from MYSQL_PWD.
for sig in INT TERM; do
  MYSQL_PWD=right-one tune --user tuner --candidates 7 --rounds 20 --round-seconds 1 --settle-seconds 0.2
  first_round || { finish; fail "SIG$sig" "no first round (exit $rc)"; continue; }
  kill -"$sig" "$tool_pid"
  finish
  judge "SIG$sig mid-run" "$([ $sig = INT ] && echo 130 || echo 143)" "exit $rc, $original put back"
done

# The time limit passes mid-run. The tool is stopped (SIGSTOP) once round N has begun and held
# for as long as the whole limit, which began before it: when it goes on, the limit has passed (a
# handshake, no timing). From round 7, the 6 rounds every candidate completed decide (exit 0, the
# cut said, the original back); from round 2, one round cannot (exit 3, the original back). (The
# stop may land in the round after the one seen: 7 or 2 rounds complete, the same outcome.)
stop_load
load 120
for at in 7 2; do
  tune --user root --candidates 7 --rounds 8 --round-seconds 1 --settle-seconds 0.2 --time-limit 30 --max-drift 1000 \
    --format json
  first_round $at || { finish; fail "time limit at round $at" "no round $at (exit $rc)"; continue; }
  kill -STOP "$tool_pid"
  sleep 30
  kill -CONT "$tool_pid"
  finish
  # What the JSON says: a verdict from the complete rounds only (every candidate as many rates as
  # `rounds`, 6 or 7, of the 8 planned, the cut said), or none from fewer (`rounds` the complete
  # ones; the rates as measured), and why.
  said=$(python3 - "$work/out" "$at" <<'PY' 2>&1
import json, sys
d = json.load(open(sys.argv[1]))
n, cut = d["rounds"], d["cut_by_time_limit"]
assert d["rounds_planned"] == 8, d["rounds_planned"]
lens = [len(c["rates"]) for c in d["candidates"]]
if sys.argv[2] == "7":
    assert all(k == n for k in lens), (n, lens)  # the round the limit broke into dropped
    assert n in (6, 7) and d["verdict"] is not None and cut is not None, (n, cut)
    assert f"cut the plan at {n} of 8 rounds" in cut, (n, cut)
    print(f"a verdict from {n} of 8 rounds")
else:
    assert n in (1, 2) and d["verdict"] is None and cut is None and min(lens) == n, (n, cut, lens)
    assert "passed before the rounds were done" in d["stopped"] and "6 are needed" in d["stopped"], d["stopped"]
    print(f"no verdict from {n} of 8 rounds")
PY
  ) || { fail "time limit at round $at" "exit $rc: $said"; continue; }
  judge "time limit at round $at" "$([ "$at" = 7 ] && echo 0 || echo 3)" "exit $rc, $said, $original put back"
done
# The checks below start with a load of their own (those above took most of this one).
stop_load
load 120

# Bad credentials: refused at connect, nothing set, exit 1.
MYSQL_PWD=wrong-one tune --user tuner --candidates 7 --rounds 2 --round-seconds 1
finish
if [ $rc -ne 1 ] || ! grep -q "cannot connect: Access denied" "$work/err" || ! grep -q "nothing was changed" "$work/err"; then
  fail "bad credentials" "exit $rc"
elif ! restored; then fail "bad credentials" "innodb_spin_wait_delay is $(delay)"
else pass "bad credentials (exit 1, nothing changed)"; fi

# The connection killed under the tool (the server stays): it reconnects to put the original back.
MYSQL_PWD=right-one tune --user tuner --candidates 7 --rounds 20 --round-seconds 1 --settle-seconds 0.2
if first_round; then
  sql "SELECT ID FROM information_schema.PROCESSLIST WHERE USER = 'tuner'" | while read -r id; do sql "KILL $id"; done
  finish
  if [ $rc -ne 1 ] || ! grep -q "lost the connection" "$work/err"; then fail "lost connection" "exit $rc"
  elif ! restored; then fail "lost connection" "innodb_spin_wait_delay is $(delay), not $original"
  else pass "lost connection (exit 1, reconnected, $original put back)"; fi
else finish; fail "lost connection" "no first round (exit $rc)"; fi

# The workload stops mid-run: no verdict from it (exit 3), the original back.
tune --user root --candidates 7 --rounds 20 --round-seconds 1 --settle-seconds 0.2
if first_round; then
  stop_load
  finish
  if [ $rc -ne 3 ] || ! grep -Eq "the workload (stopped|moved too much)" "$work/err"; then fail "workload stops" "exit $rc"
  elif ! restored; then fail "workload stops" "innodb_spin_wait_delay is $(delay), not $original"
  else pass "workload stops (exit 3: $(grep -Eo 'the workload (stopped|moved too much)' "$work/err"), $original put back)"; fi
else finish; fail "workload stops" "no first round (exit $rc)"; fi
stop_load

# The server killed mid-run (last: it ends the server): exit 1, said, and the statement to run.
load 60
tune --user root --candidates 7 --rounds 20 --round-seconds 1 --settle-seconds 0.2
if first_round; then
  kill -KILL "$SPINWISE_MARIADB_PID"
  finish
  if [ $rc -ne 1 ] || ! grep -q "lost the connection" "$work/err" ||
    ! grep -q "COULD NOT put innodb_spin_wait_delay = $original back.*SET GLOBAL innodb_spin_wait_delay = $original;" "$work/err"; then
    fail "server killed" "exit $rc"
  else pass "server killed (exit 1, the restore statement printed)"; fi
else finish; fail "server killed" "no first round (exit $rc)"; fi
stop_load
exit $failed
