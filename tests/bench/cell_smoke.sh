#!/usr/bin/env bash
# bench.cell_smoke: spinwise-cell (bench/compare/cell.cpp) runs every lock in every cell it lists,
# each printing its JSON line (a lock that lets two threads in, or loses a count, exits 1), and
# refuses bad input with status 2. Checks what ran, never how fast.
set -uo pipefail
cell=$1
fail=0
mapfile -t locks < <("$cell" --list | sed -n 's/^lock //p')
mapfile -t cells < <("$cell" --list | sed -n 's/^cell //p')
[ ${#locks[@]} -ge 10 ] || { echo "only ${#locks[@]} locks listed"; fail=1; }
[ ${#cells[@]} -eq 6 ] || { echo "${#cells[@]} cells listed, not 6"; fail=1; }
runs=0
for l in "${locks[@]}"; do
  for c in "${cells[@]}"; do
    out=$("$cell" --lock "$l" --cell "$c" --ms 10) || { echo "FAILED: $l $c"; fail=1; continue; }
    case $out in
      *"\"lock\": \"$l\", \"cell\": \"$c\""*"\"ops\": "[1-9]*) runs=$((runs + 1)) ;;
      *) echo "unexpected output for $l $c: $out"; fail=1 ;;
    esac
  done
done
echo "$runs runs of ${#locks[@]} locks x ${#cells[@]} cells did work"
for bad in "--lock nope --cell handoff" "--lock ttas_mutex --cell nope" "--ms 5 --lock ttas_mutex --cell handoff" "--bogus"; do
  # shellcheck disable=SC2086
  "$cell" $bad >/dev/null 2>&1
  rc=$?
  [ $rc -eq 2 ] || { echo "'$bad' exited $rc, not 2"; fail=1; }
done
exit $fail
