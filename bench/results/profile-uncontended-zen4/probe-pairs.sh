#!/bin/bash
# PROG=<probe> probe-pairs.sh REPS LIB... : REPS rounds, each LIB in turn with the statistics off and
# on (SPINWISE_PRELOAD_STATS), 5M rounds of the probe each; prints "mode library seconds".
# The probes: bench/engines/programs/uncontended_calls.c as it is (full), without its rwlock calls
# (mutex-only) or without its mutex and condition-variable calls (rwlock-only), cc -O2 -pthread.
reps=$1; shift
for r in $(seq "$reps"); do
  for lib in "$@"; do
    for m in off stats; do
      if [ $m = stats ]; then e=SPINWISE_PRELOAD_STATS=/dev/null; else e=X=1; fi
      s=$(env $e LD_PRELOAD="$lib" "$PROG" --rounds 5000000 2>/dev/null | awk '{print $4}')
      echo "$m $(basename "$lib" .so) $s"
    done
  done
done
