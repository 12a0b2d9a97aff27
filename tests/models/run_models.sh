#!/usr/bin/env bash
# Runs the SPIN models of the locks' protocols (tests/models/*.pml: the futex park/wake protocols
# and the FIFO locks' gate) exhaustively, and the mutants that must make SPIN report an error
# (docs/model-checking.md).
#
# Each check: spin -a (with its -D switches) in a temporary directory, gcc on pan.c, ./pan. A check
# that should pass fails on any error SPIN reports (errors: N > 0, invalid end state, assertion
# violated, acceptance cycle) and on an incomplete search ("max search depth too small" means
# raising -m, never ignoring it). A mutant passes only if SPIN reports the error named for it.
# One line per check: name, states stored, pan's time, verdict; last line "N passed, M failed".
#
# Usage: tests/models/run_models.sh [name-substring ...]   (default: every check)
# SPINWISE_MODELS_KEEP=1 keeps the work directory (pan.c, pan, trails) and prints where it is.
# Needs spin (Debian package spin, 6.5.2 in Debian 12) and gcc; tools/setup.sh installs both.
set -uo pipefail
models=$(cd "$(dirname "$0")" && pwd)

for tool in spin gcc; do
  command -v "$tool" >/dev/null || {
    echo "run_models: $tool not found (tools/setup.sh installs it)"
    exit 2
  }
done

# pan.c is compiled at -O0: for these state spaces (at most ~2 M states) gcc -O2 costs more time
# than it saves in the search.
cflags=${SPINWISE_PAN_CFLAGS:--O0}
# -m: deeper than any search here goes (the liveness runs reach ~125 000); pan says if it is not.
depth=1000000

work=$(mktemp -d "${TMPDIR:-/tmp}/spinwise-models.XXXXXX")
if [ "${SPINWISE_MODELS_KEEP:-0}" = 1 ]; then
  echo "run_models: keeping $work"
else
  trap 'rm -rf "$work"' EXIT
fi

# check NAME MODEL SPIN_SWITCHES GCC_SWITCHES PAN_FLAGS EXPECTED
#   EXPECTED: "pass", or the error SPIN must report (a mutant)
checks=()
check() { checks+=("$1|$2|$3|$4|$5|$6"); }
safe=-DSAFETY
check "hybrid_mutex" hybrid_mutex.pml "" $safe "" pass
check "hybrid_mutex mutant: timed give-up without re-mark" hybrid_mutex.pml -DMUTANT_TIMED_NO_REMARK \
  $safe "" "invalid end state"
check "hybrid_mutex mutant: unlock without wake" hybrid_mutex.pml -DMUTANT_UNLOCK_NO_WAKE $safe "" \
  "invalid end state"
check "hybrid_shared_mutex config 1" hybrid_shared_mutex.pml -DCONFIG=1 $safe "" pass
check "hybrid_shared_mutex config 2" hybrid_shared_mutex.pml -DCONFIG=2 $safe "" pass
check "hybrid_shared_mutex mutant: unlock without wake" hybrid_shared_mutex.pml \
  "-DCONFIG=1 -DMUTANT_UNLOCK_NO_WAKE" $safe "" "invalid end state"
check "hybrid_shared_mutex mutant: turn end without wake" hybrid_shared_mutex.pml \
  "-DCONFIG=2 -DMUTANT_TURN_END_NO_WAKE" $safe "" "invalid end state"
check "hybrid_shared_mutex liveness: turn" hybrid_shared_mutex.pml -DLIVENESS "" "-a -f -N turn" pass
check "hybrid_shared_mutex liveness: drain" hybrid_shared_mutex.pml -DLIVENESS "" "-a -f -N drain" pass
check "hybrid_shared_mutex mutant: writers ignore the turn" hybrid_shared_mutex.pml \
  "-DLIVENESS -DMUTANT_WRITER_IGNORES_TURN" "" "-a -f -N turn" "acceptance cycle"
check "sx_lock" sx_lock.pml "" $safe "" pass
check "sx_lock mutant: last S holder does not wake X" sx_lock.pml -DMUTANT_NO_WAKE_DRAINED $safe "" \
  "invalid end state"
check "spin_shared_mutex safety" spin_shared_mutex.pml "" $safe "" pass
check "spin_shared_mutex liveness: turn" spin_shared_mutex.pml -DLIVENESS "" "-a -f -N turn" pass
check "spin_shared_mutex liveness: drain" spin_shared_mutex.pml -DLIVENESS "" "-a -f -N drain" pass
check "spin_shared_mutex mutant: turn not cleared" spin_shared_mutex.pml -DMUTANT_TURN_NOT_CLEARED $safe "" \
  "assertion violated"
check "spin_shared_mutex mutant: writers ignore the turn" spin_shared_mutex.pml \
  "-DLIVENESS -DMUTANT_WRITER_IGNORES_TURN" "" "-a -f -N turn" "acceptance cycle"
check "fifo_gate" fifo_gate.pml "" $safe "" pass
check "fifo_gate strict" fifo_gate.pml -DSTRICT $safe "" pass
check "fifo_gate mutant: head takes a held lock" fifo_gate.pml -DMUTANT_HEAD_TAKES_HELD $safe "" \
  "assertion violated"
check "fifo_gate mutant: head waits for a reservation" fifo_gate.pml \
  -DMUTANT_HEAD_WAITS_FOR_RESERVATION $safe "" "invalid end state"
check "fifo_gate strict mutant: strict reads the clock" fifo_gate.pml \
  "-DSTRICT -DMUTANT_STRICT_READS_CLOCK" $safe "" "assertion violated"
