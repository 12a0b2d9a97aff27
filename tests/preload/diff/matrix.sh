#!/usr/bin/env bash
# Runs the differential harness (ctest -L preload_diff) in a configured build directory and prints
# the verdicts as a matrix: one row per scenario, one column per kind (PASS, DIFF, HANG; "-" where
# no verdict was printed: ctest's own timeout, or a test that did not run). The whole ctest output,
# with each diff, stays in <build-dir>/preload-diff-matrix.log.
# Usage: tests/preload/diff/matrix.sh <build-dir> [more ctest arguments, e.g. -R cancel]
set -uo pipefail
if [ $# -lt 1 ]; then
  echo "usage: $0 <build-dir> [ctest arguments]" >&2
  exit 2
fi
dir=$1
shift
log="$dir/preload-diff-matrix.log"
(cd "$dir" && ctest -L preload_diff -V "$@") >"$log" 2>&1
rc=$?
kinds="hybrid adaptive ttas glibc"
grep -oE 'preload_diff: [a-z_0-9]+ [a-z]+: [A-Z]+' "$log" | awk -v kinds="$kinds" '
  { name = $2; kind = $3; sub(":", "", kind); v[name, kind] = $4; if (!(name in seen)) { seen[name] = 1; order[n++] = name } }
  END {
    nk = split(kinds, k, " ")
    printf "%-28s", "scenario"
    for (j = 1; j <= nk; ++j) printf " %-9s", k[j]
    printf "\n"
    for (i = 0; i < n; ++i) {
      printf "%-28s", order[i]
      for (j = 1; j <= nk; ++j) printf " %-9s", ((order[i], k[j]) in v) ? v[order[i], k[j]] : "-"
      printf "\n"
    }
  }'
grep -oE 'preload_diff: exports: .*' "$log"
sed -n 's/^.*\(libspinwise-preload.so exports [0-9]* symbols beyond.*\)$/\1/p' "$log" | head -n 1
echo "(ctest exit $rc; the whole output: $log)"
exit $rc
