#!/usr/bin/env bash
# docs/operators.md tried as written against a real, loaded MariaDB: starts Debian's mariadbd on a
# temporary datadir (--no-defaults, a socket only, no TCP port), loads it with sysbench
# oltp_read_write at 64 threads, and runs the page's steps 2-4 (version, the multiplier through
# gdb, five --advise runs, SET GLOBAL, SHOW GLOBAL VARIABLES), printing a transcript. Stops
# sysbench and the server by PID and removes the directory on every way out. As root, after
# tools/setup.sh engines and tools/quickstart.sh (or pass the tool):
#   bench/engines/mariadb/operator-trial.sh [path/to/spinwise-calibrate]
# Results: bench/results/operators-trial/README.md.
set -u
root=$(cd "$(dirname "$0")/../../.." && pwd)
tool=${1:-$root/build/calibrate/tools/spinwise-calibrate}
[ -x "$tool" ] || { echo "operator-trial: $tool is not built (tools/quickstart.sh builds it)" >&2; exit 2; }
for t in mariadbd mariadb mariadb-install-db sysbench gdb; do
  command -v $t >/dev/null || { echo "operator-trial: $t is missing (tools/setup.sh engines; apt-get install gdb)" >&2; exit 4; }
done
getent passwd mysql >/dev/null || useradd --system --no-create-home --shell /usr/sbin/nologin mysql || exit 1
d=$(mktemp -d /tmp/spinwise-operator.XXXXXX)
sb=""
cleanup() {
  [ -n "$sb" ] && kill "$sb" 2>/dev/null
  [ -f "$d/pid" ] && kill "$(cat "$d/pid")" 2>/dev/null
  for _ in $(seq 60); do [ -e "$d/pid" ] || break; sleep 0.5; done
  rm -rf "$d"
}
trap cleanup EXIT INT TERM
chown mysql:mysql "$d"
mariadb-install-db --no-defaults --datadir="$d/data" --user=mysql --auth-root-authentication-method=normal \
  >"$d/install.log" 2>&1 || { cat "$d/install.log"; exit 1; }
mariadbd --no-defaults --datadir="$d/data" --socket="$d/sock" --skip-networking --user=mysql \
  --pid-file="$d/pid" --log-error="$d/err.log" --innodb-buffer-pool-size=512M &
M=(mariadb --no-defaults -S "$d/sock" -uroot)
for _ in $(seq 60); do "${M[@]}" -e 'select 1' >/dev/null 2>&1 && break; sleep 0.5; done
"${M[@]}" -e 'create database sbtest' || exit 1
sbargs=(oltp_read_write --db-driver=mysql --mysql-socket="$d/sock" --mysql-user=root --tables=4 --table-size=20000)
sysbench "${sbargs[@]}" prepare >/dev/null 2>&1 || exit 1
sysbench "${sbargs[@]}" --threads=64 --time=120 run >"$d/sysbench.log" 2>&1 &
sb=$!
sleep 5
echo "## load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "## \$ mariadbd --version"; mariadbd --version
echo "## \$ gdb -p \$(pidof mariadbd) -batch -ex 'print my_cpu_relax_multiplier'"
gdb -p "$(cat "$d"/pid)" -batch -ex 'print my_cpu_relax_multiplier' 2>&1 | grep -v "^\[\|warning\|^$\|New LWP\|Thread debugging\|Using host" | tail -2
echo "## \$ gdb -p \$(pidof mariadbd) -batch -ex 'print (int)my_cpu_relax_multiplier'"
mult=$(gdb -p "$(cat "$d"/pid)" -batch -ex 'print (int)my_cpu_relax_multiplier' 2>&1 | sed -n 's/^\$1 = //p'); echo "\$1 = $mult"
echo "## \$ spinwise-calibrate --advise mariadb --engine-version 10.11 --mariadb-multiplier $mult  (5 runs)"
for i in 1 2 3 4 5; do "$tool" --advise mariadb --engine-version 10.11 --mariadb-multiplier $mult > "$d"/advice.$i 2>&1; echo "run $i: exit $? $(grep -v '^[#[]' "$d"/advice.$i | tr '\n' ' ')"; done
cat "$d"/advice.1 | grep -v "^#   [a-z0-9]"
delay=$(sed -n 's/^innodb_spin_wait_delay = //p' "$d"/advice.1)
echo "## \$ mariadb -e 'SET GLOBAL innodb_spin_wait_delay = $delay; SET GLOBAL innodb_sync_spin_loops = 30;'"
"${M[@]}" -e "SET GLOBAL innodb_spin_wait_delay = $delay; SET GLOBAL innodb_sync_spin_loops = 30;"; echo "exit $?"
echo "## \$ mariadb -e \"SHOW GLOBAL VARIABLES LIKE 'innodb%spin%'\""
"${M[@]}" -e "SHOW GLOBAL VARIABLES LIKE 'innodb%spin%'"
echo "## load: $(cut -d' ' -f1-3 /proc/loadavg)"