check "fifo_gate strict mutant: try_lock ignores the queue" fifo_gate.pml \
  "-DSTRICT -DMUTANT_TRYLOCK_IGNORES_QUEUE" $safe "" "assertion violated"
check "fifo_gate order while every thread runs" fifo_gate.pml "-DORDER -DFRESH_WHEN_STAMPED" $safe "" pass
check "fifo_gate mutant: no successor beat at the handoff" fifo_gate.pml \
  "-DORDER -DFRESH_WHEN_STAMPED -DMUTANT_NO_SUCCESSOR_BEAT" $safe "" "assertion violated"
check "fifo_gate mutant: no vouch on arrival into an empty queue" fifo_gate.pml \
  "-DORDER -DFRESH_WHEN_STAMPED -DMUTANT_NO_ARRIVAL_VOUCH" $safe "" "assertion violated"

filters=("$@")
selected() {  # name: chosen by the command line (every check when it names none)
  [ ${#filters[@]} -eq 0 ] && return 0
  local f
  for f in "${filters[@]}"; do [[ "$1" == *"$f"* ]] && return 0; done
  return 1
}

# One check, in its own directory: its report line in $dir/line, and when it failed what to show in
# $dir/failure; run_check's status is the verdict.
run_check() {  # dir name model sflags cflags_d panflags expect
  local dir=$1 name=$2 model=$3 sflags=$4 cflags_d=$5 panflags=$6 expect=$7
  local t0 verdict="" why="" states="-" ptime="-" out errors found total
  mkdir -p "$dir"
  cp "$models/$model" "$dir/"
  t0=$(date +%s.%N)
  # shellcheck disable=SC2086  # the switch lists are meant to split
  if ! (cd "$dir" && spin -a $sflags "$model") >"$dir/spin.log" 2>&1 || [ ! -f "$dir/pan.c" ]; then
    verdict=FAILED why="spin -a failed"
    out=$(cat "$dir/spin.log")
  elif ! (cd "$dir" && gcc $cflags -w $cflags_d -o pan pan.c) >"$dir/gcc.log" 2>&1; then
    verdict=FAILED why="gcc failed"
    out=$(cat "$dir/gcc.log")
  else
    out=$(cd "$dir" && ./pan -m"$depth" $panflags 2>&1)
    echo "$out" >"$dir/pan.log"
    states=$(sed -nE 's/^ *([0-9]+) states, stored.*/\1/p' <<<"$out" | head -n1)
    ptime=$(sed -nE 's/^pan: elapsed time ([0-9.e+-]+) seconds.*/\1/p' <<<"$out" | head -n1)
    errors=$(sed -nE 's/.*errors: ([0-9]+).*/\1/p' <<<"$out" | head -n1)
    # pan's own report of the first error: "pan:1: invalid end state (at depth 54)"
    found=$(sed -nE \
      's/^pan:[0-9]+: (invalid end state|assertion violated|acceptance cycle|non-progress cycle).*/\1/p' \
      <<<"$out" | head -n1)
    if [ -z "$errors" ] || [ -z "$states" ]; then
      verdict=FAILED why="pan did not finish"
    elif grep -qE "max search depth too small|out of memory" <<<"$out"; then
      verdict=FAILED why="search incomplete: raise -m (now $depth) or memory"
    elif [ "$expect" = pass ]; then
      # (pan also says "Search not completed" when it stops at an error; here there is none)
      if [ "$errors" -eq 0 ] && [ -z "$found" ] && ! grep -q "Search not completed" <<<"$out"; then
        verdict=ok
      else
        verdict=FAILED why="${found:-errors: $errors, or search not completed}"
      fi
    elif [ "$errors" -gt 0 ] && [ "$found" = "$expect" ]; then
      verdict="ok (found: $found)"
    else
      verdict=FAILED why="mutant not caught: expected '$expect', got ${found:-no error}"
    fi
  fi
  total=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  printf '%-52s %9s states  pan %5s s  total %4s s  %s\n' "$name" "${states:--}" "${ptime:--}" "$total" \
    "$verdict${why:+: $why}" >"$dir/line"
  if [ "$verdict" = FAILED ]; then
    {
      tail -n 25 <<<"$out" | sed 's/^/    /'
      echo "    by hand, in a scratch directory: cp $models/$model . && spin -a $sflags $model &&" \
        "gcc -O2 $cflags_d -o pan pan.c && ./pan -m$depth $panflags && spin -t -p $sflags $model"
    } >"$dir/failure"
    return 1
  fi
}

# The checks are independent: as many at once as there are CPUs (SPINWISE_MODELS_JOBS), each
# reported in the order listed.
jobs=${SPINWISE_MODELS_JOBS:-$(nproc)}
passed=0
failed=0
i=0
for c in "${checks[@]}"; do
  IFS='|' read -r name model sflags cflags_d panflags expect <<<"$c"
  selected "$name" || continue
  i=$((i + 1))
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
  run_check "$work/$i" "$name" "$model" "$sflags" "$cflags_d" "$panflags" "$expect" &
done
wait
for ((k = 1; k <= i; k++)); do
  cat "$work/$k/line" 2>/dev/null || echo "check $k: no report (its job died)"
  if [ -f "$work/$k/failure" ] || [ ! -f "$work/$k/line" ]; then
    failed=$((failed + 1))
    cat "$work/$k/failure" 2>/dev/null
  else
    passed=$((passed + 1))
  fi
done

[ $i -gt 0 ] || { echo "run_models: no check matches: ${filters[*]}"; exit 2; }
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
